#pragma once
/// @file cli/progress_line.hpp
/// The progress line of long runs on stderr (a terminal only).

#include <cstdio>

#include <mcubes/result.hpp>

#include "parse.hpp"
#include "report.hpp"

namespace mcubes::cli {

/// A line on stderr (a terminal only) redrawn in place: show() replaces it, clear() erases it.
class status_line {
 public:
  explicit status_line(bool enabled) : enabled_(enabled) {}
  bool enabled() const noexcept { return enabled_; }
  /// Replaces the line with the printf-formatted text.
  template <class... Args>
  void show(const char* format, Args... args) {
    if (!enabled_) return;
    std::fprintf(stderr, "\r\033[K");
    std::fprintf(stderr, format, args...);
    std::fflush(stderr);
    shown_ = true;
  }
  void clear() {
    if (!shown_) return;
    std::fprintf(stderr, "\r\033[K");
    std::fflush(stderr);
    shown_ = false;
  }

 private:
  bool enabled_;
  bool shown_ = false;
};

/// The progress line of integrate: iteration, estimate +- error, evaluations/s and the time left
/// to max_iterations, redrawn after each iteration once the run has taken a second.
class progress_line : public status_line {
 public:
  using status_line::status_line;
  void update(const result& so_far, int max_iterations) {
    if (!enabled() || so_far.seconds < 1.0 || so_far.iterations == 0) return;
    const double rate = static_cast<double>(so_far.n_eval) / so_far.seconds;
    const double left = so_far.seconds / so_far.iterations * (max_iterations - so_far.iterations);
    show("[mcubes] iteration %d/%d  %s  %.3g evaluations/s  at most %s left", so_far.iterations, max_iterations,
         format_with_error(so_far.estimate, so_far.error).c_str(), rate, format_duration(left).c_str());
  }
};

}  // namespace mcubes::cli

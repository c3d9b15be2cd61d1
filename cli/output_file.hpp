#pragma once
/// @file cli/output_file.hpp
/// The command's output files (--json): a path checked up front, then written at each write() by
/// the library's write_file_atomically (include/mcubes/atomic_file.hpp: a file, or a link's final
/// target, replaced atomically; a character device, a FIFO or /dev/stdout written straight
/// through); and the rule for rewriting a running command's record (record_schedule).

#include <cstdio>
#include <exception>
#include <functional>
#include <string>

namespace mcubes::cli {

/// An output file written by write_file_atomically at each write().
class atomic_output_file {
 public:
  /// Resolves `path` (resolve_output) and checks, without touching `path`, that a file can be
  /// created beside its final target, or that a stream may be written (access(2)).
  /// @throws invalid_input naming the path and the reason (a directory, a socket, a block
  ///         device, a folder that does not exist or cannot be written, ...).
  /// `option` names the path in the messages ("--json: cannot write ...").
  explicit atomic_output_file(std::string path, const std::string& option = "--json");
  /// Writes `content` (for a file: temporary file, rename; fsync first when `durable`, e.g. the
  /// final record: the intermediate ones survive the process, not a crash of the machine).
  /// @throws mcubes::error (never invalid_input: the path was checked before the run) naming the
  ///         path and the reason; a file's previous content is then still in place.
  void write(const std::string& content, bool durable) const;
  /// Writes the pieces that produce(put) puts (put(const char*, std::size_t); bounded memory), as
  /// write() does. @throws as write(); whatever produce throws (a file then unchanged).
  void write_from(const std::function<void(const std::function<void(const char*, std::size_t)>&)>& produce,
                  bool durable) const;
  const std::string& path() const noexcept { return path_; }
  /// Whether the path is a stream (character device, FIFO, /dev/stdout): it takes the final record
  /// only, since a reader cannot tell one record from the next.
  bool stream() const noexcept { return stream_; }

 private:
  std::string path_;
  bool stream_ = false;
};

/// When a running command rewrites its record (status "running"): at the first step, then at a
/// step once at least `interval` seconds (1 s) and at least 20 times the duration of the last
/// write have passed since that write ended; the final record is always written, apart from this
/// rule. The writes then take at most 1/20 of the run's time whatever the number of steps, so a
/// step costs O(1) amortised even though a record grows with the iterations.
class record_schedule {
 public:
  /// `interval`: seconds between writes, at least; `duration_factor`: times the last write's
  /// duration, at least (the writes then take at most 1 / (1 + duration_factor) of the time).
  explicit record_schedule(double interval = 1.0, double duration_factor = 20)
      : interval_(interval), duration_factor_(duration_factor) {}
  /// Whether a write is due at time `now` (seconds, any monotonic origin).
  bool due(double now) const noexcept {
    return !written_ || (now - last_end_ >= interval_ && now - last_end_ >= duration_factor_ * last_duration_);
  }
  /// Records a write that ran from `start` to `end` (seconds, the clock of due()).
  void wrote(double start, double end) noexcept {
    written_ = true;
    last_end_ = end;
    last_duration_ = end - start;
  }

 private:
  double interval_, duration_factor_;
  bool written_ = false;
  double last_end_ = 0, last_duration_ = 0;
};

/// A command's running record: written by record_schedule's rule at each step; a failing write
/// warns once on stderr ("the <what> goes on") and is otherwise ignored (only the final record's
/// write is an error). Streams (a device, a FIFO) get the final record only.
class running_record {
 public:
  /// One step: `now()` gives seconds on a monotonic clock, `text()` the record's text (built only
  /// when a write is due); `what` names the work ("run", "scan") in the warning.
  template <class Clock, class Text>
  void step(const atomic_output_file& file, const Clock& now, const Text& text, const char* what) {
    if (file.stream() || !schedule_.due(now())) return;
    const double started = now();
    try {
      file.write(text(), false);
    } catch (const std::exception& ex) {
      if (!warned_)
        std::fprintf(stderr, "mcubes: warning: %s; the %s goes on (the final record is written at the end)\n", ex.what(),
                     what);
      warned_ = true;
    }
    schedule_.wrote(started, now());
  }

 private:
  record_schedule schedule_;
  bool warned_ = false;
};

}  // namespace mcubes::cli

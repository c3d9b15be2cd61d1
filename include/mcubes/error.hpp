#pragma once
/// @file error.hpp
/// Exception types thrown by mcubes. Library code throws; only the command-line program chooses
/// exit codes (invalid_input -> 2, everything else -> 3).

#include <cstdint>
#include <sstream>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

namespace mcubes {

/// "(x0, x1, ...)" with 17 significant digits: a point in an error message (exact round trip).
inline std::string point_text(const std::vector<double>& x) {
  std::ostringstream s;
  s.precision(17);
  s << "(";
  for (std::size_t i = 0; i < x.size(); ++i) s << (i ? ", " : "") << x[i];
  s << ")";
  return s.str();
}

/// Base class of every exception thrown by mcubes.
class error : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

/// Bad input: invalid bounds, dimension, tolerances, sizes or options. Thrown before any sampling.
class invalid_input : public error {
 public:
  using error::error;
};

/// The integrand returned NaN or +-Inf. Carries the first such sample, in sample-index order
/// (so the report is deterministic whatever the number of threads or blocks), and its point.
class non_finite_integrand : public error {
 public:
  non_finite_integrand(int iteration, std::uint64_t sample_index, std::vector<double> point, double value)
      : error(make_message(iteration, sample_index, point, value)),  // the message before point_ takes the point
        iteration_(iteration),
        sample_index_(sample_index),
        point_(std::move(point)),
        value_(value) {}
  /// Iteration (0-based) in which the value was met.
  int iteration() const noexcept { return iteration_; }
  /// Global sample index: sub-cube index * samples per sub-cube + sample within the sub-cube.
  std::uint64_t sample_index() const noexcept { return sample_index_; }
  /// The point x (in the integration region) where the integrand was evaluated.
  const std::vector<double>& point() const noexcept { return point_; }
  /// The value returned (NaN or +-Inf).
  double value() const noexcept { return value_; }

 protected:
  /// For derived classes that give the reason in their own message.
  non_finite_integrand(const std::string& message, int iteration, std::uint64_t sample_index, std::vector<double> point,
                       double value)
      : error(message), iteration_(iteration), sample_index_(sample_index), point_(std::move(point)), value_(value) {}
  static std::string make_message(int iteration, std::uint64_t index, const std::vector<double>& x, double value) {
    std::ostringstream s;
    s.precision(17);
    s << "integrand returned " << value << " at x = " << point_text(x) << " (iteration " << iteration << ", sample " << index << ")";
    return s.str();
  }

 private:
  int iteration_;
  std::uint64_t sample_index_;
  std::vector<double> point_;
  double value_;
};

/// A table lookup outside the table's grid, with the policy out_of_range_policy::error (tables/): the
/// lookup returned NaN, so the integrand did, at the first such sample in sample-index order
/// (recorded on the device or the CPU threads, then re-evaluated on the host to name the lookup).
/// Carries the sample as non_finite_integrand does, plus the table's kind, the lookup's argument
/// and the grid's bounds (one entry per table axis).
class table_out_of_range : public non_finite_integrand {
 public:
  table_out_of_range(int iteration, std::uint64_t sample_index, std::vector<double> point, double value, std::string table,
                     std::vector<double> argument, std::vector<double> lower, std::vector<double> upper)
      : non_finite_integrand(make_table_message(iteration, sample_index, point, table, argument, lower, upper),
                             iteration, sample_index, point, value),  // a copy: the arguments' order is unspecified
        table_(std::move(table)),
        argument_(std::move(argument)),
        lower_(std::move(lower)),
        upper_(std::move(upper)) {}
  /// The kind of table ("interp1d", "interp2d", "interpnd<3>").
  const std::string& table() const noexcept { return table_; }
  /// The argument of the lookup (one value per table axis).
  const std::vector<double>& argument() const noexcept { return argument_; }
  /// The grid's lower and upper bounds, per table axis.
  const std::vector<double>& lower() const noexcept { return lower_; }
  const std::vector<double>& upper() const noexcept { return upper_; }

 private:
  static std::string make_table_message(int iteration, std::uint64_t index, const std::vector<double>& x,
                                        const std::string& table, const std::vector<double>& arg,
                                        const std::vector<double>& lo, const std::vector<double>& hi) {
    std::ostringstream s;
    s.precision(17);
    s << table << " lookup at " << point_text(arg) << " outside its grid ";
    for (std::size_t k = 0; k < lo.size(); ++k) s << (k ? " x " : "") << "[" << lo[k] << ", " << hi[k] << "]";
    s << " (out_of_range_policy::error), in the integrand at x = " << point_text(x) << " (iteration " << iteration
      << ", sample " << index << ")";
    return s.str();
  }
  std::string table_;
  std::vector<double> argument_, lower_, upper_;
};

/// A sampling pass abandoned mid-way because a stop was requested (execution::stop,
/// stop_request): thrown by the CPU backend's pass between tiles, its partial sums discarded. The
/// Vegas methods catch it and end the run with status interrupted and the completed iterations; it
/// reaches a caller only who calls a backend's sample operations directly.
class pass_abandoned : public error {
 public:
  pass_abandoned() : error("the sampling pass was abandoned: a stop was requested") {}
};

/// A numerical failure that is not the integrand's fault: a quantity of the algorithm that is not
/// representable in double precision (an iteration variance or a running sum that overflows, an
/// estimate too large for an error estimate). The message names the iteration.
class numerical_error : public error {
 public:
  using error::error;
};

/// A finite integrand value whose weighted value f(x) J(x), or its square, overflows
/// double precision at one sample (J: the adaptive map's jacobian). Carries the first such sample
/// in sample-index order (deterministic whatever the parallelism), its point, f(x) and J(x).
/// Remedy: rescale the integrand (e.g. divide by a known order of magnitude).
class overflow_error : public numerical_error {
 public:
  overflow_error(int iteration, std::uint64_t sample_index, std::vector<double> point, double value, double jacobian)
      : numerical_error(make_message(iteration, sample_index, point, value, jacobian)),
        iteration_(iteration),
        sample_index_(sample_index),
        point_(std::move(point)),
        value_(value),
        jacobian_(jacobian) {}
  /// Iteration (0-based) in which the overflow happened.
  int iteration() const noexcept { return iteration_; }
  /// Global sample index (sub-cube index * samples per sub-cube + sample within the sub-cube).
  std::uint64_t sample_index() const noexcept { return sample_index_; }
  /// The point x (in the integration region).
  const std::vector<double>& point() const noexcept { return point_; }
  /// f(x), finite.
  double value() const noexcept { return value_; }
  /// The map's jacobian J(x) at that sample (region volume not included).
  double jacobian() const noexcept { return jacobian_; }

 private:
  static std::string make_message(int iteration, std::uint64_t index, const std::vector<double>& x, double value,
                                  double jacobian) {
    std::ostringstream s;
    s.precision(17);
    s << "overflow: f(x) * J = " << value << " * " << jacobian << " or its square exceeds the double range at x = "
      << point_text(x) << " (iteration " << iteration << ", sample " << index << "); rescale the integrand";
    return s.str();
  }
  int iteration_;
  std::uint64_t sample_index_;
  std::vector<double> point_;
  double value_;
  double jacobian_;
};

namespace detail {
/// Throws invalid_input with the message built from the streamed arguments.
template <class... Args>
[[noreturn]] void throw_invalid(const Args&... args) {
  std::ostringstream s;
  s.precision(17);
  (s << ... << args);
  throw invalid_input(s.str());
}
}  // namespace detail

}  // namespace mcubes

/// Precondition check for library entry points: throws mcubes::invalid_input with the message.
#define MCUBES_EXPECTS(cond, ...)                            \
  do {                                                       \
    if (!(cond)) ::mcubes::detail::throw_invalid(__VA_ARGS__); \
  } while (0)

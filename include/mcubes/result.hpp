#pragma once
/// @file result.hpp
/// The result of an integration: cumulative estimate, error, chi2/dof, Q, status and one record
/// per iteration.

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "options.hpp"

namespace mcubes {

/// Values of plain Monte Carlo and the midpoint rule whose magnitude scale is below this (2^-460,
/// about 3.4e-139) are in the underflow regime: their squares are within 2^100 of the smallest
/// normal double, so no variance or error estimate can be trusted (status::underflow). The same
/// value as Vegas's underflow_estimate (algorithm/vegas.hpp).
inline constexpr double underflow_scale = 0x1p-460;

/// How a run ended. Every status but `converged` means the estimate must not be used as a
/// converged result; the result's other fields still say what was seen.
///  - converged: error <= max(abs_tol, rel_tol*|estimate|) with chi2/dof <= max_chi2_dof after at
///    least min_iterations accumulated iterations (plain Monte Carlo: the error test alone);
///  - not_converged: stopped at max_iterations without that (the estimate is still reported);
///  - not_resolved: no sample was non-zero, so the estimate 0 carries no information (e.g. a
///    narrow peak never found);
///  - underflow: non-zero samples were seen, but every iteration that had them had an estimate
///    below underflow_estimate (2^-460) in magnitude, or exactly 0 (values below the smallest double,
///    or samples the adaptive map gives zero weight): no variance is representable, nothing was
///    accumulated. Rescale the integrand;
///  - interrupted: stopped before its end by an iteration callback (e.g. on SIGINT); the estimate is
///    that of the iterations completed.
enum class status { converged, not_converged, not_resolved, underflow, interrupted };

/// The status as one or two words ("converged", "not converged", "not resolved", "underflow",
/// "interrupted"), as printed and written to JSON.
inline const char* to_string(status s) {
  switch (s) {
    case status::converged: return "converged";
    case status::not_converged: return "not converged";
    case status::not_resolved: return "not resolved";
    case status::underflow: return "underflow";
    default: return "interrupted";
  }
}

/// A sentence that explains the status (for reports).
inline const char* describe(status s) {
  switch (s) {
    case status::converged: return "the error met the tolerance";
    case status::not_converged: return "stopped at max_iterations without meeting the tolerance";
    case status::not_resolved: return "no sample was non-zero: the estimate 0 carries no information";
    case status::underflow:
      return "non-zero values were seen, but every iteration estimate was below 2^-460 in magnitude (or got zero "
             "weight from the adaptive map): no error estimate is possible; rescale the integrand";
    default: return "stopped before the end; the estimate is that of the completed iterations";
  }
}

/// Signs that a Vegas run's error may be underestimated (bit flags in result::warnings). Each is
/// a test on the accumulated iterations, reported with the result (report, JSON, Python); none
/// changes the status or the numbers. The integrands behind them are those whose f J has a heavy
/// tail (integrable singularities such as 1/sqrt(x): transform them away; indicator functions and
/// narrow peaks at small budgets: more calls per iteration), where every iteration's error is
/// estimated from a few rare, large values. On the m-Cubes suite (f1-f6, fA, fB at the paper's
/// settings) neither is raised (tests/statistical).
enum warning : unsigned {
  /// Two consecutive accumulated iterations sampled through the same frozen map (after the
  /// adapting iterations), the second with an error above heavy_tail_ratio (3) times the first's:
  /// both estimate the same variance, so such a jump means a rare value of f J far above the
  /// others was met, and the errors of the iterations that did not meet one understate their
  /// spread. (While the map adapts, jumps also come from regions newly found, so they are not
  /// counted: f6 of the suite jumps up to 7x then, at most 1.3x on a frozen map.)
  warning_heavy_tail = 1u,
  /// The inverse-variance weighted average of the accumulated iterations (Lepage 1978; what vegas
  /// and m-Cubes report while adapting) differs from the estimate by more than
  /// disagreement_sigmas (3) errors: the iterations' errors fall with their estimates (few non-zero
  /// samples), the bias that the estimate's predictable weights avoid (core/running_average.hpp).
  warning_weighted_disagreement = 2u,
};

/// Error ratio between consecutive accumulated iterations on a frozen map that raises warning_heavy_tail.
inline constexpr double heavy_tail_ratio = 3.0;
/// Distance, in errors of the estimate, that raises warning_weighted_disagreement.
inline constexpr double disagreement_sigmas = 3.0;

/// The warning's name ("heavy tail", "weighted disagreement"), as printed and written to JSON.
inline const char* to_string(warning w) {
  return w == warning_heavy_tail ? "heavy tail" : "weighted disagreement";
}

/// A sentence that explains the warning (for reports).
inline const char* describe(warning w) {
  if (w == warning_heavy_tail)
    return "on the frozen map an iteration's error jumped more than 3x over the previous one's: f J has rare, large values (an "
           "integrable singularity, an indicator or a barely sampled peak), so the error may be underestimated; "
           "transform the singularity away or use more calls per iteration";
  return "the inverse-variance weighted average of the iterations differs from the estimate by more than 3 errors: "
         "the iterations' errors fall with their estimates (few non-zero samples); use more calls per iteration";
}

/// Every warning, in bit order (for reports that list the set ones).
inline constexpr warning all_warnings[] = {warning_heavy_tail, warning_weighted_disagreement};

/// One iteration of the integrator.
struct iteration_record {
  int index = 0;                ///< 0-based iteration number
  double estimate = 0;          ///< this iteration's estimate I_k (stratified Monte Carlo)
  double error = 0;             ///< its standard deviation sigma_k (square root of the stratified variance)
  bool adapted = false;         ///< V-Sample (map adapted after it) or V-Sample-No-Adjust
  bool accumulated = false;     ///< part of the weighted estimate (not skipped, a non-zero sample, no underflow)
  bool underflow = false;       ///< |estimate| < 2^-460: its variance is not representable, so it is left out
  double weighted_estimate = 0; ///< cumulative estimate after this iteration (the result's estimate so far:
                                ///< the weighted average of the accumulated iterations, vegas.hpp)
  double weighted_error = 0;    ///< its standard deviation
  double chi2_dof = 0;          ///< chi2/dof of the accumulated iterations after this one
  double q = 1;                 ///< Q: probability that chi2 exceeds the observed value (p-value)
  std::uint64_t n_eval = 0;     ///< integrand evaluations in this iteration
  std::uint64_t n_nonzero = 0;  ///< evaluations that returned a non-zero value
  bool rescaled = false;        ///< bin contributions were re-accumulated with a new fixed-point scale
  int top_bin_level = 0;        ///< highest overflow level of its bin contributions (0: all within the scale's 2^63 units)
  double seconds = 0;           ///< wall time of the iteration
};

/// Result of mcubes::vegas (and of the other methods, which fill the fields that apply).
struct result {
  double estimate = 0;          ///< cumulative weighted estimate of the integral (Vegas: predictable weights, vegas.hpp)
  double error = 0;             ///< its standard deviation (1 sigma)
  /// Vegas: the inverse-variance weighted average of the same iterations and its standard deviation
  /// (Lepage 1978 eqs. 5-6, as vegas and m-Cubes report it), for comparison; NaN when nothing was
  /// accumulated; 0 for the other methods.
  double inverse_variance_estimate = 0;
  double inverse_variance_error = 0;
  unsigned warnings = 0;        ///< bit set of `warning` flags (Vegas only; 0 for the other methods)
  double chi2_dof = 0;          ///< chi2/dof of the accumulated iterations (0 with a single one)
  double q = 1;                 ///< Q, the p-value of chi2 with dof = accumulated - 1
  int dof = 0;                  ///< degrees of freedom of chi2
  mcubes::status status = status::not_converged;
  int iterations = 0;           ///< iterations run
  int accumulated = 0;          ///< iterations in the weighted estimate
  std::uint64_t n_eval = 0;     ///< integrand evaluations in all iterations
  std::uint64_t seed = 0;       ///< seed of the random streams
  double seconds = 0;           ///< wall time of the run
  std::string backend;          ///< "cpu" or "cuda"
  vegas_options options;        ///< the options the run used (after defaults)
  std::vector<iteration_record> records;  ///< one per iteration, in order
  bool converged() const noexcept { return status == status::converged; }
  bool has_warning(warning w) const noexcept { return (warnings & w) != 0; }
};

/// What an iteration callback tells the integrator: go on, or stop after this iteration (the
/// result then has status interrupted, with every completed iteration in it).
enum class run_control { proceed, stop };

/// Called by the integrator after every iteration, on the calling thread, with that iteration's
/// record and the result so far (estimate, error, chi2_dof, q, iterations, records up to this one;
/// status not_converged until the run ends). Returning run_control::stop ends the run at this
/// iteration boundary (cf. Boost.Math naive_monte_carlo::cancel, vegas's analyzer). An exception
/// thrown by the callback propagates out of the integrator. Never changes the numbers of the run.
using iteration_callback = std::function<run_control(const iteration_record&, const result&)>;

/// `inner` (may be empty: proceed) as a callback that also sets *stopped once it returns stop: how
/// a caller learns that the run ended by its callback (a checkpoint then writes the end durably).
/// `stopped` must outlive the run. Callback is iteration_callback or batch_callback (any
/// std::function returning run_control).
template <class Callback>
Callback watching_stops(Callback inner, bool* stopped) {
  return [inner = std::move(inner), stopped](const auto& first, const auto&... rest) {
    const run_control c = inner ? inner(first, rest...) : run_control::proceed;
    *stopped = *stopped || c == run_control::stop;
    return c;
  };
}

}  // namespace mcubes

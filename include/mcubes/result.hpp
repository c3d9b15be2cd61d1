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

/// One iteration of the integrator.
struct iteration_record {
  int index = 0;                ///< 0-based iteration number
  double estimate = 0;          ///< this iteration's estimate I_k (stratified Monte Carlo)
  double error = 0;             ///< its standard deviation sigma_k (square root of the stratified variance)
  bool adapted = false;         ///< V-Sample (map adapted after it) or V-Sample-No-Adjust
  bool accumulated = false;     ///< part of the weighted estimate (not skipped, a non-zero sample, no underflow)
  bool underflow = false;       ///< |estimate| < 2^-460: its variance is not representable, so it is left out
  double weighted_estimate = 0; ///< cumulative inverse-variance weighted estimate after this iteration
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
  double estimate = 0;          ///< cumulative weighted estimate of the integral
  double error = 0;             ///< its standard deviation (1 sigma)
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

}  // namespace mcubes

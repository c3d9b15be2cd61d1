#pragma once
/// @file result.hpp
/// The result of an integration: cumulative estimate, error, chi2/dof, Q, status and one record
/// per iteration.

#include <cstdint>
#include <string>
#include <vector>

#include "options.hpp"

namespace mcubes {

/// How a run ended.
///  - converged: error <= max(abs_tol, rel_tol*|estimate|) with chi2/dof acceptable after at
///    least min_iterations accumulated iterations;
///  - not_converged: max_iterations reached without that (the estimate is still reported);
///  - not_resolved: no accumulated iteration had a single non-zero sample, so the estimate 0 carries
///    no information (e.g. a narrow peak never found). Never reported as converged.
enum class status { converged, not_converged, not_resolved };

inline const char* to_string(status s) {
  switch (s) {
    case status::converged: return "converged";
    case status::not_converged: return "not converged";
    default: return "not resolved";
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

}  // namespace mcubes

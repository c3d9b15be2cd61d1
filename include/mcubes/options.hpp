#pragma once
/// @file options.hpp
/// vegas_options: every option of the m-Cubes / Vegas integrator, defaulted and documented, and
/// its validation. Names follow the paper (Sakiotis et al. 2022, Algorithm 2): calls_per_iteration is
/// maxcalls, max_iterations is itmax, adapt_iterations is ita.

#include <cmath>
#include <cstdint>
#include <string>

#include "error.hpp"
#include "execution.hpp"

namespace mcubes {

/// Default seed of every random stream: fixed and documented, never the clock.
inline constexpr std::uint64_t default_seed = 20211231;

/// Largest damping exponent alpha of the map adaptation. Lepage recommends 0.5 to 2 (m-Cubes uses
/// 1.5). The damped weight of a bin, ((1 - f)/ln(1/f))^alpha with f >= 1e-300, is at least
/// 691^-alpha, so up to alpha = 64 (2^-604 at worst) no weight can underflow.
inline constexpr double max_alpha = 64;

/// Options of mcubes::vegas (m-Cubes, paper Algorithms 2-3; Lepage 1978 for the map), with the
/// execution options of execution.hpp.
struct vegas_options : execution {
  double rel_tol = 1e-3;                     ///< stop when error <= max(abs_tol, rel_tol*|estimate|)
  double abs_tol = 0.0;                      ///< absolute tolerance (same test)
  std::uint64_t calls_per_iteration = 1000000;  ///< maxcalls: integrand evaluations per iteration (upper bound)
  int max_iterations = 100;                  ///< itmax: iterations at most
  int adapt_iterations = 20;                 ///< ita: the first ita iterations adapt the map (V-Sample); the rest do not
  int skip = 5;                              ///< leading iterations left out of the weighted estimate
  int min_iterations = 5;                    ///< accumulated (non-skipped) iterations needed before convergence is declared
  double max_chi2_dof = 2.0;                 ///< convergence also needs chi2/dof <= this (iterations must agree); finite, > 0
  int n_bins = 500;                          ///< bins per axis of the adaptive map
  double alpha = 1.5;                        ///< damping exponent of map adaptation (Lepage 1978), in [0, 64]; 0 freezes the map
  bool symmetric_map = false;                ///< m-Cubes1D: one map shared by every axis (fully symmetric integrands)
  std::uint64_t seed = default_seed;         ///< key of the Philox streams (see random.hpp)
  // backend, threads, cuda_threads_per_block, device: execution.hpp
};

/// Checks the tolerances of every method: rel_tol and abs_tol finite and non-negative, at least one
/// positive (the stopping test is error <= max(abs_tol, rel_tol |estimate|)).
/// @throws invalid_input naming the field and its value.
inline void validate_tolerances(double rel_tol, double abs_tol) {
  MCUBES_EXPECTS(std::isfinite(rel_tol) && rel_tol >= 0, "rel_tol must be a finite non-negative number, got ", rel_tol);
  MCUBES_EXPECTS(std::isfinite(abs_tol) && abs_tol >= 0, "abs_tol must be a finite non-negative number, got ", abs_tol);
  MCUBES_EXPECTS(rel_tol > 0 || abs_tol > 0, "at least one of rel_tol and abs_tol must be positive (rel_tol = ", rel_tol,
                 ", abs_tol = ", abs_tol, ")");
}

/// Checks every field of `o` for a D-dimensional problem.
/// @throws invalid_input naming the first offending option and its value.
inline void validate(const vegas_options& o, int dim) {
  MCUBES_EXPECTS(dim >= 1, "dimension must be at least 1 (got ", dim, ")");
  validate_tolerances(o.rel_tol, o.abs_tol);
  MCUBES_EXPECTS(o.calls_per_iteration >= 2, "calls_per_iteration must be at least 2 (one sub-cube of 2 samples), got ",
                 o.calls_per_iteration);
  MCUBES_EXPECTS(o.calls_per_iteration <= (std::uint64_t(1) << 50), "calls_per_iteration must be at most 2^50, got ",
                 o.calls_per_iteration);
  MCUBES_EXPECTS(o.max_iterations >= 1, "max_iterations must be at least 1, got ", o.max_iterations);
  MCUBES_EXPECTS(o.adapt_iterations >= 0, "adapt_iterations must be non-negative, got ", o.adapt_iterations);
  MCUBES_EXPECTS(o.skip >= 0, "skip must be non-negative, got ", o.skip);
  MCUBES_EXPECTS(o.min_iterations >= 1, "min_iterations must be at least 1, got ", o.min_iterations);
  MCUBES_EXPECTS(static_cast<long long>(o.skip) + o.min_iterations <= o.max_iterations, "skip (", o.skip, ") + min_iterations (",
                 o.min_iterations, ") exceeds max_iterations (", o.max_iterations, "): the run could never converge");
  MCUBES_EXPECTS(o.max_chi2_dof > 0, "max_chi2_dof must be positive, got ", o.max_chi2_dof);
  MCUBES_EXPECTS(std::isfinite(o.max_chi2_dof), "max_chi2_dof must be finite, got ", o.max_chi2_dof);
  MCUBES_EXPECTS(o.n_bins >= 2 && o.n_bins <= (1 << 20), "n_bins must be in [2, 2^20], got ", o.n_bins);
  MCUBES_EXPECTS(o.alpha >= 0 && o.alpha <= max_alpha, "alpha must be in [0, ", max_alpha, "], got ", o.alpha);
  validate(static_cast<const execution&>(o));
}

}  // namespace mcubes

#pragma once
/// @file options.hpp
/// vegas_options: every option of the m-Cubes / Vegas integrator, defaulted and documented, and
/// its validation. Names follow the paper (Sakiotis et al. 2022, Algorithm 2): calls_per_iteration is
/// maxcalls, max_iterations is itmax, adapt_iterations is ita.

#include <cmath>
#include <cstdint>
#include <cstring>
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

/// vegas_options::alpha's default: the stratification's own damping exponent (alpha_for).
inline constexpr double auto_alpha = -1;

/// The damping exponent of the uniform stratification's map: the m-Cubes paper's 1.5 (its
/// algorithm bit for bit).
inline constexpr double uniform_default_alpha = 1.5;

/// The damping exponent of VEGAS+'s map: 1.0. With 1.5 the map of a sum of peaks off the axes'
/// grid swings between iterations under the adaptive stratification (Lepage's Eq. (45), 8-D, 1e7
/// calls: iteration errors alternating 6e-4 / 3e-3; 11-50 iterations to 1e-3, median 27; at the
/// default 1e6 calls 4 of 8 seeds never converge) and on separable peaks the error grows again
/// after ~15 adapting iterations (f2 6-D, f5 8-D: x3 by iteration 40). With 1.0 every seed of Eq. (45)
/// (1-15) converges after the minimum 10 iterations at 1e7 calls, and seeds 1-8 at 1e6 calls in
/// 26-38, within 1.6 errors; f2, f4 and f5 reach the same best iteration error as with 1.5, a few
/// iterations later, and keep it. vegas's 0.5 converges Eq. (45) too but needs ~30 iterations to
/// reach that error on separable peaks (bench/results/2026-12-01-vegas-plus-alpha.md).
inline constexpr double adaptive_default_alpha = 1.0;

/// How the samples of an iteration are spread over the sub-cubes.
enum class stratification_mode {
  /// VEGAS+ (Lepage 2021; core/cube_counts.hpp): a quarter of the calls uniformly, the rest where
  /// the sub-cubes' estimates varied most in the last adapting iteration (damped by beta). Finds
  /// and keeps peaks that the map's axes cannot isolate. Every integrand: functors (scalar,
  /// batches, vector-valued: allocated by component 0), run-time compiled integrands, and array
  /// integrands on the CPU and the GPU (core/array_rows.hpp), bitwise their one-point runs.
  adaptive,
  /// m-Cubes (Sakiotis et al. 2022): g^d sub-cubes of p samples each, bitwise the paper's algorithm.
  uniform,
};

/// "adaptive" or "uniform".
inline const char* to_string(stratification_mode m) { return m == stratification_mode::uniform ? "uniform" : "adaptive"; }

/// Largest default number of map increments per axis (the m-Cubes value).
inline constexpr int max_default_bins = 500;

/// Options of mcubes::vegas (m-Cubes, paper Algorithms 2-3; Lepage 1978 for the map; VEGAS+,
/// Lepage 2021, for the stratification), with the execution options of execution.hpp.
struct vegas_options : execution {
  double rel_tol = 1e-3;                     ///< stop when error <= max(abs_tol, rel_tol*|estimate|)
  double abs_tol = 0.0;                      ///< absolute tolerance (same test)
  std::uint64_t calls_per_iteration = 1000000;  ///< maxcalls: integrand evaluations per iteration (upper bound)
  int max_iterations = 100;                  ///< itmax: iterations at most
  int adapt_iterations = 20;                 ///< ita: the first ita iterations adapt the map (V-Sample); the rest do not
  int skip = 5;                              ///< leading iterations left out of the weighted estimate
  int min_iterations = 5;                    ///< accumulated (non-skipped) iterations needed before convergence is declared
  double max_chi2_dof = 2.0;                 ///< convergence also needs chi2/dof <= this (iterations must agree); finite, > 0
  /// Bins (increments) per axis of the adaptive map; 0 (default): sized to the budget,
  /// min(500, max(2, calls_per_iteration / 10)), so that each bin sees about ten samples an
  /// iteration (as vegas; fewer bias the map's weighted average). See map_bins_for().
  int n_bins = 0;
  /// Damping exponent of the map adaptation (Lepage 1978), in [0, 64]; 0 freezes the map;
  /// auto_alpha (default): the stratification's (alpha_for: 1.0 under VEGAS+, the paper's 1.5
  /// under the uniform stratification).
  double alpha = auto_alpha;
  /// m-Cubes1D (Sakiotis et al. 2022): one map shared by every axis, for fully symmetric
  /// integrands; V-Sample histograms axis 0 only (the paper's estimator: 1/D of the bin work, the
  /// map from D times fewer contributions; sampling_params::bin_axes).
  bool symmetric_map = false;
  /// The spread of samples over sub-cubes: VEGAS+ (default) or the uniform m-Cubes grid.
  stratification_mode stratification = stratification_mode::adaptive;
  /// VEGAS+ damping exponent (vegas's beta): 0 spreads the calls uniformly, 1 is the optimum of
  /// a noiseless allocation; a multiple of 1/16 in [0, 1] (core/cube_counts.hpp: computed with
  /// square roots only, the same bits on every backend). Ignored by the uniform stratification.
  double beta = 0.75;
  std::uint64_t seed = default_seed;         ///< key of the Philox streams (see random.hpp)
  // backend, threads, cuda_threads_per_block, device: execution.hpp
};

/// One entry of the options table (for_each_vegas_option).
struct option_info {
  const char* name;  ///< the field: C++ member, JSON key, Python keyword, name in messages
  const char* flag;  ///< the command-line option of `mcubes integrate` and `mcubes scan` that sets it
  const char* doc;   ///< what it sets and its default (Python's mcubes.VEGAS_OPTIONS)
  /// Part of the stopping rule: may differ from a checkpoint's when a run is resumed with force
  /// (checkpoint.hpp, checkpoint_difference); the other fields define the samples.
  bool stopping_rule;
};

/// The options table: every field of vegas_options (the execution options aside: execution.hpp)
/// once, as v(option_info, &vegas_options::field), in the order of the checkpoint format and of
/// the run-time compiler's interface. Generated from it: the checkpoint's options and their
/// comparison on resume (checkpoint.hpp), the run-time compiler's options (jit/abi.hpp's slots,
/// jit/entry.hpp), the Python module's keywords, their conversion and docs (python/src/module.cpp,
/// mcubes.VEGAS_OPTIONS), the JSON record's "options" and the command line's option names in
/// messages and in scan's reproducing command (cli/). A new option: its field in vegas_options, its
/// entry here (at the end: the checkpoint format's version then changes; checkpoint.hpp checks the
/// count), its checks in validate(), and its flag (cli/integrate_args.cpp: add_vegas_flags,
/// resolve_options; tests/cli/test_cli.cpp checks that every entry is a flag of integrate and scan
/// that sets its field); the field types the table handles are double, std::uint64_t, int, bool and
/// stratification_mode (each consumer has one overload per type).
template <class Visit>
void for_each_vegas_option(Visit&& v) {
  using O = vegas_options;
  v(option_info{"rel_tol", "--rel-tol", "stop when error <= max(abs_tol, rel_tol |estimate|) (default 1e-3)", true},
    &O::rel_tol);
  v(option_info{"abs_tol", "--abs-tol", "absolute tolerance of the same test (default 0)", true}, &O::abs_tol);
  v(option_info{"calls_per_iteration", "--calls-per-iter",
                "maxcalls, evaluations per iteration at most (default 1e6); uniform: g = floor((maxcalls/2)^(1/d)) "
                "intervals per axis, m = g^d sub-cubes of p = max(2, maxcalls/m) samples; adaptive: g = "
                "floor((maxcalls/8)^(1/d)), a quarter of the calls uniformly",
                false},
    &O::calls_per_iteration);
  v(option_info{"max_iterations", "--max-iterations", "itmax, iterations at most (default 100)", true}, &O::max_iterations);
  v(option_info{"adapt_iterations", "--adapt-iterations", "ita: the first ita iterations adapt the map (default 20)", false},
    &O::adapt_iterations);
  v(option_info{"skip", "--skip", "leading iterations left out of the weighted estimate (default 5)", false}, &O::skip);
  v(option_info{"min_iterations", "--min-iterations", "accumulated iterations needed before convergence (default 5)", true},
    &O::min_iterations);
  v(option_info{"max_chi2_dof", "--max-chi2-dof", "convergence also needs chi2/dof <= this (default 2)", true},
    &O::max_chi2_dof);
  v(option_info{"n_bins", "--bins", "bins per axis of the adaptive map (default 0: min(500, calls_per_iteration / 10))",
                false},
    &O::n_bins);
  v(option_info{"alpha", "--alpha", "damping exponent of the map adaptation, in [0, 64]; 0 freezes the map (default -1: the "
                "stratification's, 1.0 adaptive, 1.5 uniform)", false}, &O::alpha);
  v(option_info{"symmetric_map", "--symmetric-map",
                "one map for all axes, adapted to axis 0's histogram (m-Cubes1D; default False)", false},
    &O::symmetric_map);
  v(option_info{"stratification", "--stratification",
                "'adaptive' (VEGAS+, Lepage 2021: samples move to the sub-cubes that vary most; default) or 'uniform' "
                "(m-Cubes, the paper's algorithm); every callable (NumPy, GPU, vector-valued) samples either",
                false},
    &O::stratification);
  v(option_info{"beta", "--beta", "VEGAS+ damping exponent, a multiple of 1/16 in [0, 1] (default 0.75; 0: no redistribution)",
                false},
    &O::beta);
  v(option_info{"seed", "--seed", "key of the Philox random streams (default 20211231)", false}, &O::seed);
}

/// Entries of the options table.
inline constexpr int vegas_option_count = 14;

/// A field of the options table as 64 bits (the run-time compiler's slots, jit/abi.hpp): a
/// double's bit pattern, an integer's two's complement, 0/1, the enumerator's value.
inline std::uint64_t option_slot(double x) {
  std::uint64_t b;
  std::memcpy(&b, &x, sizeof b);
  return b;
}
inline std::uint64_t option_slot(std::uint64_t x) { return x; }
inline std::uint64_t option_slot(int x) { return static_cast<std::uint64_t>(static_cast<std::int64_t>(x)); }
inline std::uint64_t option_slot(bool x) { return x ? 1 : 0; }
inline std::uint64_t option_slot(stratification_mode x) { return static_cast<std::uint64_t>(x); }
/// The field back from its 64 bits (option_slot's inverse).
inline void from_option_slot(std::uint64_t s, double& x) { std::memcpy(&x, &s, sizeof x); }
inline void from_option_slot(std::uint64_t s, std::uint64_t& x) { x = s; }
inline void from_option_slot(std::uint64_t s, int& x) { x = static_cast<int>(static_cast<std::int64_t>(s)); }
inline void from_option_slot(std::uint64_t s, bool& x) { x = s != 0; }
inline void from_option_slot(std::uint64_t s, stratification_mode& x) { x = static_cast<stratification_mode>(s); }

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
  MCUBES_EXPECTS(o.n_bins == 0 || (o.n_bins >= 2 && o.n_bins <= (1 << 20)),
                 "n_bins must be in [2, 2^20] (or 0: sized to the calls per iteration), got ", o.n_bins);
  MCUBES_EXPECTS(o.stratification == stratification_mode::adaptive || o.stratification == stratification_mode::uniform,
                 "stratification must be adaptive or uniform");
  MCUBES_EXPECTS(o.beta >= 0 && o.beta <= 1 && o.beta * 16 == std::floor(o.beta * 16),
                 "beta must be a multiple of 1/16 (0.0625) in [0, 1] (e.g. 0, 0.25, 0.5, 0.75, 1), got ", o.beta);
  MCUBES_EXPECTS(o.alpha == auto_alpha || (o.alpha >= 0 && o.alpha <= max_alpha), "alpha must be in [0, ", max_alpha,
                 "] (or ", auto_alpha, ": the stratification's), got ", o.alpha);
  validate(static_cast<const execution&>(o));
}

/// The map's bins per axis for `o`: o.n_bins, or when 0, min(500, max(2, calls_per_iteration / 10)).
inline int map_bins_for(const vegas_options& o) {
  if (o.n_bins != 0) return o.n_bins;
  const std::uint64_t b = o.calls_per_iteration / 10;
  return b < 2 ? 2 : (b > static_cast<std::uint64_t>(max_default_bins) ? max_default_bins : static_cast<int>(b));
}

/// The defensive floor of the adaptive map under VEGAS+ (core/adaptive_map.hpp, adapt_axis): each
/// adaptation spreads this fraction of an axis's weight uniformly in x over its starved increments
/// (those whose damped weight is below 1/8 of the mean: where the histogram saw f = 0 or next to
/// nothing), so that no increment there grows wider than about 1/(0.05 n) and the map's jacobian
/// stays below about 20 per axis there. Without it, the increment next to a discontinuity of f
/// (m-Cubes' f6) swallows the whole region where f = 0 and keeps a sliver where f is large: a rare
/// sample there carries a weight thousands of times the others', the iterations that miss it (most
/// of them) report errors far too small, and the weighted average converges low (f6 in 2-4
/// dimensions at 5e4-2e5 calls: 16 of 800 runs beyond 4 sigma, some beyond 8, with either
/// stratification; with the floor none in 800 runs, in half the evaluations). The increments that
/// saw f keep Lepage's rule: a floor on every increment (as first written) costs every peaked
/// integrand a variance of about D eps per sample however good its map (errors 7x the uniform
/// grid's on f2 6-D and 6x on f5 8-D at equal calls; with the starved increments only, 0.9-1.0x;
/// bench/results/2026-11-30-starved-floor.md). The uniform stratification keeps the paper's map
/// (no floor), bit for bit.
inline constexpr double vegas_plus_map_floor = 0.05;

/// The defensive floor a run's map adaptation uses: vegas_plus_map_floor under the adaptive
/// stratification, 0 (Lepage's and m-Cubes' rule) under the uniform one.
inline double map_floor_for(const vegas_options& o) {
  return o.stratification == stratification_mode::adaptive ? vegas_plus_map_floor : 0.0;
}

/// The damping exponent of a run's map adaptation: o.alpha, or when auto_alpha, the
/// stratification's (adaptive_default_alpha under VEGAS+, uniform_default_alpha under m-Cubes).
inline double alpha_for(const vegas_options& o) {
  if (o.alpha != auto_alpha) return o.alpha;
  return o.stratification == stratification_mode::adaptive ? adaptive_default_alpha : uniform_default_alpha;
}

/// The options with n_bins (map_bins_for) and alpha (alpha_for) resolved: what a run records in
/// its result.
inline vegas_options with_resolved_defaults(vegas_options o) {
  o.n_bins = map_bins_for(o);
  o.alpha = alpha_for(o);
  return o;
}

}  // namespace mcubes

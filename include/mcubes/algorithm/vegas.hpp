#pragma once
/// @file algorithm/vegas.hpp
/// The m-Cubes iteration loop (Sakiotis et al. 2022, Algorithm 2), shared by every backend:
///   plan sub-cubes -> backend samples chunks (V-Sample or V-Sample-No-Adjust) -> merge ->
///   weighted average (Lepage eqs. 5-6) -> adapt the map (first adapt_iterations) -> stop test.
/// The backend only decides who computes which chunk (backend/cpu.hpp, backend/cuda.cuh).

#include <chrono>
#include <limits>
#include <string>
#include <cmath>
#include <cstdio>
#include <cstdint>
#include <type_traits>
#include <vector>

#include "../core/adaptive_map.hpp"
#include "../core/reduction.hpp"
#include "../core/running_average.hpp"
#include "../core/sample_diagnosis.hpp"
#include "../core/sampler.hpp"
#include "../core/stratification.hpp"
#include "../error.hpp"
#include "../options.hpp"
#include "../region.hpp"
#include "../result.hpp"

namespace mcubes {

/// Iteration estimates below this magnitude (2^-460, about 3.4e-139) are in the underflow regime:
/// their squares are within 2^100 of the smallest normal double, so no variance can be trusted.
inline constexpr double underflow_estimate = 3.3589380537835444e-139;

/// Iteration estimates at or above this magnitude (2^560, about 3.8e168) have no representable
/// error: the smallest error the weighted average admits, 4 eps |I| (running_average), squared,
/// would exceed the double range near 2^562. Such an iteration throws numerical_error.
inline constexpr double overflow_estimate = 0x1p560;

namespace detail {

/// x with 6 significant digits (for messages).
inline std::string format_double(double x) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.6g", x);
  return buf;
}

/// Number of chunks the bin-scale probe visits (1 in `stride` chunks).
inline std::uint64_t probe_stride(const stratification& st) {
  const std::uint64_t target = 1024;
  return st.n_chunks > target ? st.n_chunks / target : 1;
}

/// Throws for the first failing sample of an iteration (flags.first_non_finite): non_finite_integrand
/// (or table_out_of_range, core/sample_diagnosis.hpp) if f returned NaN or +-Inf there, overflow_error if f was finite but f J or (f J)^2 overflowed.
/// The point and the jacobian are recomputed on the host from the sample index (the same point on
/// every backend, random.hpp).
template <int D, class F>
[[noreturn]] void throw_sample_failure(const F& f, const sampling_params<D>& sp, const std::vector<double>& edges, int n_bins,
                                       int iteration, std::uint64_t index, double value) {
  const map_view<D> map{edges.data(), n_bins};
  std::uint64_t coord[D];
  cube_coordinates<D>(index / sp.p, sp.g, coord);
  point<D> x;
  int bin[D];
  const double jac = make_sample<D>(sp, map, coord, index, x, bin);
  if (std::isfinite(value)) throw overflow_error(iteration, index, std::vector<double>(x.x, x.x + D), value, jac);
  throw_non_finite<D>(f, iteration, index, x, value);
}

}  // namespace detail

/// Where a Vegas run stands between calls (integrator.hpp keeps one per adaptive map): the index of
/// the next iteration, which keys its random numbers (random.hpp), and the bin-scale reference of
/// the last adapting pass (the largest bin-contribution term; < 0 before the first). A run that
/// continues from a state draws exactly the samples that one longer run would have drawn.
struct vegas_state {
  int next_iteration = 0;
  double reference = -1;
};

/// Largest iteration index (the random stream's counter word is 32 bits; iteration counts are int).
inline constexpr int max_iteration_index = 2147483647;

/// Bins per axis of a backend's map (adaptive_map or the CUDA device_map).
template <class Map>
int map_bins(const Map& map) {
  if constexpr (std::is_member_function_pointer_v<decltype(&Map::n_bins)>)
    return map.n_bins();
  else
    return map.n_bins;
}

/// Integrates f over `reg` with m-Cubes on `backend` (backend/backend.hpp: name(), make_map<D>,
/// sample, adapt_map, map_edges), continuing from `map` (made by that backend) and `state`:
/// iteration k of this call (k = 0 .. max_iterations - 1) has the index state.next_iteration + k
/// in the random stream; it adapts the map when k < adapt_iterations and is accumulated when
/// k >= skip. The map and the state are left where the run ended, so that a later call continues
/// (train, then measure with a frozen map). From a uniform map and a fresh state this is the
/// whole m-Cubes run (vegas_with).
///
/// Each iteration draws calls_per_iteration (rounded down to m*p) samples, stratified in m = g^d
/// sub-cubes (stratification.hpp) and importance-sampled through the adaptive map. The result's
/// estimate and error are the inverse-variance weighted average of the iterations from `skip`
/// on that had at least one non-zero sample (an all-zero iteration carries no information and is
/// reported, not averaged; so is an iteration whose |estimate| is below 2^-460, whose variance
/// underflows). The run stops as converged at the first iteration where at least
/// min_iterations are accumulated, error <= max(abs_tol, rel_tol |estimate|) and
/// chi2/dof <= max_chi2_dof; as interrupted when `on_iteration` returns run_control::stop; otherwise
/// after max_iterations as not_converged, or (nothing accumulated) as not_resolved when no sample
/// was non-zero and as underflow when non-zero samples gave only underflowing estimates (result.hpp).
///
/// Before anything is accumulated, the records' weighted_estimate, weighted_error, chi2_dof and q
/// are NaN (there is no weighted estimate yet), never a misleading 0 +- 0; so are the result's
/// chi2_dof and q when nothing was accumulated, with error = +Inf.
///
/// Honest numerics: the error of an iteration is never below the rounding level 4 eps |I_k|
/// (running_average's floor), a sub-cube variance that is NaN (inf - inf) is never clamped to 0,
/// and the estimate, the error and chi2 are never NaN: any overflow throws.
///
/// Determinism: for a given (f, region, options less threads/block size) the result is bitwise
/// identical on every run and for any number of threads (see backend/cpu.hpp, reduction.hpp); the
/// callback only observes (or stops at an iteration boundary).
/// @throws invalid_input for bad options (validate()); non_finite_integrand if f returns NaN or
///         Inf (first sample in index order, with its point); overflow_error if f is finite but
///         f J or (f J)^2 overflows at a sample (the first in index order, with its point);
///         numerical_error if an iteration's estimate, variance or the weighted average overflows
///         (|I_k| >= overflow_estimate = 2^560, or a sum of finite terms beyond the double range);
///         whatever `on_iteration` throws.
template <int D, class F, class Backend, class Map>
result vegas_continue(const F& f, const region<D>& reg, const vegas_options& opt, Backend& backend, Map& map,
                      vegas_state& state, const iteration_callback& on_iteration = {}) {
  static_assert(D >= 1, "dimension must be at least 1");
  validate(opt, D);
  MCUBES_EXPECTS(map_bins(map) == opt.n_bins, "the adaptive map has ", map_bins(map),
                 " bins per axis, but the options ask for n_bins = ", opt.n_bins);
  MCUBES_EXPECTS(state.next_iteration <= max_iteration_index - opt.max_iterations,
                 "iteration indices beyond 2^31 - 1: reset the integrator");
  const auto run_start = std::chrono::steady_clock::now();
  const stratification st = make_stratification(D, opt.calls_per_iteration);

  sampling_params<D> sp{};
  for (int j = 0; j < D; ++j) {
    sp.lower[j] = reg.lower()[j];
    sp.width[j] = reg.width(j);
  }
  sp.g = st.g;
  sp.inv_g = 1.0 / static_cast<double>(st.g);
  sp.n_cubes = st.n_cubes;
  sp.p = st.samples_per_cube;
  sp.chunk_cubes = st.chunk_cubes;
  sp.seed = opt.seed;
  const double cube_weight = reg.volume() / static_cast<double>(st.n_cubes);  // V/m
  constexpr double nan = std::numeric_limits<double>::quiet_NaN();

  result res;
  res.seed = opt.seed;
  res.options = opt;
  res.backend = backend.name();
  running_average avg;
  double& reference = state.reference;  // largest bin-contribution term of the last adapting pass (< 0: unknown yet)
  bool stopped = false;
  // The summary fields of `res` from the running average (NaN before anything is accumulated).
  auto summarise = [&]() {
    const bool any = avg.count() > 0;
    res.estimate = avg.mean();
    res.error = any ? avg.sdev() : std::numeric_limits<double>::infinity();
    res.chi2_dof = any ? avg.chi2_dof() : nan;
    res.q = any ? avg.q() : nan;
    res.dof = avg.dof();
    res.accumulated = avg.count();
  };

  for (int k = 0; k < opt.max_iterations; ++k) {
    const int it = state.next_iteration++;  // the iteration's index in the random stream
    const auto t0 = std::chrono::steady_clock::now();
    const bool adapt = k < opt.adapt_iterations;
    sp.iteration = static_cast<std::uint32_t>(it);
    iteration_record rec;
    rec.index = it;
    rec.adapted = adapt;

    if (adapt && reference < 0) {  // first adapting iteration: probe a sparse subset for the scale
      sp.bin_scale = 1.0;
      reference = backend.sample(f, sp, st, map, true, detail::probe_stride(st)).flags.max_contribution;
    }
    sp.bin_scale = scale_for(reference);
    iteration_sums sums = backend.sample(f, sp, st, map, adapt);
    const chunk_partial& fl = sums.flags;
    if (fl.first_non_finite != ~std::uint64_t(0))
      detail::throw_sample_failure<D>(f, sp, backend.map_edges(map), opt.n_bins, it, fl.first_non_finite,
                                      fl.non_finite_value);
    if (adapt && needs_rescale(fl.max_contribution, sp.bin_scale)) {
      sp.bin_scale = scale_for(fl.max_contribution);  // same samples, exact re-accumulation
      sums = backend.sample(f, sp, st, map, adapt);
      rec.rescaled = true;
    }

    rec.top_bin_level = sums.top_level;
    rec.estimate = cube_weight * sums.estimate;
    const double variance = cube_weight * cube_weight * sums.variance;
    const std::string where = "iteration " + std::to_string(it) + ": ";
    if (!std::isfinite(rec.estimate))
      throw numerical_error(where + "the estimate is not finite (a sum of values of f times the map's jacobian "
                                    "overflows the double range); rescale the integrand");
    if (!std::isfinite(variance))
      throw numerical_error(where + "the variance of the estimate is not finite (squares of f times the map's "
                                    "jacobian overflow the double range, estimate " +
                            detail::format_double(rec.estimate) + "); rescale the integrand");
    if (std::fabs(rec.estimate) >= overflow_estimate)
      throw numerical_error(where + "|estimate| = " + detail::format_double(std::fabs(rec.estimate)) +
                            " is at or above 2^560 (3.8e168), beyond which no error estimate is representable in "
                            "double precision; rescale the integrand");
    rec.error = std::sqrt(std::fmax(variance, running_average::variance_floor(rec.estimate)));
    rec.n_eval = st.n_eval();
    rec.n_nonzero = sums.flags.n_nonzero;
    res.n_eval += rec.n_eval;

    // An iteration whose estimate is so small that its square (the scale of its variance) is near
    // the underflow threshold cannot carry an error estimate: squares of its samples underflowed
    // to 0 and its variance would be 0 (e.g. a narrow peak not yet found, sampled only in the far
    // tails). It is reported and left out, like an all-zero iteration.
    rec.underflow = rec.n_nonzero > 0 && std::fabs(rec.estimate) < underflow_estimate;
    if (k >= opt.skip && rec.n_nonzero > 0 && !rec.underflow) {
      avg.add(rec.estimate, variance);
      rec.accumulated = true;
      if (!std::isfinite(avg.mean()) || !std::isfinite(avg.sdev()))
        throw numerical_error(where + "the weighted average of the iterations overflows the double range");
    }
    const bool any = avg.count() > 0;
    rec.weighted_estimate = any ? avg.mean() : nan;
    rec.weighted_error = any ? avg.sdev() : nan;
    rec.chi2_dof = any ? avg.chi2_dof() : nan;
    rec.q = any ? avg.q() : nan;

    if (adapt) {
      backend.adapt_map(map, sums, opt.alpha, opt.symmetric_map);  // on the host or the device
      if (sums.flags.max_contribution > 0) reference = sums.flags.max_contribution;
    }
    rec.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    res.records.push_back(rec);
    res.iterations = k + 1;

    const double tol = std::fmax(opt.abs_tol, opt.rel_tol * std::fabs(avg.mean()));
    if (avg.count() >= opt.min_iterations && avg.sdev() <= tol && avg.chi2_dof() <= opt.max_chi2_dof) {
      res.status = status::converged;
      break;
    }
    if (on_iteration) {
      summarise();
      res.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - run_start).count();
      if (on_iteration(res.records.back(), res) == run_control::stop) {
        stopped = true;
        break;
      }
    }
  }
  summarise();
  if (res.status != status::converged) {
    bool any_nonzero = false, any_underflow = false;
    for (const iteration_record& r : res.records) {
      any_nonzero = any_nonzero || r.n_nonzero > 0;
      any_underflow = any_underflow || r.underflow;
    }
    if (stopped)
      res.status = status::interrupted;
    else if (avg.count() > 0)
      res.status = status::not_converged;
    else if (!any_nonzero)
      res.status = status::not_resolved;
    else if (any_underflow)
      res.status = status::underflow;
    else
      res.status = status::not_converged;  // non-zero samples only in skipped iterations
  }
  if (res.status == status::converged && on_iteration) on_iteration(res.records.back(), res);
  res.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - run_start).count();
  return res;
}

/// vegas_continue from a uniform map of opt.n_bins bins made by `backend`, at iteration 0: one
/// complete m-Cubes run (the one-call form; mcubes::vegas chooses the backend, integrator.hpp keeps
/// the map between calls). Same contract and exceptions as vegas_continue.
template <int D, class F, class Backend>
result vegas_with(const F& f, const region<D>& reg, const vegas_options& opt, Backend&& backend,
                  const iteration_callback& on_iteration = {}) {
  validate(opt, D);
  auto map = backend.template make_map<D>(opt.n_bins);
  vegas_state state;
  return vegas_continue<D>(f, reg, opt, backend, map, state, on_iteration);
}

}  // namespace mcubes

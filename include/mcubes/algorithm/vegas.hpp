#pragma once
/// @file algorithm/vegas.hpp
/// The m-Cubes iteration loop (seeds/001, Algorithm 2), shared by every backend:
///   plan sub-cubes -> backend samples chunks (V-Sample or V-Sample-No-Adjust) -> merge ->
///   weighted average (Lepage eqs. 5-6) -> adapt the map (first adapt_iterations) -> stop test.
/// The backend only decides who computes which chunk (backend/cpu.hpp, backend/cuda.cuh).

#include <chrono>
#include <limits>
#include <string>
#include <cmath>
#include <cstdint>
#include <vector>

#include "../core/adaptive_map.hpp"
#include "../core/reduction.hpp"
#include "../core/running_average.hpp"
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

namespace detail {

/// Number of chunks the bin-scale probe visits (1 in `stride` chunks).
inline std::uint64_t probe_stride(const stratification& st) {
  const std::uint64_t target = 1024;
  return st.n_chunks > target ? st.n_chunks / target : 1;
}

template <int D, class F>
[[noreturn]] void throw_non_finite(const F&, const sampling_params<D>& sp, const std::vector<double>& edges, int n_bins,
                                   int iteration, std::uint64_t index, double value) {
  const map_view<D> map{edges.data(), n_bins};
  std::uint64_t coord[D];
  cube_coordinates<D>(index / sp.p, sp.g, coord);
  point<D> x;
  int bin[D];
  make_sample<D>(sp, map, coord, index, x, bin);
  throw non_finite_integrand(iteration, index, std::vector<double>(x.x, x.x + D), value);
}

}  // namespace detail

/// Integrates f over `reg` with m-Cubes on `backend` (any type with the interface of cpu_backend:
/// name(), make_map<D>(n_bins), sample(f, sp, st, map, adapt, stride), adapt_map(map, sums, alpha,
/// symmetric), map_edges(map); the backend owns the adaptive map, on the host or on the device).
///
/// Each iteration draws calls_per_iteration (rounded down to m*p) samples, stratified in m = g^d
/// sub-cubes (stratification.hpp) and importance-sampled through the adaptive map. The result's
/// estimate and error are the inverse-variance weighted average of the iterations from `skip`
/// on that had at least one non-zero sample (an all-zero iteration carries no information and is
/// reported, not averaged; so is an iteration whose |estimate| is below 2^-460, whose variance
/// underflows). The run stops as converged at the first iteration where at least
/// min_iterations are accumulated, error <= max(abs_tol, rel_tol |estimate|) and
/// chi2/dof <= max_chi2_dof; otherwise after max_iterations as not converged, or as not resolved
/// if no iteration was accumulated.
///
/// Determinism: for a given (f, region, options less threads/block size) the result is bitwise
/// identical on every run and for any number of threads (see backend/cpu.hpp, reduction.hpp).
/// @throws invalid_input for bad options (validate()); non_finite_integrand if f returns NaN or
///         Inf (first sample in index order, with its point); numerical_error if an iteration's
///         estimate or variance overflows.
template <int D, class F, class Backend>
result vegas_with(const F& f, const region<D>& reg, const vegas_options& opt, const Backend& backend) {
  static_assert(D >= 1, "dimension must be at least 1");
  validate(opt, D);
  const auto run_start = std::chrono::steady_clock::now();
  const stratification st = make_stratification(D, opt.calls_per_iteration);
  auto map = backend.template make_map<D>(opt.n_bins);

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

  result res;
  res.seed = opt.seed;
  res.options = opt;
  res.backend = backend.name();
  running_average avg;
  double reference = -1;  // largest bin-contribution term of the last adapting pass (unknown yet)

  for (int it = 0; it < opt.max_iterations; ++it) {
    const auto t0 = std::chrono::steady_clock::now();
    const bool adapt = it < opt.adapt_iterations;
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
      detail::throw_non_finite<D>(f, sp, backend.map_edges(map), opt.n_bins, it, fl.first_non_finite, fl.non_finite_value);
    if (adapt && needs_rescale(fl.max_contribution, sp.bin_scale)) {
      sp.bin_scale = scale_for(fl.max_contribution);  // same samples, exact re-accumulation
      sums = backend.sample(f, sp, st, map, adapt);
      rec.rescaled = true;
    }

    rec.top_bin_level = sums.top_level;
    rec.estimate = cube_weight * sums.estimate;
    const double variance = cube_weight * cube_weight * sums.variance;
    if (!std::isfinite(rec.estimate) || !std::isfinite(variance))
      throw numerical_error("iteration " + std::to_string(it) + ": estimate or variance is not finite (values of f times the map's jacobian overflow)");
    rec.error = std::sqrt(variance);
    rec.n_eval = st.n_eval();
    rec.n_nonzero = sums.flags.n_nonzero;
    res.n_eval += rec.n_eval;

    // An iteration whose estimate is so small that its square (the scale of its variance) is near
    // the underflow threshold cannot carry an error estimate: squares of its samples underflowed
    // to 0 and its variance would be 0 (e.g. a narrow peak not yet found, sampled only in the far
    // tails). It is reported and left out, like an all-zero iteration.
    rec.underflow = rec.n_nonzero > 0 && std::fabs(rec.estimate) < underflow_estimate;
    if (it >= opt.skip && rec.n_nonzero > 0 && !rec.underflow) {
      avg.add(rec.estimate, variance);
      rec.accumulated = true;
    }
    rec.weighted_estimate = avg.mean();
    rec.weighted_error = avg.sdev();
    rec.chi2_dof = avg.chi2_dof();
    rec.q = avg.q();

    if (adapt) {
      backend.adapt_map(map, sums, opt.alpha, opt.symmetric_map);  // on the host or the device
      if (sums.flags.max_contribution > 0) reference = sums.flags.max_contribution;
    }
    rec.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    res.records.push_back(rec);
    res.iterations = it + 1;

    const double tol = std::fmax(opt.abs_tol, opt.rel_tol * std::fabs(avg.mean()));
    if (avg.count() >= opt.min_iterations && avg.sdev() <= tol && avg.chi2_dof() <= opt.max_chi2_dof) {
      res.status = status::converged;
      break;
    }
  }
  res.estimate = avg.mean();
  res.error = avg.sdev();
  res.chi2_dof = avg.chi2_dof();
  res.q = avg.q();
  res.dof = avg.dof();
  res.accumulated = avg.count();
  if (avg.count() == 0) {
    res.status = status::not_resolved;
    res.error = std::numeric_limits<double>::infinity();
  }
  res.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - run_start).count();
  return res;
}

}  // namespace mcubes

#pragma once
/// @file algorithm/vegas_vector.hpp
/// m-Cubes for a vector-valued integrand f: R^D -> R^N (returns values<N>, N <= 64): every
/// component is integrated from the same samples, so the estimates come with their N x N
/// covariance matrix (Lepage's vegas integrates arrays and dictionaries this way; Cuba's ncomp).
///
/// The iterations, the stopping rule and the map are vegas_run's (algorithm/vegas.hpp), with the
/// map adapted to component 0 alone, as vegas does: the user puts first the component whose
/// precision matters most (a normalisation, the total), and a one-component integrand is then
/// bitwise the scalar run (tested). (Cuba's alternative, the sum of the normalised |f_c|, spreads
/// the map over every component's support and serves none of them fully.)
///
/// Per iteration k: I_k,i = (V/m) sum_c I_c,i and C_k(i, j) = (V/m)^2 sum_c cov_c(i, j)
/// (core/vector_sampler.hpp). Over the accumulated iterations (the scalar run's rule: from `skip`
/// on, with a non-zero sample, no underflow):
///  - estimate_i: the weighted average of I_k,i with the scalar run's predictable weights
///    w_k,i = 1 / C_k'(i, i), k' the previous accumulated iteration (k itself for the first;
///    floored at the rounding level, as running_average), component by component (component 0's
///    is the scalar run's, bit for bit);
///  - covariance(i, j) = sum_k (w_k,i / W_i)(w_k,j / W_j) C_k(i, j), W_i = sum_k w_k,i: the exact
///    covariance of those weighted averages given the iterations' covariances (the diagonal is
///    error_i^2);
///  - chi2_dof_i: each component's chi2 / (n - 1), as the scalar run;
///  - the vector's chi2 = sum_k d_k^T C_k^-1 d_k with d_k = I_k - estimate (vegas's correlated
///    chi2), C_k^-1 through a Cholesky factorisation in which a pivot below 1e-12 of its diagonal
///    entry drops that direction (linearly dependent components), dof = (sum_k rank C_k) - N;
///    q_vector its p-value.
/// The run converges when every component has error_i <= max(abs_tol, rel_tol |estimate_i|) and
/// chi2_dof_i <= max_chi2_dof after min_iterations accumulated iterations.
///
/// Chunking: with N > 1, chunks of at least vector_chunk_samples<N> samples (core/
/// vector_sampler.hpp: the per-chunk reduction of M = N + N (N + 1) / 2 sums is amortised over
/// them), handed to every backend through the run's stratification and sampling_params
/// (chunk_cubes), so that all backends sum the same chunk partials; the bin-scale probe visits
/// 1 in probe_stride of these chunks. One component keeps the scalar chunking.
///
/// Determinism: as the scalar run (bitwise for any number of threads or CUDA block size). Backends:
/// the CPU (backend/cpu/vector_pass.hpp) and CUDA (backend/cuda/vector_kernels.cuh); both reduce
/// the same chunk partials over the same fixed tree, so they agree bitwise where the integrand's
/// arithmetic does (no FMA contraction).

#include <cmath>
#include <cstdint>
#include <functional>
#include <limits>
#include <string>
#include <vector>

#include "../core/vector_pass_sums.hpp"
#include "../core/running_average.hpp"
#include "../core/sample_diagnosis.hpp"
#include "../core/vector_sampler.hpp"
#include "../error.hpp"
#include "../options.hpp"
#include "../region.hpp"
#include "../result.hpp"
#include "../values.hpp"
#include "vegas.hpp"

namespace mcubes {

/// One iteration of a vector run: its estimates I_k,i and their covariance C_k (N x N, row-major).
struct vector_iteration {
  int index = 0;                  ///< the iteration's index (as iteration_record::index)
  bool accumulated = false;       ///< part of the averages
  std::vector<double> estimate;   ///< N
  std::vector<double> covariance; ///< N x N, row-major
};

/// Result of mcubes::vegas_vector: per-component estimates, errors and chi2/dof, the covariance of
/// the estimates, the vector's correlated chi2, and the run (status, iterations, evaluations, seed,
/// component 0's iteration records) in `run`.
struct vector_result {
  int components = 0;                  ///< N (vegas_vector_with: the n components reported)
  std::vector<double> estimate;        ///< N weighted averages
  std::vector<double> error;           ///< N standard deviations (sqrt of the covariance's diagonal)
  std::vector<double> covariance;      ///< N x N, row-major, of the estimates
  std::vector<double> chi2_dof;        ///< N, each component's chi2/dof over the iterations
  double chi2_dof_vector = 0;          ///< the vector's correlated chi2 / dof (0 when dof = 0)
  int dof_vector = 0;                  ///< its degrees of freedom
  double q_vector = 1;                 ///< its p-value
  result run;                          ///< status, iterations, n_eval, seed, options, component 0's records
  std::vector<vector_iteration> iterations;  ///< every iteration's estimates and covariance
  mcubes::status status() const noexcept { return run.status; }
  bool converged() const noexcept { return run.converged(); }
  /// Covariance entry (i, j).
  double cov(int i, int j) const { return covariance[static_cast<std::size_t>(i) * components + j]; }
};

/// Where a vector run stands at an iteration boundary (checkpoint.hpp writes it to a file): the
/// scalar run's progress (component 0: its records, state, map and VEGAS+ shares) and every
/// completed iteration's estimates and covariance, from which the averages are rebuilt by the
/// run's own arithmetic.
struct vector_progress {
  vegas_progress run;
  int components = 0;                        ///< n, the components reported
  std::vector<vector_iteration> iterations;  ///< one per record of `run`
};

/// Checkpoint and resume of a vector run (vegas_vector_with), as vegas_resumption for one run:
/// `from` continues the run of that progress; `save` is called at every iteration boundary and
/// once at the end with a function that returns the progress there and whether the run has ended.
/// A run continued from the progress of its k-th boundary ends with the bits of the run never
/// stopped, on any backend, thread count or block size.
struct vector_resumption {
  const vector_progress* from = nullptr;
  std::function<void(const std::function<vector_progress()>& progress, bool ended)> save;
};

namespace detail {

/// v^T C^-1 v for a symmetric positive semi-definite N x N matrix C (row-major) by Cholesky
/// factorisation; a pivot below 1e-12 of its diagonal entry (a direction of zero variance, e.g.
/// linearly dependent components) is dropped with its row. `rank` gets the pivots kept.
inline double quadratic_form_inverse(std::vector<double> c, std::vector<double> v, int n, int& rank) {
  rank = 0;
  std::vector<bool> kept(n, false);
  for (int j = 0; j < n; ++j) {
    double d = c[j * n + j];
    for (int k = 0; k < j; ++k)
      if (kept[k]) d -= c[j * n + k] * c[j * n + k];
    if (!(d > 1e-12 * c[j * n + j]) || !(d > 0)) {
      for (int i = j; i < n; ++i) c[i * n + j] = 0;
      continue;
    }
    kept[j] = true;
    ++rank;
    const double l = std::sqrt(d);
    c[j * n + j] = l;
    for (int i = j + 1; i < n; ++i) {
      double s = c[i * n + j];
      for (int k = 0; k < j; ++k)
        if (kept[k]) s -= c[i * n + k] * c[j * n + k];
      c[i * n + j] = s / l;
    }
  }
  double q = 0;  // forward substitution L y = v over the kept pivots; q = |y|^2
  for (int i = 0; i < n; ++i) {
    if (!kept[i]) continue;
    double s = v[i];
    for (int k = 0; k < i; ++k)
      if (kept[k]) s -= c[i * n + k] * v[k];
    v[i] = s / c[i * n + i];
    q += v[i] * v[i];
  }
  return q;
}

}  // namespace detail

/// Integrates the vector-valued f (values<N> operator()(const point<D>&) const) over `reg` with
/// m-Cubes on `backend` (its sample_passes<values<N>>), from a uniform map
/// (see the file comment for the statistics and the stopping rule).
/// @throws invalid_input for bad options; non_finite_integrand / overflow_error for the first
///         sample where a component is not finite or overflows (the point, component 0's value);
///         numerical_error as vegas_continue; whatever `on_iteration` throws.
/// `on_iteration` (optional) sees component 0's record and running result after each iteration
/// and may stop the run at that boundary (result.hpp); it changes no number.
/// `components` (n, 1 <= n <= N; default N): a run of n components in a wider instantiation
/// (the Python module's callables of 9 to 64 components run in one of 16, 32 or 64): f's values
/// beyond the first n must be 0; the result, the stopping rule and the correlated chi2 have the
/// first n components only, and are those of this width-N run (its chunking is N's, so they are
/// not bitwise a width-n run's). @throws invalid_input for n outside 1..N.
/// `resume` (vector_resumption): continue the run of a vector_progress, and hand the progress to a
/// saver at every iteration boundary; a run continued from the progress of its k-th boundary ends
/// with the bits of the run never stopped (records' seconds aside), on any backend, thread count
/// or block size. @throws invalid_input for a progress that does not fit (components, map size,
/// records, shares); whatever `save` throws.
template <int D, int N, class F, class Backend>
vector_result vegas_vector_with(const F& f, const region<D>& reg, const vegas_options& options, Backend& backend,
                                const iteration_callback& on_iteration = {}, int components = N,
                                const vector_resumption& resume = {}) {
  validate(options, D);
  MCUBES_EXPECTS(components >= 1 && components <= N, "a run of ", N, " components reports 1 to ", N, ", not ", components);
  const int n = components;  // the components reported (the rest: padding)
  // VEGAS+ allocates by component 0 (core/vector_sampler.hpp), array integrands too
  // (backend/cpu/vector_pass.hpp). Bins: map_bins_for.
  const vegas_options opt = with_resolved_defaults(options);
  auto map = backend.template make_map<D>(opt.n_bins);
  vegas_state state;
  const vector_progress* from = resume.from;
  if (from != nullptr) {
    MCUBES_EXPECTS(from->components == n, "the vector run to continue has ", from->components, " components, not ", n);
    MCUBES_EXPECTS(from->iterations.size() == from->run.records.size(), "the vector run to continue has ",
                   from->iterations.size(), " vector iterations for ", from->run.records.size(), " records");
    backend.set_map_edges(map, from->run.edges);
    state = from->run.state;
  }
  constexpr int M = vector_partial_size<N>;
  std::vector<double> pending(M, 0.0);
  vector_result out;
  out.components = n;
  std::vector<running_average> avg(static_cast<std::size_t>(n));
  std::vector<std::vector<double>> acc_cov;  // covariances of the accumulated iterations, floored diagonals
  std::vector<std::vector<double>> acc_est;
  // An iteration enters the averages (iteration_done; a resumed run's completed iterations)
  const auto accumulate = [&](const vector_iteration& it) {
    std::vector<double> cf = it.covariance;
    for (int i = 0; i < n; ++i) {
      const double var = it.covariance[static_cast<std::size_t>(i) * n + i];
      const double floor_var = running_average::variance_floor(it.estimate[i]);
      // predictable weight: the previous accumulated iteration's variance (the scalar run's rule)
      avg[i].add(it.estimate[i], var, acc_cov.empty() ? var : acc_cov.back()[static_cast<std::size_t>(i) * n + i]);
      double& d = cf[static_cast<std::size_t>(i) * n + i];
      d = std::fmax(var, floor_var);
    }
    acc_cov.push_back(std::move(cf));
    acc_est.push_back(it.estimate);
  };
  if (from != nullptr)
    for (const vector_iteration& it : from->iterations) {
      MCUBES_EXPECTS(it.estimate.size() == static_cast<std::size_t>(n) &&
                         it.covariance.size() == static_cast<std::size_t>(n) * n,
                     "iteration ", it.index, " of the vector run to continue does not have ", n, " components");
      if (it.accumulated) accumulate(it);
      out.iterations.push_back(it);
    }
  const auto all_converged = [&]() {
    for (int i = 1; i < n; ++i) {
      const double tol = std::fmax(opt.abs_tol, opt.rel_tol * std::fabs(avg[i].mean()));
      if (!(avg[i].sdev() <= tol && avg[i].chi2_dof() <= opt.max_chi2_dof)) return false;
    }
    return true;
  };
  vegas_run<D> run(reg, opt, state, backend.name(), opt.n_bins, vector_chunk_samples<N>,
                   from != nullptr ? &from->run : nullptr, all_converged);
  cube_shares<std::remove_const_t<Backend>> shares;
  vegas_run<D>* one = &run;
  shares.attach(&one, 1, backend);
  if (from != nullptr && (state.cubes.has_shares || state.cubes.pending_total)) {  // as vegas_continue
    MCUBES_EXPECTS(!from->run.shares.empty(),
                   "the run to continue has a VEGAS+ allocation but no shares (a damaged checkpoint)");
    shares.set_host_shares(state.cubes, from->run.shares);
  }
  const double w = run.cube_weight();

  const auto iteration_done = [&](const iteration_record& rec) {
    vector_iteration it;
    it.index = rec.index;
    it.accumulated = rec.accumulated;
    it.estimate.resize(static_cast<std::size_t>(n));
    it.covariance.assign(static_cast<std::size_t>(n) * n, 0.0);
    for (int i = 0; i < n; ++i) {
      it.estimate[i] = w * pending[i];
      for (int j = i; j < n; ++j) {
        const double c = w * w * pending[N + triangle_index(N, i, j)];
        it.covariance[static_cast<std::size_t>(i) * n + j] = c;
        it.covariance[static_cast<std::size_t>(j) * n + i] = c;
      }
    }
    for (int i = 0; i < n; ++i) {
      const double e = it.estimate[i], c = it.covariance[static_cast<std::size_t>(i) * n + i];
      if (!std::isfinite(e) || !std::isfinite(c))
        throw numerical_error("iteration " + std::to_string(rec.index) + ": component " + std::to_string(i) +
                              "'s estimate or variance is not finite (sums of f J overflow the double range); "
                              "rescale the integrand");
    }
    if (rec.accumulated) accumulate(it);
    out.iterations.push_back(std::move(it));
  };
  run.set_iteration_hooks(iteration_done, all_converged);
  const auto progress = [&] {
    vector_progress p;
    p.run = run.progress(backend.map_edges(map), shares.host_shares(state.cubes));
    p.components = n;
    p.iterations = out.iterations;
    return p;
  };
  const auto fail = [&](const sampling_params<D>& sp, int it, std::uint64_t index, double value) {
    (void)value;  // component 0's; the host re-evaluates every component to name the failing one
    const auto first = [&](const point<D>& x) { return f(x)[0]; };
    const std::vector<double> edges = backend.map_edges(map);
    const map_view<D> m{edges.data(), opt.n_bins};
    std::uint64_t coord[D];
    cube_coordinates<D>(index / sp.p, sp.g, coord);
    point<D> x;
    int bin[D];
    const double jac = make_sample<D>(sp, m, coord, index, x, bin);
    const values<N> v = f(x);
    for (int i = 0; i < n; ++i) {
      const double q = v[i] * jac * (v[i] * jac);
      if (!std::isfinite(v[i])) detail::throw_non_finite<D>(first, it, index, x, v[i]);
      if (!(q - q == 0)) throw overflow_error(it, index, std::vector<double>(x.x, x.x + D), v[i], jac);
    }
    detail::throw_non_finite<D>(first, it, index, x, v[0]);
  };
  const auto adapt = [&](const iteration_sums& sums) { backend.adapt_map(map, sums, alpha_for(opt), map_floor_for(opt), opt.symmetric_map); };
  while (!run.done()) {
    if (opt.stop != nullptr && opt.stop->requested()) {  // execution::stop: before every pass
      run.stop();
      break;
    }
    vector_pass_sums ps;
    try {
      allocate_counts(run, backend);
      ps = std::move(backend.template sample_passes<values<N>>(f, map, std::vector<sampling_pass<D>>{run.pass()})[0]);
    } catch (const pass_abandoned&) {  // stopped mid-pass: the pass is discarded whole
      run.stop();
      break;
    }
    pending = std::move(ps.sums);
    const std::size_t before = run.completed();
    run.take(ps.scalar, fail, adapt, on_iteration);
    if (resume.save && run.completed() > before && !run.done()) resume.save(progress, false);
  }
  if (resume.save) resume.save(progress, true);  // before finish(), which hands the records over
  out.run = run.finish(on_iteration);

  // the averages over the accumulated iterations
  out.estimate.assign(static_cast<std::size_t>(n), 0.0);
  out.error.assign(static_cast<std::size_t>(n), std::numeric_limits<double>::infinity());
  out.chi2_dof.assign(static_cast<std::size_t>(n), std::numeric_limits<double>::quiet_NaN());
  out.covariance.assign(static_cast<std::size_t>(n) * n, 0.0);
  const std::size_t n_acc = acc_est.size();
  if (n_acc == 0) {
    out.chi2_dof_vector = std::numeric_limits<double>::quiet_NaN();
    out.q_vector = std::numeric_limits<double>::quiet_NaN();
    for (auto& c : out.covariance) c = std::numeric_limits<double>::quiet_NaN();
    return out;
  }
  std::vector<std::vector<double>> wn(static_cast<std::size_t>(n), std::vector<double>(n_acc));  // normalised weights w_k,i / W_i
  for (int i = 0; i < n; ++i) {
    out.estimate[i] = avg[i].mean();
    out.error[i] = avg[i].sdev();
    out.chi2_dof[i] = avg[i].chi2_dof();
    for (std::size_t k = 0; k < n_acc; ++k) wn[i][k] = avg[i].weight(static_cast<int>(k));
  }
  for (int i = 0; i < n; ++i)
    for (int j = 0; j < n; ++j) {
      double c = 0;
      if (i == j) {
        c = out.error[i] * out.error[i];
      } else {
        for (std::size_t k = 0; k < n_acc; ++k) c += wn[i][k] * wn[j][k] * acc_cov[k][static_cast<std::size_t>(i) * n + j];
      }
      out.covariance[static_cast<std::size_t>(i) * n + j] = c;
    }
  double chi2 = 0;
  int rank_sum = 0;
  for (std::size_t k = 0; k < n_acc; ++k) {
    std::vector<double> d(static_cast<std::size_t>(n));
    for (int i = 0; i < n; ++i) d[i] = acc_est[k][i] - out.estimate[i];
    int rank = 0;
    chi2 += detail::quadratic_form_inverse(acc_cov[k], d, n, rank);
    rank_sum += rank;
  }
  out.dof_vector = rank_sum > n ? rank_sum - n : 0;
  out.chi2_dof_vector = out.dof_vector > 0 ? chi2 / out.dof_vector : 0.0;
  out.q_vector = out.dof_vector > 0 ? chi2_q(chi2, out.dof_vector) : 1.0;
  return out;
}

}  // namespace mcubes

#pragma once
/// @file algorithm/plain_mc.hpp
/// Plain (crude) Monte Carlo integration over a box: mcubes::plain_mc<D>(f, region, options).
///
/// With N uniform points x_k = a + (b - a) u_k in the region of volume V,
///   estimate = V mean(f),   error = V sqrt((mean(f^2) - mean(f)^2) / (N - 1)) = V sqrt(M2 / (N (N - 1))),
/// where M2 = sum_k (f(x_k) - mean)^2 is computed stably: each chunk accumulates the sums of
/// f - K and (f - K)^2 with K = f at the chunk's first sample, and the chunk moments (n, mean, M2)
/// are merged with the pairwise update of Chan, Golub and LeVeque (core/tree_reduce.hpp), never
/// with the cancelling one-pass difference of the whole run.
///
/// Status (result.hpp), one pass of N samples:
///  - converged: error <= max(abs_tol, rel_tol |estimate|); not_converged otherwise (the standard
///    error is that of N samples: take more samples or loosen the tolerance);
///  - not_resolved: every sample was 0 (estimate 0, error +Inf: nothing is known);
///  - underflow: non-zero samples were seen, but the root mean square of the values,
///    rms = sqrt(mean^2 + M2 / N), or rms times the volume, is below underflow_scale (2^-460, as
///    Vegas's underflow_estimate): squares of such values are near the underflow threshold, so M2
///    and the error cannot be trusted (e.g. f = 1e-300). The estimate is reported, the error is
///    +Inf. (An estimate of exactly 0 from non-zero values that cancel is not an underflow: its
///    error is well defined.)
/// The estimate and the error are never NaN: a sum that overflows the double range throws
/// numerical_error (naming the sample at which a chunk's sums overflow, with its point and value,
/// or the merged moments).
///
/// Random numbers (random.hpp): sample k uses sample_stream(seed, stream_id::plain_mc, 0, k), its
/// D coordinates are the first D uniforms of that stream: the point does not depend on who
/// computes it.
///
/// Determinism contract (run_to_run, thread-count and block-size invariant): the N samples are cut
/// into the problem-defined chunks of make_plain_mc_chunking (at most 2^20 chunks of at least 16
/// consecutive sample indices, depending on N only); each chunk is computed serially by one thread, and the
/// chunk partials are merged over the fixed pairwise tree (backend/cpu_tiles.hpp on the CPU,
/// blocks of any power-of-two size on CUDA). The result is bitwise identical for any number of
/// CPU threads and for any CUDA threads-per-block. CPU and CUDA results agree to rounding (nvcc
/// contracts a*b+c into FMA in the integrand and the chunk loop), not bitwise.

#include <chrono>
#include <cmath>
#include <cstdint>
#include <limits>
#include <sstream>
#include <string>
#include <utility>
#include <vector>

#include "../core/fixed_tree.hpp"
#include "../core/sample_diagnosis.hpp"
#include "../core/stratification.hpp"
#include "../core/tree_reduce.hpp"
#include "../error.hpp"
#include "../integrand.hpp"
#include "../options.hpp"
#include "../point.hpp"
#include "../random.hpp"
#include "../region.hpp"
#include "../result.hpp"

namespace mcubes {

/// Largest sample count of plain Monte Carlo (2^62): every index and count stays well inside 64
/// bits.
inline constexpr std::uint64_t plain_mc_max_samples = std::uint64_t(1) << 62;

/// Options of mcubes::plain_mc.
struct plain_mc_options : execution {
  std::uint64_t samples = 1000000;           ///< N: integrand evaluations, 2 <= N <= 2^62
  std::uint64_t seed = default_seed;         ///< key of the Philox stream (random.hpp)
  double rel_tol = 1e-3;                     ///< converged when error <= max(abs_tol, rel_tol |estimate|); finite, >= 0
  double abs_tol = 0.0;                      ///< absolute tolerance (same test); finite, >= 0; rel_tol or abs_tol > 0
};

/// Checks every field of `o`. @throws invalid_input naming the first offending option.
inline void validate(const plain_mc_options& o) {
  MCUBES_EXPECTS(o.samples >= 2, "plain Monte Carlo needs at least 2 samples (the standard error divides by N - 1), got ",
                 o.samples);
  validate_tolerances(o.rel_tol, o.abs_tol);
  MCUBES_EXPECTS(o.samples <= plain_mc_max_samples, "plain Monte Carlo takes at most 2^62 samples, got ", o.samples);
  validate(static_cast<const execution&>(o));
}

/// The problem-defined chunking of N samples: chunk c holds samples [c*chunk_samples,
/// min(N, (c+1)*chunk_samples)), with chunk_samples = max(16, ceil(N / 2^20)).
struct plain_mc_chunking {
  std::uint64_t chunk_samples = 0;
  std::uint64_t n_chunks = 0;
};

inline plain_mc_chunking make_plain_mc_chunking(std::uint64_t samples) {
  plain_mc_chunking c;
  c.chunk_samples = (samples + max_chunks - 1) / max_chunks;
  if (c.chunk_samples < 16) c.chunk_samples = 16;
  c.n_chunks = (samples + c.chunk_samples - 1) / c.chunk_samples;
  return c;
}

/// Everything a thread needs to compute a chunk. Trivially copyable (kernel parameter).
template <int D>
struct plain_mc_params {
  double lower[D];                ///< region lower bounds a_j
  double width[D];                ///< region widths b_j - a_j
  std::uint64_t samples = 0;      ///< N
  std::uint64_t chunk_samples = 0;
  std::uint64_t n_chunks = 0;
  std::uint64_t seed = 0;
};

/// Partial result of a set of chunks: moments of f, the number of non-zero values, and the first
/// (smallest index) failing sample: one where f returned NaN or +-Inf (failure_value non-finite),
/// or the one at which its chunk's sums overflow the double range (failure_value = f there,
/// finite). The identity is the default value. 48 bytes: the CUDA block tree keeps 1024 of them in
/// 48 KiB of static shared memory (backend/cuda/launch.cuh).
struct mc_partial {
  moments m;
  std::uint64_t n_nonzero = 0;
  std::uint64_t first_failure = ~std::uint64_t(0);
  double failure_value = 0;
};
static_assert(sizeof(mc_partial) <= 48, "mc_partial must fit 1024 times in 48 KiB of shared memory");

/// Merges two partials (moments: Chan et al.; counts: sum; first failure: smallest index).
MCUBES_HOST_DEVICE inline mc_partial merge(const mc_partial& a, const mc_partial& b) {
  mc_partial r;
  r.m = merge(a.m, b.m);
  r.n_nonzero = a.n_nonzero + b.n_nonzero;
  if (b.first_failure < a.first_failure) {
    r.first_failure = b.first_failure;
    r.failure_value = b.failure_value;
  } else {
    r.first_failure = a.first_failure;
    r.failure_value = a.failure_value;
  }
  return r;
}

/// The point of sample `index`: x_j = a_j + (b_j - a_j) u_j with the stream's first D uniforms.
template <int D>
MCUBES_HOST_DEVICE inline void plain_mc_point(const plain_mc_params<D>& p, std::uint64_t index, point<D>& x) {
  double u[D];
  sample_stream(p.seed, stream_id::plain_mc, 0, index).fill(u);
  for (int j = 0; j < D; ++j) x[j] = p.lower[j] + p.width[j] * u[j];
}

namespace detail {
/// True if x is finite (no NaN, no +-Inf); host and device.
MCUBES_HOST_DEVICE inline bool finite(double x) { return x - x == 0; }

/// True if the shifted sums of n values give finite moments: s1, s2, the mean shift + s1/n and the
/// product s1 (s1/n) of moments::from_shifted_sums (whose M2 would otherwise be clamped to 0).
MCUBES_HOST_DEVICE inline bool sums_finite(double shift, double s1, double s2, double n) {
  return finite(s1) && finite(s2) && finite(shift + s1 / n) && finite(s1 * (s1 / n));
}

/// The first sample of [begin, end) after which the running shifted sums of plain_mc_chunk are not
/// sums_finite, and f there (`value`). Only called for a chunk whose sums overflowed; returns
/// end - 1 if the running sums never fail (they overflow in the final combination only).
template <int D, class F>
MCUBES_HOST_DEVICE std::uint64_t plain_mc_first_overflow(const F& f, const plain_mc_params<D>& p, std::uint64_t begin,
                                                         std::uint64_t end, double& value);
}  // namespace detail

/// Computes chunk `chunk` serially in sample order. A non-finite value is recorded (first index)
/// and counted as 0 so the sums stay finite; if the chunk's sums overflow, the first sample at
/// which they do is recorded instead of the moments. The caller raises both.
template <int D, class F>
MCUBES_HOST_DEVICE inline mc_partial plain_mc_chunk(const F& f, const plain_mc_params<D>& p, std::uint64_t chunk) {
  mc_partial out;
  const std::uint64_t begin = chunk * p.chunk_samples;
  std::uint64_t end = begin + p.chunk_samples;
  if (end > p.samples) end = p.samples;
  if (begin >= end) return out;
  double shift = 0, s1 = 0, s2 = 0;
  for (std::uint64_t k = begin; k < end; ++k) {
    point<D> x;
    plain_mc_point<D>(p, k, x);
    double v = f(x);
    if (!(v - v == 0)) {  // NaN or +-Inf
      if (k < out.first_failure) {
        out.first_failure = k;
        out.failure_value = v;
      }
      v = 0;
    }
    if (v != 0) ++out.n_nonzero;
    if (k == begin) shift = v;
    const double d = v - shift;
    s1 += d;
    s2 += d * d;
  }
  if (!detail::sums_finite(shift, s1, s2, static_cast<double>(end - begin))) {  // overflow: find where
    double v = 0;
    const std::uint64_t k = detail::plain_mc_first_overflow<D>(f, p, begin, end, v);
    if (k < out.first_failure) {
      out.first_failure = k;
      out.failure_value = v;
    }
    return out;
  }
  out.m = moments::from_shifted_sums(end - begin, shift, s1, s2);
  return out;
}

namespace detail {

template <int D, class F>
MCUBES_HOST_DEVICE std::uint64_t plain_mc_first_overflow(const F& f, const plain_mc_params<D>& p, std::uint64_t begin,
                                                         std::uint64_t end, double& value) {
  double shift = 0, s1 = 0, s2 = 0;
  for (std::uint64_t k = begin; k < end; ++k) {
    point<D> x;
    plain_mc_point<D>(p, k, x);
    double v = f(x);
    value = v;
    if (!(v - v == 0)) v = 0;
    if (k == begin) shift = v;
    const double d = v - shift;
    s1 += d;
    s2 += d * d;
    if (!sums_finite(shift, s1, s2, static_cast<double>(k - begin + 1))) return k;
  }
  return end - 1;
}

template <int D>
plain_mc_params<D> make_plain_mc_params(const region<D>& reg, const plain_mc_options& opt) {
  plain_mc_params<D> p{};
  for (int j = 0; j < D; ++j) {
    p.lower[j] = reg.lower()[j];
    p.width[j] = reg.width(j);
  }
  const plain_mc_chunking c = make_plain_mc_chunking(opt.samples);
  p.samples = opt.samples;
  p.chunk_samples = c.chunk_samples;
  p.n_chunks = c.n_chunks;
  p.seed = opt.seed;
  return p;
}

/// x with 6 significant digits (for messages).
inline std::string plain_mc_format(double x) {
  std::ostringstream s;
  s.precision(6);
  s << x;
  return s.str();
}

/// Turns the merged partial of all chunks into the result (status: file comment).
/// @throws non_finite_integrand (first sample in index order, with its point); numerical_error if
///         a chunk's sums overflow (the first such sample, with its point and value), or the merged
///         moments, the estimate or the error overflow.
template <int D, class F>
result plain_mc_finish(const F& f, const mc_partial& total, const plain_mc_params<D>& p, const region<D>& reg,
                       const plain_mc_options& opt, const std::string& backend, double seconds) {
  if (total.first_failure != ~std::uint64_t(0)) {
    point<D> x;
    plain_mc_point<D>(p, total.first_failure, x);
    std::vector<double> xs(x.x, x.x + D);
    if (!std::isfinite(total.failure_value)) throw_non_finite<D>(f, 0, total.first_failure, x, total.failure_value);
    std::ostringstream m;
    m.precision(17);
    m << "plain Monte Carlo: the sums of the values of f (sum of f - f0 or of (f - f0)^2 over a chunk of "
      << p.chunk_samples << " samples, f0 its first value) overflow the double range at sample " << total.first_failure
      << ", x = " << point_text(xs) << ", f(x) = " << total.failure_value << "; rescale the integrand";
    throw numerical_error(m.str());
  }
  const moments& mo = total.m;
  if (!std::isfinite(mo.mean) || !std::isfinite(mo.m2))
    throw numerical_error("plain Monte Carlo: merging the moments of the chunks overflows the double range (mean = " +
                          plain_mc_format(mo.mean) + ", M2 = " + plain_mc_format(mo.m2) +
                          "): the values of f are too large; rescale the integrand");
  const double n = static_cast<double>(p.samples);
  const double v = reg.volume();
  result r;
  r.estimate = v * mo.mean;
  r.error = v * std::sqrt(mo.m2 / (n * (n - 1.0)));
  if (!std::isfinite(r.estimate))
    throw numerical_error("plain Monte Carlo: the estimate V mean(f) = " + plain_mc_format(v) + " * " +
                          plain_mc_format(mo.mean) + " overflows the double range; rescale the integrand");
  if (!std::isfinite(r.error))
    throw numerical_error("plain Monte Carlo: the error V sqrt(M2 / (N (N - 1))) with V = " + plain_mc_format(v) +
                          ", M2 = " + plain_mc_format(mo.m2) + " overflows the double range; rescale the integrand");
  r.n_eval = p.samples;
  r.seed = opt.seed;
  r.iterations = 1;
  r.accumulated = 1;
  bool underflow = false;
  if (total.n_nonzero == 0) {  // every sample was 0: no information, never reported as converged
    r.status = status::not_resolved;
    r.error = std::numeric_limits<double>::infinity();
    r.accumulated = 0;
  } else {
    const double rms = std::hypot(mo.mean, std::sqrt(mo.m2 / n));  // no square of a tiny mean
    if (std::fmin(rms, v * rms) < underflow_scale) {
      underflow = true;
      r.status = status::underflow;
      r.error = std::numeric_limits<double>::infinity();
      r.accumulated = 0;
    } else {
      const double tol = std::fmax(opt.abs_tol, opt.rel_tol * std::fabs(r.estimate));
      r.status = r.error <= tol ? status::converged : status::not_converged;
    }
  }
  r.backend = backend;
  r.seconds = seconds;
  r.options.rel_tol = opt.rel_tol;
  r.options.abs_tol = opt.abs_tol;
  r.options.calls_per_iteration = opt.samples;
  r.options.max_iterations = 1;
  r.options.seed = opt.seed;
  r.options.threads = opt.threads;
  r.options.backend = opt.backend;
  r.options.cuda_threads_per_block = opt.cuda_threads_per_block;
  iteration_record rec;
  rec.estimate = r.estimate;
  rec.error = r.error;
  rec.accumulated = r.accumulated == 1;
  rec.underflow = underflow;
  rec.weighted_estimate = r.estimate;
  rec.weighted_error = r.error;
  rec.n_eval = p.samples;
  rec.n_nonzero = total.n_nonzero;
  rec.seconds = seconds;
  r.records.push_back(rec);
  return r;
}

}  // namespace detail

/// The chunk operation of plain Monte Carlo: chunk c's partial (plain_mc_chunk). Trivially
/// copyable when F is; host and device.
template <int D, class F>
struct plain_mc_chunk_fn {
  F f;
  plain_mc_params<D> p;
  MCUBES_NV_EXEC_CHECK_DISABLE
  MCUBES_HOST_DEVICE mc_partial operator()(std::uint64_t chunk) const { return plain_mc_chunk<D>(f, p, chunk); }
};

namespace detail {
/// The values of one array call handed back, one per call, to a chunk function that calls a
/// one-point integrand in sample order: the k-th call (k from 0) returns values[k mod n] (mod n:
/// plain_mc_first_overflow goes over its chunk a second time). The point is not read.
template <int D>
struct replay_values {
  const double* values;
  std::uint64_t n;
  std::uint64_t* next;
  double operator()(const point<D>&) const {
    const double v = values[*next % n];
    ++*next;
    return v;
  }
};
}  // namespace detail

/// The chunk operation of plain Monte Carlo for an array integrand (integrand.hpp), over aligned
/// groups of `group` chunks (array_group_chunks): the group's points in sample order, one array
/// call, then each chunk's partial by plain_mc_chunk over those values and the group's partial by
/// the fixed tree of width `group`: a node of the tree over all chunks, so the result is bitwise
/// that of the one-point calls. Host only.
template <int D, class F>
struct plain_mc_group_fn {
  F f;
  plain_mc_params<D> p;
  std::uint64_t group;
  mc_partial operator()(std::uint64_t g) const {
    const std::uint64_t c0 = g * group, c1 = c0 + group < p.n_chunks ? c0 + group : p.n_chunks;
    const std::uint64_t s0 = c0 * p.chunk_samples, s1 = c1 * p.chunk_samples < p.samples ? c1 * p.chunk_samples : p.samples;
    std::vector<point<D>> x(s1 - s0);
    std::vector<double> v(s1 - s0);
    for (std::uint64_t k = s0; k < s1; ++k) plain_mc_point<D>(p, k, x[k - s0]);
    f(x.data()->x, static_cast<std::size_t>(s1 - s0), v.data());
    std::vector<mc_partial> parts(c1 - c0);
    for (std::uint64_t c = c0; c < c1; ++c) {
      const std::uint64_t b = c * p.chunk_samples, e = b + p.chunk_samples < s1 ? b + p.chunk_samples : s1;
      std::uint64_t next = 0;
      parts[c - c0] = plain_mc_chunk<D>(detail::replay_values<D>{v.data() + (b - s0), e - b, &next}, p, c);
    }
    return fixed_tree_reduce(parts.data(), c1 - c0, group, merge_partials{});
  }
};

/// Plain Monte Carlo of f over `reg` on `backend` (any backend of backend/backend.hpp: its reduce
/// over problem-defined chunks); see the file comment for the formula, the status and the
/// determinism contract. opt's execution fields are those the backend was made with.
/// result.seconds: wall time on the backend (backend creation excluded).
/// @throws invalid_input for bad options; non_finite_integrand if f returns NaN or +-Inf (the first
///         sample in index order, with its point); numerical_error on overflow (file comment);
///         cuda_error if a CUDA call fails.
template <int D, class F, class Backend>
result plain_mc_with(const F& f, const region<D>& reg, const plain_mc_options& opt, Backend& backend) {
  static_assert(D >= 1, "dimension must be at least 1");
  validate(opt);
  const auto t0 = std::chrono::steady_clock::now();
  const plain_mc_params<D> p = detail::make_plain_mc_params<D>(reg, opt);
  mc_partial total;
  if constexpr (is_array_integrand_v<F, D>) {  // groups of chunks, one array call each (same bits)
    const std::uint64_t group = array_group_chunks(p.n_chunks, p.chunk_samples);
    total = backend.template reduce<mc_partial>((p.n_chunks + group - 1) / group, plain_mc_group_fn<D, F>{f, p, group},
                                                merge_partials{});
  } else {
    total = backend.template reduce<mc_partial>(p.n_chunks, plain_mc_chunk_fn<D, F>{f, p}, merge_partials{});
  }
  const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  return detail::plain_mc_finish<D>(f, total, p, reg, opt, backend.name(), seconds);
}

}  // namespace mcubes

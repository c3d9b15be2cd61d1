#pragma once
/// @file algorithm/midpoint.hpp
/// The composite midpoint rule: in 1-D mcubes::midpoint(f, a, b, N, options), and its tensor
/// product over a low-dimensional box mcubes::midpoint<D>(f, region, n_per_axis, options).
///
/// With n points per axis, h_j = (b_j - a_j) / n and M = n^D points,
///   estimate = (V / M) sum_{i in [0,n)^D} f(a_1 + (i_1 + 1/2) h_1, ..., a_D + (i_D + 1/2) h_D),
/// whose truncation error in 1-D is -(b - a) h^2 f''(xi) / 24 (e.g. 8.3e-14 for
/// int_0^1 4/(1+x^2) dx = pi at N = 1e6, and 8e-20 at N = 1e9). Points are numbered with axis 0
/// fastest (linear index i = i_1 + n i_2 + n^2 i_3 + ...); M <= 2^52 so every i + 1/2 is exact.
///
/// Rounding: each chunk sums its points in blocks of 8 (pairwise inside the block) added to a
/// Neumaier compensated sum; chunk sums are double-doubles merged over the fixed pairwise tree with
/// TwoSum (core/tree_reduce.hpp). The summation thus adds about one rounding to the sum whatever N
/// (1e12 points included); what remains is the rounding of the individual f values (independent,
/// averaging out) and of the final scaling by V / M. E.g. |error| <= 2e-15 for pi at N = 1e9.
///
/// Determinism contract (run_to_run, thread-count and block-size invariant): the M points are cut
/// into problem-defined chunks (make_midpoint_chunking: at most 2^20 chunks of at least 64
/// consecutive indices, depending on M only), each summed serially by one thread; the chunk sums
/// are merged over the fixed tree (backend/cpu_tiles.hpp, or CUDA blocks of any power-of-two
/// size). Bitwise identical for any number of CPU threads and any CUDA threads-per-block. CPU and
/// CUDA results agree to rounding, not bitwise (nvcc contracts a*b+c into FMA).
///
/// Error estimate (a heuristic for smooth integrands). With n divisible by an odd k, the midpoint
/// of every aligned block of k x ... x k cells is a point of the rule (fine index i with
/// i mod k = (k-1)/2 on every axis), so the same evaluations also give the rule M_{n/k} with n/k
/// points per axis. Its truncation error is k^2 times that of M_n for a twice continuously
/// differentiable f (both are sum_j c_j h_j^2 + O(h^4)), hence
///   error = |M_n - M_{n/k}| / (k^2 - 1) + 4 eps V mean|f|,
/// k the smallest of 3, 5, 7 that divides n (1e6 and 1e9 points: k = 5). The first term is the
/// truncation error; the second the rounding level of the estimate (as Vegas's floor 4 eps |I|;
/// mean|f| keeps it honest when f changes sign and the estimate cancels), added since both errors
/// are present (e.g. pi at N = 1e6: 8.33e-14 + 2.8e-15 against a true error of 8.39e-14). For a
/// kink, a discontinuity or a singularity the difference may say little about the true error.
/// Status (result.hpp):
///  - converged: error <= max(abs_tol, rel_tol |estimate|); not_converged otherwise;
///  - not_converged with error +Inf: no error estimate, because n is not divisible by 3, 5 or 7;
///  - not_resolved: f was 0 at every point (estimate 0, error +Inf: nothing is known);
///  - underflow: non-zero values were seen, but V mean|f| is below underflow_scale (2^-460, the
///    threshold of Vegas and plain Monte Carlo); the estimate is reported, the error is +Inf.
/// The estimate and the error are never NaN: a sum that overflows throws numerical_error.

#include <chrono>
#include <cmath>
#include <cstdint>
#include <limits>
#include <string>
#include <type_traits>
#include <vector>

#include "../core/stratification.hpp"
#include "../core/fixed_tree.hpp"
#include "../core/sample_diagnosis.hpp"
#include "../core/tree_reduce.hpp"
#include "../error.hpp"
#include "../integrand.hpp"
#include "../options.hpp"
#include "../point.hpp"
#include "../region.hpp"
#include "../result.hpp"

namespace mcubes {

/// Largest number of points of the midpoint rule (2^52 = 4.5e15): every index + 1/2 is an exact
/// double.
inline constexpr std::uint64_t midpoint_max_points = std::uint64_t(1) << 52;

/// Options of mcubes::midpoint.
struct midpoint_options : execution {
  double rel_tol = 1e-3;                     ///< converged when error <= max(abs_tol, rel_tol |estimate|); finite, >= 0
  double abs_tol = 0.0;                      ///< absolute tolerance (same test); finite, >= 0; rel_tol or abs_tol > 0
};

/// @throws invalid_input naming the first offending option.
inline void validate(const midpoint_options& o) {
  validate(static_cast<const execution&>(o));
  validate_tolerances(o.rel_tol, o.abs_tol);
}

/// The ratio k of the embedded coarse rule for n points per axis (file comment): the smallest of
/// 3, 5, 7 that divides n, or 0 when none does (no error estimate).
inline std::uint64_t midpoint_coarse_ratio(std::uint64_t n_per_axis) {
  for (std::uint64_t k : {3u, 5u, 7u})
    if (n_per_axis % k == 0) return k;
  return 0;
}

/// Number of points n^D of a D-dimensional rule with n points per axis.
/// @throws invalid_input if n = 0 or n^D > 2^52.
inline std::uint64_t midpoint_points(int dim, std::uint64_t n_per_axis) {
  MCUBES_EXPECTS(n_per_axis >= 1, "the midpoint rule needs at least 1 point per axis, got ", n_per_axis);
  std::uint64_t m = 1;
  for (int j = 0; j < dim; ++j) {
    MCUBES_EXPECTS(m <= midpoint_max_points / n_per_axis, "the midpoint rule takes at most 2^52 points in all; ",
                   n_per_axis, " per axis in ", dim, " dimensions is more");
    m *= n_per_axis;
  }
  return m;
}

/// The problem-defined chunking of M points: chunk c holds indices [c*chunk_points,
/// min(M, (c+1)*chunk_points)), chunk_points = max(64, ceil(M / 2^20)).
struct midpoint_chunking {
  std::uint64_t chunk_points = 0;
  std::uint64_t n_chunks = 0;
};

inline midpoint_chunking make_midpoint_chunking(std::uint64_t points) {
  midpoint_chunking c;
  c.chunk_points = (points + max_chunks - 1) / max_chunks;
  if (c.chunk_points < 64) c.chunk_points = 64;
  c.n_chunks = (points + c.chunk_points - 1) / c.chunk_points;
  return c;
}

/// Everything a thread needs to sum a chunk. Trivially copyable (kernel parameter).
template <int D>
struct midpoint_params {
  double lower[D];             ///< a_j
  double h[D];                 ///< h_j = (b_j - a_j) / n
  std::uint64_t n_axis = 0;    ///< n, points per axis
  std::uint64_t points = 0;    ///< M = n^D
  std::uint64_t chunk_points = 0;
  std::uint64_t n_chunks = 0;
  std::uint64_t coarse_ratio = 0;    ///< k of the embedded coarse rule (3, 5 or 7), 0: none
  std::uint64_t coarse_mid = 0;      ///< (k - 1) / 2: fine index i is on the coarse rule when i mod k = coarse_mid
  std::uint64_t coarse_pattern = 0;  ///< bit i (0 <= i < 64) set when i mod k = coarse_mid
  unsigned char coarse_first[8] = {};  ///< [phase]: first i >= 0 with (phase + i) mod k = coarse_mid (host path)
};

/// Partial sums of a set of chunks and their first (smallest index) non-finite value. The identity
/// is the default value (every field merges with an exact identity). 48 bytes: the CUDA block tree
/// keeps 1024 of them in 48 KiB of static shared memory (backend/cuda/launch.cuh).
struct midpoint_partial {
  dd_sum sum;                   ///< sum of f over the points (double-double)
  double coarse = 0;            ///< sum of f over the points of the embedded coarse rule (0 if none)
  double abs_sum = 0;           ///< sum of |f| (the rounding level of the error)
  std::uint64_t n_nonzero = 0;  ///< points where f != 0
  std::uint64_t first_non_finite = ~std::uint64_t(0);  ///< midpoint_failure_key of the first non-finite value
};
static_assert(sizeof(midpoint_partial) <= 48, "midpoint_partial must fit 1024 times in 48 KiB of shared memory");

/// The key of a non-finite value v at point `index`: 4 index + (0 for NaN, 1 for +Inf, 2 for -Inf),
/// so that the smallest key is the smallest index (index < 2^52).
MCUBES_HOST_DEVICE inline std::uint64_t midpoint_failure_key(std::uint64_t index, double v) {
  return 4 * index + (v != v ? 0u : (v > 0 ? 1u : 2u));
}

/// The value class of a failure key: NaN, +Inf or -Inf.
inline double midpoint_failure_value(std::uint64_t key) {
  switch (key & 3) {
    case 1: return std::numeric_limits<double>::infinity();
    case 2: return -std::numeric_limits<double>::infinity();
    default: return std::numeric_limits<double>::quiet_NaN();
  }
}

/// a + b with an exact identity 0 on either side (x + 0 is x, also for x = -0). Additions only:
/// the same bits on host and device.
MCUBES_HOST_DEVICE inline double midpoint_add(double a, double b) { return b == 0 ? a : (a == 0 ? b : a + b); }

MCUBES_HOST_DEVICE inline midpoint_partial merge(const midpoint_partial& a, const midpoint_partial& b) {
  midpoint_partial r;
  r.sum = merge(a.sum, b.sum);
  r.coarse = midpoint_add(a.coarse, b.coarse);
  r.abs_sum = midpoint_add(a.abs_sum, b.abs_sum);
  r.n_nonzero = a.n_nonzero + b.n_nonzero;
  r.first_non_finite = b.first_non_finite < a.first_non_finite ? b.first_non_finite : a.first_non_finite;
  return r;
}

/// The point of linear index i (axis 0 fastest).
template <int D>
MCUBES_HOST_DEVICE inline void midpoint_point(const midpoint_params<D>& p, std::uint64_t index, point<D>& x) {
  for (int j = 0; j < D; ++j) {
    const std::uint64_t c = index % p.n_axis;
    index /= p.n_axis;
    x[j] = p.lower[j] + (static_cast<double>(c) + 0.5) * p.h[j];
  }
}

namespace detail {
/// True when every index c[1..D) is on the coarse rule (c mod k = mid): the row along axis 0 holds
/// coarse points.
template <int D>
MCUBES_HOST_DEVICE inline bool midpoint_coarse_row(const midpoint_params<D>& p, const std::uint64_t* c) {
  if (p.coarse_ratio == 0) return false;
  for (int j = 1; j < D; ++j)
    if (c[j] % p.coarse_ratio != p.coarse_mid) return false;
  return true;
}
}  // namespace detail

/// Sums chunk `chunk` serially: runs along axis 0 (the other coordinates fixed), in blocks of 8
/// values summed pairwise and added to a Neumaier sum; the values on the coarse rule are summed
/// per block too (a Neumaier sum of block sums), and |f| and the non-zero values are counted. A
/// non-finite value ends the chunk and is recorded (the caller raises it).
template <int D, class F>
MCUBES_HOST_DEVICE inline midpoint_partial midpoint_chunk(const F& f, const midpoint_params<D>& p, std::uint64_t chunk) {
  midpoint_partial out;
  std::uint64_t idx = chunk * p.chunk_points;
  std::uint64_t end = idx + p.chunk_points;
  if (end > p.points) end = p.points;
  if (idx >= end) return out;
  // multi-index of the first point
  std::uint64_t c[D];
  point<D> x;
  {
    std::uint64_t r = idx;
    for (int j = 0; j < D; ++j) {
      c[j] = r % p.n_axis;
      r /= p.n_axis;
      x[j] = p.lower[j] + (static_cast<double>(c[j]) + 0.5) * p.h[j];
    }
  }
  compensated_sum acc, acc_coarse;
  double abs_acc = 0;
  std::uint64_t nonzero = 0;
  const std::uint64_t k = p.coarse_ratio;
  const std::uint64_t step8 = k ? 8 % k : 0;
  bool coarse_row = detail::midpoint_coarse_row<D>(p, c);
  const double a0 = p.lower[0], h0 = p.h[0];
  while (idx < end) {
    std::uint64_t run = p.n_axis - c[0];
    if (run > end - idx) run = end - idx;
    double t = static_cast<double>(c[0]) + 0.5;  // exact: c[0] < 2^52
    std::uint64_t phase = coarse_row ? c[0] % k : 0;  // index mod k of the next value
    std::uint64_t q8 = 0;
    for (; q8 + 8 <= run; q8 += 8, t += 8.0) {
      double v[8];
      for (int q = 0; q < 8; ++q) {
        x[0] = a0 + (t + q) * h0;
        v[q] = f(x);
      }
      const double s = ((v[0] + v[1]) + (v[2] + v[3])) + ((v[4] + v[5]) + (v[6] + v[7]));
      if (!(s - s == 0)) {  // some value is NaN or +-Inf (or the 8 finite values overflow)
        for (int q = 0; q < 8; ++q)
          if (!(v[q] - v[q] == 0)) {
            out.first_non_finite = midpoint_failure_key(idx + q8 + q, v[q]);
            return out;
          }
      }
      acc.add(s);
      double a[8];
      for (int q = 0; q < 8; ++q) a[q] = std::fabs(v[q]);
      abs_acc += ((a[0] + a[1]) + (a[2] + a[3])) + ((a[4] + a[5]) + (a[6] + a[7]));
#if defined(__CUDA_ARCH__)
      for (int q = 0; q < 8; ++q) nonzero += v[q] != 0 ? 1u : 0u;  // no divergence (faster on the H100)
#else
      // non-zero values: all 8 unless the smallest |v| is 0 (rare: then counted one by one)
      const auto lesser = [](double x, double y) { return y < x ? y : x; };  // finite here
      const double least = lesser(lesser(lesser(a[0], a[1]), lesser(a[2], a[3])), lesser(lesser(a[4], a[5]), lesser(a[6], a[7])));
      if (least > 0) {
        nonzero += 8;
      } else {
        for (int q = 0; q < 8; ++q) nonzero += v[q] != 0 ? 1u : 0u;
      }
#endif
      if (coarse_row) {
#if defined(__CUDA_ARCH__)
        // selects (no divergence between the threads of a warp, whose phases differ)
        const std::uint64_t m = p.coarse_pattern >> phase;  // bit q: value q is on the coarse rule
        const double cs = (((m & 1) ? v[0] : 0.0) + ((m & 2) ? v[1] : 0.0)) + (((m & 4) ? v[2] : 0.0) + ((m & 8) ? v[3] : 0.0)) +
                          ((((m & 16) ? v[4] : 0.0) + ((m & 32) ? v[5] : 0.0)) + (((m & 64) ? v[6] : 0.0) + ((m & 128) ? v[7] : 0.0)));
#else
        // the (at most 3) coarse values of the block by index: fewer instructions on a CPU
        const unsigned o = p.coarse_first[phase];
        double cs = v[o];
        if (o + k < 8) {
          cs += v[o + k];
          if (o + 2 * k < 8) cs += v[o + 2 * k];
        }
#endif
        acc_coarse.add(cs);
        phase += step8;
        if (phase >= k) phase -= k;
      }
    }
    for (std::uint64_t q = q8; q < run; ++q, t += 1.0) {
      x[0] = a0 + t * h0;
      const double v = f(x);
      if (!(v - v == 0)) {
        out.first_non_finite = midpoint_failure_key(idx + q, v);
        return out;
      }
      acc.add(v);
      abs_acc += std::fabs(v);
      nonzero += v != 0 ? 1u : 0u;
      if (coarse_row) {
        if (phase == p.coarse_mid) acc_coarse.add(v);
        if (++phase == k) phase = 0;
      }
    }
    idx += run;
    c[0] += run;
    if (c[0] == p.n_axis && idx < end) {  // odometer: carry into the slower axes
      c[0] = 0;
      for (int j = 1; j < D; ++j) {
        if (++c[j] < p.n_axis) {
          x[j] = p.lower[j] + (static_cast<double>(c[j]) + 0.5) * p.h[j];
          break;
        }
        c[j] = 0;
        x[j] = p.lower[j] + 0.5 * p.h[j];
      }
      coarse_row = detail::midpoint_coarse_row<D>(p, c);
    }
  }
  out.sum = acc.result();
  out.coarse = acc_coarse.result().value();
  out.abs_sum = abs_acc;
  out.n_nonzero = nonzero;
  return out;
}

namespace detail {

/// Adapts a 1-D integrand taking a double to the point<1> interface.
template <class F>
struct scalar_integrand {
  F f;
  MCUBES_HOST_DEVICE double operator()(const point<1>& x) const { return f(x[0]); }
};

/// f itself if callable with point<1>, else scalar_integrand<F>{f}.
template <class F>
auto as_point_integrand(const F& f) {
  if constexpr (std::is_invocable_v<const F&, const point<1>&>)
    return f;
  else
    return scalar_integrand<F>{f};
}

template <int D>
midpoint_params<D> make_midpoint_params(const region<D>& reg, std::uint64_t n_per_axis) {
  midpoint_params<D> p{};
  p.points = midpoint_points(D, n_per_axis);
  p.n_axis = n_per_axis;
  for (int j = 0; j < D; ++j) {
    p.lower[j] = reg.lower()[j];
    p.h[j] = reg.width(j) / static_cast<double>(n_per_axis);
  }
  const midpoint_chunking c = make_midpoint_chunking(p.points);
  p.chunk_points = c.chunk_points;
  p.n_chunks = c.n_chunks;
  p.coarse_ratio = midpoint_coarse_ratio(n_per_axis);
  if (p.coarse_ratio) {
    p.coarse_mid = (p.coarse_ratio - 1) / 2;
    for (std::uint64_t i = 0; i < 64; ++i)
      if (i % p.coarse_ratio == p.coarse_mid) p.coarse_pattern |= std::uint64_t(1) << i;
    for (std::uint64_t phase = 0; phase < p.coarse_ratio; ++phase)
      p.coarse_first[phase] = static_cast<unsigned char>((p.coarse_mid + p.coarse_ratio - phase) % p.coarse_ratio);
  }
  return p;
}

/// (s V) / m, or s (V / m) when s V overflows but the quotient does not.
inline double midpoint_scale(double s, double volume, double m) {
  const double r = (s * volume) / m;
  if (!std::isfinite(r) && std::isfinite(s)) return s * (volume / m);
  return r;
}

/// Turns the merged partial into the result: estimate = (S V) / M, error and status as in the
/// file comment.
/// @throws non_finite_integrand (first point in index order), numerical_error on overflow.
template <int D, class F>
result midpoint_finish(const F& f, const midpoint_partial& total, const midpoint_params<D>& p, const region<D>& reg,
                       const midpoint_options& opt, const std::string& backend, double seconds) {
  if (total.first_non_finite != ~std::uint64_t(0)) {
    const std::uint64_t index = total.first_non_finite / 4;
    point<D> x;
    midpoint_point<D>(p, index, x);
    throw_non_finite<D>(f, 0, index, x, midpoint_failure_value(total.first_non_finite));
  }
  const double volume = reg.volume();
  const double m = static_cast<double>(p.points);  // exact: M <= 2^52
  const double estimate = midpoint_scale(total.sum.value(), volume, m);
  if (!std::isfinite(estimate))
    throw numerical_error("midpoint rule: the sum of the integrand values is not finite (overflow)");
  const double scale = midpoint_scale(total.abs_sum, volume, m);  // V mean|f|
  if (!std::isfinite(scale))
    throw numerical_error("midpoint rule: the sum of |f| over the points (the rounding level of the error) overflows "
                          "the double range; rescale the integrand");
  constexpr double inf = std::numeric_limits<double>::infinity();
  result r;
  r.estimate = estimate;
  r.n_eval = p.points;
  r.iterations = 1;
  r.accumulated = 1;
  bool underflow = false;
  if (total.n_nonzero == 0) {  // f = 0 at every point: nothing is known
    r.status = status::not_resolved;
    r.error = inf;
    r.accumulated = 0;
  } else if (scale < underflow_scale) {
    underflow = true;
    r.status = status::underflow;
    r.error = inf;
    r.accumulated = 0;
  } else if (p.coarse_ratio == 0) {  // no embedded coarse rule: no error estimate
    r.status = status::not_converged;
    r.error = inf;
  } else {
    const double k = static_cast<double>(p.coarse_ratio);
    double mc = 1;  // points of the coarse rule, (n/k)^D: exact
    for (int j = 0; j < D; ++j) mc *= static_cast<double>(p.n_axis / p.coarse_ratio);
    const double coarse = midpoint_scale(total.coarse, volume, mc);
    const double richardson = std::fabs(estimate - coarse) / (k * k - 1);
    if (!std::isfinite(coarse) || !std::isfinite(richardson))
      throw numerical_error("midpoint rule: the coarse rule's estimate or its difference to the estimate overflows "
                            "the double range; rescale the integrand");
    r.error = richardson + 4 * std::numeric_limits<double>::epsilon() * scale;
    const double tol = std::fmax(opt.abs_tol, opt.rel_tol * std::fabs(estimate));
    r.status = r.error <= tol ? status::converged : status::not_converged;
  }
  r.backend = backend;
  r.seconds = seconds;
  r.options.rel_tol = opt.rel_tol;
  r.options.abs_tol = opt.abs_tol;
  r.options.calls_per_iteration = p.points;
  r.options.max_iterations = 1;
  r.options.threads = opt.threads;
  r.options.backend = opt.backend;
  r.options.cuda_threads_per_block = opt.cuda_threads_per_block;
  iteration_record rec;
  rec.estimate = estimate;
  rec.error = r.error;
  rec.accumulated = r.accumulated == 1;
  rec.underflow = underflow;
  rec.weighted_estimate = estimate;
  rec.weighted_error = r.error;
  rec.n_eval = p.points;
  rec.n_nonzero = total.n_nonzero;
  rec.seconds = seconds;
  r.records.push_back(rec);
  return r;
}

}  // namespace detail

/// The chunk operation of the midpoint rule: chunk c's partial (midpoint_chunk). Trivially copyable
/// when F is; host and device.
template <int D, class F>
struct midpoint_chunk_fn {
  F f;
  midpoint_params<D> p;
  MCUBES_NV_EXEC_CHECK_DISABLE
  MCUBES_HOST_DEVICE midpoint_partial operator()(std::uint64_t chunk) const { return midpoint_chunk<D>(f, p, chunk); }
};

namespace detail {
/// The values of one array call handed back in order to midpoint_chunk (which calls f once per
/// point, in index order): the k-th call returns values[k]. The point is not read.
template <int D>
struct midpoint_replay {
  const double* values;
  std::uint64_t* next;
  double operator()(const point<D>&) const { return values[(*next)++]; }
};
}  // namespace detail

/// The chunk operation of the midpoint rule for an array integrand (integrand.hpp), over aligned
/// groups of `group` chunks (array_group_chunks): the group's points in index order (those of
/// midpoint_point, by an odometer), one array call, each chunk's partial by midpoint_chunk over
/// those values, and the group's partial by the fixed tree of width `group`: bitwise the result of
/// the one-point calls. Host only.
template <int D, class F>
struct midpoint_group_fn {
  F f;
  midpoint_params<D> p;
  std::uint64_t group;
  midpoint_partial operator()(std::uint64_t g) const {
    const std::uint64_t c0 = g * group, c1 = c0 + group < p.n_chunks ? c0 + group : p.n_chunks;
    const std::uint64_t i0 = c0 * p.chunk_points, i1 = c1 * p.chunk_points < p.points ? c1 * p.chunk_points : p.points;
    std::vector<point<D>> x(i1 - i0);
    std::vector<double> v(i1 - i0);
    std::uint64_t c[D];
    {
      std::uint64_t r = i0;
      for (int j = 0; j < D; ++j) c[j] = r % p.n_axis, r /= p.n_axis;
    }
    for (std::uint64_t i = i0; i < i1; ++i) {
      point<D>& xi = x[i - i0];
      for (int j = 0; j < D; ++j) xi[j] = p.lower[j] + (static_cast<double>(c[j]) + 0.5) * p.h[j];
      for (int j = 0; j < D; ++j) {  // odometer, axis 0 fastest
        if (++c[j] < p.n_axis) break;
        c[j] = 0;
      }
    }
    f(x.data()->x, static_cast<std::size_t>(i1 - i0), v.data());
    std::vector<midpoint_partial> parts(c1 - c0);
    for (std::uint64_t ch = c0; ch < c1; ++ch) {
      std::uint64_t next = 0;
      parts[ch - c0] = midpoint_chunk<D>(detail::midpoint_replay<D>{v.data() + (ch * p.chunk_points - i0), &next}, p, ch);
    }
    return fixed_tree_reduce(parts.data(), c1 - c0, group, merge_partials{});
  }
};

/// The tensor-product midpoint rule with n_per_axis points per axis over `reg` on `backend` (any
/// backend of backend/backend.hpp: its reduce over problem-defined chunks); formula, rounding,
/// error estimate, status and determinism: file comment. result.seconds: wall time on the backend.
/// @throws invalid_input for bad options or n_per_axis (0, or n^D > 2^52); non_finite_integrand
///         if f returns NaN or +-Inf (the first point in index order); numerical_error on overflow;
///         cuda_error if a CUDA call fails.
template <int D, class F, class Backend>
result midpoint_with(const F& f, const region<D>& reg, std::uint64_t n_per_axis, const midpoint_options& opt,
                     Backend& backend) {
  static_assert(D >= 1, "dimension must be at least 1");
  validate(opt);
  const midpoint_params<D> p = detail::make_midpoint_params<D>(reg, n_per_axis);
  const auto t0 = std::chrono::steady_clock::now();
  midpoint_partial total;
  if constexpr (is_array_integrand_v<F, D>) {  // groups of chunks, one array call each (same bits)
    const std::uint64_t group = array_group_chunks(p.n_chunks, p.chunk_points);
    total = backend.template reduce<midpoint_partial>((p.n_chunks + group - 1) / group,
                                                      midpoint_group_fn<D, F>{f, p, group}, merge_partials{});
  } else {
    total = backend.template reduce<midpoint_partial>(p.n_chunks, midpoint_chunk_fn<D, F>{f, p}, merge_partials{});
  }
  const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  return detail::midpoint_finish<D>(f, total, p, reg, opt, backend.name(), seconds);
}

/// The region and the point integrand of the 1-D rule on [a, b] with N points (mcubes::midpoint's
/// 1-D form): checks a, b and N. @throws invalid_input if a or b is not finite, a >= b, N = 0 or
/// N > 2^52.
inline region<1> midpoint_interval(double a, double b, std::uint64_t n) {
  MCUBES_EXPECTS(n >= 1, "the midpoint rule needs at least 1 point, got ", n);
  MCUBES_EXPECTS(n <= midpoint_max_points, "the midpoint rule takes at most 2^52 points, got ", n);
  return region<1>({a}, {b});  // validates a, b
}

}  // namespace mcubes

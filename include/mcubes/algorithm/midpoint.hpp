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
/// The rule has no error estimate: result.error is NaN (and status converged).

#include <chrono>
#include <cmath>
#include <cstdint>
#include <limits>
#include <string>
#include <type_traits>
#include <vector>

#include "../backend/cpu_tiles.hpp"
#include "../backend/launch_report.hpp"
#include "../core/stratification.hpp"
#include "../core/tree_reduce.hpp"
#include "../error.hpp"
#include "../options.hpp"
#include "../point.hpp"
#include "../region.hpp"
#include "../result.hpp"

namespace mcubes {

/// Largest number of points of the midpoint rule (2^52 = 4.5e15): every index + 1/2 is an exact
/// double.
inline constexpr std::uint64_t midpoint_max_points = std::uint64_t(1) << 52;

/// Options of mcubes::midpoint.
struct midpoint_options {
  int threads = 0;                           ///< CPU threads; 0 = all hardware threads. Never changes the result.
  backend_kind backend = backend_kind::cpu;  ///< cpu; cuda and automatic need a translation unit compiled by nvcc
  int cuda_threads_per_block = 256;          ///< CUDA block size, a power of two in [32, 1024]. Never changes the result.
};

/// @throws invalid_input naming the first offending option.
inline void validate(const midpoint_options& o) {
  MCUBES_EXPECTS(o.threads >= 0, "threads must be at least 1 (or 0 for all cores), got ", o.threads);
  validate_block_size(o.cuda_threads_per_block);
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
};

/// Partial sum of a set of chunks and the first (smallest index) non-finite value. Identity: default.
struct midpoint_partial {
  dd_sum sum;
  std::uint64_t first_non_finite = ~std::uint64_t(0);
  double non_finite_value = 0;
};

MCUBES_HOST_DEVICE inline midpoint_partial merge(const midpoint_partial& a, const midpoint_partial& b) {
  midpoint_partial r;
  r.sum = merge(a.sum, b.sum);
  if (b.first_non_finite < a.first_non_finite) {
    r.first_non_finite = b.first_non_finite;
    r.non_finite_value = b.non_finite_value;
  } else {
    r.first_non_finite = a.first_non_finite;
    r.non_finite_value = a.non_finite_value;
  }
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

/// Sums chunk `chunk` serially: runs along axis 0 (the other coordinates fixed), in blocks of 8
/// values summed pairwise and added to a Neumaier sum. A non-finite value ends the chunk and is
/// recorded (the caller raises it).
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
  compensated_sum acc;
  const double a0 = p.lower[0], h0 = p.h[0];
  while (idx < end) {
    std::uint64_t run = p.n_axis - c[0];
    if (run > end - idx) run = end - idx;
    double t = static_cast<double>(c[0]) + 0.5;  // exact: c[0] < 2^52
    std::uint64_t k = 0;
    for (; k + 8 <= run; k += 8, t += 8.0) {
      double v[8];
      for (int q = 0; q < 8; ++q) {
        x[0] = a0 + (t + q) * h0;
        v[q] = f(x);
      }
      const double s = ((v[0] + v[1]) + (v[2] + v[3])) + ((v[4] + v[5]) + (v[6] + v[7]));
      if (!(s - s == 0)) {  // some value is NaN or +-Inf (or the 8 finite values overflow)
        for (int q = 0; q < 8; ++q)
          if (!(v[q] - v[q] == 0)) {
            out.first_non_finite = idx + k + q;
            out.non_finite_value = v[q];
            return out;
          }
      }
      acc.add(s);
    }
    for (; k < run; ++k, t += 1.0) {
      x[0] = a0 + t * h0;
      const double v = f(x);
      if (!(v - v == 0)) {
        out.first_non_finite = idx + k;
        out.non_finite_value = v;
        return out;
      }
      acc.add(v);
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
    }
  }
  out.sum = acc.result();
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
  return p;
}

/// Turns the merged partial into the result: estimate = (S V) / M.
/// @throws non_finite_integrand (first point in index order), numerical_error on overflow.
template <int D>
result midpoint_finish(const midpoint_partial& total, const midpoint_params<D>& p, const region<D>& reg,
                       const midpoint_options& opt, const std::string& backend, double seconds) {
  if (total.first_non_finite != ~std::uint64_t(0)) {
    point<D> x;
    midpoint_point<D>(p, total.first_non_finite, x);
    throw non_finite_integrand(0, total.first_non_finite, std::vector<double>(x.x, x.x + D), total.non_finite_value);
  }
  const double s = total.sum.value();
  const double m = static_cast<double>(p.points);  // exact: M <= 2^52
  double estimate = (s * reg.volume()) / m;
  if (!std::isfinite(estimate) && std::isfinite(s)) estimate = s * (reg.volume() / m);
  if (!std::isfinite(estimate))
    throw numerical_error("midpoint rule: the sum of the integrand values is not finite (overflow)");
  result r;
  r.estimate = estimate;
  r.error = std::numeric_limits<double>::quiet_NaN();  // the rule gives no error estimate
  r.n_eval = p.points;
  r.iterations = 1;
  r.accumulated = 1;
  r.status = status::converged;
  r.backend = backend;
  r.seconds = seconds;
  r.options.calls_per_iteration = p.points;
  r.options.max_iterations = 1;
  r.options.threads = opt.threads;
  r.options.backend = opt.backend;
  r.options.cuda_threads_per_block = opt.cuda_threads_per_block;
  iteration_record rec;
  rec.estimate = estimate;
  rec.error = r.error;
  rec.accumulated = true;
  rec.weighted_estimate = estimate;
  rec.weighted_error = r.error;
  rec.n_eval = p.points;
  rec.seconds = seconds;
  r.records.push_back(rec);
  return r;
}

}  // namespace detail

/// The tensor-product midpoint rule on the CPU (see the file comment). opt.backend is ignored.
/// @throws invalid_input for bad options or n_per_axis (0, or n^D > 2^52); non_finite_integrand
///         if f returns NaN or +-Inf (the first point in index order); numerical_error on overflow.
template <int D, class F>
result midpoint_cpu(const F& f, const region<D>& reg, std::uint64_t n_per_axis, const midpoint_options& opt = {}) {
  static_assert(D >= 1, "dimension must be at least 1");
  validate(opt);
  const midpoint_params<D> p = detail::make_midpoint_params<D>(reg, n_per_axis);
  const auto t0 = std::chrono::steady_clock::now();
  const midpoint_partial total = cpu_tree_reduce<midpoint_partial>(
      p.n_chunks, opt.threads, [&](std::uint64_t c) { return midpoint_chunk<D>(f, p, c); },
      [](const midpoint_partial& a, const midpoint_partial& b) { return merge(a, b); });
  const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  return detail::midpoint_finish<D>(total, p, reg, opt, "cpu", seconds);
}

}  // namespace mcubes

#if defined(__CUDACC__)
namespace mcubes::cuda {
/// The tensor-product midpoint rule on the current CUDA device (defined in backend/cuda/midpoint.cuh).
template <int D, class F>
result midpoint(const F& f, const region<D>& reg, std::uint64_t n_per_axis, const midpoint_options& opt,
                launch_report* report = nullptr);
}  // namespace mcubes::cuda
#include "../backend/cuda/midpoint.cuh"
#endif

namespace mcubes {
// The front end dispatches to CUDA only in translation units compiled by nvcc; the two versions
// live in different inline namespaces so that a program mixing both kinds of translation units
// (e.g. the mcubes command) has no two different definitions of one function.
#if defined(__CUDACC__)
inline namespace nvcc_front_end {
#else
inline namespace host_front_end {
#endif

/// Tensor-product midpoint rule with n_per_axis points per axis over `reg` (f: `double
/// operator()(const mcubes::point<D>&) const`) on the backend named in opt.backend:
///  - cpu: midpoint_cpu;
///  - cuda (translation units compiled by nvcc): cuda::midpoint (backend/cuda/midpoint.cuh);
///  - automatic: CUDA when compiled by nvcc and a device is present, else the CPU
///    (result.backend says which ran).
/// @throws invalid_input for bad options or sizes, or backend cuda without nvcc; cuda_error if
///         CUDA is requested and no device is present or a CUDA call fails; non_finite_integrand,
///         numerical_error as midpoint_cpu.
template <int D, class F>
result midpoint(const F& f, const region<D>& reg, std::uint64_t n_per_axis, const midpoint_options& opt = {}) {
  validate(opt);
#if defined(__CUDACC__)
  if (opt.backend == backend_kind::cuda || (opt.backend == backend_kind::automatic && cuda_device_count() > 0))
    return cuda::midpoint<D>(f, reg, n_per_axis, opt);
#else
  MCUBES_EXPECTS(opt.backend != backend_kind::cuda,
                 "backend cuda requested, but this translation unit was not compiled by nvcc (include "
                 "mcubes/algorithm/midpoint.hpp in a .cu file to reach the CUDA backend)");
#endif
  return midpoint_cpu<D>(f, reg, n_per_axis, opt);
}

/// The 1-D composite midpoint rule with N points on [a, b]:
///   estimate = ((b - a) / N) sum_{i=0}^{N-1} f(a + (i + 1/2) (b - a) / N),
/// for 1 <= N <= 2^52 (N = 1e12 included). f is callable with a double or with a point<1>.
/// Backends, determinism and rounding as the tensor-product rule (file comment).
/// @throws invalid_input if a or b is not finite, a >= b, N = 0 or N > 2^52, or for bad options;
///         otherwise as midpoint<D>.
template <class F>
result midpoint(const F& f, double a, double b, std::uint64_t n, const midpoint_options& opt = {}) {
  MCUBES_EXPECTS(n >= 1, "the midpoint rule needs at least 1 point, got ", n);
  MCUBES_EXPECTS(n <= midpoint_max_points, "the midpoint rule takes at most 2^52 points, got ", n);
  const region<1> reg({a}, {b});  // validates a, b
  return midpoint<1>(detail::as_point_integrand(f), reg, n, opt);
}

}  // inline namespace
}  // namespace mcubes

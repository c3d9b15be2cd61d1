#pragma once
/// @file core/vector_sampler.hpp
/// The serial body of V-Sample / V-Sample-No-Adjust for a vector-valued integrand (values<N>) over
/// one chunk of sub-cubes, as core/sampler.hpp's sample_chunk does for a scalar one: the same
/// points, jacobians and sub-cube order. Per sub-cube c with p samples f_k = f(x_k) J(x_k),
/// k = 1..p (a failing sample counts as f_k = 0, see below):
///   I_c,i = s_i / p with s_i = sum_k f_k,i (the scalar path's mean),
///   cov_c(i, j) = sum_k (f_k,i - mean_i)(f_k,j - mean_j) / (p (p - 1)), i <= j,
/// the covariance of the sub-cube's estimates of components i and j; the chunk's partial holds
/// their sums over its sub-cubes.
///
/// The covariance numerator is accumulated sample by sample (Welford's co-moment update, no
/// per-sub-cube N x N state): with mu_0 = 0 and, for sample k of the sub-cube,
///   delta_i = f_k,i - mu_i,   mu_i <- mu_i + delta_i * fl(1 / k),
///   a_i = delta_i * fl(1 / (p (p - 1))),   b_j = f_k,j - mu_j (the updated mean),
///   partial cov(i, j) += a_i * b_j      (i <= j; only for k >= 2: at k = 1, b = 0),
/// since sum_k (f_k,i - mu_(k-1),i)(f_k,j - mu_k,j) = sum_k (f_k,i - mean_i)(f_k,j - mean_j)
/// exactly in real arithmetic. mu_k lies between mu_(k-1) and f_k (also after rounding), so a_i and
/// b_i never have opposite signs: the diagonal terms are >= 0 without a clamp. Skipping k = 1 is
/// exact: its terms are +-0, and a partial (which starts at +0 and is never -0) does not change
/// when +-0 is added.
///
/// One component (N = 1) keeps the scalar path's arithmetic: s_2 = sum_k f_k^2 and
/// cov_c(0, 0) = (s_2 - s_1 (s_1 / p)) / (p (p - 1)) clamped at 0, so that a one-component
/// integrand is bitwise the scalar run (tested), with the scalar chunking.
///
/// The adaptive map learns from component 0 alone ((f_0 J)^2 into the bins, as the scalar path).
/// A sample where any component is NaN or +-Inf, or where some (f_i J)^2 overflows, is recorded
/// (the first by sample index) and adds nothing. No operation may be contracted into a fused
/// multiply-add (host: the baseline x86-64 target, or -ffp-contract=off; CUDA: --fmad=false), so
/// that every backend computes the same bits. Host and device code.

#include <cstddef>
#include <cstdint>
#include <type_traits>

#include "../config.hpp"
#include "../values.hpp"
#include "sampler.hpp"

namespace mcubes {

/// Doubles of a vector chunk partial: N estimates, then the upper triangle of the covariance,
/// row by row (i <= j), N (N + 1) / 2.
template <int N>
inline constexpr int vector_partial_size = N + N * (N + 1) / 2;

/// Index of cov(i, j), i <= j, in the triangle (after the N estimates).
MCUBES_HOST_DEVICE constexpr int triangle_index(int n, int i, int j) { return i * n - i * (i - 1) / 2 + (j - i); }

/// Least samples per chunk of a vector integrand of N components (make_stratification's
/// min_chunk_samples): 0 for N = 1 (the scalar chunking, so bitwise the scalar run), 32 otherwise.
/// Each chunk pays a fixed cost proportional to M = vector_partial_size<N> (zeroing and reducing its
/// M partial sums; on the GPU also a barrier and a tile reduction of about 2 M operations per
/// thread), and each sample pays about 4 M (its covariance update); both grow with M, so a fixed
/// count of samples per chunk amortises the chunk's cost whatever N: with 32 the per-chunk cost is
/// a few per cent of the chunk's sampling, while calls / 32 chunks (62,500 at 2e6 calls per
/// iteration) still fill a GPU whose vector kernels hold some 20,000 threads. Depends on N only,
/// never on the backend or the launch.
template <int N>
inline constexpr std::uint64_t vector_chunk_samples = N == 1 ? 0 : 32;

/// Samples chunk `chunk` of a vector-valued integrand serially: adds sum_c I_c,i to out[i * s] and
/// sum_c cov_c(i, j) to out[(N + triangle_index(N, i, j)) * s] with s = out_stride (out zeroed by
/// the caller; the CPU passes s = 1, the CUDA shared-memory kernel its tile's column stride), and
/// returns the flags (n_nonzero: samples with a non-zero component; first_non_finite,
/// non_finite_value: component 0's value there; max_contribution: of (f_0 J)^2) with
/// estimate/variance those of component 0. VEGAS+ counts (sp.counts, core/cube_counts.hpp): as
/// sample_cubes, n_c samples in sub-cube c, each moment over its own n_c, and the shares from
/// component 0's S_c (vegas allocates by the first component too), so that N = 1 is the scalar run
/// (with its segment rule, sample_cubes).
template <int D, int N, class F, class Bins, class U>
MCUBES_HOST_DEVICE inline chunk_partial sample_chunk_vector(const F& f, const sampling_params<D>& sp, const map_view<D>& map,
                                                            std::uint64_t chunk, Bins& bins, const U& uni, double* out,
                                                            std::size_t out_stride = 1) {
  chunk_partial flags;
  const std::uint64_t begin = chunk * sp.chunk_cubes;
  std::uint64_t end = begin + sp.chunk_cubes;
  if (end > sp.n_cubes) end = sp.n_cubes;
  const bool per_cube = sp.counts.per_cube();
  const double pd_uniform = static_cast<double>(sp.p);
  const double inv_den_uniform = 1.0 / (pd_uniform * (pd_uniform - 1));
  double* const cov = out + static_cast<std::size_t>(N) * out_stride;
  // Sub-cube coordinates by an odometer (axis 0 fastest), as sample_chunk: the same values as
  // cube_coordinates, one division per axis per chunk.
  const cube_coord_t<D> gc = static_cast<cube_coord_t<D>>(sp.g);
  cube_coord_t<D> coord[D] = {};
  if (begin < end) cube_start<D>(begin, sp.g, coord);
  for (std::uint64_t c = begin; c < end; ++c) {
    if (c != begin)
      for (int j = 0; j < D; ++j) {
        coord[j] += 1;
        if (coord[j] < gc) break;
        coord[j] = 0;
      }
    double cd[D];
    for (int j = 0; j < D; ++j) cd[j] = static_cast<double>(coord[j]);
    double s1[N], mu[N];
    double s2 = 0;  // N = 1 only
#if defined(__CUDA_ARCH__)
#pragma unroll
#endif
    for (int i = 0; i < N; ++i) s1[i] = 0, mu[i] = 0;
    const std::uint64_t n = per_cube ? sp.counts.count(c) : sp.p;
    const double pd = per_cube ? static_cast<double>(n) : pd_uniform;
    const double inv_den = per_cube ? 1.0 / (pd * (pd - 1)) : inv_den_uniform;
    const double term_scale = per_cube ? sp.bin_scale / pd : sp.bin_scale;  // as sample_cubes
    const std::uint64_t first = c * sp.p, last = first + n;
    // N = 1: the segment rule of sample_cubes (segments of sp.counts.segment samples, VEGAS+ only)
    const std::uint64_t seg = per_cube && sp.counts.segment != 0 ? sp.counts.segment : n;
    std::uint64_t seg_end = n > seg ? first + seg : last;
    double t1 = 0, t2 = 0;  // N = 1: the sums of the current segment
    double cov00 = 0;  // N > 1: component 0's variance sum of this sub-cube (its share)
    for (std::uint64_t index = first; index != last; ++index) {
      point<D> x;
      int bin[D];
      const double jac = make_sample<D>(sp, map, uni, cd, index, x, bin);
      values<N> v = sample_value<D>(f, x, index);
      double fj[N];
      bool bad = false, any = false;
#if defined(__CUDA_ARCH__)
#pragma unroll
#endif
      for (int i = 0; i < N; ++i) {
        fj[i] = v[i] * jac;
        const double q = fj[i] * fj[i];
        bad = bad || !(q - q == 0);
        any = any || v[i] != 0;
      }
      if (bad) {
        if (index < flags.first_non_finite) flags.first_non_finite = index, flags.non_finite_value = v[0];
#if defined(__CUDA_ARCH__)
#pragma unroll
#endif
        for (int i = 0; i < N; ++i) fj[i] = 0;
        any = false;
      }
      if (any) ++flags.n_nonzero;
      if constexpr (N == 1) {
        t1 += fj[0];
        t2 += fj[0] * fj[0];
        if (index + 1 == seg_end) {  // the segment's sums, in segment order
          s1[0] += t1;
          s2 += t2;
          t1 = t2 = 0;
          seg_end = last - seg_end > seg ? seg_end + seg : last;
        }
      } else {
        const double inv_k = 1.0 / static_cast<double>(index - first + 1);
        double a[N], b[N];
#if defined(__CUDA_ARCH__)
#pragma unroll
#endif
        for (int i = 0; i < N; ++i) {
          s1[i] += fj[i];
          const double delta = fj[i] - mu[i];
          mu[i] = mu[i] + delta * inv_k;
          a[i] = delta * inv_den;
          b[i] = fj[i] - mu[i];
        }
        if (index != first) {
          if (per_cube && sp.counts.share_out != nullptr) cov00 += a[0] * b[0];
          double* row = cov;
#if defined(__CUDA_ARCH__)
#pragma unroll
#endif
          for (int i = 0; i < N; ++i) {
#if defined(__CUDA_ARCH__)
#pragma unroll
#endif
            for (int j = i; j < N; ++j) row[(j - i) * out_stride] += a[i] * b[j];
            row += (N - i) * out_stride;
          }
        }
      }
      if constexpr (Bins::enabled) {
        const double fj2 = fj[0] * fj[0];
        if (fj2 > flags.max_contribution) flags.max_contribution = fj2;
        add_bin_term<D>(bins, fj2 * term_scale, quantization_dither(index), [&](int j) { return bin[j]; }, sp.bin_axes);
      }
    }
    if constexpr (N == 1) {
      const double mean = s1[0] / pd;
      out[0] += mean;
      double cv = (s2 - s1[0] * mean) / (pd * (pd - 1));  // the scalar path's variance
      if (cv <= 0) cv = 0;  // rounding; a NaN stays NaN and is reported
      cov[0] += cv;
      if (sp.counts.share_out != nullptr) sp.counts.share_out[c] = cube_share(portable::det_mul(cv, pd), sp.counts.beta16);
    } else {
#if defined(__CUDA_ARCH__)
#pragma unroll
#endif
      for (int i = 0; i < N; ++i) out[i * out_stride] += s1[i] / pd;
      if (per_cube && sp.counts.share_out != nullptr)
        sp.counts.share_out[c] = cube_share(portable::det_mul(cov00 > 0 ? cov00 : 0.0, pd), sp.counts.beta16);
    }
  }
  flags.estimate = out[0];
  flags.variance = cov[0];
  return flags;
}

}  // namespace mcubes

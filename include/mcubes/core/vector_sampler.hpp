#pragma once
/// @file core/vector_sampler.hpp
/// The serial body of V-Sample / V-Sample-No-Adjust for a vector-valued integrand (values<N>) over
/// one chunk of sub-cubes, as core/sampler.hpp's sample_chunk does for a scalar one: the same
/// points, jacobians and sub-cube order. Per sub-cube c with p samples, s_i = sum_samples f_i J and
/// s_ij = sum_samples (f_i J)(f_j J) (i <= j):
///   I_c,i = s_i / p,
///   cov_c(i, i) = (s_ii - s_i (s_i / p)) / (p (p - 1)), clamped at 0 if negative (the scalar
///   path's variance, the same operations),
///   cov_c(i, j) = (s_ij - s_i (s_j / p)) * fl(1 / (p (p - 1))) for i < j (a product: one division
///   per sub-cube instead of N (N - 1) / 2),
/// the covariance of the sub-cube's estimates of components i and j; the chunk's partial holds their sums over its sub-cubes. The
/// adaptive map learns from component 0 alone ((f_0 J)^2 into the bins, as the scalar path), so a
/// one-component integrand samples and adapts exactly as the scalar one. A sample where any
/// component is NaN or +-Inf, or where some (f_i J)^2 overflows, is recorded (the first by sample
/// index) and adds nothing. Host and device code.

#include <cstdint>

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

/// Samples chunk `chunk` of a vector-valued integrand serially: adds sum_c I_c,i to out[i] and
/// sum_c cov_c(i, j) to out[N + triangle_index(N, i, j)] (out zeroed by the caller), and returns
/// the flags (n_nonzero: samples with a non-zero component; first_non_finite, non_finite_value:
/// component 0's value there; max_contribution: of (f_0 J)^2) with estimate/variance those of
/// component 0.
template <int D, int N, class F, class Bins, class U>
MCUBES_HOST_DEVICE inline chunk_partial sample_chunk_vector(const F& f, const sampling_params<D>& sp, const map_view<D>& map,
                                                            std::uint64_t chunk, Bins& bins, const U& uni, double* out) {
  chunk_partial flags;
  const std::uint64_t begin = chunk * sp.chunk_cubes;
  std::uint64_t end = begin + sp.chunk_cubes;
  if (end > sp.n_cubes) end = sp.n_cubes;
  const double pd = static_cast<double>(sp.p);
  const double inv_den = 1.0 / (pd * (pd - 1));
  double s1[N], s2[N * (N + 1) / 2];
  for (std::uint64_t c = begin; c < end; ++c) {
    std::uint64_t ic[D];
    cube_coordinates<D>(c, sp.g, ic);
    double cd[D];
    for (int j = 0; j < D; ++j) cd[j] = static_cast<double>(ic[j]);
    for (int i = 0; i < N; ++i) s1[i] = 0;
    for (int t = 0; t < N * (N + 1) / 2; ++t) s2[t] = 0;
    const std::uint64_t first = c * sp.p, last = first + sp.p;
    for (std::uint64_t index = first; index != last; ++index) {
      point<D> x;
      int bin[D];
      const double jac = make_sample<D>(sp, map, uni, cd, index, x, bin);
      values<N> v = sample_value<D>(f, x, index);
      double fj[N];
      bool bad = false, any = false;
      for (int i = 0; i < N; ++i) {
        fj[i] = v[i] * jac;
        const double q = fj[i] * fj[i];
        bad = bad || !(q - q == 0);
        any = any || v[i] != 0;
      }
      if (bad) {
        if (index < flags.first_non_finite) flags.first_non_finite = index, flags.non_finite_value = v[0];
        for (int i = 0; i < N; ++i) fj[i] = 0;
        any = false;
      }
      if (any) ++flags.n_nonzero;
      for (int i = 0; i < N; ++i) {
        s1[i] += fj[i];
        double* row = s2 + triangle_index(N, i, i);
        for (int j = i; j < N; ++j) row[j - i] += fj[i] * fj[j];
      }
      if constexpr (Bins::enabled) {
        const double fj2 = fj[0] * fj[0];
        if (fj2 > flags.max_contribution) flags.max_contribution = fj2;
        add_bin_term<D>(bins, fj2 * sp.bin_scale, quantization_dither(index), [&](int j) { return bin[j]; });
      }
    }
    double mean[N];
    for (int i = 0; i < N; ++i) {
      mean[i] = s1[i] / pd;
      out[i] += mean[i];
    }
    for (int i = 0; i < N; ++i) {
      const int row = triangle_index(N, i, i);
      double cv = (s2[row] - s1[i] * mean[i]) / (pd * (pd - 1));  // the scalar path's variance
      if (cv <= 0) cv = 0;  // rounding; a NaN stays NaN and is reported
      out[N + row] += cv;
      for (int j = i + 1; j < N; ++j) out[N + row + (j - i)] += (s2[row + (j - i)] - s1[i] * mean[j]) * inv_den;
    }
  }
  flags.estimate = out[0];
  flags.variance = out[N];
  return flags;
}

}  // namespace mcubes

#pragma once
/// @file backend/cpu/simd.hpp
/// The SIMD building blocks of the CPU fast path (backend/cpu/fast_path.hpp): the batch of 64
/// consecutive samples, Philox for a batch (uniform_batch; SSE2 on every x86-64 CPU, AVX2 when the
/// CPU has it, AVX-512F when it has that too, chosen at run time: uniform_batch_of_wide), the map
/// axis by axis over a batch (map_axis; with AVX2 every axis of four samples at once, with AVX-512F
/// of eight: map_axes_wide), the sub-cube coordinates of consecutive samples
/// (coordinate_tables) and, with AVX2, the samples' weighted values and level-0 bin quanta four at a
/// time (level0_terms_avx2). Each gives bitwise the numbers of core/sampler.hpp's make_sample and
/// sample term for the same samples (see fast_path.hpp).

#include <algorithm>
#include <cstdint>
#include <vector>
#if defined(__SSE2__) && !defined(__CUDA_ARCH__) && !defined(MCUBES_CPU_NO_SIMD)
#include <emmintrin.h>
/// SSE2 (every x86-64 CPU) intrinsics in the CPU fast path; MCUBES_CPU_NO_SIMD selects the plain
/// C++ loops (the same bits).
#define MCUBES_CPU_SSE2 1
#else
#define MCUBES_CPU_SSE2 0
#endif
#if MCUBES_CPU_SSE2 && defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__)) && !defined(__CUDACC__) && \
    !defined(MCUBES_CPU_NO_AVX2)
#include <immintrin.h>
/// AVX2 kernels compiled for that target alone (function attribute) and chosen at run time when the
/// CPU has AVX2 (cpu_has_avx2); MCUBES_CPU_NO_AVX2 leaves them out. Not in nvcc translation units.
#define MCUBES_CPU_AVX2_DISPATCH 1
#define MCUBES_CPU_TARGET_AVX2 __attribute__((target("avx2")))
#else
#define MCUBES_CPU_AVX2_DISPATCH 0
#endif
#if MCUBES_CPU_AVX2_DISPATCH && !defined(MCUBES_CPU_NO_AVX512)
/// Philox for a batch with AVX-512F (uniform_batch_of_avx512), chosen at run time when the CPU has
/// it (cpu_has_avx512); MCUBES_CPU_NO_AVX512 leaves it out (the AVX2 form then; the same bits).
#define MCUBES_CPU_AVX512_DISPATCH 1
// AVX-512F brings FMA with it: GCC would contract a * b + c written with the intrinsics (its
// vector operators) into fused operations, changing low bits; its contraction is off in these
// functions. Clang contracts within one source expression only, never across intrinsics.
#if defined(__clang__)
#define MCUBES_CPU_TARGET_AVX512 __attribute__((target("avx512f")))
#else
#define MCUBES_CPU_TARGET_AVX512 __attribute__((target("avx512f"), optimize("fp-contract=off")))
#endif
#else
#define MCUBES_CPU_AVX512_DISPATCH 0
#endif

#include "../../core/sampler.hpp"

namespace mcubes {
namespace cpu_detail {

/// Samples per batch of the CPU fast path: the Philox words, the map and the sample points of a
/// batch are computed axis by axis over its samples, so that the compiler vectorises them.
inline constexpr int batch = 64;

/// The sample indices of a batch: consecutive ones, first + i (uniform_batch).
struct consecutive_indices {
  static constexpr bool consecutive = true;
  std::uint64_t first;
  std::uint64_t operator()(int i) const { return first + static_cast<std::uint64_t>(i); }
};
/// The sample indices of a batch, listed: index[i] (VEGAS+ batches that cross sub-cubes, whose
/// indices c p + k skip the unused k >= n_c).
struct listed_indices {
  static constexpr bool consecutive = false;
  const std::uint64_t* index;
  std::uint64_t operator()(int i) const { return index[i]; }
};

/// u[4b + w][i] = r123::u01<double>(word w of Philox4x32-10(counter {index_i mod 2^32, index_i >> 32,
/// iteration, b}, key)) for index_i = index(i), i < batch (Index: consecutive_indices or
/// listed_indices): the numbers of sample_stream::fill (random.hpp) for a batch of samples. Only
/// words 4b + w < D are kept. Bitwise the same: the rounds are exact integer arithmetic, and u01's
/// value (w + 1/2) 2^-32 is exact in double whichever exact steps compute it.
template <int D, class Index>
inline void uniform_batch_of(const philox_round_keys& key, std::uint32_t iteration, const Index& index_of,
                             double (&u)[D][batch]) {
#if MCUBES_CPU_SSE2
  // Two samples per register: each 32-bit word lives in the low half of a 64-bit lane (the high
  // half holds garbage that never reaches a result: pmuludq reads only the low halves), so one
  // _mm_mul_epu32 is the 32 x 32 -> 64-bit product of two samples. The conversion: the bits
  // 0x43300000'00000000 | w are the double 2^52 + w; minus (2^52 - 1/2) gives w + 1/2 (exact: both
  // are multiples of 1/2 below 2^53), times 2^-32 (exact).
  const __m128i m0 = _mm_set1_epi64x(philox_m0), m1 = _mm_set1_epi64x(philox_m1);
  const __m128i low = _mm_set1_epi64x(0xFFFFFFFF), exponent = _mm_set1_epi64x(0x4330000000000000);
  const __m128d bias = _mm_set1_pd(4503599627370495.5), scale = _mm_set1_pd(1.0 / 4294967296.0);
  __m128i k0[10], k1[10];
  for (int r = 0; r < 10; ++r) {
    k0[r] = _mm_set1_epi64x(key.k0[r]);
    k1[r] = _mm_set1_epi64x(key.k1[r]);
  }
  const __m128i it = _mm_set1_epi64x(iteration);
  for (int blk = 0; blk * 4 < D; ++blk) {
    const __m128i bk = _mm_set1_epi64x(blk);
    constexpr int pairs = 2;  // independent pairs of samples per step (two multiply chains each)
    for (int i = 0; i < batch; i += 2 * pairs) {
      __m128i x[pairs][4];
      for (int q = 0; q < pairs; ++q) {
        const __m128i index = _mm_set_epi64x(static_cast<long long>(index_of(i + 2 * q + 1)),
                                             static_cast<long long>(index_of(i + 2 * q)));
        x[q][0] = index;
        x[q][1] = _mm_srli_epi64(index, 32);
        x[q][2] = it;
        x[q][3] = bk;
      }
      for (int r = 0; r < 10; ++r)
        for (int q = 0; q < pairs; ++q) {
          const __m128i p0 = _mm_mul_epu32(x[q][0], m0), p1 = _mm_mul_epu32(x[q][2], m1);
          // high words to the low halves: pshufd (3,3,1,1), non-destructive, garbage above
          x[q][0] = _mm_xor_si128(_mm_xor_si128(_mm_shuffle_epi32(p1, 0xF5), x[q][1]), k0[r]);
          x[q][2] = _mm_xor_si128(_mm_xor_si128(_mm_shuffle_epi32(p0, 0xF5), x[q][3]), k1[r]);
          x[q][1] = p1;
          x[q][3] = p0;
        }
      for (int k = 0; k < 4 && blk * 4 + k < D; ++k)
        for (int q = 0; q < pairs; ++q) {
          const __m128d d = _mm_sub_pd(_mm_castsi128_pd(_mm_or_si128(_mm_and_si128(x[q][k], low), exponent)), bias);
          _mm_storeu_pd(&u[blk * 4 + k][i + 2 * q], _mm_mul_pd(d, scale));
        }
    }
  }
#else
  for (int blk = 0; blk * 4 < D; ++blk) {
    std::uint32_t w[4][batch];
    for (int i = 0; i < batch; ++i) {
      const std::uint64_t index = index_of(i);
      const philox_words x = philox4x32_10(
          philox_words{{static_cast<std::uint32_t>(index), static_cast<std::uint32_t>(index >> 32), iteration,
                        static_cast<std::uint32_t>(blk)}},
          key);
      for (int k = 0; k < 4; ++k) w[k][i] = x.v[k];
    }
    for (int k = 0; k < 4 && blk * 4 + k < D; ++k)
      for (int i = 0; i < batch; ++i) u[blk * 4 + k][i] = sample_stream::to_double(w[k][i]);
  }
#endif
}

/// uniform_batch_of for the consecutive samples first, first + 1, ..., first + batch - 1.
template <int D>
inline void uniform_batch(const philox_round_keys& key, std::uint32_t iteration, std::uint64_t first,
                          double (&u)[D][batch]) {
  uniform_batch_of<D>(key, iteration, consecutive_indices{first}, u);
}

/// Axis j of make_sample for samples [0, n) of a batch: from the sub-cube coordinate c[i] and the
/// uniform u[i], y = (c + u) fl(1/g), the map (map_view::map: bin b, unit coordinate, jacobian
/// factor) and x_j = a_j + (b_j - a_j) x_unit. The same IEEE operations in the same order as
/// make_sample (see the file comment on FMA contraction). First: axis 0, which sets jac[i] (make_sample starts
/// from 1.0, and 1.0 * z = z exactly); the other axes multiply it. c[i] for i in [n, batch) must be
/// a valid coordinate (0 <= c < g) so that the padded lanes of a vector stay in bounds.
template <int D, bool First>
inline void map_axis(const map_view<D>& map, int j, double lower, double width, double inv_g, int n,
                     const double* c, const double* u, double* jac, int* bin, point<D>* xs) {
  const int n_bins = map.n_bins;
  const double nb = static_cast<double>(n_bins);  // the conversion map_view::map does
  const double* e = map.edges + static_cast<std::uint64_t>(j) * (n_bins + 1);
#if MCUBES_CPU_SSE2
  // b = trunc(min(t, n - 1)) is map_view::map's clamp of trunc(t) to n - 1 (t >= 0, never NaN).
  const __m128d vg = _mm_set1_pd(inv_g), vnb = _mm_set1_pd(nb), vtop = _mm_set1_pd(nb - 1);
  const __m128d va = _mm_set1_pd(lower), vw = _mm_set1_pd(width);
  for (int i = 0; i < n; i += 2) {
    const __m128d y = _mm_mul_pd(_mm_add_pd(_mm_loadu_pd(c + i), _mm_loadu_pd(u + i)), vg);
    const __m128d t = _mm_mul_pd(y, vnb);
    const __m128i b = _mm_cvttpd_epi32(_mm_min_pd(t, vtop));
    const int b0 = _mm_cvtsi128_si32(b), b1 = _mm_cvtsi128_si32(_mm_shuffle_epi32(b, 1));
    const __m128d e0 = _mm_loadu_pd(e + b0), e1 = _mm_loadu_pd(e + b1);  // {e[b], e[b + 1]}
    const __m128d lo = _mm_unpacklo_pd(e0, e1), hi = _mm_unpackhi_pd(e0, e1);
    const __m128d w = _mm_sub_pd(hi, lo);
    const __m128d xu = _mm_add_pd(lo, _mm_mul_pd(w, _mm_sub_pd(t, _mm_cvtepi32_pd(b))));
    if constexpr (First)  // jac = 1.0 * (w n) = w n exactly
      _mm_storeu_pd(jac + i, _mm_mul_pd(w, vnb));
    else
      _mm_storeu_pd(jac + i, _mm_mul_pd(_mm_loadu_pd(jac + i), _mm_mul_pd(w, vnb)));
    const __m128d x = _mm_add_pd(va, _mm_mul_pd(vw, xu));
    _mm_storel_pd(&xs[i].x[j], x);
    _mm_storeh_pd(&xs[i + 1].x[j], x);
    bin[i] = b0;
    bin[i + 1] = b1;
  }
#else
  for (int i = 0; i < n; ++i) {
    const double y = (c[i] + u[i]) * inv_g;
    const double t = y * nb;
    int b = static_cast<int>(t);
    if (b >= n_bins) b = n_bins - 1;
    const double lo = e[b];
    const double w = e[b + 1] - lo;
    const double xu = lo + w * (t - b);
    if constexpr (First)  // jac = 1.0 * (w n) = w n exactly
      jac[i] = w * nb;
    else
      jac[i] *= w * nb;
    bin[i] = b;
    xs[i].x[j] = lower + width * xu;
  }
#endif
}

#if MCUBES_CPU_AVX2_DISPATCH
/// Whether this CPU runs AVX2 (checked once): selects the AVX2 kernels below at run time, so the
/// binary still runs on any x86-64 CPU.
inline bool cpu_has_avx2() {
  static const bool has = __builtin_cpu_supports("avx2");
  return has;
}

/// uniform_batch_of with four samples per register (AVX2): the same integer rounds and exact
/// conversion, hence the same bits.
template <int D, class Index>
MCUBES_CPU_TARGET_AVX2 void uniform_batch_of_avx2(const philox_round_keys& key, std::uint32_t iteration,
                                                  const Index& index_of, double (&u)[D][batch]) {
  const __m256i m0 = _mm256_set1_epi64x(philox_m0), m1 = _mm256_set1_epi64x(philox_m1);
  const __m256i low = _mm256_set1_epi64x(0xFFFFFFFF), exponent = _mm256_set1_epi64x(0x4330000000000000);
  const __m256d bias = _mm256_set1_pd(4503599627370495.5), scale = _mm256_set1_pd(1.0 / 4294967296.0);
  const __m256i lane = _mm256_set_epi64x(3, 2, 1, 0);
  __m256i k0[10], k1[10];
  for (int r = 0; r < 10; ++r) {
    k0[r] = _mm256_set1_epi64x(key.k0[r]);
    k1[r] = _mm256_set1_epi64x(key.k1[r]);
  }
  const __m256i it = _mm256_set1_epi64x(iteration);
  for (int blk = 0; blk * 4 < D; ++blk) {
    const __m256i bk = _mm256_set1_epi64x(blk);
    constexpr int quads = 4;  // independent quads of samples per step
    for (int i = 0; i < batch; i += 4 * quads) {
      __m256i x[quads][4];
      for (int q = 0; q < quads; ++q) {
        __m256i index;
        if constexpr (Index::consecutive)
          index = _mm256_add_epi64(_mm256_set1_epi64x(static_cast<long long>(index_of(i + 4 * q))), lane);
        else
          index = _mm256_set_epi64x(static_cast<long long>(index_of(i + 4 * q + 3)), static_cast<long long>(index_of(i + 4 * q + 2)),
                                    static_cast<long long>(index_of(i + 4 * q + 1)), static_cast<long long>(index_of(i + 4 * q)));
        x[q][0] = index;
        x[q][1] = _mm256_srli_epi64(index, 32);
        x[q][2] = it;
        x[q][3] = bk;
      }
      for (int r = 0; r < 10; ++r)
        for (int q = 0; q < quads; ++q) {
          const __m256i p0 = _mm256_mul_epu32(x[q][0], m0), p1 = _mm256_mul_epu32(x[q][2], m1);
          x[q][0] = _mm256_xor_si256(_mm256_xor_si256(_mm256_shuffle_epi32(p1, 0xF5), x[q][1]), k0[r]);
          x[q][2] = _mm256_xor_si256(_mm256_xor_si256(_mm256_shuffle_epi32(p0, 0xF5), x[q][3]), k1[r]);
          x[q][1] = p1;
          x[q][3] = p0;
        }
      for (int k = 0; k < 4 && blk * 4 + k < D; ++k)
        for (int q = 0; q < quads; ++q) {
          const __m256d d =
              _mm256_sub_pd(_mm256_castsi256_pd(_mm256_or_si256(_mm256_and_si256(x[q][k], low), exponent)), bias);
          _mm256_storeu_pd(&u[blk * 4 + k][i + 4 * q], _mm256_mul_pd(d, scale));
        }
    }
  }
}

#if MCUBES_CPU_AVX512_DISPATCH
// GCC 12 warns (-Wuninitialized, -Wmaybe-uninitialized) about the deliberately undefined operands
// inside its own AVX-512 intrinsics, a false positive: silenced in the AVX-512 functions of this
// file (GCC only: clang has no -Wmaybe-uninitialized and would warn about the pragma itself).
#if defined(__GNUC__) && !defined(__clang__)
#define MCUBES_CPU_AVX512_WARNINGS_OFF                              \
  _Pragma("GCC diagnostic push") _Pragma("GCC diagnostic ignored \"-Wuninitialized\"") \
      _Pragma("GCC diagnostic ignored \"-Wmaybe-uninitialized\"")
#define MCUBES_CPU_AVX512_WARNINGS_ON _Pragma("GCC diagnostic pop")
#else
#define MCUBES_CPU_AVX512_WARNINGS_OFF
#define MCUBES_CPU_AVX512_WARNINGS_ON
#endif
MCUBES_CPU_AVX512_WARNINGS_OFF
/// Whether this CPU runs AVX-512F (checked once): selects uniform_batch_of_avx512 at run time.
inline bool cpu_has_avx512() {
  static const bool has = __builtin_cpu_supports("avx512f");
  return has;
}

/// uniform_batch_of with eight samples per register (AVX-512F): the same integer rounds (each
/// round's two exclusive ors in one three-input logic instruction) and the same exact conversion,
/// hence the same bits.
template <int D, class Index>
MCUBES_CPU_TARGET_AVX512 void uniform_batch_of_avx512(const philox_round_keys& key, std::uint32_t iteration,
                                                      const Index& index_of, double (&u)[D][batch]) {
  const __m512i m0 = _mm512_set1_epi64(philox_m0), m1 = _mm512_set1_epi64(philox_m1);
  const __m512i low = _mm512_set1_epi64(0xFFFFFFFF), exponent = _mm512_set1_epi64(0x4330000000000000);
  const __m512d bias = _mm512_set1_pd(4503599627370495.5), scale = _mm512_set1_pd(1.0 / 4294967296.0);
  const __m512i lane = _mm512_set_epi64(7, 6, 5, 4, 3, 2, 1, 0);
  __m512i k0[10], k1[10];
  for (int r = 0; r < 10; ++r) {
    k0[r] = _mm512_set1_epi64(key.k0[r]);
    k1[r] = _mm512_set1_epi64(key.k1[r]);
  }
  const __m512i it = _mm512_set1_epi64(iteration);
  for (int blk = 0; blk * 4 < D; ++blk) {
    const __m512i bk = _mm512_set1_epi64(blk);
    constexpr int octs = 4;  // independent groups of eight samples per step
    for (int i = 0; i < batch; i += 8 * octs) {
      __m512i x[octs][4];
      for (int q = 0; q < octs; ++q) {
        __m512i index;
        if constexpr (Index::consecutive) {
          index = _mm512_add_epi64(_mm512_set1_epi64(static_cast<long long>(index_of(i + 8 * q))), lane);
        } else {
          index = _mm512_loadu_si512(static_cast<const void*>(&index_of.index[i + 8 * q]));
        }
        x[q][0] = index;
        x[q][1] = _mm512_srli_epi64(index, 32);
        x[q][2] = it;
        x[q][3] = bk;
      }
      for (int r = 0; r < 10; ++r)
        for (int q = 0; q < octs; ++q) {
          const __m512i p0 = _mm512_mul_epu32(x[q][0], m0), p1 = _mm512_mul_epu32(x[q][2], m1);
          // 0x96: a ^ b ^ c
          x[q][0] = _mm512_ternarylogic_epi64(_mm512_shuffle_epi32(p1, _MM_PERM_DDBB), x[q][1], k0[r], 0x96);
          x[q][2] = _mm512_ternarylogic_epi64(_mm512_shuffle_epi32(p0, _MM_PERM_DDBB), x[q][3], k1[r], 0x96);
          x[q][1] = p1;
          x[q][3] = p0;
        }
      for (int k = 0; k < 4 && blk * 4 + k < D; ++k)
        for (int q = 0; q < octs; ++q) {
          const __m512d d =
              _mm512_sub_pd(_mm512_castsi512_pd(_mm512_or_si512(_mm512_and_si512(x[q][k], low), exponent)), bias);
          _mm512_storeu_pd(&u[blk * 4 + k][i + 8 * q], _mm512_mul_pd(d, scale));
        }
    }
  }
}
MCUBES_CPU_AVX512_WARNINGS_ON
#endif

/// uniform_batch_of on a CPU with AVX2 (cpu_has_avx2): the AVX-512F form where the CPU has that
/// too, else the AVX2 one. The same bits either way.
template <int D, class Index>
inline void uniform_batch_of_wide(const philox_round_keys& key, std::uint32_t iteration, const Index& index_of,
                                  double (&u)[D][batch]) {
#if MCUBES_CPU_AVX512_DISPATCH
  if (cpu_has_avx512()) {
    uniform_batch_of_avx512<D>(key, iteration, index_of, u);
    return;
  }
#endif
  uniform_batch_of_avx2<D>(key, iteration, index_of, u);
}

/// uniform_batch_of_avx2 for consecutive samples (uniform_batch).
template <int D>
MCUBES_CPU_TARGET_AVX2 void uniform_batch_avx2(const philox_round_keys& key, std::uint32_t iteration,
                                               std::uint64_t first, double (&u)[D][batch]) {
  uniform_batch_of_avx2<D>(key, iteration, consecutive_indices{first}, u);
}

/// Writes coordinates j0 .. j0 + na - 1 (na <= 4) of the four samples p[0..3] from X (lane k of
/// X[a]: sample k's coordinate j0 + a): a 4 x 4 transpose, four coordinates a store, where na is 4,
/// else one coordinate at a time (map_axes_avx2_of; map_axes_avx512_of for each half of its eight).
template <int D>
MCUBES_CPU_TARGET_AVX2 inline __attribute__((always_inline)) void store_points4(const __m256d (&X)[4], int na, int j0,
                                                                                point<D>* p) {
  if (na == 4) {
    const __m256d t0 = _mm256_unpacklo_pd(X[0], X[1]), t1 = _mm256_unpackhi_pd(X[0], X[1]);
    const __m256d t2 = _mm256_unpacklo_pd(X[2], X[3]), t3 = _mm256_unpackhi_pd(X[2], X[3]);
    _mm256_storeu_pd(&p[0].x[j0], _mm256_permute2f128_pd(t0, t2, 0x20));
    _mm256_storeu_pd(&p[1].x[j0], _mm256_permute2f128_pd(t1, t3, 0x20));
    _mm256_storeu_pd(&p[2].x[j0], _mm256_permute2f128_pd(t0, t2, 0x31));
    _mm256_storeu_pd(&p[3].x[j0], _mm256_permute2f128_pd(t1, t3, 0x31));
  } else {
    for (int a = 0; a < na; ++a) {
      const __m128d x01 = _mm256_castpd256_pd128(X[a]), x23 = _mm256_extractf128_pd(X[a], 1);
      _mm_storel_pd(&p[0].x[j0 + a], x01);
      _mm_storeh_pd(&p[1].x[j0 + a], x01);
      _mm_storel_pd(&p[2].x[j0 + a], x23);
      _mm_storeh_pd(&p[3].x[j0 + a], x23);
    }
  }
}

/// map_axis for every axis of samples [0, n) of a batch (AVX2), four samples at a time: for each
/// four, the axes in order with the jacobian kept in a register (axis 0's factor w n, then times
/// each next axis's: the products of map_axis in the same order) and the points written four
/// coordinates at a time (a 4 x 4 transpose of four axes' values) instead of one; the bins as
/// map_axis. Bitwise the results of map_axis<D, true> on axis 0 and map_axis<D, false> on the
/// others (the same IEEE operations per value), with fewer loads and stores. c[j], u[j]: axis j's
/// sub-cube coordinates and uniforms (batch values each; see map_axis for the padded lanes);
/// lower[j], width[j]: the region. Unit: every axis has lower 0 and width 1, where
/// x = lower + width x_unit is x_unit exactly (x_unit >= +0: the edges are not negative) and is
/// not computed.
template <int D, bool Unit>
MCUBES_CPU_TARGET_AVX2 void map_axes_avx2_of(const map_view<D>& map, const double* lower, const double* width, double inv_g,
                                             int n, const double* const* c, const double* const* u, double* jac,
                                             int (*bin)[batch], point<D>* xs) {
  const int n_bins = map.n_bins;
  const double nb = static_cast<double>(n_bins);
  const std::size_t stride = static_cast<std::size_t>(n_bins) + 1;
  const __m256d vg = _mm256_set1_pd(inv_g), vnb = _mm256_set1_pd(nb), vtop = _mm256_set1_pd(nb - 1);
  for (int i = 0; i < n; i += 4) {
    __m256d J = _mm256_setzero_pd();
    for (int j0 = 0; j0 < D; j0 += 4) {
      const int na = D - j0 < 4 ? D - j0 : 4;
      __m256d X[4] = {};  // na < 4: the unused ones never read (the compiler drops the zeros)
      for (int a = 0; a < na; ++a) {
        const int j = j0 + a;
        const double* e = map.edges + static_cast<std::size_t>(j) * stride;
        const __m256d y = _mm256_mul_pd(_mm256_add_pd(_mm256_loadu_pd(c[j] + i), _mm256_loadu_pd(u[j] + i)), vg);
        const __m256d t = _mm256_mul_pd(y, vnb);
        const __m128i b = _mm256_cvttpd_epi32(_mm256_min_pd(t, vtop));
        _mm_storeu_si128(reinterpret_cast<__m128i*>(bin[j] + i), b);
        // the four loads' indices, unsigned (0 <= b < n_bins): no sign extension before the address
        const unsigned b0 = static_cast<unsigned>(_mm_cvtsi128_si32(b)), b1 = static_cast<unsigned>(_mm_extract_epi32(b, 1)),
                       b2 = static_cast<unsigned>(_mm_extract_epi32(b, 2)), b3 = static_cast<unsigned>(_mm_extract_epi32(b, 3));
        const __m256d e02 = _mm256_insertf128_pd(_mm256_castpd128_pd256(_mm_loadu_pd(e + b0)), _mm_loadu_pd(e + b2), 1);
        const __m256d e13 = _mm256_insertf128_pd(_mm256_castpd128_pd256(_mm_loadu_pd(e + b1)), _mm_loadu_pd(e + b3), 1);
        const __m256d lo = _mm256_unpacklo_pd(e02, e13), hi = _mm256_unpackhi_pd(e02, e13);
        const __m256d w = _mm256_sub_pd(hi, lo);
        const __m256d xu = _mm256_add_pd(lo, _mm256_mul_pd(w, _mm256_sub_pd(t, _mm256_cvtepi32_pd(b))));
        const __m256d factor = _mm256_mul_pd(w, vnb);
        J = j == 0 ? factor : _mm256_mul_pd(J, factor);  // jac = 1.0 * (w n) = w n exactly on axis 0
        if constexpr (Unit)
          X[a] = xu;
        else
          X[a] = _mm256_add_pd(_mm256_set1_pd(lower[j]), _mm256_mul_pd(_mm256_set1_pd(width[j]), xu));
      }
      store_points4<D>(X, na, j0, xs + i);  // lanes are samples: four coordinates of each sample
    }
    _mm256_storeu_pd(jac + i, J);
  }
}

#if MCUBES_CPU_AVX512_DISPATCH
MCUBES_CPU_AVX512_WARNINGS_OFF  // GCC 12's false positives, as above
/// map_axes_avx2_of with eight samples per register (AVX-512F): per axis the bins of eight
/// samples, their edges e[b], e[b + 1] by two gathers, and the same IEEE operations per value in
/// the same order (the jacobian's products axis by axis), hence the same bits; the points are
/// written four coordinates at a time, as map_axes_avx2_of does, for each half of the eight.
/// n: samples [0, n) are computed in whole eights (the padded lanes as map_axis requires).
template <int D, bool Unit>
MCUBES_CPU_TARGET_AVX512 void map_axes_avx512_of(const map_view<D>& map, const double* lower, const double* width,
                                                 double inv_g, int n, const double* const* c, const double* const* u,
                                                 double* jac, int (*bin)[batch], point<D>* xs) {
  const int n_bins = map.n_bins;
  const double nb = static_cast<double>(n_bins);
  const std::size_t stride = static_cast<std::size_t>(n_bins) + 1;
  const __m512d vg = _mm512_set1_pd(inv_g), vnb = _mm512_set1_pd(nb), vtop = _mm512_set1_pd(nb - 1);
  for (int i = 0; i < n; i += 8) {
    __m512d J = _mm512_setzero_pd();
    for (int j0 = 0; j0 < D; j0 += 4) {
      const int na = D - j0 < 4 ? D - j0 : 4;
      __m512d X[4] = {};
      for (int a = 0; a < na; ++a) {
        const int j = j0 + a;
        const double* e = map.edges + static_cast<std::size_t>(j) * stride;
        const __m512d y = _mm512_mul_pd(_mm512_add_pd(_mm512_loadu_pd(c[j] + i), _mm512_loadu_pd(u[j] + i)), vg);
        const __m512d t = _mm512_mul_pd(y, vnb);
        const __m256i b = _mm512_cvttpd_epi32(_mm512_min_pd(t, vtop));
        _mm256_storeu_si256(reinterpret_cast<__m256i*>(bin[j] + i), b);
        // the pairs {e[b], e[b + 1]} by 128-bit loads (this CPU family's gathers are slower),
        // their indices read back from the bins just stored
        const unsigned* bi = reinterpret_cast<const unsigned*>(bin[j] + i);
        const __m256d e02 = _mm256_insertf128_pd(_mm256_castpd128_pd256(_mm_loadu_pd(e + bi[0])), _mm_loadu_pd(e + bi[2]), 1);
        const __m256d e46 = _mm256_insertf128_pd(_mm256_castpd128_pd256(_mm_loadu_pd(e + bi[4])), _mm_loadu_pd(e + bi[6]), 1);
        const __m256d e13 = _mm256_insertf128_pd(_mm256_castpd128_pd256(_mm_loadu_pd(e + bi[1])), _mm_loadu_pd(e + bi[3]), 1);
        const __m256d e57 = _mm256_insertf128_pd(_mm256_castpd128_pd256(_mm_loadu_pd(e + bi[5])), _mm_loadu_pd(e + bi[7]), 1);
        const __m512d ev = _mm512_insertf64x4(_mm512_castpd256_pd512(e02), e46, 1);  // 128-bit lanes: samples 0, 2, 4, 6
        const __m512d od = _mm512_insertf64x4(_mm512_castpd256_pd512(e13), e57, 1);  // 1, 3, 5, 7
        const __m512d lo = _mm512_unpacklo_pd(ev, od), hi = _mm512_unpackhi_pd(ev, od);
        const __m512d w = _mm512_sub_pd(hi, lo);
        const __m512d xu = _mm512_add_pd(lo, _mm512_mul_pd(w, _mm512_sub_pd(t, _mm512_cvtepi32_pd(b))));
        const __m512d factor = _mm512_mul_pd(w, vnb);
        J = j == 0 ? factor : _mm512_mul_pd(J, factor);  // jac = 1.0 * (w n) = w n exactly on axis 0
        if constexpr (Unit)
          X[a] = xu;
        else
          X[a] = _mm512_add_pd(_mm512_set1_pd(lower[j]), _mm512_mul_pd(_mm512_set1_pd(width[j]), xu));
      }
      for (int h = 0; h < 2; ++h) {  // samples i + 4h .. i + 4h + 3
        __m256d Y[4];
        for (int a = 0; a < 4; ++a) Y[a] = h == 0 ? _mm512_castpd512_pd256(X[a]) : _mm512_extractf64x4_pd(X[a], 1);
        store_points4<D>(Y, na, j0, xs + i + 4 * h);
      }
    }
    _mm512_storeu_pd(jac + i, J);
  }
}
MCUBES_CPU_AVX512_WARNINGS_ON
#endif

/// The map of a batch on a CPU with AVX2 (cpu_has_avx2): map_axes_avx512_of where the CPU has
/// AVX-512F, else map_axes_avx2_of; each in its unit-region form where every axis has lower 0 and
/// width 1. The same bits whichever runs.
template <int D>
MCUBES_CPU_TARGET_AVX2 void map_axes_wide(const map_view<D>& map, const double* lower, const double* width, double inv_g,
                                          int n, const double* const* c, const double* const* u, double* jac,
                                          int (*bin)[batch], point<D>* xs) {
  bool unit = true;
  for (int j = 0; j < D; ++j) unit = unit && lower[j] == 0.0 && width[j] == 1.0;
#if MCUBES_CPU_AVX512_DISPATCH
  if (cpu_has_avx512()) {
    if (unit)
      map_axes_avx512_of<D, true>(map, lower, width, inv_g, n, c, u, jac, bin, xs);
    else
      map_axes_avx512_of<D, false>(map, lower, width, inv_g, n, c, u, jac, bin, xs);
    return;
  }
#endif
  if (unit)
    map_axes_avx2_of<D, true>(map, lower, width, inv_g, n, c, u, jac, bin, xs);
  else
    map_axes_avx2_of<D, false>(map, lower, width, inv_g, n, c, u, jac, bin, xs);
}
#endif

#if MCUBES_CPU_AVX2_DISPATCH
/// The per-sample terms of samples [0, n) of a batch (AVX2, four at a time), as add_sample and
/// add_bin_term (backend/cpu/fast_path.hpp, core/reduction.hpp) compute them: fj[i] = v[i] jac[i],
/// fj2[i] = fj[i]^2 and the level-0 quantum q[i] = floor(fj2[i] ts_i + u_i), with ts_i = ts, or
/// ts / pd[i] where pd is given (VEGAS+: bin_scale / n_c), and u_i = quantization_dither(index_i)
/// (its 32-bit integer steps in 32-bit lanes, converted exactly), index_i = first + i, or
/// listed[i] where listed is given. Returns the mask of the samples that take exactly these
/// (bit i: fj2 finite and fj2 ts + u_i below 2^52, where the truncation is the exact
/// floor(x + 2^52) - 2^52); the others (non-finite, or a term of 2^52 units or more) go through
/// add_sample. The same IEEE operations (no FMA: this target has none), hence the same values.
MCUBES_CPU_TARGET_AVX2 inline std::uint64_t level0_terms_avx2(int n, const double* v, const double* jac, std::uint64_t first,
                                                              const std::uint64_t* listed, double ts, const double* pd,
                                                              double* fj, double* fj2, std::uint64_t* q) {
  const __m256i lane = _mm256_set_epi64x(3, 2, 1, 0);
  const __m256i golden = _mm256_set1_epi64x(0x9E3779B9), m1 = _mm256_set1_epi64x(0x85EBCA6B),
                m2 = _mm256_set1_epi64x(0xC2B2AE35);
  const __m256i low = _mm256_set1_epi64x(0xFFFFFFFF), exponent = _mm256_set1_epi64x(0x4330000000000000);
  const __m256d two52 = _mm256_set1_pd(4503599627370496.0), inv32 = _mm256_set1_pd(1.0 / 4294967296.0);
  const __m256d vts = _mm256_set1_pd(ts), zero = _mm256_setzero_pd();
  std::uint64_t simple = 0;
  for (int i = 0; i < n; i += 4) {
    const __m256d f = _mm256_mul_pd(_mm256_loadu_pd(v + i), _mm256_loadu_pd(jac + i));
    const __m256d f2 = _mm256_mul_pd(f, f);
    _mm256_storeu_pd(fj + i, f);
    _mm256_storeu_pd(fj2 + i, f2);
    // quantization_dither: h = lo ^ hi * 0x9E3779B9, then fmix32 (each step in the low 32 bits of a lane)
    const __m256i index =
        listed != nullptr ? _mm256_loadu_si256(reinterpret_cast<const __m256i*>(listed + i))
                          : _mm256_add_epi64(_mm256_set1_epi64x(static_cast<long long>(first + static_cast<std::uint64_t>(i))), lane);
    __m256i h = _mm256_xor_si256(index, _mm256_mullo_epi32(_mm256_srli_epi64(index, 32), golden));
    h = _mm256_and_si256(h, low);
    h = _mm256_xor_si256(h, _mm256_srli_epi32(h, 16));
    h = _mm256_and_si256(_mm256_mullo_epi32(h, m1), low);
    h = _mm256_xor_si256(h, _mm256_srli_epi32(h, 13));
    h = _mm256_and_si256(_mm256_mullo_epi32(h, m2), low);
    h = _mm256_xor_si256(h, _mm256_srli_epi32(h, 16));
    const __m256d hd = _mm256_sub_pd(_mm256_castsi256_pd(_mm256_or_si256(h, exponent)), two52);  // h exactly
    const __m256d u = _mm256_mul_pd(hd, inv32);
    const __m256d x = _mm256_add_pd(_mm256_mul_pd(f2, pd != nullptr ? _mm256_div_pd(vts, _mm256_loadu_pd(pd + i)) : vts), u);
    const __m256d finite = _mm256_cmp_pd(_mm256_sub_pd(f2, f2), zero, _CMP_EQ_OQ);
    const __m256d small = _mm256_cmp_pd(x, two52, _CMP_LT_OQ);
    const __m256d r = _mm256_round_pd(_mm256_and_pd(x, _mm256_and_pd(finite, small)), _MM_FROUND_TO_ZERO | _MM_FROUND_NO_EXC);
    const __m256i qi = _mm256_sub_epi64(_mm256_castpd_si256(_mm256_add_pd(r, two52)), _mm256_castpd_si256(two52));
    _mm256_storeu_si256(reinterpret_cast<__m256i*>(q + i), qi);
    simple |= static_cast<std::uint64_t>(_mm256_movemask_pd(_mm256_and_pd(finite, small))) << i;
  }
  return n < 64 ? simple & ((std::uint64_t(1) << n) - 1) : simple;
}
#endif

#if MCUBES_CPU_AVX2_DISPATCH
/// finish_cube (core/sampler.hpp) of n sub-cubes (AVX2, four at a time): mean[i] = s1[i] / pd[i],
/// var[i] = (s2[i] - s1[i] mean[i]) / (pd[i] (pd[i] - 1)) (0 where not positive, NaN kept) and,
/// when `shares`, share[i] = cube_share(var[i] pd[i], beta16) (core/cube_counts.hpp: five
/// correctly rounded square roots, then binary powering lowest bit first). The same IEEE
/// operations in the same order lane by lane (no FMA on this target), hence finish_cube's bits.
/// A vector copy of finish_cube and cube_share: a change there must be made here too
/// (DeterminismCpu.FastPathEqualsSerialSampleChunk fails otherwise: e.g. one square root fewer).
MCUBES_CPU_TARGET_AVX2 inline void finish_cubes_avx2(int n, const double* s1, const double* s2, const double* pd,
                                                     std::uint32_t beta16, bool shares, double* mean, double* var,
                                                     double* share) {
  const __m256d zero = _mm256_setzero_pd(), one = _mm256_set1_pd(1.0), top = _mm256_set1_pd(1.7976931348623157e308);
  for (int i = 0; i < n; i += 4) {
    const int k = n - i < 4 ? n - i : 4;
    __m256d a1 = one, a2 = one, p = _mm256_set1_pd(2.0);  // padded lanes: harmless values
    if (k == 4) {
      a1 = _mm256_loadu_pd(s1 + i), a2 = _mm256_loadu_pd(s2 + i), p = _mm256_loadu_pd(pd + i);
    } else {
      alignas(32) double b1[4] = {1, 1, 1, 1}, b2[4] = {1, 1, 1, 1}, bp[4] = {2, 2, 2, 2};
      for (int l = 0; l < k; ++l) b1[l] = s1[i + l], b2[l] = s2[i + l], bp[l] = pd[i + l];
      a1 = _mm256_load_pd(b1), a2 = _mm256_load_pd(b2), p = _mm256_load_pd(bp);
    }
    const __m256d m = _mm256_div_pd(a1, p);
    __m256d v = _mm256_div_pd(_mm256_sub_pd(a2, _mm256_mul_pd(a1, m)), _mm256_mul_pd(p, _mm256_sub_pd(p, one)));
    v = _mm256_andnot_pd(_mm256_cmp_pd(v, zero, _CMP_LE_OQ), v);  // var <= 0 -> 0; NaN kept
    alignas(32) double om[4], ov[4], os[4];
    _mm256_store_pd(om, m);
    _mm256_store_pd(ov, v);
    if (shares) {
      const __m256d x = _mm256_mul_pd(v, p);
      const __m256d valid = _mm256_and_pd(_mm256_cmp_pd(x, zero, _CMP_GT_OQ), _mm256_cmp_pd(x, top, _CMP_LE_OQ));
      __m256d d = one;
      if (beta16 != 0) {
        __m256d r = x;
        for (int q = 0; q < 5; ++q) r = _mm256_sqrt_pd(r);
        __m256d base = r;
        for (std::uint32_t e = beta16; e != 0; e >>= 1) {
          if (e & 1u) d = _mm256_mul_pd(d, base);
          base = _mm256_mul_pd(base, base);
        }
      }
      _mm256_store_pd(os, _mm256_and_pd(valid, d));  // 0 for var <= 0, NaN or +Inf
    }
    for (int l = 0; l < k; ++l) {
      mean[i + l] = om[l];
      var[i + l] = ov[l];
      if (shares) share[i + l] = os[l];
    }
  }
}
#endif

/// Sub-cube coordinates of consecutive samples, per axis. Along the sample index, the coordinate of
/// axis j is floor(s / (g^j p)) mod g: it repeats with the cycle g^(j+1) p. For the axes whose cycle
/// is at most max_cycle samples, `data` holds one cycle plus one batch (so that any batch is a
/// contiguous slice), as exact doubles; the other axes change at most every max_cycle / g samples
/// and are filled run by run. Depends only on (g, p): built once per pass, shared by the threads.
template <int D>
struct coordinate_tables {
  static constexpr std::uint64_t max_cycle = 1024;
  std::uint64_t cycle[D];    ///< g^(j+1) p if tabulated, else 0
  std::size_t offset[D];     ///< start of axis j's table in data
  std::vector<double> data;
  coordinate_tables(std::uint64_t g, std::uint64_t p) {
    std::uint64_t run = p;  // g^j p: samples per value of axis j
    std::size_t size = 0;
    for (int j = 0; j < D; ++j) {
      cycle[j] = run <= max_cycle / g ? run * g : 0;
      offset[j] = size;
      if (cycle[j]) size += cycle[j] + batch;
      if (run <= max_cycle) run *= g;  // else stays above max_cycle: no further table, no overflow
    }
    data.resize(size);
    run = p;
    for (int j = 0; j < D; ++j, run *= g) {
      if (!cycle[j]) break;
      for (std::uint64_t s = 0; s < cycle[j] + batch; ++s) data[offset[j] + s] = static_cast<double>((s / run) % g);
    }
  }
};

#if defined(__GNUC__) || defined(__clang__)
/// Inlined into the sampling loop whatever the compiler's heuristics (the per-sample step of the
/// fast path and of the array path).
#define MCUBES_CPU_INLINE inline __attribute__((always_inline))
#else
#define MCUBES_CPU_INLINE inline
#endif

}  // namespace cpu_detail
}  // namespace mcubes

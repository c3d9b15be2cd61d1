#pragma once
/// @file reduction.hpp
/// Deterministic reductions: sums whose bits do not depend on the degree of
/// parallelism.
///
/// 1. Floating-point sums of per-chunk partials use ONE fixed tree: the complete binary tree over
///    the partials padded with zeros to the next power of two, adjacent pairs first
///    (level by level: a'[i] = a[2i] + a[2i+1]). Every aligned power-of-two group of leaves is a node
///    of that tree, so a backend may reduce aligned groups of any power-of-two size (a thread's tile,
///    a warp, a block of 64..1024 threads) and finish with pairwise_sum over the group sums: the
///    bits are the same.
/// 2. Bin contributions are sums of many small non-negative terms scattered over d x n_bins bins;
///    they are accumulated as exact 128-bit unsigned fixed-point integers (bin_accumulator): each
///    term is quantized to an integer with a per-iteration power-of-two scale, and integer addition
///    is associative, so any order of atomics or merges gives the same bits, on CPU and GPU alike.
///    Terms too large for the scale go to overflow levels (bin_level): the same exact integers,
///    in units 2^40, 2^80, ... times larger, so no term is clamped or re-sampled for growing by up
///    to 2^672 over the scale's reference (combine_bin_level folds the levels into one double).

#include <cstdint>
#include <cmath>

#include "../config.hpp"
#include "fixed_tree.hpp"
#include "portable_math.hpp"

namespace mcubes {

/// Sum of a[0..n) over the fixed padded pairwise tree described above: fixed_tree_reduce
/// (fixed_tree.hpp) with a + b, padding 0.0. `width` must be a power of two >= n (call with the
/// default to use the next power of two). O(n) additions, O(log n) depth.
MCUBES_HOST_DEVICE inline double pairwise_sum(const double* a, std::uint64_t n, std::uint64_t width) {
  return fixed_tree_reduce(a, n, width, plus_merge{});
}

MCUBES_HOST_DEVICE inline double pairwise_sum(const double* a, std::uint64_t n) { return pairwise_sum(a, n, next_pow2(n)); }

/// An exact 128-bit unsigned fixed-point accumulator of one bin: value = (hi * 2^64 + lo) / scale.
struct bin_accumulator {
  std::uint64_t lo = 0;
  std::uint64_t hi = 0;
  MCUBES_HOST_DEVICE void add(std::uint64_t q) {
    lo += q;
    if (lo < q) ++hi;  // carry
  }
  MCUBES_HOST_DEVICE void add(const bin_accumulator& o) {
    add(o.lo);
    hi += o.hi;
  }
  /// The integer value as a double (rounded once per word; the same bits on host and device).
  MCUBES_HOST_DEVICE double to_double() const { return ldexp(static_cast<double>(hi), 64) + static_cast<double>(lo); }
};

/// Bound of the quantized value of one term of a bin level: terms at or above it go to the next
/// level (bin_level), or are clamped to 2^63 - 1 above the top level (and the caller re-accumulates
/// with a smaller scale, see vegas.hpp), so that 2^64 terms fit in 128 bits.
inline constexpr double max_quantized_term = 9223372036854775807.0;  // 2^63 (as a double)

/// Dither in [0,1) for sample `index`: h 2^-32 with h = fmix32(lo ^ hi * 0x9E3779B9), lo and hi
/// the 32-bit halves of the index and fmix32 the finaliser of MurmurHash3 (Appleby): a bijection of
/// 32-bit words with full avalanche, so over any 2^32 consecutive indices of equal hi the dithers
/// are a permutation of the 2^32 multiples of 2^-32. Deterministic, independent of the integrand,
/// and cheap on GPUs (32-bit multiplies only: a 64-bit mixer such as splitmix64 measured 2% slower
/// for f4 8-D V-Sample on the H100, 39.1 vs 39.9 G evaluations/s).
MCUBES_HOST_DEVICE inline double quantization_dither(std::uint64_t index) {
  std::uint32_t h = static_cast<std::uint32_t>(index) ^ (static_cast<std::uint32_t>(index >> 32) * 0x9E3779B9u);
  h ^= h >> 16;
  h *= 0x85EBCA6Bu;
  h ^= h >> 13;
  h *= 0xC2B2AE35u;
  h ^= h >> 16;
  return static_cast<double>(h) * 0x1p-32;
}

/// Quantizes a non-negative term c with the power-of-two scale s and dither u in [0,1):
/// floor(c * s + u), clamped to 2^63 - 1. Dithered (stochastic) rounding keeps the expected sum
/// of many terms far below one unit exact; the product by a power of two is exact and the
/// conversion truncates, so the bits are identical on host and device for the same c and u.
MCUBES_HOST_DEVICE inline std::uint64_t quantize(double c, double scale, double dither) {
  const double q = c * scale + dither;
  if (!(q < max_quantized_term)) return ~std::uint64_t(0) >> 1;  // also catches NaN (never expected)
  return static_cast<std::uint64_t>(q);
}

/// The power-of-two scale that puts `reference` (> 0) in [2^31, 2^32): terms up to 2^32 times
/// larger than the reference fit level 0, larger ones go to the overflow levels (bin_level);
/// smaller terms are resolved to 2^-31 of it and below that by dithered rounding. Why 2^31: the
/// terms of a pass are then mostly below 2^32 units, and the device adds such a term to a shared
/// bin with one 32-bit atomic (the high half only on a carry; vegas_kernels.cuh shared_bin_sink):
/// f4 8-D V-Sample ran at 43.5 G evaluations/s on the H100 against 39.9 with [2^40, 2^41).
/// Returns 1 for a reference that is not finite and positive.
inline double scale_for(double reference) {
  if (!(reference > 0) || !std::isfinite(reference)) return 1.0;
  int e = 0;
  std::frexp(reference, &e);  // reference = f * 2^e, f in [0.5, 1)
  int s = 32 - e;             // reference * 2^s in [2^31, 2^32)
  if (s > 1000) s = 1000;
  if (s < -1000) s = -1000;
  return std::ldexp(1.0, s);
}

/// Bits between successive bin levels: level L counts in units of 2^(40 L) of level 0.
inline constexpr int bin_level_bits = 40;
/// Highest overflow level: terms up to 2^(63 + 40 * 16) = 2^703 units of the scale fit.
inline constexpr int max_bin_level = 16;

/// The bin level of a scaled term t = c * scale >= 0, and t in that level's units: the smallest
/// L in [0, max_bin_level] with t 2^(-40 L) < 2^63 (max_bin_level if there is none, and for
/// t = Inf or NaN). `t` is replaced by t 2^(-40 L) (exact: products by powers of two of numbers
/// >= 2^63 neither round nor underflow). A term of level L >= 1 is at least 2^(63-40) = 2^23 of
/// its level's units, so it keeps >= 23 significant bits before dithered rounding.
/// Monotone in t, and independent of the dither: level 0 is exactly t < 2^63 (below 2^63 the
/// doubles are 1024 apart, so t + u with u in [0,1) stays below 2^63). So the host knows the
/// highest level of a pass from its largest term alone (top_bin_level).
MCUBES_HOST_DEVICE inline int bin_level(double& t) {
  int level = 0;
  while (level < max_bin_level && !(t < max_quantized_term)) {
    t *= 0x1p-40;
    ++level;
  }
  return level;
}

/// Highest bin level of a pass whose largest unscaled term is max_c, with scale `scale`.
MCUBES_HOST_DEVICE inline int top_bin_level(double max_c, double scale) {
  double t = max_c * scale;
  return max_c > 0 ? bin_level(t) : 0;
}

/// Adds the scaled term t = c * scale with dither u to the bins of its sample (bin_of(j): its bin
/// on axis j, j < axes: D, or 1 for m-Cubes1D, whose one map is adapted to axis 0's histogram) in
/// `bins` (a sink: add(axis, bin, q) for level 0, add_level(level, axis, bin, q) for levels >= 1): q = floor(t + u) at level 0 (the same integer as quantize(c, scale, u)),
/// else floor(t 2^(-40 L) + u) at level L = bin_level(t), clamped to 2^63 - 1 beyond the top level
/// (the caller re-accumulates then, needs_rescale). Zero quanta are not added. The overflow path
/// gets a copy of the sink (add_overflow_term), so a sink must write through pointers.
template <int D>
struct bin_indices {
  int b[D];
};

/// The rare part of add_bin_term: a term of an overflow level. Not inlined, and given copies of
/// the sink and of the bin indices, so that the registers of the sampling loop are allocated as if
/// it were not there (inlined, it made the 8-D V-Sample kernel spill 200 bytes at 80 registers).
template <int D, class Bins>
MCUBES_HOST_DEVICE MCUBES_NOINLINE void add_overflow_term(Bins bins, double t, double u, bin_indices<D> bin, int axes) {
  const int level = bin_level(t);
  const std::uint64_t q = quantize(t, 1.0, u);  // t + u < 2^63, or clamped above the top level
  const int n_axes = axes < D ? axes : D;
  for (int j = 0; j < n_axes; ++j) bins.add_level(level, j, bin.b[j], q);
}

// bin_of is a host lambda on the CPU fast path and a device one in the kernels: the call is valid
// in each instantiation that runs, so nvcc's host/device execution-space check is disabled for
// add_level0_quantum and add_bin_term.
/// Adds the level-0 quantum q (> 0) to the bins of its sample on the first `axes` axes (add_bin_term's
/// common case; the CPU fast path calls it with quanta it computed four at a time).
#if defined(__CUDACC__)
#pragma nv_exec_check_disable
#endif
template <int D, class Bins, class BinOf>
MCUBES_HOST_DEVICE inline void add_level0_quantum(Bins& bins, std::uint64_t q, const BinOf& bin_of, int axes = D) {
  if (axes >= D) {  // every axis (the usual case): a loop of compile-time length, unrolled
    for (int j = 0; j < D; ++j) bins.add(j, bin_of(j), q);
  } else {  // m-Cubes1D: axes = 1
    for (int j = 0; j < axes; ++j) bins.add(j, bin_of(j), q);
  }
}

#if defined(__CUDACC__)
#pragma nv_exec_check_disable
#endif
template <int D, class Bins, class BinOf>
MCUBES_HOST_DEVICE inline void add_bin_term(Bins& bins, double t, double u, const BinOf& bin_of, int axes = D) {
  if (t < max_quantized_term) {  // the common case: level 0
    const std::uint64_t q = static_cast<std::uint64_t>(t + u);
    if (q != 0) add_level0_quantum<D>(bins, q, bin_of, axes);
    return;
  }
  bin_indices<D> bin;
  for (int j = 0; j < D; ++j) bin.b[j] = bin_of(j);
  add_overflow_term<D>(bins, t, u, bin, axes);
}

/// One step of folding the levels of a bin into a double, from the top level down:
/// acc = (levels above, in units of this level) -> acc * 2^40 + a (this level's integer), and
/// `first` for the top level (acc = a). The same operations on host and device (never fused), so
/// the same bits; for a bin with level 0 only, a.to_double() as before. Exact up to the rounding of
/// the additions (relative 2^-53 per level); at most 2^(127 + 640) < DBL_MAX.
MCUBES_HOST_DEVICE inline double combine_bin_level(double acc, const bin_accumulator& a, bool first) {
  const double v = a.to_double();
  if (first) return v;
  return portable::det_add(portable::det_mul(acc, 0x1p40), v);  // acc * 2^40 + v
}

/// Smallest number of units of the largest term of a pass that needs no re-accumulation: 2^7, a
/// drop of 2^24 from the reference (at 2^31 units) since the last adapting pass. Below it the terms
/// are too coarse (the largest resolved to worse than 1%, the bulk mostly dithered).
inline constexpr double min_quantized_max = 128.0;

/// Whether the terms of a pass whose largest term is `max_c` must be re-accumulated under a new
/// scale: some were clamped beyond the top bin level (max_c * scale >= 2^703), or the largest is
/// below min_quantized_max units, so the quantization is too coarse.
inline bool needs_rescale(double max_c, double scale) {
  if (!(max_c > 0)) return false;
  const double q = max_c * scale;
  return !(std::ldexp(q, -bin_level_bits * max_bin_level) < max_quantized_term) || q < min_quantized_max;
}

}  // namespace mcubes

#pragma once
/// @file reduction.hpp
/// Deterministic reductions (seeds/002): sums whose bits do not depend on the degree of
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

#include <cstdint>
#include <cmath>

#include "../config.hpp"

namespace mcubes {

/// Sum of a[0..n) over the fixed padded pairwise tree described above. `width` must be a power of
/// two >= n (call with the default to use the next power of two). O(n) additions, O(log n) depth.
MCUBES_HOST_DEVICE inline double pairwise_sum(const double* a, std::uint64_t n, std::uint64_t width) {
  if (n == 0) return 0.0;
  if (width == 1) return a[0];
  const std::uint64_t half = width / 2;
  if (n <= half) return pairwise_sum(a, n, half) + 0.0;  // the padded right subtree is exactly 0.0
  return pairwise_sum(a, half, half) + pairwise_sum(a + half, n - half, half);
}

/// Smallest power of two >= n (1 for n = 0).
MCUBES_HOST_DEVICE inline std::uint64_t next_pow2(std::uint64_t n) {
  std::uint64_t w = 1;
  while (w < n) w <<= 1;
  return w;
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

/// Largest quantized value of one term: terms are clamped to it (and the caller re-accumulates with
/// a smaller scale, see vegas.hpp) so that 2^64 terms fit in 128 bits.
inline constexpr double max_quantized_term = 9223372036854775807.0;  // 2^63 (as a double)

/// Dither in [0,1) for sample `index`: the top 53 bits of splitmix64(index) (Steele et al. 2014),
/// a cheap, deterministic, well-mixed function of the index, independent of the integrand.
MCUBES_HOST_DEVICE inline double quantization_dither(std::uint64_t index) {
  std::uint64_t z = index + 0x9E3779B97F4A7C15ull;
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
  z ^= z >> 31;
  return static_cast<double>(z >> 11) * (1.0 / 9007199254740992.0);
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

/// The power-of-two scale that puts `reference` (> 0) in [2^40, 2^41): terms up to 2^22 times
/// larger than the reference fit without clamping; smaller terms are resolved to 2^-40 of it and
/// below that by dithered rounding. Returns 1 for a reference that is not finite and positive.
inline double scale_for(double reference) {
  if (!(reference > 0) || !std::isfinite(reference)) return 1.0;
  int e = 0;
  std::frexp(reference, &e);  // reference = f * 2^e, f in [0.5, 1)
  int s = 41 - e;             // reference * 2^s in [2^40, 2^41)
  if (s > 1000) s = 1000;
  if (s < -1000) s = -1000;
  return std::ldexp(1.0, s);
}

/// Whether the terms of a pass whose largest term is `max_c` must be re-accumulated under a new
/// scale: some were clamped (max_c * scale >= 2^63), or the largest is below 2^16 units so the
/// quantization is too coarse.
inline bool needs_rescale(double max_c, double scale) {
  if (!(max_c > 0)) return false;
  const double q = max_c * scale;
  return q >= max_quantized_term || q < 65536.0;
}

}  // namespace mcubes

#pragma once
/// @file float_bits.hpp
/// Exact integer <-> double conversions of the sampling hot path written with bit patterns and one
/// floating-point addition each, for the device. Why: on sm_90 (H100) the double <-> integer
/// conversions (I2F.F64, F2I.F64; also FRND.F64) run at 16 results per clock per multiprocessor,
/// a quarter of the rate of DADD/DFMA (CUDA C++ Programming Guide, "Arithmetic Instructions"
/// throughput table: "Type conversions from 32-bit integer types to 64-bit types" and "all other
/// type conversions" at 16 for compute capability 9.0), and the V-Sample kernels issue about 3 per
/// coordinate and sample. Every function here returns exactly what the conversion it replaces
/// returns (the bits, not only the value); tests/unit/test_float_bits.cpp checks them on the host,
/// tests/cuda/test_device_map.cu on the device.
///
/// The device forms use the CUDA intrinsics __hiloint2double / __double2loint (register moves, no
/// arithmetic) and __dadd_rd (PTX add.rm.f64: IEEE addition rounded toward -infinity, a plain
/// DADD with a rounding-mode modifier). The host forms are the same IEEE operations: bit patterns
/// through std::memcpy, and round-toward-minus-infinity addition emulated exactly in the default
/// rounding mode (add_rd). Host hot code keeps the conversions (they are fast on CPUs); the host
/// forms are here so that the device arithmetic can be tested bit for bit without a GPU.

#include <cmath>
#include <cstdint>
#include <cstring>

#include "../config.hpp"

/// 1 (the default): the device sampling code (sample_stream::to_double, map_view::map) uses the
/// forms below; 0: the conversion instructions (kept for timing comparisons). The same bits.
#ifndef MCUBES_FLOAT_BITS
#define MCUBES_FLOAT_BITS 1
#endif

namespace mcubes {
namespace float_bits {

/// 2^52: a double in [2^52, 2^53) has spacing 1, so 2^52 + k (k an integer, 0 <= k < 2^32) is the
/// double with high word 0x43300000 and low word k.
inline constexpr double two52 = 4503599627370496.0;
/// High word of the doubles 2^52 + k, 0 <= k < 2^32.
inline constexpr std::uint32_t two52_hi = 0x43300000u;

/// The double whose IEEE bit pattern is hi * 2^32 + lo.
MCUBES_HOST_DEVICE inline double from_words(std::uint32_t hi, std::uint32_t lo) {
#if defined(__CUDA_ARCH__)
  return __hiloint2double(static_cast<int>(hi), static_cast<int>(lo));
#else
  const std::uint64_t bits = (static_cast<std::uint64_t>(hi) << 32) | lo;
  double d;
  std::memcpy(&d, &bits, sizeof d);
  return d;
#endif
}

/// The low 32 bits of the IEEE bit pattern of d.
MCUBES_HOST_DEVICE inline std::uint32_t low_word(double d) {
#if defined(__CUDA_ARCH__)
  return static_cast<std::uint32_t>(__double2loint(d));
#else
  std::uint64_t bits;
  std::memcpy(&bits, &d, sizeof d);
  return static_cast<std::uint32_t>(bits);
#endif
}

/// a + b rounded toward -infinity (IEEE 754 roundTowardNegative), for finite a, b whose sum does
/// not overflow. Device: __dadd_rd (PTX add.rm.f64). Host (tests only; not for hot code): the sum
/// rounded to nearest, s, and its exact error e = (a + b) - s by Knuth's TwoSum (exact in
/// round-to-nearest); a + b lies strictly between the predecessor of s and s when e < 0, so the
/// round-down is that predecessor; otherwise it is s.
MCUBES_HOST_DEVICE inline double add_rd(double a, double b) {
#if defined(__CUDA_ARCH__)
  return __dadd_rd(a, b);
#else
  const double s = a + b;
  const double bb = s - a;
  const double e = (a - (s - bb)) + (b - bb);
  return e < 0 ? std::nextafter(s, -INFINITY) : s;
#endif
}

/// (double)k for 0 <= k < 2^32: (2^52 + k) - 2^52, both exact (the difference of two doubles in
/// [2^52, 2^53) is an integer below 2^52, representable). One DADD instead of I2F.F64.U32.
MCUBES_HOST_DEVICE inline double u32_to_double(std::uint32_t k) { return from_words(two52_hi, k) - two52; }

/// 0x41300000'w (high word, low word) is the double 2^20 + w 2^-32 (exponent 20, the 32 low
/// significand bits w); this constant, 2^20 - 2^-33 = (2^53 - 1) 2^-33, is exact (53 bits).
inline constexpr double u01_bias = 0x1.fffffffffffffp+19;  // 2^20 - 2^-33
static_assert(u01_bias == 1048576.0 - 1.0 / 8589934592.0, "2^20 - 2^-33 must be exact");

/// r123::u01<double>(w) = (w + 1/2) 2^-32 by bits: (2^20 + w 2^-32) - (2^20 - 2^-33) =
/// (2w + 1) 2^-33 exactly (the operands are within a factor 2 of each other, so by Sterbenz's lemma
/// the difference is exact), and (2w + 1) 2^-33 has at most 33 significant bits, so it is also the
/// exact value of u01 (w 2^-32 + 2^-33, whose product and sum are exact). One DADD instead of
/// I2F.F64.U32 and a DFMA. Never 0 or 1: in [2^-33, 1 - 2^-33].
MCUBES_HOST_DEVICE inline double u01(std::uint32_t w) { return from_words(0x41300000u, w) - u01_bias; }

/// floor(t) for 0 <= t < 2^31, clamped to top (0 <= top < 2^31): returns b = min(floor(t), top) =
/// min((int)t, top) and sets bd = (double)b, both exactly, without a conversion instruction:
///  - the clamp first, on t: tc = min(t, top + 1/2) (top + 1/2 is exact) has floor(tc) =
///    min(floor(t), top): tc = t when t < top + 1/2 (then floor(t) <= top), else floor(tc) = top
///    <= floor(t);
///  - d = tc + 2^52 rounded toward -infinity is 2^52 + floor(tc): the exact sum lies in
///    [2^52, 2^53), where the doubles are the integers, and rounding down gives the largest integer
///    not above it;
///  - b is the low word of d (its high word is 0x43300000, since floor(tc) < 2^32), and
///    bd = d - 2^52 = floor(tc) exactly (an integer below 2^52).
/// DSETP, two FSELs (the min) and two DADDs instead of F2I.F64.TRUNC, IMNMX and I2F.F64. Clamping
/// the integer instead (IMNMX on the low word, then (2^52 + b) - 2^52 from the words) is one
/// instruction shorter per axis, but building the register pair (b, 0x43300000) made ptxas spill in
/// the 8-D V-Sample kernel (68 bytes instead of 12 at 80 registers); this form spills less than the
/// conversions did (8 bytes).
MCUBES_HOST_DEVICE inline int clamped_floor(double t, int top, double& bd) {
  const double tt = top + 0.5;  // a loop invariant (top is): hoisted out of the sampling loop
  const double tc = t < tt ? t : tt;
  const double d = add_rd(tc, two52);
  bd = d - two52;
  return static_cast<int>(low_word(d));
}

}  // namespace float_bits
}  // namespace mcubes

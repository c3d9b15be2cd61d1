#pragma once
/// @file portable_math.hpp
/// Arithmetic that gives the same bits on the host and on the device, for the map adaptation
/// (adaptive_map.hpp), which runs on the CPU for the CPU backend and on the GPU for the CUDA
/// backend and must produce the same edges on both (so that both backends draw the same samples).
///
/// - det_mul / det_add / det_sub (defined in fixed_tree.hpp): IEEE round-to-nearest operations that are never contracted into
///   a fused multiply-add: __dmul_rn/__dadd_rn on the device (nvcc does not fuse them, whatever
///   --fmad says); plain operators on the host, where the baseline x86-64 target has no FMA (a host
///   build with FMA enabled must add -ffp-contract=off, as documented in backend/cpu.hpp).
/// - det_log, det_exp, det_pow: natural logarithm, exponential and power built only from those
///   operations, frexp/ldexp/floor (exact on both) and IEEE division, so they give identical bits on
///   both sides (CUDA's log/exp/pow and glibc's may differ in the last bit). Accuracy: within a few
///   units in the last place over the ranges used (tested against std:: in tests/unit).

#include <cmath>
#include <cstdint>
#include <cstring>

#include "../config.hpp"
#include "fixed_tree.hpp"

namespace mcubes {
namespace portable {

// det_mul, det_add, det_sub: core/fixed_tree.hpp (the one never-fused multiply and add).

/// ln(x) for finite x > 0 (normal or subnormal). x = m 2^e with m in [sqrt(1/2), sqrt(2)),
/// ln m = 2 atanh(s), s = (m - 1)/(m + 1), |s| <= 0.1716, by its series to s^23 (truncation
/// below 1e-19 relative); ln 2 in two parts so that e ln2_hi is exact.
MCUBES_HOST_DEVICE inline double det_log(double x) {
  int e = 0;
  double m = frexp(x, &e);  // x = m 2^e, m in [0.5, 1)
  if (m < 0.70710678118654752440) {
    m = det_mul(m, 2.0);
    e -= 1;
  }
  const double s = det_sub(m, 1.0) / det_add(m, 1.0);
  const double s2 = det_mul(s, s);
  // sum_{k=0..11} s2^k / (2k + 1), by Horner
  double p = 1.0 / 23.0;
  p = det_add(det_mul(p, s2), 1.0 / 21.0);
  p = det_add(det_mul(p, s2), 1.0 / 19.0);
  p = det_add(det_mul(p, s2), 1.0 / 17.0);
  p = det_add(det_mul(p, s2), 1.0 / 15.0);
  p = det_add(det_mul(p, s2), 1.0 / 13.0);
  p = det_add(det_mul(p, s2), 1.0 / 11.0);
  p = det_add(det_mul(p, s2), 1.0 / 9.0);
  p = det_add(det_mul(p, s2), 1.0 / 7.0);
  p = det_add(det_mul(p, s2), 1.0 / 5.0);
  p = det_add(det_mul(p, s2), 1.0 / 3.0);
  const double log_m = det_add(det_mul(det_mul(2.0, s), det_mul(p, s2)), det_mul(2.0, s));  // 2s + 2s s2 p'
  constexpr double ln2_hi = 6.93147180369123816490e-01;  // 32 significant bits: e * ln2_hi is exact
  constexpr double ln2_lo = 1.90821492927058770002e-10;
  const double ed = static_cast<double>(e);
  return det_add(det_mul(ed, ln2_hi), det_add(det_mul(ed, ln2_lo), log_m));
}

/// e^y for finite y <= 709 (underflows gracefully to subnormals and 0 below -745).
/// y = k ln2 + r, |r| <= ln2/2, e^r by its Taylor series to r^16 / 16! (truncation below 1e-19
/// relative), then scaled by 2^k (exact, ldexp).
MCUBES_HOST_DEVICE inline double det_exp(double y) {
  if (y < -750.0) return 0.0;
  constexpr double inv_ln2 = 1.44269504088896338700e+00;
  constexpr double ln2_hi = 6.93147180369123816490e-01;
  constexpr double ln2_lo = 1.90821492927058770002e-10;
  const double k = floor(det_add(det_mul(y, inv_ln2), 0.5));
  const double r = det_sub(det_sub(y, det_mul(k, ln2_hi)), det_mul(k, ln2_lo));
  double p = 1.0 / 20922789888000.0;  // 1/16!
  const double inv_fact[] = {1.0 / 1307674368000.0, 1.0 / 87178291200.0, 1.0 / 6227020800.0, 1.0 / 479001600.0,
                             1.0 / 39916800.0,      1.0 / 3628800.0,     1.0 / 362880.0,     1.0 / 40320.0,
                             1.0 / 5040.0,          1.0 / 720.0,         1.0 / 120.0,        1.0 / 24.0,
                             1.0 / 6.0,             0.5,                 1.0,                1.0};
  for (double c : inv_fact) p = det_add(det_mul(p, r), c);
  return ldexp(p, static_cast<int>(k));
}

/// t^alpha for t in (0, 1] and alpha >= 0: exact shortcuts for alpha = 1 and 1.5 (t sqrt t, sqrt is
/// correctly rounded on both sides), else det_exp(alpha det_log t).
MCUBES_HOST_DEVICE inline double det_pow(double t, double alpha) {
  if (alpha == 1.0) return t;
  if (alpha == 1.5) return det_mul(t, sqrt(t));
  return det_exp(det_mul(alpha, det_log(t)));
}

/// The exact reciprocal 2^-k of d = 2^k for 0 <= k <= 1022, else 0 (d not such a power of two:
/// 0, negative, not an integer power, too large, infinite or NaN). 2^-k has the exponent field
/// 2046 - (1023 + k) of d's, so its bits are 0x7FE0000000000000 minus d's. Where it is not 0,
/// x * count_reciprocal(d) is x / d bit for bit for every double x: the exact quotient x 2^-k is
/// one real number that both operations round once, to nearest (subnormal results, signed zeros,
/// infinities and NaNs alike), and a multiplication is one instruction where a double division is
/// a ~12-instruction sequence on GPUs (sampling_params::p_inv, core/sampler.hpp).
MCUBES_HOST_DEVICE inline double count_reciprocal(double d) {
#if defined(__CUDA_ARCH__)
  const auto b = static_cast<std::uint64_t>(__double_as_longlong(d));
#else
  std::uint64_t b;
  std::memcpy(&b, &d, sizeof b);
#endif
  // d = 2^k, 0 <= k <= 1022: a zero mantissa and an exponent field in [1023, 2045] (sign 0)
  if ((b & 0x000FFFFFFFFFFFFFull) != 0 || b - 0x3FF0000000000000ull > 0x3FE0000000000000ull) return 0;
  const std::uint64_t rb = 0x7FE0000000000000ull - b;
#if defined(__CUDA_ARCH__)
  return __longlong_as_double(static_cast<long long>(rb));
#else
  double r;
  std::memcpy(&r, &rb, sizeof r);
  return r;
#endif
}

}  // namespace portable
}  // namespace mcubes

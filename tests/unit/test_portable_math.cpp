// Unit tests of core/portable_math.hpp: det_log, det_exp and det_pow (the map adaptation's
// host/device-identical functions) against the C library, in units of the last place; and the
// quantized weights of the map adaptation (adaptive_map.hpp, map_adaptation); count_reciprocal's
// product bitwise against the division it replaces.
#include <gtest/gtest.h>

#include <cfloat>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <random>
#include <vector>

#include "mcubes/core/adaptive_map.hpp"
#include "mcubes/core/portable_math.hpp"

namespace {

constexpr std::uint64_t test_seed = 20261122;
// det_log/det_exp round a dozen operations; 4 units in the last place bounds their error.
constexpr double max_ulps = 4.0;

double ulps(double got, double want) {
  if (got == want) return 0;
  const double ulp = std::nextafter(std::fabs(want), INFINITY) - std::fabs(want);
  return std::fabs(got - want) / ulp;
}

TEST(PortableMath, LogMatchesLibm) {
  std::mt19937_64 rng(test_seed);
  std::uniform_real_distribution<double> unif(0.0, 1.0);
  for (int i = 0; i < 200000; ++i) {
    // log-uniform over the whole positive range used by the damping: f in [1e-300, 1)
    const double x = std::pow(10.0, -300.0 * unif(rng));
    const double got = mcubes::portable::det_log(x), want = std::log(x);
    ASSERT_LE(std::fabs(got - want), max_ulps * DBL_EPSILON * std::fmax(std::fabs(want), 1.0)) << "x = " << x;
  }
  // near 1, where ln x -> 0 and a relative bound is the meaningful one
  for (double x : {1.0 - 1e-16, 1.0 - 1e-12, 1.0 - 1e-6, 0.999, 1.0 + 1e-12, 1.5, 0.7071067811865476, 0.7071067811865475}) {
    EXPECT_LE(ulps(mcubes::portable::det_log(x), std::log(x)), max_ulps) << "x = " << x;
  }
  EXPECT_EQ(mcubes::portable::det_log(1.0), 0.0);
  EXPECT_LE(ulps(mcubes::portable::det_log(4.9e-324), std::log(4.9e-324)), max_ulps);  // subnormal
}

TEST(PortableMath, ExpMatchesLibm) {
  std::mt19937_64 rng(test_seed + 1);
  std::uniform_real_distribution<double> unif(-700.0, 700.0);
  for (int i = 0; i < 200000; ++i) {
    const double y = unif(rng);
    ASSERT_LE(ulps(mcubes::portable::det_exp(y), std::exp(y)), max_ulps) << "y = " << y;
  }
  EXPECT_EQ(mcubes::portable::det_exp(0.0), 1.0);
  EXPECT_EQ(mcubes::portable::det_exp(-800.0), 0.0);
}

TEST(PortableMath, PowMatchesLibmOnTheDampingRange) {
  std::mt19937_64 rng(test_seed + 2);
  std::uniform_real_distribution<double> unif(0.0, 1.0);
  for (double alpha : {0.5, 0.7, 1.0, 1.5, 2.0, 3.0}) {
    for (int i = 0; i < 20000; ++i) {
      const double t = std::pow(10.0, -3.0 * unif(rng));  // (1-f)/ln(1/f) is in (0.0014, 1]
      // det_pow(t, alpha) = exp(y), y = alpha ln t: the rounding of y (half an ulp of |y|, i.e.
      // |y| eps/2 absolute) and alpha times the error of det_log are a relative error of e^y of
      // about |y| ulps each
      const double y = std::fabs(alpha * std::log(t));
      ASSERT_LE(ulps(mcubes::portable::det_pow(t, alpha), std::pow(t, alpha)), max_ulps + 2 * y) << t << "^" << alpha;
    }
  }
  EXPECT_EQ(mcubes::portable::det_pow(0.25, 1.5), 0.125);
  EXPECT_EQ(mcubes::portable::det_pow(0.3, 1.0), 0.3);
}

std::uint64_t bits_of(double x) {
  std::uint64_t b;
  std::memcpy(&b, &x, sizeof b);
  return b;
}

double from_bits(std::uint64_t b) {
  double x;
  std::memcpy(&x, &b, sizeof x);
  return x;
}

// count_reciprocal(d) is 2^-k exactly for d = 2^k (0 <= k <= 1022) and x * 2^-k is x / d bit for
// bit, over the whole exponent range, against dividends of every kind (random bit patterns:
// normal, subnormal, huge; zeros, infinities, NaN); it is 0 for the divisors next to the powers and
// those that must be left to the division (0, 3, 12, 2^1023, infinity, negative, subnormal, NaN).
TEST(PortableMath, CountReciprocalTimesIsTheDivisionBitwise) {
  std::mt19937_64 rng(test_seed);
  std::vector<double> divisors = {0.0, 1.0, 2.0, 3.0, 4.0, 6.0, 12.0, 1.5, 0.5, -2.0, 0x1p1022, 0x1p1023,
                                  std::numeric_limits<double>::infinity(), std::numeric_limits<double>::denorm_min(),
                                  std::numeric_limits<double>::quiet_NaN()};
  for (int k = 0; k <= 1023; ++k) {
    divisors.push_back(std::ldexp(1.0, k));
    divisors.push_back(std::nextafter(std::ldexp(1.0, k), INFINITY));
    divisors.push_back(std::nextafter(std::ldexp(1.0, k), 0.0));
  }
  for (std::uint64_t n = 1; n <= 4096; ++n) divisors.push_back(static_cast<double>(n) * static_cast<double>(n - 1));
  std::vector<double> xs = {0.0, -0.0, 1.0, -1.0, std::numeric_limits<double>::infinity(),
                            -std::numeric_limits<double>::infinity(), std::numeric_limits<double>::quiet_NaN(),
                            std::numeric_limits<double>::denorm_min(), std::numeric_limits<double>::min(),
                            std::numeric_limits<double>::max(), 0x1.fffffffffffffp-1022, 3.0 * 0x1p-1074};
  for (int i = 0; i < 400; ++i) xs.push_back(from_bits(rng()));
  std::uniform_real_distribution<double> unif(0.0, 1.0);
  for (int i = 0; i < 100; ++i) xs.push_back(std::ldexp(unif(rng), -1000 - static_cast<int>(rng() % 74)));  // towards subnormal
  int products = 0;
  for (double d : divisors) {
    for (double x : xs) {
      const double r = mcubes::portable::count_reciprocal(d);
      if (r == 0) continue;  // left to the division
      const double want = x / d, got = x * r;
      if (std::isnan(want)) {
        ASSERT_TRUE(std::isnan(got)) << x << " / " << d;
      } else {
        ASSERT_EQ(bits_of(got), bits_of(want)) << x << " / " << d << ": " << got << " instead of " << want;
      }
    }
    const std::uint64_t b = bits_of(d);
    const bool power = (b & 0x000FFFFFFFFFFFFFull) == 0 && d >= 1.0 && d <= 0x1p1022;
    EXPECT_EQ(mcubes::portable::count_reciprocal(d) != 0, power) << d;
    products += mcubes::portable::count_reciprocal(d) != 0;
  }
  EXPECT_EQ(products, 4 + 1023 + 1);  // 1, 2, 4, 2^1022; 2^0..2^1022 again; 2 = 2 x 1 among the n (n - 1)
}

TEST(MapAdaptation, QuantizedWeightsAreExactAndBounded) {
  using namespace mcubes::map_adaptation;
  for (int n : {2, 3, 500, 1000, 1 << 20}) {
    const int s = weight_shift(n);
    // n weights of at most 2^s sum below 2^62 (exact in 64-bit integers)
    EXPECT_LE(static_cast<long double>(n) * std::ldexp(1.0L, s), std::ldexp(1.0L, 62)) << n;
    EXPECT_GE(s, 42);
  }
  EXPECT_EQ(quantized_weight(1.0, 1.0, 53), std::uint64_t(1) << 53);
  EXPECT_EQ(quantized_weight(0.5, 1.0, 53), std::uint64_t(1) << 52);
  EXPECT_EQ(quantized_weight(1e-300, 1.0, 53), 1u);  // never 0: every bin keeps a width
}

}  // namespace

// Unit tests of core/float_bits.hpp: the conversion-free formulas of the device's sampling hot path
// against the conversions they replace, bit for bit, on the host (the host forms are the same IEEE
// operations; add_rd's emulation of round-toward-minus-infinity is itself checked against the
// hardware's rounding mode via std::fesetround, inside the test only).

#include <gtest/gtest.h>

#include <Random123/uniform.hpp>

#include <cfenv>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <random>
#include <vector>

#include "mcubes/core/adaptive_map.hpp"
#include "mcubes/core/float_bits.hpp"
#include "mcubes/random.hpp"

namespace {

namespace fb = mcubes::float_bits;
using u32 = std::uint32_t;

std::uint64_t bits(double x) {
  std::uint64_t b;
  std::memcpy(&b, &x, sizeof b);
  return b;
}

// a + b in round-toward-minus-infinity by the FPU itself (volatile: evaluated at run time, under
// the mode set here; the mode is restored before returning).
double hardware_add_rd(double a, double b) {
  volatile double va = a, vb = b;
  const int old = std::fegetround();
  std::fesetround(FE_DOWNWARD);
  volatile double s = va + vb;
  std::fesetround(old);
  return s;
}

std::vector<u32> test_words() {
  std::vector<u32> w = {0u, 1u, 2u, 3u, 0x7fffffffu, 0x80000000u, 0x80000001u, 0xfffffffeu, 0xffffffffu};
  for (u32 k = 0; k < 4096; ++k) w.push_back(k), w.push_back(0xffffffffu - k), w.push_back(0x80000000u - 2048 + k);
  for (int s = 0; s < 32; ++s) w.push_back(1u << s), w.push_back((1u << s) - 1), w.push_back((1u << s) + 1);
  std::mt19937 rng(20261123);
  for (int i = 0; i < 1 << 20; ++i) w.push_back(static_cast<u32>(rng()));
  return w;
}

TEST(FloatBits, U01EqualsRandom123Conversion) {
  for (u32 w : test_words()) {
    const double want = r123::u01<double>(w);
    ASSERT_EQ(bits(fb::u01(w)), bits(want)) << w;
    ASSERT_EQ(bits(mcubes::sample_stream::to_double(w)), bits(want)) << w;
  }
  EXPECT_EQ(fb::u01(0u), std::ldexp(1.0, -33));
  EXPECT_EQ(fb::u01(0xffffffffu), 1.0 - std::ldexp(1.0, -33));
  EXPECT_EQ(fb::u01_bias, 1048576.0 - std::ldexp(1.0, -33));
}

TEST(FloatBits, U32ToDoubleEqualsConversion) {
  for (u32 k : test_words()) ASSERT_EQ(bits(fb::u32_to_double(k)), bits(static_cast<double>(k))) << k;
}

TEST(FloatBits, WordsRoundTrip) {
  EXPECT_EQ(bits(fb::from_words(0x3ff00000u, 0u)), bits(1.0));
  EXPECT_EQ(bits(fb::from_words(fb::two52_hi, 7u)), bits(fb::two52 + 7));
  EXPECT_EQ(fb::low_word(fb::two52 + 123456789.0), 123456789u);
  EXPECT_EQ(fb::low_word(std::ldexp(1.0, 53) - 1), 0xffffffffu);
}

// Values of t around every integer k <= n and around n + 1/2 type boundaries.
std::vector<double> around(double k) {
  return {k, std::nextafter(k, 0.0), std::nextafter(k, INFINITY), k + 0.5, std::nextafter(k + 0.5, 0.0),
          std::nextafter(k + 0.5, INFINITY), k + 0.25, k + 1 - std::ldexp(1.0, -30)};
}

TEST(FloatBits, AddRdEmulationEqualsHardwareRounding) {
  std::mt19937_64 rng(7);
  std::uniform_real_distribution<double> unif(0.0, 1.0);
  std::vector<double> ts = {0.0, std::ldexp(1.0, -1074), std::ldexp(1.0, -60), 0.5, 1.0, std::ldexp(1.0, 31) - 0.5,
                            std::ldexp(1.0, 31) - std::ldexp(1.0, -21)};
  for (int k = 0; k < 3000; ++k)
    for (double t : around(k)) ts.push_back(t);
  for (int i = 0; i < 200000; ++i) ts.push_back(unif(rng) * std::ldexp(1.0, static_cast<int>(unif(rng) * 31)));
  for (double t : ts) {
    ASSERT_EQ(bits(fb::add_rd(t, fb::two52)), bits(hardware_add_rd(t, fb::two52))) << t;
    ASSERT_EQ(bits(fb::add_rd(fb::two52, t)), bits(hardware_add_rd(fb::two52, t))) << t;
    ASSERT_EQ(bits(fb::add_rd(t, -0.75)), bits(hardware_add_rd(t, -0.75))) << t;  // also negative sums
    ASSERT_EQ(bits(fb::add_rd(t, 1.0 / 3)), bits(hardware_add_rd(t, 1.0 / 3))) << t;
  }
}

// The old formula of map_view::map: b = min((int)t, top), bd = (double)b.
void expect_clamped_floor(double t, int top) {
  int want = static_cast<int>(t);
  want = want < top ? want : top;
  double bd = -1;
  const int b = fb::clamped_floor(t, top, bd);
  ASSERT_EQ(b, want) << "t " << t << " top " << top;
  ASSERT_EQ(bits(bd), bits(static_cast<double>(want))) << "t " << t << " top " << top;
  // and with the hardware's round-down in place of the emulation: the device's arithmetic
  const double tt = top + 0.5;
  const double d = hardware_add_rd(t < tt ? t : tt, fb::two52);
  ASSERT_EQ(static_cast<int>(fb::low_word(d)), want) << "t " << t << " top " << top;
  ASSERT_EQ(bits(d - fb::two52), bits(static_cast<double>(want))) << "t " << t << " top " << top;
}

TEST(FloatBits, ClampedFloorEqualsConversions) {
  std::mt19937_64 rng(11);
  std::uniform_real_distribution<double> unif(0.0, 1.0);
  for (int n = 2; n <= 5000; n = n < 64 ? n + 1 : n + 37) {
    const int top = n - 1;
    for (int k = 0; k <= n; ++k)
      for (double t : around(k)) expect_clamped_floor(t, top);
    expect_clamped_floor(n * (1 + std::ldexp(1.0, -52)), top);  // y rounded just above 1 (huge g)
    expect_clamped_floor(0.0, top);
    expect_clamped_floor(std::ldexp(1.0, -1074), top);
    for (int i = 0; i < 200; ++i) expect_clamped_floor(unif(rng) * n, top);
    expect_clamped_floor((1.0 - std::ldexp(1.0, -53)) * n, top);  // the largest u below 1
  }
  for (int n : {5000, 65536, 1 << 20}) {  // the largest bin counts (options: n_bins <= 2^20)
    for (int i = 0; i < 100000; ++i) expect_clamped_floor(unif(rng) * n, n - 1);
    for (double t : around(n - 1)) expect_clamped_floor(t, n - 1);
    for (double t : around(n)) expect_clamped_floor(t, n - 1);
  }
}

// map_view::map's device arithmetic (clamped_floor) replayed on the host gives the host's bits.
TEST(FloatBits, MapWithClampedFloorEqualsHostMap) {
  std::mt19937_64 rng(13);
  std::uniform_real_distribution<double> unif(0.0, 1.0);
  for (int n : {2, 3, 7, 500, 1024, 4999}) {
    mcubes::adaptive_map<2> m(n);
    for (int k = 1; k < n; ++k) m.edge(1, k) = std::pow(static_cast<double>(k) / n, 1.7);  // non-uniform axis 1
    const auto v = m.view();
    std::vector<double> us = {1.0, 1.0 - std::ldexp(1.0, -53), std::ldexp(1.0, -33)};
    for (int k = 0; k <= n; ++k) us.push_back(static_cast<double>(k) / n);
    for (int i = 0; i < 20000; ++i) us.push_back(unif(rng));
    for (double u : us)
      for (int j = 0; j < 2; ++j) {
        double x = 0, jac = 1.5;
        const int b = v.map(j, u, x, jac);
        const double t = u * n;
        double bd;
        const int b2 = fb::clamped_floor(t, n - 1, bd);
        const double* e = m.edges().data() + static_cast<std::size_t>(j) * (n + 1);
        const double w = e[b2 + 1] - e[b2];
        const double x2 = e[b2] + w * (t - bd);
        double jac2 = 1.5;
        jac2 *= w * n;
        ASSERT_EQ(b, b2) << "n " << n << " u " << u;
        ASSERT_EQ(bits(x), bits(x2)) << "n " << n << " u " << u;
        ASSERT_EQ(bits(jac), bits(jac2)) << "n " << n << " u " << u;
      }
  }
}

}  // namespace

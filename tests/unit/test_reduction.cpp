// Unit tests of core/reduction.hpp: the fixed pairwise tree, the exact 128-bit bin
// accumulators and the dithered fixed-point quantization of bin contributions.

#include <gtest/gtest.h>

#include <cfloat>
#include <cstddef>
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <random>
#include <tuple>
#include <vector>

#include "mcubes/core/fixed_tree.hpp"
#include "mcubes/core/reduction.hpp"
#include "mcubes/core/tree_reduce.hpp"

#include "support/bits.hpp"

namespace {

using u64 = std::uint64_t;
__extension__ typedef unsigned __int128 u128;  // exact reference arithmetic (GCC/Clang)

constexpr u64 test_seed = 12345;

using mcubes_test::same_bits;

// Reference: the padded tree computed level by level on an explicit array of width w (zeros past n).
double level_by_level(const std::vector<double>& a, u64 width) {
  std::vector<double> v(width, 0.0);
  for (std::size_t i = 0; i < a.size(); ++i) v[i] = a[i];
  while (v.size() > 1) {
    std::vector<double> next(v.size() / 2);
    for (std::size_t i = 0; i < next.size(); ++i) next[i] = v[2 * i] + v[2 * i + 1];
    v.swap(next);
  }
  return v[0];
}

// Data whose sum depends on the order of the additions: random signs, magnitudes over 16 decades.
std::vector<double> order_sensitive_data(u64 n, u64 seed) {
  std::mt19937_64 rng(seed);
  std::uniform_real_distribution<double> mant(1.0, 2.0), expo(-8.0, 8.0);
  std::vector<double> a(n);
  for (auto& x : a) x = (rng() & 1 ? -1.0 : 1.0) * mant(rng) * std::pow(10.0, expo(rng));
  return a;
}

TEST(PairwiseSum, HandComputedTrees) {
  // Width 4: (1e16 + 1) + (-1e16 + 1). 1e16 + 1 is a tie that rounds to the even 1e16; -1e16 + 1
  // also rounds to -1e16; the tree gives 0. Left to right gives ((1e16 + 1) - 1e16) + 1 = 1, the
  // exact sum is 2.
  const double a[] = {1e16, 1.0, -1e16, 1.0};
  EXPECT_EQ(mcubes::pairwise_sum(a, 4), 0.0);
  EXPECT_EQ(((a[0] + a[1]) + a[2]) + a[3], 1.0);  // the order matters for these values
  // n = 5, width 8: ((1 + 1e16) + (1 + 1)) + ((-1e16 + 0) + (0 + 0)) = (1e16 + 2) - 1e16 = 2;
  // left to right every 1 is absorbed by 1e16 and the sum is 1e16 - 1e16 = 0.
  const double b[] = {1.0, 1e16, 1.0, 1.0, -1e16};
  EXPECT_EQ(mcubes::pairwise_sum(b, 5), 2.0);
  EXPECT_EQ((((b[0] + b[1]) + b[2]) + b[3]) + b[4], 0.0);
  // n = 3, width 4: (1 + 1e16) + (1 + 0) = 1e16 + 1 -> 1e16 (tie to even), where (1 + 1) + 1e16
  // would give 1e16 + 2.
  const double c[] = {1.0, 1e16, 1.0};
  EXPECT_EQ(mcubes::pairwise_sum(c, 3), 1e16);
  // An explicit wider width pads with zeros: the same value here, the tree is just deeper.
  EXPECT_EQ(mcubes::pairwise_sum(b, 5, 16), 2.0);
  // Degenerate sizes.
  EXPECT_EQ(mcubes::pairwise_sum(a, 0), 0.0);
  EXPECT_EQ(mcubes::pairwise_sum(a, 1), 1e16);
  EXPECT_EQ(mcubes::pairwise_sum(a, 2), 1e16);
  // Signed zeros follow the padded tree: -0 + -0 = -0, but a padded +0 leaf makes +0.
  const double z[] = {-0.0, -0.0, -0.0};
  EXPECT_TRUE(std::signbit(mcubes::pairwise_sum(z, 2)));
  EXPECT_TRUE(std::signbit(mcubes::pairwise_sum(z, 1)));
  EXPECT_FALSE(std::signbit(mcubes::pairwise_sum(z, 3)));
  EXPECT_TRUE(same_bits(mcubes::pairwise_sum(z, 3), level_by_level({-0.0, -0.0, -0.0}, 4)));
}

TEST(PairwiseSum, NextPow2) {
  EXPECT_EQ(mcubes::next_pow2(0), 1u);
  EXPECT_EQ(mcubes::next_pow2(1), 1u);
  EXPECT_EQ(mcubes::next_pow2(2), 2u);
  EXPECT_EQ(mcubes::next_pow2(3), 4u);
  EXPECT_EQ(mcubes::next_pow2(1024), 1024u);
  EXPECT_EQ(mcubes::next_pow2(1025), 2048u);
  EXPECT_EQ(mcubes::next_pow2((u64(1) << 40) + 1), u64(1) << 41);
}

TEST(PairwiseSum, MatchesLevelByLevelTree) {
  for (u64 n : {1u, 2u, 3u, 5u, 7u, 8u, 9u, 31u, 100u, 1000u, 1023u, 1024u, 1025u, 4099u}) {
    const auto a = order_sensitive_data(n, test_seed + n);
    const u64 w = mcubes::next_pow2(n);
    EXPECT_TRUE(same_bits(mcubes::pairwise_sum(a.data(), n), level_by_level(a, w))) << "n = " << n;
    EXPECT_TRUE(same_bits(mcubes::pairwise_sum(a.data(), n, 4 * w), level_by_level(a, 4 * w))) << "n = " << n;
  }
}

// The property every backend relies on: reducing aligned power-of-two groups of size G first (a
// thread's tile, a warp, a block), then the group sums with width next_pow2(n)/G, gives the bits of
// the one global tree, for any G and any n (powers of two or not), also when groups nest.
TEST(PairwiseSum, AlignedGroupsGiveTheSameBits) {
  int order_sensitive_cases = 0;
  for (u64 n : {1u, 2u, 3u, 6u, 17u, 255u, 1000u, 1024u, 1025u, 3000u, 4096u, 5001u, 65537u, 100000u}) {
    const auto a = order_sensitive_data(n, test_seed * 3 + n);
    const u64 width = mcubes::next_pow2(n);
    const double global = mcubes::pairwise_sum(a.data(), n);
    double sequential = 0;
    for (double x : a) sequential += x;
    if (!same_bits(sequential, global)) ++order_sensitive_cases;
    for (u64 G = 1; G <= 1024 && G <= width; G *= 2) {
      const u64 n_groups = (n + G - 1) / G;
      std::vector<double> sums(n_groups);
      for (u64 i = 0; i < n_groups; ++i) {
        const u64 count = std::min(G, n - i * G);
        sums[i] = mcubes::pairwise_sum(a.data() + i * G, count, G);
      }
      const double grouped = mcubes::pairwise_sum(sums.data(), n_groups, width / G);
      EXPECT_TRUE(same_bits(grouped, global)) << "n = " << n << ", G = " << G << ": " << grouped << " vs " << global;
      // Nested: groups of H = 4G made of groups of G (thread tiles inside a block).
      const u64 H = 4 * G;
      if (H > width) continue;
      const u64 n_outer = (n + H - 1) / H;
      std::vector<double> outer(n_outer);
      for (u64 i = 0; i < n_outer; ++i) {
        const u64 first = i * (H / G);
        const u64 count = std::min<u64>(H / G, n_groups - first);
        outer[i] = mcubes::pairwise_sum(sums.data() + first, count, H / G);
      }
      EXPECT_TRUE(same_bits(mcubes::pairwise_sum(outer.data(), n_outer, width / H), global)) << "n = " << n << ", G = " << G;
    }
  }
  // The data really is order sensitive, so the bitwise checks above could fail.
  EXPECT_GE(order_sensitive_cases, 8);
}

TEST(BinAccumulator, CarriesAcross2To64Exactly) {
  std::mt19937_64 rng(test_seed);
  mcubes::bin_accumulator acc, merged, part;
  u128 exact = 0;
  for (int i = 0; i < 200000; ++i) {
    // Mostly large terms near 2^63 so that the low word wraps often, some small ones.
    const u64 q = (i % 7 == 0) ? (rng() >> 40) : (rng() >> 1) | (u64(1) << 62);
    acc.add(q);
    part.add(q);
    exact += q;
    if (i % 1000 == 999) {  // merge partial accumulators, as the backends do
      merged.add(part);
      part = mcubes::bin_accumulator{};
    }
  }
  merged.add(part);
  EXPECT_EQ(acc.lo, static_cast<u64>(exact));
  EXPECT_EQ(acc.hi, static_cast<u64>(exact >> 64));
  EXPECT_EQ(merged.lo, acc.lo);
  EXPECT_EQ(merged.hi, acc.hi);
  EXPECT_GT(acc.hi, 10000u);  // the carry happened many times
  // to_double: hi * 2^64 + lo, each word rounded once: within 2 ulp of the exact value.
  const double exact_d = static_cast<double>(exact);
  EXPECT_NEAR(acc.to_double(), exact_d, 2 * exact_d * DBL_EPSILON);
  // Exact edge: 2^64 - 1 + 1 carries into hi.
  mcubes::bin_accumulator edge;
  edge.add(~u64(0));
  edge.add(1);
  EXPECT_EQ(edge.lo, 0u);
  EXPECT_EQ(edge.hi, 1u);
  EXPECT_EQ(edge.to_double(), 18446744073709551616.0);
  // Merging two accumulators whose low words both wrap.
  mcubes::bin_accumulator x, y;
  x.add(~u64(0));
  x.add(~u64(0));  // 2^65 - 2: hi = 1, lo = 2^64 - 2
  y.add(~u64(0));
  y.add(3);        // 2^64 + 2: hi = 1, lo = 2
  x.add(y);        // 2^65 + 2^64 = 3 * 2^64
  EXPECT_EQ(x.lo, 0u);
  EXPECT_EQ(x.hi, 3u);
  // Small values convert exactly.
  mcubes::bin_accumulator small;
  small.add(123456789);
  EXPECT_EQ(small.to_double(), 123456789.0);
}

TEST(Quantize, IsFloorOfScaledPlusDitherAndClamps) {
  std::mt19937_64 rng(test_seed + 1);
  std::uniform_real_distribution<double> unit(0.0, 1.0), expo(-30, 30);
  for (int i = 0; i < 100000; ++i) {
    const double c = unit(rng) * std::pow(2.0, expo(rng));
    const double scale = std::ldexp(1.0, static_cast<int>(rng() % 80) - 20);
    const double u = mcubes::quantization_dither(rng());
    const double expected = std::floor(c * scale + u);
    if (expected >= 9223372036854775808.0) {
      EXPECT_EQ(mcubes::quantize(c, scale, u), (~u64(0)) >> 1);
    } else {
      EXPECT_EQ(mcubes::quantize(c, scale, u), static_cast<u64>(expected)) << c << " " << scale << " " << u;
    }
  }
  // Hand cases.
  EXPECT_EQ(mcubes::quantize(0.0, 1024.0, 0.0), 0u);
  EXPECT_EQ(mcubes::quantize(0.0, 1024.0, 0.999), 0u);
  EXPECT_EQ(mcubes::quantize(1.0, 1024.0, 0.0), 1024u);
  EXPECT_EQ(mcubes::quantize(1.25, 4.0, 0.75), 5u);    // 5 + 0.75 -> 5
  EXPECT_EQ(mcubes::quantize(1.25, 4.0, 0.0), 5u);
  EXPECT_EQ(mcubes::quantize(0.25, 1.0, 0.75), 1u);    // 0.25 + 0.75 = 1 exactly
  EXPECT_EQ(mcubes::quantize(0.25, 1.0, 0.5), 0u);
  EXPECT_EQ(mcubes::quantize(3.0, 0.5, 0.5), 2u);      // 1.5 + 0.5 = 2
  EXPECT_EQ(mcubes::quantize(3.0, 0.5, 0.25), 1u);     // 1.75 -> 1
  // Clamping at 2^63 - 1: huge terms, exactly 2^63, infinity and NaN.
  const u64 max_q = (~u64(0)) >> 1;
  EXPECT_EQ(mcubes::quantize(1.0, std::ldexp(1.0, 63), 0.0), max_q);
  EXPECT_EQ(mcubes::quantize(1e300, 1e10, 0.5), max_q);
  EXPECT_EQ(mcubes::quantize(std::numeric_limits<double>::infinity(), 1.0, 0.0), max_q);
  EXPECT_EQ(mcubes::quantize(std::numeric_limits<double>::quiet_NaN(), 1.0, 0.0), max_q);
  // Just below 2^63: the largest double below 2^63 converts exactly.
  const double below = std::nextafter(9223372036854775808.0, 0.0);
  EXPECT_EQ(mcubes::quantize(below, 1.0, 0.0), static_cast<u64>(below));
}

TEST(Quantize, DitherIsUniformAndDeterministic) {
  constexpr int n = 200000;
  constexpr double max_sigmas = 5.0;
  double sum = 0;
  for (int i = 0; i < n; ++i) {
    const double u = mcubes::quantization_dither(static_cast<u64>(i));
    ASSERT_GE(u, 0.0);
    ASSERT_LT(u, 1.0);
    EXPECT_EQ(u, mcubes::quantization_dither(static_cast<u64>(i)));
    sum += u;
  }
  EXPECT_NEAR(sum / n, 0.5, max_sigmas * std::sqrt(1.0 / 12 / n));
  EXPECT_NE(mcubes::quantization_dither(0), mcubes::quantization_dither(1));
  // Dithered rounding is unbiased: the mean quantized value of a term worth 0.3 units is 0.3.
  double qsum = 0;
  for (int i = 0; i < n; ++i) qsum += static_cast<double>(mcubes::quantize(0.3, 1.0, mcubes::quantization_dither(static_cast<u64>(i))));
  EXPECT_NEAR(qsum / n, 0.3, max_sigmas * std::sqrt(0.3 * 0.7 / n));
}

TEST(ScaleFor, PutsReferenceIn2To31And2To32) {
  const double lo = std::ldexp(1.0, 31), hi = std::ldexp(1.0, 32);
  std::mt19937_64 rng(test_seed + 2);
  std::uniform_real_distribution<double> mant(0.5, 1.0);
  for (int e = -950; e <= 1000; e += 7) {
    for (double ref : {std::ldexp(1.0, e), std::ldexp(mant(rng), e), std::nextafter(std::ldexp(1.0, e), 0.0)}) {
      const double s = mcubes::scale_for(ref);
      int se = 0;
      EXPECT_EQ(std::frexp(s, &se), 0.5) << "scale is not a power of two for " << ref;
      EXPECT_GE(ref * s, lo) << ref;
      EXPECT_LT(ref * s, hi) << ref;
    }
  }
  EXPECT_EQ(mcubes::scale_for(1.0), std::ldexp(1.0, 31));
  EXPECT_EQ(mcubes::scale_for(1.5), std::ldexp(1.0, 31));
  EXPECT_EQ(mcubes::scale_for(2.0), std::ldexp(1.0, 30));
  EXPECT_EQ(mcubes::scale_for(DBL_MAX) * DBL_MAX >= lo, true);
  // Not finite and positive: scale 1.
  EXPECT_EQ(mcubes::scale_for(0.0), 1.0);
  EXPECT_EQ(mcubes::scale_for(-3.0), 1.0);
  EXPECT_EQ(mcubes::scale_for(std::numeric_limits<double>::infinity()), 1.0);
  EXPECT_EQ(mcubes::scale_for(std::numeric_limits<double>::quiet_NaN()), 1.0);
  // The tiniest references get a finite (clamped) scale, never infinity or zero.
  const double tiny_scale = mcubes::scale_for(std::numeric_limits<double>::denorm_min());
  EXPECT_TRUE(std::isfinite(tiny_scale));
  EXPECT_GT(tiny_scale, 1.0);
}

TEST(ScaleFor, NeedsRescale) {
  const double s = mcubes::scale_for(1.0);  // 2^31
  EXPECT_FALSE(mcubes::needs_rescale(0.0, s));                        // nothing sampled: nothing to fix
  EXPECT_FALSE(mcubes::needs_rescale(1.0, s));                        // the reference itself
  EXPECT_FALSE(mcubes::needs_rescale(std::ldexp(1.0, 31), s));        // 2^62 units: fits level 0
  EXPECT_FALSE(mcubes::needs_rescale(std::ldexp(1.0, 32), s));        // 2^63 units: level 1
  EXPECT_FALSE(mcubes::needs_rescale(std::ldexp(1.0, 32 + 600), s));  // 2^663 units: level 16
  EXPECT_FALSE(mcubes::needs_rescale(std::nextafter(std::ldexp(1.0, 32 + 640), 0.0), s));  // just below 2^703
  EXPECT_TRUE(mcubes::needs_rescale(std::ldexp(1.0, 32 + 640), s));   // 2^703 units: beyond the top level
  EXPECT_TRUE(mcubes::needs_rescale(1e300, s));
  EXPECT_TRUE(mcubes::needs_rescale(std::numeric_limits<double>::infinity(), s));
  EXPECT_FALSE(mcubes::needs_rescale(std::ldexp(1.0, -24), s));       // 2^7 units: still fine
  EXPECT_TRUE(mcubes::needs_rescale(std::ldexp(1.0, -25), s));        // 2^6 units: too coarse
  EXPECT_TRUE(mcubes::needs_rescale(1e-20, s));
  // After rescaling to the new maximum, no further rescale is needed.
  for (double m : {1e-20, 3e-7, 1.0, 7e5, 1e30}) EXPECT_FALSE(mcubes::needs_rescale(m, mcubes::scale_for(m))) << m;
}

// Overflow levels of the bins: level L holds terms t (in units of the scale) with
// 2^(63 + 40 (L-1)) <= t < 2^(63 + 40 L) as floor(t 2^-40L + u); level 0 is exactly t < 2^63.
TEST(BinLevels, LevelOfATerm) {
  auto level_of = [](double t, double* scaled = nullptr) {
    const int l = mcubes::bin_level(t);
    if (scaled) *scaled = t;
    return l;
  };
  EXPECT_EQ(level_of(0.0), 0);
  EXPECT_EQ(level_of(1.0), 0);
  EXPECT_EQ(level_of(std::nextafter(std::ldexp(1.0, 63), 0.0)), 0);
  double scaled = 0;
  EXPECT_EQ(level_of(std::ldexp(1.0, 63), &scaled), 1);
  EXPECT_EQ(scaled, std::ldexp(1.0, 23));  // the smallest term of level 1: 2^23 units of 2^40
  EXPECT_EQ(level_of(std::nextafter(std::ldexp(1.0, 103), 0.0)), 1);
  EXPECT_EQ(level_of(std::ldexp(1.0, 103)), 2);
  EXPECT_EQ(level_of(std::ldexp(1.5, 700), &scaled), 16);
  EXPECT_EQ(scaled, std::ldexp(1.5, 60));
  EXPECT_EQ(level_of(std::ldexp(1.0, 703)), 16);  // beyond the top level: stays at 16 (clamped by quantize)
  EXPECT_EQ(level_of(std::numeric_limits<double>::infinity()), mcubes::max_bin_level);
  EXPECT_EQ(level_of(std::numeric_limits<double>::quiet_NaN()), mcubes::max_bin_level);
  // Monotone, and the scaled value is exact: t 2^-40L.
  std::mt19937_64 rng(test_seed + 7);
  std::uniform_real_distribution<double> expo(0, 720);
  double prev_t = 0;
  int prev_level = 0;
  std::vector<double> ts(20000);
  for (auto& t : ts) t = std::pow(2.0, expo(rng));
  std::sort(ts.begin(), ts.end());
  for (double t : ts) {
    const int l = level_of(t, &scaled);
    EXPECT_GE(l, prev_level) << t << " after " << prev_t;
    if (l < mcubes::max_bin_level) {
      EXPECT_LT(scaled, std::ldexp(1.0, 63));
    }
    if (l >= 1) {
      EXPECT_GE(scaled, std::ldexp(1.0, 23)) << t;
    }
    EXPECT_EQ(scaled, std::ldexp(t, -40 * l));
    EXPECT_EQ(mcubes::top_bin_level(t, 1.0), l);
    prev_t = t;
    prev_level = l;
  }
  EXPECT_EQ(mcubes::top_bin_level(0.0, 1.0), 0);
}

// A sink that records what add_bin_term hands it (through a pointer: the overflow path gets a
// copy of the sink, as the real sinks allow).
struct recording_sink {
  static constexpr bool enabled = true;
  std::vector<std::tuple<int, int, int, u64>>* out;  // level, axis, bin, q
  void add(int axis, int bin, u64 q) { out->emplace_back(0, axis, bin, q); }
  void add_level(int level, int axis, int bin, u64 q) { out->emplace_back(level, axis, bin, q); }
};

TEST(BinLevels, AddBinTermMatchesQuantizeAtLevelZeroAndScalesAbove) {
  std::mt19937_64 rng(test_seed + 8);
  std::uniform_real_distribution<double> unit(0.0, 1.0), expo(-60, 300);
  for (int i = 0; i < 50000; ++i) {
    const double c = unit(rng) * std::pow(2.0, expo(rng));
    const double scale = std::ldexp(1.0, static_cast<int>(rng() % 80) - 20);
    const double u = mcubes::quantization_dither(rng());
    std::vector<std::tuple<int, int, int, u64>> got;
    recording_sink sink{&got};
    const int bins[3] = {4, 0, 7};
    mcubes::add_bin_term<3>(sink, c * scale, u, [&](int j) { return bins[j]; });
    const double t = c * scale;
    if (t < std::ldexp(1.0, 63)) {
      const u64 q = mcubes::quantize(c, scale, u);  // the old level-0 integer, bit for bit
      if (q == 0) {
        EXPECT_TRUE(got.empty());
        continue;
      }
      ASSERT_EQ(got.size(), 3u);
      for (int j = 0; j < 3; ++j) EXPECT_EQ(got[j], std::make_tuple(0, j, bins[j], q));
    } else {
      double scaled = t;
      const int l = mcubes::bin_level(scaled);
      ASSERT_GE(l, 1);
      const u64 q = static_cast<u64>(std::floor(std::ldexp(t, -40 * l) + u));
      ASSERT_EQ(got.size(), 3u);
      for (int j = 0; j < 3; ++j) EXPECT_EQ(got[j], std::make_tuple(l, j, bins[j], q)) << t;
      EXPECT_GE(q, u64(1) << 23);
    }
  }
  // Beyond the top level: clamped to 2^63 - 1 at level 16.
  std::vector<std::tuple<int, int, int, u64>> got;
  recording_sink sink{&got};
  const int bins[1] = {2};
  mcubes::add_bin_term<1>(sink, std::ldexp(1.0, 800), 0.5, [&](int j) { return bins[j]; });
  ASSERT_EQ(got.size(), 1u);
  EXPECT_EQ(got[0], std::make_tuple(mcubes::max_bin_level, 0, 2, (~u64(0)) >> 1));
}

TEST(BinLevels, CombineFoldsLevelsFromTheTop) {
  using mcubes::bin_accumulator;
  bin_accumulator a0, a1, a2;
  a0.add(12345);
  a1.add(u64(1) << 40);
  a2.add(3);
  // level 0 only: the value of the accumulator
  EXPECT_EQ(mcubes::combine_bin_level(0.0, a0, true), 12345.0);
  // 3 * 2^80 + 2^40 * 2^40 + 12345 = 4 * 2^80 + 12345, rounded once per level
  double c = mcubes::combine_bin_level(0.0, a2, true);
  c = mcubes::combine_bin_level(c, a1, false);
  c = mcubes::combine_bin_level(c, a0, false);
  EXPECT_EQ(c, 4.0 * std::ldexp(1.0, 80) + 12345.0);
  // A full 128-bit accumulator at the top of 16 levels stays finite.
  bin_accumulator big;
  big.lo = ~u64(0);
  big.hi = ~u64(0);
  double v = mcubes::combine_bin_level(0.0, big, true);
  for (int l = 15; l >= 0; --l) v = mcubes::combine_bin_level(v, big, false);
  EXPECT_TRUE(std::isfinite(v));
  EXPECT_NEAR(v / std::ldexp(1.0, 128 + 640), 1.0, 1e-12);
}

}  // namespace

// The one tree (core/fixed_tree.hpp) for a merge with an exact identity and for plain sums: the
// level-by-level evaluation over the padded leaves, and the streaming binary counter, give its bits.
// fixed_tree_reduce merges complete subtrees of 2, 4 and 8 leaves without recursion: every n up
// to 70 (complete and padded subtrees of each size, at the start and in the middle of the array),
// widths 1x, 2x and 4x next_pow2(n), on order-sensitive data with signed zeros among the leaves,
// gives the bits of the padded tree computed level by level.
TEST(FixedTree, UnrolledCompleteSubtreesAreTheTree) {
  std::vector<double> a = order_sensitive_data(70, test_seed + 70);
  for (std::size_t i = 3; i < a.size(); i += 11) a[i] = -0.0;
  for (std::size_t i = 16; i < 24; ++i) a[i] = -0.0;  // a complete subtree of 8 negative zeros
  for (u64 n = 1; n <= a.size(); ++n)
    for (u64 k : {1u, 2u, 4u}) {
      const u64 w = k * mcubes::next_pow2(n);
      EXPECT_TRUE(same_bits(mcubes::fixed_tree_reduce(a.data(), n, w, mcubes::plus_merge{}),
                            level_by_level({a.begin(), a.begin() + static_cast<std::ptrdiff_t>(n)}, w)))
          << "n = " << n << ", width = " << w;
    }
}

TEST(FixedTree, LevelFormAndStreamingFormAreTheTree) {
  std::vector<double> a(1000);
  double x = 0.1;
  for (auto& v : a) {
    x = std::fmod(x * 7.3 + 0.77, 1.0);
    v = x * std::ldexp(1.0, static_cast<int>(x * 60) - 30);
  }
  for (std::uint64_t n : {1, 2, 3, 5, 64, 100, 513, 1000}) {
    const std::uint64_t w = mcubes::next_pow2(n);
    EXPECT_TRUE(same_bits(mcubes::fixed_tree_reduce(a.data(), n, w, mcubes::plus_merge{}), level_by_level({a.begin(), a.begin() + n}, w)))
        << "n = " << n;
    auto merge = [](const mcubes::dd_sum& l, const mcubes::dd_sum& r) { return mcubes::merge(l, r); };
    std::vector<mcubes::dd_sum> d(n);
    for (std::uint64_t i = 0; i < n; ++i) d[i] = mcubes::dd_sum{a[i], 0.0};
    mcubes::tree_accumulator<mcubes::dd_sum, decltype(merge)> acc(merge);
    for (const auto& v : d) acc.push(v);
    const mcubes::dd_sum ref = mcubes::fixed_tree_reduce(d.data(), n, 4 * w, merge);
    EXPECT_TRUE(same_bits(acc.result().hi, ref.hi) && same_bits(acc.result().lo, ref.lo)) << "n = " << n;
  }
}

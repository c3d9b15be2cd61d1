// Unit tests of core/stratification.hpp: the sub-cube grid of m-Cubes (Sakiotis et al. 2022, Algorithm 2
// lines 3-8) and the problem-defined chunking.

#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <string>
#include <vector>

#include "mcubes/core/stratification.hpp"
#include "mcubes/error.hpp"

namespace {

using u64 = std::uint64_t;
__extension__ typedef unsigned __int128 u128;  // exact reference arithmetic (GCC/Clang)

// Exact base^exp in 128 bits, saturating at 2^127 (reference for the tests only).
u128 pow128(u64 base, int exp) {
  const u128 cap = u128(1) << 127;
  u128 r = 1;
  for (int i = 0; i < exp; ++i) {
    if (base != 0 && r > cap / base) return cap;
    r *= base;
  }
  return r;
}

// Reference g: the largest g >= 1 with g^d <= maxcalls/2, by integer binary search (no pow).
u64 reference_g(int dim, u64 maxcalls) {
  const u64 half = maxcalls / 2;
  u64 lo = 1, hi = half + 1;  // g^d <= half holds for lo (half >= 1), fails for hi
  while (hi - lo > 1) {
    const u64 mid = lo + (hi - lo) / 2;
    if (pow128(mid, dim) <= half) lo = mid; else hi = mid;
  }
  return lo;
}

// Checks every documented invariant of a stratification against independent integer arithmetic.
void check_invariants(int dim, u64 maxcalls) {
  SCOPED_TRACE(testing::Message() << "dim = " << dim << ", maxcalls = " << maxcalls);
  const mcubes::stratification s = mcubes::make_stratification(dim, maxcalls);
  const u64 g = reference_g(dim, maxcalls);
  EXPECT_EQ(s.dim, dim);
  EXPECT_EQ(s.g, g);
  ASSERT_EQ(u128(s.n_cubes), pow128(g, dim));
  const u64 p = maxcalls / s.n_cubes < 2 ? 2 : maxcalls / s.n_cubes;
  EXPECT_EQ(s.samples_per_cube, p);
  EXPECT_EQ(s.n_eval(), s.n_cubes * s.samples_per_cube);
  EXPECT_LE(s.n_eval(), maxcalls);  // m p <= maxcalls since m <= maxcalls/2
  // Chunking: at most 2^20 chunks, the smallest chunk size that allows it, every cube covered once.
  EXPECT_EQ(s.chunk_cubes, (s.n_cubes + mcubes::max_chunks - 1) / mcubes::max_chunks);
  EXPECT_GE(s.chunk_cubes, 1u);
  EXPECT_LE(s.n_chunks, mcubes::max_chunks);
  EXPECT_GE(s.n_chunks, 1u);
  // Chunks [c*k, min(m, (c+1)*k)) for c < n_chunks: the last one is non-empty and ends at m.
  EXPECT_LT((s.n_chunks - 1) * s.chunk_cubes, s.n_cubes);
  EXPECT_GE(u128(s.n_chunks) * s.chunk_cubes, u128(s.n_cubes));
}

TEST(Stratification, SmallCasesByHand) {
  // d = 1: g = maxcalls/2, one sample pair per interval.
  auto s = mcubes::make_stratification(1, 1000);
  EXPECT_EQ(s.g, 500u);
  EXPECT_EQ(s.n_cubes, 500u);
  EXPECT_EQ(s.samples_per_cube, 2u);
  EXPECT_EQ(s.chunk_cubes, 1u);
  EXPECT_EQ(s.n_chunks, 500u);
  // d = 2, maxcalls = 1000: (500)^(1/2) = 22.36 -> g = 22, m = 484, p = 2.
  s = mcubes::make_stratification(2, 1000);
  EXPECT_EQ(s.g, 22u);
  EXPECT_EQ(s.n_cubes, 484u);
  EXPECT_EQ(s.samples_per_cube, 2u);
  // d = 3, maxcalls = 10000: 5000^(1/3) = 17.1 -> g = 17, m = 4913, p = 2.
  s = mcubes::make_stratification(3, 10000);
  EXPECT_EQ(s.g, 17u);
  EXPECT_EQ(s.n_cubes, 4913u);
  EXPECT_EQ(s.samples_per_cube, 2u);
  // d = 8, maxcalls = 1000: 500^(1/8) = 2.17 -> g = 2, m = 256, p = floor(1000/256) = 3.
  s = mcubes::make_stratification(8, 1000);
  EXPECT_EQ(s.g, 2u);
  EXPECT_EQ(s.n_cubes, 256u);
  EXPECT_EQ(s.samples_per_cube, 3u);
  // d = 10, maxcalls = 100: 50^(1/10) = 1.48 -> g = 1, a single cube with all 100 samples.
  s = mcubes::make_stratification(10, 100);
  EXPECT_EQ(s.g, 1u);
  EXPECT_EQ(s.n_cubes, 1u);
  EXPECT_EQ(s.samples_per_cube, 100u);
  EXPECT_EQ(s.n_chunks, 1u);
  // The smallest problem: maxcalls = 2 and 3.
  s = mcubes::make_stratification(5, 2);
  EXPECT_EQ(s.g, 1u);
  EXPECT_EQ(s.samples_per_cube, 2u);
  s = mcubes::make_stratification(1, 3);
  EXPECT_EQ(s.g, 1u);
  EXPECT_EQ(s.n_cubes, 1u);
  EXPECT_EQ(s.samples_per_cube, 3u);
}

// maxcalls = 2 g^d exactly (and its neighbours +-1, +-2): (maxcalls/2)^(1/d) is an integer in exact
// arithmetic, and pow() often returns g - 1 + 0.99999... or rounds the neighbour up to g.
TEST(Stratification, ExactPowersWherePowRoundsBadly) {
  int checked = 0;
  for (int d = 1; d <= 32; ++d) {
    for (u64 g = 2; g <= 100000; g = g < 20 ? g + 1 : g * 3 / 2) {
      const u128 m = pow128(g, d);
      if (2 * m > (u128(1) << 50)) break;  // the options allow at most 2^50 calls
      const u64 maxcalls = static_cast<u64>(2 * m);
      for (u64 delta : {0, 1, 2}) {
        check_invariants(d, maxcalls + delta);
        check_invariants(d, maxcalls - delta);
        ++checked;
      }
      const auto s = mcubes::make_stratification(d, maxcalls);
      EXPECT_EQ(s.g, g) << "d = " << d << ", g = " << g;
      EXPECT_EQ(s.n_cubes, static_cast<u64>(m));
      EXPECT_EQ(s.samples_per_cube, 2u);
      // One call short of 2 g^d: maxcalls/2 = g^d - 1 for even maxcalls-2, so g drops by one.
      EXPECT_EQ(mcubes::make_stratification(d, maxcalls - 2).g, g - 1) << "d = " << d << ", g = " << g;
    }
  }
  EXPECT_GT(checked, 300);
}

TEST(Stratification, ManySizesAgainstIntegerReference) {
  for (int d = 1; d <= 32; ++d) {
    for (u64 maxcalls = 2; maxcalls < (u64(1) << 50); maxcalls = maxcalls * 7 / 3 + 1) check_invariants(d, maxcalls);
    check_invariants(d, u64(1) << 50);
  }
}

TEST(Stratification, SixtyFourBitSizes) {
  const u64 maxcalls = 100000000000ull;  // 1e11 > 2^32
  // d = 1: g = 5e10 sub-cubes of 2 samples; the chunking keeps n_chunks <= 2^20.
  auto s = mcubes::make_stratification(1, maxcalls);
  EXPECT_EQ(s.g, 50000000000ull);
  EXPECT_EQ(s.n_cubes, 50000000000ull);
  EXPECT_EQ(s.samples_per_cube, 2u);
  EXPECT_EQ(s.n_eval(), maxcalls);
  EXPECT_EQ(s.chunk_cubes, 47684u);  // ceil(5e10 / 2^20)
  EXPECT_EQ(s.n_chunks, 1048570u);   // ceil(5e10 / 47684)
  check_invariants(1, maxcalls);
  // d = 32: 5e10^(1/32) = 2.16 -> g = 2, m = 2^32 (needs 64-bit indices), p = floor(1e11/2^32) = 23.
  s = mcubes::make_stratification(32, maxcalls);
  EXPECT_EQ(s.g, 2u);
  EXPECT_EQ(s.n_cubes, u64(1) << 32);
  EXPECT_EQ(s.samples_per_cube, 23u);
  EXPECT_EQ(s.n_eval(), 23ull << 32);
  EXPECT_EQ(s.chunk_cubes, 4096u);
  EXPECT_EQ(s.n_chunks, mcubes::max_chunks);
  check_invariants(32, maxcalls);
}

TEST(Stratification, ChunksCoverEveryCubeOnce) {
  for (int d : {1, 2, 3, 5, 9}) {
    for (u64 maxcalls : {2ull, 3ull, 100ull, 4097ull, 1000000ull, 3000001ull, 50000000ull}) {
      const auto s = mcubes::make_stratification(d, maxcalls);
      if (s.n_cubes > (u64(1) << 26)) continue;
      std::vector<unsigned char> seen(s.n_cubes, 0);
      for (u64 c = 0; c < s.n_chunks; ++c) {
        const u64 begin = c * s.chunk_cubes;
        u64 end = begin + s.chunk_cubes;
        if (end > s.n_cubes) end = s.n_cubes;
        ASSERT_LT(begin, end) << "empty chunk " << c;
        for (u64 i = begin; i < end; ++i) ++seen[i];
      }
      for (u64 i = 0; i < s.n_cubes; ++i) ASSERT_EQ(seen[i], 1) << "cube " << i << " d = " << d << " maxcalls = " << maxcalls;
    }
  }
}

TEST(Stratification, BadInputThrows) {
  EXPECT_THROW(mcubes::make_stratification(3, 0), mcubes::invalid_input);
  EXPECT_THROW(mcubes::make_stratification(3, 1), mcubes::invalid_input);
  EXPECT_THROW(mcubes::make_stratification(1, 1), mcubes::invalid_input);
  EXPECT_THROW(mcubes::make_stratification(0, 100), mcubes::invalid_input);
  EXPECT_THROW(mcubes::make_stratification(-1, 100), mcubes::invalid_input);
  try {
    mcubes::make_stratification(3, 1);
    FAIL() << "no exception";
  } catch (const mcubes::invalid_input& e) {
    EXPECT_NE(std::string(e.what()).find("calls"), std::string::npos) << e.what();
  }
}

}  // namespace

// ---- VEGAS+ (core/cube_counts.hpp)

#include "mcubes/core/cube_counts.hpp"

#include <cmath>
#include <limits>

namespace {

TEST(AdaptiveStratification, GridOfAQuarterOfTheCalls) {
  for (const int dim : {1, 2, 4, 8, 13}) {
    for (const u64 calls : {u64(2), u64(7), u64(1000), u64(250000), u64(1000000), u64(1) << 40}) {
      const mcubes::stratification s = mcubes::make_adaptive_stratification(dim, calls);
      const u64 quarter = std::min<u64>(calls / 4 >= 2 ? calls / 4 : 2, 2 * mcubes::max_adaptive_cubes);
      const u64 g = reference_g(dim, quarter);  // g^d <= min(calls/8, max_adaptive_cubes)
      SCOPED_TRACE("d = " + std::to_string(dim) + ", calls = " + std::to_string(calls));
      EXPECT_EQ(s.g, g);
      EXPECT_EQ(static_cast<u128>(s.n_cubes), pow128(g, dim));
      EXPECT_TRUE(s.adaptive());
      EXPECT_EQ(s.calls, calls);
      const u64 n_min = std::max<u64>(2, calls / (4 * s.n_cubes));
      EXPECT_EQ(s.min_samples_per_cube, n_min);
      EXPECT_LE(s.n_cubes * n_min, std::max<u64>(calls, 2));  // the uniform part fits the budget
      EXPECT_EQ(s.samples_per_cube, std::max<u64>(mcubes::max_samples_per_cube, 8 * (calls / s.n_cubes)));  // the index stride
      EXPECT_GT(s.samples_per_cube, n_min);
      EXPECT_LT(static_cast<u128>(s.n_cubes) * s.samples_per_cube, u128(1) << 64);  // sample indices fit
      EXPECT_EQ(s.n_eval(), s.n_cubes * (calls / s.n_cubes));  // the first iteration: floor(N/m) each
      EXPECT_GE(s.chunk_cubes, 1u);
      EXPECT_EQ(s.n_chunks, (s.n_cubes + s.chunk_cubes - 1) / s.chunk_cubes);
      EXPECT_LE(s.n_chunks, mcubes::max_chunks);
    }
  }
  EXPECT_FALSE(mcubes::make_stratification(4, 1000).adaptive());
}

TEST(CubeShare, PowersBySquareRootsOnly) {
  using mcubes::cube_share;
  const double nan = std::numeric_limits<double>::quiet_NaN(), inf = std::numeric_limits<double>::infinity();
  for (const std::uint32_t b : {0u, 4u, 12u, 16u}) {
    EXPECT_EQ(cube_share(0.0, b), 0.0);
    EXPECT_EQ(cube_share(-1.0, b), 0.0);
    EXPECT_EQ(cube_share(nan, b), 0.0);
    EXPECT_EQ(cube_share(inf, b), 0.0);
  }
  for (const double v : {1e-300, 1e-20, 0.5, 1.0, 3.0, 7e15, 1e300}) {
    EXPECT_EQ(cube_share(v, 0), 1.0);
    for (const std::uint32_t b : {1u, 4u, 8u, 12u, 16u}) {
      const double want = std::pow(v, b / 32.0);
      EXPECT_NEAR(cube_share(v, b), want, 1e-14 * want) << "v = " << v << ", beta16 = " << b;
    }
  }
}

TEST(CubeCounts, BasePlusFlooredShareCappedAndSummedExactly) {
  const double share[5] = {0.0, 0.25, 1.0, 1e9, 0.333};
  mcubes::cube_counts c;
  EXPECT_FALSE(c.per_cube());
  c.n_base = 3;
  c.n_extra_max = 100;
  EXPECT_TRUE(c.per_cube());
  EXPECT_EQ(c.count(4), 3u);  // no shares: n_base each
  c.share_in = share;
  c.scale = 10;
  EXPECT_EQ(c.count(0), 3u);
  EXPECT_EQ(c.count(1), 5u);    // floor(2.5)
  EXPECT_EQ(c.count(2), 13u);
  EXPECT_EQ(c.count(3), 103u);  // capped
  EXPECT_EQ(c.count(4), 6u);    // floor(3.33)
  const mcubes::count_sum_chunk chunk{c, 5, 2};  // chunks {0,1} {2,3} {4}
  EXPECT_EQ(chunk(0), 8u);
  EXPECT_EQ(chunk(1), 116u);
  EXPECT_EQ(chunk(2), 6u);
  const mcubes::share_sum_chunk sum{share, 5, 2};
  EXPECT_EQ(sum(1), 1.0 + 1e9);
  EXPECT_EQ(sum(2), 0.333);
}

}  // namespace

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
#include "mcubes/core/sampler.hpp"

#include <cmath>
#include <limits>
#include <random>
#include <cstdio>

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
      // segments: a power of two >= 64 and >= 2 floor(N/m), the smallest such
      const u64 L = s.segment_samples;
      EXPECT_EQ(L & (L - 1), 0u);
      EXPECT_GE(L, 64u);
      EXPECT_GE(L, 2 * (calls / s.n_cubes));
      EXPECT_TRUE(L == 64 || L / 2 < 2 * (calls / s.n_cubes));
    }
  }
  EXPECT_FALSE(mcubes::make_stratification(4, 1000).adaptive());
  EXPECT_EQ(mcubes::make_stratification(4, 1000).segment_samples, 0u);
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

// One water-filling search (find_count_scale) over shares d with calls per iteration `calls`, as
// algorithm/vegas.hpp's allocate_counts sets it up (n_min, the cap, the first scale A / sum d):
// checks what every search must give (the count of the scale returned, within the calls, a scale
// at least the first guess) and, where the `takers` sub-cubes that can take samples (non-zero
// shares) can take the calls at their caps, that the count is within 0.1 % of them. Returns the
// tries after the first count.
int checked_count_search(const std::vector<double>& d, u64 calls, u64 takers) {
  const u64 m = d.size();
  const u64 n_base = std::max<u64>(2, calls / (4 * m));
  const u64 cap_extra = std::max<u64>(50000, 8 * (calls / m)) - n_base;
  double total = 0;
  for (double x : d) total += x;
  mcubes::cube_counts c;
  c.n_base = n_base;
  c.n_extra_max = cap_extra;
  c.share_in = d.data();
  int tries = 0;
  const auto count_at = [&](double s) {
    ++tries;
    c.scale = s;
    u64 n = 0;
    for (u64 h = 0; h < m; ++h) n += c.count(h);
    return n;
  };
  const double s0 = static_cast<double>(calls - m * n_base) / total;
  const u64 n0 = count_at(s0);
  tries = 0;
  const mcubes::count_scale r = mcubes::find_count_scale(s0, n0, m * n_base, calls, count_at);
  const int searched = tries;
  EXPECT_EQ(count_at(r.scale), r.count);
  EXPECT_LE(r.count, calls);
  EXPECT_GE(r.scale, s0);
  if (m * n_base + takers * cap_extra >= calls) {  // the sub-cubes that can take samples, capped
    EXPECT_GE(r.count, calls - calls / 1024);
  }
  return searched;
}

// The water-filling search of the counts' scale (find_count_scale): within the calls, within 0.1 %
// of them where the caps allow, in few tries, on shares from flat to a few dominant sub-cubes.
TEST(CubeCounts, WaterFillingFindsTheCallsInFewTries) {
  std::mt19937_64 rng(11);
  int worst = 0;
  for (int trial = 0; trial < 200; ++trial) {
    const u64 m = 1000 + rng() % 50000;
    const u64 calls = m * (4 + rng() % 60);
    std::vector<double> d(m);
    std::lognormal_distribution<double> spread(0.0, 0.5 + (trial % 8));  // up to a few dominant ones
    for (double& x : d) x = spread(rng);
    SCOPED_TRACE("trial " + std::to_string(trial) + ": m = " + std::to_string(m) + ", calls = " + std::to_string(calls));
    worst = std::max(worst, checked_count_search(d, calls, m));
  }
  EXPECT_LE(worst, 16) << "the search took " << worst << " tries";
  std::printf("most tries of the water-filling search over 200 allocations: %d\n", worst);
}

// The search on shares over hundreds of orders of magnitude (a narrow peak seen through a coarse
// map: the 9-D narrow Gaussian's first allocations took 52 tries, and shares like these made the
// linear rule alone stop after one try without growth at 26-34 % of the calls, or creep through
// all 64 tries to 80 %): the calls are reached, within 0.1 %, where the sub-cubes that can take
// samples allow it, in few tries.
TEST(CubeCounts, WaterFillingReachesTheCallsOnSharesOverManyDecades) {
  std::mt19937_64 rng(7);
  std::uniform_real_distribution<double> uniform(0.0, 1.0);
  int worst = 0;
  for (int trial = 0; trial < 40; ++trial) {
    const u64 m = 20000 + rng() % 30000;
    const u64 calls = m * (4 + rng() % 60);
    std::vector<double> d(m);
    u64 nonzero = 0;
    for (double& x : d) {
      if (trial % 2 == 0) {
        x = std::pow(10.0, -300 * uniform(rng));  // log-uniform over 300 decades
      } else {  // a 9-D Gaussian of exponent 20 .. 410 over [-1, 1]^9, many shares underflowing to 0
        double r2 = 0;
        for (int j = 0; j < 9; ++j) {
          const double u = 2 * uniform(rng) - 1;
          r2 += u * u;
        }
        x = std::exp(-(20.0 + 10.0 * trial) * r2);
      }
      nonzero += x > 0 ? 1 : 0;
    }
    SCOPED_TRACE("trial " + std::to_string(trial) + ": m = " + std::to_string(m) + ", calls = " + std::to_string(calls));
    worst = std::max(worst, checked_count_search(d, calls, nonzero));
  }
  EXPECT_LE(worst, 16) << "the search took " << worst << " tries";
  std::printf("most tries over 40 allocations on shares over many decades: %d\n", worst);
}

// The segment rule of sample_cubes (core/sampler.hpp): a sub-cube's sums are the serial sums of
// its segments' serial sums; a sub-cube of at most L samples is its plain serial sum. And a backend
// that samples the large sub-cubes' segments apart (sample_segment, finish_cube) and hands them to
// sample_cubes as precomputed (the CUDA backend's heavy sub-cubes) gets the same bits.
struct bumpy3 {
  double operator()(const mcubes::point<3>& x) const { return 1.0 + 1e3 * x[0] * x[0] * x[1] + (x[2] < 0.3 ? 7.5 : 0.1); }
};

struct sum_sink {  // integer sums of the bin terms per (level, axis, bin) of 3 axes x 4 bins: any order, same value
  static constexpr bool enabled = true;
  std::vector<u64> v = std::vector<u64>(8 * 3 * 4, 0);
  void add(int j, int b, u64 q) { v[j * 4 + b] += q; }
  void add_level(int l, int j, int b, u64 q) { v[(l * 3 + j) * 4 + b] += q; }
};

struct test_precomputed {
  static constexpr bool enabled = true;
  const std::vector<double>* means;
  const std::vector<double>* vars;
  std::uint64_t segment;
  std::uint64_t first(std::uint64_t) const { return 0; }  // the test passes the whole range
  bool precomputed(std::uint64_t n) const { return n > segment; }
  double mean(std::uint64_t h) const { return (*means)[h]; }
  double var(std::uint64_t h) const { return (*vars)[h]; }
};

// The uniform_counts form of sample_cubes (the uniform grid's GPU kernels: finish_uniform_cube,
// products by the pass's reciprocals where p and p (p - 1) are powers of two) against the
// any_counts form (finish_cube: the divisions), chunk by chunk, bit for bit: p = 2 (both
// reciprocals), 4, 8, 16 (the mean's), 3, 5 (none), and a pass whose p was set without its
// reciprocals (divides).
TEST(UniformCounts, FinishUniformCubeIsFinishCubeBitwise) {
  using namespace mcubes;
  constexpr int D = 3;
  const std::vector<double> edges = [] {
    std::vector<double> e;
    for (int j = 0; j < D; ++j)
      for (int i = 0; i <= 4; ++i) e.push_back(j == 1 ? (i * i) / 16.0 : i / 4.0);
    return e;
  }();
  const map_view<D> map{edges.data(), 4};
  const bumpy3 f;
  int products = 0;
  for (const u64 p : {2, 4, 8, 16, 3, 5, 0}) {
    sampling_params<D> sp;
    for (int j = 0; j < D; ++j) sp.lower[j] = -1, sp.width[j] = 2.5;
    sp.g = 9;
    sp.inv_g = 1.0 / 9.0;
    sp.n_cubes = 729;
    if (p != 0) {
      sp.set_samples_per_cube(p);
    } else {
      sp.p = 2;  // p_inv, p_var_inv left 0: divisions
    }
    products += sp.p_inv != 0;
    sp.chunk_cubes = 5;
    sp.seed = 11;
    sp.iteration = 2;
    const vegas_stream_uniforms uni{sp.seed, sp.iteration};
    for (u64 begin = 0; begin < sp.n_cubes; begin += sp.chunk_cubes) {
      const u64 end = std::min<u64>(begin + sp.chunk_cubes, sp.n_cubes);
      cube_coord_t<D> c1[D], c2[D];
      cube_start<D>(begin, sp.g, c1);
      cube_start<D>(begin, sp.g, c2);
      no_bins b1, b2;
      const chunk_partial a =
          sample_cubes<D>(f, sp, map, begin, end, c1, b1, uni, no_poll{}, no_precomputed_cubes{}, any_counts{});
      const chunk_partial u =
          sample_cubes<D>(f, sp, map, begin, end, c2, b2, uni, no_poll{}, no_precomputed_cubes{}, uniform_counts{});
      ASSERT_EQ(a.estimate, u.estimate) << "p " << sp.p << ", sub-cubes from " << begin;
      ASSERT_EQ(a.variance, u.variance) << "p " << sp.p << ", sub-cubes from " << begin;
      ASSERT_GT(a.variance, 0.0);
    }
  }
  EXPECT_EQ(products, 4);
}

TEST(SegmentRule, SerialSumsOfSegmentsAndTheSplitPassAgree) {
  using namespace mcubes;
  constexpr int D = 3;
  const stratification st = make_adaptive_stratification(D, 4000);
  ASSERT_EQ(st.segment_samples, 64u);
  sampling_params<D> sp;
  for (int j = 0; j < D; ++j) sp.lower[j] = 0, sp.width[j] = 1;
  sp.g = st.g;
  sp.inv_g = 1.0 / static_cast<double>(st.g);
  sp.n_cubes = st.n_cubes;
  sp.p = st.samples_per_cube;
  sp.chunk_cubes = st.chunk_cubes;
  sp.seed = 7;
  sp.iteration = 3;
  std::vector<double> share(st.n_cubes), out_serial(st.n_cubes), out_split(st.n_cubes);
  for (u64 c = 0; c < st.n_cubes; ++c) share[c] = (c % 7 == 3) ? 50.0 : (c % 5) * 0.5;  // some sub-cubes of 2-4 segments
  sp.counts.n_base = st.min_samples_per_cube;
  sp.counts.n_extra_max = st.samples_per_cube - st.min_samples_per_cube;
  sp.counts.scale = 4.0;
  sp.counts.share_in = share.data();
  sp.counts.segment = st.segment_samples;
  sp.counts.beta16 = 12;
  const std::vector<double> edges = [] {
    std::vector<double> e;
    for (int j = 0; j < D; ++j)
      for (int i = 0; i <= 4; ++i) e.push_back(i / 4.0);
    return e;
  }();
  const map_view<D> map{edges.data(), 4};
  const vegas_stream_uniforms uni{sp.seed, sp.iteration};
  const bumpy3 f;
  const u64 L = st.segment_samples;

  // 1. each sub-cube alone against the rule written out
  u64 multi = 0;
  for (u64 c = 0; c < st.n_cubes; ++c) {
    const u64 n = sp.counts.count(c);
    multi += n > L;
    cube_coord_t<D> coord[D];
    cube_start<D>(c, sp.g, coord);
    sum_sink bins;
    const chunk_partial one = sample_cubes<D>(f, sp, map, c, c + 1, coord, bins, uni);
    double cd[D];
    std::uint64_t ic[D];
    cube_coordinates<D>(c, sp.g, ic);
    for (int j = 0; j < D; ++j) cd[j] = static_cast<double>(ic[j]);
    double s1 = 0, s2 = 0, t1 = 0, t2 = 0;
    for (u64 k = 0; k < n; ++k) {
      point<D> x;
      int bin[D];
      const double jac = make_sample<D>(sp, map, uni, cd, c * sp.p + k, x, bin);
      const double fj = f(x) * jac;
      t1 += fj;
      t2 += fj * fj;
      if ((k + 1) % L == 0 || k + 1 == n) s1 += t1, s2 += t2, t1 = t2 = 0;
    }
    const double pd = static_cast<double>(n);
    const double mean = s1 / pd;
    double var = (s2 - s1 * mean) / (pd * (pd - 1));
    if (var <= 0) var = 0;
    ASSERT_EQ(one.estimate, mean) << "sub-cube " << c << " of " << n << " samples";
    ASSERT_EQ(one.variance, var) << "sub-cube " << c;
  }
  ASSERT_GT(multi, 0u) << "no sub-cube of several segments: the test misses the rule";

  // 2. the whole pass, serial, against the split one, whose precomputed sub-cubes are those of
  // more than T samples: T = L, and T = 8 < L (sub-cubes of one segment precomputed too: the
  // threshold is a backend's choice, heavy_above)
  sp.counts.share_out = out_serial.data();
  cube_coord_t<D> coord[D] = {};
  sum_sink bins_serial;
  const chunk_partial serial = sample_cubes<D>(f, sp, map, 0, st.n_cubes, coord, bins_serial, uni);
  for (const u64 T : {L, u64(8)}) {
  SCOPED_TRACE(testing::Message() << "precomputed above " << T << " samples");
  u64 one_segment = 0;
  sum_sink bins_split;
  std::fill(out_split.begin(), out_split.end(), 0.0);
  sp.counts.share_out = out_split.data();
  std::vector<double> means, vars;
  chunk_partial flags_split;
  for (u64 c = 0; c < st.n_cubes; ++c) {
    const u64 n = sp.counts.count(c);
    if (n <= T) continue;
    one_segment += n <= L;
    std::uint64_t ic[D];
    cube_coordinates<D>(c, sp.g, ic);
    double cd[D];
    for (int j = 0; j < D; ++j) cd[j] = static_cast<double>(ic[j]);
    std::vector<double> seg1, seg2;  // each segment apart (as one thread each would)
    for (u64 k0 = 0; k0 < n; k0 += L) {
      double t1 = 0, t2 = 0;
      sample_segment<D>(f, sp, map, uni, cd, c * sp.p + k0, c * sp.p + std::min(n, k0 + L), c * sp.p,
                        sp.bin_scale / static_cast<double>(n), bins_split, flags_split, t1, t2, no_poll{});
      seg1.push_back(t1);
      seg2.push_back(t2);
    }
    double s1 = 0, s2 = 0;
    for (std::size_t i = 0; i < seg1.size(); ++i) s1 += seg1[i], s2 += seg2[i];
    const cube_estimate ce = finish_cube(s1, s2, static_cast<double>(n), sp.counts, c);
    means.push_back(ce.mean);
    vars.push_back(ce.var);
  }
  cube_coord_t<D> coord2[D] = {};
  const chunk_partial split = sample_cubes<D>(f, sp, map, 0, st.n_cubes, coord2, bins_split, uni, no_poll{},
                                              test_precomputed{&means, &vars, T});
  EXPECT_EQ(split.estimate, serial.estimate);
  EXPECT_EQ(split.variance, serial.variance);
  EXPECT_EQ(split.n_nonzero + flags_split.n_nonzero, serial.n_nonzero);
  EXPECT_EQ(std::max(split.max_contribution, flags_split.max_contribution), serial.max_contribution);
  EXPECT_EQ(bins_split.v, bins_serial.v);
  EXPECT_EQ(out_split, out_serial);
  if (T < L) {
    EXPECT_GT(one_segment, 0u) << "no precomputed sub-cube of one segment: the threshold below L is not tested";
  }
  }
}

}  // namespace

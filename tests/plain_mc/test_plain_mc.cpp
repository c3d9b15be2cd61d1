// Plain Monte Carlo on the CPU (algorithm/plain_mc.hpp): integrals of known value within 4 sigma
// at fixed seeds (own integrands and the suite), the stable error formula, the status against the
// tolerances, bitwise thread-count invariance, non-finite values, overflow and bad input; and the
// CPU tile scheduler shared with the midpoint rule and pi (backend/cpu_tiles.hpp): the bits of the
// fixed tree, and memory that does not grow with the number of chunks.
#include <gtest/gtest.h>

#include <atomic>
#include <cmath>
#include <cstdint>
#include <limits>
#include <random>
#include <stdexcept>
#include <string>
#include <vector>

#include <mcubes/mcubes.hpp>
#include <mcubes/algorithm/vegas.hpp>
#include <mcubes/suite.hpp>

#include "support/bits.hpp"

namespace {

constexpr double max_pull = 4.0;  ///< |estimate - exact| <= 4 reported standard errors

using mcubes_test::bits;

struct constant3 {
  double operator()(const mcubes::point<3>&) const { return 2.5; }
};
struct linear2 {  // int over [1,3]x[0,2] of (x + 2y) = 2*2*(2 + 2) = 16
  double operator()(const mcubes::point<2>& x) const { return x[0] + 2 * x[1]; }
};
struct offset1 {  // 1e9 + u on [0,1]: variance 1/12 buried under a huge mean
  double operator()(const mcubes::point<1>& x) const { return 1e9 + x[0]; }
};
struct zero2 {
  double operator()(const mcubes::point<2>&) const { return 0.0; }
};
struct nan_corner {  // NaN where x0 > 0.999 and x1 > 0.99
  double operator()(const mcubes::point<2>& x) const {
    return (x[0] > 0.999 && x[1] > 0.99) ? std::numeric_limits<double>::quiet_NaN() : x[0];
  }
};

mcubes::plain_mc_options opts(std::uint64_t n, std::uint64_t seed, int threads = 0) {
  mcubes::plain_mc_options o;
  o.samples = n;
  o.seed = seed;
  o.threads = threads;
  return o;
}

TEST(PlainMC, ConstantIsExactWithZeroError) {
  const mcubes::region<3> reg({0, 0, 0}, {1, 2, 4});
  const mcubes::result r = mcubes::plain_mc<3>(constant3{}, reg, opts(100000, 1));
  EXPECT_DOUBLE_EQ(r.estimate, 2.5 * 8);
  EXPECT_EQ(r.error, 0.0);
  EXPECT_EQ(r.status, mcubes::status::converged);
  EXPECT_EQ(r.n_eval, 100000u);
  EXPECT_EQ(r.seed, 1u);
  EXPECT_EQ(r.backend, "cpu");
  ASSERT_EQ(r.records.size(), 1u);
  EXPECT_EQ(r.records[0].n_nonzero, 100000u);
}

TEST(PlainMC, LinearWithinFourSigmaAndErrorMatchesTheory) {
  const mcubes::region<2> reg({1, 0}, {3, 2});
  for (std::uint64_t seed : {1u, 2u, 3u}) {
    const std::uint64_t n = 1000000;
    const mcubes::result r = mcubes::plain_mc<2>(linear2{}, reg, opts(n, seed));
    EXPECT_LE(std::fabs(r.estimate - 16.0), max_pull * r.error) << "seed " << seed;
    // Var f = Var x + 4 Var y = 4/12 + 16/12 = 5/3 (uniform on width-2 intervals): error = V sqrt(Var/N)
    EXPECT_NEAR(r.error, 4 * std::sqrt(5.0 / 3.0 / n), 0.02 * r.error);
  }
}

TEST(PlainMC, ErrorIsStableUnderALargeOffset) {
  // a one-pass sum(f^2) - N mean^2 would lose every digit here (f^2 ~ 1e18, variance 1/12)
  const std::uint64_t n = 2000000;
  const mcubes::result r = mcubes::plain_mc<1>(offset1{}, mcubes::region<1>::unit(), opts(n, 5));
  EXPECT_NEAR(r.error, std::sqrt(1.0 / 12.0 / n), 0.01 * std::sqrt(1.0 / 12.0 / n));
  EXPECT_LE(std::fabs(r.estimate - (1e9 + 0.5)), max_pull * r.error + 1e-6);
}

// f1..f6 on both backends: tests/backends/method_tests.hpp (plain_mc_suite_within).
TEST(PlainMC, FAWithinFourSigma) {  // fA over (0,10)^6
  const mcubes::result r = mcubes::plain_mc<6>(mcubes::suite::fA_sin_sum{}, mcubes::region<6>::cube(0, 10), opts(1000000, 3));
  EXPECT_LE(std::fabs(r.estimate - mcubes::suite::exact_fA()), max_pull * r.error) << r.estimate << " +- " << r.error;
}

TEST(PlainMC, BitwiseIdenticalForAnyThreadCount) {
  const std::uint64_t n = 3000007;  // not a multiple of the chunk size
  const mcubes::result ref = mcubes::plain_mc<3>(mcubes::suite::f3_corner_peak{}, mcubes::region<3>::unit(), opts(n, 9, 1));
  for (int t : {2, 3, 8}) {
    const mcubes::result r = mcubes::plain_mc<3>(mcubes::suite::f3_corner_peak{}, mcubes::region<3>::unit(), opts(n, 9, t));
    EXPECT_EQ(bits(r.estimate), bits(ref.estimate)) << t << " threads";
    EXPECT_EQ(bits(r.error), bits(ref.error)) << t << " threads";
  }
  // and a different seed gives a different estimate
  EXPECT_NE(mcubes::plain_mc<3>(mcubes::suite::f3_corner_peak{}, mcubes::region<3>::unit(), opts(n, 10)).estimate, ref.estimate);
}

TEST(PlainMC, PointsFollowTheStreamContract) {
  const mcubes::region<2> reg({-1, 2}, {1, 6});
  const mcubes::plain_mc_params<2> p = mcubes::detail::make_plain_mc_params<2>(reg, opts(1000, 77));
  mcubes::point<2> x;
  mcubes::plain_mc_point<2>(p, 123, x);
  double u[2];
  mcubes::sample_stream(77, mcubes::stream_id::plain_mc, 0, 123).fill(u);
  EXPECT_EQ(x[0], -1 + 2 * u[0]);
  EXPECT_EQ(x[1], 2 + 4 * u[1]);
}

TEST(PlainMC, AllZeroIsNotResolved) {
  const mcubes::result r = mcubes::plain_mc<2>(zero2{}, mcubes::region<2>::unit(), opts(1000, 1));
  EXPECT_EQ(r.status, mcubes::status::not_resolved);
  EXPECT_EQ(r.estimate, 0.0);
  EXPECT_TRUE(std::isinf(r.error));
}

TEST(PlainMCErrors, NonFiniteValueNamesTheFirstSample) {
  const std::uint64_t n = 2000000;
  const mcubes::plain_mc_params<2> p = mcubes::detail::make_plain_mc_params<2>(mcubes::region<2>::unit(), opts(n, 4));
  std::uint64_t first = ~std::uint64_t(0);  // serial scan for the reference
  for (std::uint64_t k = 0; k < n && first == ~std::uint64_t(0); ++k) {
    mcubes::point<2> x;
    mcubes::plain_mc_point<2>(p, k, x);
    if (std::isnan(nan_corner{}(x))) first = k;
  }
  ASSERT_NE(first, ~std::uint64_t(0));
  for (int t : {1, 2, 8}) {
    try {
      mcubes::plain_mc<2>(nan_corner{}, mcubes::region<2>::unit(), opts(n, 4, t));
      FAIL() << "no exception";
    } catch (const mcubes::non_finite_integrand& e) {
      EXPECT_EQ(e.sample_index(), first) << t << " threads";
      ASSERT_EQ(e.point().size(), 2u);
      EXPECT_GT(e.point()[0], 0.999);
      EXPECT_GT(e.point()[1], 0.99);
      EXPECT_TRUE(std::isnan(e.value()));
    }
  }
}

// ---- status

struct heavy_tail12 {  // prod_j 1 / (2 sqrt(x_j)): integral 1, infinite variance
  double operator()(const mcubes::point<12>& x) const {
    double p = 1;
    for (int j = 0; j < 12; ++j) p *= 0.5 / std::sqrt(x[j]);
    return p;
  }
};

TEST(PlainMCStatus, HeavyTailedIntegrandIsNotConverged) {
  // the audit's case: an infinite-variance 12-D integrand, few samples. Whatever the estimate, the
  // error it reports is far above rel_tol |estimate|: never converged.
  for (std::uint64_t seed : {1u, 2u, 3u}) {
    const mcubes::result r = mcubes::plain_mc<12>(heavy_tail12{}, mcubes::region<12>::unit(), opts(10000, seed));
    EXPECT_EQ(r.status, mcubes::status::not_converged) << "seed " << seed << ": " << r.estimate << " +- " << r.error;
    EXPECT_GT(r.error, 10 * r.options.rel_tol * std::fabs(r.estimate)) << "seed " << seed;
    EXPECT_TRUE(std::isfinite(r.estimate) && std::isfinite(r.error));
    EXPECT_EQ(r.accumulated, 1);
  }
}

TEST(PlainMCStatus, SmoothIntegrandConvergesWithEnoughSamples) {
  // linear2: error = 4 sqrt(5/3/N) = 0.0052 at N = 1e6, below 1e-3 * 16
  const mcubes::region<2> reg({1, 0}, {3, 2});
  const mcubes::result r = mcubes::plain_mc<2>(linear2{}, reg, opts(1000000, 1));
  EXPECT_EQ(r.status, mcubes::status::converged);
  EXPECT_LE(r.error, 1e-3 * std::fabs(r.estimate));
  EXPECT_LE(std::fabs(r.estimate - 16.0), max_pull * r.error);
  EXPECT_EQ(r.options.rel_tol, 1e-3);
  EXPECT_EQ(r.options.abs_tol, 0.0);
  // too few samples for the default tolerance: 4 sqrt(5/3/1e4) = 0.052 > 0.016
  EXPECT_EQ(mcubes::plain_mc<2>(linear2{}, reg, opts(10000, 1)).status, mcubes::status::not_converged);
  // a tighter relative tolerance, then an absolute one
  mcubes::plain_mc_options o = opts(1000000, 1);
  o.rel_tol = 1e-4;
  EXPECT_EQ(mcubes::plain_mc<2>(linear2{}, reg, o).status, mcubes::status::not_converged);
  o.rel_tol = 0;
  o.abs_tol = 0.01;
  const mcubes::result a = mcubes::plain_mc<2>(linear2{}, reg, o);
  EXPECT_EQ(a.status, mcubes::status::converged);
  EXPECT_EQ(a.options.abs_tol, 0.01);
  EXPECT_EQ(a.estimate, r.estimate);  // the tolerance never changes the numbers
  EXPECT_EQ(a.error, r.error);
}

struct tiny2 {
  double operator()(const mcubes::point<2>& x) const { return 1e-300 * (1 + x[0]); }
};
struct centred1 {  // x - 1/2 on [0,1]: integral 0, values of order 1
  double operator()(const mcubes::point<1>& x) const { return x[0] - 0.5; }
};

TEST(PlainMCStatus, TinyValuesAreUnderflow) {
  const mcubes::result r = mcubes::plain_mc<2>(tiny2{}, mcubes::region<2>::unit(), opts(10000, 1));
  EXPECT_EQ(r.status, mcubes::status::underflow);
  EXPECT_TRUE(std::isinf(r.error));
  EXPECT_NEAR(r.estimate, 1.5e-300, 0.05e-300);  // still reported
  ASSERT_EQ(r.records.size(), 1u);
  EXPECT_TRUE(r.records[0].underflow);
  EXPECT_EQ(r.records[0].n_nonzero, 10000u);
  EXPECT_EQ(r.accumulated, 0);
  // values of order 1 over a region of volume 1e-300: as Vegas, whose estimate includes the volume
  const mcubes::region<2> small({0.0, 0.0}, {1e-150, 1e-150});
  EXPECT_EQ(mcubes::plain_mc<2>(linear2{}, small, opts(1000, 1)).status, mcubes::status::underflow);
  // the threshold is Vegas's
  EXPECT_EQ(mcubes::underflow_scale, mcubes::underflow_estimate);
}

TEST(PlainMCStatus, CancellingValuesAreNotUnderflow) {
  // an estimate near 0 from values of order 1 has a well-defined error: judged by the tolerances
  const mcubes::result r = mcubes::plain_mc<1>(centred1{}, mcubes::region<1>::unit(), opts(100000, 3));
  EXPECT_EQ(r.status, mcubes::status::not_converged);  // rel_tol |estimate| is far below the error
  EXPECT_LE(std::fabs(r.estimate), max_pull * r.error);
  EXPECT_NEAR(r.error, std::sqrt(1.0 / 12.0 / 100000), 0.02 * r.error);
  mcubes::plain_mc_options o = opts(100000, 3);
  o.abs_tol = 0.002;
  EXPECT_EQ(mcubes::plain_mc<1>(centred1{}, mcubes::region<1>::unit(), o).status, mcubes::status::converged);
}

// ---- overflow

struct split_huge {  // +-1e200: finite, but (f - f_first)^2 = 4e400 overflows
  double operator()(const mcubes::point<1>& x) const { return x[0] < 0.5 ? 1e200 : -1e200; }
};
struct huge_const {
  double operator()(const mcubes::point<1>&) const { return 1e308; }
};

TEST(PlainMCErrors, OverflowNamesTheSampleAndNeverGivesNaN) {
  const std::uint64_t n = 100000;
  // the first sample whose value differs from the first of its chunk (chunk 0: 16 samples)
  const mcubes::plain_mc_params<1> p = mcubes::detail::make_plain_mc_params<1>(mcubes::region<1>::unit(), opts(n, 6));
  mcubes::point<1> x;
  mcubes::plain_mc_point<1>(p, 0, x);
  const double first = split_huge{}(x);
  std::uint64_t k = 1;
  for (; k < p.chunk_samples; ++k) {
    mcubes::plain_mc_point<1>(p, k, x);
    if (split_huge{}(x) != first) break;
  }
  ASSERT_LT(k, p.chunk_samples) << "seed 6 puts chunk 0 on one side; pick another";
  for (int t : {1, 2, 3}) {
    try {
      mcubes::plain_mc<1>(split_huge{}, mcubes::region<1>::unit(), opts(n, 6, t));
      FAIL() << "no exception";
    } catch (const mcubes::non_finite_integrand&) {
      FAIL() << "an overflow of finite values is not a non-finite integrand";
    } catch (const mcubes::numerical_error& e) {
      const std::string what = e.what();
      EXPECT_NE(what.find("at sample " + std::to_string(k) + ","), std::string::npos) << t << " threads: " << what;
      EXPECT_NE(what.find("x = ("), std::string::npos) << what;
      EXPECT_NE(what.find("overflow"), std::string::npos) << what;
    }
  }
  // f finite, V mean(f) = 10 x 1e308 overflows: named as the estimate
  try {
    mcubes::plain_mc<1>(huge_const{}, mcubes::region<1>({0.0}, {10.0}), opts(1000, 1));
    FAIL() << "no exception";
  } catch (const mcubes::numerical_error& e) {
    EXPECT_NE(std::string(e.what()).find("estimate"), std::string::npos) << e.what();
  }
  // the largest values that fit: a finite result
  const mcubes::result r = mcubes::plain_mc<1>(huge_const{}, mcubes::region<1>::unit(), opts(1000, 1));
  EXPECT_EQ(r.estimate, 1e308);
  EXPECT_EQ(r.error, 0.0);
}

TEST(PlainMCErrors, BadToleranceIsRejected) {
  auto expect_rejected = [](double rel, double abs, const char* field) {
    mcubes::plain_mc_options o = opts(100, 1);
    o.rel_tol = rel;
    o.abs_tol = abs;
    try {
      mcubes::plain_mc<2>(linear2{}, mcubes::region<2>::unit(), o);
      ADD_FAILURE() << "no exception for rel_tol " << rel << ", abs_tol " << abs;
    } catch (const mcubes::invalid_input& e) {
      EXPECT_NE(std::string(e.what()).find(field), std::string::npos) << e.what();
    }
  };
  // the rules themselves are mcubes::validate_tolerances's (tests/errors/test_numerics.cpp)
  expect_rejected(-1e-3, 0, "rel_tol");
  expect_rejected(1e-3, std::nan(""), "abs_tol");
  expect_rejected(0, 0, "at least one");
}

TEST(PlainMCErrors, BadInputIsRejected) {
  const auto reg = mcubes::region<2>::unit();
  EXPECT_THROW(mcubes::plain_mc<2>(linear2{}, reg, opts(0, 1)), mcubes::invalid_input);
  EXPECT_THROW(mcubes::plain_mc<2>(linear2{}, reg, opts(1, 1)), mcubes::invalid_input);
  EXPECT_THROW(mcubes::plain_mc<2>(linear2{}, reg, opts((std::uint64_t(1) << 62) + 1, 1)), mcubes::invalid_input);
  EXPECT_THROW(mcubes::plain_mc<2>(linear2{}, reg, opts(100, 1, -2)), mcubes::invalid_input);
  mcubes::plain_mc_options o = opts(100, 1);
  o.cuda_threads_per_block = 31;
  EXPECT_THROW(mcubes::plain_mc<2>(linear2{}, reg, o), mcubes::invalid_input);
  o = opts(100, 1);
  o.backend = mcubes::backend_kind::cuda;  // not compiled by nvcc
  EXPECT_THROW(mcubes::plain_mc<2>(linear2{}, reg, o), mcubes::invalid_input);
  o.backend = mcubes::backend_kind::automatic;
  EXPECT_EQ(mcubes::plain_mc<2>(linear2{}, reg, o).backend, "cpu");
  EXPECT_THROW(mcubes::region<2>({0, 1}, {1, 1}), mcubes::invalid_input);
}

TEST(PlainMCChunking, DependsOnTheSampleCountOnly) {
  const mcubes::plain_mc_chunking a = mcubes::make_plain_mc_chunking(1000000);
  EXPECT_EQ(a.chunk_samples, 16u);
  EXPECT_EQ(a.n_chunks, 62500u);
  const mcubes::plain_mc_chunking b = mcubes::make_plain_mc_chunking(std::uint64_t(1) << 40);
  EXPECT_EQ(b.chunk_samples, std::uint64_t(1) << 20);
  EXPECT_EQ(b.n_chunks, std::uint64_t(1) << 20);
}

// ---- the CPU tile scheduler (backend/cpu_tiles.hpp)

/// A deterministic pseudo-random value for leaf i (splitmix64), spread over many magnitudes so that
/// the merges round differently in any other order.
double leaf_value(std::uint64_t i) {
  std::uint64_t z = i + 0x9E3779B97F4A7C15ull;
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
  z ^= z >> 31;
  return std::ldexp(static_cast<double>(z >> 11), -53 + static_cast<int>(z % 40)) - 0.3;
}

mcubes::moments leaf_moments(std::uint64_t i) {
  const double v = leaf_value(i);
  return mcubes::moments{1 + i % 3, v, std::fabs(v) * 0.25};
}

using mcubes_test::same_bits;

const auto merge_moments = [](const mcubes::moments& a, const mcubes::moments& b) { return mcubes::merge(a, b); };
const auto merge_dd = [](const mcubes::dd_sum& a, const mcubes::dd_sum& b) { return mcubes::merge(a, b); };

TEST(CpuTiles, AccumulatorEqualsTheRecursiveTreeBitwise) {
  std::vector<std::uint64_t> sizes;
  for (std::uint64_t n = 0; n <= 300; ++n) sizes.push_back(n);
  for (std::uint64_t n : {511u, 512u, 513u, 1023u, 1024u, 1025u, 3000u, 4096u, 4097u, 65537u}) sizes.push_back(n);
  for (std::uint64_t n : sizes) {
    std::vector<mcubes::moments> m(n);
    std::vector<mcubes::dd_sum> d(n);
    for (std::uint64_t i = 0; i < n; ++i) {
      m[i] = leaf_moments(i + 7 * n);
      d[i] = mcubes::two_sum(leaf_value(i + 11 * n), leaf_value(i + 13 * n) * 1e-17);
    }
    mcubes::tree_accumulator<mcubes::moments, decltype(merge_moments)> am(merge_moments);
    mcubes::tree_accumulator<mcubes::dd_sum, decltype(merge_dd)> ad(merge_dd);
    for (std::uint64_t i = 0; i < n; ++i) {
      am.push(m[i]);
      ad.push(d[i]);
    }
    EXPECT_EQ(am.count(), n);
    const std::uint64_t w = n ? mcubes::next_pow2(n) : 1;
    EXPECT_TRUE(same_bits(am.result(), mcubes::fixed_tree_reduce(m.data(), n, w, merge_moments))) << "n = " << n;
    EXPECT_TRUE(same_bits(am.result(), mcubes::fixed_tree_reduce(m.data(), n, 4 * w, merge_moments))) << "n = " << n;
    const mcubes::dd_sum ref = mcubes::fixed_tree_reduce(d.data(), n, w, merge_dd);
    EXPECT_EQ(bits(ad.result().hi), bits(ref.hi)) << "n = " << n;
    EXPECT_EQ(bits(ad.result().lo), bits(ref.lo)) << "n = " << n;
  }
}

TEST(CpuTiles, ReductionIsTheFlatTreeForAnyThreadCount) {
  // the tiles, the window and the binary counter give the bits of one tree_reduce over all chunks
  for (std::uint64_t n : {1u, 2u, 3u, 1000u, 1023u, 1024u, 1025u, 4097u, 70001u, (1u << 20) + 3u}) {
    std::vector<mcubes::moments> all(n);
    for (std::uint64_t i = 0; i < n; ++i) all[i] = leaf_moments(i);
    const mcubes::moments ref = mcubes::fixed_tree_reduce(all.data(), n, mcubes::next_pow2(n), merge_moments);
    for (int t : {1, 2, 3, 8}) {
      const mcubes::moments r = mcubes::cpu_tree_reduce<mcubes::moments>(
          n, t, [](std::uint64_t i) { return leaf_moments(i); }, merge_moments);
      EXPECT_TRUE(same_bits(r, ref)) << "n = " << n << ", " << t << " threads";
    }
  }
}

/// A partial that counts how many of its kind are alive, and the peak.
struct counted {
  static std::atomic<std::int64_t> live, peak;
  std::uint64_t v = 0;
  static void note() {
    const std::int64_t now = ++live;
    std::int64_t p = peak.load();
    while (now > p && !peak.compare_exchange_weak(p, now)) {
    }
  }
  counted() { note(); }
  explicit counted(std::uint64_t x) : v(x) { note(); }
  counted(const counted& o) : v(o.v) { note(); }
  counted& operator=(const counted&) = default;
  ~counted() { --live; }
  static void reset() { peak = live.load(); }
};
std::atomic<std::int64_t> counted::live{0};
std::atomic<std::int64_t> counted::peak{0};

std::int64_t peak_partials(std::uint64_t n_chunks, int threads, std::uint64_t& sum) {
  counted::reset();
  const std::int64_t before = counted::live.load();
  const counted r = mcubes::cpu_tree_reduce<counted>(
      n_chunks, threads, [](std::uint64_t i) { return counted(i); },
      [](const counted& a, const counted& b) { return counted(a.v + b.v); });
  sum = r.v;
  return counted::peak.load() - before;
}

TEST(CpuTiles, MemoryDoesNotGrowWithTheNumberOfChunks) {
  // one thread: the same peak for 2^12 and 2^22 chunks (a vector of tile results would hold 4096)
  std::uint64_t sum = 0;
  const std::int64_t small = peak_partials(std::uint64_t(1) << 12, 1, sum);
  EXPECT_EQ(sum, (std::uint64_t(1) << 12) * ((std::uint64_t(1) << 12) - 1) / 2);
  const std::uint64_t big_n = std::uint64_t(1) << 22;
  const std::int64_t big = peak_partials(big_n, 1, sum);
  EXPECT_EQ(sum, big_n * (big_n - 1) / 2);
  EXPECT_EQ(big, small);
  EXPECT_LE(big, static_cast<std::int64_t>(mcubes::cpu_tree_reduce_max_partials(big_n, 1)));
  for (int t : {2, 3}) {
    const std::int64_t peak = peak_partials(big_n, t, sum);
    EXPECT_EQ(sum, big_n * (big_n - 1) / 2);
    EXPECT_LE(peak, static_cast<std::int64_t>(mcubes::cpu_tree_reduce_max_partials(big_n, t))) << t << " threads";
  }
  // the bound: constant from 1024 x threads chunks on (here up to the 2^45 chunks of Monte Carlo
  // pi at N = 2^62)
  for (int t : {1, 2, 16})
    EXPECT_EQ(mcubes::cpu_tree_reduce_max_partials(1024 * static_cast<std::uint64_t>(t), t),
              mcubes::cpu_tree_reduce_max_partials(std::uint64_t(1) << 45, t));
  EXPECT_EQ(mcubes::cpu_tree_reduce_max_partials(std::uint64_t(1) << 45, 16), 16936u);
  // plain Monte Carlo at its maximum N = 2^62: 2^20 chunks, 48-byte partials, under 1 MiB on 16 threads
  const mcubes::plain_mc_chunking c = mcubes::make_plain_mc_chunking(mcubes::plain_mc_max_samples);
  EXPECT_LE(mcubes::cpu_tree_reduce_max_partials(c.n_chunks, 16) * sizeof(mcubes::mc_partial), std::uint64_t(1) << 20);
}

TEST(CpuTiles, AChunkExceptionStopsTheWorkersAndIsRethrown) {
  for (int t : {1, 2, 3, 8}) {
    EXPECT_THROW(mcubes::cpu_tree_reduce<std::uint64_t>(
                     std::uint64_t(1) << 20, t,
                     [](std::uint64_t i) -> std::uint64_t {
                       if (i == 70000) throw std::runtime_error("chunk 70000");
                       return i;
                     },
                     [](std::uint64_t a, std::uint64_t b) { return a + b; }),
                 std::runtime_error)
        << t << " threads";
  }
  EXPECT_EQ(mcubes::cpu_tree_reduce<std::uint64_t>(
                0, 2, [](std::uint64_t) { return std::uint64_t(1); }, [](std::uint64_t a, std::uint64_t b) { return a + b; }),
            0u);
  EXPECT_THROW(mcubes::cpu_tree_reduce<std::uint64_t>(
                   10, -1, [](std::uint64_t) { return std::uint64_t(1); }, [](std::uint64_t a, std::uint64_t b) { return a + b; }),
               mcubes::invalid_input);
}

}  // namespace

// Plain Monte Carlo on the CPU (algorithm/plain_mc.hpp): integrals of known value within 4 sigma
// at fixed seeds (own integrands and the suite), the stable error formula, bitwise thread-count
// invariance, non-finite values and bad input.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>

#include <mcubes/algorithm/plain_mc.hpp>
#include <mcubes/suite.hpp>

namespace {

constexpr double max_pull = 4.0;  ///< |estimate - exact| <= 4 reported standard errors

std::uint64_t bits(double x) {
  std::uint64_t b;
  std::memcpy(&b, &x, sizeof b);
  return b;
}

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

template <int D, class F>
void expect_suite_within(const F& f, double exact, std::uint64_t n, std::uint64_t seed, const char* name) {
  const mcubes::result r = mcubes::plain_mc<D>(f, mcubes::region<D>::unit(), opts(n, seed));
  EXPECT_GT(r.error, 0.0) << name;
  EXPECT_LE(std::fabs(r.estimate - exact), max_pull * r.error)
      << name << " d=" << D << " seed " << seed << ": " << r.estimate << " +- " << r.error << ", exact " << exact;
}

TEST(PlainMC, SuiteIntegrandsWithinFourSigma) {
  for (std::uint64_t seed : {11u, 12u}) {
    expect_suite_within<5>(mcubes::suite::f1_oscillatory{}, mcubes::suite::exact_f1(5), 1000000, seed, "f1");
    expect_suite_within<3>(mcubes::suite::f2_product_peak{}, mcubes::suite::exact_f2(3), 2000000, seed, "f2");
    expect_suite_within<3>(mcubes::suite::f3_corner_peak{}, mcubes::suite::exact_f3(3), 1000000, seed, "f3");
    expect_suite_within<2>(mcubes::suite::f4_gaussian{}, mcubes::suite::exact_f4(2), 2000000, seed, "f4");
    expect_suite_within<4>(mcubes::suite::f5_c0{}, mcubes::suite::exact_f5(4), 1000000, seed, "f5");
    expect_suite_within<3>(mcubes::suite::f6_discontinuous{}, mcubes::suite::exact_f6(3), 1000000, seed, "f6");
  }
  // fA over (0,10)^6
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

}  // namespace

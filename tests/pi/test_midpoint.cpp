// The composite midpoint rule on the CPU (algorithm/midpoint.hpp): pi to machine precision,
// determinism, the tensor-product rule, non-finite values and bad input.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>

#include <mcubes/algorithm/midpoint.hpp>
#include <mcubes/algorithm/pi.hpp>

namespace {

constexpr double pi_value = 3.141592653589793238462643383279502884;

std::uint64_t bits(double x) {
  std::uint64_t b;
  std::memcpy(&b, &x, sizeof b);
  return b;
}

TEST(MidpointPi, ErrorAtOneMillionIsTheTruncationError) {
  const mcubes::result r = mcubes::pi_midpoint(1000000);
  // truncation: (h^2/24) (f'(0) - f'(1)) = 2/24 * 1e-12 = 8.33e-14
  EXPECT_LE(std::fabs(r.estimate - pi_value), 1e-13);
  EXPECT_NEAR(r.estimate - pi_value, 2.0 / 24.0 * 1e-12, 2e-15);
  EXPECT_EQ(r.n_eval, 1000000u);
  EXPECT_TRUE(std::isnan(r.error));  // no error estimate
  EXPECT_EQ(r.status, mcubes::status::converged);
  EXPECT_EQ(r.backend, "cpu");
}

TEST(MidpointPi, ErrorAtOneBillionIsAtMachinePrecision) {
  const mcubes::result r = mcubes::pi_midpoint(1000000000);
  EXPECT_LE(std::fabs(r.estimate - pi_value), 2e-15) << r.estimate;
}

TEST(MidpointPi, BitwiseIdenticalForAnyThreadCount) {
  mcubes::midpoint_options o;
  o.threads = 1;
  const std::uint64_t n = 20000003;  // 2^20 chunks do not divide it
  const mcubes::result ref = mcubes::pi_midpoint(n, o);
  for (int t : {2, 3, 8}) {
    o.threads = t;
    EXPECT_EQ(bits(mcubes::pi_midpoint(n, o).estimate), bits(ref.estimate)) << t << " threads";
  }
}

TEST(Midpoint1D, ExactTruncationErrorOfAQuadratic) {
  // int_0^1 x^2 = 1/3; the midpoint rule gives 1/3 - 1/(12 N^2) exactly
  for (std::uint64_t n : {std::uint64_t(1), std::uint64_t(7), std::uint64_t(1000), std::uint64_t(123457)}) {
    const mcubes::result r = mcubes::midpoint([](double x) { return x * x; }, 0.0, 1.0, n);
    const double nd = static_cast<double>(n);
    EXPECT_NEAR(r.estimate, 1.0 / 3.0 - 1.0 / (12.0 * nd * nd), 4e-16) << "N = " << n;
  }
}

struct cubic_point {
  double operator()(const mcubes::point<1>& x) const { return x[0] * x[0] * x[0]; }
};

TEST(Midpoint1D, TakesPointIntegrandsAndAnyInterval) {
  // int_{-1}^{3} x^3 = (81 - 1)/4 = 20; midpoint error -(b-a) h^2 f''/24 averaged: -(h^2/24)(f'(3)-f'(-1)) = -(h^2/24)*24
  const std::uint64_t n = 4000;
  const double h = 4.0 / n;
  const mcubes::result r = mcubes::midpoint(cubic_point{}, -1.0, 3.0, n);
  EXPECT_NEAR(r.estimate, 20.0 - h * h, 1e-12);
}

struct product_xy {
  double operator()(const mcubes::point<2>& x) const { return x[0] * x[1]; }
};
struct gaussian3 {
  double operator()(const mcubes::point<3>& x) const { return std::exp(-(x[0] * x[0] + x[1] * x[1] + x[2] * x[2])); }
};

TEST(MidpointTensor, ExactForBilinearAndAccurateForSmooth) {
  const mcubes::region<2> r2({0.0, -1.0}, {1.0, 3.0});  // int x y = (1/2) * ((9 - 1)/2) = 2
  EXPECT_NEAR(mcubes::midpoint<2>(product_xy{}, r2, 1000).estimate, 2.0, 1e-13);
  // int over [0,1]^3 exp(-|x|^2) = (sqrt(pi)/2 erf(1))^3, truncation O(h^2) ~ 1e-7 at n = 300
  const double exact = std::pow(std::sqrt(pi_value) / 2 * std::erf(1.0), 3);
  const mcubes::result r = mcubes::midpoint<3>(gaussian3{}, mcubes::region<3>::unit(), 300);
  EXPECT_NEAR(r.estimate, exact, 1e-6);
  EXPECT_EQ(r.n_eval, 27000000u);
  mcubes::midpoint_options o;
  o.threads = 1;
  const double one = mcubes::midpoint<3>(gaussian3{}, mcubes::region<3>::unit(), 301, o).estimate;
  o.threads = 3;
  EXPECT_EQ(bits(mcubes::midpoint<3>(gaussian3{}, mcubes::region<3>::unit(), 301, o).estimate), bits(one));
}

struct nan_after {
  double threshold;
  double operator()(double x) const { return x > threshold ? std::numeric_limits<double>::quiet_NaN() : 1.0; }
};

TEST(MidpointErrors, NonFiniteValueNamesTheFirstPoint) {
  const std::uint64_t n = 10000000;
  // first index with x_i = (i + 1/2)/N > 0.3 is i = 3000000
  for (int t : {1, 2, 8}) {
    mcubes::midpoint_options o;
    o.threads = t;
    try {
      mcubes::midpoint(nan_after{0.3}, 0.0, 1.0, n, o);
      FAIL() << "no exception";
    } catch (const mcubes::non_finite_integrand& e) {
      EXPECT_EQ(e.sample_index(), 3000000u) << t << " threads";
      ASSERT_EQ(e.point().size(), 1u);
      EXPECT_NEAR(e.point()[0], 3000000.5 / n, 1e-15);
      EXPECT_TRUE(std::isnan(e.value()));
      EXPECT_NE(std::string(e.what()).find("nan"), std::string::npos) << e.what();
    }
  }
  EXPECT_THROW(mcubes::midpoint([](double x) { return 1.0 / (x - 0.5); }, 0.0, 1.0, 1), mcubes::non_finite_integrand);
  EXPECT_THROW(mcubes::midpoint([](double) { return 1e308; }, 0.0, 1.0, 1000), mcubes::numerical_error);
}

TEST(MidpointErrors, BadInputIsRejected) {
  const auto f = [](double x) { return x; };
  EXPECT_THROW(mcubes::midpoint(f, 0.0, 1.0, 0), mcubes::invalid_input);
  EXPECT_THROW(mcubes::midpoint(f, 0.0, 1.0, (std::uint64_t(1) << 52) + 1), mcubes::invalid_input);
  EXPECT_THROW(mcubes::midpoint(f, 1.0, 0.0, 10), mcubes::invalid_input);
  EXPECT_THROW(mcubes::midpoint(f, 0.0, 0.0, 10), mcubes::invalid_input);
  EXPECT_THROW(mcubes::midpoint(f, 0.0, std::numeric_limits<double>::infinity(), 10), mcubes::invalid_input);
  EXPECT_THROW(mcubes::midpoint(f, std::nan(""), 1.0, 10), mcubes::invalid_input);
  mcubes::midpoint_options o;
  o.threads = -1;
  EXPECT_THROW(mcubes::midpoint(f, 0.0, 1.0, 10, o), mcubes::invalid_input);
  o = {};
  o.cuda_threads_per_block = 100;
  EXPECT_THROW(mcubes::midpoint(f, 0.0, 1.0, 10, o), mcubes::invalid_input);
  o = {};
  o.backend = mcubes::backend_kind::cuda;  // not compiled by nvcc
  EXPECT_THROW(mcubes::midpoint(f, 0.0, 1.0, 10, o), mcubes::invalid_input);
  EXPECT_THROW(mcubes::midpoint<3>(gaussian3{}, mcubes::region<3>::unit(), 0), mcubes::invalid_input);
  EXPECT_THROW(mcubes::midpoint<3>(gaussian3{}, mcubes::region<3>::unit(), 1u << 18), mcubes::invalid_input);  // 2^54 points
}

TEST(MidpointChunking, DependsOnThePointCountOnly) {
  const mcubes::midpoint_chunking a = mcubes::make_midpoint_chunking(1000000000);
  EXPECT_EQ(a.chunk_points, 954u);
  EXPECT_LE(a.n_chunks, mcubes::max_chunks);
  EXPECT_GE(a.n_chunks * a.chunk_points, 1000000000u);
  const mcubes::midpoint_chunking b = mcubes::make_midpoint_chunking(10);
  EXPECT_EQ(b.chunk_points, 64u);
  EXPECT_EQ(b.n_chunks, 1u);
  const mcubes::midpoint_chunking c = mcubes::make_midpoint_chunking(std::uint64_t(1000000000000));  // 1e12
  EXPECT_LE(c.n_chunks, mcubes::max_chunks);
  EXPECT_GE(c.n_chunks * c.chunk_points, std::uint64_t(1000000000000));
}

TEST(TreeReduce, DoubleDoubleMergeKeepsTheLowPart) {
  // 1 + 2^-60 added 2^20 times as chunk sums: a plain double tree loses every 2^-60
  std::vector<mcubes::dd_sum> parts(1 << 20, mcubes::dd_sum{1.0, std::ldexp(1.0, -60)});
  const mcubes::dd_sum s = mcubes::tree_reduce(parts.data(), parts.size(), parts.size(),
                                               [](const mcubes::dd_sum& a, const mcubes::dd_sum& b) { return mcubes::merge(a, b); });
  EXPECT_EQ(s.hi, 1048576.0);
  EXPECT_EQ(s.lo, std::ldexp(1.0, -40));
}

TEST(TreeReduce, ChanMergeIsStable) {
  // values 1e9 + {0, 1}: mean 1e9 + 0.5, M2 = n/4
  std::vector<mcubes::moments> parts;
  for (int i = 0; i < 1000; ++i) parts.push_back(mcubes::moments{1, 1e9 + (i % 2), 0.0});
  const mcubes::moments m = mcubes::tree_reduce(parts.data(), parts.size(), 1024,
                                                [](const mcubes::moments& a, const mcubes::moments& b) { return mcubes::merge(a, b); });
  EXPECT_EQ(m.n, 1000u);
  EXPECT_DOUBLE_EQ(m.mean, 1e9 + 0.5);
  EXPECT_NEAR(m.m2, 250.0, 1e-6);
}

}  // namespace

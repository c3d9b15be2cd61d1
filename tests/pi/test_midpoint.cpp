// The composite midpoint rule on the CPU (algorithm/midpoint.hpp): pi to machine precision,
// determinism, the tensor-product rule, non-finite values and bad input.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <limits>

#include <mcubes/mcubes.hpp>

#include "support/bits.hpp"

namespace {

constexpr double pi_exact = 3.141592653589793238462643383279502884;
/// The Richardson error estimate of a smooth integrand is its true error to O(h^2) relative: within
/// this fraction of it at the sizes tested.
constexpr double max_estimate_deviation = 0.05;
/// For a smooth integrand the true error lies within a factor of this of the estimate.
constexpr double max_estimate_factor = 2.0;

using mcubes_test::bits;

TEST(MidpointPi, ErrorAtOneMillionIsTheTruncationError) {
  const mcubes::result r = mcubes::pi_midpoint(1000000);
  // truncation: (h^2/24) (f'(0) - f'(1)) = 2/24 * 1e-12 = 8.33e-14
  const double truncation = 2.0 / 24.0 * 1e-12;
  EXPECT_LE(std::fabs(r.estimate - pi_exact), 1e-13);
  EXPECT_NEAR(r.estimate - pi_exact, truncation, 2e-15);
  EXPECT_EQ(r.n_eval, 1000000u);
  // 1e6 = 5 x 2e5: the error estimate is |M_N - M_{N/5}| / 24 (the truncation error to O(h^4))
  // plus the rounding level 4 eps pi
  EXPECT_NEAR(r.error, truncation, max_estimate_deviation * truncation);
  EXPECT_GE(r.error, std::fabs(r.estimate - pi_exact));
  EXPECT_EQ(r.status, mcubes::status::converged);
  EXPECT_EQ(r.backend, "cpu");
  ASSERT_EQ(r.records.size(), 1u);
  EXPECT_EQ(r.records[0].n_nonzero, 1000000u);
  EXPECT_EQ(r.records[0].error, r.error);
  mcubes::midpoint_options o;
  o.rel_tol = 1e-14;  // 3.1e-14 < 8.3e-14
  EXPECT_EQ(mcubes::pi_midpoint(1000000, o).status, mcubes::status::not_converged);
  o.rel_tol = 0;
  o.abs_tol = 1e-13;
  EXPECT_EQ(mcubes::pi_midpoint(1000000, o).status, mcubes::status::converged);
}

TEST(MidpointPi, ErrorAtOneBillionIsAtMachinePrecision) {
  const mcubes::result r = mcubes::pi_midpoint(1000000000);
  EXPECT_LE(std::fabs(r.estimate - pi_exact), 2e-15) << r.estimate;
  // the truncation error (8e-20) is far below the rounding level 4 eps pi, which is reported
  const double rounding = 4 * std::numeric_limits<double>::epsilon() * pi_exact;
  EXPECT_GE(r.error, rounding);
  EXPECT_LE(r.error, 1.1 * rounding);
  EXPECT_LE(std::fabs(r.estimate - pi_exact), r.error);
  EXPECT_EQ(r.status, mcubes::status::converged);
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
  const double exact = std::pow(std::sqrt(pi_exact) / 2 * std::erf(1.0), 3);
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

// ---- error estimate and status

struct exp1 {
  double operator()(double x) const { return std::exp(x); }
};
struct exp_cos2 {  // int over [0,1]x[0,2] of e^x cos y = (e - 1) sin 2
  double operator()(const mcubes::point<2>& x) const { return std::exp(x[0]) * std::cos(x[1]); }
};

TEST(MidpointErrorEstimate, CoarseRuleIsTheEmbeddedSubset) {
  // f = x^2 (1-D) and x^2 + y^2 (2-D, 3-D): the midpoint error is exactly -h^2/12 per axis term
  // (times the other widths), so |M_n - M_{n/k}| / (k^2 - 1) is the true error to rounding: the
  // coarse values must be exactly those with index = (k-1)/2 mod k on every axis, also across
  // chunks (64 points) that start mid-row and mid-block.
  for (std::uint64_t n : {3u, 9u, 10u, 14u, 35u, 300u, 3003u, 100000u}) {
    const mcubes::result r = mcubes::midpoint([](double x) { return x * x; }, 0.0, 1.0, n);
    const double nd = static_cast<double>(n), exact_error = 1.0 / (12.0 * nd * nd);
    EXPECT_NEAR(r.error, exact_error, 1e-9 * exact_error + 1e-15) << "N = " << n;
    EXPECT_NEAR(1.0 / 3.0 - r.estimate, exact_error, 1e-15) << "N = " << n;
  }
  struct sq2 {
    double operator()(const mcubes::point<2>& x) const { return x[0] * x[0] + x[1] * x[1]; }
  };
  struct sq3 {
    double operator()(const mcubes::point<3>& x) const { return x[0] * x[0] + x[1] * x[1] + x[2] * x[2]; }
  };
  for (std::uint64_t n : {3u, 25u, 30u, 49u, 111u}) {  // k = 3, 5, 3, 7, 3
    const mcubes::result r = mcubes::midpoint<2>(sq2{}, mcubes::region<2>::unit(), n);
    const double nd = static_cast<double>(n), exact_error = 2.0 / (12.0 * nd * nd);
    EXPECT_NEAR(r.error, exact_error, 1e-9 * exact_error) << "n = " << n;
    EXPECT_NEAR(2.0 / 3.0 - r.estimate, exact_error, 1e-14) << "n = " << n;
  }
  for (std::uint64_t n : {21u, 35u}) {
    const mcubes::result r = mcubes::midpoint<3>(sq3{}, mcubes::region<3>::unit(), n);
    const double nd = static_cast<double>(n), exact_error = 3.0 / (12.0 * nd * nd);
    EXPECT_NEAR(r.error, exact_error, 1e-9 * exact_error) << "n = " << n;
  }
}

TEST(MidpointErrorEstimate, SmoothOneDimensional) {
  const double exact = std::exp(1.0) - 1.0;
  for (std::uint64_t n : {300u, 1000u, 4900u}) {  // k = 3, 5, 7
    const mcubes::result r = mcubes::midpoint(exp1{}, 0.0, 1.0, n);
    const double true_error = std::fabs(r.estimate - exact);
    EXPECT_LE(true_error, max_estimate_factor * r.error) << "N = " << n;
    EXPECT_GE(true_error, r.error / max_estimate_factor) << "N = " << n;
    EXPECT_EQ(r.status, mcubes::status::converged) << "N = " << n;  // rel_tol 1e-3
  }
  mcubes::midpoint_options o;
  o.rel_tol = 1e-6;  // error at N = 300: 8e-7 (relative 4.6e-7)
  const mcubes::result r = mcubes::midpoint(exp1{}, 0.0, 1.0, 300, o);
  EXPECT_EQ(r.status, mcubes::status::converged);
  EXPECT_LE(std::fabs(r.estimate - exact), o.rel_tol * exact);
  o.rel_tol = 1e-7;
  EXPECT_EQ(mcubes::midpoint(exp1{}, 0.0, 1.0, 300, o).status, mcubes::status::not_converged);
}

TEST(MidpointErrorEstimate, SmoothTwoDimensional) {
  const mcubes::region<2> reg({0.0, 0.0}, {1.0, 2.0});
  const double exact = (std::exp(1.0) - 1.0) * std::sin(2.0);
  for (std::uint64_t n : {150u, 250u, 98u}) {  // k = 3, 5, 7
    const mcubes::result r = mcubes::midpoint<2>(exp_cos2{}, reg, n);
    const double true_error = std::fabs(r.estimate - exact);
    EXPECT_LE(true_error, max_estimate_factor * r.error) << "n = " << n;
    EXPECT_GE(true_error, r.error / max_estimate_factor) << "n = " << n;
    EXPECT_EQ(r.status, mcubes::status::converged) << "n = " << n;
  }
  mcubes::midpoint_options o;
  o.rel_tol = 1e-7;  // error at n = 150: about 2e-5 relative
  EXPECT_EQ(mcubes::midpoint<2>(exp_cos2{}, reg, 150, o).status, mcubes::status::not_converged);
}

TEST(MidpointErrorEstimate, NoEstimateUnlessDivisibleByThreeFiveOrSeven) {
  for (std::uint64_t n : {1u, 2u, 4u, 1024u, 143u}) {
    const mcubes::result r = mcubes::midpoint(exp1{}, 0.0, 1.0, n);
    EXPECT_TRUE(std::isinf(r.error) && r.error > 0) << "N = " << n;
    EXPECT_EQ(r.status, mcubes::status::not_converged) << "N = " << n;
    EXPECT_EQ(r.records[0].error, r.error);
  }
  const mcubes::result r = mcubes::midpoint<2>(exp_cos2{}, mcubes::region<2>({0.0, 0.0}, {1.0, 2.0}), 64);
  EXPECT_TRUE(std::isinf(r.error));
  EXPECT_EQ(r.status, mcubes::status::not_converged);
  EXPECT_NEAR(r.estimate, (std::exp(1.0) - 1.0) * std::sin(2.0), 1e-3);  // the estimate is still reported
  EXPECT_EQ(mcubes::midpoint_coarse_ratio(1000000000), 5u);
  EXPECT_EQ(mcubes::midpoint_coarse_ratio(1u << 20), 0u);
}

TEST(MidpointErrorEstimate, CancellingIntegrandKeepsTheRoundingFloor) {
  // int_0^1 sin(2 pi x) = 0: M_N and M_{N/3} both cancel to rounding; the error never claims 0
  const auto f = [](double x) { return std::sin(2 * pi_exact * x); };
  const mcubes::result r = mcubes::midpoint(f, 0.0, 1.0, 3000);
  EXPECT_GE(r.error, 4 * std::numeric_limits<double>::epsilon() * (2 / pi_exact) * 0.999);  // 4 eps mean|f|
  EXPECT_LE(std::fabs(r.estimate), r.error);
  EXPECT_EQ(r.status, mcubes::status::not_converged);  // rel_tol |estimate| ~ 1e-20: unreachable
  mcubes::midpoint_options o;
  o.abs_tol = 1e-12;
  EXPECT_EQ(mcubes::midpoint(f, 0.0, 1.0, 3000, o).status, mcubes::status::converged);
}

TEST(MidpointStatus, ZeroIsNotResolved) {
  const mcubes::result r = mcubes::midpoint([](double) { return 0.0; }, 0.0, 1.0, 3000);
  EXPECT_EQ(r.status, mcubes::status::not_resolved);
  EXPECT_EQ(r.estimate, 0.0);
  EXPECT_TRUE(std::isinf(r.error));
  EXPECT_EQ(r.records[0].n_nonzero, 0u);
  // half the points non-zero: counted exactly
  const mcubes::result h = mcubes::midpoint([](double x) { return x > 0.5 ? x : 0.0; }, 0.0, 1.0, 1000);
  EXPECT_EQ(h.records[0].n_nonzero, 500u);
  EXPECT_EQ(h.status, mcubes::status::converged);
}

TEST(MidpointStatus, TinyValuesAreUnderflow) {
  const mcubes::result r = mcubes::midpoint([](double) { return 1e-300; }, 0.0, 1.0, 3000);
  EXPECT_EQ(r.status, mcubes::status::underflow);
  EXPECT_TRUE(std::isinf(r.error));
  EXPECT_TRUE(r.records[0].underflow);
  EXPECT_NEAR(r.estimate, 1e-300, 1e-314);  // still reported
  // just above the threshold: an ordinary result
  const double above = 4 * mcubes::underflow_scale;
  EXPECT_EQ(mcubes::midpoint([above](double) { return above; }, 0.0, 1.0, 3000).status, mcubes::status::converged);
}

TEST(MidpointStatus, ErrorIsBitwiseIdenticalForAnyThreadCount) {
  mcubes::midpoint_options o;
  o.threads = 1;
  const std::uint64_t n = 20000001;  // divisible by 3; 2^20 chunks do not divide it
  const mcubes::result ref = mcubes::pi_midpoint(n, o);
  EXPECT_TRUE(std::isfinite(ref.error));
  for (int t : {2, 3, 8}) {
    o.threads = t;
    const mcubes::result r = mcubes::pi_midpoint(n, o);
    EXPECT_EQ(bits(r.estimate), bits(ref.estimate)) << t << " threads";
    EXPECT_EQ(bits(r.error), bits(ref.error)) << t << " threads";
    EXPECT_EQ(r.records[0].n_nonzero, n);
  }
  o.threads = 1;
  const mcubes::result a = mcubes::midpoint<2>(exp_cos2{}, mcubes::region<2>::unit(), 3003, o);
  o.threads = 3;
  const mcubes::result b = mcubes::midpoint<2>(exp_cos2{}, mcubes::region<2>::unit(), 3003, o);
  EXPECT_EQ(bits(a.error), bits(b.error));
  EXPECT_EQ(bits(a.estimate), bits(b.estimate));
}

TEST(MidpointErrors, BadToleranceIsRejected) {
  const auto f = [](double x) { return x; };
  auto expect_rejected = [&](double rel, double abs, const char* field) {
    mcubes::midpoint_options o;
    o.rel_tol = rel;
    o.abs_tol = abs;
    try {
      mcubes::midpoint(f, 0.0, 1.0, 30, o);
      ADD_FAILURE() << "no exception for rel_tol " << rel << ", abs_tol " << abs;
    } catch (const mcubes::invalid_input& e) {
      EXPECT_NE(std::string(e.what()).find(field), std::string::npos) << e.what();
    }
  };
  // the rules themselves are mcubes::validate_tolerances's (tests/errors/test_numerics.cpp)
  expect_rejected(-1e-3, 0, "rel_tol");
  expect_rejected(1e-3, std::numeric_limits<double>::infinity(), "abs_tol");
  expect_rejected(0, 0, "at least one");
  mcubes::midpoint_options o;
  o.rel_tol = 0;
  o.abs_tol = 1e-9;
  EXPECT_EQ(mcubes::midpoint(f, 0.0, 1.0, 30, o).status, mcubes::status::converged);  // x: exact
}

TEST(TreeReduce, DoubleDoubleMergeKeepsTheLowPart) {
  // 1 + 2^-60 added 2^20 times as chunk sums: a plain double tree loses every 2^-60
  std::vector<mcubes::dd_sum> parts(1 << 20, mcubes::dd_sum{1.0, std::ldexp(1.0, -60)});
  const mcubes::dd_sum s = mcubes::fixed_tree_reduce(parts.data(), parts.size(), parts.size(),
                                               [](const mcubes::dd_sum& a, const mcubes::dd_sum& b) { return mcubes::merge(a, b); });
  EXPECT_EQ(s.hi, 1048576.0);
  EXPECT_EQ(s.lo, std::ldexp(1.0, -40));
}

TEST(TreeReduce, ChanMergeIsStable) {
  // values 1e9 + {0, 1}: mean 1e9 + 0.5, M2 = n/4
  std::vector<mcubes::moments> parts;
  for (int i = 0; i < 1000; ++i) parts.push_back(mcubes::moments{1, 1e9 + (i % 2), 0.0});
  const mcubes::moments m = mcubes::fixed_tree_reduce(parts.data(), parts.size(), 1024,
                                                [](const mcubes::moments& a, const mcubes::moments& b) { return mcubes::merge(a, b); });
  EXPECT_EQ(m.n, 1000u);
  EXPECT_DOUBLE_EQ(m.mean, 1e9 + 0.5);
  EXPECT_NEAR(m.m2, 250.0, 1e-6);
}

}  // namespace

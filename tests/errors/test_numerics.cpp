/// @file tests/errors/test_numerics.cpp
/// Numerics that cannot lie: every case where an earlier version returned a wrong answer as
/// converged, a NaN, or ran undefined behaviour, and the statuses and the iteration callback.
/// Each case names the finding it guards (hostile-input audit of version 0.1.0).
#include <gtest/gtest.h>

#include <climits>
#include <cmath>
#include <cstdint>
#include <limits>
#include <vector>

#include "mcubes/core/adaptive_map.hpp"
#include "mcubes/mcubes.hpp"
#include "mcubes/suite.hpp"

#include "support/bits.hpp"

namespace {

using mcubes::point;
using mcubes::region;
using mcubes::status;
using mcubes::vegas_options;

using mcubes_test::same_bits;

vegas_options quick(std::uint64_t calls = 20000, int max_iterations = 10) {
  vegas_options o;
  o.calls_per_iteration = calls;
  o.max_iterations = max_iterations;
  o.skip = 0;
  o.min_iterations = 1;
  o.threads = 2;
  return o;
}

/// A constant integrand.
struct constant {
  double c;
  template <int D>
  double operator()(const point<D>&) const {
    return c;
  }
};

/// A smooth integrand with a known integral over [0,1]^3: prod_j 2 x_j = 1.
struct product {
  double operator()(const point<3>& x) const { return 8 * x[0] * x[1] * x[2]; }
};

// Finding 1: f6 in d = 28 (exact 5.6e184): (f J)^2 overflows; the sub-cube variance inf - inf = NaN
// was clamped to 0 and the run reported "3.29e+164 +- 2.9e+149, converged". Now the first sample
// whose (f J)^2 overflows is reported with its index and point.
TEST(Overflow, F6In28DimensionsThrowsWithTheFirstOverflowingSample) {
  auto o = quick(100000, 10);
  try {
    const auto r = mcubes::vegas(mcubes::suite::f6_discontinuous{}, region<28>::unit(), o);
    FAIL() << "returned " << r.estimate << " +- " << r.error << " (" << mcubes::to_string(r.status) << ")";
  } catch (const mcubes::overflow_error& e) {
    EXPECT_EQ(e.point().size(), 28u);
    for (double x : e.point()) EXPECT_TRUE(x >= 0 && x <= 1) << x;
    EXPECT_TRUE(std::isfinite(e.value()));
    const double fj = e.value() * e.jacobian();
    EXPECT_FALSE(std::isfinite(fj * fj)) << "f = " << e.value() << ", J = " << e.jacobian();
    EXPECT_NE(std::string(e.what()).find("sample " + std::to_string(e.sample_index())), std::string::npos) << e.what();
    // deterministic: the same first sample whatever the number of threads
    o.threads = 1;
    try {
      mcubes::vegas(mcubes::suite::f6_discontinuous{}, region<28>::unit(), o);
      FAIL() << "one thread: no overflow";
    } catch (const mcubes::overflow_error& e1) {
      EXPECT_EQ(e1.sample_index(), e.sample_index());
      EXPECT_EQ(e1.iteration(), e.iteration());
    }
  }
}

// Finding 2: f6 in d = 32 gave "result: -nan +- -nan", Q printed as 1. Never a NaN now.
TEST(Overflow, F6In32DimensionsNeverReturnsNaN) {
  EXPECT_THROW(mcubes::vegas(mcubes::suite::f6_discontinuous{}, region<32>::unit(), quick(100000, 20)),
               mcubes::numerical_error);
}

// Sums of finite squares that overflow: s2 = inf, s1 * mean = inf, var = inf - inf = NaN was
// clamped to 0 (error reported as the rounding floor). Now a numerical_error naming the iteration.
TEST(Overflow, SubCubeVarianceNaNIsNeverClampedToZero) {
  try {
    const auto r = mcubes::vegas(constant{1.2e154}, region<2>::unit(), quick(1000, 5));
    FAIL() << "returned " << r.estimate << " +- " << r.error;
  } catch (const mcubes::numerical_error& e) {
    EXPECT_NE(std::string(e.what()).find("iteration 0"), std::string::npos) << e.what();
  }
}

// An estimate whose squares fit but which is beyond any representable error: |I| >= 2^560
// (the running average's floor (4 eps I)^2 would overflow from 2^562 on).
TEST(Overflow, EstimateAboveTwoToThe560Throws) {
  const region<2> big({0.0, 0.0}, {0x1p50, 0x1p50});  // volume 2^100
  EXPECT_THROW(mcubes::vegas(constant{0x1p470}, big, quick(1000, 5)), mcubes::numerical_error);
}

// ... and well below it everything is finite and honest. (Near 2^520 the rounding noise of the
// sub-cube variances of a constant, s2 - s1 I_c ~ eps s2, already overflows once scaled by
// (V/m)^2: that throws too, as the variance is then not representable.)
TEST(Overflow, LargeButRepresentableEstimateIsExactWithAFiniteError) {
  const region<2> big({0.0, 0.0}, {0x1p40, 0x1p40});  // volume 2^80
  auto o = quick(1000, 5);
  o.alpha = 0;
  const auto r = mcubes::vegas(constant{0x1p400}, big, o);
  EXPECT_EQ(r.status, status::converged);
  EXPECT_DOUBLE_EQ(r.estimate, 0x1p480);
  EXPECT_TRUE(std::isfinite(r.error) && r.error > 0);
  EXPECT_TRUE(std::isfinite(r.chi2_dof) && std::isfinite(r.q));
}

// Finding 3: alpha = 1e308 was accepted; every damped weight underflowed and 0/0 was converted to
// an integer (undefined behaviour), the map collapsed. alpha is bounded now ...
TEST(Alpha, AboveTheBoundIsRejected) {
  auto o = quick();
  o.alpha = 1e308;
  EXPECT_THROW(mcubes::vegas(product{}, region<3>::unit(), o), mcubes::invalid_input);
  o.alpha = std::nextafter(mcubes::max_alpha, 100.0);
  EXPECT_THROW(mcubes::vegas(product{}, region<3>::unit(), o), mcubes::invalid_input);
  o.alpha = mcubes::max_alpha;
  const auto r = mcubes::vegas(product{}, region<3>::unit(), o);
  EXPECT_TRUE(std::isfinite(r.estimate) && std::isfinite(r.error));
}

// ... and the adaptation is robust to weights that underflow: the axis keeps its edges.
TEST(Alpha, UnderflowingWeightsLeaveTheMapUnchanged) {
  mcubes::adaptive_map<1> map(8);
  const std::vector<double> before = map.edges();
  std::vector<double> c = {1, 2, 3, 4, 5, 6, 7, 8};
  map.adapt(c, 1e308);  // bypasses validate: the map itself must not misbehave
  EXPECT_EQ(map.edges(), before);
  map.adapt(c, 1.5);
  EXPECT_NE(map.edges(), before);
}

// Finding 4: skip + min_iterations overflowed int in validate() (undefined behaviour) and the run
// started.
TEST(Validate, HugeIterationCountsDoNotOverflow) {
  auto o = quick();
  o.skip = INT_MAX;
  EXPECT_THROW(mcubes::validate(o, 3), mcubes::invalid_input);
  o = quick();
  o.min_iterations = INT_MAX;
  EXPECT_THROW(mcubes::validate(o, 3), mcubes::invalid_input);
  o.skip = INT_MAX;
  o.max_iterations = INT_MAX;
  EXPECT_THROW(mcubes::validate(o, 3), mcubes::invalid_input);
}

// The one tolerance check of every method (vegas, plain_mc, midpoint): finite, non-negative, at
// least one positive; the message names the field.
TEST(Validate, TolerancesOfEveryMethod) {
  const double inf = std::numeric_limits<double>::infinity(), nan = std::nan("");
  struct bad {
    double rel, abs;
    const char* field;
  };
  for (const bad& b : {bad{-1e-3, 0, "rel_tol"}, bad{nan, 0, "rel_tol"}, bad{inf, 0, "rel_tol"}, bad{-inf, 0, "rel_tol"},
                       bad{1e-3, -1, "abs_tol"}, bad{1e-3, nan, "abs_tol"}, bad{1e-3, inf, "abs_tol"},
                       bad{0, 0, "at least one"}}) {
    try {
      mcubes::validate_tolerances(b.rel, b.abs);
      ADD_FAILURE() << "accepted rel_tol " << b.rel << ", abs_tol " << b.abs;
    } catch (const mcubes::invalid_input& e) {
      EXPECT_NE(std::string(e.what()).find(b.field), std::string::npos) << e.what();
    }
  }
  EXPECT_NO_THROW(mcubes::validate_tolerances(0, 1e-300));
  EXPECT_NO_THROW(mcubes::validate_tolerances(1e-3, 0));
  auto o = quick();
  o.rel_tol = nan;
  EXPECT_THROW(mcubes::validate(o, 3), mcubes::invalid_input);  // vegas uses it too
}

// Statuses say what happened (finding 8: "not resolved" was also printed for underflow).
TEST(Status, AllZeroIsNotResolvedWithInfiniteError) {
  const auto r = mcubes::vegas(constant{0.0}, region<3>::unit(), quick());
  EXPECT_EQ(r.status, status::not_resolved);
  EXPECT_TRUE(std::isinf(r.error));
  EXPECT_TRUE(std::isnan(r.q) && std::isnan(r.chi2_dof));
}

TEST(Status, TinyValuesAreUnderflowNotNotResolved) {
  const auto r = mcubes::vegas(constant{1e-300}, region<3>::unit(), quick());
  EXPECT_EQ(r.status, status::underflow);
  EXPECT_EQ(r.accumulated, 0);
  EXPECT_TRUE(std::isinf(r.error));
  for (const auto& rec : r.records) EXPECT_TRUE(rec.underflow);
}

TEST(Status, MaxIterationsIsNotConverged) {
  auto o = quick(2000, 4);
  o.rel_tol = 1e-12;
  const auto r = mcubes::vegas(product{}, region<3>::unit(), o);
  EXPECT_EQ(r.status, status::not_converged);
  EXPECT_EQ(r.iterations, 4);
  EXPECT_NEAR(r.estimate, 1.0, 5 * r.error);
}

// The error of an iteration is never 0: at least the rounding floor 4 eps |I| (f J of a constant
// varies at the rounding level of the map's bin widths).
TEST(Status, IterationErrorsAreNeverZero) {
  auto o = quick(1000, 3);
  o.alpha = 0;
  const auto r = mcubes::vegas(constant{3.0}, region<3>::unit(), o);
  for (const auto& rec : r.records) {
    EXPECT_GT(rec.error, 0.0);
    EXPECT_GE(rec.error, 4 * std::numeric_limits<double>::epsilon() * std::fabs(rec.estimate));
  }
}

// The iteration callback: called once per iteration with the record and the result so far; can
// stop the run (status interrupted, the completed iterations kept); never changes the numbers.
TEST(Callback, SeesEveryIterationAndNeverChangesTheBits) {
  auto o = quick(20000, 12);
  o.rel_tol = 1e-9;
  const auto plain = mcubes::vegas(product{}, region<3>::unit(), o);
  int calls = 0;
  const auto watched = mcubes::vegas(product{}, region<3>::unit(), o,
                                     [&](const mcubes::iteration_record& rec, const mcubes::result& so_far) {
                                       EXPECT_EQ(rec.index, calls);
                                       EXPECT_EQ(so_far.iterations, calls + 1);
                                       EXPECT_EQ(so_far.records.size(), static_cast<std::size_t>(calls + 1));
                                       ++calls;
                                       return mcubes::run_control::proceed;
                                     });
  EXPECT_EQ(calls, watched.iterations);
  EXPECT_TRUE(same_bits(plain.estimate, watched.estimate));
  EXPECT_TRUE(same_bits(plain.error, watched.error));
  EXPECT_EQ(plain.status, watched.status);
}

TEST(Callback, StopKeepsTheCompletedIterations) {
  auto o = quick(20000, 50);
  o.rel_tol = 1e-9;
  const auto full = mcubes::vegas(product{}, region<3>::unit(), o);
  const auto stopped = mcubes::vegas(product{}, region<3>::unit(), o,
                                     [](const mcubes::iteration_record& rec, const mcubes::result&) {
                                       return rec.index == 6 ? mcubes::run_control::stop : mcubes::run_control::proceed;
                                     });
  EXPECT_EQ(stopped.status, status::interrupted);
  ASSERT_EQ(stopped.iterations, 7);
  ASSERT_EQ(stopped.records.size(), 7u);
  for (int i = 0; i < 7; ++i) EXPECT_TRUE(same_bits(stopped.records[i].estimate, full.records[i].estimate));
  EXPECT_TRUE(same_bits(stopped.estimate, full.records[6].weighted_estimate));
  EXPECT_NEAR(stopped.estimate, 1.0, 5 * stopped.error);
}

TEST(Callback, ConvergedRunReportsItsFinalStatusToTheCallback) {
  auto o = quick(20000, 50);
  o.rel_tol = 1e-2;
  status last = status::not_converged;
  const auto r = mcubes::vegas(product{}, region<3>::unit(), o, [&](const mcubes::iteration_record&, const mcubes::result& s) {
    last = s.status;
    return mcubes::run_control::proceed;
  });
  ASSERT_EQ(r.status, status::converged);
  EXPECT_EQ(last, status::converged);
}

}  // namespace

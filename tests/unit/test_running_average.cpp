// Unit tests of core/running_average.hpp: inverse-variance weighted average, chi2/dof and Q
// (Lepage 1978 eqs. 5-6), and the chi-square upper tail chi2_q.

#include <gtest/gtest.h>

#include <cfloat>
#include <cmath>
#include <limits>
#include <utility>
#include <vector>

#include "mcubes/core/running_average.hpp"

#ifdef MCUBES_TEST_HAVE_GSL
#include <gsl/gsl_cdf.h>
#endif

namespace {

constexpr double hand_tol = 1e-12;    // relative, for values computed by hand in closed form
constexpr double table_tol = 1e-6;    // absolute, for Q against tabulated / 30-digit reference values

TEST(RunningAverage, EmptyAndSingle) {
  mcubes::running_average a;
  EXPECT_EQ(a.count(), 0);
  EXPECT_EQ(a.mean(), 0.0);
  EXPECT_EQ(a.sdev(), 0.0);
  EXPECT_EQ(a.dof(), 0);
  EXPECT_EQ(a.chi2_dof(), 0.0);
  EXPECT_EQ(a.q(), 1.0);
  a.add(3.5, 0.25);
  EXPECT_EQ(a.count(), 1);
  EXPECT_EQ(a.mean(), 3.5);
  EXPECT_EQ(a.sdev(), 0.5);
  EXPECT_EQ(a.chi2(), 0.0);
  EXPECT_EQ(a.dof(), 0);
  EXPECT_EQ(a.chi2_dof(), 0.0);
  EXPECT_EQ(a.q(), 1.0);
}

// (1.0, var 0.04) and (1.2, var 0.01): weights 25 and 100, I = (25 + 120)/125 = 1.16,
// s = 125^(-1/2), chi2 = 0.16^2 * 25 + 0.04^2 * 100 = 0.64 + 0.16 = 0.8, dof 1,
// Q = P(chi2_1 > 0.8) = erfc(sqrt(0.4)) = 0.37109336952269756.
TEST(RunningAverage, TwoEstimatesByHand) {
  mcubes::running_average a;
  a.add(1.0, 0.04);
  a.add(1.2, 0.01);
  EXPECT_EQ(a.count(), 2);
  EXPECT_NEAR(a.mean(), 1.16, hand_tol);
  EXPECT_NEAR(a.sdev(), 1 / std::sqrt(125.0), hand_tol);
  EXPECT_NEAR(a.chi2(), 0.8, hand_tol);
  EXPECT_EQ(a.dof(), 1);
  EXPECT_NEAR(a.chi2_dof(), 0.8, hand_tol);
  EXPECT_NEAR(a.q(), 0.37109336952269756, hand_tol);
}

// (10, 1), (12, 4), (11, 1): weights 1, 1/4, 1 (sum 9/4), I = (10 + 3 + 11)/(9/4) = 32/3,
// s = 2/3, chi2 = (2/3)^2 + (4/3)^2/4 + (1/3)^2 = 4/9 + 4/9 + 1/9 = 1, dof 2, chi2/dof = 1/2,
// Q = exp(-1/2).
TEST(RunningAverage, ThreeEstimatesByHand) {
  mcubes::running_average a;
  a.add(10, 1);
  a.add(12, 4);
  a.add(11, 1);
  EXPECT_NEAR(a.mean(), 32.0 / 3, hand_tol * 10);
  EXPECT_NEAR(a.sdev(), 2.0 / 3, hand_tol);
  EXPECT_NEAR(a.chi2(), 1.0, hand_tol);
  EXPECT_EQ(a.dof(), 2);
  EXPECT_NEAR(a.chi2_dof(), 0.5, hand_tol);
  EXPECT_NEAR(a.q(), std::exp(-0.5), hand_tol);
}

// (1,1), (2,1), (3,1), (4,1): I = 2.5, s = 1/2, chi2 = 2.25 + 0.25 + 0.25 + 2.25 = 5, dof 3,
// Q(5, 3) = erfc(sqrt(5/2)) + sqrt(10/pi) exp(-5/2) = 0.17179714429673314.
TEST(RunningAverage, FourEstimatesByHand) {
  mcubes::running_average a;
  for (double x : {1.0, 2.0, 3.0, 4.0}) a.add(x, 1.0);
  EXPECT_NEAR(a.mean(), 2.5, hand_tol);
  EXPECT_NEAR(a.sdev(), 0.5, hand_tol);
  EXPECT_NEAR(a.chi2(), 5.0, hand_tol);
  EXPECT_EQ(a.dof(), 3);
  EXPECT_NEAR(a.chi2_dof(), 5.0 / 3, hand_tol);
  EXPECT_NEAR(a.q(), 0.17179714429673314, hand_tol);
  EXPECT_NEAR(a.q(), std::erfc(std::sqrt(2.5)) + std::sqrt(10 / M_PI) * std::exp(-2.5), hand_tol);
}

TEST(RunningAverage, ZeroVarianceFloor) {
  // A zero (or negative, or NaN) variance is floored at (4 eps |estimate|)^2: weights stay finite.
  mcubes::running_average a;
  a.add(5.0, 0.0);
  EXPECT_EQ(a.mean(), 5.0);
  EXPECT_NEAR(a.sdev(), 20 * DBL_EPSILON, 1e-3 * 20 * DBL_EPSILON);
  a.add(5.0, -1.0);
  a.add(5.0, std::numeric_limits<double>::quiet_NaN());
  // The floor is a few ulps of the estimate, so the rounding of the weighted mean (an ulp or so)
  // stays a fraction of a sigma: chi2/dof of equal estimates is well below any sensible limit.
  EXPECT_DOUBLE_EQ(a.mean(), 5.0);
  EXPECT_LT(a.chi2_dof(), 0.5);
  EXPECT_TRUE(std::isfinite(a.sdev()));
  EXPECT_GT(a.sdev(), 0.0);
  EXPECT_GT(a.q(), 0.5);
  // A zero estimate with zero variance: floored at DBL_MIN, still finite.
  mcubes::running_average z;
  z.add(0.0, 0.0);
  z.add(0.0, 0.0);
  EXPECT_EQ(z.mean(), 0.0);
  EXPECT_TRUE(std::isfinite(z.sdev()));
  EXPECT_GT(z.sdev(), 0.0);
  EXPECT_EQ(z.chi2(), 0.0);
  // A floored estimate next to a normal one dominates the weighted mean, without NaN.
  mcubes::running_average m;
  m.add(2.0, 0.0);
  m.add(3.0, 1.0);
  EXPECT_NEAR(m.mean(), 2.0, 1e-12);
  EXPECT_TRUE(std::isfinite(m.chi2()));
  // A variance just above the floor is kept as it is.
  mcubes::running_average k;
  k.add(1.0, 1e-20);
  EXPECT_NEAR(k.sdev(), 1e-10, 1e-22);
}

// Q at the 5% critical values of the chi-square table (3.841, 5.991, 7.815, 18.307 to 4 digits,
// here to 20 digits from a 30-digit mpmath computation), and other reference values of
// Q(x, k) = Gamma(k/2, x/2) / Gamma(k/2) from the same computation.
// Predictable weights (the integrator's rule): (10, var 1, weight variance 4), (12, var 4, weight
// variance 1), (11, var 1, weight variance 4): weights 1/4, 1, 1/4 (W = 3/2), I = (2.5 + 12 + 2.75)
// / 1.5 = 11.5, s^2 = ((1/4)^2 1 + 1^2 4 + (1/4)^2 1) / (3/2)^2 = 4.125 / 2.25, chi2 = 1.5^2 +
// 0.5^2/4 + 0.5^2 = 2.5625; the inverse-variance average of the same estimates is 32/3 +- 2/3
// (ThreeEstimatesByHand).
TEST(RunningAverage, PredictableWeightsByHand) {
  mcubes::running_average a;
  a.add(10, 1, 4);
  a.add(12, 4, 1);
  a.add(11, 1, 4);
  EXPECT_NEAR(a.mean(), 11.5, hand_tol * 10);
  EXPECT_NEAR(a.sdev(), std::sqrt(4.125 / 2.25), hand_tol);
  EXPECT_NEAR(a.chi2(), 2.5625, hand_tol);
  EXPECT_EQ(a.dof(), 2);
  EXPECT_NEAR(a.weight(0), 1.0 / 6, hand_tol);
  EXPECT_NEAR(a.weight(1), 2.0 / 3, hand_tol);
  EXPECT_NEAR(a.inverse_variance_mean(), 32.0 / 3, hand_tol * 10);
  EXPECT_NEAR(a.inverse_variance_sdev(), 2.0 / 3, hand_tol);
}

// With weight variances equal to the variances, the average is Lepage's: the same mean and error
// as the inverse-variance columns, and the weights 1/v_k normalised.
TEST(RunningAverage, InverseVarianceWeightsAreLepages) {
  mcubes::running_average a, b;
  const double e[] = {1.0, 1.3, 0.9, 1.1}, v[] = {0.04, 0.01, 0.09, 0.02};
  for (int k = 0; k < 4; ++k) a.add(e[k], v[k]), b.add(e[k], v[k], v[k]);
  EXPECT_NEAR(a.mean(), a.inverse_variance_mean(), hand_tol);
  EXPECT_NEAR(a.sdev(), a.inverse_variance_sdev(), hand_tol);
  EXPECT_EQ(a.mean(), b.mean());
  EXPECT_EQ(a.sdev(), b.sdev());
  const double w_sum = 1 / 0.04 + 1 / 0.01 + 1 / 0.09 + 1 / 0.02;
  EXPECT_NEAR(a.weight(2), (1 / 0.09) / w_sum, hand_tol);
}

// A weight variance at or below the floor (or NaN) is raised like the variance: finite weights.
TEST(RunningAverage, WeightVarianceFloor) {
  mcubes::running_average a;
  a.add(1.0, 0.01, 0.0);
  a.add(2.0, 0.01, std::numeric_limits<double>::quiet_NaN());  // NaN: the variance's weight
  EXPECT_TRUE(std::isfinite(a.mean()));
  EXPECT_GT(a.weight(0), 0.99);  // 1/floor dominates 1/0.01
  EXPECT_TRUE(std::isfinite(a.sdev()));
}

TEST(Chi2Q, TableValues) {
  const std::pair<double, int> critical[] = {{3.8414588206941259584, 1}, {5.9914645471079819869, 2},
                                             {7.8147279032511799553, 3}, {18.307038053275146872, 10},
                                             {67.50480654954119997, 50}, {123.22522145336180636, 99}};
  for (const auto& [x, k] : critical) EXPECT_NEAR(mcubes::chi2_q(x, k), 0.05, table_tol) << "dof " << k;
  // The 4-digit table values themselves.
  EXPECT_NEAR(mcubes::chi2_q(3.841, 1), 0.05, 2e-5);
  EXPECT_NEAR(mcubes::chi2_q(5.991, 2), 0.05, 2e-5);
  EXPECT_NEAR(mcubes::chi2_q(7.815, 3), 0.05, 2e-5);
  EXPECT_NEAR(mcubes::chi2_q(18.307, 10), 0.05, 2e-5);
  struct ref { double x; int k; double q; };
  const ref refs[] = {
      {1, 1, 0.3173105078629141},     {1, 2, 0.60653065971263342},   {5, 3, 0.17179714429673314},
      {50, 50, 0.47339846855634936},  {99, 99, 0.4810969124082639},  {150, 99, 0.00072044539571696292},
      {1e-3, 1, 0.97477287936996039}, {40, 10, 1.6944743930067384e-5},
  };
  for (const auto& r : refs) EXPECT_NEAR(mcubes::chi2_q(r.x, r.k), r.q, table_tol) << r.x << ", " << r.k;
  // Relative accuracy far in the tail.
  EXPECT_NEAR(mcubes::chi2_q(200, 50) / 7.8576107246547436e-20, 1.0, 1e-9);
  EXPECT_NEAR(mcubes::chi2_q(700, 3) / 2.0991308534204088e-151, 1.0, 1e-9);
}

TEST(Chi2Q, Limits) {
  constexpr double monotone_slack = 4 * DBL_EPSILON;  // rounding near Q = 1
  EXPECT_EQ(mcubes::chi2_q(0.0, 3), 1.0);
  EXPECT_EQ(mcubes::chi2_q(-1.0, 3), 1.0);
  EXPECT_EQ(mcubes::chi2_q(5.0, 0), 1.0);
  EXPECT_EQ(mcubes::chi2_q(std::numeric_limits<double>::infinity(), 4), 0.0);
  EXPECT_NEAR(mcubes::chi2_q(1e-3, 99), 1.0, 1e-15);
  // Q decreases in x and increases in dof, stays in [0, 1].
  for (int k : {1, 2, 3, 7, 50, 99}) {
    double last = 1.0;
    for (double x = 0.01; x < 1000; x *= 1.3) {
      const double q = mcubes::chi2_q(x, k);
      ASSERT_GE(q, 0.0);
      ASSERT_LE(q, last + monotone_slack) << x << " " << k;
      ASSERT_LE(q, mcubes::chi2_q(x, k + 1) + monotone_slack) << x << " " << k;
      last = q;
    }
  }
}

// Far tails with many degrees of freedom (long runs: dof = accumulated iterations - 1 can be
// large): Q must be ~0 for a chi2 far above dof, and ~1/2 for chi2 = dof, never NaN or a wrong 1.
TEST(Chi2Q, LargeChi2AndLargeDof) {
  EXPECT_LT(mcubes::chi2_q(1e8, 99), 1e-300);
  EXPECT_LT(mcubes::chi2_q(1e6, 999), 1e-300);
  EXPECT_LT(mcubes::chi2_q(1e6, 1000), 1e-300);
  EXPECT_LT(mcubes::chi2_q(1e300, 3), 1e-300);
  EXPECT_NEAR(mcubes::chi2_q(2000, 2000), 0.49579475581978449, table_tol);
  EXPECT_NEAR(mcubes::chi2_q(1999, 1999), 0.49579370410269573, table_tol);
  EXPECT_NEAR(mcubes::chi2_q(5000, 5000), 0.49734037889234512, table_tol);
  EXPECT_NEAR(mcubes::chi2_q(150, 150), 0.48464360096035701, table_tol);
  for (int k : {150, 400, 999, 1000, 5000}) {
    const double q = mcubes::chi2_q(k, k);
    EXPECT_GT(q, 0.45) << k;
    EXPECT_LT(q, 0.5) << k;
  }
}

#ifdef MCUBES_TEST_HAVE_GSL
// Against GSL's gsl_cdf_chisq_Q (incomplete gamma function) on a grid of (chi2, dof).
TEST(Chi2Q, AgreesWithGsl) {
  constexpr double gsl_rel_tol = 1e-10;
  int compared = 0;
  for (int k = 1; k <= 400; k += (k < 20 ? 1 : 7)) {
    for (double x = 1e-4; x < 20.0 * k + 200; x *= 1.17) {
      const double expected = gsl_cdf_chisq_Q(x, k);
      const double q = mcubes::chi2_q(x, k);
      if (expected < 1e-280) {
        EXPECT_LT(q, 1e-270) << "chi2 = " << x << ", dof = " << k;
      } else {
        EXPECT_NEAR(q, expected, gsl_rel_tol * expected + 1e-15) << "chi2 = " << x << ", dof = " << k;
      }
      ++compared;
    }
  }
  EXPECT_GT(compared, 5000);
}
#endif

}  // namespace

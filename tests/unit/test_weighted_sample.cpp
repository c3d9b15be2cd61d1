// Weighted samples from a trained integrator (core/weighted_sample.hpp, integrator::sample): the
// design's counts and weights, the determinism contract (ranges, threads, seeds), and a chi-square
// test of a weighted histogram against the exact distribution of a derived quantity, after training
// with either stratification.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <vector>

#include "mcubes/error.hpp"
#include "mcubes/mcubes.hpp"

namespace {

constexpr double pi = 3.14159265358979323846;

// A product of Gaussians N(mu_j, sigma_j) on [0,1]^3, normalised to 1 over the cube: the density
// of the histogram test. Peaks off the sub-cube grid's centres, of different widths per axis.
struct gaussians {
  static constexpr double mu[3] = {0.31, 0.62, 0.47};
  static constexpr double sigma[3] = {0.05, 0.12, 0.2};
  static double normalisation(int j) {  // integral over [0,1] of axis j's Gaussian
    const double s = sigma[j] * std::sqrt(2.0);
    return 0.5 * (std::erf((1 - mu[j]) / s) - std::erf((0 - mu[j]) / s));
  }
  // The probability of x_0 in [a, b) under the normalised density.
  // Tails by erfc, so that the far bins (down to 1e-40) keep their digits.
  static double axis0_probability(double a, double b) {
    const double s = sigma[0] * std::sqrt(2.0);
    double p;
    if (a >= mu[0])
      p = 0.5 * (std::erfc((a - mu[0]) / s) - std::erfc((b - mu[0]) / s));
    else if (b <= mu[0])
      p = 0.5 * (std::erfc((mu[0] - b) / s) - std::erfc((mu[0] - a) / s));
    else
      p = 0.5 * (std::erf((b - mu[0]) / s) - std::erf((a - mu[0]) / s));
    return p / normalisation(0);
  }
  double operator()(const mcubes::point<3>& x) const {
    double f = 1;
    for (int j = 0; j < 3; ++j) {
      const double t = (x[j] - mu[j]) / sigma[j];
      f *= std::exp(-0.5 * t * t) / (sigma[j] * std::sqrt(2 * pi) * normalisation(j));
    }
    return f;
  }
};

mcubes::vegas_options training(mcubes::stratification_mode mode, int threads = 2) {
  mcubes::vegas_options o;
  o.backend = mcubes::backend_kind::cpu;
  o.threads = threads;
  o.calls_per_iteration = 50000;
  o.max_iterations = 6;
  o.adapt_iterations = 6;
  o.min_iterations = 6;
  o.skip = 0;
  o.stratification = mode;
  o.seed = 11;
  return o;
}

mcubes::sampling_density identity_density(int dim, double lo, double hi) {
  mcubes::sampling_density d;
  d.dim = dim;
  d.n_bins = 4;
  for (int j = 0; j < dim; ++j) {
    d.lower.push_back(lo);
    d.upper.push_back(hi);
    for (int k = 0; k <= 4; ++k) d.edges.push_back(k / 4.0);
  }
  return d;
}

TEST(WeightedSample, UniformDesignHasExactlyNPointsAndTheVolumeAsTotalWeight) {
  for (std::uint64_t n : {1ull, 2ull, 7ull, 1000ull, 1001ull}) {
    const mcubes::weighted_sampler s(identity_density(2, -1, 2), n, 5);
    EXPECT_FALSE(s.allocated());
    std::uint64_t total = 0;
    for (std::uint64_t c = 0; c < s.n_cubes(); ++c) {
      EXPECT_GE(s.cube_points(c), 1u);
      total += s.cube_points(c);
    }
    EXPECT_EQ(total, n);
    const mcubes::weighted_points p = s.points();
    ASSERT_EQ(p.size(), n);
    double sum = 0;
    for (std::uint64_t i = 0; i < n; ++i) {
      sum += p.w[i];
      for (int j = 0; j < 2; ++j) {
        EXPECT_GE(p.x[i * 2 + j], -1.0);
        EXPECT_LE(p.x[i * 2 + j], 2.0);
      }
    }
    EXPECT_NEAR(sum, 9.0, 1e-12) << "n = " << n;  // the identity map: weight V / (m n_c)
  }
}

TEST(WeightedSample, AnyRangeHasTheBitsOfTheWholeSample) {
  mcubes::integrator<3> integ(mcubes::region<3>::unit(), training(mcubes::stratification_mode::adaptive));
  integ.integrate(gaussians{});
  const mcubes::weighted_sampler s = integ.sampler(10007, 3);
  ASSERT_TRUE(s.allocated());
  const mcubes::weighted_points all = s.points();
  std::uint64_t first = 0;
  for (std::uint64_t count : {1ull, 333ull, 4096ull, 0ull, 5577ull}) {
    const mcubes::weighted_points part = s.points(first, count);
    for (std::uint64_t k = 0; k < count; ++k) {
      ASSERT_EQ(part.w[k], all.w[first + k]) << "point " << first + k;
      for (int j = 0; j < 3; ++j) ASSERT_EQ(part.x[k * 3 + j], all.x[(first + k) * 3 + j]);
    }
    first += count;
  }
  EXPECT_EQ(first, 10007u);
  EXPECT_THROW(s.points(10000, 8), mcubes::invalid_input);
  EXPECT_THROW(integ.sample(0, 1), mcubes::invalid_input);
}

TEST(WeightedSample, TheSameBitsForAnyThreadCountAndOtherBitsForAnotherSeed) {
  for (auto mode : {mcubes::stratification_mode::uniform, mcubes::stratification_mode::adaptive}) {
    mcubes::integrator<3> one(mcubes::region<3>::unit(), training(mode, 1));
    mcubes::integrator<3> three(mcubes::region<3>::unit(), training(mode, 3));
    one.integrate(gaussians{});
    three.integrate(gaussians{});
    const mcubes::weighted_points a = one.sample(5000, 9), b = three.sample(5000, 9), c = one.sample(5000, 10);
    EXPECT_EQ(a.x, b.x);
    EXPECT_EQ(a.w, b.w);
    EXPECT_NE(a.x, c.x);
  }
}

// The weighted histogram of x_0 with weights w f(x) against its exact bin probabilities, each bin's
// variance estimated from the sub-cubes' sample variances (the stratified estimator's own).
struct histogram_check {
  double chi2 = 0;
  int bins = 0;
  double total = 0, total_sigma = 0;
};

histogram_check weighted_histogram(const mcubes::weighted_sampler& s, int bins) {
  const mcubes::weighted_points p = s.points();
  const gaussians f;
  std::vector<double> h(static_cast<std::size_t>(bins), 0.0), var(h.size(), 0.0);
  double total_var = 0;
  histogram_check out;
  std::uint64_t i = 0;
  for (std::uint64_t c = 0; c < s.n_cubes(); ++c) {
    const std::uint64_t n = s.cube_points(c);
    std::vector<double> sum(h.size(), 0.0), sum2(h.size(), 0.0);
    double t1 = 0, t2 = 0;
    for (std::uint64_t k = 0; k < n; ++k, ++i) {
      mcubes::point<3> x;
      for (int j = 0; j < 3; ++j) x[j] = p.x[i * 3 + j];
      const double z = p.w[i] * f(x);
      const int b = std::min(bins - 1, static_cast<int>(x[0] * bins));
      sum[static_cast<std::size_t>(b)] += z;
      sum2[static_cast<std::size_t>(b)] += z * z;
      t1 += z;
      t2 += z * z;
    }
    EXPECT_GE(n, 2u) << "a sub-cube of one point has no variance estimate";
    const double nd = static_cast<double>(n);
    for (std::size_t b = 0; b < h.size(); ++b) {  // var of the sub-cube's sum: n/(n-1) sum (z - mean)^2
      h[b] += sum[b];
      var[b] += nd / (nd - 1) * (sum2[b] - sum[b] * sum[b] / nd);
    }
    out.total += t1;
    total_var += nd / (nd - 1) * (t2 - t1 * t1 / nd);
  }
  for (int b = 0; b < bins; ++b) {
    const double exact = gaussians::axis0_probability(static_cast<double>(b) / bins, static_cast<double>(b + 1) / bins);
    if (var[static_cast<std::size_t>(b)] <= 0) continue;  // a bin no point reached (its exact mass is tiny)
    const double d = h[static_cast<std::size_t>(b)] - exact;
    // The far tail (mass < 1e-9: a few points of tiny weight) has too few points for a Gaussian
    // error, and its variance estimate is skewed: only gross errors there (20 sigma; a weight off
    // by a factor shows as hundreds). Elsewhere chi2.
    if (exact < 1e-9) {
      EXPECT_LT(std::fabs(d), 20 * std::sqrt(var[static_cast<std::size_t>(b)])) << "tail bin " << b;
      continue;
    }
    out.chi2 += d * d / var[static_cast<std::size_t>(b)];
    ++out.bins;
  }
  out.total_sigma = std::sqrt(total_var);
  return out;
}

TEST(WeightedSample, WeightedHistogramMatchesTheExactDistributionAfterTraining) {
  for (auto mode : {mcubes::stratification_mode::uniform, mcubes::stratification_mode::adaptive}) {
    mcubes::integrator<3> integ(mcubes::region<3>::unit(), training(mode));
    integ.integrate(gaussians{});
    EXPECT_EQ(integ.density().shares.empty(), mode == mcubes::stratification_mode::uniform);
    double chi2 = 0;
    int dof = 0;
    for (std::uint64_t seed : {1ull, 2ull, 3ull, 4ull}) {
      const mcubes::weighted_sampler s = integ.sampler(200000, seed);
      EXPECT_EQ(s.allocated(), mode == mcubes::stratification_mode::adaptive);
      const histogram_check h = weighted_histogram(s, 25);
      EXPECT_LT(std::fabs(h.total - 1.0), 5 * h.total_sigma) << "seed " << seed << ": " << h.total << " +- " << h.total_sigma;
      EXPECT_LT(h.total_sigma, 0.01);  // the trained map: far below the 20 % of plain Monte Carlo here
      chi2 += h.chi2;
      dof += h.bins;
    }
    // chi2 over 4 seeds x ~16 bins: mean dof, sd sqrt(2 dof) ~ 11; a weight 0.3 % off on half of
    // the cube gives chi2 ~ 2 dof here.
    EXPECT_GE(dof, 60);
    EXPECT_LT(chi2, dof + 5 * std::sqrt(2.0 * dof)) << "chi2 " << chi2 << " over " << dof << " bins";
    EXPECT_GT(chi2, dof - 5 * std::sqrt(2.0 * dof)) << "chi2 " << chi2 << " over " << dof << " bins";
  }
}

TEST(WeightedSample, AnUntrainedIntegratorGivesPlainStratifiedPoints) {
  mcubes::integrator<2> integ(mcubes::region<2>::cube(0, 3), training(mcubes::stratification_mode::adaptive));
  const mcubes::weighted_points p = integ.sample(100, 1);
  double sum = 0;
  for (double w : p.w) sum += w;
  EXPECT_NEAR(sum, 9.0, 1e-12);
  EXPECT_FALSE(integ.sampler(100, 1).allocated());
}

TEST(WeightedSample, InvalidDensitiesAreRefused) {
  mcubes::sampling_density d = identity_density(2, 0, 1);
  d.upper[1] = 0;
  EXPECT_THROW(mcubes::weighted_sampler(d, 10, 1), mcubes::invalid_input);
  d = identity_density(2, 0, 1);
  d.edges[2] = 0.9;  // not increasing
  EXPECT_THROW(mcubes::weighted_sampler(d, 10, 1), mcubes::invalid_input);
  d = identity_density(2, 0, 1);
  d.g = 2;
  d.shares = {1, 2, 3};  // not g^d
  EXPECT_THROW(mcubes::weighted_sampler(d, 10, 1), mcubes::invalid_input);
  d.shares = {1, 2, -3, 1};
  EXPECT_THROW(mcubes::weighted_sampler(d, 10, 1), mcubes::invalid_input);
  d.shares = {0, 0, 0, 0};  // no sub-cube varied: the uniform design
  EXPECT_FALSE(mcubes::weighted_sampler(d, 10, 1).allocated());
  d.shares = {1, 0, 0, 3};
  const mcubes::weighted_sampler s(d, 100, 1);
  ASSERT_TRUE(s.allocated());
  EXPECT_EQ(s.cube_points(0) + s.cube_points(1) + s.cube_points(2) + s.cube_points(3), 100u);
  // n_min = floor(100 / 16) = 6 each, the other 76 by cumulative floors of 76 * (1, 1, 1, 4) / 4
  EXPECT_EQ(s.cube_points(0), 25u);
  EXPECT_EQ(s.cube_points(1), 6u);
  EXPECT_EQ(s.cube_points(2), 6u);
  EXPECT_EQ(s.cube_points(3), 63u);
}

}  // namespace

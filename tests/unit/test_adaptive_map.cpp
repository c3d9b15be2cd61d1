// Unit tests of core/adaptive_map.hpp: the Vegas map (Lepage 1978), its view, bin lookup and
// adaptation (smoothing, damping with alpha, rebinning).

#include <gtest/gtest.h>

#include <algorithm>
#include <cfloat>
#include <cmath>
#include <limits>
#include <random>
#include <vector>

#include "mcubes/core/adaptive_map.hpp"
#include "mcubes/error.hpp"
#include "mcubes/options.hpp"

namespace {

constexpr double exact_tol = 1e-15;      // results that differ from the formula by rounding only
constexpr double reference_tol = 1e-12;  // against the independent reference rebinning
constexpr unsigned map_seed = 4242;

// A hand-made map on axis 0 (and a different one on axis 1) with 4 bins.
template <int D>
mcubes::adaptive_map<D> hand_map() {
  mcubes::adaptive_map<D> m(4);
  const double e0[] = {0.0, 0.1, 0.3, 0.6, 1.0};
  for (int k = 0; k <= 4; ++k) m.edge(0, k) = e0[k];
  return m;
}

std::vector<double> axis_edges(const mcubes::adaptive_map<1>& m) {
  std::vector<double> e(m.n_bins() + 1);
  for (int k = 0; k <= m.n_bins(); ++k) e[k] = m.edge(0, k);
  return e;
}

// Independent reference of adapt_axis: the same documented smoothing and damping, then rebinning by
// inverting the piecewise-linear cumulative of r (long double, a search per edge).
// eps > 0: the defensive floor, eps/(1-eps) R (e_{k+1} - e_k) added to each starved r_k (below
// R / (8 n): map_adaptation::starved_ratio).
std::vector<double> reference_adapt(const std::vector<double>& e, const std::vector<double>& c, double alpha,
                                    double eps = 0) {
  const int n = static_cast<int>(c.size());
  std::vector<long double> d(n), r(n), cum(n + 1, 0.0L);
  for (int k = 0; k < n; ++k) {
    long double s = c[k], w = 1;
    if (k > 0) s += c[k - 1], w += 1;
    if (k < n - 1) s += c[k + 1], w += 1;
    d[k] = s / w;
  }
  long double S = 0;
  for (auto x : d) S += x;
  if (!(S > 0)) return e;
  for (int k = 0; k < n; ++k) {
    const long double f = std::max(d[k] / S, 1e-300L);  // the floor share of an empty bin
    if (f >= 1) r[k] = 1;
    else r[k] = std::pow((1 - f) / std::log(1 / f), static_cast<long double>(alpha));
  }
  long double R0 = 0;
  for (auto x : r) R0 += x;
  const long double starved = R0 / (static_cast<long double>(n) * mcubes::map_adaptation::starved_ratio);
  for (int k = 0; k < n; ++k) {
    if (eps > 0 && r[k] < starved) r[k] += eps / (1 - eps) * R0 * (static_cast<long double>(e[k + 1]) - e[k]);
    cum[k + 1] = cum[k] + r[k];
  }
  const long double R = cum[n];
  std::vector<double> out(n + 1);
  out[0] = 0.0;
  out[n] = 1.0;
  for (int i = 1; i < n; ++i) {
    const long double T = R * i / n;
    int k = 0;
    while (!(r[k] > 0 && cum[k + 1] >= T)) ++k;
    out[i] = static_cast<double>(e[k] + (e[k + 1] - e[k]) * ((T - cum[k]) / r[k]));
  }
  return out;
}

TEST(AdaptiveMap, InitialMapIsUniform) {
  mcubes::adaptive_map<3> m(10);
  EXPECT_EQ(m.n_bins(), 10);
  ASSERT_EQ(m.edges().size(), 3u * 11u);
  for (int j = 0; j < 3; ++j)
    for (int k = 0; k <= 10; ++k) EXPECT_EQ(m.edge(j, k), k / 10.0);
  const auto v = m.view();
  for (int j = 0; j < 3; ++j) {
    for (double u : {1e-9, 0.05, 0.1, 0.33, 0.5, 0.77, 0.9999}) {
      double x = -1, jac = 1;
      const int b = v.map(j, u, x, jac);
      EXPECT_NEAR(x, u, exact_tol);
      EXPECT_NEAR(jac, 1.0, exact_tol);
      EXPECT_EQ(b, static_cast<int>(u * 10));
    }
  }
}

TEST(AdaptiveMap, MapOnHandMadeMap) {
  auto m = hand_map<2>();
  const auto v = m.view();
  struct expectation { double u, x, jac; int bin; };
  // bin b = floor(4u), x = e_b + (e_{b+1} - e_b)(4u - b), J = 4 (e_{b+1} - e_b).
  const expectation cases[] = {
      {0.125, 0.05, 0.4, 0},   // middle of bin 0 (width 0.1)
      {0.25, 0.1, 0.8, 1},     // start of bin 1 (width 0.2)
      {0.375, 0.2, 0.8, 1},
      {0.6, 0.42, 1.2, 2},     // bin 2 (width 0.3): 0.3 + 0.3 * 0.4
      {0.75, 0.6, 1.6, 3},
      {0.9, 0.84, 1.6, 3},     // bin 3 (width 0.4): 0.6 + 0.4 * 0.6
  };
  for (const auto& c : cases) {
    double x = 0, jac = 2.0;  // the jacobian is multiplied in
    const int b = v.map(0, c.u, x, jac);
    EXPECT_EQ(b, c.bin) << "u = " << c.u;
    EXPECT_NEAR(x, c.x, exact_tol) << "u = " << c.u;
    EXPECT_NEAR(jac, 2.0 * c.jac, exact_tol) << "u = " << c.u;
  }
  // Axis 1 is still uniform.
  double x = 0, jac = 1;
  EXPECT_EQ(v.map(1, 0.6, x, jac), 2);
  EXPECT_NEAR(x, 0.6, exact_tol);
  EXPECT_NEAR(jac, 1.0, exact_tol);
  // Edges: the extreme doubles of (0,1), 2^-53 and 1 - 2^-53 (beyond the stream's own extremes
  // 2^-33 and 1 - 2^-33).
  const double u_min = std::ldexp(1.0, -53), u_max = 1.0 - std::ldexp(1.0, -53);
  jac = 1;
  EXPECT_EQ(v.map(0, u_min, x, jac), 0);
  EXPECT_GT(x, 0.0);
  EXPECT_LT(x, 1e-15);
  EXPECT_NEAR(jac, 0.4, exact_tol);
  jac = 1;
  EXPECT_EQ(v.map(0, u_max, x, jac), 3);  // the last bin, not bin 4 (out of range)
  EXPECT_LE(x, 1.0);
  EXPECT_GT(x, 1.0 - 1e-15);
  EXPECT_NEAR(jac, 1.6, exact_tol);
  // u = 1 exactly (y = (c + u)/g can round up to 1): still the last bin, x = 1.
  jac = 1;
  EXPECT_EQ(v.map(0, 1.0, x, jac), 3);
  EXPECT_EQ(x, 1.0);
  EXPECT_NEAR(jac, 1.6, exact_tol);
}

TEST(AdaptiveMap, LargestDrawGivesLastBinForEveryBinCount) {
  const double u_max = 1.0 - std::ldexp(1.0, -53);  // the largest double below 1
  for (int n = 2; n <= 3000; ++n) {
    mcubes::adaptive_map<1> m(n);
    double x = 0, jac = 1;
    const int b = m.view().map(0, u_max, x, jac);
    ASSERT_EQ(b, n - 1) << "n_bins = " << n;
    ASSERT_LE(x, 1.0);
    ASSERT_GE(x, m.edge(0, n - 1));
    ASSERT_TRUE(std::isfinite(jac) && jac > 0);
  }
}

TEST(AdaptiveMap, MapIsMonotoneAndConsistentWithBinOf) {
  auto m = hand_map<1>();
  const auto v = m.view();
  std::mt19937_64 rng(map_seed);
  std::uniform_real_distribution<double> unif(0.0, 1.0);
  std::vector<double> us(20000);
  for (auto& u : us) u = unif(rng);
  std::sort(us.begin(), us.end());
  double last = -1;
  for (double u : us) {
    if (u == 0) continue;
    double x = 0, jac = 1;
    const int b = v.map(0, u, x, jac);
    EXPECT_GE(x, last);
    last = x;
    EXPECT_TRUE(m.bin_of(0, x) == b || x == m.edge(0, b + 1)) << "u = " << u << " x = " << x;
  }
}

TEST(AdaptiveMap, BinOfAtEdges) {
  auto m = hand_map<1>();  // edges 0, 0.1, 0.3, 0.6, 1
  EXPECT_EQ(m.bin_of(0, 0.0), 0);
  EXPECT_EQ(m.bin_of(0, -1.0), 0);
  EXPECT_EQ(m.bin_of(0, 1e-300), 0);
  EXPECT_EQ(m.bin_of(0, std::nextafter(0.1, 0.0)), 0);
  EXPECT_EQ(m.bin_of(0, 0.1), 1);  // an edge belongs to the bin it starts
  EXPECT_EQ(m.bin_of(0, 0.2), 1);
  EXPECT_EQ(m.bin_of(0, 0.3), 2);
  EXPECT_EQ(m.bin_of(0, std::nextafter(0.6, 0.0)), 2);
  EXPECT_EQ(m.bin_of(0, 0.6), 3);
  EXPECT_EQ(m.bin_of(0, std::nextafter(1.0, 0.0)), 3);
  EXPECT_EQ(m.bin_of(0, 1.0), 3);  // x = 1 is in the last bin
  EXPECT_EQ(m.bin_of(0, 2.0), 3);
  // Zero-width bins: the point goes to the bin of non-zero width that contains it.
  mcubes::adaptive_map<1> z(4);
  const double ez[] = {0.0, 0.5, 0.5, 0.5, 1.0};
  for (int k = 0; k <= 4; ++k) z.edge(0, k) = ez[k];
  EXPECT_EQ(z.bin_of(0, 0.25), 0);
  EXPECT_EQ(z.bin_of(0, 0.5), 3);
  EXPECT_EQ(z.bin_of(0, 0.75), 3);
  // Uniform map with many bins: every edge k/n is in bin k.
  mcubes::adaptive_map<1> u(500);
  for (int k = 0; k < 500; ++k) EXPECT_EQ(u.bin_of(0, u.edge(0, k)), k);
}

// Hand-computed adaptation with 4 bins, alpha = 1: c = (0, 0, 3, 3) on the uniform map.
//   smoothing: d = ((0+0)/2, (0+0+3)/3, (0+3+3)/3, (3+3)/2) = (0, 1, 2, 3), S = 6
//   damping:   the empty bin keeps the floor share f = 1e-300: r0 = (1 - 1e-300)/ln(1e300) = 0.00144764;
//              r = (r0, (5/6)/ln 6, (2/3)/ln 3, (1/2)/ln 2) = (0.00144764, 0.465092, 0.606826, 0.721348)
//   rebinning: R = sum r; edge i at R i/4 of the cumulative, linear inside old bins of width 1/4:
//     edge 1 = 1/4 + (1/4)(R/4 - r0)/r1                  = 0.4903990
//     edge 2 = 1/2 + (1/4)(R/2 - r0 - r1)/r2             = 0.6774878
//     edge 3 = 3/4 + (1/4)(3R/4 - r0 - r1 - r2)/r3       = 0.8444999
TEST(AdaptiveMap, AdaptationAgainstHandComputedResult) {
  mcubes::adaptive_map<1> m(4);
  const double c[] = {0, 0, 3, 3};
  m.adapt_axis(0, c, 1.0);
  const double r0 = (1 - 1e-300) / std::log(1e300);
  const double r1 = (5.0 / 6) / std::log(6.0), r2 = (2.0 / 3) / std::log(3.0), r3 = 0.5 / std::log(2.0);
  const double R = r0 + r1 + r2 + r3;
  EXPECT_EQ(m.edge(0, 0), 0.0);
  EXPECT_NEAR(m.edge(0, 1), 0.25 + 0.25 * (R / 4 - r0) / r1, exact_tol);
  EXPECT_NEAR(m.edge(0, 2), 0.5 + 0.25 * (R / 2 - r0 - r1) / r2, exact_tol);
  EXPECT_NEAR(m.edge(0, 3), 0.75 + 0.25 * (3 * R / 4 - r0 - r1 - r2) / r3, exact_tol);
  EXPECT_EQ(m.edge(0, 4), 1.0);
  // The printed values, as a check of the formulas themselves.
  EXPECT_NEAR(m.edge(0, 1), 0.4903990, 1e-7);
  EXPECT_NEAR(m.edge(0, 2), 0.6774878, 1e-7);
  EXPECT_NEAR(m.edge(0, 3), 0.8444999, 1e-7);
}

// Same histogram with alpha = 0.5 on the hand-made non-uniform map (edges 0, .1, .3, .6, 1):
// r_k = sqrt(...) of the values above, the old bins have widths .1, .2, .3, .4.
TEST(AdaptiveMap, AdaptationWithAlphaOnNonUniformMap) {
  auto m = hand_map<1>();
  const double c[] = {0, 0, 3, 3};
  m.adapt_axis(0, c, 0.5);
  const double r0 = std::sqrt((1 - 1e-300) / std::log(1e300));  // the empty bin's floor share
  const double r1 = std::sqrt((5.0 / 6) / std::log(6.0)), r2 = std::sqrt((2.0 / 3) / std::log(3.0)),
               r3 = std::sqrt(0.5 / std::log(2.0));
  const double R = r0 + r1 + r2 + r3;
  // r = (0.038048, 0.681972, 0.778990, 0.849322), R = 2.348332; R/4 - r0 < r1: in old bin 1.
  EXPECT_NEAR(m.edge(0, 1), 0.1 + 0.2 * (R / 4 - r0) / r1, exact_tol);
  // R/2 in (r0 + r1, r0 + r1 + r2): old bin 2.
  EXPECT_NEAR(m.edge(0, 2), 0.3 + 0.3 * (R / 2 - r0 - r1) / r2, exact_tol);
  // 3R/4 > r0 + r1 + r2: old bin 3.
  EXPECT_NEAR(m.edge(0, 3), 0.6 + 0.4 * (3 * R / 4 - r0 - r1 - r2) / r3, exact_tol);
  EXPECT_EQ(m.edge(0, 0), 0.0);
  EXPECT_EQ(m.edge(0, 4), 1.0);
}

// 300 random histograms (a share `zero_share` of empty bins, the rest over six decades) on random
// non-uniform maps of 2..61 bins, adapted with alpha_of(trial) and the floor eps_of(trial), against
// the long-double reference.
template <class Alpha, class Eps>
void expect_reference_adaptation(unsigned seed, double zero_share, const Alpha& alpha_of, const Eps& eps_of) {
  std::mt19937_64 rng(seed);
  std::uniform_real_distribution<double> unif(0.0, 1.0);
  for (int trial = 0; trial < 300; ++trial) {
    const int n = 2 + static_cast<int>(rng() % 60);
    const double alpha = alpha_of(trial), eps = eps_of(trial);
    mcubes::adaptive_map<1> m(n);
    // A random non-uniform starting map.
    std::vector<double> cuts(n - 1);
    for (auto& x : cuts) x = unif(rng);
    std::sort(cuts.begin(), cuts.end());
    for (int k = 1; k < n; ++k) m.edge(0, k) = cuts[k - 1];
    std::vector<double> c(n);
    for (auto& x : c) x = unif(rng) < zero_share ? 0.0 : std::pow(10.0, 6 * unif(rng) - 3);
    const auto expected = reference_adapt(axis_edges(m), c, alpha, eps);
    m.adapt_axis(0, c.data(), alpha, eps);
    for (int k = 0; k <= n; ++k)
      ASSERT_NEAR(m.edge(0, k), expected[k], reference_tol) << "trial " << trial << ", n = " << n << ", eps " << eps << ", edge " << k;
  }
}

TEST(AdaptiveMap, AdaptationAgainstReferenceOnRandomHistograms) {
  expect_reference_adaptation(
      map_seed + 1, 0.3, [](int trial) { return trial % 3 == 0 ? 1.5 : (trial % 3 == 1 ? 0.5 : 2.0); },
      [](int) { return 0.0; });
}

// The defensive floor (adapt_axis step 3) against the reference with the floor added in long double.
TEST(AdaptiveMap, DefensiveFloorAgainstReferenceOnRandomHistograms) {
  expect_reference_adaptation(
      map_seed + 11, 0.5, [](int trial) { return trial % 2 == 0 ? 1.5 : 0.5; },
      [](int trial) { return trial % 3 == 0 ? 0.05 : (trial % 3 == 1 ? 0.02 : 0.5); });
}

// What the floor is for: f = 0 on [0.4, 1] (a discontinuity, m-Cubes' f6) and f largest just below
// 0.4. Lepage's rule lets a few increments swallow the empty region (after 12 rounds the widest is
// about 0.15, a jacobian of about 75 for 500 bins); with the floor eps no increment is wider than
// about 1/(eps n) after any round of adaptation: the floor's part alone gives a new increment inside
// the starved region at most that width, the one at its border (its weight partly the smoothing's,
// not the floor's) up to a few per cent more (seen: 1.025/(eps n)); those that saw f are narrower.
TEST(AdaptiveMap, DefensiveFloorBoundsTheIncrements) {
  const int n = 500;
  const auto widest = [&](const mcubes::adaptive_map<1>& m) {
    double w = 0;
    for (int k = 0; k < n; ++k) w = std::fmax(w, m.edge(0, k + 1) - m.edge(0, k));
    return w;
  };
  for (double eps : {0.0, 0.02, 0.05}) {
    mcubes::adaptive_map<1> m(n);
    for (int round = 0; round < 12; ++round) {
      std::vector<double> c(n);
      for (int k = 0; k < n; ++k) {  // the exact integral of f^2 J^2-like weight exp(10 x) over each increment below 0.4
        const double a = m.edge(0, k), b = std::fmin(m.edge(0, k + 1), 0.4);
        c[k] = b > a ? (std::exp(10 * b) - std::exp(10 * a)) * (m.edge(0, k + 1) - a) * n : 0.0;
      }
      m.adapt_axis(0, c.data(), 1.5, eps);
      if (eps > 0) {
        ASSERT_LE(widest(m), 1.1 / (eps * n)) << "eps " << eps << ", round " << round;
      }
    }
    if (eps == 0) {
      EXPECT_GT(widest(m), 0.1) << "Lepage's rule: the empty region in a few increments";
    }
  }
}

// The floor goes to the starved bins only (map_adaptation::starved_ratio): a peaked histogram
// that saw f in every bin (a Cauchy-like peak, the share of the tails ~1e-6 of the centre's) adapts
// as without the floor (up to the one bit less of the quantized weights), where a floor on every
// bin would move eps of the weight into the tails at every round (a variance of about D eps per
// sample for a product of such axes, however good the map). A histogram with an empty region gives
// its floor to that region: some of its increments narrow.
TEST(AdaptiveMap, DefensiveFloorLeavesTheBinsThatSawFAlone) {
  const int n = 500;
  mcubes::adaptive_map<1> with(n), without(n);
  for (int round = 0; round < 8; ++round) {
    for (auto* m : {&with, &without}) {
      std::vector<double> c(n);
      for (int k = 0; k < n; ++k) {  // (f J)^2 of f = 1/(1/50^2 + (x - 1/2)^2) at the increment's centre
        const double a = m->edge(0, k), b = m->edge(0, k + 1), x = (a + b) / 2, f = 1 / (4e-4 + (x - 0.5) * (x - 0.5));
        c[k] = f * f * (b - a) * (b - a) * n * n;
      }
      m->adapt_axis(0, c.data(), 1.5, m == &with ? mcubes::vegas_plus_map_floor : 0.0);
    }
    for (int k = 0; k <= n; ++k)
      ASSERT_NEAR(with.edge(0, k), without.edge(0, k), 1e-12) << "round " << round << ", edge " << k;
  }
  // Empty bins (beyond x = 0.7 on the uniform map) starve: the floor narrows the empty region's increments.
  mcubes::adaptive_map<1> empty_with(n), empty_without(n);
  std::vector<double> c(n);
  for (int k = 0; k < n; ++k) c[k] = k < 350 ? 1.0 + k : 0.0;
  empty_with.adapt_axis(0, c.data(), 1.5, mcubes::vegas_plus_map_floor);
  empty_without.adapt_axis(0, c.data(), 1.5, 0.0);
  const auto above = [&](const mcubes::adaptive_map<1>& m) {
    int k = 0;
    while (m.edge(0, k) < 0.72) ++k;
    return n - k;  // increments above 0.72 (every starved bin's region)
  };
  EXPECT_GE(above(empty_with), static_cast<int>(0.28 * mcubes::vegas_plus_map_floor * n) - 1);
  EXPECT_LE(above(empty_without), 1);
}

// Uniform contributions are a fixed point up to the rounding of the running sum of r in the
// rebinning: k equal terms summed one by one are off by up to ~k^2 eps/4 of a term, i.e. by up to
// ~n eps/4 in x (about 1e-15 for 10 bins, 6e-14 for 1000 bins).
TEST(AdaptiveMap, UniformContributionsAreAFixedPoint) {
  for (int n : {2, 3, 4, 10, 99, 500, 1000}) {
    const double fixed_point_tol = std::fmax(exact_tol, n * DBL_EPSILON / 2);
    for (double alpha : {0.5, 1.5, 3.0}) {
      mcubes::adaptive_map<1> m(n);
      std::vector<double> c(n, 7.25);
      m.adapt_axis(0, c.data(), alpha);
      for (int k = 0; k <= n; ++k) ASSERT_NEAR(m.edge(0, k), static_cast<double>(k) / n, fixed_point_tol) << n << " " << k;
      EXPECT_EQ(m.edge(0, 0), 0.0);
      EXPECT_EQ(m.edge(0, n), 1.0);
    }
  }
  // With the defensive floor too (the floor is uniform in x as the map is).
  for (int n : {2, 10, 500}) {
    mcubes::adaptive_map<1> m(n);
    std::vector<double> c(n, 3.5);
    m.adapt_axis(0, c.data(), 1.5, 0.05);
    for (int k = 0; k <= n; ++k) ASSERT_NEAR(m.edge(0, k), static_cast<double>(k) / n, std::fmax(exact_tol, n * DBL_EPSILON)) << n << " " << k;
  }
  // A non-uniform map with uniform contributions keeps its edges too (r is constant per old bin).
  auto m = hand_map<1>();
  const double c[] = {2, 2, 2, 2};
  m.adapt_axis(0, c, 1.5);
  const double fixed_point_tol = exact_tol;
  const double e[] = {0.0, 0.1, 0.3, 0.6, 1.0};
  for (int k = 0; k <= 4; ++k) EXPECT_NEAR(m.edge(0, k), e[k], fixed_point_tol);
}

TEST(AdaptiveMap, ZeroOrNonFiniteContributionsLeaveTheMapUnchanged) {
  const double nan = std::numeric_limits<double>::quiet_NaN(), inf = std::numeric_limits<double>::infinity();
  const std::vector<std::vector<double>> cases = {{0, 0, 0, 0}, {0, nan, 1, 1}, {1, 1, inf, 1}};
  for (const auto& c : cases) {
    auto m = hand_map<1>();
    const auto before = axis_edges(m);
    m.adapt_axis(0, c.data(), 1.5);
    EXPECT_EQ(axis_edges(m), before);
  }
}

TEST(AdaptiveMap, EmptyBinsGiveSortedFiniteEdges) {
  std::mt19937_64 rng(map_seed + 2);
  std::uniform_real_distribution<double> unif(0.0, 1.0);
  for (int trial = 0; trial < 500; ++trial) {
    const int n = 2 + static_cast<int>(rng() % 200);
    mcubes::adaptive_map<1> m(n);
    // Several rounds of adaptation to histograms that are mostly zero, as in a narrow peak.
    for (int round = 0; round < 4; ++round) {
      std::vector<double> c(n, 0.0);
      const int nonzero = 1 + static_cast<int>(rng() % 3);
      for (int i = 0; i < nonzero; ++i) c[rng() % n] = std::pow(10.0, 40 * unif(rng) - 20);
      m.adapt_axis(0, c.data(), trial % 2 ? 1.5 : 0.7);
      ASSERT_EQ(m.edge(0, 0), 0.0);
      ASSERT_EQ(m.edge(0, n), 1.0);
      for (int k = 0; k < n; ++k) {
        ASSERT_TRUE(std::isfinite(m.edge(0, k)));
        ASSERT_LE(m.edge(0, k), m.edge(0, k + 1)) << "trial " << trial << ", edge " << k;
      }
    }
  }
}

// A single non-zero bin: smoothing spreads it over its neighbours (each d = c/3), which get equal
// r, so the new bins are, up to the floor share of the empty bins (r = (1/ln 1e300)^alpha, about
// 5.5e-5 of the others for alpha = 1.5), equal slices of [e_{k-1}, e_{k+2}]; exactly, they are
// what the long-double reference gives.
constexpr double empty_bin_share_tol = 1e-4;
constexpr double empty_bin_share_tol_alpha1 = 2e-3;  // alpha = 1: the floor share is (1/ln 1e300) = 1.4e-3
TEST(AdaptiveMap, SingleNonZeroBin) {
  mcubes::adaptive_map<1> m(8);
  std::vector<double> c(8, 0.0);
  c[3] = 7.0;  // d_2 = d_3 = d_4 = 7/3: old bins 2..4 = [0.25, 0.625]
  const auto ref = reference_adapt(axis_edges(m), c, 1.5);
  m.adapt_axis(0, c.data(), 1.5);
  for (int i = 1; i < 8; ++i) {
    EXPECT_NEAR(m.edge(0, i), ref[i], reference_tol) << "edge " << i;
    EXPECT_NEAR(m.edge(0, i), (2 + 3.0 * i / 8) / 8, empty_bin_share_tol) << "edge " << i;
    EXPECT_GT(m.edge(0, 1), 0.25);  // the empty bins below keep a (small) width
  }
  EXPECT_EQ(m.edge(0, 0), 0.0);
  EXPECT_EQ(m.edge(0, 8), 1.0);
  // At the boundary: c_0 alone gives d_0 = c/2, d_1 = c/3, f = 0.6, 0.4.
  mcubes::adaptive_map<1> b(8);
  std::vector<double> c0(8, 0.0);
  c0[0] = 5.0;
  const auto ref0 = reference_adapt(axis_edges(b), c0, 1.0);
  b.adapt_axis(0, c0.data(), 1.0);
  for (int i = 1; i < 8; ++i) EXPECT_NEAR(b.edge(0, i), ref0[i], reference_tol) << "edge " << i;
  const double r0 = 0.4 / std::log(1 / 0.6), r1 = 0.6 / std::log(1 / 0.4);
  const double R = r0 + r1;
  for (int i = 1; i < 8; ++i) {
    const double T = R * i / 8;
    const double expected = T <= r0 ? 0.125 * T / r0 : 0.125 + 0.125 * (T - r0) / r1;
    EXPECT_NEAR(b.edge(0, i), expected, empty_bin_share_tol_alpha1) << "edge " << i;
  }
  EXPECT_EQ(b.edge(0, 8), 1.0);
  // At the other end: c_7 alone -> bins 6, 7 hold everything, mirror image of the above.
  mcubes::adaptive_map<1> e(8);
  std::vector<double> c7(8, 0.0);
  c7[7] = 5.0;
  e.adapt_axis(0, c7.data(), 1.0);
  for (int i = 1; i < 8; ++i) EXPECT_NEAR(e.edge(0, i), 1.0 - b.edge(0, 8 - i), 1e-14) << "edge " << i;
}

TEST(AdaptiveMap, AlphaZeroKeepsTheMap) {
  // alpha = 0 freezes the map (options.hpp): also with empty bins, which would otherwise collapse.
  for (const std::vector<double>& c : {std::vector<double>{1, 2, 3, 4}, std::vector<double>{0, 0, 5, 0},
                                       std::vector<double>{0, 0, 0, 1}}) {
    auto m = hand_map<1>();
    const auto before = axis_edges(m);
    m.adapt_axis(0, c.data(), 0.0);
    EXPECT_EQ(axis_edges(m), before);
  }
  mcubes::adaptive_map<2> m2(6);
  const auto before = m2.edges();
  std::vector<double> c(12, 0.0);
  c[1] = 3;
  c[9] = 4;
  m2.adapt(c, 0.0);
  EXPECT_EQ(m2.edges(), before);
}

TEST(AdaptiveMap, AdaptAdaptsEachAxisIndependently) {
  mcubes::adaptive_map<2> m(4);
  const std::vector<double> c = {0, 0, 3, 3, 1, 1, 1, 1};
  m.adapt(c, 1.0);
  mcubes::adaptive_map<1> one(4);
  one.adapt_axis(0, c.data(), 1.0);
  for (int k = 0; k <= 4; ++k) {
    EXPECT_EQ(m.edge(0, k), one.edge(0, k));
    EXPECT_NEAR(m.edge(1, k), k / 4.0, exact_tol);
  }
  EXPECT_THROW(m.adapt(std::vector<double>(7, 1.0), 1.0), mcubes::invalid_input);
}

TEST(AdaptiveMap, AdaptSymmetricCopiesAxisZero) {
  mcubes::adaptive_map<3> m(4);
  m.edge(1, 1) = 0.01;  // make the other axes differ first
  m.edge(2, 3) = 0.99;
  const double c[] = {0, 0, 3, 3};
  m.adapt_symmetric(c, 1.0);
  mcubes::adaptive_map<1> one(4);
  one.adapt_axis(0, c, 1.0);
  for (int j = 0; j < 3; ++j)
    for (int k = 0; k <= 4; ++k) EXPECT_EQ(m.edge(j, k), one.edge(0, k)) << "axis " << j << " edge " << k;
}

// adapt() on bins with overflow levels folds each bin's levels from the top down
// (combine_bin_level) before adapting: the same edges as adapting to the folded doubles.
TEST(AdaptiveMap, AdaptFoldsOverflowLevels) {
  constexpr int D = 2, n = 6;
  std::vector<mcubes::bin_accumulator> bins(3 * D * n);  // levels 0, 1, 2
  for (std::size_t i = 0; i < bins.size(); ++i) bins[i].add((i * 2654435761u) % 1000003u);
  bins[2 * D * n + 3].hi = 5;  // a high word at the top level
  std::vector<double> folded(D * n);
  for (int i = 0; i < D * n; ++i) {
    double c = mcubes::combine_bin_level(0, bins[2 * D * n + i], true);
    c = mcubes::combine_bin_level(c, bins[D * n + i], false);
    folded[i] = mcubes::combine_bin_level(c, bins[i], false);
    EXPECT_NEAR(folded[i], std::ldexp(bins[2 * D * n + i].to_double(), 80) + std::ldexp(bins[D * n + i].to_double(), 40) +
                               bins[i].to_double(), 1e-15 * folded[i]);
  }
  mcubes::adaptive_map<D> a(n), b(n);
  a.adapt(bins.data(), 1.5, 0.0, false, 2);
  b.adapt(folded, 1.5);
  EXPECT_EQ(a.edges(), b.edges());
  // m-Cubes1D: the rows are summed exactly per level, then folded.
  std::vector<double> sym(n);
  for (int k = 0; k < n; ++k) {
    double c = 0;
    for (int level = 2; level >= 0; --level) {
      mcubes::bin_accumulator s = bins[level * D * n + k];
      s.add(bins[level * D * n + n + k]);
      c = mcubes::combine_bin_level(c, s, level == 2);
    }
    sym[k] = c;
  }
  mcubes::adaptive_map<D> c1(n), c2(n);
  c1.adapt(bins.data(), 1.5, 0.0, true, 2);
  c2.adapt_symmetric(sym.data(), 1.5);
  EXPECT_EQ(c1.edges(), c2.edges());
  // Without levels: the same as before (level 0 only).
  mcubes::adaptive_map<D> d1(n), d2(n);
  d1.adapt(bins.data(), 1.5, 0.0, false);
  std::vector<double> level0(D * n);
  for (int i = 0; i < D * n; ++i) level0[i] = bins[i].to_double();
  d2.adapt(level0, 1.5);
  EXPECT_EQ(d1.edges(), d2.edges());
}

TEST(AdaptiveMap, TooFewBinsThrow) {
  EXPECT_THROW(mcubes::adaptive_map<2>(1), mcubes::invalid_input);
  EXPECT_THROW(mcubes::adaptive_map<2>(0), mcubes::invalid_input);
  EXPECT_THROW(mcubes::adaptive_map<2>(-5), mcubes::invalid_input);
  EXPECT_NO_THROW(mcubes::adaptive_map<2>(2));
}

}  // namespace

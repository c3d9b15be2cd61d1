// Error estimates that hold where the iterations' errors are themselves unreliable: integrands
// whose f J has a heavy tail (an integrable singularity) and indicator functions at small budgets,
// the classes where the inverse-variance weighted average of the iterations (Lepage 1978) is biased
// because an iteration's error falls with its estimate. Every run here has a fixed seed; a run
// that reports "converged" must lie within kSigmas reported errors of the exact value, and a run
// that does not converge must say why it cannot be trusted (result::warnings, or a chi2/dof above
// max_chi2_dof). The warnings' false-alarm side is tested on the m-Cubes suite
// (test_suite_cpu.cpp: no warning on any suite run).
//
// Cost: about 1.3e9 evaluations of cheap 1-D to 4-D integrands and 1.2e8 of Eq. (45) in 8-D
// (~30 CPU-seconds).

#include <gtest/gtest.h>

#include <mcubes/mcubes.hpp>
#include <mcubes/suite.hpp>

#include "support/eq45.hpp"

#include <cmath>
#include <cstdint>
#include <iostream>
#include <sstream>
#include <string>

namespace {

// Largest accepted |estimate - exact| of a converged run, in reported errors.
constexpr double kSigmas = 5.0;

// 1/sqrt(x) on (0, 1]: exact 2; f^2 is not integrable (infinite variance).
struct inverse_sqrt {
  double operator()(const mcubes::point<1>& x) const { return 1.0 / std::sqrt(x[0]); }
};
constexpr double kInverseSqrtExact = 2.0;

// The indicator of the ball |x - (1/2, 1/2, 1/2)| < 0.3 in [0, 1]^3: exact 4/3 pi 0.3^3.
struct ball_indicator {
  double operator()(const mcubes::point<3>& x) const {
    double s = 0;
    for (int i = 0; i < 3; ++i) s += (x[i] - 0.5) * (x[i] - 0.5);
    return s < 0.09 ? 1.0 : 0.0;
  }
};
const double kBallExact = 4.0 / 3.0 * M_PI * 0.027;

std::string describe(const mcubes::result& r, double exact) {
  std::ostringstream s;
  s.precision(10);
  s << "seed " << r.seed << ": " << mcubes::to_string(r.status) << ", estimate " << r.estimate << " +- " << r.error
    << " (pull " << (r.estimate - exact) / r.error << "; inverse-variance average " << r.inverse_variance_estimate
    << " +- " << r.inverse_variance_error << "), chi2/dof " << r.chi2_dof << ", " << r.iterations
    << " iterations, warnings " << r.warnings;
  return s.str();
}

// Runs seeds 1..n_seeds with `o` (seed replaced) and checks each run: converged within kSigmas, or
// not converged with a reason (a warning, or chi2/dof above max_chi2_dof).
template <int D, class F>
void expect_honest_runs(const F& f, double exact, mcubes::vegas_options o, int n_seeds, const char* name) {
  int converged = 0;
  for (int seed = 1; seed <= n_seeds; ++seed) {
    o.seed = static_cast<std::uint64_t>(seed);
    const mcubes::result r = mcubes::vegas<D>(f, mcubes::region<D>::unit(), o);
    std::cout << "  " << name << " " << describe(r, exact) << "\n";
    SCOPED_TRACE(describe(r, exact));
    ASSERT_TRUE(r.converged() || r.status == mcubes::status::not_converged);
    if (r.converged()) {
      ++converged;
      EXPECT_LE(std::fabs(r.estimate - exact), kSigmas * r.error) << "converged beyond " << kSigmas << " sigma";
    } else {
      EXPECT_TRUE(r.warnings != 0 || r.chi2_dof > o.max_chi2_dof) << "not converged, and nothing says why";
    }
  }
  std::cout << "  " << name << ": " << converged << " of " << n_seeds << " converged\n";
}

// The audit's case: 1/sqrt(x) at the default options, seeds 1-10. With the inverse-variance
// average, 4 of 10 converged 9.6 to 16.5 errors low (seed 6: 1.9999635 +- 2.2e-6).
TEST(ErrorHonesty, InverseSqrtAtTheDefaults) {
  expect_honest_runs<1>(inverse_sqrt{}, kInverseSqrtExact, mcubes::vegas_options{}, 10, "1/sqrt(x)");
}

// The audit's case: a 3-D ball indicator at 1e4 calls per iteration, seeds 1-20. With the
// inverse-variance average, 18 of 20 converged beyond 5 sigma, the average 7 errors low.
TEST(ErrorHonesty, BallIndicatorAtSmallBudget) {
  mcubes::vegas_options o;
  o.calls_per_iteration = 10000;
  expect_honest_runs<3>(ball_indicator{}, kBallExact, o, 20, "ball");
}

// A discontinuity at modest budgets (m-Cubes' f6, exp(sum (i+4) x_i) cut at x_i = (3+i)/10): the
// increments next to the cut used to swallow the region where f = 0 and keep a sliver where f is
// largest, a rare sample there weighing hundreds of times more than the others; the iterations that
// missed it converged low. Without the map's defensive floor (options.hpp, vegas_plus_map_floor)
// seeds 7 and 36 of the 3-D runs converged 7.3 and 6.5 errors low and seed 17 of the 4-D runs 6.1
// (over 200 seeds: 16 of 800 runs beyond 4 errors; 11 with the uniform stratification). With the
// floor on the starved increments only (core/adaptive_map.hpp), none of the 800, worst 3.5 errors.
TEST(ErrorHonesty, DiscontinuityAtModestBudgets) {
  mcubes::vegas_options o;
  o.calls_per_iteration = 100000;
  expect_honest_runs<3>(mcubes::suite::f6_discontinuous{}, mcubes::suite::exact_f6(3), o, 40, "f6 3-D");
  o.calls_per_iteration = 200000;
  expect_honest_runs<4>(mcubes::suite::f6_discontinuous{}, mcubes::suite::exact_f6(4), o, 40, "f6 4-D");
}

// Lepage's Eq. (45) (three Gaussians on the diagonal of [0,1]^8, support/eq45.hpp) at the default
// options (VEGAS+, 1e6 calls): with the map damped at m-Cubes' alpha 1.5 the map swung from one
// iteration to the next, and seeds 1-4 ran their 100 iterations without converging (5-8 converged
// after 42-67); with VEGAS+'s own alpha 1.0 (options.hpp, adaptive_default_alpha) seeds 1-8 converge
// after 26-38 iterations within 1.6 errors. Here: seeds 1-4 converge, within 4 errors, in at most
// 60 iterations.
TEST(ErrorHonesty, Eq45ConvergesAtTheDefaults) {
  const double exact = mcubes_test::exact_eq45();
  for (const std::uint64_t seed : {1, 2, 3, 4}) {
    mcubes::vegas_options o;
    o.seed = seed;
    const mcubes::result r = mcubes::vegas<8>(mcubes_test::lepage_eq45{}, mcubes::region<8>::unit(), o);
    std::cout << "  Eq. (45) " << describe(r, exact) << "\n";
    SCOPED_TRACE(describe(r, exact));
    EXPECT_TRUE(r.converged());
    EXPECT_LE(r.iterations, 60);
    EXPECT_LE(std::fabs(r.estimate - exact), 4 * r.error);
  }
}

// Where the inverse-variance average is biased, the warning says so: the ball at 1e4 calls (the
// iterations' errors fall with their estimates), over a run that does not stop early.
TEST(ErrorHonesty, WeightedDisagreementOnTheBall) {
  mcubes::vegas_options o;
  o.calls_per_iteration = 10000;
  o.rel_tol = 1e-9;  // never met: all 100 iterations
  o.seed = 3;
  // the m-Cubes grid: there the iterations' errors fall with their estimates (VEGAS+, the default,
  // spreads the ball's boundary samples so that its inverse-variance average is within 4 sigma here)
  o.stratification = mcubes::stratification_mode::uniform;
  const mcubes::result r = mcubes::vegas<3>(ball_indicator{}, mcubes::region<3>::unit(), o);
  SCOPED_TRACE(describe(r, kBallExact));
  EXPECT_TRUE(r.has_warning(mcubes::warning_weighted_disagreement));
  EXPECT_LE(std::fabs(r.estimate - kBallExact), kSigmas * r.error);
  // the bias the warning names: the inverse-variance average is far off
  EXPECT_GT(std::fabs(r.inverse_variance_estimate - kBallExact), kSigmas * r.inverse_variance_error);
}

// The heavy-tail test on a frozen map: 1/sqrt(x) with 5 adapting iterations then 25 on the frozen
// map meets error jumps far above 3x; the smooth f1 (3-D oscillatory) with the same schedule does not.
// (A peaked integrand whose map is not adapted yet is heavy-tailed in earnest: f4 at 1e5 calls after 5
// adapting iterations raises it.)
TEST(ErrorHonesty, HeavyTailOnAFrozenMap) {
  mcubes::vegas_options o;
  o.rel_tol = 1e-12;  // never met
  o.max_iterations = 30;
  o.adapt_iterations = 5;
  o.calls_per_iteration = 100000;
  {  // VEGAS+ (the default) gives the singular sub-cube its samples: honest, no jump to warn of
    const mcubes::result plus = mcubes::vegas<1>(inverse_sqrt{}, mcubes::region<1>::unit(), o);
    SCOPED_TRACE(describe(plus, kInverseSqrtExact));
    EXPECT_LE(std::fabs(plus.estimate - kInverseSqrtExact), kSigmas * plus.error);
  }
  o.stratification = mcubes::stratification_mode::uniform;  // the m-Cubes grid meets the heavy tail
  const mcubes::result singular = mcubes::vegas<1>(inverse_sqrt{}, mcubes::region<1>::unit(), o);
  SCOPED_TRACE(describe(singular, kInverseSqrtExact));
  EXPECT_TRUE(singular.has_warning(mcubes::warning_heavy_tail));
  const mcubes::result smooth = mcubes::vegas<3>(mcubes::suite::f1_oscillatory{}, mcubes::region<3>::unit(), o);
  SCOPED_TRACE(describe(smooth, mcubes::suite::exact_f1(3)));
  EXPECT_EQ(smooth.warnings, 0u);
}

}  // namespace

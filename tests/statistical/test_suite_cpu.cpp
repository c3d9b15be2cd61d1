// Every integrand of the suite (mcubes/suite.hpp) integrated with mcubes::vegas on the CPU, at the
// paper's settings (the reference m-Cubes code, table 1; mcubes::suite::entries()) scaled down where CI
// time requires, with rel_tol 1e-3 and three fixed seeds each. Every run must end with the status
// the settings allow (converged, except fA: see below) and an estimate within kSigmas reported
// standard deviations of the exact value.
//
// Cost: about 6e8 integrand evaluations in all (fB: 2.2e8), well under a CPU-minute: under a minute
// of wall time on the idle 2-core build machine, ~2 minutes while other jobs share it. Each test (one
// integrand, three seeds) has a ctest TIMEOUT (tests/CMakeLists.txt).

#include <gtest/gtest.h>

#include <mcubes/mcubes.hpp>
#include <mcubes/suite.hpp>

#include <cmath>
#include <cstdint>
#include <iostream>
#include <sstream>
#include <string>

namespace {

namespace suite = mcubes::suite;

// Largest accepted |estimate - exact| in units of the reported standard deviation. With 8
// integrands x 3 seeds, a correct error estimate exceeds 4 sigma with probability ~1.5e-3 in all.
constexpr double kSigmas = 4.0;
// Relative tolerance asked of every run (the paper's table 1 runs ask 1e-3).
constexpr double kRelTol = 1e-3;
// The fixed seeds: each integrand is run once per seed.
constexpr std::uint64_t kSeeds[] = {1, 20211231, 987654321};

// Settings of one CI run: calls per iteration, max iterations, adapting iterations, skip.
struct ci_settings {
  std::uint64_t calls;
  int max_iterations;
  int adapt_iterations;
  int skip;
};

ci_settings paper_settings(const char* name) {
  const suite::entry* e = suite::find(name);
  return {e->paper.calls, e->paper.max_iterations, e->paper.adapt_iterations, e->paper.skip};
}

template <int D, class F>
mcubes::result run(const F& f, const char* name, const ci_settings& s, std::uint64_t seed) {
  const suite::entry* e = suite::find(name);
  mcubes::vegas_options o;
  o.rel_tol = kRelTol;
  o.calls_per_iteration = s.calls;
  o.max_iterations = s.max_iterations;
  o.adapt_iterations = s.adapt_iterations;
  o.skip = s.skip;
  o.seed = seed;
  return mcubes::vegas<D>(f, mcubes::region<D>::cube(e->lower, e->upper), o);
}

std::string describe(const mcubes::result& r, double exact) {
  std::ostringstream s;
  s.precision(10);
  s << "status " << mcubes::to_string(r.status) << ", estimate " << r.estimate << " +- " << r.error << " (exact "
    << exact << ", pull " << (r.estimate - exact) / r.error << "), chi2/dof " << r.chi2_dof << ", " << r.iterations
    << " iterations, " << r.n_eval << " evaluations, seed " << r.seed << ", warnings " << r.warnings;
  return s.str();
}

::testing::AssertionResult within_sigmas(const mcubes::result& r, double exact, double sigmas) {
  if (r.error > 0 && std::isfinite(r.error) && std::fabs(r.estimate - exact) <= sigmas * r.error)
    return ::testing::AssertionSuccess();
  return ::testing::AssertionFailure() << "more than " << sigmas << " sigma off: " << describe(r, exact);
}

// Runs the three seeds and asserts convergence and agreement with the exact value (within
// `sigmas` reported standard deviations).
template <int D, class F>
void expect_converged_runs(const F& f, const char* name, const ci_settings& s, double sigmas = kSigmas) {
  const double exact = suite::find(name)->exact(D);
  for (const std::uint64_t seed : kSeeds) {
    const mcubes::result r = run<D>(f, name, s, seed);
    std::cout << "  " << name << " " << D << "-D: " << describe(r, exact) << "\n";
    SCOPED_TRACE(describe(r, exact));
    EXPECT_EQ(r.status, mcubes::status::converged);
    EXPECT_LE(r.error, kRelTol * std::fabs(r.estimate));
    EXPECT_TRUE(within_sigmas(r, exact, sigmas));
    EXPECT_EQ(r.warnings, 0u) << "a warning on the suite is a false alarm (result.hpp: warning)";
  }
}

// f1 is not in the paper's table; its suite settings (1e6 calls, 100, 20, 5) at d = 3.
TEST(SuiteCpu, F1Oscillatory3D) { expect_converged_runs<3>(suite::f1_oscillatory{}, "f1", paper_settings("f1")); }

// Paper: 1e7 calls, 100, 40, 10. CI: 1e6 calls per iteration, which still converges (to ~2e-5).
TEST(SuiteCpu, F2ProductPeak6D) { expect_converged_runs<6>(suite::f2_product_peak{}, "f2", {1000000, 100, 40, 10}); }

// Paper: 1e7 calls, 100, 20, 0. CI: 1e6 calls per iteration (converges in 5 iterations to ~5e-6).
TEST(SuiteCpu, F3CornerPeak3D) { expect_converged_runs<3>(suite::f3_corner_peak{}, "f3", {1000000, 100, 20, 0}); }

// Paper settings: 1e6 calls, 100, 20, 5.
TEST(SuiteCpu, F4Gaussian8D) { expect_converged_runs<8>(suite::f4_gaussian{}, "f4", paper_settings("f4")); }

// Paper settings: 1e6 calls, 100, 20, 5.
TEST(SuiteCpu, F5C08D) { expect_converged_runs<8>(suite::f5_c0{}, "f5", paper_settings("f5")); }

// VEGAS+ (the default) against the uniform grid on integrands whose map can be near perfect
// (products of one peak per axis): with 1e5 calls per iteration over 25 iterations (the default 20
// adapting, 5 skipped), seeds 1-3, the error VEGAS+ reports is at most 1.25 times the uniform
// grid's for f2 6-D and f5 8-D (measured 0.91-0.92 and 0.99-1.01) and 1.75 times for f4 8-D
// (1.27-1.35: fewer sub-cubes, g = 4 against 5, and its Gaussian tails starve). The map's
// defensive floor on every bin (before the starved-bins rule, core/adaptive_map.hpp) gave 7.1-7.4,
// 6.1-6.3 and 2.1-2.6 over 15 iterations: a variance of about D eps per sample whatever the map.
// (Over 15 iterations VEGAS+'s map, damped at alpha 1.0 against the uniform grid's 1.5, is a few
// iterations behind: 1.25-1.30, 1.24-1.29, 1.38-1.54; bench/results/2026-12-01-vegas-plus-alpha.md.)
// Errors, not times: the same calls and iterations on either side.
template <int D, class F>
void expect_vegas_plus_error_within(const F& f, const char* name, double max_ratio) {
  for (const std::uint64_t seed : {1, 2, 3}) {
    mcubes::vegas_options o;
    o.calls_per_iteration = 100000;
    o.max_iterations = 25;
    o.rel_tol = 1e-14;  // never reached: every run makes its 25 iterations
    o.seed = seed;
    const mcubes::result plus = mcubes::vegas<D>(f, mcubes::region<D>::unit(), o);
    o.stratification = mcubes::stratification_mode::uniform;
    const mcubes::result grid = mcubes::vegas<D>(f, mcubes::region<D>::unit(), o);
    const double exact = suite::find(name)->exact(D);
    std::cout << "  " << name << " " << D << "-D seed " << seed << ": VEGAS+ " << plus.error << ", uniform " << grid.error
              << ", ratio " << plus.error / grid.error << "\n";
    EXPECT_EQ(plus.iterations, 25);
    EXPECT_EQ(grid.iterations, 25);
    EXPECT_LE(plus.error, max_ratio * grid.error) << name << " seed " << seed;
    EXPECT_TRUE(within_sigmas(plus, exact, kSigmas));
    EXPECT_TRUE(within_sigmas(grid, exact, kSigmas));
  }
}

TEST(SuiteCpu, VegasPlusErrorNearTheUniformGridsOnSeparablePeaks) {
  expect_vegas_plus_error_within<6>(suite::f2_product_peak{}, "f2", 1.25);
  expect_vegas_plus_error_within<8>(suite::f5_c0{}, "f5", 1.25);
  expect_vegas_plus_error_within<8>(suite::f4_gaussian{}, "f4", 1.75);
}

// Paper: 1e7 calls, 100, 20, 5. CI: 2e6 calls per iteration. The discontinuity gives heavy-tailed
// iteration estimates, and Vegas's error understates the true spread: measured over 60 seeds at
// these settings, the pulls have an rms of 1.5 (one beyond 4, largest 7.4); over 30 seeds at the
// paper's 1e7 calls, an rms of 1.4 (one beyond 4). So 5 sigma here, not 4.
TEST(SuiteCpu, F6Discontinuous6D) {
  expect_converged_runs<6>(suite::f6_discontinuous{}, "f6", {2000000, 100, 20, 5}, 5.0);
}

// fB, paper: 1e8 calls, 15 iterations, 10 adapting, skip 10. CI: 3e6 calls per iteration. At
// fewer calls the first iterations meet only the far tail of the peak (values ~1e-100 to 1e-220),
// and the map takes 7-12 adapting iterations to close in on it, a few more to settle (with the
// uniform strategy at 1e7 calls, 10 adapting iterations and skip 10, seed 1 ends not converged at
// 0.984 +- 0.006 after 15). So: 20 adapting iterations, all skipped, then non-adapting ones. With
// VEGAS+ (the default) at 3e6 calls, seeds 1-9 and the two below converged at iteration 23-30
// (7e7-8.4e7 evaluations, 7-9 s each on the 2-core build machine), |pull| at most 2.1, with the map's
// floor on every increment; with the floor on the starved increments only (core/adaptive_map.hpp)
// the three seeds here converge at iteration 25 (6.8e7-7e7 evaluations), |pull| at most 2.7.
// With VEGAS+'s map damped at alpha 1.0 (options.hpp, adaptive_default_alpha), seeds 1-8 and
// 20211231 at at most 50 iterations: 25 iterations for seven, 39 (20211231: chi2/dof above 2 at
// 30) and 41 (seed 7), all converged, |pull| at most 1.9; with 1.5, seven at 25-27, 20211231 at 25,
// seed 7 not converged at 50 (bench/results/2026-12-01-vegas-plus-alpha.md). Hence at most 45.
TEST(SuiteCpu, FBNarrowGaussian9D) {
  expect_converged_runs<9>(suite::fB_narrow_gaussian{}, "fB", {3000000, 45, 20, 20});
}

// fA, paper: 2e9 calls per iteration, 10 iterations, no adaptation, skip 0; even there the
// reference does not converge to 1e-3 (the reference m-Cubes code: 1.5e-3 after 1.8e10 evaluations; the paper's
// table 1 reports -49.27 +- 1.20). sin(sum x) over (0,10)^6 is large (|f| ~ 1 on a volume of 1e6)
// against its integral (-49), and only stratification helps: the error falls as N^-(1/2+1/d).
// With 2e6 calls per iteration (2e7 evaluations, 1/900 of the reference's) the error is ~1e2, so
// convergence is impossible in CI time. Asserted instead, honestly: the run ends not converged after
// all 10 iterations, each of them accumulated, and its error estimate covers the exact value.
TEST(SuiteCpu, FASinSum6DNotConvergedButCovered) {
  const ci_settings s{2000000, 10, 0, 0};
  const double exact = suite::exact_fA();
  for (const std::uint64_t seed : kSeeds) {
    const mcubes::result r = run<6>(suite::fA_sin_sum{}, "fA", s, seed);
    std::cout << "  fA 6-D: " << describe(r, exact) << "\n";
    SCOPED_TRACE(describe(r, exact));
    EXPECT_EQ(r.status, mcubes::status::not_converged);
    EXPECT_EQ(r.iterations, s.max_iterations);
    EXPECT_EQ(r.accumulated, s.max_iterations);
    EXPECT_TRUE(within_sigmas(r, exact, kSigmas));
  }
}

// Regression test for a core bug found with fB (fixed). At 4e6
// calls per iteration the first iteration of fB meets only values ~1e-170, whose squares underflow:
// the map never adapts and every iteration's estimate is ~1e-200 with variance 0. running_average
// floors each variance at DBL_MIN, so the weights 1/DBL_MIN ~ 4.5e307 overflow to inf once four
// iterations are summed: mean = 0, sdev = 0, and vegas reports `converged` with estimate 0 +- 0
// (exact 1), because sdev 0 <= rel_tol * |0|. Honest behaviour: such a run is not converged (or not
// resolved); a converged run must cover the exact value.
TEST(SuiteCpu, FBPeakNotFoundIsNeverConverged) {
  const ci_settings s{4000000, 15, 10, 10};
  const double exact = suite::exact_fB();
  for (const std::uint64_t seed : kSeeds) {
    const mcubes::result r = run<9>(suite::fB_narrow_gaussian{}, "fB", s, seed);
    SCOPED_TRACE(describe(r, exact));
    EXPECT_GT(r.error, 0.0);
    if (r.status == mcubes::status::converged) {
      EXPECT_TRUE(within_sigmas(r, exact, kSigmas));
    }
  }
}

}  // namespace

// The method and integrator tests of method_tests.hpp on the CUDA backend (blocks of 64 and 512
// threads; skipped without a device), and what only the GPU has: two integrators on two streams of
// one device, run concurrently from two host threads, give their solo bits.
#include <mcubes/cuda.cuh>

#include <thread>

#include "support/cuda.hpp"
#include "method_tests.hpp"

namespace {
const mcubes_methods::settings gpu{mcubes::backend_kind::cuda, 0, 0, 64, 512};
}

TEST(MethodsCuda, VegasF4InDimensions1And32) {
  MCUBES_REQUIRE_DEVICE();
  mcubes_methods::vegas_f4_dimensions(gpu);
}
TEST(MethodsCuda, IntegratorTrainThenMeasureIsVegas) {
  MCUBES_REQUIRE_DEVICE();
  mcubes_methods::integrator_train_then_measure_is_vegas(gpu);
}
TEST(MethodsCuda, IntegratorMapSaveLoadRoundTrips) {
  MCUBES_REQUIRE_DEVICE();
  mcubes_methods::integrator_map_save_load(gpu, ::testing::TempDir());
}
TEST(MethodsCuda, VegasPlusFindsThePeaksOffTheGrid) {
  MCUBES_REQUIRE_DEVICE();
  mcubes_methods::vegas_plus_finds_the_peaks_off_the_grid(gpu);
}
TEST(MethodsCuda, VegasPlusWithinAndBitwise) {
  MCUBES_REQUIRE_DEVICE();
  mcubes_methods::vegas_plus_within_and_bitwise(gpu);
}
TEST(MethodsCuda, DefaultAlphaFollowsTheStratification) {
  MCUBES_REQUIRE_DEVICE();
  mcubes_methods::default_alpha_follows_the_stratification(gpu);
}
TEST(MethodsCuda, SmallBudgetHonest) {
  MCUBES_REQUIRE_DEVICE();
  mcubes_methods::small_budget_honest(gpu);
}
TEST(MethodsCuda, PlainMcWithinAndBitwise) {
  MCUBES_REQUIRE_DEVICE();
  mcubes_methods::plain_mc_within_and_bitwise(gpu);
}
TEST(MethodsCuda, MidpointWithinAndBitwise) {
  MCUBES_REQUIRE_DEVICE();
  mcubes_methods::midpoint_within_and_bitwise(gpu);
}
TEST(MethodsCuda, PiSameHits) {
  MCUBES_REQUIRE_DEVICE();
  mcubes_methods::pi_same_hits(gpu);
}

TEST(MethodsCuda, TwoIntegratorsOnTwoStreamsGiveTheirSoloBits) {
  MCUBES_REQUIRE_DEVICE();
  mcubes::vegas_options o = mcubes_methods::small_vegas(2000000);
  o.backend = mcubes::backend_kind::cuda;
  const auto r4 = mcubes::region<4>::unit();
  const auto r6 = mcubes::region<6>::unit();
  mcubes::integrator<4> solo_a(r4, o);
  mcubes::integrator<6> solo_b(r6, o);
  const mcubes::result a = solo_a.integrate(mcubes::suite::f4_gaussian{});
  const mcubes::result b = solo_b.integrate(mcubes::suite::f2_product_peak{});
  mcubes::integrator<4> ia(r4, o);
  mcubes::integrator<6> ib(r6, o);
  mcubes::result ra, rb;
  std::thread ta([&] { ra = ia.integrate(mcubes::suite::f4_gaussian{}); });
  std::thread tb([&] { rb = ib.integrate(mcubes::suite::f2_product_peak{}); });
  ta.join();
  tb.join();
  mcubes_methods::expect_same_result(ra, a, "f4 4-D beside f2 6-D");
  mcubes_methods::expect_same_result(rb, b, "f2 6-D beside f4 4-D");
}

TEST(MethodsCuda, PlainMcSuiteWithinFourSigma) {
  MCUBES_REQUIRE_DEVICE();
  mcubes_methods::plain_mc_suite_within(gpu, 100000000);
}

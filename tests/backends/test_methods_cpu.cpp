// The method and integrator tests of method_tests.hpp on the CPU backend (1 and 2 threads).
#include <mcubes/mcubes.hpp>

#include "method_tests.hpp"

namespace {
const mcubes_methods::settings cpu{mcubes::backend_kind::cpu, 1, 2, 256, 256};
}

TEST(MethodsCpu, VegasF4InDimensions1And32) { mcubes_methods::vegas_f4_dimensions(cpu); }
TEST(MethodsCpu, IntegratorTrainThenMeasureIsVegas) { mcubes_methods::integrator_train_then_measure_is_vegas(cpu); }
TEST(MethodsCpu, IntegratorMapSaveLoadRoundTrips) {
  mcubes_methods::integrator_map_save_load(cpu, ::testing::TempDir());
}
TEST(MethodsCpu, VegasPlusFindsThePeaksOffTheGrid) { mcubes_methods::vegas_plus_finds_the_peaks_off_the_grid(cpu); }
TEST(MethodsCpu, VegasPlusWithinAndBitwise) { mcubes_methods::vegas_plus_within_and_bitwise(cpu); }
TEST(MethodsCpu, DefaultAlphaFollowsTheStratification) { mcubes_methods::default_alpha_follows_the_stratification(cpu); }
TEST(MethodsCpu, SmallBudgetHonest) { mcubes_methods::small_budget_honest(cpu); }
TEST(MethodsCpu, PlainMcWithinAndBitwise) { mcubes_methods::plain_mc_within_and_bitwise(cpu); }
TEST(MethodsCpu, MidpointWithinAndBitwise) { mcubes_methods::midpoint_within_and_bitwise(cpu); }
TEST(MethodsCpu, PiSameHits) { mcubes_methods::pi_same_hits(cpu); }

TEST(MethodsCpu, PlainMcSuiteWithinFourSigma) {
  mcubes_methods::plain_mc_suite_within(cpu, 2000000);
}

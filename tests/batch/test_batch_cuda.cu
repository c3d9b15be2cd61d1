// Parameter batches on the CUDA backend (tests/batch/batch_tests.hpp; skipped without a device):
// result k bitwise the single CUDA run with its derived seed (batch with blocks of 64 threads,
// single runs with 512), independence of the other members, accuracy, failures, stopping.
#include <mcubes/cuda.cuh>

#include "support/cuda.hpp"
#include "batch/batch_tests.hpp"

namespace {

mcubes::execution gpu(int block) {
  mcubes::execution ex;
  ex.backend = mcubes::backend_kind::cuda;
  ex.cuda_threads_per_block = block;
  return ex;
}

}  // namespace

TEST(BatchCuda, ResultKIsTheSingleRunWithItsDerivedSeed) {
  MCUBES_REQUIRE_DEVICE();
  batch_tests::contract_holds(gpu(64), gpu(512));
  batch_tests::contract_holds(gpu(1024), gpu(32));
}
TEST(BatchCuda, MembersReachingTheOverflowLevelsAreTheirSingleRuns) {
  MCUBES_REQUIRE_DEVICE();
  batch_tests::overflow_levels_are_single_runs(gpu(256), gpu(128));
}
TEST(BatchCuda, ResultKDoesNotDependOnTheOtherMembers) {
  MCUBES_REQUIRE_DEVICE();
  batch_tests::independent_of_other_members(gpu(256));
}
TEST(BatchCuda, EveryMemberWithinFourSigma) {
  MCUBES_REQUIRE_DEVICE();
  batch_tests::accurate_with_regions(gpu(256));
}
TEST(BatchCuda, FailureNamesTheIntegral) {
  MCUBES_REQUIRE_DEVICE();
  batch_tests::failure_names_the_integral(gpu(128));
}
TEST(BatchCuda, StopInterruptsEveryMember) {
  MCUBES_REQUIRE_DEVICE();
  batch_tests::stop_interrupts_every_member(gpu(256));
}
TEST(BatchCuda, ManyMembersAreTheirSingleRuns) {
  MCUBES_REQUIRE_DEVICE();
  batch_tests::many_members(gpu(256));
}
TEST(BatchCuda, LargeBatchInTwoLanesFailureAndStop) {
  MCUBES_REQUIRE_DEVICE();
  batch_tests::large_batch_failure_and_stop(gpu(256));
}
TEST(BatchCuda, BadSizes) {
  MCUBES_REQUIRE_DEVICE();
  batch_tests::bad_sizes(gpu(256));
}

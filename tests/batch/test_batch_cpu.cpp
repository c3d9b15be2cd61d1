// Parameter batches on the CPU backend (tests/batch/batch_tests.hpp): the determinism contract
// against single runs on another thread count, independence of the other members, accuracy,
// failures, stopping, bad sizes; and the derived seeds against Random123 directly.

#include <Random123/philox.h>

#include "batch/batch_tests.hpp"

namespace {

mcubes::execution cpu(int threads) {
  mcubes::execution ex;
  ex.backend = mcubes::backend_kind::cpu;
  ex.threads = threads;
  return ex;
}

TEST(BatchCpu, ResultKIsTheSingleRunWithItsDerivedSeed) {
  batch_tests::contract_holds(cpu(3), cpu(1));
  batch_tests::contract_holds(cpu(1), cpu(4));
}
TEST(BatchCpu, MembersReachingTheOverflowLevelsAreTheirSingleRuns) {
  batch_tests::overflow_levels_are_single_runs(cpu(2), cpu(1));
}
TEST(BatchCpu, ResultKDoesNotDependOnTheOtherMembers) { batch_tests::independent_of_other_members(cpu(2)); }
TEST(BatchCpu, EveryMemberWithinFourSigma) { batch_tests::accurate_with_regions(cpu(0)); }
TEST(BatchCpu, FailureNamesTheIntegral) { batch_tests::failure_names_the_integral(cpu(2)); }
TEST(BatchCpu, WithFailuresAFailingMemberLeavesTheBatch) { batch_tests::failures_leave_the_batch(cpu(2)); }
TEST(BatchCpu, StopInterruptsEveryMember) { batch_tests::stop_interrupts_every_member(cpu(2)); }
TEST(BatchCpu, ManyMembersAreTheirSingleRuns) { batch_tests::many_members(cpu(2)); }
TEST(BatchCpu, LargeBatchFailureAndStop) { batch_tests::large_batch_failure_and_stop(cpu(2)); }
TEST(BatchCpu, BadSizes) { batch_tests::bad_sizes(cpu(1)); }

TEST(BatchSeed, IsPhiloxOfTheIndexUnderTheBatchKey) {
  for (std::uint64_t seed : {0ull, 20211231ull, 0xFFFFFFFFFFFFFFFFull})
    for (std::uint64_t k : {0ull, 1ull, 1023ull, 0x123456789ull}) {
      r123::Philox4x32 philox;
      const r123::Philox4x32::key_type key = {
          {static_cast<std::uint32_t>(seed), static_cast<std::uint32_t>(seed >> 32) ^ (5u << 24)}};
      const r123::Philox4x32::ctr_type ctr = {{static_cast<std::uint32_t>(k), static_cast<std::uint32_t>(k >> 32), 0, 0}};
      const auto w = philox(ctr, key);
      EXPECT_EQ(mcubes::batch_seed(seed, k), w.v[0] | (static_cast<std::uint64_t>(w.v[1]) << 32)) << seed << " " << k;
    }
  EXPECT_NE(mcubes::batch_seed(1, 0), mcubes::batch_seed(1, 1));
  EXPECT_NE(mcubes::batch_seed(1, 0), mcubes::batch_seed(2, 0));
}

}  // namespace

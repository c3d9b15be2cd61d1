// Parameter batches on the CUDA backend (tests/batch/batch_tests.hpp; skipped without a device):
// result k bitwise the single CUDA run with its derived seed (batch with blocks of 64 threads,
// single runs with 512), independence of the other members, accuracy, failures, stopping.
#include <mcubes/cuda.cuh>

#include "support/cuda.hpp"
#include "batch/batch_tests.hpp"

namespace {

mcubes::execution cuda_execution(int block) {
  mcubes::execution ex;
  ex.backend = mcubes::backend_kind::cuda;
  ex.cuda_threads_per_block = block;
  return ex;
}

}  // namespace

TEST(BatchCuda, ResultKIsTheSingleRunWithItsDerivedSeed) {
  MCUBES_REQUIRE_DEVICE();
  batch_tests::contract_holds(cuda_execution(64), cuda_execution(512));
  batch_tests::contract_holds(cuda_execution(1024), cuda_execution(32));
}
// The uniform strategy's passes run the kernels without per-cube branches (uniform_counts,
// core/sampler.hpp): a batch's (v_sample_batch_kernel) against single runs' (v_sample_kernel).
TEST(BatchCuda, UniformResultKIsTheSingleRunWithItsDerivedSeed) {
  MCUBES_REQUIRE_DEVICE();
  batch_tests::contract_holds(cuda_execution(64), cuda_execution(512), mcubes::stratification_mode::uniform);
}
TEST(BatchCuda, MembersReachingTheOverflowLevelsAreTheirSingleRuns) {
  MCUBES_REQUIRE_DEVICE();
  batch_tests::overflow_levels_are_single_runs(cuda_execution(256), cuda_execution(128));
}
TEST(BatchCuda, ResultKDoesNotDependOnTheOtherMembers) {
  MCUBES_REQUIRE_DEVICE();
  batch_tests::independent_of_other_members(cuda_execution(256));
}
TEST(BatchCuda, EveryMemberWithinFourSigma) {
  MCUBES_REQUIRE_DEVICE();
  batch_tests::accurate_with_regions(cuda_execution(256));
}
TEST(BatchCuda, FailureNamesTheIntegral) {
  MCUBES_REQUIRE_DEVICE();
  batch_tests::failure_names_the_integral(cuda_execution(128));
}
TEST(BatchCuda, StopInterruptsEveryMember) {
  MCUBES_REQUIRE_DEVICE();
  batch_tests::stop_interrupts_every_member(cuda_execution(256));
}
TEST(BatchCuda, ManyMembersAreTheirSingleRuns) {
  MCUBES_REQUIRE_DEVICE();
  batch_tests::many_members(cuda_execution(256));
}
TEST(BatchCuda, LargeBatchInTwoLanesFailureAndStop) {
  MCUBES_REQUIRE_DEVICE();
  batch_tests::large_batch_failure_and_stop(cuda_execution(256));
}
// VEGAS+ sub-cubes of more samples than a segment, in the passes of a batch, are sampled by
// segments over the whole round (backend/cuda/batch_heavy_cubes.cuh): every member is bitwise its
// single run on the CPU (the serial pass) and on the GPU with another block size; the batch has them.
struct rational_peak_params {
  double centre, eps;
};
struct rational_peaks4 {  // 1 / (eps + |x - c|^2): sharp peaks off the grid, +, -, *, / only
  __host__ __device__ double operator()(const mcubes::point<4>& x, const rational_peak_params& p) const {
    double r2 = p.eps;
    for (int i = 0; i < 4; ++i) r2 += (x[i] - p.centre) * (x[i] - p.centre);
    return 1.0 / r2;
  }
};

TEST(BatchCuda, VegasPlusHeavySubCubesOfEveryMemberAreTheirSingleRuns) {
  MCUBES_REQUIRE_DEVICE();
  mcubes::vegas_options o;
  o.calls_per_iteration = 200000;
  o.max_iterations = 8;
  o.adapt_iterations = 5;
  o.skip = 2;
  o.min_iterations = 6;
  o.rel_tol = 1e-12;  // every iteration
  o.seed = 2029;
  ASSERT_EQ(o.stratification, mcubes::stratification_mode::adaptive);
  const std::vector<rational_peak_params> ps = {{0.37, 1e-4}, {0.61, 3e-4}, {0.5, 1e-1}, {0.23, 1e-3}, {0.8, 2e-4}};
  const std::vector<mcubes::region<4>> regions(ps.size(), mcubes::region<4>::unit());
  mcubes::cuda_launch_policy policy;
  policy.threads_per_block = 32;
  mcubes::cuda_backend gpu32(policy);
  const std::vector<mcubes::result> rs = mcubes::vegas_batch_with<4>(rational_peaks4{}, regions, ps, o, gpu32);
  EXPECT_GT(gpu32.heavy_cubes_sampled(), 0u) << "no sub-cube exceeded a segment: the test does not reach the heavy path";
  ASSERT_EQ(rs.size(), ps.size());
  for (std::size_t k = 0; k < ps.size(); ++k) {
    const mcubes::with_parameters<rational_peaks4, rational_peak_params> g{rational_peaks4{}, ps[k]};
    mcubes::vegas_options solo = o;
    solo.seed = mcubes::batch_seed(o.seed, k);
    solo.backend = mcubes::backend_kind::cuda;
    solo.cuda_threads_per_block = 1024;
    batch_tests::expect_identical(rs[k], mcubes::vegas<4>(g, regions[k], solo), "GPU, integral " + std::to_string(k));
    solo.backend = mcubes::backend_kind::cpu;
    solo.threads = 3;
    batch_tests::expect_identical(rs[k], mcubes::vegas<4>(g, regions[k], solo), "CPU, integral " + std::to_string(k));
  }
  // the heavy threshold at the average count (cuda_launch_policy::batch_heavy_above_average = 1):
  // more sub-cubes of every member sampled ahead, the same bits
  policy.batch_heavy_above_average = 1.0;
  mcubes::cuda_backend gpu_low(policy);
  const std::vector<mcubes::result> low = mcubes::vegas_batch_with<4>(rational_peaks4{}, regions, ps, o, gpu_low);
  ASSERT_EQ(low.size(), ps.size());
  for (std::size_t k = 0; k < ps.size(); ++k)
    batch_tests::expect_identical(low[k], rs[k], "heavy_above_average 1, integral " + std::to_string(k));
}
TEST(BatchCuda, BadSizes) {
  MCUBES_REQUIRE_DEVICE();
  batch_tests::bad_sizes(cuda_execution(256));
}

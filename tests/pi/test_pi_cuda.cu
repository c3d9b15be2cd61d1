// Monte Carlo pi and the midpoint rule on the GPU (algorithm/pi.hpp, algorithm/midpoint.hpp on the CUDA backend):
// hit counts bitwise identical for every block size and equal to the CPU's, the 5-sigma bound, the
// midpoint errors, error estimates and status (equal to the CPU's to rounding) and block-size
// invariance. Skips (GTEST_SKIP) when no CUDA device is present;
// the no-device behaviour itself is tested then.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>

#include <mcubes/cuda.cuh>
#include <mcubes/backend/cuda/check.cuh>

#include "support/cuda.hpp"

namespace {

constexpr double pi_value = 3.141592653589793238462643383279502884;
constexpr double max_pull = 5.0;
constexpr int block_sizes[] = {32, 64, 128, 256, 512, 1024};

using mcubes_test::bits;
using mcubes_test::has_device;

TEST(PiCuda, WithoutADeviceCudaFailsAndAutoFallsBack) {
  if (has_device()) GTEST_SKIP() << "a CUDA device is present: the no-device path is not reachable";
  mcubes::pi_options o;
  o.samples = 1000;
  o.backend = mcubes::backend_kind::cuda;
  EXPECT_THROW(mcubes::pi_monte_carlo(o), mcubes::cuda_error);
  o.backend = mcubes::backend_kind::automatic;
  EXPECT_EQ(mcubes::pi_monte_carlo(o).backend, "cpu");
  mcubes::midpoint_options m;
  m.backend = mcubes::backend_kind::cuda;
  EXPECT_THROW(mcubes::pi_midpoint(1000, m), mcubes::cuda_error);
}

TEST(PiCuda, HitsIdenticalForEveryBlockSizeAndEqualToTheCpu) {
  MCUBES_REQUIRE_DEVICE();
  mcubes::pi_options o;
  o.samples = 100000001;  // odd: the lone last sample too
  o.seed = 12345;
  const mcubes::pi_mc_result cpu = mcubes::pi_monte_carlo(o);
  o.backend = mcubes::backend_kind::cuda;
  for (int b : block_sizes) {
    o.cuda_threads_per_block = b;
    mcubes::cuda_launch_policy policy;
    policy.threads_per_block = b;
    mcubes::cuda_backend backend(policy);
    const mcubes::pi_mc_result r = mcubes::pi_monte_carlo_with(o, backend);
    const mcubes::launch_report rep = backend.last_launch();
    EXPECT_EQ(r.backend, "cuda");
    EXPECT_EQ(r.hits, cpu.hits) << b << " threads per block";
    EXPECT_EQ(bits(r.estimate), bits(cpu.estimate));
    EXPECT_EQ(rep.threads_per_block, b);
    EXPECT_GE(rep.blocks_per_sm, 1);
    EXPECT_GE(rep.grid, 1);
    EXPECT_GT(rep.kernel_ms, 0.0);
  }
  for (std::uint64_t n : {std::uint64_t(2), std::uint64_t(3), std::uint64_t(1001)}) {  // tiny N
    mcubes::pi_options t = o;
    t.samples = n;
    t.cuda_threads_per_block = 256;
    mcubes::pi_options c = t;
    c.backend = mcubes::backend_kind::cpu;
    EXPECT_EQ(mcubes::pi_monte_carlo(t).hits, mcubes::pi_monte_carlo(c).hits) << "N = " << n;
  }
}

TEST(PiCuda, WithinFiveSigmaAtTenBillion) {
  MCUBES_REQUIRE_DEVICE();
  mcubes::pi_options o;
  o.samples = 10000000000ull;
  o.backend = mcubes::backend_kind::cuda;
  const mcubes::pi_mc_result r = mcubes::pi_monte_carlo(o);
  EXPECT_LE(std::fabs(r.estimate - pi_value), max_pull * r.error) << r.estimate << " +- " << r.error;
}

TEST(MidpointCuda, PiToMachinePrecisionForEveryBlockSize) {
  MCUBES_REQUIRE_DEVICE();
  mcubes::midpoint_options o;
  o.backend = mcubes::backend_kind::cuda;
  const mcubes::result r6 = mcubes::pi_midpoint(1000000, o);
  EXPECT_EQ(r6.backend, "cuda");
  EXPECT_LE(std::fabs(r6.estimate - pi_value), 1e-13);
  double ref = 0;
  for (int b : block_sizes) {
    o.cuda_threads_per_block = b;
    const mcubes::result r9 = mcubes::pi_midpoint(1000000000, o);
    EXPECT_LE(std::fabs(r9.estimate - pi_value), 2e-15) << b << " threads per block: " << r9.estimate;
    if (b == 32) ref = r9.estimate;
    EXPECT_EQ(bits(r9.estimate), bits(ref)) << b << " threads per block";
  }
}

struct gaussian3 {
  __host__ __device__ double operator()(const mcubes::point<3>& x) const {
    return exp(-(x[0] * x[0] + x[1] * x[1] + x[2] * x[2]));
  }
};
struct zero1 {
  __host__ __device__ double operator()(double) const { return 0.0; }
};
struct nan_after {
  double threshold;
  __host__ __device__ double operator()(double x) const { return x > threshold ? nan("") : 1.0; }
};

TEST(MidpointCuda, TensorRuleAgreesWithTheCpuAndNamesNonFiniteValues) {
  MCUBES_REQUIRE_DEVICE();
  mcubes::midpoint_options o;
  const mcubes::result cpu = mcubes::midpoint<3>(gaussian3{}, mcubes::region<3>::unit(), 301, o);
  o.backend = mcubes::backend_kind::cuda;
  const mcubes::result gpu = mcubes::midpoint<3>(gaussian3{}, mcubes::region<3>::unit(), 301, o);
  EXPECT_NEAR(gpu.estimate, cpu.estimate, 1e-14);
  o.cuda_threads_per_block = 64;
  EXPECT_EQ(bits(mcubes::midpoint<3>(gaussian3{}, mcubes::region<3>::unit(), 301, o).estimate), bits(gpu.estimate));
  try {
    mcubes::midpoint(nan_after{0.3}, 0.0, 1.0, 10000000, o);
    FAIL() << "no exception";
  } catch (const mcubes::non_finite_integrand& e) {
    EXPECT_EQ(e.sample_index(), 3000000u);
    EXPECT_TRUE(std::isnan(e.value()));
  }
}

TEST(MidpointCuda, ErrorEstimateAndStatusAgreeWithTheCpu) {
  MCUBES_REQUIRE_DEVICE();
  mcubes::midpoint_options o;
  // pi at N = 1e6 (coarse ratio 5), 1024 (no estimate), 3e6 + 3 (ratio 3)
  for (std::uint64_t n : {std::uint64_t(1000000), std::uint64_t(1024), std::uint64_t(3000003)}) {
    o.backend = mcubes::backend_kind::cpu;
    const mcubes::result cpu = mcubes::pi_midpoint(n, o);
    o.backend = mcubes::backend_kind::cuda;
    double ref = 0;
    for (int b : {32, 256, 1024}) {
      o.cuda_threads_per_block = b;
      const mcubes::result gpu = mcubes::pi_midpoint(n, o);
      EXPECT_EQ(gpu.status, cpu.status) << "N = " << n;
      EXPECT_EQ(gpu.records[0].n_nonzero, n);
      if (std::isinf(cpu.error)) {
        EXPECT_TRUE(std::isinf(gpu.error)) << "N = " << n;
      } else {
        // M_N and M_{N/k} agree to rounding (FMA contraction): so do the error estimates
        EXPECT_NEAR(gpu.error, cpu.error, 1e-3 * cpu.error + 4 * std::numeric_limits<double>::epsilon() * pi_value)
            << "N = " << n;
        EXPECT_LE(std::fabs(gpu.estimate - pi_value), gpu.error) << "N = " << n;
      }
      if (b == 32) ref = gpu.error;
      EXPECT_EQ(bits(gpu.error), bits(ref)) << "N = " << n << ", " << b << " threads per block";
    }
  }
  // 3-D, n = 301 = 7 x 43
  o.cuda_threads_per_block = 256;
  o.backend = mcubes::backend_kind::cpu;
  const mcubes::result cpu = mcubes::midpoint<3>(gaussian3{}, mcubes::region<3>::unit(), 301, o);
  o.backend = mcubes::backend_kind::cuda;
  const mcubes::result gpu = mcubes::midpoint<3>(gaussian3{}, mcubes::region<3>::unit(), 301, o);
  EXPECT_TRUE(std::isfinite(cpu.error));
  EXPECT_NEAR(gpu.error, cpu.error, 1e-6 * cpu.error);
  EXPECT_EQ(gpu.status, cpu.status);
  // f = 0: not resolved
  const mcubes::result z = mcubes::midpoint(zero1{}, 0.0, 1.0, 3000, o);
  EXPECT_EQ(z.status, mcubes::status::not_resolved);
  EXPECT_TRUE(std::isinf(z.error));
}

}  // namespace

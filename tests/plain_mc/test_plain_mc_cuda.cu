// Plain Monte Carlo on the GPU (algorithm/plain_mc.hpp on the CUDA backend): suite integrands within 4 sigma,
// bitwise identical for every block size, equal to the CPU to rounding, the same status as the
// CPU, the first non-finite sample and the first overflowing one. Skips (GTEST_SKIP) when no CUDA
// device is present; the no-device behaviour is tested then.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <cstring>
#include <string>

#include <mcubes/cuda.cuh>
#include <mcubes/backend/cuda/check.cuh>
#include <mcubes/suite.hpp>

#include "support/cuda.hpp"

namespace {

constexpr double kMaxPull = 4.0;
constexpr int kBlockSizes[] = {32, 64, 128, 256, 512, 1024};

using mcubes_test::bits;
using mcubes_test::has_device;

mcubes::plain_mc_options opts(std::uint64_t n, std::uint64_t seed, mcubes::backend_kind b, int tpb = 256) {
  mcubes::plain_mc_options o;
  o.samples = n;
  o.seed = seed;
  o.backend = b;
  o.cuda_threads_per_block = tpb;
  return o;
}

struct nan_corner {
  __host__ __device__ double operator()(const mcubes::point<2>& x) const {
    return (x[0] > 0.999 && x[1] > 0.99) ? nan("") : x[0];
  }
};

TEST(PlainMCCuda, WithoutADeviceCudaFailsAndAutoFallsBack) {
  if (has_device()) GTEST_SKIP() << "a CUDA device is present: the no-device path is not reachable";
  const auto reg = mcubes::region<3>::unit();
  EXPECT_THROW(mcubes::plain_mc<3>(mcubes::suite::f3_corner_peak{}, reg, opts(1000, 1, mcubes::backend_kind::cuda)),
               mcubes::cuda_error);
  EXPECT_EQ(mcubes::plain_mc<3>(mcubes::suite::f3_corner_peak{}, reg, opts(1000, 1, mcubes::backend_kind::automatic)).backend,
            "cpu");
}

// f1..f6 within 4 sigma on the GPU: tests/backends/test_methods_cuda.cu (plain_mc_suite_within).

TEST(PlainMCCuda, BitwiseIdenticalForEveryBlockSizeAndCloseToTheCpu) {
  MCUBES_REQUIRE_DEVICE();
  const auto reg = mcubes::region<3>::unit();
  const std::uint64_t n = 30000007;
  const mcubes::result cpu = mcubes::plain_mc<3>(mcubes::suite::f3_corner_peak{}, reg, opts(n, 9, mcubes::backend_kind::cpu));
  mcubes::result ref;
  for (int b : kBlockSizes) {
    mcubes::cuda_launch_policy policy;
    policy.threads_per_block = b;
    mcubes::cuda_backend backend(policy);
    const mcubes::result r =
        mcubes::plain_mc_with<3>(mcubes::suite::f3_corner_peak{}, reg, opts(n, 9, mcubes::backend_kind::cuda, b), backend);
    const mcubes::launch_report rep = backend.last_launch();
    if (b == 32) ref = r;
    EXPECT_EQ(bits(r.estimate), bits(ref.estimate)) << b << " threads per block";
    EXPECT_EQ(bits(r.error), bits(ref.error)) << b << " threads per block";
    EXPECT_EQ(rep.threads_per_block, b);
    EXPECT_GE(rep.grid, 1);
  }
  // same samples; only FMA contraction differs
  EXPECT_NEAR(ref.estimate, cpu.estimate, 1e-12 * std::fabs(cpu.estimate));
  EXPECT_NEAR(ref.error, cpu.error, 1e-9 * cpu.error);
}

TEST(PlainMCCuda, NonFiniteValueNamesTheSameSampleAsTheCpu) {
  MCUBES_REQUIRE_DEVICE();
  const auto reg = mcubes::region<2>::unit();
  std::uint64_t cpu_index = 0, gpu_index = 1;
  try {
    mcubes::plain_mc<2>(nan_corner{}, reg, opts(2000000, 4, mcubes::backend_kind::cpu));
  } catch (const mcubes::non_finite_integrand& e) {
    cpu_index = e.sample_index();
  }
  for (int b : {32, 1024}) {
    try {
      mcubes::plain_mc<2>(nan_corner{}, reg, opts(2000000, 4, mcubes::backend_kind::cuda, b));
      FAIL() << "no exception";
    } catch (const mcubes::non_finite_integrand& e) {
      gpu_index = e.sample_index();
    }
    EXPECT_EQ(gpu_index, cpu_index) << b << " threads per block";
  }
}

struct linear2 {  // int over [1,3]x[0,2] of (x + 2y) = 16
  __host__ __device__ double operator()(const mcubes::point<2>& x) const { return x[0] + 2 * x[1]; }
};
struct zero2 {
  __host__ __device__ double operator()(const mcubes::point<2>&) const { return 0.0; }
};
struct tiny2 {
  __host__ __device__ double operator()(const mcubes::point<2>& x) const { return 1e-300 * (1 + x[0]); }
};
struct split_huge {  // +-1e200: (f - f_first)^2 overflows
  __host__ __device__ double operator()(const mcubes::point<1>& x) const { return x[0] < 0.5 ? 1e200 : -1e200; }
};

TEST(PlainMCCuda, StatusAgreesWithTheCpu) {
  MCUBES_REQUIRE_DEVICE();
  const mcubes::region<2> reg({1, 0}, {3, 2});
  for (std::uint64_t n : {10000u, 1000000u}) {  // not converged, converged (rel_tol 1e-3)
    const mcubes::result cpu = mcubes::plain_mc<2>(linear2{}, reg, opts(n, 1, mcubes::backend_kind::cpu));
    const mcubes::result gpu = mcubes::plain_mc<2>(linear2{}, reg, opts(n, 1, mcubes::backend_kind::cuda));
    EXPECT_EQ(gpu.status, cpu.status) << "N = " << n;
    EXPECT_LE(std::fabs(gpu.estimate - 16.0), kMaxPull * gpu.error);
    EXPECT_EQ(gpu.records[0].n_nonzero, cpu.records[0].n_nonzero);
  }
  EXPECT_EQ(mcubes::plain_mc<2>(linear2{}, reg, opts(1000000, 1, mcubes::backend_kind::cuda)).status,
            mcubes::status::converged);
  const mcubes::result z = mcubes::plain_mc<2>(zero2{}, reg, opts(100000, 1, mcubes::backend_kind::cuda));
  EXPECT_EQ(z.status, mcubes::status::not_resolved);
  EXPECT_TRUE(std::isinf(z.error));
  const mcubes::result t = mcubes::plain_mc<2>(tiny2{}, mcubes::region<2>::unit(), opts(100000, 1, mcubes::backend_kind::cuda));
  EXPECT_EQ(t.status, mcubes::status::underflow);
  EXPECT_TRUE(std::isinf(t.error));
}

TEST(PlainMCCuda, OverflowNamesTheSameSampleAsTheCpu) {
  MCUBES_REQUIRE_DEVICE();
  const auto reg = mcubes::region<1>::unit();
  std::string cpu_what, gpu_what;
  try {
    mcubes::plain_mc<1>(split_huge{}, reg, opts(1000000, 6, mcubes::backend_kind::cpu));
  } catch (const mcubes::numerical_error& e) {
    cpu_what = e.what();
  }
  ASSERT_NE(cpu_what.find("at sample"), std::string::npos) << cpu_what;
  for (int b : {32, 1024}) {
    try {
      mcubes::plain_mc<1>(split_huge{}, reg, opts(1000000, 6, mcubes::backend_kind::cuda, b));
      FAIL() << "no exception";
    } catch (const mcubes::non_finite_integrand&) {
      FAIL() << "an overflow of finite values is not a non-finite integrand";
    } catch (const mcubes::numerical_error& e) {
      gpu_what = e.what();
    }
    EXPECT_EQ(gpu_what, cpu_what) << b << " threads per block";
  }
}

}  // namespace

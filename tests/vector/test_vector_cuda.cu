// Vector-valued integrands on the CUDA backend (skipped without a device): bitwise the CPU result
// for integrands of +, -, * (compiled with --fmad=false) with 1, 3, 4, 16 and 32 components, in
// 3 dimensions (2 samples per sub-cube) and 7 (6 samples per sub-cube), for several block sizes:
// the shared-memory tile kernel with blocks of 32 and 64 threads (N = 3, 4, 16), the local-memory
// kernel (N = 1, and N = 32, too large for the tiles) with 32 to 1024 threads; one component
// bitwise the scalar CUDA run.
#include <mcubes/cuda.cuh>

#include <vector>

#include "support/cuda.hpp"

namespace {

struct four {
  MCUBES_HOST_DEVICE mcubes::values<4> operator()(const mcubes::point<3>& x) const {
    const double f0 = 1 + x[0] * x[1] + x[2] * x[2];
    return {{f0, x[0], x[0] * x[0] * x[1] - x[2], 2 * f0}};
  }
};
struct peak {
  MCUBES_HOST_DEVICE double operator()(const mcubes::point<3>& x) const {
    return 1 + 40 * (x[0] - 0.3) * (x[0] - 0.3) * x[1] + x[2];
  }
};
struct peak1 {
  MCUBES_HOST_DEVICE mcubes::values<1> operator()(const mcubes::point<3>& x) const { return {{peak{}(x)}}; }
};
// N polynomial components of mixed signs: w, w x0, w x0^2, ... with w = peak - x1 x2 (times -1
// for odd k, so that covariances of both signs occur)
template <int D, int N>
struct poly {
  MCUBES_HOST_DEVICE mcubes::values<N> operator()(const mcubes::point<D>& x) const {
    const double w = 1 + 40 * (x[0] - 0.3) * (x[0] - 0.3) * x[1] + x[2] - x[1] * x[2] * x[D - 1];
    mcubes::values<N> v;
    double m = w;
    for (int k = 0; k < N; ++k, m = m * x[0]) v[k] = k % 2 == 0 ? m : -m;
    return v;
  }
};

static_assert(mcubes::cuda_detail::vector_tile_fits(3, 64) && mcubes::cuda_detail::vector_tile_fits(16, 64) &&
                  mcubes::cuda_detail::vector_tile_fits(16, 32),
              "N = 3 and 16 take the tile kernel with 32 or 64 threads");
static_assert(!mcubes::cuda_detail::vector_tile_fits(1, 32) && !mcubes::cuda_detail::vector_tile_fits(32, 32),
              "N = 1 and N = 32 take the local-memory kernel");

mcubes::vegas_options opts(mcubes::backend_kind b, int block, std::uint64_t calls = 300000) {
  mcubes::vegas_options o;
  o.backend = b;
  o.cuda_threads_per_block = block;
  o.calls_per_iteration = calls;
  o.max_iterations = 8;
  o.adapt_iterations = 4;
  o.skip = 1;
  o.rel_tol = 1e-9;
  o.n_bins = 100;
  o.seed = 5;
  o.threads = 3;
  return o;
}

using mcubes_test::expect_same;

// CUDA with each block size against the CPU, bitwise
template <int D, class F>
void expect_cuda_is_cpu(const F& f, std::uint64_t calls, std::vector<int> blocks) {
  const auto reg = mcubes::region<D>::unit();
  const auto cpu = mcubes::vegas_vector<D>(f, reg, opts(mcubes::backend_kind::cpu, 256, calls));
  for (int b : blocks) {
    SCOPED_TRACE(testing::Message() << "block " << b);
    const auto g = mcubes::vegas_vector<D>(f, reg, opts(mcubes::backend_kind::cuda, b, calls));
    EXPECT_EQ(g.run.backend, "cuda");
    expect_same(g, cpu);
  }
}

}  // namespace

TEST(VectorCuda, BitwiseTheCpuAndAnyBlockSize) {
  MCUBES_REQUIRE_DEVICE();
  expect_cuda_is_cpu<3>(four{}, 300000, {32, 64, 512});
}

TEST(VectorCuda, OneComponentBitwiseTheCpu) {
  MCUBES_REQUIRE_DEVICE();
  expect_cuda_is_cpu<3>(peak1{}, 300000, {32, 256, 1024});
}

TEST(VectorCuda, ThreeComponentsBitwiseTheCpu) {
  MCUBES_REQUIRE_DEVICE();
  expect_cuda_is_cpu<3>(poly<3, 3>{}, 300000, {32, 64, 256});
  expect_cuda_is_cpu<7>(poly<7, 3>{}, 100000, {32, 128});  // 6 samples per sub-cube
}

TEST(VectorCuda, SixteenComponentsBitwiseTheCpu) {
  MCUBES_REQUIRE_DEVICE();
  expect_cuda_is_cpu<3>(poly<3, 16>{}, 300000, {32, 64, 256});
  expect_cuda_is_cpu<7>(poly<7, 16>{}, 100000, {32, 1024});
}

TEST(VectorCuda, ThirtyTwoComponentsTakeTheLocalMemoryKernelBitwiseTheCpu) {
  MCUBES_REQUIRE_DEVICE();
  expect_cuda_is_cpu<3>(poly<3, 32>{}, 100000, {32, 128, 1024});
  expect_cuda_is_cpu<7>(poly<7, 32>{}, 100000, {64});
}

TEST(VectorCuda, OneComponentIsTheScalarRunBitwise) {
  MCUBES_REQUIRE_DEVICE();
  const auto reg = mcubes::region<3>::unit();
  const auto s = mcubes::vegas<3>(peak{}, reg, opts(mcubes::backend_kind::cuda, 128));
  const auto v = mcubes::vegas_vector<3>(peak1{}, reg, opts(mcubes::backend_kind::cuda, 128));
  EXPECT_EQ(mcubes_test::bits(v.estimate[0]), mcubes_test::bits(s.estimate));
  EXPECT_EQ(mcubes_test::bits(v.error[0]), mcubes_test::bits(s.error));
}

// max_blocks = 1: one block loops over every tile (the grid-stride loop), the same bits
TEST(VectorCuda, OneBlockGivesTheSameBits) {
  MCUBES_REQUIRE_DEVICE();
  const auto reg = mcubes::region<3>::unit();
  const auto cpu = mcubes::vegas_vector<3>(poly<3, 16>{}, reg, opts(mcubes::backend_kind::cpu, 256, 50000));
  mcubes::cuda_launch_policy pol;
  pol.threads_per_block = 64;
  pol.max_blocks = 1;
  mcubes::cuda_backend backend(pol);
  const auto g = mcubes::vegas_vector_with<3, 16>(poly<3, 16>{}, reg, opts(mcubes::backend_kind::cuda, 64, 50000), backend);
  expect_same(g, cpu);
}

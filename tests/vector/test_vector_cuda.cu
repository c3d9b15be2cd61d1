// Vector-valued integrands on the CUDA backend (skipped without a device): bitwise the CPU result
// for an integrand of +, -, * (compiled with --fmad=false), the same bits for blocks of 64 and
// 512 threads, one component bitwise the scalar CUDA run, and more than 16 components refused.
#include <mcubes/cuda.cuh>

#include <cstring>

#include "../cuda_test_support.hpp"

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
struct seventeen {
  MCUBES_HOST_DEVICE mcubes::values<17> operator()(const mcubes::point<3>& x) const {
    mcubes::values<17> v;
    for (int i = 0; i < 17; ++i) v[i] = x[0] + i;
    return v;
  }
};

mcubes::vegas_options opts(mcubes::backend_kind b, int block) {
  mcubes::vegas_options o;
  o.backend = b;
  o.cuda_threads_per_block = block;
  o.calls_per_iteration = 300000;
  o.max_iterations = 8;
  o.adapt_iterations = 4;
  o.skip = 1;
  o.rel_tol = 1e-9;
  o.n_bins = 100;
  o.seed = 5;
  return o;
}

void expect_same(const mcubes::vector_result& a, const mcubes::vector_result& b) {
  ASSERT_EQ(a.components, b.components);
  for (int i = 0; i < a.components; ++i) EXPECT_EQ(mcubes_test::bits(a.estimate[i]), mcubes_test::bits(b.estimate[i])) << i;
  for (std::size_t t = 0; t < a.covariance.size(); ++t)
    EXPECT_EQ(mcubes_test::bits(a.covariance[t]), mcubes_test::bits(b.covariance[t])) << t;
  EXPECT_EQ(a.run.iterations, b.run.iterations);
}

}  // namespace

TEST(VectorCuda, BitwiseTheCpuAndAnyBlockSize) {
  MCUBES_REQUIRE_DEVICE();
  const auto reg = mcubes::region<3>::unit();
  const auto cpu = mcubes::vegas_vector<3>(four{}, reg, opts(mcubes::backend_kind::cpu, 256));
  const auto g64 = mcubes::vegas_vector<3>(four{}, reg, opts(mcubes::backend_kind::cuda, 64));
  const auto g512 = mcubes::vegas_vector<3>(four{}, reg, opts(mcubes::backend_kind::cuda, 512));
  EXPECT_EQ(g64.run.backend, "cuda");
  expect_same(g64, cpu);
  expect_same(g512, g64);
}

TEST(VectorCuda, OneComponentIsTheScalarRunBitwise) {
  MCUBES_REQUIRE_DEVICE();
  const auto reg = mcubes::region<3>::unit();
  const auto s = mcubes::vegas<3>(peak{}, reg, opts(mcubes::backend_kind::cuda, 128));
  const auto v = mcubes::vegas_vector<3>(peak1{}, reg, opts(mcubes::backend_kind::cuda, 128));
  EXPECT_EQ(mcubes_test::bits(v.estimate[0]), mcubes_test::bits(s.estimate));
  EXPECT_EQ(mcubes_test::bits(v.error[0]), mcubes_test::bits(s.error));
}

TEST(VectorCuda, MoreThanSixteenComponentsAreRefused) {
  MCUBES_REQUIRE_DEVICE();
  EXPECT_THROW((void)mcubes::vegas_vector<3>(seventeen{}, mcubes::region<3>::unit(), opts(mcubes::backend_kind::cuda, 256)),
               mcubes::invalid_input);
}

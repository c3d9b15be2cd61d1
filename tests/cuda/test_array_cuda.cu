// The CUDA backend's array path (backend/cuda/array_path.cuh): a device array integrand, whose
// values are computed by the caller's own kernel over many points per call, gives bitwise the
// result of the one-point functor computing the same values, for any slice size and block size;
// known integrals within 4 sigma; failures name the same sample; errors of the call propagate.
// Built with --fmad=false (the caller's kernel and the one-point kernels then round alike).
// Skips when no GPU is present.
#include <gtest/gtest.h>

#include <mcubes/cuda.cuh>

#include "support/cuda.hpp"
#include "support/eq45.hpp"

#include <cmath>
#include <cstdint>
#include <stdexcept>
#include <vector>

namespace {

using namespace mcubes;

constexpr double kArraySigmas = 4.0;

// prod_j (1 + x_j^2): integral (4/3)^D over the unit cube. Sharp Gaussian peak at 0.4: adapts.
template <int D>
__host__ __device__ double poly_value(const double* x) {
  double v = 1;
  for (int j = 0; j < D; ++j) v *= 1 + x[j] * x[j];
  return v;
}
template <int D>
__host__ __device__ double peak_value(const double* x) {
  double s = 0;
  for (int j = 0; j < D; ++j) s += (x[j] - 0.4) * (x[j] - 0.4);
  return exp(-200 * s);
}
// NaN where x_0 < 0.02 (the first such sample is named by its index)
template <int D>
__host__ __device__ double nan_value(const double* x) {
  return x[0] < 0.02 ? NAN : 1 + x[0];
}

enum class kind { poly, peak, nan };

template <int D>
__host__ __device__ double value_of(kind k, const double* x) {
  return k == kind::poly ? poly_value<D>(x) : k == kind::peak ? peak_value<D>(x) : nan_value<D>(x);
}

template <int D>
struct one_point {
  kind k;
  __host__ __device__ double operator()(const point<D>& x) const { return value_of<D>(k, x.x); }
};

template <int D>
__global__ void rows_kernel(kind k, const double* x, std::size_t n, double* values) {
  for (std::size_t i = blockIdx.x * std::size_t(blockDim.x) + threadIdx.x; i < n; i += std::size_t(gridDim.x) * blockDim.x)
    values[i] = value_of<D>(k, x + i * D);
}

// The caller's side: one kernel per call on the backend's stream; counts its calls and rows.
struct call_log {
  std::uint64_t calls = 0, rows = 0, max_rows = 0;
};
template <int D>
struct rows_call {
  kind k;
  call_log* log;
  bool throw_at_second_call = false;
  void operator()(const double* x, std::size_t n, double* values, cudaStream_t s) const {
    if (throw_at_second_call && log->calls == 1) throw std::runtime_error("the integrand's own error");
    ++log->calls;
    log->rows += n;
    if (n > log->max_rows) log->max_rows = n;
    const unsigned blocks = static_cast<unsigned>((n + 255) / 256 < 4096 ? (n + 255) / 256 : 4096);
    rows_kernel<D><<<blocks, 256, 0, s>>>(k, x, n, values);
  }
};

vegas_options opts(std::uint64_t calls, stratification_mode mode = stratification_mode::adaptive) {
  vegas_options o;
  o.calls_per_iteration = calls;
  o.max_iterations = 8;
  o.adapt_iterations = 5;
  o.skip = 1;
  o.min_iterations = 7;  // skip + min_iterations <= max_iterations: every iteration runs
  o.rel_tol = 1e-14;  // run every iteration
  o.backend = backend_kind::cuda;
  o.stratification = mode;  // VEGAS+ (the default) or the uniform grid: the array path samples either
  return o;
}

using mcubes_test::expect_same_result;

template <int D>
device_array_function<D, rows_call<D>> array_of(kind k, call_log* log) {
  return {rows_call<D>{k, log}};
}

// Either stratification; under VEGAS+ the slices are cut by the sub-cubes' counts (array_path.cuh).
TEST(CudaArray, BitwiseTheOnePointFunctorForAnySliceAndBlockSize) {
  MCUBES_REQUIRE_DEVICE();
  for (stratification_mode mode : {stratification_mode::uniform, stratification_mode::adaptive})
    for (kind k : {kind::poly, kind::peak}) {
      vegas_options o = opts(300000, mode);
      const result ref = vegas<5>(one_point<5>{k}, region<5>::unit(), o);
      EXPECT_EQ(ref.options.stratification, mode);
      for (int tpb : {32, 256, 1024})
        for (unsigned long long points : {1ull, 5000ull, 100000ull, 0ull}) {
          SCOPED_TRACE(testing::Message() << to_string(mode) << ", kind " << int(k) << ", block " << tpb
                                          << ", points per call " << points);
          o.cuda_threads_per_block = tpb;
          o.cuda_array_points = points;
          call_log log;
          const result got = vegas<5>(array_of<5>(k, &log), region<5>::unit(), o);
          expect_same_result(ref, got);
          EXPECT_EQ(got.options.stratification, mode);
          // every sample of every pass once: n_eval, plus the bin-scale probe's (not counted in n_eval)
          EXPECT_GE(log.rows, ref.n_eval);
          EXPECT_LT(log.rows, ref.n_eval + ref.n_eval / 10);
          if (points == 5000) EXPECT_GT(log.calls, 2 * ref.records.size());  // several slices per pass
          if (points == 0) EXPECT_LT(log.calls, 2 * ref.records.size());      // one call per pass at this size
        }
    }
}

// Lepage's Eq. (45) (tests/support/eq45.hpp) as a device array integrand: VEGAS+ (the default)
// finds every peak, bitwise the one-point functor; the uniform grid misses one.
using mcubes_test::eq45_value;
using mcubes_test::exact_eq45;
__global__ void eq45_rows_kernel(const double* x, std::size_t n, double* values) {
  for (std::size_t i = blockIdx.x * std::size_t(blockDim.x) + threadIdx.x; i < n; i += std::size_t(gridDim.x) * blockDim.x)
    values[i] = eq45_value(x + i * 8);
}
struct eq45_rows {
  void operator()(const double* x, std::size_t n, double* values, cudaStream_t s) const {
    const unsigned blocks = static_cast<unsigned>((n + 255) / 256 < 4096 ? (n + 255) / 256 : 4096);
    eq45_rows_kernel<<<blocks, 256, 0, s>>>(x, n, values);
  }
};

TEST(CudaArray, LepageEq45FindsEveryPeakUnderVegasPlus) {
  MCUBES_REQUIRE_DEVICE();
  vegas_options o;
  o.backend = backend_kind::cuda;
  o.calls_per_iteration = 250000;
  o.max_iterations = 30;
  o.rel_tol = 2e-3;
  o.seed = 3;
  o.cuda_array_points = 50000;  // several slices per pass
  const result r = vegas<8>(device_array_function<8, eq45_rows>{}, region<8>::unit(), o);
  EXPECT_EQ(r.options.stratification, stratification_mode::adaptive);
  EXPECT_LE(std::fabs(r.estimate - exact_eq45()) / r.error, 5.0) << r.estimate << " +- " << r.error;
  EXPECT_LE(r.error, 1e-2);
  expect_same_result(r, vegas<8>(mcubes_test::lepage_eq45{}, region<8>::unit(), o));
  o.stratification = stratification_mode::uniform;
  o.max_iterations = 12;
  const result u = vegas<8>(device_array_function<8, eq45_rows>{}, region<8>::unit(), o);
  EXPECT_LT(u.estimate, 0.8) << "the uniform grid found the third peak: the test no longer shows the difference";
}

TEST(CudaArray, KnownIntegralsWithinFourSigma) {
  MCUBES_REQUIRE_DEVICE();
  call_log log;
  const result r = vegas<3>(array_of<3>(kind::poly, &log), region<3>::unit(), opts(1000000));
  EXPECT_NEAR(r.estimate, std::pow(4.0 / 3.0, 3), kArraySigmas * r.error);
  const double g = std::sqrt(M_PI / 200) / 2 * (std::erf(0.6 * std::sqrt(200.0)) + std::erf(0.4 * std::sqrt(200.0)));
  const result p = vegas<4>(array_of<4>(kind::peak, &log), region<4>::unit(), opts(1000000));
  EXPECT_NEAR(p.estimate, std::pow(g, 4), kArraySigmas * p.error);
  EXPECT_LT(p.error, 1e-3 * p.estimate);
}

TEST(CudaArray, OtherRegionsAndTheIntegratorsMapReuse) {
  MCUBES_REQUIRE_DEVICE();
  const region<2> reg({-1.0, 0.5}, {2.0, 1.5});
  vegas_options o = opts(200000);
  integrator<2> a(reg, o), b(reg, o);
  call_log log;
  for (int round = 0; round < 2; ++round)
    expect_same_result(a.integrate(one_point<2>{kind::peak}), b.integrate(array_of<2>(kind::peak, &log)));
  EXPECT_EQ(a.edges(), b.edges());
}

TEST(CudaArray, NonFiniteValueNamesTheSameSampleAsTheOnePointRun) {
  MCUBES_REQUIRE_DEVICE();
  vegas_options o = opts(100000);
  std::uint64_t index = 0;
  std::vector<double> x;
  try {
    vegas<2>(one_point<2>{kind::nan}, region<2>::unit(), o);
    FAIL() << "no exception";
  } catch (const non_finite_integrand& e) {
    index = e.sample_index();
    x = e.point();
  }
  o.cuda_array_points = 3000;
  call_log log;
  try {
    vegas<2>(array_of<2>(kind::nan, &log), region<2>::unit(), o);
    FAIL() << "no exception";
  } catch (const non_finite_integrand& e) {
    EXPECT_EQ(e.sample_index(), index);
    EXPECT_EQ(e.point(), x);
    EXPECT_TRUE(std::isnan(e.value()));
  }
}

TEST(CudaArray, ErrorsOfTheCallPropagateAndTheCpuBackendIsRefused) {
  MCUBES_REQUIRE_DEVICE();
  call_log log;
  device_array_function<2, rows_call<2>> f{rows_call<2>{kind::poly, &log, true}};
  vegas_options o = opts(100000);
  o.cuda_array_points = 1000;
  EXPECT_THROW(vegas<2>(f, region<2>::unit(), o), std::runtime_error);
  o.backend = backend_kind::cpu;
  EXPECT_THROW(vegas<2>(array_of<2>(kind::poly, &log), region<2>::unit(), o), invalid_input);
  o.backend = backend_kind::cuda;
  o.cuda_array_points = (1ull << 40) + 1;
  EXPECT_THROW(vegas<2>(array_of<2>(kind::poly, &log), region<2>::unit(), o), invalid_input);
}

}  // namespace

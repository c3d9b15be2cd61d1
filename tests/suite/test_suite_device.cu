// The suite's functors (mcubes/suite.hpp) called from a __global__ kernel for D = 6, 8, 9, at the
// paper's parameters (default-constructed) and at other parameters in both call forms (f{p}(x) and
// f(x, p), the form of a parameter batch): this file is the check that suite.hpp compiles as device
// code under nvcc, and, where a GPU is present, that the device values agree with the host values at
// fixed points (device exp/cos/sin are within a few ulp of the host's libm, and nvcc may contract
// a*b+c into FMAs). Skips without a GPU.
#include <gtest/gtest.h>

#include <cuda_runtime.h>

#include <mcubes/suite.hpp>

#include <cmath>
#include <cstdint>
#include <vector>

namespace {

namespace suite = mcubes::suite;

// |device - host| <= kRelTol * |host| + kAbsTol: relative for the products and exponentials, with an
// absolute floor for cos/sin of sums near a zero of the function.
constexpr double kRelTol = 1e-12;
constexpr double kAbsTol = 1e-13;
constexpr int kPoints = 1024;
constexpr int kFunctors = 20;  // f1..f6, fA, fB; f1..f6 at other parameters, in both call forms

// Deterministic point k in [lo, hi]^D (a Weyl sequence), generated on the host only: the kernel and
// the host then evaluate the functors at bitwise identical points.
template <int D>
mcubes::point<D> test_point(int k, double lo, double hi) {
  mcubes::point<D> x;
  for (int j = 0; j < D; ++j) {
    const double a = 0.6180339887498949 * (k + 1) + 0.7548776662466927 * (j + 1);
    x[j] = lo + (hi - lo) * (a - std::floor(a));
  }
  return x;
}

// The points of one functor evaluation: unit-cube points (pulled towards the centre for odd k, so that
// the peaks of f2, f4, f5 are reached), f6's points in [0,0.5]^D (inside some thresholds), fA's on
// (0,10)^D and fB's near its peak, in (-0.03,0.03)^D.
template <int D>
struct point_set {
  mcubes::point<D> unit, f6, fA, fB;
};

template <int D>
point_set<D> make_points(int k) {
  point_set<D> p{test_point<D>(k, 0.0, 1.0), test_point<D>(k, 0.0, 0.5), test_point<D>(k, 0.0, 10.0),
                 test_point<D>(k, -0.03, 0.03)};
  if (k % 2)
    for (int j = 0; j < D; ++j) p.unit[j] = 0.5 + (p.unit[j] - 0.5) * 0.05;
  return p;
}

template <int D>
__host__ __device__ void evaluate_all(const point_set<D>& p, double* out) {
  out[0] = suite::f1_oscillatory{}(p.unit);
  out[1] = suite::f2_product_peak{}(p.unit);
  out[2] = suite::f3_corner_peak{}(p.unit);
  out[3] = suite::f4_gaussian{}(p.unit);
  out[4] = suite::f5_c0{}(p.unit);
  out[5] = suite::f6_discontinuous{}(p.f6);
  out[6] = suite::fA_sin_sum{}(p.fA);
  out[7] = suite::fB_narrow_gaussian{}(p.fB);
  const suite::f1_params p1{2.5, 0.3};
  const suite::f2_params p2{7, 0.2};
  const suite::f3_params p3{3};
  const suite::f4_params p4{9, 0.8};
  const suite::f5_params p5{4, 0.1};
  const suite::f6_params p6{1.5, 0.3};
  out[8] = suite::f1_oscillatory{p1}(p.unit);
  out[9] = suite::f2_product_peak{p2}(p.unit);
  out[10] = suite::f3_corner_peak{p3}(p.unit);
  out[11] = suite::f4_gaussian{p4}(p.unit);
  out[12] = suite::f5_c0{p5}(p.unit);
  out[13] = suite::f6_discontinuous{p6}(p.f6);
  out[14] = suite::f1_oscillatory{}(p.unit, p1);
  out[15] = suite::f2_product_peak{}(p.unit, p2);
  out[16] = suite::f3_corner_peak{}(p.unit, p3);
  out[17] = suite::f4_gaussian{}(p.unit, p4);
  out[18] = suite::f5_c0{}(p.unit, p5);
  out[19] = suite::f6_discontinuous{}(p.f6, p6);
}

template <int D>
__global__ void evaluate_kernel(const point_set<D>* points, double* out) {
  const int k = blockIdx.x * blockDim.x + threadIdx.x;
  if (k < kPoints) evaluate_all<D>(points[k], out + static_cast<std::size_t>(k) * kFunctors);
}

bool have_gpu() {
  int n = 0;
  return cudaGetDeviceCount(&n) == cudaSuccess && n > 0;
}

template <int D>
void compare_device_with_host() {
  if (!have_gpu()) GTEST_SKIP() << "no CUDA device present: suite functors compiled for the device, not run";
  std::vector<point_set<D>> points;
  for (int k = 0; k < kPoints; ++k) points.push_back(make_points<D>(k));
  const std::size_t n = static_cast<std::size_t>(kPoints) * kFunctors;
  point_set<D>* d_points = nullptr;
  double* d_out = nullptr;
  cudaError_t err = cudaMalloc(&d_points, kPoints * sizeof(point_set<D>));
  if (err == cudaSuccess) err = cudaMalloc(&d_out, n * sizeof(double));
  if (err == cudaSuccess)
    err = cudaMemcpy(d_points, points.data(), kPoints * sizeof(point_set<D>), cudaMemcpyHostToDevice);
  if (err == cudaSuccess) {
    evaluate_kernel<D><<<(kPoints + 127) / 128, 128>>>(d_points, d_out);
    err = cudaGetLastError();
  }
  if (err == cudaSuccess) err = cudaDeviceSynchronize();
  std::vector<double> dev(n);
  if (err == cudaSuccess) err = cudaMemcpy(dev.data(), d_out, n * sizeof(double), cudaMemcpyDeviceToHost);
  cudaFree(d_points);
  cudaFree(d_out);
  ASSERT_EQ(err, cudaSuccess) << cudaGetErrorName(err) << ": " << cudaGetErrorString(err);
  double host[kFunctors];
  for (int k = 0; k < kPoints; ++k) {
    evaluate_all<D>(points[k], host);
    for (int i = 0; i < kFunctors; ++i) {
      const double d = dev[static_cast<std::size_t>(k) * kFunctors + i];
      EXPECT_LE(std::fabs(d - host[i]), kRelTol * std::fabs(host[i]) + kAbsTol)
          << "functor " << i << " at point " << k << ": device " << d << ", host " << host[i];
    }
  }
}

TEST(SuiteDevice, FunctorsMatchHostDim6) { compare_device_with_host<6>(); }
TEST(SuiteDevice, FunctorsMatchHostDim8) { compare_device_with_host<8>(); }
TEST(SuiteDevice, FunctorsMatchHostDim9) { compare_device_with_host<9>(); }

}  // namespace

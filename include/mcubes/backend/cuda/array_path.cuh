#pragma once
/// @file backend/cuda/array_path.cuh
/// The array path of the CUDA backend (backend/cuda.cuh, cuda_backend::sample): the Vegas pass for a
/// *device array integrand* (integrand.hpp, is_device_array_integrand_v), one whose values are
/// computed by the caller's own device code over many points at once, such as a PyTorch or CuPy
/// function called from the Python module. A pass runs in slices of whole tiles (the tiles of
/// v_sample_kernel: aligned groups of B chunks, B the block size); per slice [t0, t1):
///  1. v_sample_kernel (No-Adjust) with a point_writer writes the point of every sample of the
///     slice's chunks into a device buffer, row-major (n, D), row = the sample's position in the
///     slice (array_rows);
///  2. the integrand is called once on the host with the device buffers: f(x, n, values, stream);
///  3. v_sample_kernel (V-Sample or No-Adjust, as the pass) with a value_reader recomputes each
///     sample's jacobian and bins and takes f's value from values[row]: it writes tiles [t0, t1) of
///     the tile sums, adds the bin terms and folds the flags, exactly as the one-point kernel does
///     for those tiles.
/// The tile sums, integer bin sums and order-independent flags are those of the one-point kernel,
/// so the pass is bitwise that of a one-point functor computing the same values, for any slice
/// size (cuda_launch_policy::array_call_points) and block size (tests/cuda/test_array_cuda.cu).
/// Point generation runs twice per sample (steps 1 and 3): a few ns, against the tens of ns a
/// framework's element-wise kernels take per point.
///
/// Memory: (D + 1) x 8 bytes per row of a slice, at most array_call_points rows unless one tile
/// holds more (then a slice is one tile), plus whatever the integrand allocates.

#include <cstddef>
#include <cstdint>
#include <vector>

#include <cuda_runtime.h>

#include "../../core/array_rows.hpp"
#include "../../core/sampler.hpp"
#include "../../error.hpp"
#include "../../point.hpp"
#include "check.cuh"

namespace mcubes {

/// A device array integrand of dimension D (integrand.hpp) made from a function object G with the
/// host call g(const double* x, std::size_t n, double* values, cudaStream_t stream) const (x, values
/// in device memory; see integrand.hpp for when values must be written). Trivially copyable when G
/// is. The one-point call (host only: the kernels never call it) evaluates one point through the
/// array call, with device copies; the backend uses it only to re-evaluate a failing sample for
/// its report. Runs on the CUDA backend with mcubes::vegas (methods.hpp refuses other backends).
template <int D, class G>
struct device_array_function {
  G g;
  static constexpr bool device_array_integrand = true;
  /// values[i] = f(x[i*D .. i*D + D)) for i < n, device memory, enqueued on `stream` at the latest.
  void operator()(const double* x, std::size_t n, double* values, void* stream) const {
    g(x, n, values, static_cast<cudaStream_t>(stream));
  }
  /// f(x) through the array call with n = 1 (device copies; synchronises the device).
  /// @throws cuda_error if a CUDA call fails; whatever g throws.
  __host__ double operator()(const point<D>& x) const {
    double* buf = nullptr;
    MCUBES_CUDA_CHECK(cudaMalloc(&buf, (D + 1) * sizeof(double)));
    struct release {
      double* p;
      ~release() { cudaFree(p); }
    } guard{buf};
    MCUBES_CUDA_CHECK(cudaMemcpy(buf, x.x, D * sizeof(double), cudaMemcpyHostToDevice));
    g(buf, 1, buf + D, cudaStream_t{});
    MCUBES_CUDA_CHECK(cudaDeviceSynchronize());
    double v = 0;
    MCUBES_CUDA_CHECK(cudaMemcpy(&v, buf + D, sizeof(double), cudaMemcpyDeviceToHost));
    return v;
  }
};

namespace cuda_detail {

/// Writes the point of sample `index` (the one make_sample gives the kernels) to out[0..D).
template <int D>
__global__ void sample_point_kernel(sampling_params<D> sp, map_view<D> map, std::uint64_t index, double* out) {
  std::uint64_t coord[D];
  cube_coordinates<D>(index / sp.p, sp.g, coord);
  point<D> x;
  int bin[D];
  make_sample<D>(sp, map, coord, index, x, bin);
  for (int j = 0; j < D; ++j) out[j] = x[j];
}

}  // namespace cuda_detail
}  // namespace mcubes

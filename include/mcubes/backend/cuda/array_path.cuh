#pragma once
/// @file backend/cuda/array_path.cuh
/// The array path of the CUDA backend (backend/cuda.cuh, cuda_backend::sample_passes): the Vegas pass for a
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
///
/// VEGAS+ counts (core/cube_counts.hpp): a sub-cube's samples are not p consecutive rows, so before
/// the slices the pass computes the row of every selected sub-cube's first sample (cube_rows_kernel
/// and cub::DeviceScan's exclusive sum of the counts: one 64-bit word per sub-cube, O(m), none per
/// sample; core/array_rows.hpp) and the rows at the tiles' ends (tile_rows_kernel, copied to the
/// host), from which the slices are cut: whole tiles of at most array_call_points rows (at least
/// one tile). A slice's heavy sub-cubes (backend/cuda/heavy_cubes.cuh) are sampled by segments
/// before each of its two launches (listed once), as in the one-point pass: the same sums
/// (core/sampler.hpp's segment rule), so the pass is bitwise the one-point functor's under VEGAS+
/// too, and no thread walks a sub-cube of tens of thousands of samples alone (measured: 28x).

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <vector>

#include <cub/device/device_scan.cuh>
#include <cuda_runtime.h>

#include "../../core/array_rows.hpp"
#include "../../core/sampler.hpp"
#include "../../error.hpp"
#include "../../point.hpp"
#include "check.cuh"
#include "device_array.cuh"

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

/// VEGAS+ rows, step 1: rows[o] = the samples of the o-th selected sub-cube (detail::selected_cube_count,
/// from chunk 0), o < n; rows[n] = 0 (the exclusive sum's total). Grid-stride.
template <int D>
__global__ void cube_rows_kernel(sampling_params<D> sp, std::uint64_t stride, std::uint64_t n, std::uint64_t* rows) {
  for (std::uint64_t o = blockIdx.x * static_cast<std::uint64_t>(blockDim.x) + threadIdx.x; o <= n;
       o += static_cast<std::uint64_t>(gridDim.x) * blockDim.x)
    rows[o] = o < n ? detail::selected_cube_count<D>(sp, stride, 0, o) : 0;
}

/// VEGAS+ rows, step 3: out[t] = first_row[min(t * cubes_per_tile, n)] for t <= n_tiles (the row of
/// each tile's first sample; out[n_tiles] = the pass's rows). Grid-stride.
template <int Unused = 0>  // a template: vague linkage (a program may include this header in several units)
__global__ void tile_rows_kernel(const std::uint64_t* first_row, std::uint64_t n, std::uint64_t cubes_per_tile,
                                 std::uint64_t n_tiles, std::uint64_t* out) {
  for (std::uint64_t t = blockIdx.x * static_cast<std::uint64_t>(blockDim.x) + threadIdx.x; t <= n_tiles;
       t += static_cast<std::uint64_t>(gridDim.x) * blockDim.x) {
    const std::uint64_t o = t * cubes_per_tile;
    out[t] = first_row[o < n ? o : n];
  }
}

/// The device memory of the array path's VEGAS+ rows (grown, never shrunk).
struct array_row_buffers {
  device_array<std::uint64_t> counts, first_row;  ///< n + 1 each
  device_array<std::uint64_t> tile_rows;          ///< n_tiles + 1
  device_array<unsigned char> scan_scratch;
  std::vector<std::uint64_t> host_tile_rows;
};

/// Steps 1-3 of the VEGAS+ rows for a pass over n_sel selected chunks (chunk sel * stride) in tiles
/// of B chunks: rb.first_row holds the exclusive sums (n_sel * chunk_cubes + 1 words), and
/// rb.host_tile_rows the row of every tile's first sample (n_tiles + 1 values, the last the pass's
/// rows). Synchronises the stream once. @throws cuda_error if a CUDA call fails.
template <int D>
void make_array_rows(array_row_buffers& rb, const sampling_params<D>& sp, std::uint64_t stride, std::uint64_t n_sel,
                     std::uint64_t B, std::uint64_t n_tiles, cudaStream_t stream, int multiprocessors) {
  const std::uint64_t n = n_sel * sp.chunk_cubes;
  if (rb.counts.size() < n + 1) rb.counts = device_array<std::uint64_t>(n + 1);
  if (rb.first_row.size() < n + 1) rb.first_row = device_array<std::uint64_t>(n + 1);
  if (rb.tile_rows.size() < n_tiles + 1) rb.tile_rows = device_array<std::uint64_t>(n_tiles + 1);
  const unsigned T = 256;
  const auto grid_for = [&](std::uint64_t k) {
    return static_cast<unsigned>(std::min<std::uint64_t>((k + T - 1) / T, 32ull * multiprocessors));
  };
  cube_rows_kernel<D><<<grid_for(n + 1), T, 0, stream>>>(sp, stride, n, rb.counts.data());
  MCUBES_CUDA_CHECK_LAUNCH("cube_rows_kernel");
  MCUBES_EXPECTS(n + 1 <= 0x7fffffffull, "the array path's VEGAS+ rows: too many sub-cubes (", n, ")");
  std::size_t bytes = 0;
  MCUBES_CUDA_CHECK(cub::DeviceScan::ExclusiveSum(nullptr, bytes, rb.counts.data(), rb.first_row.data(), static_cast<int>(n + 1),
                                                  stream));
  if (rb.scan_scratch.size() < bytes) rb.scan_scratch = device_array<unsigned char>(bytes);
  MCUBES_CUDA_CHECK(cub::DeviceScan::ExclusiveSum(rb.scan_scratch.data(), bytes, rb.counts.data(), rb.first_row.data(),
                                                  static_cast<int>(n + 1), stream));
  tile_rows_kernel<><<<grid_for(n_tiles + 1), T, 0, stream>>>(rb.first_row.data(), n, B * sp.chunk_cubes, n_tiles,
                                                             rb.tile_rows.data());
  MCUBES_CUDA_CHECK_LAUNCH("tile_rows_kernel");
  rb.host_tile_rows.resize(static_cast<std::size_t>(n_tiles) + 1);
  MCUBES_CUDA_CHECK(cudaMemcpyAsync(rb.host_tile_rows.data(), rb.tile_rows.data(), (n_tiles + 1) * sizeof(std::uint64_t),
                                    cudaMemcpyDeviceToHost, stream));
  MCUBES_CUDA_CHECK(cudaStreamSynchronize(stream));
}

}  // namespace cuda_detail
}  // namespace mcubes

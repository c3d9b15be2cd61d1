#pragma once
/// @file backend/cuda/adapt.cuh
/// Adaptation of the maps on the device (cuda_backend::adapt_map, adapt_batch): the launches of
/// adapt_map_kernel / adapt_map_batch_kernel (backend/cuda/adapt_kernels.cuh) over the bins of the
/// last V-Sample pass, which never leave the device; the edges are those of adaptive_map::adapt,
/// bit for bit. The kernels' scratch (per block adapt_scratch_doubles(n_bins) doubles) is in
/// shared memory when it fits without an opt-in, else in global memory.

#include <cuda_runtime.h>

#include <cstddef>
#include <utility>
#include <vector>

#include "../../core/sampler.hpp"
#include "../../error.hpp"
#include "adapt_kernels.cuh"
#include "check.cuh"
#include "device_array.cuh"
#include "device_map.cuh"
#include "occupancy.cuh"
#include "pass_buffers.cuh"

namespace mcubes {
namespace cuda_detail {

/// Launches the adapt kernels of one backend (one call at a time).
class map_adapter {
 public:
  /// Adapts `map` to the bins of the last V-Sample pass in `buf` (sums: that pass's; symmetric:
  /// one block for all axes) in `stream`; zeroes the bins it reads. Asynchronous.
  /// @throws invalid_input if sums is not the last pass's; cuda_error if a CUDA call fails.
  template <int D>
  void adapt(const device_map<D>& map, pass_buffers& buf, const iteration_sums& sums, double alpha, double floor,
             bool symmetric, cudaStream_t stream) {
    const int n = map.n_bins;
    buf.ensure_bins(static_cast<std::size_t>(D) * n, stream);
    const unsigned blocks = symmetric ? 1u : static_cast<unsigned>(D);
    double* global_scratch = nullptr;
    std::size_t smem = scratch_bytes(n);
    if (!scratch_in_shared(n)) {  // large n_bins: scratch in global memory
      if (buf.adapt_scratch.size() < blocks * adapt_scratch_doubles(n))
        buf.adapt_scratch = device_array<double>(blocks * adapt_scratch_doubles(n));
      global_scratch = buf.adapt_scratch.data();
      smem = 0;
    }
    MCUBES_EXPECTS(sums.top_level == buf.last_top, "adapt_map: the sums' top bin level ", sums.top_level,
                   " is not that of the last adapting pass (", buf.last_top, ")");
    adapt_map_kernel<adapt_threads><<<blocks, adapt_threads, smem, stream>>>(
        map.edges.data(), buf.bins.data(), buf.over.data(), sums.top_level, n, D, symmetric, alpha, floor, global_scratch);
    MCUBES_CUDA_CHECK_LAUNCH("adapt_map_kernel");
    buf.bins_adapted();
  }

  /// Adapts map k of batch b to the bins of its last V-Sample pass for each (k, sums) in `items`,
  /// in one launch in `stream`; zeroes the bins it reads. Asynchronous.
  /// @throws invalid_input if a sums' top level is not its last pass's; cuda_error if a CUDA call fails.
  template <int D, class P>
  void adapt_batch(batch_state<D, P>& b, const std::vector<std::pair<std::size_t, const iteration_sums*>>& items,
                   double alpha, double floor, bool symmetric, cudaStream_t stream) {
    const int n = b.n_bins;
    const unsigned per_item = symmetric ? 1u : static_cast<unsigned>(D);
    double* global_scratch = nullptr;
    std::size_t smem = scratch_bytes(n);
    if (!scratch_in_shared(n)) {
      const std::size_t need = items.size() * per_item * adapt_scratch_doubles(n);
      if (b.adapt_scratch.size() < need) b.adapt_scratch = device_array<double>(need);
      global_scratch = b.adapt_scratch.data();
      smem = 0;
    }
    b.adapt_copied.wait();  // the device has read the pinned adapt items of the last call
    for (std::size_t j = 0; j < items.size(); ++j) {
      const std::size_t k = items[j].first;
      MCUBES_EXPECTS(items[j].second->top_level == b.top_level[k], "adapt_batch: the sums' top bin level ",
                     items[j].second->top_level, " is not that of integral ", k, "'s last adapting pass (", b.top_level[k], ")");
      b.host_adapt_items.data()[j] = adapt_item{b.maps.edges(k), b.bins_of(k), b.over[k].data(), b.top_level[k]};
      b.clean[k] = 1;
      b.over_dirty[k] = 0;
    }
    MCUBES_CUDA_CHECK(cudaMemcpyAsync(b.adapt_items.data(), b.host_adapt_items.data(), items.size() * sizeof(adapt_item),
                                      cudaMemcpyHostToDevice, stream));
    b.adapt_copied.record(stream);
    const dim3 grid(static_cast<unsigned>(items.size()), per_item);
    adapt_map_batch_kernel<adapt_threads><<<grid, adapt_threads, smem, stream>>>(b.adapt_items.data(), n, D, symmetric,
                                                                                alpha, floor, global_scratch);
    MCUBES_CUDA_CHECK_LAUNCH("adapt_map_batch_kernel");
  }

 private:
  static std::size_t scratch_bytes(int n_bins) { return adapt_scratch_doubles(n_bins) * sizeof(double); }
  /// Whether the scratch of a kernel block for n_bins bins fits next to the kernel's static shared
  /// memory (CUB temporaries, the tree; queried once) within adapt_smem_limit (occupancy.cuh).
  bool scratch_in_shared(int n_bins) {
    if (static_smem_ < 0) {
      cudaFuncAttributes attr{};
      MCUBES_CUDA_CHECK(cudaFuncGetAttributes(&attr, adapt_map_kernel<adapt_threads>));
      static_smem_ = static_cast<long>(attr.sharedSizeBytes);
    }
    return scratch_bytes(n_bins) + static_cast<std::size_t>(static_smem_) <= adapt_smem_limit;
  }

  long static_smem_ = -1;  ///< static shared memory of adapt_map_kernel (queried once)
};

}  // namespace cuda_detail
}  // namespace mcubes

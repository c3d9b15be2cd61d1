#pragma once
/// @file backend/cuda/adapt.cuh
/// Adaptation of the maps on the device (cuda_backend::adapt_map, adapt_batch): the launches of
/// adapt_map_kernel / adapt_map_batch_kernel (backend/cuda/adapt_kernels.cuh) over the bins of the
/// last V-Sample pass, which never leave the device; the edges are those of adaptive_map::adapt,
/// bit for bit. The kernels' scratch (per block adapt_scratch_doubles(n_bins) doubles) is in
/// shared memory when it fits without an opt-in, else in global memory.
///
/// The adaptation behind a pass (cuda_launch_policy::adapt_after_pass): a run that will adapt its
/// map to an adapting pass's bins asks for it before the pass (ask_after_next_pass); the pass
/// launches it behind its result in the stream (launch_asked), writing the new edges to the map
/// storage's spare buffer and reading the pass's top bin level on the device, and the host waits
/// for the result alone, so that the kernel runs while the host takes the sums. adapt() then finds
/// it queued and makes the spare the map's edges (device_map_storage::take_spare: no copy, no
/// launch). Where the run does not adapt to that pass (a rescaled or failed iteration) the map
/// keeps its edges: the spare is not taken. The bins are zeroed either way (a rescaled pass
/// accumulates them afresh). The same kernel and arguments: the same edges, bit for bit.

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

/// The settings of one map adaptation (adapt_map's alpha, floor, symmetric).
struct adapt_request {
  double alpha = 0;
  double floor = 0;
  bool symmetric = false;
  bool operator==(const adapt_request& o) const noexcept {
    return alpha == o.alpha && floor == o.floor && symmetric == o.symmetric;
  }
};

/// Launches the adapt kernels of one backend (one call at a time).
class map_adapter {
 public:
  /// Adapts `map` to the bins of the last V-Sample pass in `buf` (sums: that pass's; symmetric:
  /// one block for all axes) in `stream`; zeroes the bins it reads. Asynchronous. Where the
  /// adaptation was queued behind that pass for this map and settings (launch_asked), takes its
  /// edges from `maps` instead of launching.
  /// @throws invalid_input if sums is not the last pass's, or an adaptation with other settings
  ///         was queued behind it; cuda_error if a CUDA call fails.
  template <int D>
  void adapt(device_map<D>& map, pass_buffers& buf, const iteration_sums& sums, double alpha, double floor,
             bool symmetric, device_map_storage& maps, cudaStream_t stream) {
    MCUBES_EXPECTS(sums.top_level == buf.last_top, "adapt_map: the sums' top bin level ", sums.top_level,
                   " is not that of the last adapting pass (", buf.last_top, ")");
    if (queued_ != nullptr) {  // it read (and zeroed) the bins: the only adaptation to them there can be
      MCUBES_EXPECTS(queued_ == map.edges.data() && queued_request_ == (adapt_request{alpha, floor, symmetric}),
                     "adapt_map: the adaptation queued behind the pass was of another map or had other settings");
      queued_ = nullptr;
      maps.take_spare(map);
      ++used_after_pass_;
      return;
    }
    launch<D>(map.edges.data(), map.edges.data(), map.n_bins, buf, sums.top_level, nullptr, 0.0,
              adapt_request{alpha, floor, symmetric}, stream);
    buf.bins_adapted();
  }

  /// Asks for the adaptation `q` behind the next single adapting pass (the driver, before it).
  void ask_after_next_pass(const adapt_request& q) noexcept {
    asked_ = q;
    has_asked_ = true;
  }
  /// Takes what ask_after_next_pass asked for (false if nothing), forgetting it.
  bool take_asked(adapt_request& q) noexcept {
    q = asked_;
    return std::exchange(has_asked_, false);
  }
  /// Forgets an adaptation queued behind a pass that was not taken (the map or bins change otherwise).
  void drop_queued() noexcept { queued_ = nullptr; }

  /// Queues the adaptation `q` of `map` to the bins of the pass just queued in `stream` (its
  /// result in buf.result, its bin scale `bin_scale`) into the spare edges of `maps`, for adapt() to
  /// take; nothing if `map` is not the storage's current map. Zeroes the bins it reads, which the
  /// caller records (pass_buffers::bins_adapted) once the pass's top level is known.
  /// @returns whether it was queued. @throws cuda_error if a CUDA call fails.
  template <int D>
  bool launch_asked(const device_map<D>& map, const adapt_request& q, pass_buffers& buf, double bin_scale,
                    device_map_storage& maps, cudaStream_t stream) {
    queued_ = nullptr;
    double* spare = maps.spare_for(map);
    if (spare == nullptr) return false;
    const auto* flags = reinterpret_cast<const device_flags*>(reinterpret_cast<const char*>(buf.result.data()) +
                                                              offsetof(pass_result, flags));  // no host access
    launch<D>(map.edges.data(), spare, map.n_bins, buf, 0, flags, bin_scale, q, stream);
    queued_ = map.edges.data();
    queued_request_ = q;
    return true;
  }
  /// The adaptations so far that adapt() took from behind their pass.
  std::uint64_t used_after_pass() const noexcept { return used_after_pass_; }

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
  /// adapt_map_kernel from `edges` into `out` (top level `top_level`, or read from `top_from`).
  template <int D>
  void launch(const double* edges, double* out, int n, pass_buffers& buf, int top_level, const device_flags* top_from,
              double bin_scale, const adapt_request& q, cudaStream_t stream) {
    buf.ensure_bins(static_cast<std::size_t>(D) * n, stream);
    const unsigned blocks = q.symmetric ? 1u : static_cast<unsigned>(D);
    double* global_scratch = nullptr;
    std::size_t smem = scratch_bytes(n);
    if (!scratch_in_shared(n)) {  // large n_bins: scratch in global memory
      if (buf.adapt_scratch.size() < blocks * adapt_scratch_doubles(n))
        buf.adapt_scratch = device_array<double>(blocks * adapt_scratch_doubles(n));
      global_scratch = buf.adapt_scratch.data();
      smem = 0;
    }
    adapt_map_kernel<adapt_threads><<<blocks, adapt_threads, smem, stream>>>(edges, out, buf.bins.data(), buf.over.data(),
                                                                            top_level, top_from, bin_scale, n, D,
                                                                            q.symmetric, q.alpha, q.floor, global_scratch);
    MCUBES_CUDA_CHECK_LAUNCH("adapt_map_kernel");
  }

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
  adapt_request asked_;                ///< ask_after_next_pass, if has_asked_
  bool has_asked_ = false;
  const double* queued_ = nullptr;     ///< the edges of the map whose adaptation launch_asked queued (null: none)
  adapt_request queued_request_;       ///< its settings
  std::uint64_t used_after_pass_ = 0;  ///< used_after_pass()
};

}  // namespace cuda_detail
}  // namespace mcubes

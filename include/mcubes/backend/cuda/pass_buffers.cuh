#pragma once
/// @file backend/cuda/pass_buffers.cuh
/// The device and pinned buffers of the CUDA backend's passes and their bookkeeping:
///  - pass_buffers: those of single passes (tile values, the pass result and flags, the replay of
///    a failing sample, the bins and their overflow levels with which of them are dirty, the array
///    path's slices, the vector passes' tiles), kept between passes;
///  - batch_state<D, P>: those of a parameter batch of n integrals, per integral too;
///  - pass_sums: the sums of a pass as the loop takes them, from the device's result.
/// Bins: level 0 (D n_bins accumulators) and max_bin_level overflow levels; a pass that adapts
/// starts on zero bins (what the last adapted pass read was zeroed by the adapt kernel; levels a
/// pass wrote and nobody adapted to are zeroed before the next adapting pass).

#include <cuda_runtime.h>

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <vector>

#include "../../core/reduction.hpp"
#include "../../core/sampler.hpp"
#include "../../error.hpp"
#include "adapt_kernels.cuh"
#include "array_path.cuh"
#include "batch_heavy_cubes.cuh"
#include "batch_kernels.cuh"
#include "check.cuh"
#include "device_array.cuh"
#include "device_map.cuh"
#include "heavy_cubes.cuh"
#include "sorted_sample.cuh"
#include "vegas_kernels.cuh"

namespace mcubes {
namespace cuda_detail {

/// The sums of a pass as the loop takes them (iteration_sums: no bins, they stay on the device),
/// from the device's fixed-tree sums and flags; with `adapt`, top_level from the largest term and
/// the pass's bin scale.
inline iteration_sums pass_sums(double estimate, double variance, const device_flags& fl, bool adapt, double bin_scale) {
  iteration_sums o;
  o.estimate = estimate;
  o.variance = variance;
  o.flags.n_nonzero = fl.n_nonzero;
  o.flags.first_non_finite = fl.first_non_finite;
  double maxc;
  std::memcpy(&maxc, &fl.max_contribution_bits, sizeof maxc);
  o.flags.max_contribution = maxc;
  if (adapt) o.top_level = top_bin_level(maxc, bin_scale);  // the highest level any term of the pass reached
  return o;
}

/// The buffers of the single passes of one backend (one pass at a time). Not copyable.
struct pass_buffers {
  /// Allocates the one-value buffers and sets the flags to their initial value (in `stream`,
  /// so that its kernels see it; synchronous). @throws cuda_error if a CUDA call fails.
  explicit pass_buffers(cudaStream_t stream) {
    flags = device_array<device_flags>(1);
    result = device_array<pass_result>(1);
    replay = device_array<double>(1);
    host_result = pinned_array<pass_result>(1);
    host_replay = pinned_array<double>(1);
    result_ready = cuda_event::create();
    const device_flags init{0ull, ~0ull, 0ull};
    // reset after each pass by tree_reduce_kernel; in the backend's stream, so that its kernels see it
    MCUBES_CUDA_CHECK(cudaMemcpyAsync(flags.data(), &init, sizeof init, cudaMemcpyHostToDevice, stream));
    MCUBES_CUDA_CHECK(cudaStreamSynchronize(stream));
  }
  pass_buffers(const pass_buffers&) = delete;
  pass_buffers& operator=(const pass_buffers&) = delete;

  /// Room for the values of n_tiles tiles (tile_est, tile_var).
  void ensure_tiles(std::uint64_t n_tiles) {
    if (tile_est.size() < n_tiles) {
      tile_est = device_array<double>(n_tiles);
      tile_var = device_array<double>(n_tiles);
    }
  }

  /// Device bins for n values: level 0 (bins) and the max_bin_level overflow levels (over,
  /// 256 bytes per bin in all, zeroed once here; only levels a pass reached are zeroed again).
  void ensure_bins(std::size_t n, cudaStream_t stream) {
    if (bins.size() < n) {
      bins = device_array<bin_accumulator>(n);
      over = device_array<bin_accumulator>(static_cast<std::size_t>(max_bin_level) * n);
      MCUBES_CUDA_CHECK(cudaMemsetAsync(bins.data(), 0, n * sizeof(bin_accumulator), stream));
      MCUBES_CUDA_CHECK(cudaMemsetAsync(over.data(), 0, over.size() * sizeof(bin_accumulator), stream));
      bins_clean = true;
      over_dirty = 0;
    }
  }

  /// Before an adapting pass over n_bin_values bins: zero bins (queued in `stream`).
  void begin_adapting_pass(std::size_t n_bin_values, cudaStream_t stream) {
    ensure_bins(n_bin_values, stream);
    if (!bins_clean) MCUBES_CUDA_CHECK(cudaMemsetAsync(bins.data(), 0, n_bin_values * sizeof(bin_accumulator), stream));
    if (over_dirty > 0)  // overflow levels of a pass that was not adapted to (the probe, a rescaled pass)
      MCUBES_CUDA_CHECK(cudaMemsetAsync(over.data(), 0, over_dirty * sizeof(bin_accumulator), stream));
    bins_clean = false;
    over_dirty = 0;
  }
  /// After an adapting pass that reached overflow level top_level.
  void end_adapting_pass(int top_level, std::size_t n_bin_values) {
    last_top = top_level;
    over_dirty = static_cast<std::size_t>(top_level) * n_bin_values;
  }
  /// After the adapt kernel read (and zeroed) the bins of the last adapting pass.
  void bins_adapted() {
    bins_clean = true;
    over_dirty = 0;  // the kernel zeroed the levels it read, the only ones the last pass wrote
  }

  /// Copies `bins_in` (levels 0..top_level, level-major: iteration_sums::bins) to the device bins
  /// (synchronous). @throws invalid_input for a bad top level; cuda_error if a copy fails.
  void upload_bins(const std::vector<bin_accumulator>& bins_in, int top_level, cudaStream_t stream) {
    MCUBES_EXPECTS(top_level >= 0 && top_level <= max_bin_level && bins_in.size() % (top_level + 1) == 0,
                   "upload_bins: bad top level ", top_level, " for ", bins_in.size(), " sums");
    const std::size_t n_values = bins_in.size() / (top_level + 1);
    ensure_bins(n_values, stream);
    // in the backend's (non-blocking) stream: a plain cudaMemcpy from pageable memory may return
    // before its DMA is done, and the adapt kernel would not wait for it
    MCUBES_CUDA_CHECK(cudaMemcpyAsync(bins.data(), bins_in.data(), n_values * sizeof(bin_accumulator), cudaMemcpyHostToDevice,
                                      stream));
    if (top_level > 0)
      MCUBES_CUDA_CHECK(cudaMemcpyAsync(over.data(), bins_in.data() + n_values, top_level * n_values * sizeof(bin_accumulator),
                                        cudaMemcpyHostToDevice, stream));
    MCUBES_CUDA_CHECK(cudaStreamSynchronize(stream));
    bins_clean = false;
    over_dirty = top_level * n_values;
    last_top = top_level;
  }

  /// The value a replay kernel wrote to `replay`, copied to the host (synchronous).
  double replayed_value(cudaStream_t stream) {
    MCUBES_CUDA_CHECK(cudaMemcpyAsync(host_replay.data(), replay.data(), sizeof(double), cudaMemcpyDeviceToHost, stream));
    MCUBES_CUDA_CHECK(cudaStreamSynchronize(stream));
    return *host_replay.data();
  }

  device_array<double> tile_est, tile_var;  ///< per-tile estimate and variance sums of a scalar pass
  device_array<device_flags> flags;         ///< the pass's flags (reset by the tree kernels)
  device_array<pass_result> result;
  pinned_array<pass_result> host_result;
  device_array<double> replay;  ///< the value of a replayed failing sample
  pinned_array<double> host_replay;
  device_array<bin_accumulator> bins, over;
  bool bins_clean = false;      ///< bins all zero (after adapt_map_kernel or allocation)
  std::size_t over_dirty = 0;   ///< over is zero beyond its first over_dirty accumulators
  int last_top = 0;             ///< top bin level of the last adapting pass
  device_array<double> adapt_scratch;            ///< the adapt kernel's scratch when it is not in shared memory
  device_array<double> array_x, array_values;    ///< the array path's points and values of a slice
  array_row_buffers array_rows;                  ///< the array path's VEGAS+ rows (backend/cuda/array_path.cuh)
  device_array<double> vector_tiles, vector_out;  ///< vector passes: tile values (element-major), sums and flags
  pinned_array<double> host_vector_out;
  cuda_event result_ready;  ///< recorded after a pass's result where more work follows it in the stream (adapt.cuh)
  heavy_buffers heavy;  ///< VEGAS+ scalar passes: the heavy sub-cubes (backend/cuda/heavy_cubes.cuh)
  sorted_buffers sorted;  ///< VEGAS+ scalar passes: the light sub-cubes by count (backend/cuda/sorted_sample.cuh)
};

/// The device state of a parameter batch of n integrals: their maps (one buffer), parameters,
/// bins and overflow levels (one buffer each), and per integral the bookkeeping of which bins
/// are dirty. Owning; made by make_batch, used by one backend. Device memory: batch_bytes.
template <int D, class P>
struct batch_state {
  std::size_t n = 0;
  int n_bins = 0;
  const P* host_params = nullptr;  ///< the caller's parameters (host; for replays of failures)
  device_batch_maps<D> maps;       ///< n maps of D * (n_bins + 1) edges
  device_array<bin_accumulator> bins;
  std::vector<device_array<bin_accumulator>> over;  ///< integral k's overflow levels (empty until a pass reaches them)
  device_array<batch_item<D, P>> items;
  pinned_array<batch_item<D, P>> host_items;
  device_array<device_flags> flags;
  device_array<pass_result> results;
  pinned_array<pass_result> host_results;
  device_array<double> tile_est, tile_var;
  device_array<adapt_item> adapt_items;
  pinned_array<adapt_item> host_adapt_items;
  device_array<double> adapt_scratch;
  std::vector<unsigned char> clean;  ///< level-0 bins of integral k all zero
  std::vector<int> over_dirty;       ///< overflow levels of integral k that may be non-zero
  std::vector<int> top_level;        ///< top level of integral k's last V-Sample pass
  cuda_event adapt_copied;           ///< after the last copy of host_adapt_items
  cuda_event done;                   ///< after the started passes' results reached host_results (their
                                     ///< items were read before: the host may rewrite them then)
  std::vector<std::size_t> order;    ///< the started passes in launch order (adapting first)
  batch_heavy_buffers heavy;         ///< VEGAS+ passes: their heavy sub-cubes (batch_heavy_cubes.cuh)
  bool started = false;              ///< passes started and not yet finished
  std::size_t map_doubles() const { return static_cast<std::size_t>(D) * (n_bins + 1); }
  std::size_t bin_values() const { return static_cast<std::size_t>(D) * n_bins; }
  /// Integral k's level-0 bins (device pointer).
  bin_accumulator* bins_of(std::size_t k) const { return bins.data() + k * bin_values(); }
};

/// Device memory of a batch of n integrals in D dimensions with n_bins bins per axis and
/// parameters of type P (see cuda_backend::batch_bytes).
template <int D, class P>
std::size_t batch_bytes(std::size_t n, int n_bins) {
  const std::size_t per = 8 * static_cast<std::size_t>(D) * (n_bins + 1) + 16 * static_cast<std::size_t>(D) * n_bins +
                          sizeof(batch_item<D, P>) + sizeof(adapt_item) + 64;
  return n * per;
}

}  // namespace cuda_detail
}  // namespace mcubes

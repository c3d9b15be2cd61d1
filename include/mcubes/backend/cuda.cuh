#pragma once
/// @file backend/cuda.cuh
/// CUDA backend of the m-Cubes loop: owns the stream, the device buffers and the launch policy;
/// launches V-Sample / V-Sample-No-Adjust (backend/cuda/vegas_kernels.cuh), checks every call, and
/// copies back only the tile-tree result (2 doubles), 3 flags and, on adapting iterations, the
/// d x n_bins bin contributions. The map is uploaded only when it changed (after an adapting
/// iteration) and stays on the device otherwise. Memory use is independent of calls per
/// iteration (at most 2^20 / blockDim tile values).
///
/// Determinism contract: bitwise identical results on every run and for any threads_per_block
/// (a power of two in [32, 1024]) and any grid size (see vegas_kernels.cuh). Compared with the CPU
/// backend the sample points and the reduction tree are the same; the estimates agree to
/// floating-point rounding (nvcc contracts a*b+c into FMA by default and CUDA's exp/sin/... may
/// differ from glibc's in the last bit), bitwise where the integrand uses only +, -, *, /, sqrt
/// and the code is built with --fmad=false.

#include <cuda_runtime.h>

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <map>
#include <utility>
#include <string>
#include <vector>

#include "../core/sampler.hpp"
#include "../options.hpp"
#include "../core/stratification.hpp"
#include "cuda/check.cuh"
#include "cuda/device_array.cuh"
#include "cuda/vegas_kernels.cuh"

namespace mcubes {

/// Launch policy of the Vegas kernels.
struct cuda_launch_policy {
  int threads_per_block = 256;  ///< power of two in [32, 1024]; never changes the result
  int max_blocks = 0;           ///< 0: enough resident blocks to fill every multiprocessor (occupancy)
};

/// CUDA backend. Not thread-safe; one instance per host thread. Copy-free: holds device memory.
class cuda_backend {
 public:
  /// @throws invalid_input for a bad block size; cuda_error if there is no device or a call fails.
  explicit cuda_backend(cuda_launch_policy policy = {}, int device = 0) : policy_(policy), device_(device) {
    validate_block_size(policy_.threads_per_block, "threads_per_block");
    MCUBES_EXPECTS(policy_.max_blocks >= 0, "max_blocks must be non-negative, got ", policy_.max_blocks);
    if (cuda_device_count() <= device_) throw cuda_error("no CUDA device available (device " + std::to_string(device_) + " requested)");
    MCUBES_CUDA_CHECK(cudaSetDevice(device_));
    MCUBES_CUDA_CHECK(cudaGetDeviceProperties(&props_, device_));
    MCUBES_CUDA_CHECK(cudaStreamCreateWithFlags(&stream_, cudaStreamNonBlocking));
    flags_ = device_array<cuda_detail::device_flags>(1);
    result_ = device_array<double>(2);
    host_scalars_ = pinned_array<double>(3);
    host_flags_ = pinned_array<cuda_detail::device_flags>(1);
  }
  cuda_backend(const cuda_backend&) = delete;
  cuda_backend& operator=(const cuda_backend&) = delete;
  ~cuda_backend() {
    if (stream_) cudaStreamDestroy(stream_);
  }

  static std::string name() { return "cuda"; }
  const cudaDeviceProp& properties() const noexcept { return props_; }
  const cuda_launch_policy& policy() const noexcept { return policy_; }
  /// Number of blocks of the last V-Sample launch (for reports).
  int last_grid() const noexcept { return last_grid_; }
  /// Whether the last adapting launch kept its bins in shared memory.
  bool last_shared_bins() const noexcept { return last_shared_bins_; }

  /// One sampling pass (same contract as cpu_backend::sample). Synchronises the stream.
  template <int D, class F>
  iteration_sums sample(const F& f, const sampling_params<D>& sp, const stratification& st, const map_view<D>& host_map,
                        bool adapt, std::uint64_t stride = 1) const {
    const int B = policy_.threads_per_block;
    const std::uint64_t n_sel = (st.n_chunks + stride - 1) / stride;
    const std::uint64_t width = next_pow2(n_sel);
    const std::uint64_t tile = std::min<std::uint64_t>(B, width);  // tile = B leaves (padded)
    const std::uint64_t n_tiles = (n_sel + B - 1) / B;
    const int nb = host_map.n_bins;
    const std::size_t n_edges = static_cast<std::size_t>(D) * (nb + 1);
    const std::size_t n_bin_values = static_cast<std::size_t>(D) * nb;

    upload_map(host_map.edges, n_edges);
    if (tile_est_.size() < n_tiles) {
      tile_est_ = device_array<double>(n_tiles);
      tile_var_ = device_array<double>(n_tiles);
    }
    if (adapt && bins_.size() < n_bin_values) {
      bins_ = device_array<bin_accumulator>(n_bin_values);
      host_bins_ = pinned_array<bin_accumulator>(n_bin_values);
    }
    cuda_detail::device_flags init{0ull, ~0ull, 0ull};
    *host_flags_.data() = init;
    MCUBES_CUDA_CHECK(cudaMemcpyAsync(flags_.data(), host_flags_.data(), sizeof(init), cudaMemcpyHostToDevice, stream_));
    if (adapt)
      MCUBES_CUDA_CHECK(cudaMemsetAsync(bins_.data(), 0, n_bin_values * sizeof(bin_accumulator), stream_));

    const map_view<D> dmap{edges_.data(), nb};
    std::size_t smem = 2 * static_cast<std::size_t>(B) * sizeof(double);
    bool shared_bins = false;
    if (adapt) {
      const std::size_t with_bins = smem + n_bin_values * sizeof(bin_accumulator);
      if (with_bins <= static_cast<std::size_t>(props_.sharedMemPerBlockOptin)) {
        smem = with_bins;
        shared_bins = true;
      }
    }
    const int grid = adapt ? launch<D, F, true>(f, sp, dmap, stride, n_sel, n_tiles, shared_bins, smem)
                           : launch<D, F, false>(f, sp, dmap, stride, n_sel, n_tiles, false, smem);
    last_grid_ = grid;
    if (adapt) last_shared_bins_ = shared_bins;

    // finish the fixed tree over the tile values (padded width: width / tile)
    const unsigned T = 1024;
    cuda_detail::tree_reduce_kernel<<<1, T, 2 * T * sizeof(double), stream_>>>(tile_est_.data(), tile_var_.data(), n_tiles,
                                                                              width / tile, result_.data());
    MCUBES_CUDA_CHECK_LAUNCH("tree_reduce_kernel");
    MCUBES_CUDA_CHECK(cudaMemcpyAsync(host_scalars_.data(), result_.data(), 2 * sizeof(double), cudaMemcpyDeviceToHost, stream_));
    MCUBES_CUDA_CHECK(cudaMemcpyAsync(host_flags_.data(), flags_.data(), sizeof(init), cudaMemcpyDeviceToHost, stream_));
    if (adapt)
      MCUBES_CUDA_CHECK(cudaMemcpyAsync(host_bins_.data(), bins_.data(), n_bin_values * sizeof(bin_accumulator),
                                        cudaMemcpyDeviceToHost, stream_));
    MCUBES_CUDA_CHECK(cudaStreamSynchronize(stream_));

    iteration_sums out;
    out.estimate = host_scalars_[0];
    out.variance = host_scalars_[1];
    const cuda_detail::device_flags fl = *host_flags_.data();
    out.flags.n_nonzero = fl.n_nonzero;
    out.flags.first_non_finite = fl.first_non_finite;
    double maxc;
    std::memcpy(&maxc, &fl.max_contribution_bits, sizeof maxc);
    out.flags.max_contribution = maxc;
    if (fl.first_non_finite != ~0ull) {  // replay that one sample to report its value
      cuda_detail::replay_sample_kernel<D, F><<<1, 1, 0, stream_>>>(f, sp, dmap, fl.first_non_finite, result_.data());
      MCUBES_CUDA_CHECK_LAUNCH("replay_sample_kernel");
      MCUBES_CUDA_CHECK(cudaMemcpyAsync(host_scalars_.data() + 2, result_.data(), sizeof(double), cudaMemcpyDeviceToHost, stream_));
      MCUBES_CUDA_CHECK(cudaStreamSynchronize(stream_));
      out.flags.non_finite_value = host_scalars_[2];
    }
    if (adapt) out.bins.assign(host_bins_.data(), host_bins_.data() + n_bin_values);
    return out;
  }

 private:
  template <int D, class F, bool Adapt>
  int launch(const F& f, const sampling_params<D>& sp, const map_view<D>& dmap, std::uint64_t stride, std::uint64_t n_sel,
             std::uint64_t n_tiles, bool shared_bins, std::size_t smem) const {
    const int B = policy_.threads_per_block;
    auto kernel = B <= 256 ? cuda_detail::v_sample_kernel<D, F, Adapt, 256> : cuda_detail::v_sample_kernel<D, F, Adapt, 1024>;
    int& per_sm = occupancy_[{reinterpret_cast<const void*>(kernel), smem}];  // queried once per kernel and size
    if (per_sm == 0) {
      if (smem > 48 * 1024)
        MCUBES_CUDA_CHECK(cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, static_cast<int>(smem)));
      MCUBES_CUDA_CHECK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, kernel, B, smem));
    }
    if (per_sm < 1)
      throw cuda_error("V-Sample kernel cannot run with " + std::to_string(B) + " threads per block and " +
                       std::to_string(smem) + " bytes of shared memory");
    std::uint64_t grid = static_cast<std::uint64_t>(per_sm) * props_.multiProcessorCount;
    if (policy_.max_blocks > 0) grid = std::min<std::uint64_t>(grid, policy_.max_blocks);
    grid = std::max<std::uint64_t>(1, std::min<std::uint64_t>(grid, n_tiles));
    kernel<<<static_cast<unsigned>(grid), B, smem, stream_>>>(f, sp, dmap, stride, n_sel, n_tiles, tile_est_.data(),
                                                              tile_var_.data(), bins_.data(), shared_bins, flags_.data());
    MCUBES_CUDA_CHECK_LAUNCH("v_sample_kernel");
    return static_cast<int>(grid);
  }

  void upload_map(const double* edges, std::size_t n) const {
    if (map_cache_.size() == n && std::memcmp(map_cache_.data(), edges, n * sizeof(double)) == 0) return;
    if (edges_.size() != n) edges_ = device_array<double>(n);
    map_cache_.assign(edges, edges + n);
    MCUBES_CUDA_CHECK(cudaMemcpyAsync(edges_.data(), map_cache_.data(), n * sizeof(double), cudaMemcpyHostToDevice, stream_));
  }

  cuda_launch_policy policy_;
  int device_ = 0;
  cudaDeviceProp props_{};
  cudaStream_t stream_ = nullptr;
  mutable device_array<double> edges_, tile_est_, tile_var_, result_;
  mutable device_array<bin_accumulator> bins_;
  mutable device_array<cuda_detail::device_flags> flags_;
  mutable pinned_array<double> host_scalars_;
  mutable pinned_array<cuda_detail::device_flags> host_flags_;
  mutable pinned_array<bin_accumulator> host_bins_;
  mutable std::vector<double> map_cache_;
  mutable std::map<std::pair<const void*, std::size_t>, int> occupancy_;
  mutable int last_grid_ = 0;
  mutable bool last_shared_bins_ = false;
};

}  // namespace mcubes

#pragma once
/// @file backend/cuda/balanced_sample.cuh
/// V-Sample and No-Adjust of a VEGAS+ scalar pass with the threads balanced by samples instead of
/// by chunks. In the chunk-per-thread kernel (vegas_kernels.cuh, v_sample_kernel) the threads of a
/// warp take adjacent chunks, and where a peak crosses a row of sub-cubes some of them hold up to
/// T / n_min times the samples of their neighbours (T = heavy_above): the warp waits for its
/// heaviest thread. Balanced, f4 8-D at 3e9 calls runs 29 % faster on an H200, but 4-D Gaussians
/// at 1e8 calls 8 % slower (bench/results/2026-11-29-vegas-plus-balance.md): an opt-in of the
/// launch policy (cuda_launch_policy::balance_above) until the cost model says which passes gain.
///
/// Steps (launched by backend/cuda/vegas_pass.cuh, sample_pass, after the heavy sub-cubes,
/// heavy_cubes.cuh, whose step 1 also gives each chunk's work W_ch: the samples of its light
/// sub-cubes plus a cost per sub-cube and per chunk, and their exclusive sums P; only for passes
/// whose chunk-per-thread warps would idle much, balanced_pays, and only where the launch policy
/// asks for it: cuda_launch_policy::balance_above, 0 by default, with the figures):
///  1. balanced_sample_kernel: thread t of the grid's n threads takes the chunks whose P_ch lies in
///     [t W / n, (t + 1) W / n) (binary search; W the total), samples each with sample_chunk (the
///     heavy sub-cubes' sums read, as v_sample_kernel does) and writes its partial (estimate,
///     variance) to chunk_est[ch], chunk_var[ch]; bins in the block's shared memory when they fit
///     (flushed once per block), flags per thread then per warp (integer atomics);
///  2. balanced_tiles_kernel: tile k of B = the policy's block size chunks summed over the fixed
///     pairwise tree (block_tree_sum) into tile_est[k], tile_var[k], exactly as v_sample_tiles does
///     with the partials it computes; then tree_reduce_kernel as for every pass.
/// Determinism: each chunk's partial is sample_chunk's, the tree over the chunks the same, the bins
/// exact integers and the flags order-independent: the bits of v_sample_kernel, hence of the CPU's
/// serial pass, for any grid and block size. Extra device memory: 16 bytes per chunk (at most
/// 2^20 chunks) and the work sums, none per sample.

#include <cuda_runtime.h>

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <string>

#include "../../core/sampler.hpp"
#include "check.cuh"
#include "heavy_cubes.cuh"
#include "occupancy.cuh"
#include "vegas_kernels.cuh"

namespace mcubes {
namespace cuda_detail {

/// Whether the listed pass (list_heavy_cubes with work) takes balanced V-Sample under the policy's
/// balance_above (cuda_launch_policy): warp_cost >= balance_above * work. Never changes a result.
inline bool balanced_pays(const heavy_buffers& hb, double balance_above) {
  return balance_above > 0 && hb.work != 0 &&
         static_cast<double>(hb.warp_cost) >= balance_above * static_cast<double>(hb.work);
}

/// The chunk loop of balanced_sample_kernel for thread t of n_threads (map: in shared or global memory).
template <int D, class F, bool Adapt>
__device__ __forceinline__ void balanced_chunks(const F& f, const sampling_params<D>& sp, const map_view<D>& map,
                                                std::uint64_t n_chunks, const unsigned long long* __restrict__ work_first,
                                                double* chunk_est, double* chunk_var, shared_bin_sink& sink,
                                                thread_flags& fl, const philox_schedule& rng, const heavy_cube_sums& heavy) {
  no_bins none;
  const std::uint64_t total = work_first[n_chunks];
  const std::uint64_t n_threads = static_cast<std::uint64_t>(gridDim.x) * blockDim.x;
  const std::uint64_t t = static_cast<std::uint64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  const std::uint64_t per = total / n_threads, rem = total % n_threads;
  const std::uint64_t lo = t * per + (t < rem ? t : rem), hi = lo + per + (t < rem ? 1 : 0);
  std::uint64_t a = 0, b = n_chunks;  // the first chunk with work_first[ch] >= lo
  while (a < b) {
    const std::uint64_t mid = a + (b - a) / 2;
    if (work_first[mid] < lo) a = mid + 1; else b = mid;
  }
  for (std::uint64_t ch = a; ch < n_chunks && work_first[ch] < hi; ++ch) {
    chunk_partial part;
    if constexpr (Adapt)
      part = sample_chunk<D>(f, sp, map, ch, sink, rng, no_poll{}, heavy);
    else
      part = sample_chunk<D>(f, sp, map, ch, none, rng, no_poll{}, heavy);
    chunk_est[ch] = part.estimate;
    chunk_var[ch] = part.variance;
    fl.merge(part);
  }
}

/// Step 1 over chunks [0, n_chunks) with work sums work_first[0..n_chunks] (exclusive; the total
/// last). V-Sample (Adapt: bins, in shared memory when shared_bins: D n_bins words first in the
/// dynamic shared memory) or No-Adjust; the map's edges after them when the launch gave room
/// (the kernel reads the size it got, as v_sample_kernel). Preconditions as v_sample_kernel's;
/// blockDim.x a multiple of 32, at most 256.
template <int D, class F, bool Adapt>
__global__ void __launch_bounds__(256, v_sample_min_blocks<Adapt, 256, F>)
    balanced_sample_kernel(F f, sampling_params<D> sp, map_view<D> map, std::uint64_t n_chunks,
                           const unsigned long long* __restrict__ work_first, double* chunk_est, double* chunk_var,
                           bin_accumulator* bins, bin_accumulator* over, bool shared_bins, device_flags* flags,
                           philox_schedule rng, heavy_cube_sums heavy) {
  thread_flags_block<D, Adapt>(map, bins, over, shared_bins, flags,
                               [&](const map_view<D>& m, shared_bin_sink& sink, thread_flags& fl) {
                                 balanced_chunks<D, F, Adapt>(f, sp, m, n_chunks, work_first, chunk_est, chunk_var, sink, fl,
                                                              rng, heavy);
                               });
}

/// Step 2: tiles [tile_first, tile_end) of blockDim.x chunks: tile k's chunk partials
/// chunk_est[k B + t] (0.0 at and past n_sel) summed over the fixed pairwise tree into tile_est[k],
/// tile_var[k]. blockDim.x: the block size whose tiles the pass's tree reduction expects.
template <int Unused = 0>  // a template: vague linkage (a program may include this header in several units)
__global__ void balanced_tiles_kernel(const double* chunk_est, const double* chunk_var, std::uint64_t n_sel,
                                   std::uint64_t tile_first, std::uint64_t tile_end, double* tile_est, double* tile_var) {
  tile_tree_sums(tile_first, tile_end, tile_est, tile_var, [&](std::uint64_t sel, double& e, double& v) {
    if (sel < n_sel) e = chunk_est[sel], v = chunk_var[sel];
  });
}

/// Steps 1 and 2 of a pass over every chunk (stride 1, no team split) whose heavy sub-cubes and
/// chunk work were listed (sample_heavy_cubes with `work`; `heavy` its view): the tile values of
/// tiles [0, n_tiles) of B = block chunks in tile_est, tile_var. Returns the grid of step 1.
/// @throws cuda_error if a launch fails or the kernel cannot run.
template <int D, class F, bool Adapt>
int launch_balanced_sample(const F& f, const sampling_params<D>& sp, const map_view<D>& dmap, std::uint64_t n_chunks,
                           std::uint64_t n_tiles, int block, heavy_buffers& hb, double* tile_est, double* tile_var,
                           bin_accumulator* bins, bin_accumulator* over, bool shared_bins, device_flags* flags,
                           const heavy_cube_sums& heavy, kernel_occupancy& occupancy, int multiprocessors,
                           cudaStream_t stream) {
  grow(hb.chunk_est, n_chunks);
  grow(hb.chunk_var, n_chunks);
  const int T = 256;
  const std::size_t smem_plain = Adapt && shared_bins ? static_cast<std::size_t>(D) * dmap.n_bins * sizeof(unsigned long long) : 0;
  const std::size_t smem_edges = smem_plain + static_cast<std::size_t>(D) * (dmap.n_bins + 1) * sizeof(double);
  auto kernel = balanced_sample_kernel<D, F, Adapt>;
  const auto [per_sm, smem] = occupancy.sampling_smem(kernel, T, smem_plain, smem_edges, "balanced V-Sample kernel");
  const unsigned grid = static_cast<unsigned>(per_sm) * static_cast<unsigned>(multiprocessors);  // one wave
  kernel<<<grid, T, smem, stream>>>(f, sp, dmap, n_chunks, hb.chunk_work_first.data(), hb.chunk_est.data(),
                                    hb.chunk_var.data(), bins, over, Adapt && shared_bins, flags,
                                    philox_schedule::make(sp.seed, stream_id::vegas, sp.iteration), heavy);
  MCUBES_CUDA_CHECK_LAUNCH("balanced_sample_kernel");
  const unsigned tiles_grid = static_cast<unsigned>(std::max<std::uint64_t>(1, std::min<std::uint64_t>(n_tiles, 32ull * multiprocessors)));
  balanced_tiles_kernel<><<<tiles_grid, block, 0, stream>>>(hb.chunk_est.data(), hb.chunk_var.data(), n_chunks, 0, n_tiles,
                                                        tile_est, tile_var);
  MCUBES_CUDA_CHECK_LAUNCH("balanced_tiles_kernel");
  return static_cast<int>(grid);
}

}  // namespace cuda_detail
}  // namespace mcubes

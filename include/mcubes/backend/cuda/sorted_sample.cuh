#pragma once
/// @file backend/cuda/sorted_sample.cuh
/// V-Sample and No-Adjust of a large VEGAS+ scalar pass with the light sub-cubes sorted by count.
/// In the chunk-per-thread kernel (vegas_kernels.cuh, v_sample_kernel) the lanes of a warp walk
/// the sub-cubes of their own chunks side by side, and at every sub-cube the warp waits for the
/// lane of the largest count: where the counts of the light sub-cubes run from n_min to T (e.g. 14
/// to 118 at 1e9 calls in 8-D), ncu reads 16-18 active threads per warp instruction of 32 on an
/// H200 (bench/results/2026-12-01-sorted-light-cubes.md). Here the threads of a warp take
/// sub-cubes of one count: the same work per lane.
///
/// Steps (launched by backend/cuda/vegas_pass.cuh, sample_pass, for passes of at least
/// cuda_launch_policy::sort_light_min_cubes sub-cubes: steps 1 and 2 on the device's side stream
/// beside the heavy sub-cubes, heavy_cubes.cuh, whose segments are sorted by length too, on the
/// stream; step 3 on the stream after both):
///  1. the light sub-cubes (n_c <= T) sorted by count (bucket_sort.cuh: a histogram of the counts
///     n_min .. T, its exclusive scan, a scatter of the indices by buckets; the order within a
///     count is that of the atomics, and nothing below depends on it);
///  2. sorted_sample_kernel: thread per list position: its sub-cube's samples (one segment: n_c
///     <= T <= L; sample_segment, the body of every backend's serial pass), I_c, var_c and the
///     share (finish_cube) into cube_mean[c], cube_var[c]; the bins in the block's shared memory
///     when they fit (flushed once per block), flags per thread then per warp (integer atomics);
///  3. sorted_tiles_kernel: tile k of B = the policy's block size chunks: each thread sums its
///     chunk's I_c and var_c in sub-cube order (the heavy ones from heavy_cube_sums, the light
///     ones from cube_mean / cube_var: sample_cubes' chunk partial) and the block sums the tile
///     over the fixed pairwise tree (block_tree_sum), as v_sample_tiles does; then
///     tree_reduce_kernel as for every pass.
/// Determinism: each sub-cube's sums are sample_segment's and its estimate finish_cube's, each
/// chunk partial the sum of its sub-cubes' in index order, the tree over the chunks the same, the
/// bins exact integers and the flags order-independent: the bits of v_sample_kernel, hence of the
/// CPU's serial pass, for any grid, block size and order of the atomics. Extra device memory:
/// 20 bytes per sub-cube (the list and the two estimates; m <= 2^24 for VEGAS+) and 12 bytes per
/// bucket, none per sample.

#include <cuda_runtime.h>

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <string>

#include "../../core/sampler.hpp"
#include "block_tree.cuh"
#include "bucket_sort.cuh"
#include "check.cuh"
#include "device_array.cuh"
#include "heavy_cubes.cuh"
#include "occupancy.cuh"
#include "vegas_kernels.cuh"

namespace mcubes {
namespace cuda_detail {

/// The device memory of the sorted pass (grown, never shrunk).
struct sorted_buffers {
  bucket_buffers sort;                       ///< the light sub-cubes by count
  device_array<double> cube_mean, cube_var;  ///< I_c, var_c of the light sub-cubes (by index)
};

/// Whether the sorted pass serves a pass with counts `counts`, T = `above`, m sub-cubes: VEGAS+
/// counts read from shares, at most bucket_sort_max counts, indices in 32 bits.
inline bool sorted_serves(const cube_counts& counts, std::uint64_t above, std::uint64_t n_cubes) {
  return counts.share_in != nullptr && counts.segment != 0 && above >= counts.n_base && above <= counts.segment &&
         above - counts.n_base < bucket_sort_max && n_cubes < (std::uint64_t(1) << 32);
}

/// The bucket of sub-cube c for the sort (bucket_sort.cuh): n_c - n_base for the light ones
/// (n_c <= above), none for the heavy ones.
struct light_cube_bucket {
  cube_counts counts;
  std::uint64_t above;
  __device__ unsigned operator()(std::uint64_t c) const {
    const std::uint64_t n = counts.count(c);
    return n <= above ? static_cast<unsigned>(n - counts.n_base) : no_bucket;
  }
};

/// The list loop of sorted_sample_kernel (map: in shared or global memory).
template <int D, class F, bool Adapt>
__device__ __forceinline__ void sorted_cubes(const F& f, const sampling_params<D>& sp, const map_view<D>& map,
                                             const unsigned* __restrict__ list, std::uint64_t n_list, double* cube_mean,
                                             double* cube_var, shared_bin_sink& sink, thread_flags& fl,
                                             const philox_schedule& rng) {
  no_bins none;
  for (std::uint64_t i = blockIdx.x * static_cast<std::uint64_t>(blockDim.x) + threadIdx.x; i < n_list;
       i += static_cast<std::uint64_t>(gridDim.x) * blockDim.x) {
    const std::uint64_t c = list[i], n = sp.counts.count(c);
    cube_coord_t<D> coord[D];
    cube_start<D>(c, sp.g, coord);
    double cd[D];
    for (int j = 0; j < D; ++j) cd[j] = static_cast<double>(coord[j]);
    const double pd = static_cast<double>(n);
    const double term_scale = sp.bin_scale / pd;
    const std::uint64_t first = c * sp.p;
    chunk_partial part;
    double s1 = 0, s2 = 0;  // one segment: n <= T <= L (sorted_serves)
    if constexpr (Adapt)
      sample_segment<D>(f, sp, map, rng, cd, first, first + n, first, term_scale, sink, part, s1, s2, no_poll{});
    else
      sample_segment<D>(f, sp, map, rng, cd, first, first + n, first, term_scale, none, part, s1, s2, no_poll{});
    const cube_estimate ce = finish_cube(s1, s2, pd, sp.counts, c);
    cube_mean[c] = ce.mean;
    cube_var[c] = ce.var;
    fl.merge(part);
  }
}

/// Step 2 over the listed light sub-cubes (n_list = first[K - 1] + hist[K - 1], read here).
/// V-Sample (Adapt: bins, in shared memory when shared_bins: D n_bins words first in the dynamic
/// shared memory) or No-Adjust; the map's edges after them when the launch gave room (the kernel
/// reads the size it got, as v_sample_kernel).
/// Preconditions as v_sample_kernel's; blockDim.x a multiple of 32, at most 256.
template <int D, class F, bool Adapt>
__global__ void __launch_bounds__(256, v_sample_min_blocks<Adapt, 256, F>)
    sorted_sample_kernel(F f, sampling_params<D> sp, map_view<D> map, const unsigned* __restrict__ list, const unsigned* first,
                         const unsigned* hist, unsigned K, double* cube_mean, double* cube_var, bin_accumulator* bins,
                         bin_accumulator* over, bool shared_bins, device_flags* flags, philox_schedule rng) {
  const std::uint64_t n_list = static_cast<std::uint64_t>(first[K - 1]) + hist[K - 1];
  thread_flags_block<D, Adapt>(map, bins, over, shared_bins, flags,
                               [&](const map_view<D>& m, shared_bin_sink& sink, thread_flags& fl) {
                                 sorted_cubes<D, F, Adapt>(f, sp, m, list, n_list, cube_mean, cube_var, sink, fl, rng);
                               });
}

/// Step 3: tiles [0, n_tiles) of blockDim.x chunks: thread t of tile k sums chunk k B + t's
/// sub-cubes' I_c, var_c in index order (heavy: `heavy`'s; light: cube_mean, cube_var), the block
/// sums the tile over the fixed pairwise tree (block_tree_sum) into tile_est[k], tile_var[k].
template <int Unused = 0>  // a template: vague linkage
__global__ void sorted_tiles_kernel(cube_counts counts, std::uint64_t n_cubes, std::uint64_t chunk_cubes, std::uint64_t n_chunks,
                                    std::uint64_t n_tiles, const double* cube_mean, const double* cube_var,
                                    heavy_cube_sums heavy, double* tile_est, double* tile_var) {
  tile_tree_sums(0, n_tiles, tile_est, tile_var, [&](std::uint64_t ch, double& e, double& v) {
    if (ch >= n_chunks) return;
    const std::uint64_t begin = ch * chunk_cubes, end = begin + chunk_cubes < n_cubes ? begin + chunk_cubes : n_cubes;
    std::uint64_t h = heavy.first(begin);
    for (std::uint64_t c = begin; c < end; ++c) {
      if (heavy.precomputed(counts.count(c))) {
        e += heavy.mean(h);
        v += heavy.var(h);
        ++h;
      } else {
        e += cube_mean[c];
        v += cube_var[c];
      }
    }
  });
}

/// Steps 1 and 2 of a pass over every chunk (stride 1, no team split) with T = above: the light
/// sub-cubes' I_c, var_c in sb.cube_mean, sb.cube_var, their bins and flags, queued on `stream`
/// (the device's side stream in sample_pass, beside the heavy sub-cubes: nothing here reads
/// theirs, and the bins and flags are order-independent integer atomics). No host wait (step 2
/// reads the list's length on the device). Returns the grid of step 2.
/// @throws cuda_error if a launch fails or the kernel cannot run.
template <int D, class F, bool Adapt>
int launch_sorted_light(const F& f, const sampling_params<D>& sp, const map_view<D>& dmap, std::uint64_t above, sorted_buffers& sb,
                        bin_accumulator* bins, bin_accumulator* over, bool shared_bins, device_flags* flags,
                        kernel_occupancy& occupancy, int multiprocessors, cudaStream_t stream) {
  const std::uint64_t m = sp.n_cubes;
  const unsigned K = static_cast<unsigned>(above - sp.counts.n_base + 1);
  grow(sb.cube_mean, m);
  grow(sb.cube_var, m);
  bucket_sort(sb.sort, light_cube_bucket{sp.counts, above}, m, K, multiprocessors, stream);
  const unsigned T = 256;

  const std::size_t smem_plain = Adapt && shared_bins ? static_cast<std::size_t>(D) * dmap.n_bins * sizeof(unsigned long long) : 0;
  const std::size_t smem_edges = smem_plain + static_cast<std::size_t>(D) * (dmap.n_bins + 1) * sizeof(double);
  auto kernel = sorted_sample_kernel<D, F, Adapt>;
  const auto [per_sm, smem] = occupancy.sampling_smem(kernel, T, smem_plain, smem_edges, "sorted V-Sample kernel");
  const unsigned grid = static_cast<unsigned>(
      std::max<std::uint64_t>(1, std::min<std::uint64_t>((m + T - 1) / T, static_cast<std::uint64_t>(per_sm) * multiprocessors)));
  kernel<<<grid, T, smem, stream>>>(f, sp, dmap, sb.sort.list.data(), sb.sort.first.data(), sb.sort.hist.data(), K, sb.cube_mean.data(),
                                    sb.cube_var.data(), bins, over, Adapt && shared_bins, flags,
                                    philox_schedule::make(sp.seed, stream_id::vegas, sp.iteration));
  MCUBES_CUDA_CHECK_LAUNCH("sorted_sample_kernel");
  return static_cast<int>(grid);
}

/// Step 3, after steps 1 and 2 and the heavy sub-cubes (`heavy` their view: none when no sub-cube
/// is heavy) have landed on `stream`: the tile values of tiles [0, n_tiles) of B = `block` chunks
/// in tile_est, tile_var. @throws cuda_error if the launch fails.
template <int D>
void launch_sorted_tiles(const sampling_params<D>& sp, std::uint64_t n_chunks, std::uint64_t n_tiles, int block,
                         const sorted_buffers& sb, double* tile_est, double* tile_var, const heavy_cube_sums& heavy,
                         int multiprocessors, cudaStream_t stream) {
  const unsigned tiles_grid = static_cast<unsigned>(std::max<std::uint64_t>(1, std::min<std::uint64_t>(n_tiles, 32ull * multiprocessors)));
  sorted_tiles_kernel<><<<tiles_grid, block, 0, stream>>>(sp.counts, sp.n_cubes, sp.chunk_cubes, n_chunks, n_tiles, sb.cube_mean.data(),
                                                        sb.cube_var.data(), heavy, tile_est, tile_var);
  MCUBES_CUDA_CHECK_LAUNCH("sorted_tiles_kernel");
}

}  // namespace cuda_detail
}  // namespace mcubes

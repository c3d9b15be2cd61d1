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
/// Steps (launched by backend/cuda/vegas_pass.cuh, sample_pass, after the heavy sub-cubes,
/// heavy_cubes.cuh, for passes the launch policy names: cuda_launch_policy::sort_light_cubes):
///  1. count_histogram_kernel: per light sub-cube c (n_c <= T) its count's bucket n_c - n_min,
///     counted in the block's shared memory, then added to the global histogram; an exclusive
///     scan (cub) gives each bucket's first position;
///  2. count_scatter_kernel: each light sub-cube's index to a position of its bucket (a cursor per
///     bucket, one global atomicAdd per bucket and tile of sub-cubes: the order within a bucket is
///     that of the atomics, and nothing below depends on it);
///  3. sorted_sample_kernel: thread per list position: its sub-cube's samples (one segment: n_c
///     <= T <= L; sample_segment, the body of every backend's serial pass), I_c, var_c and the
///     share (finish_cube) into cube_mean[c], cube_var[c]; the bins in the block's shared memory
///     when they fit (flushed once per block), flags per thread then per warp (integer atomics);
///  4. sorted_tiles_kernel: tile k of B = the policy's block size chunks: each thread sums its
///     chunk's I_c and var_c in sub-cube order (the heavy ones from heavy_cube_sums, the light
///     ones from cube_mean / cube_var: sample_cubes' chunk partial) and the block sums the tile
///     over the fixed pairwise tree (block_tree_sum), as v_sample_tiles does; then
///     tree_reduce_kernel as for every pass.
/// Determinism: each sub-cube's sums are sample_segment's and its estimate finish_cube's, each
/// chunk partial the sum of its sub-cubes' in index order, the tree over the chunks the same, the
/// bins exact integers and the flags order-independent: the bits of v_sample_kernel, hence of the
/// CPU's serial pass, for any grid, block size and order of the atomics. Extra device memory:
/// 20 bytes per sub-cube (the list and the two estimates; m <= 2^24 for VEGAS+) and 8 bytes per
/// bucket, none per sample.

#include <cub/device/device_scan.cuh>
#include <cuda_runtime.h>

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <string>

#include "../../core/sampler.hpp"
#include "block_tree.cuh"
#include "check.cuh"
#include "device_array.cuh"
#include "heavy_cubes.cuh"
#include "occupancy.cuh"
#include "vegas_kernels.cuh"

namespace mcubes {
namespace cuda_detail {

/// Most buckets (counts n_min .. T of the light sub-cubes) that the sorted pass takes: the
/// histogram's and the scatter's shared memory, 4 and 8 bytes a bucket.
inline constexpr std::uint64_t sorted_max_buckets = 2048;

/// The device memory of the sorted pass (grown, never shrunk).
struct sorted_buffers {
  device_array<unsigned> hist, first, cursor;  ///< per bucket: count, exclusive sums, fill cursor
  device_array<unsigned> list;                 ///< light sub-cubes by count
  device_array<double> cube_mean, cube_var;    ///< I_c, var_c of the light sub-cubes (by index)
  device_array<unsigned char> scan_scratch;
};

/// Whether the sorted pass serves a pass with counts `counts`, T = `above`, m sub-cubes: VEGAS+
/// counts read from shares, at most sorted_max_buckets counts, indices in 32 bits.
inline bool sorted_serves(const cube_counts& counts, std::uint64_t above, std::uint64_t n_cubes) {
  return counts.share_in != nullptr && counts.segment != 0 && above >= counts.n_base && above <= counts.segment &&
         above - counts.n_base < sorted_max_buckets && n_cubes < (std::uint64_t(1) << 32);
}

/// Step 1: hist[n_c - n_base] += 1 for every light sub-cube (n_c <= above). K buckets.
template <int Unused = 0>  // a template: vague linkage (a program may include this header in several units)
__global__ void count_histogram_kernel(cube_counts counts, std::uint64_t above, std::uint64_t n_cubes, unsigned K,
                                       unsigned* hist) {
  __shared__ unsigned s_hist[sorted_max_buckets];
  for (unsigned b = threadIdx.x; b < K; b += blockDim.x) s_hist[b] = 0;
  __syncthreads();
  for (std::uint64_t c = blockIdx.x * static_cast<std::uint64_t>(blockDim.x) + threadIdx.x; c < n_cubes;
       c += static_cast<std::uint64_t>(gridDim.x) * blockDim.x) {
    const std::uint64_t n = counts.count(c);
    if (n <= above) atomicAdd(&s_hist[n - counts.n_base], 1u);
  }
  __syncthreads();
  for (unsigned b = threadIdx.x; b < K; b += blockDim.x)
    if (s_hist[b]) atomicAdd(&hist[b], s_hist[b]);
}

/// Step 2: list[first[b] + k] = c for the light sub-cubes c of bucket b. A block takes tiles of
/// 8 blockDim.x consecutive sub-cubes: it counts each bucket's in shared memory, takes that many
/// positions from the bucket's global cursor with one atomicAdd, and hands them out by shared
/// atomics (one global atomic per bucket and tile, not per sub-cube: the cursors of a few buckets
/// are what every sub-cube would wait for). The order within a bucket is that of the atomics;
/// nothing below depends on it. cursor zero before; K <= sorted_max_buckets.
template <int Unused = 0>  // a template: vague linkage
__global__ void __launch_bounds__(256) count_scatter_kernel(cube_counts counts, std::uint64_t above, std::uint64_t n_cubes,
                                                            unsigned K, const unsigned* first, unsigned* cursor, unsigned* list) {
  constexpr unsigned I = 8;  // sub-cubes per thread and tile
  __shared__ unsigned s_count[sorted_max_buckets], s_base[sorted_max_buckets];
  const unsigned B = blockDim.x, tid = threadIdx.x;
  const std::uint64_t tile = static_cast<std::uint64_t>(B) * I;
  for (std::uint64_t t0 = blockIdx.x * tile; t0 < n_cubes; t0 += static_cast<std::uint64_t>(gridDim.x) * tile) {
    for (unsigned b = tid; b < K; b += B) s_count[b] = 0;
    __syncthreads();
    unsigned bucket[I];
#pragma unroll
    for (unsigned i = 0; i < I; ++i) {
      const std::uint64_t c = t0 + i * B + tid;
      bucket[i] = ~0u;  // past the end, or heavy
      if (c < n_cubes) {
        const std::uint64_t n = counts.count(c);
        if (n <= above) {
          bucket[i] = static_cast<unsigned>(n - counts.n_base);
          atomicAdd(&s_count[bucket[i]], 1u);
        }
      }
    }
    __syncthreads();
    for (unsigned b = tid; b < K; b += B) {
      const unsigned k = s_count[b];
      s_base[b] = k != 0 ? first[b] + atomicAdd(&cursor[b], k) : 0u;
      s_count[b] = 0;
    }
    __syncthreads();
#pragma unroll
    for (unsigned i = 0; i < I; ++i)
      if (bucket[i] != ~0u) list[s_base[bucket[i]] + atomicAdd(&s_count[bucket[i]], 1u)] = static_cast<unsigned>(t0 + i * B + tid);
    __syncthreads();  // the tile's positions are handed out before the counts are zeroed again
  }
}

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

/// Step 3 over the listed light sub-cubes (n_list = first[K - 1] + hist[K - 1], read here).
/// V-Sample (Adapt: bins, in shared memory when shared_bins: D n_bins words first in the dynamic
/// shared memory) or No-Adjust; the map's edges after them when the launch gave room (the kernel
/// reads the size it got, as v_sample_kernel).
/// Preconditions as v_sample_kernel's; blockDim.x a multiple of 32, at most 256.
template <int D, class F, bool Adapt>
__global__ void __launch_bounds__(256, v_sample_min_blocks<Adapt, 256, F>)
    sorted_sample_kernel(F f, sampling_params<D> sp, map_view<D> map, const unsigned* __restrict__ list, const unsigned* first,
                         const unsigned* hist, unsigned K, double* cube_mean, double* cube_var, bin_accumulator* bins, bin_accumulator* over, bool shared_bins,
                         device_flags* flags, philox_schedule rng) {
  extern __shared__ unsigned long long sorted_dyn[];  // [D n_bins bin low words] [D (n_bins + 1) edges]
  const std::uint64_t n_list = static_cast<std::uint64_t>(first[K - 1]) + hist[K - 1];
  const int n_bin_values = D * map.n_bins;
  const bool bins_in_smem = Adapt && shared_bins;
  double* s_edges;
  const bool edges_in_smem = fill_dynamic_smem<D>(sorted_dyn, map, bins_in_smem, s_edges);
  __syncthreads();
  shared_bin_sink sink{sorted_dyn, bins, over, static_cast<unsigned>(n_bin_values), map.n_bins, bins_in_smem};
  thread_flags fl;
  if (edges_in_smem)
    sorted_cubes<D, F, Adapt>(f, sp, map_view<D>{s_edges, map.n_bins}, list, n_list, cube_mean, cube_var, sink, fl, rng);
  else
    sorted_cubes<D, F, Adapt>(f, sp, map, list, n_list, cube_mean, cube_var, sink, fl, rng);
  fl.add_to(flags);
  if (bins_in_smem) {
    __syncthreads();
    flush_shared_bins(sorted_dyn, bins, n_bin_values);
  }
}

/// Step 4: tiles [0, n_tiles) of blockDim.x chunks: thread t of tile k sums chunk k B + t's
/// sub-cubes' I_c, var_c in index order (heavy: `heavy`'s; light: cube_mean, cube_var), the block
/// sums the tile over the fixed pairwise tree (block_tree_sum) into tile_est[k], tile_var[k].
template <int Unused = 0>  // a template: vague linkage
__global__ void sorted_tiles_kernel(cube_counts counts, std::uint64_t n_cubes, std::uint64_t chunk_cubes, std::uint64_t n_chunks,
                                    std::uint64_t n_tiles, const double* cube_mean, const double* cube_var,
                                    heavy_cube_sums heavy, double* tile_est, double* tile_var) {
  __shared__ double s_red[2][2][32];
  const unsigned B = blockDim.x, tid = threadIdx.x;
  for (unsigned k = 0;; ++k) {
    const std::uint64_t tile = blockIdx.x + static_cast<std::uint64_t>(k) * gridDim.x;
    if (tile >= n_tiles) break;
    const std::uint64_t ch = tile * B + tid;
    double e = 0, v = 0;
    if (ch < n_chunks) {
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
    }
    block_tree_sum(e, v, s_red[k & 1u]);
    if (tid == 0) {
      tile_est[tile] = e;
      tile_var[tile] = v;
    }
  }
}

/// Steps 1-4 of a pass over every chunk (stride 1, no team split) with T = above, whose heavy
/// sub-cubes were sampled (`heavy` their view: none when no sub-cube is heavy): the tile values of
/// tiles [0, n_tiles) of B = `block` chunks in tile_est, tile_var. max_dynamic_smem: the most
/// dynamic shared memory a block may have. No host wait (step 3 reads the list's length on the
/// device). Returns the grid of step 3. @throws cuda_error if a launch fails or the kernel cannot run.
template <int D, class F, bool Adapt>
int launch_sorted_sample(const F& f, const sampling_params<D>& sp, const map_view<D>& dmap, std::uint64_t n_chunks,
                         std::uint64_t n_tiles, int block, std::uint64_t above, sorted_buffers& sb,
                         double* tile_est, double* tile_var, bin_accumulator* bins, bin_accumulator* over, bool shared_bins,
                         device_flags* flags, const heavy_cube_sums& heavy, kernel_occupancy& occupancy, int multiprocessors,
                         std::size_t max_dynamic_smem, cudaStream_t stream) {
  const std::uint64_t m = sp.n_cubes;
  const unsigned K = static_cast<unsigned>(above - sp.counts.n_base + 1);
  grow(sb.hist, K);
  grow(sb.first, K);
  grow(sb.cursor, K);
  grow(sb.list, m);
  grow(sb.cube_mean, m);
  grow(sb.cube_var, m);
  MCUBES_CUDA_CHECK(cudaMemsetAsync(sb.hist.data(), 0, K * sizeof(unsigned), stream));
  MCUBES_CUDA_CHECK(cudaMemsetAsync(sb.cursor.data(), 0, K * sizeof(unsigned), stream));
  const unsigned T = 256;
  const auto grid_for = [&](std::uint64_t n) {
    return static_cast<unsigned>(std::max<std::uint64_t>(1, std::min<std::uint64_t>((n + T - 1) / T, 8ull * multiprocessors)));
  };
  count_histogram_kernel<><<<grid_for(m), T, 0, stream>>>(sp.counts, above, m, K, sb.hist.data());
  MCUBES_CUDA_CHECK_LAUNCH("count_histogram_kernel");
  std::size_t bytes = 0;
  MCUBES_CUDA_CHECK(cub::DeviceScan::ExclusiveSum(nullptr, bytes, sb.hist.data(), sb.first.data(), static_cast<int>(K), stream));
  grow(sb.scan_scratch, bytes);
  MCUBES_CUDA_CHECK(
      cub::DeviceScan::ExclusiveSum(sb.scan_scratch.data(), bytes, sb.hist.data(), sb.first.data(), static_cast<int>(K), stream));
  count_scatter_kernel<><<<grid_for((m + 7) / 8), T, 0, stream>>>(sp.counts, above, m, K, sb.first.data(), sb.cursor.data(),
                                                                  sb.list.data());
  MCUBES_CUDA_CHECK_LAUNCH("count_scatter_kernel");

  const std::size_t smem_plain = Adapt && shared_bins ? static_cast<std::size_t>(D) * dmap.n_bins * sizeof(unsigned long long) : 0;
  const std::size_t smem_edges = smem_plain + static_cast<std::size_t>(D) * (dmap.n_bins + 1) * sizeof(double);
  auto kernel = sorted_sample_kernel<D, F, Adapt>;
  std::size_t smem = smem_plain;  // the edges too unless they cost resident blocks (or do not fit)
  int per_sm = occupancy.blocks_per_sm(kernel, T, smem_plain);
  if (smem_edges <= max_dynamic_smem) {
    const int with_edges = occupancy.blocks_per_sm(kernel, T, smem_edges);
    if (with_edges >= per_sm) per_sm = with_edges, smem = smem_edges;
  }
  if (per_sm < 1)
    throw cuda_error("sorted V-Sample kernel cannot run with " + std::to_string(T) + " threads per block and " +
                     std::to_string(smem) + " bytes of shared memory");
  const unsigned grid = static_cast<unsigned>(
      std::max<std::uint64_t>(1, std::min<std::uint64_t>((m + T - 1) / T, static_cast<std::uint64_t>(per_sm) * multiprocessors)));
  kernel<<<grid, T, smem, stream>>>(f, sp, dmap, sb.list.data(), sb.first.data(), sb.hist.data(), K, sb.cube_mean.data(),
                                    sb.cube_var.data(), bins, over, Adapt && shared_bins, flags,
                                    philox_schedule::make(sp.seed, stream_id::vegas, sp.iteration));
  MCUBES_CUDA_CHECK_LAUNCH("sorted_sample_kernel");
  const unsigned tiles_grid = static_cast<unsigned>(std::max<std::uint64_t>(1, std::min<std::uint64_t>(n_tiles, 32ull * multiprocessors)));
  sorted_tiles_kernel<><<<tiles_grid, block, 0, stream>>>(sp.counts, m, sp.chunk_cubes, n_chunks, n_tiles, sb.cube_mean.data(),
                                                        sb.cube_var.data(), heavy, tile_est, tile_var);
  MCUBES_CUDA_CHECK_LAUNCH("sorted_tiles_kernel");
  return static_cast<int>(grid);
}

}  // namespace cuda_detail
}  // namespace mcubes

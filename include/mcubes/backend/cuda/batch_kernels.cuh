#pragma once
/// @file backend/cuda/batch_kernels.cuh
/// The __global__ functions of parameter batches on the CUDA backend (algorithm/vegas_batch.hpp):
/// one V-Sample (or No-Adjust) launch over the passes of every active integral, and one final
/// reduction for all of them. Launched only by backend/cuda/batch_pass.cuh (init_batch_kernel: by
/// device_map.cuh, device_batch_maps).
///
/// Work decomposition (determinism contract: each pass's sums are bitwise those of the single-run
/// kernels of vegas_kernels.cuh for the same pass, for any block size and grid):
///  - the launch's work units are aligned subtrees of B G chunks of its passes (G chunks per
///    thread, a power of two chosen per pass so that a thread samples enough points per unit),
///    concatenated in pass order (pass i owns units [first_unit_i, first_unit_i + n_tiles_i));
///    each block takes a contiguous range of units. In a unit of pass i, thread t samples its G
///    chunks of pass i (sample_chunk with the integrand with_parameters{f, params_i}, the pass's
///    map, seed and iteration; the sub-cube coordinates divided once per unit and stepped across
///    the G chunks, sample_cubes), sums them over the pairwise tree of G leaves, and the block sums the
///    B group sums over the fixed pairwise tree (block_tree_sum): a node of the pass's fixed tree,
///    written to tile_est[unit];
///  - bins: straight into pass i's global 128-bit bins (exact integer atomics: any order);
///  - flags: per thread while a block stays on a pass, then per warp (shuffles) and integer atomics
///    into the pass's device_flags (sum, min, max);
///  - batch_tree_reduce_kernel: block i finishes pass i's tree over its tile values (padded width
///    width_i / (B G_i)), exactly as tree_reduce_kernel, and hands its flags over (resetting them).

#include <cstddef>
#include <cstdint>

#include "../../core/batch.hpp"
#include "../../core/sampler.hpp"
#include "vegas_kernels.cuh"

namespace mcubes {
namespace cuda_detail {

/// One pass of one integral in a batched launch (device memory). Trivially copyable.
template <int D, class P>
struct batch_item {
  sampling_params<D> sp;       ///< the pass's parameters (seed, iteration, bin scale)
  philox_compact_schedule rng; ///< the Vegas stream of (seed, iteration)
  const double* edges;         ///< the integral's map, D rows of n_bins + 1 edges
  int n_bins;
  std::uint64_t stride;        ///< chunk stride (> 1: the bin-scale probe)
  std::uint64_t n_sel;         ///< chunks sampled: ceil(n_chunks / stride)
  std::uint64_t group;         ///< chunks per thread in a unit (a power of two; B group <= padded width, or 1)
  std::uint64_t n_tiles;       ///< units of the pass: ceil(n_sel / (B group))
  std::uint64_t first_unit;    ///< its first unit (tile) in tile_est
  std::uint64_t tree_width;    ///< padded width of the tree over its tile values (width / tile)
  bin_accumulator* bins;       ///< its level-0 bins (D * n_bins)
  bin_accumulator* over;       ///< its overflow levels (max_bin_level * D * n_bins; null until a pass reaches them)
  std::uint32_t zero_bins;     ///< 1: its level-0 bins are zeroed before the pass (zero_batch_bins_kernel)
  std::uint32_t zero_over;     ///< overflow levels zeroed before the pass
  std::uint64_t heavy_chunk_first;  ///< its first chunk among the round's heavy chunks (batch_heavy_cubes.cuh)
  std::uint64_t heavy_chunks;       ///< its chunks there (0: its heavy sub-cubes, if any, are sampled here)
  heavy_cube_sums heavy;            ///< its precomputed heavy sub-cubes (none by default)
  P params;                    ///< the integral's parameters
};

/// Zeroes, for each item i of items[0, n), its level-0 bins (zero_bins) and its first zero_over
/// overflow levels, bin_values = D * n_bins accumulators a level; blocks (i, y) cover item i. One launch for every integral of a round whose bins a previous pass left non-zero (the probe,
/// a rescaled pass), instead of one memset each.
template <int D, class P>
__global__ void zero_batch_bins_kernel(const batch_item<D, P>* items, unsigned n, std::uint64_t bin_values) {
  const unsigned i = blockIdx.x;
  if (i >= n) return;
  const batch_item<D, P>& it = items[i];
  const std::uint64_t step = static_cast<std::uint64_t>(blockDim.x) * gridDim.y;
  const std::uint64_t first = static_cast<std::uint64_t>(blockIdx.y) * blockDim.x + threadIdx.x;
  if (it.zero_bins)
    for (std::uint64_t j = first; j < bin_values; j += step) it.bins[j] = bin_accumulator{};
  const std::uint64_t n_over = static_cast<std::uint64_t>(it.zero_over) * bin_values;
  for (std::uint64_t j = first; j < n_over; j += step) it.over[j] = bin_accumulator{};
}

/// The pass of unit u: the largest i in [0, n) with items[i].first_unit <= u (binary search).
template <int D, class P>
__device__ __forceinline__ unsigned find_item(const batch_item<D, P>* items, unsigned n, std::uint64_t u) {
  unsigned lo = 0, hi = n;  // items[lo].first_unit <= u < items[hi].first_unit (hi = n: past the end)
  while (hi - lo > 1) {
    const unsigned mid = (lo + hi) / 2;
    if (items[mid].first_unit <= u)
      lo = mid;
    else
      hi = mid;
  }
  return lo;
}

/// Maximum levels of a thread's group tree (batch_item::group <= 2^(batch_group_levels - 1)).
inline constexpr int batch_group_levels = 7;

/// Dynamic shared memory of a v_sample_batch_kernel launch whose largest group is 2^(levels - 1)
/// chunks: the pending left subtrees (estimate, variance) of every thread, levels x block x 2
/// doubles; then, with shared bins (V-Sample), the low 64-bit words of the current pass's
/// n_bin_values = D n_bins bins; then, with shared edges, its map's n_edges = D (n_bins + 1) edges.
inline std::size_t batch_group_smem_bytes(int levels, int block, std::size_t n_bin_values = 0, std::size_t n_edges = 0) {
  return static_cast<std::size_t>(levels) * block * 2 * sizeof(double) + n_bin_values * sizeof(unsigned long long) +
         n_edges * sizeof(double);
}

/// V-Sample (Adapt) or No-Adjust over units [unit_begin, unit_end) of the passes items[0..n_items),
/// whose first units are items[i].first_unit; pass i's flags are flags[i]. Block b takes the
/// contiguous units [unit_begin + b per, unit_begin + (b + 1) per) (per = ceil(units / grid)),
/// so that it stays on one pass for many units. In a unit of pass i (group G = items[i].group
/// chunks per thread, a power of two), thread t samples the G consecutive chunks
/// ((unit - first_unit) B + t) G + j, j < G (times the stride), and sums their partials over the
/// pairwise tree of G leaves as they come (a binary counter of pending left subtrees in shared
/// memory; chunks past n_sel are 0.0 leaves); the block then sums the B group sums over the fixed
/// pairwise tree (block_tree_sum). A unit is thus an aligned subtree of B G leaves of the pass's
/// fixed tree (B G <= the padded width, or G = 1): the same bits as the single-run kernel's tiles
/// of B chunks, reduced further by tree_reduce. Bins: with `shared_bins`, the block keeps the low
/// words of its current pass's bins in shared memory (shared_bin_sink) and flushes them into the
/// pass's global 128-bit bins when it moves to another pass and at its end (flush_shared_bins);
/// otherwise exact integer atomics straight into the global bins. Either way the same integers.
/// With `shared_edges` the block copies its current pass's map edges into shared memory (the same
/// values, so the same bits).
/// Flags are kept per thread while the block stays on a pass. The heavy sub-cubes of a VEGAS+ pass
/// (items[i].heavy, batch_heavy_cubes.cuh) were sampled before: their I_c, var_c are read.
/// Preconditions: every adapting pass's bins and overflow levels are zero; flags[i] holds
/// initial_flags(); every pass has the same n_bins; blockDim.x a power of two in
/// [32, MaxThreads]; dynamic shared memory batch_group_smem_bytes(levels, blockDim.x,
/// shared_bins ? D n_bins : 0, shared_edges ? D (n_bins + 1) : 0) with 2^(levels - 1) >= every
/// items[i].group.
/// Counts: any_counts, or uniform_counts where every item's pass has sp.counts.none() (the uniform
/// strategy: core/sampler.hpp, the same bits; launch_batch decides).
template <int D, class F, class P, bool Adapt, int MaxThreads, class Counts = any_counts>
__global__ void __launch_bounds__(MaxThreads, MaxThreads <= 256 ? 2 : 1)
    v_sample_batch_kernel(F f, const batch_item<D, P>* __restrict__ items, unsigned n_items, std::uint64_t unit_begin,
                          std::uint64_t unit_end, double* tile_est, double* tile_var, device_flags* flags, int levels,
                          bool shared_bins, bool shared_edges) {
  extern __shared__ double batch_dyn[];  // [levels][2][B] pending left subtrees, then [D n_bins] bin low words
  __shared__ double s_red[2][2][32];     // warp sums of a unit, double buffered
  const unsigned B = blockDim.x, tid = threadIdx.x;
  const std::uint64_t per = (unit_end - unit_begin + gridDim.x - 1) / gridDim.x;
  std::uint64_t u = unit_begin + blockIdx.x * per;
  const std::uint64_t end = u + per < unit_end ? u + per : unit_end;
  if (u >= end) return;  // the whole block
  unsigned i = find_item(items, n_items, u);
  const int n_bins = items[i].n_bins;
  const unsigned n_values = static_cast<unsigned>(D * n_bins);
  unsigned long long* s_lo = reinterpret_cast<unsigned long long*>(batch_dyn + 2 * static_cast<std::size_t>(levels) * B);
  const bool bins_in_smem = Adapt && shared_bins;
  double* s_edges = reinterpret_cast<double*>(s_lo + (bins_in_smem ? n_values : 0u));
  const unsigned n_edges = static_cast<unsigned>(D * (n_bins + 1));
  if (bins_in_smem)
    for (unsigned k = tid; k < n_values; k += B) s_lo[k] = 0ull;
  if (shared_edges)
    copy_to_shared(s_edges, items[i].edges, n_edges);
  if (bins_in_smem || shared_edges) __syncthreads();
  thread_flags fl;
  no_bins none;
  for (unsigned k = 0; u < end; ++u, ++k) {
    if (i + 1 < n_items && items[i + 1].first_unit <= u) {  // the block moves on to the next pass(es)
      fl.add_to(flags + i);
      if (bins_in_smem || shared_edges) __syncthreads();  // every add and edge read of the last unit is done
      if (bins_in_smem) {
        flush_shared_bins(s_lo, items[i].bins, static_cast<int>(n_values));
        __syncthreads();
        for (unsigned b = tid; b < n_values; b += B) s_lo[b] = 0ull;
      }
      while (i + 1 < n_items && items[i + 1].first_unit <= u) ++i;
      if (shared_edges)
        copy_to_shared(s_edges, items[i].edges, n_edges);
      if (bins_in_smem || shared_edges) __syncthreads();
    }
    const batch_item<D, P>& it = items[i];
    const std::uint64_t G = it.group;
    const std::uint64_t first_sel = ((u - it.first_unit) * B + tid) * G;
    unsigned pending = 0;  // bit L: a left subtree of 2^L leaves waits at level L
    double e = 0.0, v = 0.0;
    // sub-cube coordinates: divided once per unit, then stepped across the thread's consecutive
    // chunks (stride 1; the probe's strided chunks divide each time)
    const std::uint64_t cc = it.sp.chunk_cubes;
    cube_coord_t<D> coord[D] = {};
    if (first_sel < it.n_sel) cube_start<D>(first_sel * it.stride * cc, it.sp.g, coord);
    for (std::uint64_t j = 0; j < G; ++j) {
      chunk_partial part;
      const std::uint64_t sel = first_sel + j;
      if (sel < it.n_sel) {
        const with_parameters<F, P> g{f, it.params};
        const map_view<D> map{shared_edges ? s_edges : it.edges, n_bins};
        const std::uint64_t begin = sel * it.stride * cc;
        if (it.stride != 1 && j != 0) cube_start<D>(begin, it.sp.g, coord);
        const std::uint64_t end = begin + cc < it.sp.n_cubes ? begin + cc : it.sp.n_cubes;
        if constexpr (Adapt) {
          shared_bin_sink sink{s_lo, it.bins, it.over, n_values, n_bins, bins_in_smem};
          part = sample_cubes<D>(g, it.sp, map, begin, end, coord, sink, it.rng, no_poll{}, it.heavy, Counts{});
        } else {
          part = sample_cubes<D>(g, it.sp, map, begin, end, coord, none, it.rng, no_poll{}, it.heavy, Counts{});
        }
        fl.merge(part);
      }
      // push the leaf: merge with the pending left subtrees it completes (left operand first)
      e = part.estimate;
      v = part.variance;
      int L = 0;
      while (pending & (1u << L)) {
        e = batch_dyn[(2 * L) * B + tid] + e;
        v = batch_dyn[(2 * L + 1) * B + tid] + v;
        pending &= ~(1u << L);
        ++L;
      }
      if (j + 1 < G) {
        batch_dyn[(2 * L) * B + tid] = e;
        batch_dyn[(2 * L + 1) * B + tid] = v;
        pending |= 1u << L;
      }
    }
    block_tree_sum(e, v, s_red[k & 1u]);
    if (tid == 0) {
      tile_est[u] = e;
      tile_var[u] = v;
    }
  }
  fl.add_to(flags + i);
  if (bins_in_smem) {
    __syncthreads();
    flush_shared_bins(s_lo, items[i].bins, static_cast<int>(n_values));
  }
}

/// The start of a batch: n_edges edges of uniform maps (edge k of a row of n_bins + 1 is
/// k / n_bins, the value adaptive_map's constructor computes: IEEE division, the same bits) and
/// n_flags flags set to initial_flags(). Grid-stride. (A template: vague linkage, see tree_reduce_kernel.)
template <int Unused = 0>
__global__ void init_batch_kernel(double* edges, std::size_t n_edges, int n_bins, device_flags* flags,
                                         std::size_t n_flags) {
  const std::size_t step = static_cast<std::size_t>(gridDim.x) * blockDim.x;
  for (std::size_t i = blockIdx.x * static_cast<std::size_t>(blockDim.x) + threadIdx.x; i < n_edges; i += step)
    edges[i] = static_cast<double>(i % static_cast<std::size_t>(n_bins + 1)) / n_bins;
  for (std::size_t i = blockIdx.x * static_cast<std::size_t>(blockDim.x) + threadIdx.x; i < n_flags; i += step)
    flags[i] = initial_flags();
}

/// Block i finishes the fixed tree over pass i's tile values (tree_reduce_body, padded width
/// items[i].tree_width) into out[i], copies flags[i] into out[i].flags and resets flags[i].
template <int D, class P, int MaxThreads = 1024>
__global__ void __launch_bounds__(MaxThreads) batch_tree_reduce_kernel(const batch_item<D, P>* items, const double* tile_est,
                                                                 const double* tile_var, pass_result* out,
                                                                 device_flags* flags) {
  const batch_item<D, P>& it = items[blockIdx.x];
  double sa, sb;
  tree_reduce_body(tile_est + it.first_unit, tile_var + it.first_unit, it.n_tiles, it.tree_width, sa, sb);
  if (threadIdx.x == 0) {
    out[blockIdx.x].estimate = sa;
    out[blockIdx.x].variance = sb;
    out[blockIdx.x].flags = flags[blockIdx.x];
    flags[blockIdx.x] = initial_flags();
  }
}

}  // namespace cuda_detail
}  // namespace mcubes

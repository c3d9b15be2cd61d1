#pragma once
/// @file backend/cuda/batch_kernels.cuh
/// The __global__ functions of parameter batches on the CUDA backend (algorithm/vegas_batch.hpp):
/// one V-Sample (or No-Adjust) launch over the passes of every active integral, and one final
/// reduction for all of them. Launched only by backend/cuda.cuh.
///
/// Work decomposition (determinism contract: each pass's sums are bitwise those of the single-run
/// kernels of vegas_kernels.cuh for the same pass, for any block size and grid):
///  - the launch's work units are the tiles of its passes, concatenated in pass order (pass i owns
///    units [first_unit_i, first_unit_i + n_tiles_i)); blocks loop over units (grid-stride). In a
///    unit of pass i, thread t samples chunk (tile * B + t) * stride_i of pass i (sample_chunk with
///    the integrand with_parameters{f, params_i}, the pass's map, seed and iteration) and the block
///    sums the B chunk partials over the fixed pairwise tree (block_tree_sum): the tile value of the
///    single-run kernel, written to tile_est[unit];
///  - bins: straight into pass i's global 128-bit bins (exact integer atomics: any order);
///  - flags: per warp (shuffles), then integer atomics into pass i's device_flags (sum, min, max);
///  - batch_tree_reduce_kernel: block i finishes pass i's tree over its tile values (padded width
///    width_i / tile_i), exactly as tree_reduce_kernel, and hands its flags over (resetting them).

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
  philox_schedule rng;         ///< the Vegas stream of (seed, iteration)
  const double* edges;         ///< the integral's map, D rows of n_bins + 1 edges
  int n_bins;
  std::uint64_t stride;        ///< chunk stride (> 1: the bin-scale probe)
  std::uint64_t n_sel;         ///< chunks sampled: ceil(n_chunks / stride)
  std::uint64_t n_tiles;       ///< ceil(n_sel / B)
  std::uint64_t first_unit;    ///< its first unit (tile) in tile_est
  std::uint64_t tree_width;    ///< padded width of the tree over its tile values (width / tile)
  bin_accumulator* bins;       ///< its level-0 bins (D * n_bins)
  bin_accumulator* over;       ///< its overflow levels (max_bin_level * D * n_bins)
  P params;                    ///< the integral's parameters
};

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

/// Folds the flags of the warp's chunk partials (sum, min, max over the lanes, as fold_warp_flags)
/// and adds them with one integer atomic each (where not neutral) into `flags`.
template <bool Adapt>
__device__ __forceinline__ void add_warp_flags(const chunk_partial& part, device_flags* flags) {
  constexpr unsigned full = 0xffffffffu;
  unsigned long long nz = part.n_nonzero;
#pragma unroll
  for (int s = 16; s >= 1; s >>= 1) nz += __shfl_xor_sync(full, nz, s);
  unsigned long long first = part.first_non_finite;
  if (__any_sync(full, first != ~0ull)) {
#pragma unroll
    for (int s = 16; s >= 1; s >>= 1) {
      const unsigned long long o = __shfl_xor_sync(full, first, s);
      first = o < first ? o : first;
    }
  }
  unsigned long long mx = 0;
  if constexpr (Adapt) {
    mx = static_cast<unsigned long long>(__double_as_longlong(part.max_contribution));
#pragma unroll
    for (int s = 16; s >= 1; s >>= 1) {
      const unsigned long long o = __shfl_xor_sync(full, mx, s);
      mx = o > mx ? o : mx;
    }
  }
  if ((threadIdx.x & 31u) == 0) {
    if (nz) atomicAdd(&flags->n_nonzero, nz);
    if (first != ~0ull) atomicMin(&flags->first_non_finite, first);
    if (mx) atomicMax(&flags->max_contribution_bits, mx);
  }
}

/// V-Sample (Adapt) or No-Adjust over units [unit_begin, unit_end) of the passes items[0..n_items),
/// whose first units are items[i].first_unit (see the file comment); pass i's flags are flags[i].
/// Preconditions: every adapting pass's bins and overflow levels are zero; flags[i]
/// holds initial_flags(); blockDim.x a power of two in [32, MaxThreads]; no dynamic shared memory.
template <int D, class F, class P, bool Adapt, int MaxThreads>
__global__ void __launch_bounds__(MaxThreads, v_sample_min_blocks<Adapt, MaxThreads, F>)
    v_sample_batch_kernel(F f, const batch_item<D, P>* __restrict__ items, unsigned n_items, std::uint64_t unit_begin,
                          std::uint64_t unit_end, double* tile_est, double* tile_var, device_flags* flags) {
  __shared__ double s_red[2][2][32];  // warp sums of a tile, double buffered
  const unsigned B = blockDim.x, tid = threadIdx.x;
  no_bins none;
  for (unsigned k = 0;; ++k) {
    const std::uint64_t u = unit_begin + blockIdx.x + static_cast<std::uint64_t>(k) * gridDim.x;
    if (u >= unit_end) break;
    const unsigned i = find_item(items, n_items, u);
    const batch_item<D, P>& it = items[i];
    chunk_partial part;
    {
      const std::uint64_t sel = (u - it.first_unit) * B + tid;
      if (sel < it.n_sel) {
        const with_parameters<F, P> g{f, it.params};
        const map_view<D> map{it.edges, it.n_bins};
        if constexpr (Adapt) {
          shared_bin_sink sink{nullptr, it.bins, it.over, static_cast<unsigned>(D * it.n_bins), it.n_bins, false};
          part = sample_chunk<D>(g, it.sp, map, sel * it.stride, sink, it.rng);
        } else {
          part = sample_chunk<D>(g, it.sp, map, sel * it.stride, none, it.rng);
        }
      }
    }
    add_warp_flags<Adapt>(part, flags + i);
    double e = part.estimate, v = part.variance;
    block_tree_sum(e, v, s_red[k & 1u]);
    if (tid == 0) {
      tile_est[u] = e;
      tile_var[u] = v;
    }
  }
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

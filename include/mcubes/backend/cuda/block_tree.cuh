#pragma once
/// @file backend/cuda/block_tree.cuh
/// The CUDA block form of the fixed pairwise tree (core/fixed_tree.hpp): B values, one per thread
/// in thread order, merged level by level in shared memory, adjacent pairs first. It is the aligned
/// group of B leaves of fixed_tree_reduce, bitwise (tests/cuda/test_fixed_tree.cu). Used by the
/// chunk reductions (launch.cuh) and the map adaptation kernel (adapt_kernels.cuh). Also the
/// warp-shuffle forms of the V-Sample kernels (warp_tree_sum, block_tree_sum) and the register form
/// of a tile group with the body of the final reduction (group_pairwise_sum, tree_reduce_body;
/// tree_reduce_kernel in vegas_kernels.cuh), tested the same way.

#include <cstdint>

#include "../../core/fixed_tree.hpp"
#include "../../core/reduction.hpp"

namespace mcubes::cuda_detail {

/// Shared memory for block_tree_merge: B values of T (raw storage, since T may have default member
/// initialisers, which __shared__ variables cannot).
template <class T, int B>
struct block_tree_storage {
  alignas(T) unsigned char bytes[sizeof(T) * B];
  __device__ T* values() { return reinterpret_cast<T*>(bytes); }
};

/// Merges the B values v (one per thread, in thread order) over the fixed pairwise tree, adjacent
/// pairs first, level by level in shared memory: the aligned group of B leaves of core/tree_reduce.hpp.
/// Every thread of the block must call it (it synchronises); the result is valid in thread 0. The
/// storage may be reused after the call returns (it ends with a barrier).
template <int B, class T, class Merge>
__device__ T block_tree_merge(const T& v, block_tree_storage<T, B>& storage, const Merge& merge) {
  T* s = storage.values();
  const unsigned tid = threadIdx.x;
  s[tid] = v;
  __syncthreads();
#pragma unroll
  for (unsigned step = 1; step < static_cast<unsigned>(B); step <<= 1) {
    if ((tid & (2 * step - 1)) == 0) s[tid] = merge(s[tid], s[tid + step]);
    __syncthreads();
  }
  const T r = s[0];
  __syncthreads();
  return r;
}


/// The sum of the B values v (one per thread, in thread order) over the same pairwise tree as
/// block_tree_merge with plus_merge, bit for bit, by warp shuffles: each warp's 32 values (levels
/// 1..16, lane t adding lane t + s, own value first), then warp 0 over the B / 32 warp sums; two
/// barriers instead of log2(B) + 2. Every thread of the block calls it; the result is valid in
/// thread 0; `wbuf` (32 doubles of shared memory) may be reused once it returns. B a power of two
/// in [32, 1024].
template <int B>
__device__ double block_tree_add(double v, double* wbuf) {
  static_assert(B >= 32 && B <= 1024 && (B & (B - 1)) == 0, "B: a power of two in [32, 1024]");
  const unsigned tid = threadIdx.x, lane = tid & 31u, warp = tid >> 5;
#pragma unroll
  for (unsigned s = 1; s < 32; s <<= 1) v = v + __shfl_down_sync(0xffffffffu, v, s);
  if (lane == 0) wbuf[warp] = v;
  __syncthreads();
  double r = 0;
  if (warp == 0) {
    r = lane < static_cast<unsigned>(B / 32) ? wbuf[lane] : 0.0;
#pragma unroll
    for (unsigned s = 1; s < static_cast<unsigned>(B / 32); s <<= 1) r = r + __shfl_down_sync(0xffffffffu, r, s);
  }
  __syncthreads();
  return r;
}

/// Sums (e, v) of the 32 lanes of a warp over the fixed pairwise tree: level s = 1, 2, 4, 8, 16,
/// lane t adds the value of lane t + s (own value first, as a shared-memory tree does with
/// x[t] += x[t + s]). Lane 0 gets the sum; a lane t that is a multiple of 2s holds its node of
/// level s exactly (the other lanes compute values that nobody reads). Only the levels s < leaves
/// run (leaves: a power of two <= 32, the number of leaves of the tree). The whole warp calls it.
__device__ __forceinline__ void warp_tree_sum(double& e, double& v, unsigned leaves = 32) {
#pragma unroll
  for (unsigned s = 1; s < 32; s <<= 1) {
    if (s >= leaves) break;
    const double oe = __shfl_down_sync(0xffffffffu, e, s);
    const double ov = __shfl_down_sync(0xffffffffu, v, s);
    e = e + oe;
    v = v + ov;
  }
}

/// Sums the B = blockDim.x values (e, v) of the block's threads over the fixed pairwise tree
/// (thread index order, adjacent pairs first); thread 0 gets the result. `buf` is
/// 2 x 32 doubles of shared memory, used by warp 0 after a barrier: the caller alternates two
/// buffers between calls (double buffering), so that a warp that already writes the warp sums of
/// the next tile cannot overwrite sums that warp 0 still reads (the next barrier is only passed
/// once warp 0 has finished). One __syncthreads per call. B a power of two in [32, 1024].
__device__ __forceinline__ void block_tree_sum(double& e, double& v, double (*buf)[32]) {
  const unsigned tid = threadIdx.x, lane = tid & 31u, warp = tid >> 5;
  const unsigned n_warps = blockDim.x >> 5;
  warp_tree_sum(e, v);  // levels 1..16: the warp's 32 leaves
  if (lane == 0) {
    buf[0][warp] = e;
    buf[1][warp] = v;
  }
  __syncthreads();
  if (warp == 0) {  // levels 32..B/2: over the warp sums (lanes >= n_warps hold 0 and are never read)
    e = lane < n_warps ? buf[0][lane] : 0.0;
    v = lane < n_warps ? buf[1][lane] : 0.0;
    warp_tree_sum(e, v, n_warps);
  }
}

/// The tile loop of the kernels that sum stored chunk partials into tile values (balanced and
/// sorted V-Sample's last step): block b takes tiles tile_first + b, + gridDim.x, ... below
/// tile_end; thread t of tile k gets chunk k B + t's partial from partial(chunk, e, v) (0, 0 past
/// the last chunk: the callable decides) and the block sums the tile over the fixed pairwise tree
/// (block_tree_sum) into tile_est[k], tile_var[k], as v_sample_tiles does with the partials it
/// computes. B = blockDim.x a power of two in [32, 1024].
template <class Partial>
__device__ __forceinline__ void tile_tree_sums(std::uint64_t tile_first, std::uint64_t tile_end, double* tile_est,
                                               double* tile_var, const Partial& partial) {
  __shared__ double s_red[2][2][32];
  const unsigned B = blockDim.x, tid = threadIdx.x;
  for (unsigned k = 0;; ++k) {
    const std::uint64_t tile = tile_first + blockIdx.x + static_cast<std::uint64_t>(k) * gridDim.x;
    if (tile >= tile_end) break;
    double e = 0, v = 0;
    partial(tile * B + tid, e, v);
    block_tree_sum(e, v, s_red[k & 1u]);
    if (tid == 0) {
      tile_est[tile] = e;
      tile_var[tile] = v;
    }
  }
}

/// The register form of the fixed pairwise tree (core/fixed_tree.hpp) for one aligned group:
/// pairwise_sum(a, count, G) for count <= G, G a power of two, with the same additions. For
/// G <= 8 the leaves are loaded at once (independent loads, padded with 0.0 past count) and summed
/// level by level, adjacent pairs first; a subtree of padding sums to +0.0, which is exactly the
/// merge(left, 0.0) of fixed_tree_reduce's padded right subtrees. Larger groups use pairwise_sum
/// itself. Tested bitwise against fixed_tree_reduce (tests/cuda/test_fixed_tree.cu).
__device__ __forceinline__ double group_pairwise_sum(const double* a, std::uint64_t count, std::uint64_t G) {
  if (G > 8) return pairwise_sum(a, count, G);
  double v[8];
#pragma unroll
  for (unsigned i = 0; i < 8; ++i) v[i] = i < count ? a[i] : 0.0;
#pragma unroll
  for (unsigned s = 1; s < 8; s <<= 1)
#pragma unroll
    for (unsigned i = 0; i + s < 8; i += 2 * s)
      if (s < G) v[i] = v[i] + v[i + s];
  return v[0];
}

/// The body of tree_reduce_kernel: the fixed-tree sums of a[0..n) and b[0..n) (padded width
/// `width`, a power of two) to thread 0. Thread t < W = min(width, T) reduces the aligned group
/// [t*G, (t+1)*G), G = width / W (group_pairwise_sum); then the block reduces the W group sums
/// level by level: 5 levels inside each warp with shuffles, the rest over the warp sums in warp 0
/// (the same tree as x[t] += x[t + s] for s = 1, 2, ..., W/2).
__device__ __forceinline__ void tree_reduce_body(const double* a, const double* b, std::uint64_t n, std::uint64_t width,
                                                 double& sa, double& sb) {
  __shared__ double s_sums[2][32];
  const unsigned T = blockDim.x;
  const unsigned W = width < T ? static_cast<unsigned>(width) : T;  // leaves of the in-block tree
  const std::uint64_t G = width / W;                                // tile values per leaf
  const unsigned tid = threadIdx.x, lane = tid & 31u, warp = tid >> 5;
  double va = 0.0, vb = 0.0;
  if (tid < W) {
    const std::uint64_t first = tid * G;
    const std::uint64_t count = first < n ? (n - first < G ? n - first : G) : 0;
    va = group_pairwise_sum(a + first, count, G);
    vb = group_pairwise_sum(b + first, count, G);
  }
  warp_tree_sum(va, vb, W < 32 ? W : 32);
  if (W > 32) {
    if (lane == 0) {
      s_sums[0][warp] = va;
      s_sums[1][warp] = vb;
    }
    __syncthreads();
    if (warp == 0) {
      const unsigned n_warps = W >> 5;
      va = lane < n_warps ? s_sums[0][lane] : 0.0;
      vb = lane < n_warps ? s_sums[1][lane] : 0.0;
      warp_tree_sum(va, vb, n_warps);
    }
  }
  sa = va;
  sb = vb;
}

}  // namespace mcubes::cuda_detail

#pragma once
/// @file backend/cuda/vector_kernels.cuh
/// The __global__ functions of vector-valued integrands on the CUDA backend (algorithm/
/// vegas_vector.hpp): V-Sample / No-Adjust over tiles of B chunks, each chunk's partial the N
/// estimates and N (N + 1) / 2 covariance sums (M = N + N (N + 1) / 2 doubles) of
/// core/vector_sampler.hpp, and the final tree over the tiles. Launched only by backend/cuda/vector_pass.cuh
/// (cuda_backend::sample_passes of a vector integrand).
///
/// Two forms of V-Sample, the same sums:
///  - v_sample_vector_tile_kernel (N > 1 where M (B + 1) doubles fit in vector_tile_smem_limit for
///    B = 32): the block's B chunk partials live in dynamic shared memory, element-major with a
///    padded column stride, part[m (B + 1) + t] for element m of thread t's chunk. Thread t samples
///    its chunk into its column (sample_chunk_vector with out_stride B + 1: consecutive threads
///    write consecutive words); after a barrier, thread t reduces the elements m = t, t + B, ...
///    each over its B column values with the fixed pairwise tree (column_tree_sum; the padding
///    makes these strided reads conflict-free) into tile_out[m * n_tiles + k]; a second barrier
///    frees the tile for the next one. Per tile: 2 barriers and about 2 M operations per thread,
///    against about 4 M per sample and vector_chunk_samples samples per chunk.
///  - v_sample_vector_kernel (N = 1, whose chunks hold the scalar path's few samples, and N too
///    large for the tiles): the partial in local memory, reduced by the block two elements per
///    block_tree_sum call.
/// vector_tree_reduce_kernel finishes the tree over the tiles, two elements per block.
///
/// Determinism: a tile is an aligned group of B = 2^b chunk partials, a node of the fixed pairwise
/// tree (core/fixed_tree.hpp), and both forms sum it level by level, adjacent pairs first (left +
/// right; IEEE addition is commutative, so only the tree's shape matters), threads beyond the
/// pass's chunks holding zero partials as the CPU's zero leaves. Hence the same bits as the CPU's
/// (backend/cpu/vector_pass.hpp) for the same per-chunk arithmetic (no FMA contraction), for any
/// block size, kernel form and grid.

#include <cstddef>
#include <cstdint>

#include "../../core/vector_sampler.hpp"
#include "batch_kernels.cuh"
#include "vegas_kernels.cuh"

namespace mcubes {
namespace cuda_detail {

/// Dynamic shared memory of the tile kernel's partials: M rows (one per element) of B + 1 doubles
/// (one per thread, and a pad word, so that a warp whose threads read one row each hits distinct
/// banks).
MCUBES_HOST_DEVICE constexpr std::size_t vector_tile_smem_bytes(int m, int b) {
  return static_cast<std::size_t>(m) * static_cast<std::size_t>(b + 1) * sizeof(double);
}

/// Most dynamic shared memory the tile kernel uses: 96 KiB, so that at least two blocks fit on a
/// multiprocessor of 228 KiB (H100) and one on one of 100 KiB (sm_86, sm_89).
inline constexpr std::size_t vector_tile_smem_limit = 96 * 1024;

/// Whether N components take the tile kernel with blocks of B threads.
MCUBES_HOST_DEVICE constexpr bool vector_tile_fits(int n, int b) {
  return n > 1 && vector_tile_smem_bytes(n + n * (n + 1) / 2, b) <= vector_tile_smem_limit;
}

/// Blocks per multiprocessor the tile kernel is compiled for (__launch_bounds__): as many as fit
/// 227 KiB of shared memory, at most 512 / B (so that a thread may use 128 registers or more).
constexpr int vector_tile_min_blocks(int m, int b) {
  const std::size_t fit = (227 * 1024) / (vector_tile_smem_bytes(m, b) + 1024);
  const int cap = 512 / b;
  const int n = fit < static_cast<std::size_t>(cap) ? static_cast<int>(fit) : cap;
  return n < 1 ? 1 : n;
}

/// The fixed pairwise tree over x[0..B) (B a power of two >= 8): groups of 8 leaves summed as
/// ((x0 + x1) + (x2 + x3)) + ((x4 + x5) + (x6 + x7)), then the tree level by level over the B / 8
/// group sums: the nodes of the complete binary tree over the B leaves, as block_tree_sum.
template <int B>
__device__ __forceinline__ double column_tree_sum(const double* x) {
  static_assert(B >= 8 && (B & (B - 1)) == 0, "B: a power of two >= 8");
  double g[B / 8];
#pragma unroll
  for (int k = 0; k < B / 8; ++k) {
    double v[8];
#pragma unroll
    for (int i = 0; i < 8; ++i) v[i] = x[8 * k + i];
    g[k] = ((v[0] + v[1]) + (v[2] + v[3])) + ((v[4] + v[5]) + (v[6] + v[7]));
  }
#pragma unroll
  for (int s = 1; s < B / 8; s <<= 1)
#pragma unroll
    for (int i = 0; i + s < B / 8; i += 2 * s) g[i] = g[i] + g[i + s];
  return g[0];
}

/// V-Sample (Adapt) or No-Adjust of the vector integrand f over tiles of B chunks (grid-stride over
/// tiles), the partials in vector_tile_smem_bytes(M, B) bytes of dynamic shared memory (file
/// comment). Bins (Adapt): exact integer atomics into the global bins. Preconditions: bins and
/// overflow levels zero; *flags holds initial_flags(); blockDim.x == B; vector_tile_fits(N, B).
template <int D, int N, class F, bool Adapt, int B>
__global__ void __launch_bounds__(B, vector_tile_min_blocks(vector_partial_size<N>, B))
    v_sample_vector_tile_kernel(F f, sampling_params<D> sp, map_view<D> map, std::uint64_t stride, std::uint64_t n_sel,
                                std::uint64_t n_tiles, double* tile_out, bin_accumulator* bins, bin_accumulator* over,
                                device_flags* flags, philox_schedule rng) {
  constexpr int M = vector_partial_size<N>;
  constexpr int S = B + 1;  // column stride
  extern __shared__ double vector_tile_dyn[];  // [M][B + 1]
  const unsigned tid = threadIdx.x;
  double* const column = vector_tile_dyn + tid;
  thread_flags fl;
  no_bins none;
  for (std::uint64_t tile = blockIdx.x; tile < n_tiles; tile += gridDim.x) {
#pragma unroll 8
    for (int m = 0; m < M; ++m) column[m * S] = 0.0;
    const std::uint64_t sel = tile * B + tid;
    if (sel < n_sel) {
      chunk_partial cp;
      if constexpr (Adapt) {
        shared_bin_sink sink{nullptr, bins, over, static_cast<unsigned>(D * map.n_bins), map.n_bins, false};
        cp = sample_chunk_vector<D, N>(f, sp, map, sel * stride, sink, rng, column, S);
      } else {
        cp = sample_chunk_vector<D, N>(f, sp, map, sel * stride, none, rng, column, S);
      }
      fl.merge(cp);
    }
    __syncthreads();
    for (int m = static_cast<int>(tid); m < M; m += B)
      tile_out[static_cast<std::size_t>(m) * n_tiles + tile] = column_tree_sum<B>(vector_tile_dyn + m * S);
    __syncthreads();
  }
  fl.add_to(flags);
}

/// V-Sample (Adapt) or No-Adjust of the vector integrand f over tiles of blockDim.x chunks
/// (grid-stride over tiles), each thread's partial in local memory, reduced two elements per
/// block_tree_sum call. Bins (Adapt): exact integer atomics into the global bins.
/// Preconditions: bins and overflow levels zero; *flags holds initial_flags(); blockDim.x a power
/// of two in [32, MaxThreads].
template <int D, int N, class F, bool Adapt, int MaxThreads>
__global__ void __launch_bounds__(MaxThreads, 1)
    v_sample_vector_kernel(F f, sampling_params<D> sp, map_view<D> map, std::uint64_t stride, std::uint64_t n_sel,
                           std::uint64_t n_tiles, double* tile_out, bin_accumulator* bins, bin_accumulator* over,
                           device_flags* flags, philox_schedule rng) {
  constexpr int M = vector_partial_size<N>;
  __shared__ double s_red[2][2][32];
  const unsigned B = blockDim.x, tid = threadIdx.x;
  thread_flags fl;
  no_bins none;
  unsigned calls = 0;  // block_tree_sum calls: the two buffers alternate
  for (unsigned k = 0;; ++k) {
    const std::uint64_t tile = blockIdx.x + static_cast<std::uint64_t>(k) * gridDim.x;
    if (tile >= n_tiles) break;
    double part[M];
    for (int m = 0; m < M; ++m) part[m] = 0.0;
    const std::uint64_t sel = tile * B + tid;
    if (sel < n_sel) {
      chunk_partial cp;
      if constexpr (Adapt) {
        shared_bin_sink sink{nullptr, bins, over, static_cast<unsigned>(D * map.n_bins), map.n_bins, false};
        cp = sample_chunk_vector<D, N>(f, sp, map, sel * stride, sink, rng, part);
      } else {
        cp = sample_chunk_vector<D, N>(f, sp, map, sel * stride, none, rng, part);
      }
      fl.merge(cp);
    }
    for (int m = 0; m < M; m += 2) {
      double e = part[m], v = m + 1 < M ? part[m + 1] : 0.0;
      block_tree_sum(e, v, s_red[calls++ & 1u]);
      if (tid == 0) {
        tile_out[static_cast<std::size_t>(m) * n_tiles + tile] = e;
        if (m + 1 < M) tile_out[static_cast<std::size_t>(m + 1) * n_tiles + tile] = v;
      }
    }
  }
  fl.add_to(flags);
}

/// Block b finishes the fixed tree over the n_tiles tile values of elements 2b and 2b + 1
/// (tree_reduce_body, padded width `width`) into out[2b], out[2b + 1] (m < M); block 0 also copies
/// *flags into *out_flags and resets *flags.
template <int M, int MaxThreads = 1024>
__global__ void __launch_bounds__(MaxThreads) vector_tree_reduce_kernel(const double* tile_out, std::uint64_t n_tiles,
                                                                  std::uint64_t width, double* out, device_flags* flags,
                                                                  device_flags* out_flags) {
  const int m = 2 * static_cast<int>(blockIdx.x);
  const double* a = tile_out + static_cast<std::size_t>(m) * n_tiles;
  const double* b = m + 1 < M ? a + n_tiles : a;
  double sa, sb;
  tree_reduce_body(a, b, n_tiles, width, sa, sb);
  if (threadIdx.x == 0) {
    out[m] = sa;
    if (m + 1 < M) out[m + 1] = sb;
    if (blockIdx.x == 0) {
      *out_flags = *flags;
      *flags = initial_flags();
    }
  }
}

}  // namespace cuda_detail
}  // namespace mcubes

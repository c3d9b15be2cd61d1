#pragma once
/// @file backend/cuda/vector_kernels.cuh
/// The __global__ functions of vector-valued integrands on the CUDA backend (algorithm/
/// vegas_vector.hpp): V-Sample / No-Adjust over tiles of B chunks, each chunk's partial the N
/// estimates and N (N + 1) / 2 covariance sums of core/vector_sampler.hpp, and the final tree over
/// the tiles. Launched only by backend/cuda.cuh (cuda_backend::sample_vector).
///
/// Determinism (the scalar kernels' scheme, element by element): thread t of tile k samples chunk
/// (k B + t) stride into its partial (M = N + N (N + 1) / 2 doubles, in local memory); the block
/// sums each element over the fixed pairwise tree (block_tree_sum, two elements per call) into
/// tile_out[m * n_tiles + k] (element-major); vector_tree_reduce_kernel finishes the tree over the
/// tiles, two elements per block. The same tree as the CPU's (backend/cpu/vector_pass.hpp): the same
/// bits for the same per-chunk arithmetic (no FMA contraction), for any block size and grid.

#include <cstdint>

#include "../../core/vector_sampler.hpp"
#include "batch_kernels.cuh"
#include "vegas_kernels.cuh"

namespace mcubes {
namespace cuda_detail {

/// V-Sample (Adapt) or No-Adjust of the vector integrand f over tiles of blockDim.x chunks
/// (grid-stride over tiles). Bins (Adapt): exact integer atomics into the global bins.
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

#pragma once
/// @file backend/cuda/vegas_kernels.cuh
/// The __global__ functions of the CUDA Vegas backend (V-Sample, V-Sample-No-Adjust, the final
/// fixed-tree reduction, and the replay of one sample). Launched only by backend/cuda.cuh.
///
/// Work decomposition (determinism contract: run_to_run and launch-configuration invariant):
///  - thread t of tile k computes chunk (k*B + t)*stride serially (core/sampler.hpp); B is the
///    block size, a power of two, so a tile is an aligned group of B chunk partials, i.e. a node of
///    the fixed pairwise tree (core/reduction.hpp). The block reduces it in shared memory level by
///    level (adjacent pairs first) and writes one value per tile; blocks loop over tiles
///    (grid-stride), so the grid size changes nothing.
///  - tree_reduce_kernel finishes the same tree over the tile values.
///  - bin contributions: exact 128-bit integer accumulation (bin_accumulator) with 64-bit integer
///    atomics in shared memory (carry into the high word), flushed to global memory once per block.
///    Integer addition is associative, so the bits do not depend on the order of the atomics.
///  - n_nonzero (sum), first non-finite index (min) and largest contribution (max on the IEEE bit
///    pattern of a non-negative double) are order-independent integer atomics.

#include <cstdint>

#include "../../core/adaptive_map.hpp"
#include "../../core/reduction.hpp"
#include "../../core/sampler.hpp"

namespace mcubes {
namespace cuda_detail {

/// Order-independent flags of one pass, in device memory.
struct device_flags {
  unsigned long long n_nonzero;
  unsigned long long first_non_finite;
  unsigned long long max_contribution_bits;  ///< bit pattern of a non-negative double (ordered like the value)
};

/// Adds q to a 128-bit accumulator with integer atomics (shared or global memory).
__device__ __forceinline__ void atomic_add_128(bin_accumulator* a, unsigned long long q) {
  auto* lo = reinterpret_cast<unsigned long long*>(&a->lo);
  auto* hi = reinterpret_cast<unsigned long long*>(&a->hi);
  const unsigned long long old = atomicAdd(lo, q);
  if (old + q < old) atomicAdd(hi, 1ull);  // carry out of the low word
}

/// Bin sink over 128-bit accumulators (shared or global memory).
struct atomic_bin_sink {
  static constexpr bool enabled = true;
  bin_accumulator* bins;
  int n_bins;
  MCUBES_HOST_DEVICE void add(int axis, int bin, std::uint64_t q) {
#if defined(__CUDA_ARCH__)
    atomic_add_128(bins + axis * n_bins + bin, q);
#else
    (void)axis, (void)bin, (void)q;
#endif
  }
};

/// V-Sample (Adapt = true) or V-Sample-No-Adjust over tiles of blockDim.x chunks.
/// Dynamic shared memory: 2 * blockDim.x doubles, plus D * n_bins bin_accumulators when
/// shared_bins (else the bins are accumulated directly in global memory). MaxThreads (256 or
/// 1024) bounds blockDim.x, so that the compiler keeps the registers within what such a block can
/// have (a 1024-thread block gets at most 64 registers per thread); blocks of up to 256 threads
/// are compiled for 3 (V-Sample, whose ~70 KB of shared bins allow 3 per multiprocessor) or 4
/// (No-Adjust) resident blocks, i.e. at most 80 or 64 registers per thread.
template <int D, class F, bool Adapt, int MaxThreads>
__global__ void __launch_bounds__(MaxThreads, MaxThreads <= 256 ? (Adapt ? 3 : 4) : 1) v_sample_kernel(F f, sampling_params<D> sp, map_view<D> map, std::uint64_t stride, std::uint64_t n_sel,
                                std::uint64_t n_tiles, double* tile_est, double* tile_var, bin_accumulator* bins,
                                bool shared_bins, device_flags* flags) {
  extern __shared__ double smem[];
  const unsigned B = blockDim.x;
  const unsigned tid = threadIdx.x;
  double* s_est = smem;
  double* s_var = smem + B;
  __shared__ unsigned long long s_nonzero, s_first, s_max;
  bin_accumulator* s_bins = reinterpret_cast<bin_accumulator*>(smem + 2 * B);
  const int n_bin_values = D * map.n_bins;
  if (tid == 0) {
    s_nonzero = 0;
    s_first = ~0ull;
    s_max = 0;
  }
  if (Adapt && shared_bins)
    for (int i = tid; i < n_bin_values; i += B) s_bins[i] = bin_accumulator{};
  __syncthreads();
  atomic_bin_sink sink{shared_bins ? s_bins : bins, map.n_bins};
  no_bins none;

  unsigned long long my_nonzero = 0, my_first = ~0ull;
  double my_max = 0;
  for (std::uint64_t tile = blockIdx.x; tile < n_tiles; tile += gridDim.x) {
    const std::uint64_t sel = tile * B + tid;
    chunk_partial part;
    if (sel < n_sel) {
      if constexpr (Adapt)
        part = sample_chunk<D>(f, sp, map, sel * stride, sink);
      else
        part = sample_chunk<D>(f, sp, map, sel * stride, none);
    }
    my_nonzero += part.n_nonzero;
    if (part.first_non_finite < my_first) my_first = part.first_non_finite;
    if (part.max_contribution > my_max) my_max = part.max_contribution;
    s_est[tid] = part.estimate;
    s_var[tid] = part.variance;
    __syncthreads();
    for (unsigned s = 1; s < B; s <<= 1) {  // the fixed tree: adjacent pairs, level by level
      if ((tid & (2 * s - 1)) == 0) {
        s_est[tid] += s_est[tid + s];
        s_var[tid] += s_var[tid + s];
      }
      __syncthreads();
    }
    if (tid == 0) {
      tile_est[tile] = s_est[0];
      tile_var[tile] = s_var[0];
    }
    __syncthreads();
  }
  if (my_nonzero) atomicAdd(&s_nonzero, my_nonzero);
  if (my_first != ~0ull) atomicMin(&s_first, my_first);
  if (my_max > 0) atomicMax(&s_max, static_cast<unsigned long long>(__double_as_longlong(my_max)));
  __syncthreads();
  if (tid == 0) {
    if (s_nonzero) atomicAdd(&flags->n_nonzero, s_nonzero);
    if (s_first != ~0ull) atomicMin(&flags->first_non_finite, s_first);
    if (s_max) atomicMax(&flags->max_contribution_bits, s_max);
  }
  if (Adapt && shared_bins) {
    for (int i = tid; i < n_bin_values; i += B) {
      const bin_accumulator a = s_bins[i];
      if (a.lo | a.hi) {
        atomic_add_128(bins + i, a.lo);
        if (a.hi) atomicAdd(reinterpret_cast<unsigned long long*>(&bins[i].hi), static_cast<unsigned long long>(a.hi));
      }
    }
  }
}

/// Finishes the fixed pairwise tree over n tile values of a and b (padded width `width`, a power
/// of two): thread t reduces the aligned group [t*G, (t+1)*G) with pairwise_sum, then the block
/// reduces the group sums level by level. One block; blockDim.x a power of two.
__global__ void tree_reduce_kernel(const double* a, const double* b, std::uint64_t n, std::uint64_t width, double* out) {
  extern __shared__ double smem[];
  const unsigned T = blockDim.x;
  const unsigned W = width < T ? static_cast<unsigned>(width) : T;  // leaves of the in-block tree
  const std::uint64_t G = width / W;                                // tile values per leaf
  const unsigned tid = threadIdx.x;
  double* sa = smem;
  double* sb = smem + T;
  double va = 0.0, vb = 0.0;
  if (tid < W) {
    const std::uint64_t first = tid * G;
    const std::uint64_t count = first < n ? (n - first < G ? n - first : G) : 0;
    va = pairwise_sum(a + first, count, G);
    vb = pairwise_sum(b + first, count, G);
  }
  sa[tid] = va;
  sb[tid] = vb;
  __syncthreads();
  for (unsigned s = 1; s < W; s <<= 1) {
    if (tid < W && (tid & (2 * s - 1)) == 0) {
      sa[tid] += sa[tid + s];
      sb[tid] += sb[tid + s];
    }
    __syncthreads();
  }
  if (tid == 0) {
    out[0] = sa[0];
    out[1] = sb[0];
  }
}

/// Recomputes sample `index` and the integrand's value there (used to name a non-finite value).
template <int D, class F>
__global__ void replay_sample_kernel(F f, sampling_params<D> sp, map_view<D> map, std::uint64_t index, double* out) {
  std::uint64_t coord[D];
  cube_coordinates<D>(index / sp.p, sp.g, coord);
  point<D> x;
  int bin[D];
  make_sample<D>(sp, map, coord, index, x, bin);
  out[0] = f(x);
}

}  // namespace cuda_detail
}  // namespace mcubes

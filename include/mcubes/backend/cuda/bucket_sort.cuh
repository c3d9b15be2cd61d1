#pragma once
/// @file backend/cuda/bucket_sort.cuh
/// A counting sort of item indices by a small key, for the VEGAS+ kernels that want the threads
/// of a warp on items of one size: the light sub-cubes by count (sorted_sample.cuh) and the heavy
/// sub-cubes' segments by length (heavy_cubes.cuh). `Bucket` maps item i to its bucket in
/// [0, K), or to no_bucket (the item is left out); K <= bucket_sort_max (shared memory).
///  1. bucket_histogram_kernel: the items per bucket, counted in the block's shared memory, then
///     added to the global histogram; an exclusive scan (cub) gives each bucket's first position;
///  2. bucket_scatter_kernel: each item's index to a position of its bucket. A block takes tiles of
///     8 blockDim.x consecutive items: it counts each bucket's in shared memory, takes that many
///     positions from the bucket's global cursor with one atomicAdd, and hands them out by shared
///     atomics (one global atomic per bucket and tile, not per item: the cursors of a few buckets
///     are what every item would wait for).
/// The order within a bucket is that of the atomics: the users' results never depend on it (each
/// item's work and where it is written are the item's own). The list's length, first[K - 1] +
/// hist[K - 1], stays on the device. Extra device memory: 4 bytes per item and 12 per bucket.

#include <cub/device/device_scan.cuh>
#include <cuda_runtime.h>

#include <algorithm>
#include <cstddef>
#include <cstdint>

#include "check.cuh"
#include "device_array.cuh"

namespace mcubes {
namespace cuda_detail {

/// Most buckets of a bucket sort: 4 bytes each in the histogram's shared memory, 8 in the scatter's.
inline constexpr std::uint64_t bucket_sort_max = 2048;
/// The bucket of an item left out of the list.
inline constexpr unsigned no_bucket = ~0u;

/// The device memory of one bucket sort (grown, never shrunk).
struct bucket_buffers {
  device_array<unsigned> hist, first, cursor;  ///< per bucket: items, exclusive sums, fill cursor
  device_array<unsigned> list;                 ///< the items' indices, by bucket
  device_array<unsigned char> scan_scratch;
};

/// Step 1: hist[bucket(i)] += 1 for items i < n (not no_bucket). K buckets.
template <class Bucket>
__global__ void bucket_histogram_kernel(Bucket bucket, std::uint64_t n, unsigned K, unsigned* hist) {
  __shared__ unsigned s_hist[bucket_sort_max];
  for (unsigned b = threadIdx.x; b < K; b += blockDim.x) s_hist[b] = 0;
  __syncthreads();
  for (std::uint64_t i = blockIdx.x * static_cast<std::uint64_t>(blockDim.x) + threadIdx.x; i < n;
       i += static_cast<std::uint64_t>(gridDim.x) * blockDim.x) {
    const unsigned b = bucket(i);
    if (b != no_bucket) atomicAdd(&s_hist[b], 1u);
  }
  __syncthreads();
  for (unsigned b = threadIdx.x; b < K; b += blockDim.x)
    if (s_hist[b]) atomicAdd(&hist[b], s_hist[b]);
}

/// Step 2: list[first[b] + k] = i for the items i of bucket b (see the file comment). cursor zero
/// before.
template <class Bucket>
__global__ void __launch_bounds__(256) bucket_scatter_kernel(Bucket bucket, std::uint64_t n, unsigned K, const unsigned* first,
                                                             unsigned* cursor, unsigned* list) {
  constexpr unsigned I = 8;  // items per thread and tile
  __shared__ unsigned s_count[bucket_sort_max], s_base[bucket_sort_max];
  const unsigned B = blockDim.x, tid = threadIdx.x;
  const std::uint64_t tile = static_cast<std::uint64_t>(B) * I;
  for (std::uint64_t t0 = blockIdx.x * tile; t0 < n; t0 += static_cast<std::uint64_t>(gridDim.x) * tile) {
    for (unsigned b = tid; b < K; b += B) s_count[b] = 0;
    __syncthreads();
    unsigned of[I];
#pragma unroll
    for (unsigned k = 0; k < I; ++k) {
      const std::uint64_t i = t0 + k * B + tid;
      of[k] = i < n ? bucket(i) : no_bucket;
      if (of[k] != no_bucket) atomicAdd(&s_count[of[k]], 1u);
    }
    __syncthreads();
    for (unsigned b = tid; b < K; b += B) {
      const unsigned c = s_count[b];
      s_base[b] = c != 0 ? first[b] + atomicAdd(&cursor[b], c) : 0u;
      s_count[b] = 0;
    }
    __syncthreads();
#pragma unroll
    for (unsigned k = 0; k < I; ++k)
      if (of[k] != no_bucket) list[s_base[of[k]] + atomicAdd(&s_count[of[k]], 1u)] = static_cast<unsigned>(t0 + k * B + tid);
    __syncthreads();  // the tile's positions are handed out before the counts are zeroed again
  }
}

/// Steps 1 and 2 over items [0, n) (n < 2^32) into bb.list, queued on `stream` (no host wait).
/// @throws cuda_error if a CUDA call fails.
template <class Bucket>
void bucket_sort(bucket_buffers& bb, const Bucket& bucket, std::uint64_t n, unsigned K, int multiprocessors,
                 cudaStream_t stream) {
  if (bb.hist.size() < K) {
    bb.hist = device_array<unsigned>(K);
    bb.first = device_array<unsigned>(K);
    bb.cursor = device_array<unsigned>(K);
  }
  if (bb.list.size() < std::max<std::uint64_t>(n, 1)) bb.list = device_array<unsigned>(std::max<std::uint64_t>(n, 1));
  MCUBES_CUDA_CHECK(cudaMemsetAsync(bb.hist.data(), 0, K * sizeof(unsigned), stream));
  MCUBES_CUDA_CHECK(cudaMemsetAsync(bb.cursor.data(), 0, K * sizeof(unsigned), stream));
  const unsigned T = 256;
  const auto grid_for = [&](std::uint64_t work) {
    return static_cast<unsigned>(std::max<std::uint64_t>(1, std::min<std::uint64_t>((work + T - 1) / T, 8ull * multiprocessors)));
  };
  bucket_histogram_kernel<<<grid_for(n), T, 0, stream>>>(bucket, n, K, bb.hist.data());
  MCUBES_CUDA_CHECK_LAUNCH("bucket_histogram_kernel");
  std::size_t bytes = 0;
  MCUBES_CUDA_CHECK(cub::DeviceScan::ExclusiveSum(nullptr, bytes, bb.hist.data(), bb.first.data(), static_cast<int>(K), stream));
  if (bb.scan_scratch.size() < bytes) bb.scan_scratch = device_array<unsigned char>(bytes);
  MCUBES_CUDA_CHECK(
      cub::DeviceScan::ExclusiveSum(bb.scan_scratch.data(), bytes, bb.hist.data(), bb.first.data(), static_cast<int>(K), stream));
  bucket_scatter_kernel<<<grid_for((n + 7) / 8), T, 0, stream>>>(bucket, n, K, bb.first.data(), bb.cursor.data(), bb.list.data());
  MCUBES_CUDA_CHECK_LAUNCH("bucket_scatter_kernel");
}

}  // namespace cuda_detail
}  // namespace mcubes

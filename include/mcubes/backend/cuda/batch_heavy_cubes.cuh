#pragma once
/// @file backend/cuda/batch_heavy_cubes.cuh
/// The heavy sub-cubes of a batched round's VEGAS+ passes (backend/cuda/heavy_cubes.cuh for one
/// pass): the sub-cubes of more than T samples (heavy_above: at most L) of every pass of the round are sampled one segment
/// of L samples per thread, in a handful of launches for the whole round, before the batched
/// V-Sample launch, which then reads their I_c and var_c (batch_item::heavy, the precomputed-cubes
/// policy of core/sampler.hpp's sample_cubes). Without it a batched pass's thread samples every
/// sub-cube of its chunks serially, however many samples VEGAS+ gave them, and the few threads
/// with the heaviest sub-cubes set the round's time. (T below L does not change a bit: a sub-cube
/// of at most L samples is one segment wherever it is sampled.)
///
/// The chunks of the passes that take part (heavy_cubes_first: per-cube counts from shares, every
/// chunk) are numbered one after the other, pass by pass (batch_item::heavy_chunk_first, its
/// heavy_chunks); over these "round chunks":
///  1. batch_heavy_count_kernel: per round chunk, its heavy sub-cubes and their segments;
///     cub::DeviceScan exclusive sums give each chunk's first heavy index and first segment, and the
///     totals (left on the device: the host does not wait for them);
///  2. batch_heavy_list_kernel: the heavy sub-cubes (cube index, pass), in round-chunk order, and
///     the first segment of each;
///  3. batch_heavy_segment_kernel: thread per segment (each block a contiguous range, pass by
///     pass): the serial sums of its samples (sample_segment, the body of every backend's serial
///     pass), its bin terms (the block's shared-memory bins of the pass, flushed as exact integers
///     into the pass's bins) and its flags (integer atomics);
///  4. batch_heavy_finish_kernel: thread per heavy sub-cube: its segments' sums in order, then I_c,
///     var_c and the share (finish_cube).
/// Determinism: every sum is the one sample_cubes' segment rule defines, so each pass's sums are
/// bitwise those of its single run (whose heavy sub-cubes are sampled the same way) and of the
/// CPU's serial pass; the bins are exact integers, the flags order-independent integer reductions.
/// Extra device memory: O(round chunks + N / T + 2 N / L per pass) = O(m per pass), none per sample; the buffers are sized
/// from these bounds on the host (no host round trip in a round).

#include <cub/device/device_scan.cuh>
#include <cuda_runtime.h>

#include <algorithm>
#include <cstddef>
#include <cstdint>

#include "../../core/sampler.hpp"
#include "batch_kernels.cuh"
#include "check.cuh"
#include "device_array.cuh"
#include "heavy_cubes.cuh"
#include "occupancy.cuh"
#include "vegas_kernels.cuh"

namespace mcubes {
namespace cuda_detail {

/// The round's heavy-sub-cube buffers of a batch (grown, never shrunk).
struct batch_heavy_buffers {
  device_array<unsigned long long> chunk_heavy, chunk_segs;             ///< step 1 (round chunks + 1)
  device_array<unsigned long long> chunk_heavy_first, chunk_seg_first;  ///< their exclusive sums (totals last)
  device_array<unsigned char> scan_scratch;
  device_array<unsigned long long> cube, seg_first;  ///< step 2 (heavy bound, + 1)
  device_array<unsigned> pass_of;                    ///< step 2: the item of each heavy sub-cube
  device_array<double> seg_s1, seg_s2;               ///< step 3 (segment bound)
  device_array<double> means, vars;                  ///< step 4 (heavy bound)
  pinned_array<unsigned long long> host_heavy;       ///< the round's heavy sub-cubes (read after the round)
  bool listed = false;                               ///< the started round has heavy chunks
};

/// The item of round chunk rc: the largest i with items[i].heavy_chunk_first <= rc (items without
/// heavy chunks share the next item's first, so the item found holds rc).
template <int D, class P>
__device__ __forceinline__ unsigned heavy_item_of(const batch_item<D, P>* items, unsigned n, std::uint64_t rc) {
  unsigned lo = 0, hi = n;
  while (hi - lo > 1) {
    const unsigned mid = (lo + hi) / 2;
    if (items[mid].heavy_chunk_first <= rc) lo = mid; else hi = mid;
  }
  return lo;
}

/// Step 1: heavy[rc], segs[rc] of round chunk rc < n_chunks (heavy_count_kernel's rule with its
/// pass's counts and threshold items[i].heavy.above); heavy[n_chunks] = segs[n_chunks] = 0 (the exclusive sums' totals).
template <int D, class P>
__global__ void batch_heavy_count_kernel(const batch_item<D, P>* items, unsigned n_items, std::uint64_t n_chunks,
                                         unsigned long long* heavy, unsigned long long* segs) {
  for (std::uint64_t rc = blockIdx.x * static_cast<std::uint64_t>(blockDim.x) + threadIdx.x; rc <= n_chunks;
       rc += static_cast<std::uint64_t>(gridDim.x) * blockDim.x) {
    unsigned long long nh = 0, ns = 0, light = 0;
    if (rc < n_chunks) {
      const batch_item<D, P>& it = items[heavy_item_of(items, n_items, rc)];
      const std::uint64_t cc = it.sp.chunk_cubes;
      const std::uint64_t begin = (rc - it.heavy_chunk_first) * cc;
      const std::uint64_t end = begin + cc < it.sp.n_cubes ? begin + cc : it.sp.n_cubes;
      count_heavy_cubes(it.sp.counts, it.heavy.above, begin, end, nh, ns, light);
    }
    heavy[rc] = nh;
    segs[rc] = ns;
  }
}

/// Step 2: cube[h], pass_of[h] and seg_first[h] of round chunk rc's heavy sub-cubes from the
/// exclusive sums heavy_first[rc], seg_first_of_chunk[rc]; the last chunk writes seg_first[n_heavy].
template <int D, class P>
__global__ void batch_heavy_list_kernel(const batch_item<D, P>* items, unsigned n_items, std::uint64_t n_chunks,
                                        const unsigned long long* heavy_first, const unsigned long long* seg_first_of_chunk,
                                        unsigned long long* cube, unsigned* pass_of, unsigned long long* seg_first) {
  for (std::uint64_t rc = blockIdx.x * static_cast<std::uint64_t>(blockDim.x) + threadIdx.x; rc < n_chunks;
       rc += static_cast<std::uint64_t>(gridDim.x) * blockDim.x) {
    const unsigned i = heavy_item_of(items, n_items, rc);
    const batch_item<D, P>& it = items[i];
    unsigned long long h = heavy_first[rc], s = seg_first_of_chunk[rc];
    const std::uint64_t cc = it.sp.chunk_cubes;
    const std::uint64_t begin = (rc - it.heavy_chunk_first) * cc;
    const std::uint64_t end = begin + cc < it.sp.n_cubes ? begin + cc : it.sp.n_cubes;
    list_heavy_cubes_of(it.sp.counts, it.heavy.above, begin, end, h, s, cube, seg_first,
                        [&](unsigned long long hh) { pass_of[hh] = i; });
    if (rc + 1 == n_chunks) seg_first[h] = s;
  }
}

/// Step 3: the segments s < *n_segments, thread per segment: its heavy sub-cube (binary search in
/// seg_first over *n_heavy), its pass's integrand, map, uniforms and counts; the segment's serial
/// sums to seg_s1[s], seg_s2[s]; flags by integer atomics into flags[i]. Block b takes the
/// contiguous segments [b per, (b + 1) per) (per = ceil(total / grid) rounded up to a multiple of
/// the block, so that a block stays on one pass for many segments) and walks them pass by pass: the
/// bins of a V-Sample pass (items i < n_adapt) in shared memory when `shared_bins` (the low words,
/// shared_bin_sink; flushed into the pass's global 128-bit bins when the block leaves the pass),
/// else exact integer atomics straight into them. Either way the same integers. Dynamic shared
/// memory: D n_bins words with shared_bins (every pass has the same n_bins).
template <int D, class F, class P>
__global__ void __launch_bounds__(256)
    batch_heavy_segment_kernel(F f, const batch_item<D, P>* __restrict__ items, unsigned n_adapt,
                               const unsigned long long* cube, const unsigned* pass_of, const unsigned long long* seg_first,
                               const unsigned long long* chunk_seg_first, const unsigned long long* n_heavy_p,
                               const unsigned long long* n_segments_p, double* seg_s1, double* seg_s2, device_flags* flags,
                               bool shared_bins) {
  extern __shared__ unsigned long long batch_heavy_dyn[];  // a pass's bin low words (shared_bins)
  const std::uint64_t n_heavy = *n_heavy_p, n_segments = *n_segments_p;
  const std::uint64_t B = blockDim.x;
  std::uint64_t per = (n_segments + gridDim.x - 1) / gridDim.x;
  per = (per + B - 1) / B * B;
  std::uint64_t s0 = blockIdx.x * per;
  const std::uint64_t s_end = s0 + per < n_segments ? s0 + per : n_segments;
  no_bins none;
  while (s0 < s_end) {  // the block's segments of one pass at a time (the same values in every thread)
    const unsigned i = pass_of[heavy_of_segment(seg_first, n_heavy, s0)];
    const batch_item<D, P>& it = items[i];
    const std::uint64_t pass_end = chunk_seg_first[it.heavy_chunk_first + it.heavy_chunks];
    const std::uint64_t e = pass_end < s_end ? pass_end : s_end;
    const bool adapt = i < n_adapt;
    const unsigned n_values = static_cast<unsigned>(D * it.n_bins);
    const bool in_smem = adapt && shared_bins;
    if (in_smem) {
      for (unsigned k = threadIdx.x; k < n_values; k += blockDim.x) batch_heavy_dyn[k] = 0ull;
      __syncthreads();
    }
    for (std::uint64_t s = s0 + threadIdx.x; s < e; s += B) {
      const std::uint64_t h = heavy_of_segment(seg_first, n_heavy, s);
      const with_parameters<F, P> g{f, it.params};
      const map_view<D> map{it.edges, it.n_bins};
      chunk_partial part;
      double t1, t2;
      if (adapt) {
        shared_bin_sink sink{batch_heavy_dyn, it.bins, it.over, n_values, it.n_bins, in_smem};
        sample_heavy_segment<D>(g, it.sp, map, it.rng, cube[h], s - seg_first[h], sink, part, t1, t2);
      } else {
        sample_heavy_segment<D>(g, it.sp, map, it.rng, cube[h], s - seg_first[h], none, part, t1, t2);
      }
      seg_s1[s] = t1;
      seg_s2[s] = t2;
      thread_flags fl;
      fl.merge(part);
      if (fl.n_nonzero) atomicAdd(&flags[i].n_nonzero, fl.n_nonzero);
      if (fl.first_non_finite != ~0ull) atomicMin(&flags[i].first_non_finite, fl.first_non_finite);
      if (fl.max_contribution_bits) atomicMax(&flags[i].max_contribution_bits, fl.max_contribution_bits);
    }
    if (in_smem) {
      __syncthreads();
      flush_shared_bins(batch_heavy_dyn, it.bins, static_cast<int>(n_values));
      __syncthreads();
    }
    s0 = e;
  }
}

/// Step 4: thread per heavy sub-cube h < *n_heavy: s1, s2 = serial sums of its segments' sums in
/// order, then finish_cube with its pass's counts (I_c, var_c, the share).
template <int D, class P>
__global__ void batch_heavy_finish_kernel(const batch_item<D, P>* items, const unsigned long long* cube, const unsigned* pass_of,
                                          const unsigned long long* seg_first, const unsigned long long* n_heavy_p,
                                          const double* seg_s1, const double* seg_s2, double* means, double* vars) {
  const std::uint64_t n_heavy = *n_heavy_p;
  for (std::uint64_t h = blockIdx.x * static_cast<std::uint64_t>(blockDim.x) + threadIdx.x; h < n_heavy;
       h += static_cast<std::uint64_t>(gridDim.x) * blockDim.x) {
    const cube_estimate ce =
        finish_heavy_cube(items[pass_of[h]].sp.counts, cube[h], seg_first[h], seg_first[h + 1], seg_s1, seg_s2);
    means[h] = ce.mean;
    vars[h] = ce.var;
  }
}

/// Host side, before the items are copied: grows hb for `n_chunks` round chunks, at most
/// `max_heavy` heavy sub-cubes and `max_segments` segments, and points each taking part item's
/// `heavy` view at its slice (items without heavy chunks keep a view of none).
/// @throws cuda_error if an allocation fails.
template <int D, class P>
void prepare_batch_heavy(batch_heavy_buffers& hb, batch_item<D, P>* host_items, std::size_t n_items, std::uint64_t n_chunks,
                         std::uint64_t max_heavy, std::uint64_t max_segments) {
  grow(hb.chunk_heavy, n_chunks + 1);
  grow(hb.chunk_segs, n_chunks + 1);
  grow(hb.chunk_heavy_first, n_chunks + 1);
  grow(hb.chunk_seg_first, n_chunks + 1);
  grow(hb.cube, max_heavy + 1);
  grow(hb.pass_of, max_heavy + 1);
  grow(hb.seg_first, max_heavy + 1);
  grow(hb.means, max_heavy + 1);
  grow(hb.vars, max_heavy + 1);
  grow(hb.seg_s1, max_segments + 1);
  grow(hb.seg_s2, max_segments + 1);
  for (std::size_t j = 0; j < n_items; ++j) {
    batch_item<D, P>& it = host_items[j];
    if (it.heavy_chunks == 0) continue;
    it.heavy.chunk_first = hb.chunk_heavy_first.data() + it.heavy_chunk_first;
    it.heavy.means = hb.means.data();
    it.heavy.vars = hb.vars.data();
    it.heavy.chunk_cubes = it.sp.chunk_cubes;
  }
}

/// Steps 1-4 on `stream` for the n_items items at `items` (device; the first n_adapt V-Sample
/// passes, flags[i] item i's), whose heavy chunks number n_chunks > 0 (prepare_batch_heavy done,
/// the items copied, the adapting passes' bins zeroed). Does not wait: the number of heavy
/// sub-cubes reaches hb.host_heavy with the round's results (cuda_backend::heavy_cubes_sampled).
/// @throws cuda_error if a launch or the scan fails.
template <int D, class F, class P>
void sample_batch_heavy_cubes(batch_heavy_buffers& hb, const F& f, const batch_item<D, P>* items, unsigned n_items,
                              unsigned n_adapt, int n_bins, std::uint64_t n_chunks, device_flags* flags, kernel_occupancy& occupancy,
                              int multiprocessors, cudaStream_t stream) {
  const unsigned T = 256;
  const auto grid_for = [&](std::uint64_t n) {
    return static_cast<unsigned>(std::max<std::uint64_t>(1, std::min<std::uint64_t>((n + T - 1) / T, 32ull * multiprocessors)));
  };
  batch_heavy_count_kernel<D, P><<<grid_for(n_chunks + 1), T, 0, stream>>>(items, n_items, n_chunks, hb.chunk_heavy.data(),
                                                                           hb.chunk_segs.data());
  MCUBES_CUDA_CHECK_LAUNCH("batch_heavy_count_kernel");
  scan_heavy_counts(hb.scan_scratch, hb.chunk_heavy.data(), hb.chunk_heavy_first.data(), hb.chunk_segs.data(),
                    hb.chunk_seg_first.data(), n_chunks + 1, stream);
  batch_heavy_list_kernel<D, P><<<grid_for(n_chunks), T, 0, stream>>>(items, n_items, n_chunks, hb.chunk_heavy_first.data(),
                                                                      hb.chunk_seg_first.data(), hb.cube.data(),
                                                                      hb.pass_of.data(), hb.seg_first.data());
  MCUBES_CUDA_CHECK_LAUNCH("batch_heavy_list_kernel");
  const unsigned long long* n_heavy = hb.chunk_heavy_first.data() + n_chunks;
  const unsigned long long* n_segments = hb.chunk_seg_first.data() + n_chunks;
  auto kernel = batch_heavy_segment_kernel<D, F, P>;
  const std::size_t smem_bins = static_cast<std::size_t>(D) * n_bins * sizeof(unsigned long long);
  const bool shared_bins = n_adapt > 0 && smem_bins <= batch_smem_limit;
  const std::size_t smem = shared_bins ? smem_bins : 0;
  const int per_sm = std::max(1, occupancy.blocks_per_sm(kernel, static_cast<int>(T), smem));
  kernel<<<static_cast<unsigned>(per_sm) * static_cast<unsigned>(multiprocessors), T, smem, stream>>>(
      f, items, n_adapt, hb.cube.data(), hb.pass_of.data(), hb.seg_first.data(), hb.chunk_seg_first.data(), n_heavy,
      n_segments, hb.seg_s1.data(), hb.seg_s2.data(), flags, shared_bins);
  MCUBES_CUDA_CHECK_LAUNCH("batch_heavy_segment_kernel");
  batch_heavy_finish_kernel<D, P><<<static_cast<unsigned>(8 * multiprocessors), T, 0, stream>>>(
      items, hb.cube.data(), hb.pass_of.data(), hb.seg_first.data(), n_heavy, hb.seg_s1.data(), hb.seg_s2.data(),
      hb.means.data(), hb.vars.data());
  MCUBES_CUDA_CHECK_LAUNCH("batch_heavy_finish_kernel");
  if (hb.host_heavy.size() < 1) hb.host_heavy = pinned_array<unsigned long long>(1);
  MCUBES_CUDA_CHECK(cudaMemcpyAsync(hb.host_heavy.data(), n_heavy, sizeof(unsigned long long), cudaMemcpyDeviceToHost, stream));
  hb.listed = true;
}

}  // namespace cuda_detail
}  // namespace mcubes

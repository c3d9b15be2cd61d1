#pragma once
/// @file backend/cuda/heavy_cubes.cuh
/// VEGAS+ on the GPU without one thread per large sub-cube: the heavy sub-cubes of a scalar pass
/// (those whose count n_c exceeds T = heavy_above, at most the segment length L of
/// core/cube_counts.hpp) are sampled one segment of at most L samples per thread before the
/// V-Sample launch, which then takes their I_c and var_c
/// as given (core/sampler.hpp, sample_cubes with a precomputed-cubes policy). Without it a sub-cube
/// of up to 50000 samples is one thread's serial loop, and a handful of threads set a pass's time.
///
/// Steps (one stream; launched by backend/cuda/vegas_pass.cuh for passes with VEGAS+ counts):
///  1. heavy_count_kernel: per chunk, its heavy sub-cubes and their segments; cub::DeviceScan
///     exclusive sums over the chunks give each chunk's first heavy index and first segment, and
///     the totals, which the host reads (one small copy; no heavy sub-cube: nothing more is done).
///  2. heavy_list_kernel: per chunk, the list of its heavy sub-cubes (index order) and the first
///     segment of each (seg_first[h], with seg_first[n_heavy] = the number of segments).
///  3. per segment s, its sub-cube h (a search in seg_first) and the serial sums t1, t2 of its
///     samples, its bin terms and flags (sample_term, the body of every backend's serial pass);
///     the sums go to seg_s1[s], seg_s2[s]. heavy_segment_kernel: thread per segment, where the
///     segments fill the device; heavy_sample_kernel: a warp per segment, 32 samples at a time,
///     their values added in index order by one lane, where they are few (a thread's loop of L
///     samples would set the pass's time). The same bits either way.
///  4. heavy_finish_kernel: a warp per heavy sub-cube: s1, s2 as the serial sums of its segments'
///     sums in order, then I_c, var_c and the share (finish_cube) into heavy_mean[h], heavy_var[h].
///  5. the V-Sample launch reads heavy_mean / heavy_var in sample_cubes' order (heavy_cube_sums).
/// Determinism: every sum is the one sample_cubes' segment rule defines; the bins are exact
/// integers and the flags order-independent integer reductions; no grid, block size or thread
/// count enters any value, so the bits are those of the CPU's serial pass. Extra device memory:
/// O(number of chunks + heavy sub-cubes + segments) = O(m) (at most 2 N / L <= m segments), none per
/// sample.

#include <cub/device/device_scan.cuh>
#include <cuda_runtime.h>

#include <algorithm>
#include <cstddef>
#include <cstdint>

#include "../../core/sampler.hpp"
#include "../../core/stratification.hpp"
#include "bucket_sort.cuh"
#include "check.cuh"
#include "device_array.cuh"
#include "heavy_lists.cuh"
#include "vegas_kernels.cuh"

namespace mcubes {
namespace cuda_detail {

/// The heavy sub-cube of segment s: the h < n_heavy with seg_first[h] <= s < seg_first[h + 1].
__device__ __forceinline__ std::uint64_t heavy_of_segment(const unsigned long long* seg_first, std::uint64_t n_heavy,
                                                          std::uint64_t s) {
  std::uint64_t lo = 0, hi = n_heavy;
  while (hi - lo > 1) {
    const std::uint64_t mid = lo + (hi - lo) / 2;
    if (seg_first[mid] <= s) lo = mid; else hi = mid;
  }
  return lo;
}

/// heavy_of_segment for a whole warp that looks up the same s (every lane calls it, with the same
/// arguments): a 32-ary search, each round's 31 probes loaded in parallel by the lanes and counted
/// with a ballot (seg_first increases, so the probes at or below s are a prefix of the lanes):
/// ceil(log32 n_heavy) dependent loads instead of ceil(log2 n_heavy). The same h.
__device__ __forceinline__ std::uint64_t heavy_of_segment_warp(const unsigned long long* seg_first, std::uint64_t n_heavy,
                                                               std::uint64_t s, unsigned lane) {
  std::uint64_t lo = 0, hi = n_heavy;  // seg_first[lo] <= s, and hi == n_heavy or seg_first[hi] > s
  while (hi - lo > 1) {
    const std::uint64_t step = (hi - lo + 31) / 32;
    const std::uint64_t p = lo + (lane + 1) * step;
    const unsigned below = __ballot_sync(0xffffffffu, p < hi && seg_first[p] <= s);
    const std::uint64_t k = static_cast<std::uint64_t>(__popc(below));
    const std::uint64_t next = lo + (k + 1) * step;
    lo += k * step;
    hi = next < hi ? next : hi;
  }
  return lo;
}

/// Step 3 for segment k of sub-cube c (samples [k L, min(n_c, (k + 1) L)) of it): its serial
/// sums t1, t2 (from 0), its bin terms into `bins` and its flags into `part` (sample_segment).
template <int D, class F, class Bins, class U>
__device__ __forceinline__ void sample_heavy_segment(const F& f, const sampling_params<D>& sp, const map_view<D>& map,
                                                     const U& rng, std::uint64_t c, std::uint64_t k, Bins& bins,
                                                     chunk_partial& part, double& t1, double& t2) {
  const std::uint64_t n = sp.counts.count(c), L = sp.counts.segment;
  const std::uint64_t k0 = k * L, k1 = n - k0 > L ? k0 + L : n;
  cube_coord_t<D> coord[D];
  cube_start<D>(c, sp.g, coord);
  double cd[D];
  for (int j = 0; j < D; ++j) cd[j] = static_cast<double>(coord[j]);
  const double term_scale = sp.bin_scale / static_cast<double>(n);
  const std::uint64_t first = c * sp.p;
  t1 = t2 = 0;
  sample_segment<D>(f, sp, map, rng, cd, first + k0, first + k1, first, term_scale, bins, part, t1, t2, no_poll{});
}

/// Step 1: heavy[ch] = the chunk's sub-cubes of more than `above` samples, segs[ch] = their segments
/// (ceil(n_c / L) each); heavy[n_chunks] = segs[n_chunks] = 0 (the exclusive sums' totals); with
/// `work`, work[ch] the chunk's work (chunk_work_base) and work[n_chunks] = 0.
template <int Unused = 0>  // a template: vague linkage (a program may include this header in several units)
__global__ void heavy_count_kernel(cube_counts counts, std::uint64_t above, std::uint64_t n_cubes, std::uint64_t chunk_cubes,
                                   std::uint64_t n_chunks, std::uint64_t chunk_begin, std::uint64_t chunk_end,
                                   unsigned long long* heavy, unsigned long long* segs, unsigned long long* work) {
  for (std::uint64_t ch = blockIdx.x * static_cast<std::uint64_t>(blockDim.x) + threadIdx.x; ch <= n_chunks;
       ch += static_cast<std::uint64_t>(gridDim.x) * blockDim.x) {
    unsigned long long nh = 0, ns = 0, w = 0;
    if (ch >= chunk_begin && ch < chunk_end) {  // the chunks of this pass (a team rank's: backend/team.hpp)
      const std::uint64_t begin = ch * chunk_cubes, end = begin + chunk_cubes < n_cubes ? begin + chunk_cubes : n_cubes;
      w = chunk_work_base + chunk_work_per_cube * (end - begin);
      count_heavy_cubes(counts, above, begin, end, nh, ns, w);
    }
    heavy[ch] = nh;
    segs[ch] = ns;
    if (work != nullptr) work[ch] = w;
  }
}

/// The cost of the chunk-per-thread kernel in work units: for each group of 32 consecutive chunks
/// (a warp of v_sample_kernel), 32 times its largest work[ch], summed into *cost (integer atomics).
/// Against the total work it says how much of a warp's time its threads idle (balanced_sample.cuh).
template <int Unused = 0>  // a template: vague linkage
__global__ void warp_cost_kernel(const unsigned long long* work, std::uint64_t n_chunks, unsigned long long* cost) {
  unsigned long long acc = 0;
  for (std::uint64_t g = blockIdx.x * static_cast<std::uint64_t>(blockDim.x) + threadIdx.x; g * 32 < n_chunks;
       g += static_cast<std::uint64_t>(gridDim.x) * blockDim.x) {
    unsigned long long mx = 0;
    for (std::uint64_t ch = g * 32; ch < g * 32 + 32 && ch < n_chunks; ++ch) mx = work[ch] > mx ? work[ch] : mx;
    acc += 32 * mx;
  }
  if (acc) atomicAdd(cost, acc);
}

/// Step 2: cube[h] and seg_first[h] of the chunk's heavy sub-cubes from its exclusive sums
/// heavy_first[ch], seg_first_of_chunk[ch]; the last chunk also writes seg_first[n_heavy].
template <int Unused = 0>  // a template: vague linkage (a program may include this header in several units)
__global__ void heavy_list_kernel(cube_counts counts, std::uint64_t above, std::uint64_t n_cubes, std::uint64_t chunk_cubes,
                                  std::uint64_t n_chunks,
                                  std::uint64_t chunk_begin, std::uint64_t chunk_end, const unsigned long long* heavy_first,
                                  const unsigned long long* seg_first_of_chunk, unsigned long long* cube,
                                  unsigned long long* seg_first) {
  for (std::uint64_t ch = blockIdx.x * static_cast<std::uint64_t>(blockDim.x) + threadIdx.x; ch < n_chunks;
       ch += static_cast<std::uint64_t>(gridDim.x) * blockDim.x) {
    unsigned long long h = heavy_first[ch], s = seg_first_of_chunk[ch];
    if (ch >= chunk_begin && ch < chunk_end) {  // as heavy_count_kernel
      const std::uint64_t begin = ch * chunk_cubes, end = begin + chunk_cubes < n_cubes ? begin + chunk_cubes : n_cubes;
      list_heavy_cubes_of(counts, above, begin, end, h, s, cube, seg_first, [](unsigned long long) {});
    }
    if (ch + 1 == n_chunks) seg_first[h] = s;
  }
}

/// The bucket of segment s for the sort by length (bucket_sort.cuh, heavy_segment_kernel's
/// `order`): its length - 1 (segments of 1 to L samples).
struct segment_length_bucket {
  cube_counts counts;
  const unsigned long long* cube;
  const unsigned long long* seg_first;
  std::uint64_t n_heavy;
  __device__ unsigned operator()(std::uint64_t s) const {
    const std::uint64_t h = heavy_of_segment(seg_first, n_heavy, s), L = counts.segment;
    const std::uint64_t n = counts.count(cube[h]), k0 = (s - seg_first[h]) * L;
    return static_cast<unsigned>((n - k0 > L ? L : n - k0) - 1);
  }
};

/// Step 3, thread per segment (sample_heavy_segment), grid-stride: the form for passes whose
/// segments fill the device (cuda_launch_policy::spread_heavy_below; heavy_sample_kernel below is
/// for fewer). Thread i takes segment order[i] (the segments sorted by length, so that a warp's
/// threads loop over as many samples each: bucket_sort.cuh), or segment i where order is null.
/// V-Sample: Adapt, the bins; No-Adjust: none. The bins
/// go through shared_bin_sink (in shared memory when `shared_bins`, flushed at the block's end);
/// the flags are folded per warp and added once per block, as in v_sample_kernel. blockDim.x a
/// multiple of 32, at most 256.
template <int D, class F, bool Adapt>
__global__ void __launch_bounds__(256, v_sample_min_blocks<Adapt, 256, F>)
    heavy_segment_kernel(F f, sampling_params<D> sp, map_view<D> map, const unsigned long long* cube,
                         const unsigned long long* seg_first, std::uint64_t n_heavy, std::uint64_t n_segments, double* seg_s1,
                         double* seg_s2, bin_accumulator* bins, bin_accumulator* over, bool shared_bins, device_flags* flags,
                         philox_schedule rng, const unsigned* order) {
  extern __shared__ unsigned long long heavy_dyn[];  // the bins' low words (shared_bins)
  __shared__ warp_flags s_flags[8];
  const unsigned B = blockDim.x, tid = threadIdx.x, warp = tid >> 5;
  const int n_bin_values = D * map.n_bins;
  const bool bins_in_smem = Adapt && shared_bins;
  if ((tid & 31u) == 0) s_flags[warp] = warp_flags{0ull, ~0ull, 0ull};
  if (bins_in_smem)
    for (int i = tid; i < n_bin_values; i += B) heavy_dyn[i] = 0ull;
  __syncthreads();
  shared_bin_sink sink{heavy_dyn, bins, over, static_cast<unsigned>(n_bin_values), map.n_bins, bins_in_smem};
  no_bins none;
  for (std::uint64_t base = blockIdx.x * static_cast<std::uint64_t>(B); base < n_segments;
       base += static_cast<std::uint64_t>(gridDim.x) * B) {  // the same trip count for the whole block
    const std::uint64_t i = base + tid;
    chunk_partial part;
    if (i < n_segments) {
      const std::uint64_t s = order != nullptr ? order[i] : i;
      const std::uint64_t h = heavy_of_segment(seg_first, n_heavy, s);
      double t1, t2;
      if constexpr (Adapt)
        sample_heavy_segment<D>(f, sp, map, rng, cube[h], s - seg_first[h], sink, part, t1, t2);
      else
        sample_heavy_segment<D>(f, sp, map, rng, cube[h], s - seg_first[h], none, part, t1, t2);
      seg_s1[s] = t1;
      seg_s2[s] = t2;
    }
    fold_warp_flags<Adapt>(part, s_flags[warp]);
  }
  __syncthreads();
  if (tid == 0) add_block_flags(s_flags, B >> 5, flags);
  if (bins_in_smem) flush_shared_bins(heavy_dyn, bins, n_bin_values);
}

/// Bytes of dynamic shared memory of a heavy_sample_kernel launch of B threads: the bins' low words
/// when they are kept in shared memory (shared_bins: Adapt only), then per warp the values of a
/// piece of 32 samples (2 x 32 doubles) and its segment's sub-cube coordinates (D doubles). Its
/// static shared memory is under v_sample_static_smem_bytes (the backend's bound for every kernel).
/// The map's edges stay in global memory: copying them into each block's shared memory, as
/// V-Sample does, made the kernel 10-35 % slower on an H200 (f4 8-D at 1e6 calls; a launch of a
/// few segments 13 -> 17 us: bench/results/2026-11-30-heavy-warps.md).
template <int D>
inline constexpr std::size_t heavy_sample_dynamic_smem_bytes(std::size_t n_bin_values, bool shared_bins, std::size_t B) {
  return (shared_bins ? n_bin_values * sizeof(unsigned long long) : 0) + (64 + static_cast<std::size_t>(D)) * (B / 32) * 8;
}

/// Step 3, a warp per segment: the form for passes of fewer segments than fill the device
/// (cuda_launch_policy::spread_heavy_below: a small problem's few large sub-cubes), where a thread's
/// loop over the L samples of its segment is the pass's time. The same bits as
/// heavy_segment_kernel. V-Sample: Adapt, the bins; No-Adjust: none.
/// Warp w of block b takes segments b W + w, b W + w + gridDim.x W, ... (W = blockDim.x / 32): its
/// lanes look the segment up together (heavy_of_segment_warp: a 32-ary search), lane 0
/// writes its sub-cube's coordinates to the warp's shared slot, then the warp samples it in pieces
/// of 32 (lane i: sample k + i, sample_term, the body of every backend's serial pass), the
/// values into the warp's shared slot, and lane 0 adds them in index order into the segment's
/// t1, t2 (from 0: sample_segment's sums, bit for bit), written to seg_s1[s], seg_s2[s]. Warps
/// synchronise only among their lanes (__syncwarp), so a warp's serial sum overlaps the others'
/// sampling; the block meets only to zero and to flush the bins. The bins go through
/// shared_bin_sink (in shared memory when `shared_bins`, flushed at the block's end); the flags are
/// kept per thread, folded per warp and added once per block. blockDim.x a multiple of 32, at most
/// 256.
template <int D, class F, bool Adapt>
__global__ void __launch_bounds__(256, v_sample_min_blocks<Adapt, 256, F>)
    heavy_sample_kernel(F f, sampling_params<D> sp, map_view<D> map, const unsigned long long* cube,
                        const unsigned long long* seg_first, std::uint64_t n_heavy, std::uint64_t n_segments, double* seg_s1,
                        double* seg_s2, bin_accumulator* bins, bin_accumulator* over, bool shared_bins, device_flags* flags,
                        philox_schedule rng) {
  // dynamic shared memory (heavy_sample_dynamic_smem_bytes): [D n_bins bin low words (shared_bins)]
  // [per warp: f J of a piece's samples 32, (f J)^2 32][per warp: its segment's sub-cube
  // coordinates D]
  extern __shared__ unsigned long long heavy_dyn[];
  __shared__ warp_flags s_flags[8];
  const unsigned B = blockDim.x, tid = threadIdx.x, warp = tid >> 5, lane = tid & 31u, W = B >> 5;
  const std::uint64_t L = sp.counts.segment;
  const int n_bin_values = D * map.n_bins;
  const bool bins_in_smem = Adapt && shared_bins;
  double* const slots = reinterpret_cast<double*>(heavy_dyn + (bins_in_smem ? n_bin_values : 0));
  double* const v1 = slots + 64 * warp;
  double* const v2 = v1 + 32;
  double* const cdw = slots + 64 * W + D * warp;
  const double(&cd)[D] = *reinterpret_cast<const double(*)[D]>(cdw);  // read where used: no registers held
  if (lane == 0) s_flags[warp] = warp_flags{0ull, ~0ull, 0ull};
  if (bins_in_smem)
    for (int i = tid; i < n_bin_values; i += B) heavy_dyn[i] = 0ull;
  __syncthreads();
  shared_bin_sink sink{heavy_dyn, bins, over, static_cast<unsigned>(n_bin_values), map.n_bins, bins_in_smem};
  no_bins none;
  chunk_partial part;  // this thread's flags (its estimate and variance stay unused)
  for (std::uint64_t s = blockIdx.x * static_cast<std::uint64_t>(W) + warp; s < n_segments;
       s += static_cast<std::uint64_t>(gridDim.x) * W) {  // the same s in every lane
    const std::uint64_t h = heavy_of_segment_warp(seg_first, n_heavy, s, lane);
    const std::uint64_t c = cube[h], n = sp.counts.count(c), k0 = (s - seg_first[h]) * L;
    const std::uint64_t len = n - k0 > L ? L : n - k0, first = c * sp.p + k0;
    const double scale = sp.bin_scale / static_cast<double>(n);
    __syncwarp();  // the last segment's reads of the coordinates are done
    if (lane == 0) {
      cube_coord_t<D> coord[D];
      cube_start<D>(c, sp.g, coord);
      for (int i = 0; i < D; ++i) cdw[i] = static_cast<double>(coord[i]);
    }
    __syncwarp();
    double t1 = 0, t2 = 0;  // the segment's sums (lane 0)
    for (std::uint64_t k = 0; k < len; k += 32) {  // a piece of 32 samples
      double fj = 0, fj2 = 0;
      const auto keep = [&](double a, double b) {
        fj = a;
        fj2 = b;
      };
      if (k + lane < len) {
        if constexpr (Adapt)
          sample_term<D>(f, sp, map, rng, cd, first + k + lane, scale, sink, part, keep);
        else
          sample_term<D>(f, sp, map, rng, cd, first + k + lane, scale, none, part, keep);
      }
      v1[lane] = fj;
      v2[lane] = fj2;
      __syncwarp();
      if (lane == 0) {  // in index order
        const unsigned cnt = len - k < 32 ? static_cast<unsigned>(len - k) : 32u;
#pragma unroll 8
        for (unsigned i = 0; i < cnt; ++i) {
          t1 += v1[i];
          t2 += v2[i];
        }
      }
      __syncwarp();  // lane 0's reads are done before the next piece's writes
    }
    if (lane == 0) {
      seg_s1[s] = t1;
      seg_s2[s] = t2;
    }
  }
  fold_warp_flags<Adapt>(part, s_flags[warp]);
  __syncthreads();  // every shared bin atomic and flag fold of the block is done
  if (tid == 0) add_block_flags(s_flags, W, flags);
  if (bins_in_smem) flush_shared_bins(heavy_dyn, bins, n_bin_values);
}

/// Step 4: a warp per heavy sub-cube h: the warp loads its segments' sums 128 at a time into
/// shared memory (independent loads), and its lane 0 adds them in order into s1, s2 (sample_cubes'
/// segment rule, as finish_heavy_cube), then finish_cube (I_c, var_c, and its share when
/// counts.share_out). A sub-cube of thousands of segments is then a few load latencies, not one per
/// segment. blockDim.x a multiple of 32, at most 256.
template <int Unused = 0>  // a template: vague linkage (a program may include this header in several units)
__global__ void __launch_bounds__(256) heavy_finish_kernel(cube_counts counts, const unsigned long long* cube,
                                                           const unsigned long long* seg_first, std::uint64_t n_heavy,
                                                           const double* seg_s1, const double* seg_s2, double* means,
                                                           double* vars) {
  constexpr unsigned W = 128;  // segment sums per load round
  __shared__ double s_buf[8][2][W];
  const unsigned lane = threadIdx.x & 31u, w = threadIdx.x >> 5, warps = blockDim.x >> 5;
  for (std::uint64_t h = blockIdx.x * static_cast<std::uint64_t>(warps) + w; h < n_heavy;
       h += static_cast<std::uint64_t>(gridDim.x) * warps) {  // the whole warp takes the same h
    const std::uint64_t s_begin = seg_first[h], s_end = seg_first[h + 1];
    double s1 = 0, s2 = 0;
    for (std::uint64_t s = s_begin; s < s_end; s += W) {
      for (unsigned i = lane; i < W; i += 32) {
        s_buf[w][0][i] = s + i < s_end ? seg_s1[s + i] : 0.0;
        s_buf[w][1][i] = s + i < s_end ? seg_s2[s + i] : 0.0;
      }
      __syncwarp();
      if (lane == 0) {
        const unsigned m = s_end - s < W ? static_cast<unsigned>(s_end - s) : W;
        for (unsigned i = 0; i < m; ++i) {
          s1 += s_buf[w][0][i];
          s2 += s_buf[w][1][i];
        }
      }
      __syncwarp();
    }
    if (lane == 0) {
      const cube_estimate ce = finish_cube(s1, s2, static_cast<double>(counts.count(cube[h])), counts, cube[h]);
      means[h] = ce.mean;
      vars[h] = ce.var;
    }
  }
}

/// The device memory of the heavy sub-cubes of one backend's scalar passes (grown, never shrunk).
struct heavy_buffers {
  device_array<unsigned long long> chunk_heavy, chunk_segs;        ///< step 1 (n_chunks + 1)
  device_array<unsigned long long> chunk_heavy_first, chunk_seg_first;  ///< their exclusive sums
  device_array<unsigned char> scan_scratch;
  device_array<unsigned long long> cube, seg_first;  ///< step 2 (n_heavy, n_heavy + 1)
  device_array<double> seg_s1, seg_s2;               ///< step 3 (segments)
  device_array<double> means, vars;                  ///< step 4 (n_heavy)
  pinned_array<unsigned long long> host_totals;      ///< heavy sub-cubes, segments; with work: total work, warp cost
  std::uint64_t n_heavy = 0, n_segments = 0;         ///< of the last list_heavy_cubes
  std::uint64_t above = 0;                           ///< its T (heavy_above)
  std::uint64_t work = 0, warp_cost = 0;             ///< with work: its total and warp_cost_kernel's sum
  device_array<unsigned long long> cost;             ///< warp_cost_kernel's accumulator
  device_array<unsigned long long> chunk_work, chunk_work_first;  ///< balanced V-Sample: work per chunk, exclusive sums
  device_array<double> chunk_est, chunk_var;         ///< balanced V-Sample: the chunk partials (n_chunks)
  bucket_buffers segment_sort;                       ///< sorted passes: the segments by length (bucket_sort.cuh)
  /// The counts these lists (chunk_heavy_first, chunk_seg_first, cube, seg_first, n_heavy,
  /// n_segments, above) were made for by the allocation (allocate.cuh), for the next scalar pass;
  /// not valid otherwise.
  heavy_listing_key prelisted;
};

template <class T>
void grow(device_array<T>& a, std::size_t n) {
  if (a.size() < n) a = device_array<T>(n);
}

/// The exclusive sums (cub::DeviceScan) of step 1's n per-chunk counts: heavy -> heavy_first and
/// segs -> seg_first (their totals last), with `scratch` grown as CUB asks. Returns the scratch
/// bytes (enough for another scan of n 64-bit values). @throws cuda_error if a scan fails.
inline std::size_t scan_heavy_counts(device_array<unsigned char>& scratch, const unsigned long long* heavy,
                                     unsigned long long* heavy_first, const unsigned long long* segs,
                                     unsigned long long* seg_first, std::uint64_t n, cudaStream_t stream) {
  std::size_t bytes = 0;
  MCUBES_CUDA_CHECK(cub::DeviceScan::ExclusiveSum(nullptr, bytes, heavy, heavy_first, static_cast<int>(n), stream));
  grow(scratch, bytes);
  MCUBES_CUDA_CHECK(cub::DeviceScan::ExclusiveSum(scratch.data(), bytes, heavy, heavy_first, static_cast<int>(n), stream));
  MCUBES_CUDA_CHECK(cub::DeviceScan::ExclusiveSum(scratch.data(), bytes, segs, seg_first, static_cast<int>(n), stream));
  return bytes;
}

/// Steps 1 and 2 for a pass with counts `counts` over `st` (VEGAS+, every chunk): the number of heavy
/// sub-cubes and of their segments (n_heavy = 0: nothing to do), the lists in `hb`. Synchronises
/// the stream once (the totals). @throws cuda_error if a CUDA call fails.
/// Only the chunks [chunk_begin, chunk_end) are listed (a team rank's, backend/team.hpp; all by default).
/// With `work`, also each chunk's work for balanced V-Sample and their exclusive sums
/// (hb.chunk_work_first, its total last), and hb.work, hb.warp_cost (warp_cost_kernel).
inline void list_heavy_cubes(heavy_buffers& hb, const cube_counts& counts, const stratification& st, cudaStream_t stream,
                             int multiprocessors, std::uint64_t& n_heavy, std::uint64_t& n_segments,
                             std::uint64_t chunk_begin = 0, std::uint64_t chunk_end = ~std::uint64_t(0), bool work = false,
                             double average_factor = 2) {
  const std::uint64_t nc = st.n_chunks;
  if (work) {
    grow(hb.chunk_work, nc + 1);
    grow(hb.chunk_work_first, nc + 1);
  }
  grow(hb.chunk_heavy, nc + 1);
  grow(hb.chunk_segs, nc + 1);
  grow(hb.chunk_heavy_first, nc + 1);
  grow(hb.chunk_seg_first, nc + 1);
  if (hb.host_totals.size() < 4) hb.host_totals = pinned_array<unsigned long long>(4);
  const unsigned T = 256;
  const auto grid_for = [&](std::uint64_t n) {
    return static_cast<unsigned>(std::min<std::uint64_t>((n + T - 1) / T, 32ull * multiprocessors));
  };
  hb.above = heavy_above(counts, st.calls, st.n_cubes, average_factor);
  heavy_count_kernel<><<<grid_for(nc + 1), T, 0, stream>>>(counts, hb.above, st.n_cubes, st.chunk_cubes, nc, chunk_begin, chunk_end,
                                                         hb.chunk_heavy.data(), hb.chunk_segs.data(),
                                                         work ? hb.chunk_work.data() : nullptr);
  MCUBES_CUDA_CHECK_LAUNCH("heavy_count_kernel");
  std::size_t bytes = scan_heavy_counts(hb.scan_scratch, hb.chunk_heavy.data(), hb.chunk_heavy_first.data(),
                                        hb.chunk_segs.data(), hb.chunk_seg_first.data(), nc + 1, stream);
  if (work) {
    MCUBES_CUDA_CHECK(cub::DeviceScan::ExclusiveSum(hb.scan_scratch.data(), bytes, hb.chunk_work.data(),
                                                    hb.chunk_work_first.data(), static_cast<int>(nc + 1), stream));
    grow(hb.cost, 1);
    MCUBES_CUDA_CHECK(cudaMemsetAsync(hb.cost.data(), 0, sizeof(unsigned long long), stream));
    warp_cost_kernel<><<<grid_for((nc + 31) / 32), T, 0, stream>>>(hb.chunk_work.data(), nc, hb.cost.data());
    MCUBES_CUDA_CHECK_LAUNCH("warp_cost_kernel");
    MCUBES_CUDA_CHECK(cudaMemcpyAsync(hb.host_totals.data() + 2, hb.chunk_work_first.data() + nc, sizeof(unsigned long long),
                                      cudaMemcpyDeviceToHost, stream));
    MCUBES_CUDA_CHECK(cudaMemcpyAsync(hb.host_totals.data() + 3, hb.cost.data(), sizeof(unsigned long long),
                                      cudaMemcpyDeviceToHost, stream));
  }
  MCUBES_CUDA_CHECK(cudaMemcpyAsync(hb.host_totals.data(), hb.chunk_heavy_first.data() + nc, sizeof(unsigned long long),
                                    cudaMemcpyDeviceToHost, stream));
  MCUBES_CUDA_CHECK(cudaMemcpyAsync(hb.host_totals.data() + 1, hb.chunk_seg_first.data() + nc, sizeof(unsigned long long),
                                    cudaMemcpyDeviceToHost, stream));
  MCUBES_CUDA_CHECK(cudaStreamSynchronize(stream));
  n_heavy = hb.n_heavy = hb.host_totals.data()[0];
  n_segments = hb.n_segments = hb.host_totals.data()[1];
  hb.work = work ? hb.host_totals.data()[2] : 0;
  hb.warp_cost = work ? hb.host_totals.data()[3] : 0;
  if (n_heavy == 0) return;
  grow(hb.cube, n_heavy);
  grow(hb.seg_first, n_heavy + 1);
  heavy_list_kernel<><<<grid_for(nc), T, 0, stream>>>(counts, hb.above, st.n_cubes, st.chunk_cubes, nc, chunk_begin, chunk_end,
                                                    hb.chunk_heavy_first.data(), hb.chunk_seg_first.data(), hb.cube.data(),
                                                    hb.seg_first.data());
  MCUBES_CUDA_CHECK_LAUNCH("heavy_list_kernel");
}

}  // namespace cuda_detail
}  // namespace mcubes

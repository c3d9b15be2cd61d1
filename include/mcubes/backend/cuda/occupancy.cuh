#pragma once
/// @file backend/cuda/occupancy.cuh
/// Launch geometry of the CUDA backend: the launch policy (block size and the per-device tuning
/// knobs, cuda_launch_policy), the kernels' shared-memory budgets, the resident blocks per
/// multiprocessor of a kernel (kernel_occupancy, queried once per kernel and shared-memory size)
/// and the one launch-grid rule (launch_grid) that every occupancy-sized launch uses: the
/// V-Sample, vector and batch passes (backend/cuda/*_pass.cuh) and the chunk reductions of
/// backend/cuda/launch.cuh. No grid changes a result (the kernels loop over their work); the grid
/// only decides how fast.

#include <cuda_runtime.h>

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <map>
#include <string>
#include <utility>

#include "../../error.hpp"
#include "../../execution.hpp"
#include "../../options.hpp"
#include "check.cuh"

namespace mcubes {

/// Launch policy of the Vegas kernels.
struct cuda_launch_policy {
  int threads_per_block = 256;  ///< power of two in [32, 1024]; never changes the result
  int max_blocks = 0;           ///< 0: enough resident blocks to fill every multiprocessor (occupancy)
  /// V-Sample passes: at most ceil(n_tiles / adapt_tiles_per_block) blocks (but at least one per
  /// multiprocessor), so that each block's flush of its d x n_bins shared-memory bins to global
  /// memory is shared by enough samples on small problems. 1: no limit. Never changes the result.
  int adapt_tiles_per_block = 1;
  /// Device array integrands (cuda/array_path.cuh): points per call of the integrand at most
  /// (whole tiles; at least one tile). Memory: (D + 1) x 8 bytes per point. Never changes the result.
  std::uint64_t array_call_points = std::uint64_t(1) << 22;
  /// VEGAS+ scalar passes (one device, not a team's rank): balanced V-Sample
  /// (cuda/balanced_sample.cuh, threads balanced by samples instead of one chunk each) for a pass
  /// whose chunk-per-thread warps would cost at least this multiple of its work (warp cost / work
  /// >= 1 always: 1 takes every such pass); 0: never (the default). Measured on an H200
  /// (bench/results/2026-11-29-vegas-plus-balance.md): always balanced, f4 8-D at 3e9 calls +29 %
  /// evaluations/s, but 4-D Gaussians at 1e8 calls -8 % and the m-Cubes suite 5-15 % slower; so
  /// off by default. Never changes the result.
  double balance_above = 0;
  /// VEGAS+ scalar passes (one device, not a team's rank) of at least this many sub-cubes:
  /// V-Sample over the light sub-cubes sorted by count, and the heavy sub-cubes' segments sorted
  /// by length where a thread takes each, so that the lanes of a warp take items of one size
  /// (cuda/sorted_sample.cuh, bucket_sort.cuh; the chunk-per-thread and spread kernels' warps wait
  /// at every sub-cube for their largest count). 0: never. 2^19 by default: on an H200
  /// (bench/results/2026-12-01-sorted-light-cubes.md) f4 8-D adapting at 1e8 / 1e9 / 3e9 calls
  /// +36 / +44 / +54 % evaluations/s and the m-Cubes suite's f2, f3, f6, fB (1e6 sub-cubes and
  /// more) 17-20 % faster; but Lepage's Eq. (45) at 1e7 calls (390,625 sub-cubes, most at n_min)
  /// 4 % slower and f4, f5 at 1e6 calls (65,536) 15-19 % slower with the light sub-cubes sorted
  /// (four launches more per pass, little spread of the counts to win back). Never changes the
  /// result.
  std::uint64_t sort_light_min_cubes = std::uint64_t(1) << 19;
  /// A sorted pass (sort_light_min_cubes) sorts and samples its light sub-cubes on the device's
  /// side stream beside its heavy sub-cubes on the stream (neither reads the other's sums; the
  /// bins and flags are integer atomics), the tiles after both. false: one after the other in the
  /// stream. Never changes the result.
  bool light_beside_heavy = true;
  /// VEGAS+ scalar passes of one sub-cube per chunk that V-Sample spreads (spread_light_above),
  /// with heavy sub-cubes and more tiles than V-Sample's grid has blocks: the light sub-cubes on
  /// the device's side stream beside the heavy ones, each light sub-cube's I_c, var_c kept and the
  /// tiles summed after both (vegas_kernels.cuh, v_sample_tiles_spread's deferred form;
  /// sorted_sample.cuh, sorted_tiles_kernel). false: the heavy sub-cubes first, then V-Sample
  /// reading their sums. On an H200 (bench/results/2026-12-01-side-stream.md) Lepage's Eq. (45)
  /// at 1e7 calls (1526 tiles, 396 blocks) 7-9 % faster; passes of fewer tiles than blocks (f4, f5
  /// at 1e6 calls: 256 tiles) 1-3 % slower beside, so they keep the old order. Never changes the
  /// result.
  bool spread_beside_heavy = true;
  /// VEGAS+ scalar passes whose V-Sample is the spread kernel, heavy sub-cubes sampled before it in
  /// the stream: the lane of a heavy sub-cube adds its segments' sums in order and finishes it
  /// (finish_heavy_cube) instead of heavy_finish_kernel (one launch less per pass; a few dozen
  /// segments a heavy sub-cube at this size). false: heavy_finish_kernel. Never changes the result.
  bool heavy_sums_in_v_sample = true;
  /// The heavy sub-cubes of a VEGAS+ pass (heavy_cubes.cuh, step 3) are sampled a warp per
  /// segment, 32 samples at a time (heavy_sample_kernel) when their segments number fewer than
  /// spread_heavy_below times the threads that heavy_segment_kernel keeps resident on the device,
  /// else a segment per thread. 0.5 by default: on an H200, f4 8-D at 1e6 calls (a few thousand
  /// segments) ran the heavy step in 48 us against 90 us, but at 3e9 calls the sample-per-thread
  /// form (its first version) took the whole adapting iteration from 2.65e10 to 1.9e10
  /// evaluations/s (bench/results/2026-11-29-heavy-samples.md).
  /// 0: always a segment per thread; a huge value: always a warp per segment. Never changes the result.
  double spread_heavy_below = 0.5;
  /// VEGAS+ scalar passes: a sub-cube of more than T = min(L, max(8, floor(heavy_above_average x
  /// the average count))) samples is sampled ahead of V-Sample by segments (heavy_cubes.cuh,
  /// heavy_above), so that a V-Sample thread, whose block waits for its slowest thread at every
  /// tile, meets sub-cubes of at most that multiple of the average. At least 1; 2 by default:
  /// measured on an H200 against 1, 1.5, 2.5, 3 and 4 (the earlier default)
  /// (bench/results/2026-11-29-heavy-threshold.md). Never changes the result (the segment rule
  /// fixes the sums whichever kernel samples a sub-cube).
  double heavy_above_average = 2;
  /// The same threshold for the passes of a batched round (batch_heavy_cubes.cuh, whose segments
  /// are sampled a segment per thread only): 4 by default; 2 took 1024 4-D Gaussians of 1e5 calls
  /// from 0.057 s to 0.088 s on an H200 (bench/results/2026-11-29-heavy-threshold.md). At least 1.
  /// Never changes the result.
  double batch_heavy_above_average = 4;
  /// VEGAS+ scalar passes of one sub-cube per chunk (stride 1, blocks of at most 256 threads, not a
  /// device array integrand): V-Sample spreads a warp's samples over its lanes (vegas_kernels.cuh,
  /// v_sample_tiles_spread) where 32 x the warp's largest count exceeds spread_light_above x its
  /// samples (a thread's loop over its own sub-cube would take that many times the even share),
  /// else each lane samples its own sub-cube. 0: always spread; above 32: the chunk-per-thread
  /// kernel. 1.25 by default (bench/results/2026-11-29-heavy-threshold.md). Never changes the result.
  double spread_light_above = 1.25;
  /// VEGAS+ scalar passes (one device, not a team's rank, balance_above = 0): the allocation of the
  /// next counts (allocate.cuh, one cooperative launch) also lists the heavy sub-cubes of those
  /// counts and their segments (heavy_cubes.cuh, steps 1 and 2), so that the pass neither launches
  /// the count, the two scans and the list nor waits for their totals (one host round trip less
  /// per adapting iteration). false: the pass lists them itself, as before. Never changes the
  /// result (the same lists, bit for bit).
  bool list_heavy_with_allocation = true;
  /// VEGAS+ single integrals (one device, not a team's rank): the allocation that a run expects
  /// after an adapting pass is queued behind that pass, which waits once for both
  /// (counts_allocator.cuh: one host round trip less per adapting iteration). false: the
  /// allocation waits for its own round trip, as before. Never changes the result.
  bool allocate_after_pass = true;
  /// With allocate_after_pass: the allocation queued behind a pass runs on the device's side
  /// stream, which the pass's wait does not cover, so that the host's work on the pass's sums and
  /// the next adaptation of the map run beside it; the run's request for it waits on the host
  /// (counts_allocator.cuh). false: behind the pass in its stream. Never changes the result.
  bool allocate_beside = true;
  /// Single integrals (one device, not a team's rank; scalar integrands): the map's adaptation to
  /// an adapting pass is queued behind the pass's result, into a spare buffer that becomes the
  /// map's when the run adapts to that pass (cuda/adapt.cuh), so that it runs while the host takes
  /// the sums instead of after them (one launch less on the host's path per adapting iteration).
  /// Not behind a pass whose VEGAS+ allocation runs beside the stream (allocate_beside): that
  /// cooperative launch would wait for the adaptation's blocks, and the host waits for it before
  /// the next pass (bench/results/2026-12-02-adapt-behind-pass.md). false: launched when the run
  /// asks, as before. Never changes the result.
  bool adapt_after_pass = true;
};

/// The launch policy of the execution options `ex` (block size, array_call_points).
inline cuda_launch_policy launch_policy_of(const execution& ex) {
  cuda_launch_policy p;
  p.threads_per_block = ex.cuda_threads_per_block;
  if (ex.cuda_array_points > 0) p.array_call_points = ex.cuda_array_points;
  return p;
}

namespace cuda_detail {

// Shared-memory budgets of the kernels (bytes per block). None changes a result; they decide
// where bins, map edges and scratch live, and so how many blocks are resident.

/// A batch block's bins and map edges go to shared memory when they fit in this (two blocks per
/// multiprocessor still fit).
inline constexpr std::size_t batch_smem_limit = 96 * 1024;
/// A batch unit's group trees (levels x B x 16 bytes) at most this (batch_group).
inline constexpr std::size_t batch_group_smem_limit = 32 * 1024;
/// Largest shared memory (static + dynamic scratch) of adapt_map_kernel without an opt-in: the
/// scratch is in shared memory up to n_bins ~ 1100, else in global memory.
inline constexpr std::size_t adapt_smem_limit = 48 * 1024;

/// Returns `policy` after checking it.
/// @throws invalid_input for a bad block size, a negative max_blocks, adapt_tiles_per_block < 1,
///         array_call_points < 1, heavy_above_average or batch_heavy_above_average outside [1, 1e6], or
///         a negative spread_light_above.
inline const cuda_launch_policy& checked_policy(const cuda_launch_policy& policy) {
  validate_block_size(policy.threads_per_block, "threads_per_block");
  MCUBES_EXPECTS(policy.max_blocks >= 0, "max_blocks must be non-negative, got ", policy.max_blocks);
  MCUBES_EXPECTS(policy.adapt_tiles_per_block >= 1, "adapt_tiles_per_block must be at least 1, got ",
                 policy.adapt_tiles_per_block);
  MCUBES_EXPECTS(policy.array_call_points >= 1, "array_call_points must be at least 1, got ",
                 policy.array_call_points);
  MCUBES_EXPECTS(policy.heavy_above_average >= 1 && policy.heavy_above_average <= 1e6,
                 "heavy_above_average must be in [1, 1e6], got ", policy.heavy_above_average);
  MCUBES_EXPECTS(policy.batch_heavy_above_average >= 1 && policy.batch_heavy_above_average <= 1e6,
                 "batch_heavy_above_average must be in [1, 1e6], got ", policy.batch_heavy_above_average);
  MCUBES_EXPECTS(policy.spread_light_above >= 0, "spread_light_above must be non-negative, got ", policy.spread_light_above);
  return policy;
}

/// The launch-grid rule: enough resident blocks to fill every multiprocessor (blocks_per_sm x
/// multiprocessors); with work_per_block > 1, at most ceil(work / work_per_block) blocks but at
/// least one per multiprocessor; at most max_blocks (0: no limit); at most one block per unit of
/// work (a tile, a unit of a batch); at least 1. blocks_per_sm >= 1 and multiprocessors >= 1.
inline std::uint64_t launch_grid(int blocks_per_sm, int multiprocessors, std::uint64_t work, std::uint64_t max_blocks = 0,
                                 std::uint64_t work_per_block = 1) {
  std::uint64_t grid = static_cast<std::uint64_t>(blocks_per_sm) * static_cast<std::uint64_t>(multiprocessors);
  if (work_per_block > 1)
    grid = std::min<std::uint64_t>(grid, std::max<std::uint64_t>(static_cast<std::uint64_t>(multiprocessors),
                                                                 (work + work_per_block - 1) / work_per_block));
  if (max_blocks > 0) grid = std::min<std::uint64_t>(grid, max_blocks);
  return std::max<std::uint64_t>(1, std::min<std::uint64_t>(grid, work));
}

/// The grid of a pass's launch under `policy` (launch_grid with its max_blocks; V-Sample passes
/// also with its adapt_tiles_per_block).
inline std::uint64_t policy_grid(const cuda_launch_policy& policy, int blocks_per_sm, int multiprocessors,
                                 std::uint64_t work, bool adapting = false) {
  const std::uint64_t per = adapting ? static_cast<std::uint64_t>(policy.adapt_tiles_per_block) : 1;
  return launch_grid(blocks_per_sm, multiprocessors, work, static_cast<std::uint64_t>(policy.max_blocks), per);
}

/// Resident blocks per multiprocessor of the backend's kernels on one device, queried once per
/// kernel and shared-memory size (cudaOccupancyMaxActiveBlocksPerMultiprocessor).
class kernel_occupancy {
 public:
  /// For a device with `props`.
  explicit kernel_occupancy(const cudaDeviceProp& props) : optin_(props.sharedMemPerBlockOptin) {}

  /// Resident blocks per multiprocessor of `kernel` with B threads and `smem` bytes of dynamic
  /// shared memory. The kernel's dynamic limit is raised once to all the opt-in shared memory its
  /// static shared memory leaves (cudaFuncGetAttributes). @throws cuda_error if a query fails.
  template <class K>
  int blocks_per_sm(K kernel, int B, std::size_t smem) {
    int& per_sm = cache_[{reinterpret_cast<const void*>(kernel), smem}];
    if (per_sm == 0) {
      const int max_dynamic = optin_ - static_cast<int>(static_smem(kernel));
      MCUBES_CUDA_CHECK(cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, max_dynamic));
      MCUBES_CUDA_CHECK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, kernel, B, smem));
    }
    return per_sm;
  }

  /// The dynamic shared memory of a sampling launch of `kernel` (V-Sample's forms) with B
  /// threads: `with_edges` bytes (bins and the map's edges) where they fit beside the kernel's
  /// static shared memory and cost no resident block against `plain` (bins only, the edges read
  /// from global memory; the kernel reads which from the size it got), else `plain`. Returns
  /// {resident blocks per multiprocessor, bytes}. @throws cuda_error if a query fails or no block
  /// of the kernel (named `what` in the message) fits.
  template <class K>
  std::pair<int, std::size_t> sampling_smem(K kernel, int B, std::size_t plain, std::size_t with_edges, const char* what) {
    std::size_t smem = plain;
    int per_sm = blocks_per_sm(kernel, B, plain);
    if (with_edges != plain && with_edges + static_smem(kernel) <= static_cast<std::size_t>(optin_)) {
      const int edges = blocks_per_sm(kernel, B, with_edges);
      if (edges >= per_sm) {
        per_sm = edges;
        smem = with_edges;
      }
    }
    if (per_sm < 1)
      throw cuda_error(std::string(what) + " cannot run with " + std::to_string(B) + " threads per block and " +
                       std::to_string(smem) + " bytes of shared memory");
    return {per_sm, smem};
  }

  /// The static shared memory of `kernel` in bytes (cudaFuncGetAttributes, queried once).
  /// @throws cuda_error if the query fails.
  template <class K>
  std::size_t static_smem(K kernel) {
    auto it = static_.find(reinterpret_cast<const void*>(kernel));
    if (it == static_.end()) {
      cudaFuncAttributes attr{};
      MCUBES_CUDA_CHECK(cudaFuncGetAttributes(&attr, kernel));
      it = static_.emplace(reinterpret_cast<const void*>(kernel), attr.sharedSizeBytes).first;
    }
    return it->second;
  }

 private:
  int optin_;  ///< sharedMemPerBlockOptin
  std::map<const void*, std::size_t> static_;
  std::map<std::pair<const void*, std::size_t>, int> cache_;
};

}  // namespace cuda_detail
}  // namespace mcubes

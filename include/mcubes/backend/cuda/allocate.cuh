#pragma once
/// @file backend/cuda/allocate.cuh
/// VEGAS+'s allocation of the next counts in one cooperative launch and one round trip
/// (algorithm/vegas.hpp, allocate_counts; the rule in core/cube_counts.hpp). Without it an adapting
/// iteration takes a reduction for the sum of the shares and one count per try of the counts'
/// scale, each a launch and a synchronisation of the host (typically 4-8 per iteration: most of a
/// small problem's iteration on the GPU).
///
/// allocate_counts_kernel runs as a cooperative grid of B-thread blocks (every block resident, so
/// the grid can synchronise; cooperative_groups::this_grid().sync()):
///  1. (with_total) the sum of the shares over the fixed tree, as reduce_chunks forms it with
///     B-chunk tiles: each block merges its tiles of B chunk partials (share_sum_chunk) with
///     block_tree_add (block_tree_merge's nodes by warp shuffles); after a grid synchronisation
///     every block merges the tile values (at most max_chunks / B = B of them) the same way, the
///     missing leaves +0.0: the same nodes of the one global tree (the shares are >= 0, so the
///     padding leaves the sum unchanged), hence the bits of every backend's reduce (launch.cuh);
///  2. (a usable total) the first scale first_count_scale(st, total), or the given s0;
///  3. find_count_scale (core/cube_counts.hpp) on every thread of the grid; each try's count is an
///     exact integer sum: per block cub::BlockReduce, then one atomicAdd per block into the try's
///     own counter, which carries the count in its low 48 bits and the blocks that have added
///     theirs in its high 16 (where no count can reach 2^47: n_cubes x n_cap below it); each block
///     waits until every block has added, and reads the total from the same word (otherwise a grid
///     synchronisation after the atomicAdd, then the read). With one sub-cube per chunk and at most
///     one chunk per thread, a thread reads its share once, not once per try. Every thread follows
///     the same tries, which are the host search's over the backend's counts: the same scale.
///  4. (with a heavy_list_request, cuda_launch_policy::list_heavy_with_allocation) the lists of
///     heavy_cubes.cuh's steps 1 and 2 for the counts at the scale found: per tile of B chunks the
///     block sums of its chunks' heavy sub-cubes and segments (the chunks' own numbers kept in the
///     arrays of their sums), a grid synchronisation, every block's exclusive scan of the tile sums
///     (at most B of them), then per tile the exclusive scans of its chunks' and the list of each
///     chunk that has heavy sub-cubes (list_heavy_cubes_of): the arrays list_heavy_cubes makes,
///     entry for entry (exact integers), and their totals in the result, so that the next pass
///     neither launches the listing nor waits for it (one round trip instead of two).
/// Neither the grid nor the block size changes a result.
///
/// allocate_counts_batch does the same for many integrals (a parameter batch's members,
/// algorithm/vegas_batch.hpp) in one ordinary launch and one round trip: one block of B threads per
/// integral merges its tiles in turn and then its tile values (the same nodes of the same tree, so
/// the same total), and searches the scale with block-wide exact counts (the same tries). One block
/// per integral suits the small integrals of a batch; a large one keeps the grid of
/// allocate_counts_kernel (one block was 4-5x slower there: bench/results/2026-11-27-vegas-plus-allocation.md).

#include <cooperative_groups.h>
#include <cuda_runtime.h>

#include <algorithm>
#include <cstdint>
#include <vector>

#include <cub/block/block_reduce.cuh>
#include <cub/block/block_scan.cuh>

#include "../../core/cube_counts.hpp"
#include "../../core/reduction.hpp"
#include "../../core/stratification.hpp"
#include "block_tree.cuh"
#include "check.cuh"
#include "device_array.cuh"
#include "heavy_lists.cuh"

namespace mcubes::cuda_detail {

/// Threads per block of allocate_counts_kernel: max_chunks / B tile values fit one block's tree.
inline constexpr int allocate_threads = 1024;
static_assert(max_chunks / allocate_threads <= static_cast<std::uint64_t>(allocate_threads),
              "the tile values of the shares' sum must fit one block");

/// What allocate_counts hands back: the sum of the shares (when asked), the scale of the counts
/// and the evaluations at it (when searched).
struct counts_allocation {
  double total = 0;
  double scale = 0;
  unsigned long long count = 0;
  int searched = 0;  ///< 1 when scale and count were searched
  /// false when the device refused the cooperative launch (too few resident blocks, e.g. a GPU
  /// shared under MPS): nothing was computed; the caller reduces and counts instead
  bool launched = true;
  /// With a heavy_list_request and a searched scale: the heavy sub-cubes and their segments at the
  /// scale found, and listed = 1 when the lists fit the request's capacity (and so were written).
  int listed = 0;
  unsigned long long n_heavy = 0, n_segments = 0;
};

/// The heavy sub-cubes' lists (heavy_cubes.cuh, steps 1 and 2, every chunk) that
/// allocate_counts_kernel makes for the counts it finds (on != 0), into the arrays of
/// heavy_buffers: chunk_heavy_first and chunk_seg_first (n_chunks + 1 entries each), cube
/// (capacity entries) and seg_first (capacity + 1). Trivially copyable.
struct heavy_list_request {
  int on = 0;
  std::uint64_t above = 0;  ///< T (heavy_above)
  unsigned long long* chunk_heavy_first = nullptr;
  unsigned long long* chunk_seg_first = nullptr;
  unsigned long long* cube = nullptr;
  unsigned long long* seg_first = nullptr;
  std::uint64_t capacity = 0;
};

/// The kernel's device memory: tile values, one counter per try (find_count_scale makes at most 65
/// counts), the total, the result.
struct allocation_scratch {
  double tiles[max_chunks / allocate_threads];
  unsigned long long tile_heavy[max_chunks / allocate_threads];  ///< step 4: per tile of chunks
  unsigned long long tile_segs[max_chunks / allocate_threads];
  unsigned long long counts[72];
  double total;
  counts_allocation out;
};

template <int B>
__global__ void __launch_bounds__(B) allocate_counts_kernel(share_sum_chunk shares, count_sum_chunk counts,
                                                            stratification st, bool with_total, double s0,
                                                            unsigned long long base, unsigned long long target,
                                                            heavy_list_request list, bool packed,
                                                            allocation_scratch* scr) {
  cooperative_groups::grid_group grid = cooperative_groups::this_grid();
  using reduce_u64 = cub::BlockReduce<unsigned long long, B>;
  __shared__ typename reduce_u64::TempStorage reduce_storage;
  __shared__ double wbuf[32];
  __shared__ unsigned long long s_all;
  const unsigned tid = threadIdx.x;
  const std::uint64_t n_chunks = st.n_chunks;
  counts_allocation r;
  double scale = s0;
  bool search = !with_total;
  if (with_total) {
    const std::uint64_t n_tiles = (n_chunks + B - 1) / B;
    for (std::uint64_t tile = blockIdx.x; tile < n_tiles; tile += gridDim.x) {  // uniform per block
      const std::uint64_t c = tile * B + tid;
      const double t = block_tree_add<B>(c < n_chunks ? shares(c) : 0.0, wbuf);
      if (tid == 0) scr->tiles[tile] = t;
    }
    grid.sync();
    // every block merges the tile values (the same nodes, the same total): no second synchronisation
    const double t = block_tree_add<B>(tid < n_tiles ? *static_cast<volatile double*>(&scr->tiles[tid]) : 0.0, wbuf);
    if (tid == 0) wbuf[0] = t;
    __syncthreads();
    r.total = wbuf[0];
    __syncthreads();  // wbuf is used again
    search = usable_share_total(r.total);
    if (search) scale = first_count_scale(st, r.total);
  }
  if (search) {
    int k = 0;
    const std::uint64_t stride = static_cast<std::uint64_t>(gridDim.x) * B;
    const std::uint64_t c1 = static_cast<std::uint64_t>(blockIdx.x) * B + tid;
    // one sub-cube per chunk and at most one chunk per thread: its share read once, not per try
    const bool cached = counts.chunk_cubes == 1 && counts.counts.share_in != nullptr && n_chunks <= stride;
    const double share1 = cached && c1 < n_chunks ? counts.counts.share_in[c1] : 0.0;
    const auto count_at = [&](double s) -> std::uint64_t {
      count_sum_chunk at = counts;
      at.counts.scale = s;
      unsigned long long mine = 0;
      if (cached) {
        if (c1 < n_chunks) mine = at.counts.count_of(share1);
      } else {
        for (std::uint64_t c = c1; c < n_chunks; c += stride) mine += at(c);
      }
      const unsigned long long part = reduce_u64(reduce_storage).Sum(mine);
      unsigned long long all;
      if (packed) {  // the count in the low 48 bits, the blocks arrived in the high 16: one atomic per block
        if (tid == 0) {
          const unsigned long long add = (1ull << 48) | part;
          unsigned long long v = atomicAdd(&scr->counts[k], add) + add;
          while ((v >> 48) < gridDim.x) v = *static_cast<volatile unsigned long long*>(&scr->counts[k]);
          s_all = v & ((1ull << 48) - 1);
        }
        __syncthreads();  // also the barrier before the reduce storage is used again
        all = s_all;
      } else {
        if (tid == 0) atomicAdd(&scr->counts[k], part);
        grid.sync();  // also the block barrier before the reduce storage is used again
        all = *static_cast<volatile unsigned long long*>(&scr->counts[k]);
      }
      ++k;
      return all;
    };
    const count_scale found = find_count_scale(scale, count_at(scale), base, target, count_at);
    r.scale = found.scale;
    r.count = found.count;
    r.searched = 1;
  }
  if (list.on != 0 && r.searched != 0) {  // 4. the heavy sub-cubes' lists at the scale found
    using scan_u64 = cub::BlockScan<unsigned long long, B>;
    __shared__ typename scan_u64::TempStorage scan_storage;
    __shared__ unsigned long long s_tile_heavy[B], s_tile_segs[B];  // the tiles' exclusive sums
    count_sum_chunk at = counts;
    at.counts.scale = r.scale;
    const std::uint64_t n_tiles = (n_chunks + B - 1) / B;
    const auto chunk_span = [&](std::uint64_t c, std::uint64_t& begin, std::uint64_t& end) {
      begin = c * at.chunk_cubes;
      end = begin + at.chunk_cubes < at.n_cubes ? begin + at.chunk_cubes : at.n_cubes;
    };
    const auto chunk_heavy = [&](std::uint64_t c, unsigned long long& nh, unsigned long long& ns) {
      nh = ns = 0;
      if (c >= n_chunks) return;
      std::uint64_t begin, end;
      chunk_span(c, begin, end);
      unsigned long long light = 0;
      count_heavy_cubes(at.counts, list.above, begin, end, nh, ns, light);
    };
    for (std::uint64_t tile = blockIdx.x; tile < n_tiles; tile += gridDim.x) {  // uniform per block
      const std::uint64_t c = tile * B + tid;
      unsigned long long nh, ns;
      chunk_heavy(c, nh, ns);
      if (c < n_chunks) {  // kept for the second loop (the same thread), which replaces them by the sums
        list.chunk_heavy_first[c] = nh;
        list.chunk_seg_first[c] = ns;
      }
      const unsigned long long th = reduce_u64(reduce_storage).Sum(nh);
      __syncthreads();
      const unsigned long long ts = reduce_u64(reduce_storage).Sum(ns);
      __syncthreads();
      if (tid == 0) {
        scr->tile_heavy[tile] = th;
        scr->tile_segs[tile] = ts;
      }
    }
    grid.sync();
    unsigned long long total_heavy = 0, total_segs = 0, first_heavy = 0, first_segs = 0;
    {
      const unsigned long long th = tid < n_tiles ? *static_cast<volatile unsigned long long*>(&scr->tile_heavy[tid]) : 0ull;
      const unsigned long long ts = tid < n_tiles ? *static_cast<volatile unsigned long long*>(&scr->tile_segs[tid]) : 0ull;
      scan_u64(scan_storage).ExclusiveSum(th, first_heavy, total_heavy);
      __syncthreads();
      scan_u64(scan_storage).ExclusiveSum(ts, first_segs, total_segs);
      s_tile_heavy[tid] = first_heavy;
      s_tile_segs[tid] = first_segs;
      __syncthreads();
    }
    for (std::uint64_t tile = blockIdx.x; tile < n_tiles; tile += gridDim.x) {  // uniform per block
      const std::uint64_t c = tile * B + tid;
      const unsigned long long nh = c < n_chunks ? list.chunk_heavy_first[c] : 0ull;
      const unsigned long long ns = c < n_chunks ? list.chunk_seg_first[c] : 0ull;
      unsigned long long eh, es;
      scan_u64(scan_storage).ExclusiveSum(nh, eh);
      __syncthreads();
      scan_u64(scan_storage).ExclusiveSum(ns, es);
      __syncthreads();
      if (c < n_chunks) {
        unsigned long long h = s_tile_heavy[tile] + eh, sg = s_tile_segs[tile] + es;
        list.chunk_heavy_first[c] = h;
        list.chunk_seg_first[c] = sg;
        if (nh != 0) {  // most chunks have no heavy sub-cube: only the others are walked again
          std::uint64_t begin, end;
          chunk_span(c, begin, end);
          list_heavy_cubes_of(at.counts, list.above, begin, end, h, sg, list.cube, list.seg_first,
                              [](unsigned long long) {}, list.capacity);
        }
      }
    }
    r.n_heavy = total_heavy;
    r.n_segments = total_segs;
    r.listed = total_heavy <= list.capacity ? 1 : 0;
    if (blockIdx.x == 0 && tid == 0) {
      list.chunk_heavy_first[n_chunks] = total_heavy;
      list.chunk_seg_first[n_chunks] = total_segs;
      if (total_heavy <= list.capacity) list.seg_first[total_heavy] = total_segs;
    }
  }
  if (blockIdx.x == 0 && tid == 0) scr->out = r;
}

/// The allocations of n requests (counts_request), one B-thread block per request (blocks stride
/// over the requests): out[i] as allocate_counts_kernel computes it for request i.
template <int B>
__global__ void __launch_bounds__(B) allocate_counts_batch_kernel(const counts_request* requests, unsigned n,
                                                                  counts_allocation* out) {
  using reduce_u64 = cub::BlockReduce<unsigned long long, B>;
  __shared__ typename reduce_u64::TempStorage reduce_storage;
  __shared__ double wbuf[32];
  __shared__ double tiles[max_chunks / B];
  __shared__ unsigned long long block_count;
  const unsigned tid = threadIdx.x;
  for (unsigned i = blockIdx.x; i < n; i += gridDim.x) {  // uniform per block
    const counts_request q = requests[i];
    const std::uint64_t n_chunks = q.st.n_chunks;
    counts_allocation r;
    double scale = q.s0;
    bool search = q.with_total == 0;
    if (q.with_total != 0) {
      const std::uint64_t n_tiles = (n_chunks + B - 1) / B;
      for (std::uint64_t tile = 0; tile < n_tiles; ++tile) {
        const std::uint64_t c = tile * B + tid;
        const double t = block_tree_add<B>(c < n_chunks ? q.shares(c) : 0.0, wbuf);
        if (tid == 0) tiles[tile] = t;
      }
      __syncthreads();
      const double t = block_tree_add<B>(tid < n_tiles ? tiles[tid] : 0.0, wbuf);
      if (tid == 0) wbuf[0] = t;
      __syncthreads();
      r.total = wbuf[0];  // every thread
      __syncthreads();
      search = usable_share_total(r.total);
      if (search) scale = first_count_scale(q.st, r.total);
    }
    if (search) {
      const auto count_at = [&](double s) -> std::uint64_t {
        count_sum_chunk at = q.counts;
        at.counts.scale = s;
        unsigned long long mine = 0;
        for (std::uint64_t c = tid; c < n_chunks; c += B) mine += at(c);
        const unsigned long long part = reduce_u64(reduce_storage).Sum(mine);
        if (tid == 0) block_count = part;
        __syncthreads();
        const unsigned long long all = block_count;
        __syncthreads();  // before reduce_storage and block_count are used again
        return all;
      };
      const count_scale found = find_count_scale(scale, count_at(scale), q.base, q.target, count_at);
      r.scale = found.scale;
      r.count = found.count;
      r.searched = 1;
    }
    if (tid == 0) out[i] = r;
    __syncthreads();  // tiles of the next request
  }
}

/// Queues allocate_counts_kernel cooperatively in `stream` (as many blocks as are resident at once
/// on `multiprocessors` SMs, at most one per tile of chunks) and the copy of its result to
/// `host_result` (pinned host memory: the copy does not wait), and returns without waiting: the
/// result is there once the stream has reached this point (allocate_counts waits; a pass that
/// queues the next allocation behind itself waits once for both, counts_allocator.cuh). `list`: the
/// heavy sub-cubes' lists it makes too (on = 0: none). `scratch`: the kernel's device memory, kept
/// by the caller between calls; `blocks_per_sm`: the kernel's resident blocks per SM, found on the
/// first call (0: not yet). Returns false, having queued nothing, where the device refuses the
/// launch for lack of resident blocks or support.
/// @throws invalid_input if st.n_chunks > max_chunks; cuda_error if another CUDA call fails.
inline bool launch_counts_allocation(share_sum_chunk shares, count_sum_chunk counts, stratification st, bool with_total,
                                     double s0, std::uint64_t base, std::uint64_t target, heavy_list_request list,
                                     device_array<allocation_scratch>& scratch, counts_allocation* host_result,
                                     int multiprocessors, int& blocks_per_sm, cudaStream_t stream) {
  MCUBES_EXPECTS(st.n_chunks <= max_chunks, "allocate_counts: ", st.n_chunks, " chunks (at most ", max_chunks, ")");
  if (scratch.size() == 0) scratch = device_array<allocation_scratch>(1);
  allocation_scratch* scr = scratch.data();
  MCUBES_CUDA_CHECK(cudaMemsetAsync(scr->counts, 0, sizeof(scr->counts), stream));
  auto kernel = allocate_counts_kernel<allocate_threads>;
  if (blocks_per_sm <= 0)  // asked once per backend (a device and its kernel do not change)
    MCUBES_CUDA_CHECK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&blocks_per_sm, kernel, allocate_threads, 0));
  const int per_sm = blocks_per_sm;
  const std::uint64_t tiles = (st.n_chunks + allocate_threads - 1) / allocate_threads;
  const std::uint64_t resident = static_cast<std::uint64_t>(std::max(per_sm, 1)) * static_cast<std::uint64_t>(std::max(multiprocessors, 1));
  const unsigned grid = static_cast<unsigned>(std::max<std::uint64_t>(1, std::min(resident, tiles)));
  unsigned long long b = base, t = target;
  // the packed counters where no count can reach 2^48 (n_cubes x n_cap: every sub-cube at its cap)
  const std::uint64_t cap = counts.counts.n_base + counts.counts.n_extra_max;
  bool packed = cap == 0 || counts.n_cubes < (std::uint64_t(1) << 47) / cap;
  void* args[] = {&shares, &counts, &st, &with_total, &s0, &b, &t, &list, &packed, &scr};
  const cudaError_t e = cudaLaunchCooperativeKernel(reinterpret_cast<const void*>(kernel), dim3(grid),
                                                    dim3(allocate_threads), args, 0, stream);
  if (e == cudaErrorCooperativeLaunchTooLarge || e == cudaErrorNotSupported) {
    (void)cudaGetLastError();  // clear the refused launch's error
    return false;
  }
  MCUBES_CUDA_CHECK(e);
  MCUBES_CUDA_CHECK(cudaMemcpyAsync(host_result, &scr->out, sizeof(counts_allocation), cudaMemcpyDeviceToHost, stream));
  return true;
}

/// launch_counts_allocation, then waits for its result (one round trip). A launch the device
/// refuses returns launched = false.
/// @throws as launch_counts_allocation.
inline counts_allocation allocate_counts(share_sum_chunk shares, count_sum_chunk counts, stratification st,
                                         bool with_total, double s0, std::uint64_t base, std::uint64_t target,
                                         heavy_list_request list, device_array<allocation_scratch>& scratch,
                                         counts_allocation* host_result, int multiprocessors, int& blocks_per_sm,
                                         cudaStream_t stream) {
  if (!launch_counts_allocation(shares, counts, st, with_total, s0, base, target, list, scratch, host_result,
                                multiprocessors, blocks_per_sm, stream)) {
    counts_allocation refused;
    refused.launched = false;
    return refused;
  }
  MCUBES_CUDA_CHECK(cudaStreamSynchronize(stream));
  return *host_result;
}

/// The allocations of `requests` (counts_request: as allocate_counts' arguments) in one launch of
/// allocate_counts_batch_kernel in `stream` and one round trip: result i is what
/// allocate_counts gives for request i, bit for bit (launched is always true: the launch is not
/// cooperative). `device_requests`, `device_out`: the kernel's device memory, kept by the caller.
/// @throws invalid_input if a request has more than max_chunks chunks; cuda_error if a CUDA call fails.
inline std::vector<counts_allocation> allocate_counts_batch(const std::vector<counts_request>& requests,
                                                            device_array<counts_request>& device_requests,
                                                            device_array<counts_allocation>& device_out,
                                                            cudaStream_t stream) {
  const std::size_t n = requests.size();
  std::vector<counts_allocation> out(n);
  if (n == 0) return out;
  for (const counts_request& q : requests)
    MCUBES_EXPECTS(q.st.n_chunks <= max_chunks, "allocate_counts_batch: ", q.st.n_chunks, " chunks (at most ", max_chunks, ")");
  if (device_requests.size() < n) {
    device_requests = device_array<counts_request>(n);
    device_out = device_array<counts_allocation>(n);
  }
  MCUBES_CUDA_CHECK(cudaMemcpyAsync(device_requests.data(), requests.data(), n * sizeof(counts_request),
                                    cudaMemcpyHostToDevice, stream));
  const unsigned grid = static_cast<unsigned>(std::min<std::size_t>(n, 65535));
  allocate_counts_batch_kernel<allocate_threads><<<grid, allocate_threads, 0, stream>>>(device_requests.data(),
                                                                                         static_cast<unsigned>(n),
                                                                                         device_out.data());
  MCUBES_CUDA_CHECK_LAUNCH("allocate_counts_batch_kernel");
  MCUBES_CUDA_CHECK(cudaMemcpyAsync(out.data(), device_out.data(), n * sizeof(counts_allocation), cudaMemcpyDeviceToHost,
                                    stream));
  MCUBES_CUDA_CHECK(cudaStreamSynchronize(stream));
  return out;
}

}  // namespace mcubes::cuda_detail

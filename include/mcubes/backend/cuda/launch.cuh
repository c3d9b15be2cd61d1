#pragma once
/// @file backend/cuda/launch.cuh
/// Launch machinery shared by the CUDA kernels of plain Monte Carlo, the midpoint rule and Monte
/// Carlo pi: block-size dispatch to compile-time block sizes, occupancy-derived grids, CUDA-event
/// timing, and the block-level fixed-tree merge of chunk partials.
///
/// Chunk partials (reduce_chunks): block b takes the tiles b, b + grid, ... of B consecutive chunks
/// (grid-stride); thread t computes chunk tile*B + t serially (chunks past the end give the
/// identity T{}), the block merges the tile with block_tree_merge (an aligned group of B leaves of
/// the fixed tree of core/fixed_tree.hpp) and writes one value per tile; the host merges the tile
/// values with fixed_tree_reduce. Every tile is a node of the one global tree, so the result is bitwise
/// identical for any B in {32, ..., 1024} and any grid, and equal to the CPU tile scheme's
/// (backend/cpu_tiles.hpp) for the same chunk partials.
///
/// Launch geometry (STYLE.md habit 3): the grid is never a literal. For a kernel instantiated with
/// B threads per block, blocks_per_sm = cudaOccupancyMaxActiveBlocksPerMultiprocessor(kernel, B,
/// smem) and grid = min(blocks_per_sm x SMs, blocks that have work, the device's grid limit), at
/// least 1 (launch_grid, backend/cuda/occupancy.cuh: the rule of every occupancy-sized launch);
/// kernels loop over their work (grid-stride), so the grid never changes a result.

#include <cuda_runtime.h>

#include <algorithm>
#include <cstdint>
#include <mutex>
#include <string>
#include <type_traits>
#include <vector>

#include <cub/block/block_reduce.cuh>

#include "../../core/reduction.hpp"
#include "../../core/fixed_tree.hpp"
#include "../../core/tree_reduce.hpp"
#include "block_tree.cuh"
#include "../../error.hpp"
#include "../launch_report.hpp"
#include "../../options.hpp"
#include "check.cuh"
#include "device_array.cuh"
#include "occupancy.cuh"

namespace mcubes::cuda_detail {

/// Throws cuda_error when no CUDA device is visible (or no usable driver), then makes sure the
/// current device's context exists (cudaFree(0)), so that later timings exclude its creation.
/// @return the current device ordinal.
inline int require_device() {
  const int n = cuda_device_count();
  if (n <= 0) {
    int count = 0;
    const cudaError_t e = cudaGetDeviceCount(&count);
    (void)cudaGetLastError();
    throw cuda_error(std::string("no CUDA device available (cudaGetDeviceCount: ") + cudaGetErrorName(e) + ", " +
                     std::to_string(count) + " devices)");
  }
  int device = 0;
  MCUBES_CUDA_CHECK(cudaGetDevice(&device));
  MCUBES_CUDA_CHECK(cudaFree(nullptr));
  return device;
}

/// @throws invalid_input unless tpb is a power of two in [32, 1024] (options.hpp).
inline void validate_threads_per_block(int tpb) { validate_block_size(tpb, "threads per block"); }

/// Calls fn(std::integral_constant<int, B>{}) for the runtime block size tpb in {32, ..., 1024}:
/// kernels take B as a template parameter (cub::BlockReduce, __launch_bounds__, static shared
/// memory). @throws invalid_input for any other tpb.
template <class Fn>
decltype(auto) with_block_size(int tpb, Fn&& fn) {
  validate_threads_per_block(tpb);
  switch (tpb) {
    case 32: return fn(std::integral_constant<int, 32>{});
    case 64: return fn(std::integral_constant<int, 64>{});
    case 128: return fn(std::integral_constant<int, 128>{});
    case 256: return fn(std::integral_constant<int, 256>{});
    case 512: return fn(std::integral_constant<int, 512>{});
    default: return fn(std::integral_constant<int, 1024>{});
  }
}

/// The name of CUDA device `device` (cudaGetDeviceProperties, a slow query: asked once per device
/// and process, then kept). @throws cuda_error if the query fails.
inline std::string device_name(int device) {
  static std::mutex lock;
  static std::vector<std::string> names;
  std::lock_guard<std::mutex> hold(lock);
  if (device >= 0 && static_cast<std::size_t>(device) < names.size() && !names[static_cast<std::size_t>(device)].empty())
    return names[static_cast<std::size_t>(device)];
  cudaDeviceProp props{};
  MCUBES_CUDA_CHECK(cudaGetDeviceProperties(&props, device));
  if (device >= 0) {
    if (names.size() <= static_cast<std::size_t>(device)) names.resize(static_cast<std::size_t>(device) + 1);
    names[static_cast<std::size_t>(device)] = props.name;
  }
  return props.name;
}

/// n values of T in device memory for one reduction: `scratch` (grown when too small; a backend's,
/// kept between calls, so that a reduction allocates nothing once warm: cudaMalloc and cudaFree
/// take a lock every device of the process shares) or, without it, `own`.
template <class T>
T* scratch_values(device_array<unsigned char>* scratch, std::size_t n, device_array<T>& own) {
  if (scratch == nullptr) {
    own = device_array<T>(n);
    return own.data();
  }
  if (scratch->size() < n * sizeof(T)) *scratch = device_array<unsigned char>(std::max<std::size_t>(n * sizeof(T), 4096));
  return reinterpret_cast<T*>(scratch->data());  // cudaMalloc's alignment (256 bytes)
}

/// Grid for `kernel` with B threads per block and `smem` bytes of dynamic shared memory:
/// min(resident blocks per SM x SMs, useful_blocks), at least 1. Fills the geometry fields of
/// `report` (when non-null). @throws cuda_error if the kernel cannot run with B threads per block
/// (occupancy 0: too many registers or too much shared memory) or a query fails.
template <class Kernel>
unsigned occupancy_grid(Kernel kernel, int block, std::size_t smem, std::uint64_t useful_blocks, launch_report* report) {
  int device = 0;
  MCUBES_CUDA_CHECK(cudaGetDevice(&device));
  int sms = 0, max_grid = 0, max_threads = 0;
  MCUBES_CUDA_CHECK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, device));
  MCUBES_CUDA_CHECK(cudaDeviceGetAttribute(&max_grid, cudaDevAttrMaxGridDimX, device));
  MCUBES_CUDA_CHECK(cudaDeviceGetAttribute(&max_threads, cudaDevAttrMaxThreadsPerBlock, device));
  if (block > max_threads)
    throw cuda_error("device " + std::to_string(device) + " allows at most " + std::to_string(max_threads) +
                     " threads per block, " + std::to_string(block) + " requested");
  int per_sm = 0;
  MCUBES_CUDA_CHECK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, kernel, block, smem));
  if (per_sm < 1 || sms < 1)
    throw cuda_error("kernel cannot run with " + std::to_string(block) + " threads per block and " +
                     std::to_string(smem) + " bytes of dynamic shared memory (occupancy 0)");
  // the one launch-grid rule (occupancy.cuh), capped at the device's grid limit
  const std::uint64_t grid = cuda_detail::launch_grid(per_sm, sms, useful_blocks, static_cast<std::uint64_t>(max_grid));
  if (report) {
    report->device = device;
    report->device_name = device_name(device);
    report->multiprocessors = sms;
    report->threads_per_block = block;
    report->blocks_per_sm = per_sm;
    report->grid = static_cast<long long>(grid);
  }
  return static_cast<unsigned>(grid);
}

/// A pair of CUDA events timing work on one stream (RAII; every call checked).
class event_timer {
 public:
  event_timer() {
    MCUBES_CUDA_CHECK(cudaEventCreate(&start_));
    try {
      MCUBES_CUDA_CHECK(cudaEventCreate(&stop_));
    } catch (...) {
      cudaEventDestroy(start_);
      throw;
    }
  }
  event_timer(const event_timer&) = delete;
  event_timer& operator=(const event_timer&) = delete;
  ~event_timer() {
    cudaEventDestroy(start_);
    cudaEventDestroy(stop_);
  }
  void start(cudaStream_t stream = nullptr) { MCUBES_CUDA_CHECK(cudaEventRecord(start_, stream)); }
  void stop(cudaStream_t stream = nullptr) { MCUBES_CUDA_CHECK(cudaEventRecord(stop_, stream)); }
  /// Milliseconds between start() and stop(); waits for stop().
  double elapsed_ms() {
    MCUBES_CUDA_CHECK(cudaEventSynchronize(stop_));
    float ms = 0;
    MCUBES_CUDA_CHECK(cudaEventElapsedTime(&ms, start_, stop_));
    return ms;
  }

 private:
  cudaEvent_t start_ = nullptr;
  cudaEvent_t stop_ = nullptr;
};


/// Computes chunk(c) for the chunks of tiles blockIdx.x, blockIdx.x + gridDim.x, ... and writes
/// each tile's merged value to tile_out[tile] (see the file comment).
template <int B, class T, class ChunkFn, class Merge>
__global__ void __launch_bounds__(B) chunk_tiles_kernel(ChunkFn chunk, Merge merge, std::uint64_t n_chunks,
                                                          std::uint64_t n_tiles, T* tile_out) {
  __shared__ block_tree_storage<T, B> storage;
  for (std::uint64_t tile = blockIdx.x; tile < n_tiles; tile += gridDim.x) {  // uniform per block
    const std::uint64_t c = tile * B + threadIdx.x;
    const T v = c < n_chunks ? chunk(c) : T{};
    const T r = block_tree_merge<B>(v, storage, merge);
    if (threadIdx.x == 0) tile_out[tile] = r;
  }
}

/// Computes the partials of chunks [0, n_chunks) on the current device, in `stream`, with `tpb`
/// threads per block, and merges them over the fixed tree (file comment). ChunkFn: trivially
/// copyable, with `__device__ T operator()(std::uint64_t chunk) const`; Merge: trivially copyable,
/// host and device; T: trivially copyable, T{} the identity of merge. Fills `report` (geometry,
/// kernel time) when non-null. Synchronises the stream once.
/// @throws invalid_input for a bad tpb; cuda_error if a CUDA call or the launch fails.
template <class T, class ChunkFn, class Merge>
T reduce_chunks(const ChunkFn& chunk, const Merge& merge, std::uint64_t n_chunks, int tpb, cudaStream_t stream,
                launch_report* report, device_array<unsigned char>* scratch = nullptr) {
  if (n_chunks == 0) return T{};
  return with_block_size(tpb, [&](auto block) -> T {
    constexpr int B = decltype(block)::value;
    const std::uint64_t n_tiles = (n_chunks + B - 1) / B;
    auto kernel = chunk_tiles_kernel<B, T, ChunkFn, Merge>;
    const unsigned grid = occupancy_grid(kernel, B, 0, n_tiles, report);
    device_array<T> own;
    T* d_tiles = scratch_values<T>(scratch, n_tiles, own);
    std::vector<T> tiles(n_tiles);
    event_timer timer;
    timer.start(stream);
    kernel<<<grid, B, 0, stream>>>(chunk, merge, n_chunks, n_tiles, d_tiles);
    MCUBES_CUDA_CHECK_LAUNCH("chunk_tiles_kernel");
    timer.stop(stream);
    MCUBES_CUDA_CHECK(cudaMemcpyAsync(tiles.data(), d_tiles, n_tiles * sizeof(T), cudaMemcpyDeviceToHost, stream));
    MCUBES_CUDA_CHECK(cudaStreamSynchronize(stream));
    if (report) report->kernel_ms = timer.elapsed_ms();
    const std::uint64_t width = next_pow2(n_chunks);
    const std::uint64_t tile_width = width > static_cast<std::uint64_t>(B) ? width / B : 1;
    return fixed_tree_reduce(tiles.data(), n_tiles, tile_width, merge);
  });
}

/// chunk(first + c): a team rank's chunks from its first (reduce_parts).
template <class T, class ChunkFn>
struct shifted_chunk {
  ChunkFn f;
  std::uint64_t first;
  __device__ T operator()(std::uint64_t c) const { return f(first + c); }
};

/// A count's chunk function as 64-bit integers (reduce_parts of counts).
template <class ChunkFn>
struct count_of {
  ChunkFn chunk;
  __device__ std::uint64_t operator()(std::uint64_t c) const { return static_cast<std::uint64_t>(chunk(c)); }
};

/// The values of a team rank's parts (backend/team.hpp: parts [part_begin, part_end) of
/// part_chunks = S chunks each, n_chunks in all), in one launch of chunk_tiles_kernel over the
/// rank's chunks (a part holds whole tiles: S >= 1024 >= B, or the part is the only one), then on
/// the host each part's tiles merged over the tree of its own chunks (width next_pow2(count)) and
/// widened to S with merge(x, T{}): bitwise reduce_chunks part by part (team_reduce), with one
/// launch and one synchronisation instead of one per part. Same requirements as reduce_chunks.
/// @throws invalid_input for a bad tpb; cuda_error if a CUDA call or the launch fails.
template <class T, class ChunkFn, class Merge>
std::vector<T> reduce_parts(const ChunkFn& chunk, const Merge& merge, std::uint64_t n_chunks, std::uint64_t part_chunks,
                            std::uint64_t part_begin, std::uint64_t part_end, int tpb, cudaStream_t stream,
                            launch_report* report, device_array<unsigned char>* scratch = nullptr) {
  std::vector<T> out;
  const std::uint64_t c0 = std::min(n_chunks, part_begin * part_chunks), c1 = std::min(n_chunks, part_end * part_chunks);
  if (c1 <= c0) return out;
  return with_block_size(tpb, [&](auto block) -> std::vector<T> {
    constexpr int B = decltype(block)::value;
    const std::uint64_t n = c1 - c0, n_tiles = (n + B - 1) / B;
    using shifted = shifted_chunk<T, ChunkFn>;
    auto kernel = chunk_tiles_kernel<B, T, shifted, Merge>;
    const unsigned grid = occupancy_grid(kernel, B, 0, n_tiles, report);
    device_array<T> own;
    T* d_tiles = scratch_values<T>(scratch, n_tiles, own);
    std::vector<T> tiles(n_tiles);
    event_timer timer;
    timer.start(stream);
    kernel<<<grid, B, 0, stream>>>(shifted{chunk, c0}, merge, n, n_tiles, d_tiles);
    MCUBES_CUDA_CHECK_LAUNCH("chunk_tiles_kernel");
    timer.stop(stream);
    MCUBES_CUDA_CHECK(cudaMemcpyAsync(tiles.data(), d_tiles, n_tiles * sizeof(T), cudaMemcpyDeviceToHost, stream));
    MCUBES_CUDA_CHECK(cudaStreamSynchronize(stream));
    if (report) report->kernel_ms = timer.elapsed_ms();
    for (std::uint64_t p = part_begin; p < part_end; ++p) {
      const std::uint64_t first = p * part_chunks;
      const std::uint64_t count = std::min(part_chunks, n_chunks - first);
      const std::uint64_t t0 = (first - c0) / B, nt = (count + B - 1) / B;
      const std::uint64_t width = next_pow2(count);
      T v = fixed_tree_reduce(tiles.data() + t0, nt, width > static_cast<std::uint64_t>(B) ? width / B : 1, merge);
      for (std::uint64_t w = width; w < part_chunks; w *= 2) v = merge(v, T{});  // widened to S (team.hpp widen_to)
      out.push_back(v);
    }
    return out;
  });
}

/// Adds the integer counts chunk(c) of the chunks c = t, t + G, t + 2G, ... (t the thread's index in
/// the grid, G the grid's threads) in a 64-bit register; the block sums them with cub::BlockReduce
/// (every thread takes part) and thread 0 adds the block's sum to *total with an integer atomicAdd.
template <int B, class ChunkFn>
__global__ void __launch_bounds__(B) count_chunks_kernel(ChunkFn chunk, std::uint64_t n_chunks, unsigned long long* total) {
  const std::uint64_t stride = static_cast<std::uint64_t>(gridDim.x) * B;
  unsigned long long sum = 0;
  for (std::uint64_t c = static_cast<std::uint64_t>(blockIdx.x) * B + threadIdx.x; c < n_chunks; c += stride)
    sum += static_cast<unsigned long long>(chunk(c));
  using block_reduce = cub::BlockReduce<unsigned long long, B>;
  __shared__ typename block_reduce::TempStorage temp;
  const unsigned long long block_sum = block_reduce(temp).Sum(sum);
  if (threadIdx.x == 0 && block_sum != 0) atomicAdd(total, block_sum);
}

/// The exact sum (modulo 2^64) of the integer counts chunk(c), c in [0, n_chunks), on the current
/// device in `stream` with `tpb` threads per block and the occupancy grid (grid-stride loop: any
/// n_chunks). Integer addition is exact, so the sum is the same for any grid and block size.
/// Fills `report` when non-null. Synchronises the stream once.
/// @throws invalid_input for a bad tpb; cuda_error if a CUDA call or the launch fails.
template <class ChunkFn>
std::uint64_t count_chunks(const ChunkFn& chunk, std::uint64_t n_chunks, int tpb, cudaStream_t stream,
                           launch_report* report, device_array<unsigned char>* scratch = nullptr) {
  if (n_chunks == 0) return 0;
  return with_block_size(tpb, [&](auto block) -> std::uint64_t {
    constexpr int B = decltype(block)::value;
    auto kernel = count_chunks_kernel<B, ChunkFn>;
    const unsigned grid = occupancy_grid(kernel, B, 0, (n_chunks + B - 1) / B, report);
    device_array<unsigned long long> own;
    unsigned long long* d_total = scratch_values<unsigned long long>(scratch, 1, own);
    unsigned long long total = 0;
    event_timer timer;
    timer.start(stream);
    MCUBES_CUDA_CHECK(cudaMemsetAsync(d_total, 0, sizeof(unsigned long long), stream));
    kernel<<<grid, B, 0, stream>>>(chunk, n_chunks, d_total);
    MCUBES_CUDA_CHECK_LAUNCH("count_chunks_kernel");
    timer.stop(stream);
    MCUBES_CUDA_CHECK(cudaMemcpyAsync(&total, d_total, sizeof total, cudaMemcpyDeviceToHost, stream));
    MCUBES_CUDA_CHECK(cudaStreamSynchronize(stream));
    if (report) report->kernel_ms = timer.elapsed_ms();
    return total;
  });
}

}  // namespace mcubes::cuda_detail

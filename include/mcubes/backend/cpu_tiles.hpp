#pragma once
/// @file backend/cpu_tiles.hpp
/// The CPU tile scheme of backend/cpu.hpp for any chunk partial type: the workers of the CPU
/// backend's pool (backend/worker_pool.hpp) compute the
/// partials of a fixed, problem-defined list of chunks and merge them over the fixed pairwise
/// tree (core/fixed_tree.hpp). Used by plain Monte Carlo, the midpoint rule and Monte Carlo pi.
///
/// Determinism contract (run_to_run and thread-count invariant): chunks are grouped in aligned
/// tiles of T = min(1024, P) chunks (P = next power of two >= number of chunks); a thread takes
/// whole tiles from a shared counter, computes the tile's chunk partials in chunk order and merges
/// them with the tree of width T; the tile results are merged, in tile order, over the tree of
/// width P / T (tree_accumulator: a binary counter over the tiles, which gives the bits of
/// fixed_tree_reduce over all tile results). Every tile is a node of the one global tree, so the result
/// is bitwise identical for any number of threads (and equal to what a CUDA block of T threads
/// computes for the same tile).
///
/// Memory: independent of the number of chunks beyond the tile size. A worker holds its tile's
/// partials; finished tiles wait in a window of 2 x workers slots until every earlier tile is done
/// (a worker that would run further ahead waits), and the merged prefix is a stack of at most 64
/// subtree roots. cpu_tree_reduce_max_partials gives the bound; e.g. Monte Carlo pi with
/// N = 2^62 samples (2^45 chunks) on 16 threads holds at most 16,936 hit counts (133 KiB).

#include <algorithm>
#include <array>
#include <condition_variable>
#include <cstdint>
#include <exception>
#include <mutex>
#include <thread>
#include <vector>

#include "../core/fixed_tree.hpp"
#include "../core/reduction.hpp"
#include "../core/tree_reduce.hpp"
#include "../error.hpp"
#include "worker_pool.hpp"

namespace mcubes {


/// Chunks per CPU tile at most (the tile is min(cpu_tile_chunks, next_pow2(chunks))).
inline constexpr std::uint64_t cpu_tile_chunks = 1024;

/// Number of worker threads for a `threads` option: itself if positive, else the hardware threads.
/// @throws invalid_input if threads < 0.
inline int resolve_cpu_threads(int threads) {
  MCUBES_EXPECTS(threads >= 0, "threads must be at least 1 (or 0 for all cores), got ", threads);
  if (threads > 0) return threads;
  return static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
}

/// The tile of a reduction of n_chunks chunks: min(cpu_tile_chunks, next_pow2(n_chunks)).
inline std::uint64_t cpu_tile_width(std::uint64_t n_chunks) {
  return std::min<std::uint64_t>(cpu_tile_chunks, next_pow2(n_chunks));
}

/// Workers cpu_tree_reduce starts: min(threads (0 = hardware threads), number of tiles).
inline int cpu_tree_reduce_workers(std::uint64_t n_chunks, int threads) {
  const int n_threads = resolve_cpu_threads(threads);
  if (n_chunks == 0) return 0;
  const std::uint64_t tile = cpu_tile_width(n_chunks);
  const std::uint64_t n_tiles = (n_chunks + tile - 1) / tile;
  return static_cast<int>(std::min<std::uint64_t>(static_cast<std::uint64_t>(n_threads), n_tiles));
}

/// An upper bound of the partials (objects of the partial type, temporaries of the merges
/// included) that cpu_tree_reduce holds at once:
///   workers x (tile + 2 log2(tile) + 8) + 2 workers + 72,
/// with tile = min(1024, next_pow2(n_chunks)) and workers = min(threads, tiles): per worker its
/// tile's partials, the path of the tile tree's recursion and the tile result; the window of
/// 2 x workers finished tiles; the binary counter's 64 roots and its merge temporaries. It does not
/// grow with n_chunks beyond 1024 x threads chunks. @throws invalid_input if threads < 0.
inline std::uint64_t cpu_tree_reduce_max_partials(std::uint64_t n_chunks, int threads) {
  const std::uint64_t workers = static_cast<std::uint64_t>(cpu_tree_reduce_workers(n_chunks, threads));
  if (workers == 0) return 1;
  const std::uint64_t tile = cpu_tile_width(n_chunks);
  std::uint64_t log2_tile = 0;
  while ((std::uint64_t(1) << log2_tile) < tile) ++log2_tile;
  return workers * (tile + 2 * log2_tile + 8) + 2 * workers + 72;
}

/// Computes chunk(i) for i in [0, n_chunks) on up to `threads` workers of `pool` (0 = all cores) and merges the
/// partials over the fixed tree (see the file comment); memory as cpu_tree_reduce_max_partials,
/// whatever n_chunks (up to 2^64 - 1). `chunk` must be callable concurrently; `merge(left, right)`
/// must satisfy merge(x, T{}) == x. The first exception thrown by a chunk (in time) stops the
/// workers and is rethrown. Returns T{} for n_chunks = 0.
template <class T, class ChunkFn, class Merge>
T cpu_tree_reduce(std::uint64_t n_chunks, int threads, worker_pool& pool, const ChunkFn& chunk, const Merge& merge) {
  const int n_workers = cpu_tree_reduce_workers(n_chunks, threads);  // validates threads
  if (n_chunks == 0) return T{};
  const std::uint64_t tile = cpu_tile_width(n_chunks);
  const std::uint64_t n_tiles = (n_chunks + tile - 1) / tile;
  const std::uint64_t window = 2 * static_cast<std::uint64_t>(n_workers);

  // Shared state, all guarded by `mutex`: tiles [next_merge, next_claim) are being computed or wait
  // in their slot (tile t in slot t % window) for the earlier ones; next_claim < next_merge + window.
  std::mutex mutex;
  std::condition_variable wake;
  std::uint64_t next_claim = 0, next_merge = 0;
  bool stop = false;
  std::exception_ptr failure;
  std::vector<T> slot(window);
  std::vector<unsigned char> ready(window, 0);
  tree_accumulator<T, Merge> merged(merge);

  auto work = [&]() {
    try {
      std::vector<T> part(tile);
      for (;;) {
        std::uint64_t t;
        {
          std::unique_lock<std::mutex> lock(mutex);
          wake.wait(lock, [&] { return stop || next_claim >= n_tiles || next_claim < next_merge + window; });
          if (stop || next_claim >= n_tiles) return;
          t = next_claim++;
        }
        const std::uint64_t first = t * tile;
        const std::uint64_t count = std::min(tile, n_chunks - first);
        for (std::uint64_t i = 0; i < count; ++i) part[i] = chunk(first + i);
        const T value = fixed_tree_reduce(part.data(), count, tile, merge);
        std::lock_guard<std::mutex> lock(mutex);
        slot[t % window] = value;
        ready[t % window] = 1;
        bool advanced = false;
        while (next_merge < n_tiles && ready[next_merge % window]) {  // the finished prefix, in order
          merged.push(slot[next_merge % window]);
          ready[next_merge % window] = 0;
          ++next_merge;
          advanced = true;
        }
        if (advanced) wake.notify_all();
      }
    } catch (...) {
      std::lock_guard<std::mutex> lock(mutex);
      if (!failure) failure = std::current_exception();
      stop = true;  // stop the other workers early
      wake.notify_all();
    }
  };
  pool.run(n_workers, [&](int) { work(); });
  if (failure) std::rethrow_exception(failure);
  return merged.result();
}

/// cpu_tree_reduce on a pool of `threads` workers made for the call (0 = all cores).
template <class T, class ChunkFn, class Merge>
T cpu_tree_reduce(std::uint64_t n_chunks, int threads, const ChunkFn& chunk, const Merge& merge) {
  worker_pool pool(cpu_tree_reduce_workers(n_chunks, threads));
  return cpu_tree_reduce<T>(n_chunks, threads, pool, chunk, merge);
}

}  // namespace mcubes

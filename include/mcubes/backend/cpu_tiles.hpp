#pragma once
/// @file backend/cpu_tiles.hpp
/// The CPU tile scheme of backend/cpu.hpp for any chunk partial type: std::threads compute the
/// partials of a fixed, problem-defined list of chunks and merge them over the fixed pairwise
/// tree (core/tree_reduce.hpp). Used by plain Monte Carlo, the midpoint rule and Monte Carlo pi.
///
/// Determinism contract (run_to_run and thread-count invariant): chunks are grouped in aligned
/// tiles of T = min(1024, P) chunks (P = next power of two >= number of chunks); a thread takes
/// whole tiles from a shared counter, computes the tile's chunk partials in chunk order and merges
/// them with the tree of width T; the tile results are merged with the tree of width P / T. Every
/// tile is a node of the one global tree, so the result is bitwise identical for any number of
/// threads (and equal to what a CUDA block of T threads computes for the same tile).

#include <algorithm>
#include <atomic>
#include <cstdint>
#include <exception>
#include <mutex>
#include <thread>
#include <vector>

#include "../core/reduction.hpp"
#include "../core/tree_reduce.hpp"
#include "../error.hpp"

namespace mcubes {

/// Number of worker threads for a `threads` option: itself if positive, else the hardware threads.
/// @throws invalid_input if threads < 0.
inline int resolve_cpu_threads(int threads) {
  MCUBES_EXPECTS(threads >= 0, "threads must be at least 1 (or 0 for all cores), got ", threads);
  if (threads > 0) return threads;
  return static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
}

/// Computes chunk(i) for i in [0, n_chunks) on `threads` threads (0 = all cores) and merges the
/// partials over the fixed tree (see the file comment). `chunk` must be callable concurrently;
/// `merge(left, right)` must satisfy merge(x, T{}) == x. The first exception thrown by a chunk (in
/// time) stops the workers and is rethrown. Returns T{} for n_chunks = 0.
template <class T, class ChunkFn, class Merge>
T cpu_tree_reduce(std::uint64_t n_chunks, int threads, const ChunkFn& chunk, const Merge& merge) {
  const int n_threads = resolve_cpu_threads(threads);
  if (n_chunks == 0) return T{};
  const std::uint64_t width = next_pow2(n_chunks);
  const std::uint64_t tile = std::min<std::uint64_t>(1024, width);
  const std::uint64_t n_tiles = (n_chunks + tile - 1) / tile;
  std::vector<T> tiles(n_tiles);
  std::atomic<std::uint64_t> next{0};
  std::exception_ptr failure;
  std::mutex failure_mutex;

  auto work = [&]() {
    try {
      std::vector<T> part(tile);
      for (std::uint64_t t = next++; t < n_tiles; t = next++) {
        const std::uint64_t first = t * tile;
        const std::uint64_t count = std::min(tile, n_chunks - first);
        for (std::uint64_t i = 0; i < count; ++i) part[i] = chunk(first + i);
        tiles[t] = tree_reduce(part.data(), count, tile, merge);
      }
    } catch (...) {
      std::lock_guard<std::mutex> lock(failure_mutex);
      if (!failure) failure = std::current_exception();
      next = n_tiles;  // stop the other workers early
    }
  };
  const int n_workers = static_cast<int>(std::min<std::uint64_t>(static_cast<std::uint64_t>(n_threads), n_tiles));
  if (n_workers <= 1) {
    work();
  } else {
    std::vector<std::thread> pool;
    pool.reserve(n_workers);
    for (int w = 0; w < n_workers; ++w) pool.emplace_back(work);
    for (auto& th : pool) th.join();
  }
  if (failure) std::rethrow_exception(failure);
  return tree_reduce(tiles.data(), n_tiles, width / tile, merge);
}

}  // namespace mcubes

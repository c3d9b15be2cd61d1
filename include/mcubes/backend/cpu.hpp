#pragma once
/// @file backend/cpu.hpp
/// CPU backend: runs the chunks of an iteration on std::threads.
///
/// Determinism contract (run_to_run and thread_count invariant): chunks are grouped in aligned
/// tiles of T = min(1024, P) chunks (P = next power of two >= number of chunks); a thread takes
/// whole tiles from a shared counter, computes the tile's chunk partials in chunk order and reduces
/// them with the fixed pairwise tree (reduction.hpp); tile sums are reduced with the same tree.
/// Every tile is a node of the one global tree, so the sums are bitwise identical for any number
/// of threads. Bin contributions are exact integers (bin_accumulator), merged in any order.
///
/// The operations of a backend (backend/backend.hpp) on std::threads:
///  - reduce: partials of problem-defined chunks merged over the fixed tree (backend/cpu_tiles.hpp);
///  - count: an exact integer sum over chunks (the same scheduler; integer addition is exact);
///  - sample / make_map / adapt_map / map_edges / set_map_edges: the Vegas pass over the adaptive
///    map in host memory, computed by the SIMD fast path (backend/cpu/fast_path.hpp; bitwise the
///    results of core/sampler.hpp's sample_chunk, selected by serial_sampler for tests).

#include <algorithm>
#include <atomic>
#include <cstdint>
#include <exception>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "../core/reduction.hpp"
#include "../core/sampler.hpp"
#include "../core/stratification.hpp"
#include "../error.hpp"
#include "cpu/fast_path.hpp"
#include "cpu_tiles.hpp"

namespace mcubes {

/// The CPU backend. Holds no per-sample memory: per thread one tile buffer and one bin array.
class cpu_backend {
 public:
  /// @param threads number of worker threads; 0 = std::thread::hardware_concurrency().
  explicit cpu_backend(int threads = 0) {
    MCUBES_EXPECTS(threads >= 0, "threads must be at least 1 (or 0 for all cores), got ", threads);
    threads_ = threads > 0 ? threads : std::max(1u, std::thread::hardware_concurrency());
  }
  static std::string name() { return "cpu"; }
  int threads() const noexcept { return threads_; }
  /// Test hook: true runs every chunk through core/sampler.hpp's sample_chunk (the code the CUDA
  /// kernels share) instead of the batched CPU fast path; the results are bitwise the same.
  bool serial_sampler = false;

  /// Runs V-Sample (adapt = true) or V-Sample-No-Adjust over chunks 0, stride, 2*stride, ...
  /// (stride > 1 only for the bin-scale probe, whose sums are not used).
  template <int D, class F>
  iteration_sums sample(const F& f, const sampling_params<D>& sp, const stratification& st, const map_view<D>& map,
                        bool adapt, std::uint64_t stride = 1) const {
    const std::uint64_t n_sel = (st.n_chunks + stride - 1) / stride;
    const std::uint64_t width = next_pow2(n_sel);
    const std::uint64_t tile = std::min<std::uint64_t>(1024, width);
    const std::uint64_t n_tiles = (n_sel + tile - 1) / tile;
    const std::size_t n_bin_values = adapt ? static_cast<std::size_t>(D) * map.n_bins : 0;

    std::vector<double> tile_est(n_tiles), tile_var(n_tiles);
    const int n_workers = static_cast<int>(std::min<std::uint64_t>(threads_, n_tiles));
    std::vector<chunk_partial> worker_flags(n_workers);
    std::vector<std::vector<bin_accumulator>> worker_bins(n_workers), worker_over(n_workers);
    std::atomic<std::uint64_t> next{0};
    std::exception_ptr failure;
    std::mutex failure_mutex;
    const cpu_detail::coordinate_tables<D> tables(sp.g, sp.p);

    auto work = [&](int w) {
      try {
        std::vector<double> est(tile), var(tile);
        worker_bins[w].assign(n_bin_values, bin_accumulator{});
        bin_array_sink sink{worker_bins[w].data(), map.n_bins, &worker_over[w], n_bin_values};
        no_bins none;
        chunk_partial& flags = worker_flags[w];
        for (std::uint64_t t = next++; t < n_tiles; t = next++) {
          const std::uint64_t first = t * tile;
          const std::uint64_t count = std::min(tile, n_sel - first);
          if (stride == 1 && !serial_sampler) {  // the batched fast path (same bits)
            if (adapt)
              cpu_detail::sample_chunks<D>(f, sp, map, tables, first, count, est.data(), var.data(), flags, sink);
            else
              cpu_detail::sample_chunks<D>(f, sp, map, tables, first, count, est.data(), var.data(), flags, none);
          } else {
            for (std::uint64_t i = 0; i < count; ++i) {
              const std::uint64_t chunk = (first + i) * stride;
              const chunk_partial part =
                  adapt ? sample_chunk<D>(f, sp, map, chunk, sink) : sample_chunk<D>(f, sp, map, chunk, none);
              est[i] = part.estimate;
              var[i] = part.variance;
              merge_flags(flags, part);
            }
          }
          tile_est[t] = pairwise_sum(est.data(), count, tile);
          tile_var[t] = pairwise_sum(var.data(), count, tile);
        }
      } catch (...) {
        std::lock_guard<std::mutex> lock(failure_mutex);
        if (!failure) failure = std::current_exception();
        next = n_tiles;  // stop the other workers early
      }
    };
    if (n_workers == 1) {
      work(0);
    } else {
      std::vector<std::thread> pool;
      pool.reserve(n_workers);
      for (int w = 0; w < n_workers; ++w) pool.emplace_back(work, w);
      for (auto& th : pool) th.join();
    }
    if (failure) std::rethrow_exception(failure);

    iteration_sums out;
    out.estimate = pairwise_sum(tile_est.data(), n_tiles, width / tile);
    out.variance = pairwise_sum(tile_var.data(), n_tiles, width / tile);
    for (const auto& fl : worker_flags) merge_flags(out.flags, fl);
    if (adapt) {
      out.top_level = top_bin_level(out.flags.max_contribution, sp.bin_scale);
      out.bins.assign((static_cast<std::size_t>(out.top_level) + 1) * n_bin_values, bin_accumulator{});
      for (const auto& wb : worker_bins)
        for (std::size_t i = 0; i < n_bin_values; ++i) out.bins[i].add(wb[i]);
      for (const auto& wo : worker_over)  // levels 1..top_level of the workers that have any
        if (!wo.empty())
          for (std::size_t i = n_bin_values; i < out.bins.size(); ++i) out.bins[i].add(wo[i - n_bin_values]);
    }
    return out;
  }

  // The map interface of a backend (algorithm/vegas.hpp): the backend owns the adaptive map, here
  // an adaptive_map in host memory.

  /// A uniform map of n_bins bins per axis. @throws invalid_input if n_bins < 2.
  template <int D>
  adaptive_map<D> make_map(int n_bins) const { return adaptive_map<D>(n_bins); }
  /// sample() on the backend's map.
  template <int D, class F>
  iteration_sums sample(const F& f, const sampling_params<D>& sp, const stratification& st, const adaptive_map<D>& map,
                        bool adapt, std::uint64_t stride = 1) const {
    return sample(f, sp, st, map.view(), adapt, stride);
  }
  /// Adapts the map to the bins of the last V-Sample pass (sums.bins; adaptive_map::adapt).
  template <int D>
  void adapt_map(adaptive_map<D>& map, const iteration_sums& sums, double alpha, bool symmetric) const {
    map.adapt(sums.bins.data(), alpha, symmetric, sums.top_level);
  }
  /// The map's edges (D * (n_bins + 1), axis-major).
  template <int D>
  std::vector<double> map_edges(const adaptive_map<D>& map) const { return map.edges(); }
  /// Replaces the map's edges (checked by adaptive_map::set_edges).
  /// @throws invalid_input if `edges` is not a valid map of map.n_bins() bins per axis.
  template <int D>
  void set_map_edges(adaptive_map<D>& map, const std::vector<double>& edges) const { map.set_edges(edges); }

  // The chunk operations of a backend (backend/backend.hpp).

  /// Merges chunk(c) for c in [0, n_chunks) over the fixed tree (cpu_tree_reduce; bitwise the same
  /// for any thread count). `chunk` is called concurrently; merge(x, T{}) must be x.
  /// @throws the first exception a chunk throws.
  template <class T, class ChunkFn, class Merge>
  T reduce(std::uint64_t n_chunks, const ChunkFn& chunk, const Merge& merge) const {
    return cpu_tree_reduce<T>(n_chunks, threads_, chunk, merge);
  }
  /// The exact sum of the integer counts chunk(c), c in [0, n_chunks) (wraps modulo 2^64).
  template <class ChunkFn>
  std::uint64_t count(std::uint64_t n_chunks, const ChunkFn& chunk) const {
    return cpu_tree_reduce<std::uint64_t>(
        n_chunks, threads_, [&](std::uint64_t c) { return static_cast<std::uint64_t>(chunk(c)); },
        [](std::uint64_t a, std::uint64_t b) { return a + b; });
  }

 private:
  int threads_ = 1;
};

}  // namespace mcubes

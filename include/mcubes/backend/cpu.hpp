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

namespace mcubes {

/// Bin sink over a thread-private array of D * n_bins accumulators.
struct bin_array_sink {
  static constexpr bool enabled = true;
  bin_accumulator* bins;
  int n_bins;
  MCUBES_HOST_DEVICE void add(int axis, int bin, std::uint64_t q) { bins[static_cast<std::size_t>(axis) * n_bins + bin].add(q); }
};

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
    std::vector<std::vector<bin_accumulator>> worker_bins(n_workers);
    std::atomic<std::uint64_t> next{0};
    std::exception_ptr failure;
    std::mutex failure_mutex;

    auto work = [&](int w) {
      try {
        std::vector<double> est(tile), var(tile);
        worker_bins[w].assign(n_bin_values, bin_accumulator{});
        bin_array_sink sink{worker_bins[w].data(), map.n_bins};
        no_bins none;
        chunk_partial& flags = worker_flags[w];
        for (std::uint64_t t = next++; t < n_tiles; t = next++) {
          const std::uint64_t first = t * tile;
          const std::uint64_t count = std::min(tile, n_sel - first);
          for (std::uint64_t i = 0; i < count; ++i) {
            const std::uint64_t chunk = (first + i) * stride;
            const chunk_partial part =
                adapt ? sample_chunk<D>(f, sp, map, chunk, sink) : sample_chunk<D>(f, sp, map, chunk, none);
            est[i] = part.estimate;
            var[i] = part.variance;
            merge_flags(flags, part);
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
      out.bins.assign(n_bin_values, bin_accumulator{});
      for (const auto& wb : worker_bins)
        for (std::size_t i = 0; i < n_bin_values; ++i) out.bins[i].add(wb[i]);
    }
    return out;
  }

 private:
  int threads_ = 1;
};

}  // namespace mcubes

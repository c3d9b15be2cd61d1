#pragma once
/// @file backend/cpu.hpp
/// CPU backend: runs the chunks of an iteration on its pool of worker threads (worker_pool.hpp).
///
/// Determinism contract (run_to_run and thread_count invariant): chunks are grouped in aligned
/// tiles of T = min(1024, P) chunks (P = next power of two >= number of chunks); a thread takes
/// whole tiles from a shared counter, computes the tile's chunk partials in chunk order and reduces
/// them with the fixed pairwise tree (reduction.hpp); tile sums are reduced with the same tree.
/// Every tile is a node of the one global tree, so the sums are bitwise identical for any number
/// of threads. Bin contributions are exact integers (bin_accumulator), merged in any order. An
/// array integrand (integrand.hpp) takes larger tiles (backend/cpu/array_path.hpp: one call of its
/// array form per slice of up to 32768 points), still nodes of that tree: the same sums.
///
/// The operations of a backend (backend/backend.hpp) on the pool's threads:
///  - reduce: partials of problem-defined chunks merged over the fixed tree (backend/cpu_tiles.hpp);
///  - count: an exact integer sum over chunks (the same scheduler; integer addition is exact);
///  - sample / make_map / adapt_map / map_edges / set_map_edges: the Vegas pass over the adaptive
///    map in host memory, computed by the SIMD fast path (backend/cpu/fast_path.hpp: sample_chunks
///    for the uniform grid, sample_chunks_counts for VEGAS+ counts; bitwise the results of
///    core/sampler.hpp's sample_chunk, selected by serial_sampler for tests).

#include <algorithm>
#include <atomic>
#include <cstdint>
#include <exception>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <type_traits>
#include <utility>
#include <vector>

#include "../core/batch.hpp"
#include "../core/reduction.hpp"
#include "../core/sampler.hpp"
#include "../core/sampling_pass.hpp"
#include "../core/stratification.hpp"
#include "../error.hpp"
#include "../execution.hpp"
#include "cpu/array_path.hpp"
#include "cpu/fast_path.hpp"
#include "cpu/vector_pass.hpp"
#include "cpu_tiles.hpp"
#include "team.hpp"
#include "worker_pool.hpp"

namespace mcubes {

/// One sampling pass of cpu_backend::sample_cpu_passes: the parameters of the pass, the map it samples
/// through, the stratification, V-Sample or No-Adjust, and the chunk stride.
template <int D>
struct cpu_pass {
  const sampling_params<D>* sp;
  map_view<D> map;
  const stratification* st;
  bool adapt;
  std::uint64_t stride;
};

namespace cpu_detail {
/// The stop poll of the CPU's serial sampling loop (core/sampler.hpp sample_cubes): a relaxed load
/// of the stop request, if any. Host and device only so that nvcc accepts the host-and-device
/// sample_cubes instantiated with it; it is called on the host alone (device code: false).
struct stop_poll {
  static constexpr bool enabled = true;
  const stop_request* stop = nullptr;
  MCUBES_HOST_DEVICE bool operator()() const {
#if defined(__CUDA_ARCH__)
    return false;
#else
    return stop != nullptr && stop->requested();
#endif
  }
};
}  // namespace cpu_detail

/// An owning array of doubles in host memory, uninitialised (cpu_backend::make_cube_values).
struct host_values {
  explicit host_values(std::size_t n) : p(new double[n]) {}
  double* data() const noexcept { return p.get(); }
  std::unique_ptr<double[]> p;
};

/// The CPU backend. Holds no per-sample memory: per thread one tile buffer and one bin array.
/// Its worker threads are one pool (backend/worker_pool.hpp), started on first use and kept for
/// every pass, reduction and a batch's host work (host_workers()); copies of a backend share it.
class cpu_backend {
 public:
  /// @param threads number of worker threads; 0 = std::thread::hardware_concurrency().
  /// @param stop_on the stop request (execution::stop) that sample passes honour, or null.
  /// @param team_of the team (execution::team, backend/team.hpp) whose ranks share every pass and
  ///        reduction, or null: this process computes every chunk. Not owned.
  explicit cpu_backend(int threads = 0, const stop_request* stop_on = nullptr, const communicator* team_of = nullptr)
      : stop(stop_on), team(team_of) {
    MCUBES_EXPECTS(threads >= 0, "threads must be at least 1 (or 0 for all cores), got ", threads);
    threads_ = threads > 0 ? threads : std::max(1u, std::thread::hardware_concurrency());
    pool_ = std::make_shared<worker_pool>(threads_);
  }
  static std::string name() { return "cpu"; }
  int threads() const noexcept { return threads_; }
  /// The backend's worker pool (the same threads as its passes and reductions), for a batch's host
  /// work (algorithm/vegas_batch.hpp).
  worker_pool& host_workers() const noexcept { return *pool_; }
  /// Test hook: true runs every chunk through core/sampler.hpp's sample_chunk (the code the CUDA
  /// kernels share) instead of the batched CPU fast path; the results are bitwise the same.
  bool serial_sampler = false;
  /// The stop request that sample_passes() honours, or null: the
  /// workers look at it (a relaxed load) before each tile and, for scalar integrands, before each
  /// batch of 64 samples; once it is requested they stop, and a pass during which it was requested
  /// throws pass_abandoned, its partial sums discarded. (An array integrand's tile, and a call of
  /// the integrand, are finished first.)
  const stop_request* stop = nullptr;
  /// The team (backend/team.hpp) that shares the passes and reductions, or null. With more than
  /// one rank, each rank computes the chunks of its part of every pass (team_split) and the ranks
  /// exchange the parts' sums, flags and integer bins: every rank gets the bits one process gets.
  /// A stop request seen by one rank abandons the pass on all (pass_abandoned).
  const communicator* team = nullptr;
  /// The team's assignment of parts to ranks where it is not the even one (balance_team,
  /// algorithm/vegas.hpp: a VEGAS+ run's); the passes, reductions and counts of its chunking follow
  /// it. Never changes a result's bits.
  team_layout layout;

  /// The backend's one sampling operation (backend/backend.hpp): K = passes.size() passes of an
  /// integrand whose value per point is Values (double, or values<N>: core/sampling_pass.hpp) over
  /// `map` (one integral's map; every pass's `integral` must be 0), V-Sample (adapt) or No-Adjust
  /// each, over chunks 0, stride, 2 stride, ... Result i is pass i's sums (pass_sums_t<Values>),
  /// bitwise those of pass i run alone, for any thread count. Policies: a scalar integrand's K
  /// passes run as one pool of (pass, tile) work (sample_cpu_passes: the SIMD fast path, or an
  /// array integrand's tiles); a vector integrand's passes, one after the other, through the vector
  /// pass (backend/cpu/vector_pass.hpp).
  /// @throws the first exception the integrand throws; pass_abandoned when `stop` was requested
  ///         before the last tile was taken; invalid_input for a pass whose `integral` is not 0,
  ///         and for a vector integrand under a team of more than one rank (not split yet).
  template <class Values = double, int D, class F>
  std::vector<pass_sums_t<Values>> sample_passes(const F& f, const map_view<D>& map,
                                                 const std::vector<sampling_pass<D>>& passes) const {
    for (const sampling_pass<D>& p : passes)
      MCUBES_EXPECTS(p.integral == 0, "sample_passes: pass of integral ", p.integral, " over the map of one integral");
    constexpr int N = pass_form<Values>::components;
    if constexpr (N == 0) {
      std::vector<cpu_pass<D>> cp;
      cp.reserve(passes.size());
      for (const sampling_pass<D>& p : passes) cp.push_back(cpu_pass<D>{&p.sp, map, &p.st, p.adapt, p.stride});
      const std::vector<cpu_detail::pass_integrand<D>> fi(passes.size(), cpu_detail::pass_integrand_of<D>(f));
      return sample_cpu_passes<D>(cp.data(), cp.size(), fi.data());
    } else {
      MCUBES_EXPECTS(!splits(team), "vector integrands do not run across MPI ranks yet: run them in one process");
      std::vector<vector_pass_sums> out;
      out.reserve(passes.size());
      for (const sampling_pass<D>& p : passes)
        out.push_back(cpu_sample_vector<D, N>(threads_, *pool_, f, p.sp, p.st, map, p.adapt, p.stride));
      return out;
    }
  }
  /// sample_passes over the backend's map (make_map).
  template <class Values = double, int D, class F>
  std::vector<pass_sums_t<Values>> sample_passes(const F& f, const adaptive_map<D>& map,
                                                 const std::vector<sampling_pass<D>>& passes) const {
    return sample_passes<Values>(f, map.view(), passes);
  }

  /// The engine of the scalar passes: runs several passes (their own parameters, maps, strides,
  /// integrands) as one pool of work: threads take (pass, tile) pairs in pass-major order. Pass
  /// i's sums are bitwise those of it alone (the same tiles, the same trees, exact integer bins).
  /// `integrands[i]` is pass i's integrand (cpu_detail::pass_integrand_of). Compiled once per D
  /// (defined below the class: an `extern template` declaration suppresses it in a unit,
  /// mcubes/precompiled.hpp).
  /// @throws the first exception an integrand throws; pass_abandoned when `stop` was requested
  ///         before the last tile was taken.
  template <int D>
  std::vector<iteration_sums> sample_cpu_passes(const cpu_pass<D>* passes, std::size_t n_passes,
                                                const cpu_detail::pass_integrand<D>* integrands) const;

  // The map interface of a backend (algorithm/vegas.hpp): the backend owns the adaptive map, here
  // an adaptive_map in host memory.

  /// A uniform map of n_bins bins per axis. @throws invalid_input if n_bins < 2.
  template <int D>
  adaptive_map<D> make_map(int n_bins) const { return adaptive_map<D>(n_bins); }
  /// n doubles in host memory, uninitialised (VEGAS+'s per-sub-cube shares, algorithm/vegas.hpp
  /// cube_shares: every value is written by a pass before it is read). Not zeroed: the pages are
  /// touched by the pass that writes them, whose workers honour a stop request (zeroing 512 MiB
  /// up front takes seconds on some hosts, during which a signal would wait).
  host_values make_cube_values(std::uint64_t n) const { return host_values(static_cast<std::size_t>(n)); }
  /// Adapts the map to the bins of the last V-Sample pass (sums.bins; adaptive_map::adapt).
  template <int D>
  void adapt_map(adaptive_map<D>& map, const iteration_sums& sums, double alpha, double floor, bool symmetric) const {
    map.adapt(sums.bins.data(), alpha, floor, symmetric, sums.top_level);
  }
  /// The map's edges (D * (n_bins + 1), axis-major).
  template <int D>
  std::vector<double> map_edges(const adaptive_map<D>& map) const { return map.edges(); }
  /// Replaces the map's edges (checked by adaptive_map::set_edges).
  /// @throws invalid_input if `edges` is not a valid map of map.n_bins() bins per axis.
  template <int D>
  void set_map_edges(adaptive_map<D>& map, const std::vector<double>& edges) const { map.set_edges(edges); }

  // The batch interface of a backend (algorithm/vegas_batch.hpp): one adaptive map per integral.

  /// The maps of a parameter batch in host memory (one per integral, uniform at first) and the
  /// integrals' parameters (not owned: the caller's array outlives the batch).
  template <int D, class P>
  struct batch_state {
    std::vector<adaptive_map<D>> maps;
    const P* params = nullptr;
  };
  /// n uniform maps of n_bins bins per axis for the integrals with parameters params[0..n).
  /// Memory: n * D * (n_bins + 1) doubles. @throws invalid_input if n_bins < 2.
  template <int D, class P>
  batch_state<D, P> make_batch(const P* params, std::size_t n, int n_bins) const {
    batch_state<D, P> b;
    b.maps.assign(n, adaptive_map<D>(n_bins));
    b.params = params;
    return b;
  }
  /// sample_passes over a batch's maps: pass i samples with_parameters{f, params[k]} through map k,
  /// k = its `integral`; the passes of distinct integrals run as one pool of (pass, tile) work
  /// (sample_cpu_passes), each bitwise its integral's pass alone. Scalar integrands only.
  template <class Values = double, int D, class F, class P>
  std::vector<pass_sums_t<Values>> sample_passes(const F& f, const batch_state<D, P>& b,
                                                 const std::vector<sampling_pass<D>>& passes) const {
    static_assert(pass_form<Values>::components == 0,
                  "a batch of vector-valued integrands is not a pass form of the CPU backend yet");
    std::vector<cpu_pass<D>> cp(passes.size());
    for (std::size_t i = 0; i < passes.size(); ++i) {
      const sampling_pass<D>& ps = passes[i];
      MCUBES_EXPECTS(ps.integral < b.maps.size(), "sample_passes: pass of integral ", ps.integral, " in a batch of ",
                     b.maps.size());
      cp[i] = cpu_pass<D>{&ps.sp, b.maps[ps.integral].view(), &ps.st, ps.adapt, ps.stride};
    }
    std::vector<with_parameters<F, P>> members;  // pass i's integrand (pointed to by fi[i])
    members.reserve(passes.size());
    std::vector<cpu_detail::pass_integrand<D>> fi;
    fi.reserve(passes.size());
    for (std::size_t i = 0; i < passes.size(); ++i) {
      members.push_back(with_parameters<F, P>{f, b.params[passes[i].integral]});
      fi.push_back(cpu_detail::pass_integrand_of<D>(members.back()));
    }
    return sample_cpu_passes<D>(cp.data(), cp.size(), fi.data());
  }
  /// Adapts map k to the sums of its last V-Sample pass for each (k, sums) in `items`
  /// (adaptive_map::adapt).
  template <int D, class P>
  void adapt_batch(batch_state<D, P>& b, const std::vector<std::pair<std::size_t, const iteration_sums*>>& items,
                   double alpha, double floor, bool symmetric) const {
    for (const auto& [k, sums] : items) b.maps[k].adapt(sums->bins.data(), alpha, floor, symmetric, sums->top_level);
  }
  /// The edges of integral k's map (D * (n_bins + 1), axis-major).
  template <int D, class P>
  std::vector<double> batch_map_edges(const batch_state<D, P>& b, std::size_t k) const {
    return b.maps[k].edges();
  }
  /// Replaces integral k's map (a resumed batch: algorithm/vegas_batch.hpp).
  /// @throws invalid_input if `edges` is not a valid map of the batch's size (adaptive_map::set_edges).
  template <int D, class P>
  void batch_set_map_edges(batch_state<D, P>& b, std::size_t k, const std::vector<double>& edges) const {
    b.maps[k].set_edges(edges);
  }

  // The chunk operations of a backend (backend/backend.hpp).

  /// Merges chunk(c) for c in [0, n_chunks) over the fixed tree (cpu_tree_reduce; bitwise the same
  /// for any thread count). `chunk` is called concurrently; merge(x, T{}) must be x.
  /// @throws the first exception a chunk throws.
  template <class T, class ChunkFn, class Merge>
  T reduce(std::uint64_t n_chunks, const ChunkFn& chunk, const Merge& merge) const {
    if (splits(team))  // this rank's parts (backend/team.hpp), each over the tree of its chunks
      return team_reduce<T>(*team, n_chunks, [&](std::uint64_t first, std::uint64_t n) {
        return cpu_tree_reduce<T>(n, threads_, *pool_, [&](std::uint64_t c) { return chunk(first + c); }, merge);
      }, merge, &layout);
    return cpu_tree_reduce<T>(n_chunks, threads_, *pool_, chunk, merge);
  }
  /// The exact sum of the integer counts chunk(c), c in [0, n_chunks) (wraps modulo 2^64). Under a
  /// team, `parts` (may be null) gets every part's count in part order (team_reduce_parts).
  template <class ChunkFn>
  std::uint64_t count(std::uint64_t n_chunks, const ChunkFn& chunk, std::vector<std::uint64_t>* parts = nullptr) const {
    const auto as_count = [&](std::uint64_t c) { return static_cast<std::uint64_t>(chunk(c)); };
    const auto add = [](std::uint64_t a, std::uint64_t b) { return a + b; };
    if (splits(team))
      return team_reduce<std::uint64_t>(*team, n_chunks, [&](std::uint64_t first, std::uint64_t n) {
        return cpu_tree_reduce<std::uint64_t>(n, threads_, *pool_, [&](std::uint64_t c) { return as_count(first + c); }, add);
      }, add, &layout, parts);
    return cpu_tree_reduce<std::uint64_t>(n_chunks, threads_, *pool_, as_count, add);
  }
  /// Copies n values from `array` (make_cube_values) at `begin` to `out` (balance_team's moves).
  void read_cube_values(const double* array, std::uint64_t begin, std::uint64_t n, double* out) const {
    std::copy(array + begin, array + begin + n, out);
  }
  /// Copies n values from `in` to `array` at `begin`.
  void write_cube_values(double* array, std::uint64_t begin, std::uint64_t n, const double* in) const {
    std::copy(in, in + n, array + begin);
  }

 private:
  int threads_ = 1;
  std::shared_ptr<worker_pool> pool_;
};

template <int D>
std::vector<iteration_sums> cpu_backend::sample_cpu_passes(const cpu_pass<D>* passes, std::size_t n_passes,
                                                         const cpu_detail::pass_integrand<D>* integrands) const {
  struct pass_plan {
    std::uint64_t n_sel, width, tile, n_tiles, first_unit;
    team_split split;         // the parts of this rank (every chunk without a team)
    std::uint64_t first_tile;  // this rank's first tile; its tiles are the units [first_unit, + n_tiles)
    std::size_t n_bin_values;
    const cpu_detail::coordinate_tables<D>* tables;
  };
  std::vector<pass_plan> plan(n_passes);
  std::vector<std::unique_ptr<cpu_detail::coordinate_tables<D>>> tables;
  std::uint64_t n_units = 0, max_tile = 1;
  for (std::size_t i = 0; i < n_passes; ++i) {
    const cpu_pass<D>& ps = passes[i];
    pass_plan& pl = plan[i];
    pl.n_sel = (ps.st->n_chunks + ps.stride - 1) / ps.stride;
    pl.width = next_pow2(pl.n_sel);
    pl.split = split_chunks(pl.n_sel, team, &layout);
    MCUBES_EXPECTS(!splits(team) || ps.stride == 1 || ps.sp->counts.share_in == nullptr,
                   "cpu_backend: a strided pass that reads VEGAS+ shares cannot be split over a team");
    // 1024 chunks; more for an array integrand (backend/cpu/array_path.hpp); the same sums either
    // way; within a team's part (the part is then a whole number of tiles)
    pl.tile = std::min<std::uint64_t>(cpu_detail::tile_chunks(integrands[i].array(), ps.sp->chunk_cubes * ps.sp->p), pl.width);
    pl.tile = std::min(pl.tile, pl.split.part_chunks);
    max_tile = std::max(max_tile, pl.tile);
    pl.first_tile = pl.split.chunk_begin() / pl.tile;
    pl.n_tiles = pl.split.part_end > pl.split.part_begin ? (pl.split.chunk_end() + pl.tile - 1) / pl.tile - pl.first_tile : 0;
    pl.first_unit = n_units;
    n_units += pl.n_tiles;
    pl.n_bin_values = ps.adapt ? static_cast<std::size_t>(D) * ps.map.n_bins : 0;
    if (tables.empty() || passes[i - 1].sp->g != ps.sp->g || passes[i - 1].sp->p != ps.sp->p)
      tables.push_back(std::make_unique<cpu_detail::coordinate_tables<D>>(ps.sp->g, ps.sp->p));
    pl.tables = tables.back().get();
  }

  std::vector<double> tile_est(n_units), tile_var(n_units);
  const int n_workers = static_cast<int>(std::min<std::uint64_t>(threads_, n_units));
  // Per worker and pass (made when the worker first takes a tile of the pass): flags, level-0
  // bins, overflow levels.
  struct worker_pass {
    bool used = false;
    chunk_partial flags;
    std::vector<bin_accumulator> bins, over;
  };
  std::vector<std::vector<worker_pass>> per_worker(n_workers, std::vector<worker_pass>(n_passes));
  std::atomic<std::uint64_t> next{0};
  std::atomic<bool> abandoned{false};
  std::exception_ptr failure;
  std::mutex failure_mutex;

  auto work = [&](int w) {
    try {
      std::vector<double> est(max_tile), var(max_tile);
      cpu_detail::array_workspace<D> buffers;  // used by array integrands only
      std::size_t i = 0;  // the pass of the current unit (units are claimed in increasing order)
      for (std::uint64_t u = next++; u < n_units; u = next++) {
        if (stop != nullptr && stop->requested()) {  // abandon the pass: no further tile
          abandoned = true;
          next = n_units;
          break;
        }
        while (u >= plan[i].first_unit + plan[i].n_tiles) ++i;
        const pass_plan& pl = plan[i];
        const cpu_pass<D>& ps = passes[i];
        worker_pass& wp = per_worker[w][i];
        if (!wp.used) {
          wp.used = true;
          wp.bins.assign(pl.n_bin_values, bin_accumulator{});
        }
        const std::uint64_t t = pl.first_tile + (u - pl.first_unit);
        const std::uint64_t first = t * pl.tile;
        const std::uint64_t count = std::min(pl.tile, pl.n_sel - first);
        bin_array_sink sink{wp.bins.data(), ps.map.n_bins, &wp.over, pl.n_bin_values};
        no_bins none;
        const cpu_detail::pass_integrand<D>& f = integrands[i];
        const sampling_params<D>& sp = *ps.sp;
        const bool serial = serial_sampler;
        if (!serial && f.array()) {  // an array integrand: its points evaluated in slices (same bits)
          f.array_tile(f, sp, ps.map, *pl.tables, first, count, ps.stride, ps.adapt, est.data(), var.data(), wp.flags,
                       sink, buffers, stop);
        } else if (!serial && sp.counts.per_cube()) {  // VEGAS+ counts: their fast path (the same bits)
          if (ps.adapt)
            cpu_detail::sample_chunks_counts<D>(f, sp, ps.map, first, count, ps.stride, est.data(), var.data(), wp.flags,
                                                sink, stop);
          else
            cpu_detail::sample_chunks_counts<D>(f, sp, ps.map, first, count, ps.stride, est.data(), var.data(), wp.flags,
                                                none, stop);
        } else if (ps.stride == 1 && !serial) {  // the batched fast path (same bits)
          if (ps.adapt)
            cpu_detail::sample_chunks<D>(f, sp, ps.map, *pl.tables, first, count, est.data(), var.data(), wp.flags,
                                         sink, stop);
          else
            cpu_detail::sample_chunks<D>(f, sp, ps.map, *pl.tables, first, count, est.data(), var.data(), wp.flags,
                                         none, stop);
        } else {
          for (std::uint64_t c = 0; c < count; ++c) {
            if (stop != nullptr && stop->requested()) break;  // abandoned below
            const std::uint64_t chunk = (first + c) * ps.stride;
            if (!serial) {  // the probe's chunks one at a time on the fast path (same bits)
              if (ps.adapt)
                cpu_detail::sample_chunks<D>(f, sp, ps.map, *pl.tables, chunk, 1, est.data() + c, var.data() + c,
                                             wp.flags, sink, stop);
              else
                cpu_detail::sample_chunks<D>(f, sp, ps.map, *pl.tables, chunk, 1, est.data() + c, var.data() + c,
                                             wp.flags, none, stop);
              continue;
            }
            // a stop is looked at every 64 samples inside the chunk too (VEGAS+ sub-cubes may hold
            // billions at large budgets); an abandoned chunk's partial is discarded below
            const cpu_detail::stop_poll poll{stop};
            const vegas_stream_uniforms uni{sp.seed, sp.iteration};
            const chunk_partial part = ps.adapt ? sample_chunk<D>(f, sp, ps.map, chunk, sink, uni, poll)
                                                : sample_chunk<D>(f, sp, ps.map, chunk, none, uni, poll);
            est[c] = part.estimate;
            var[c] = part.variance;
            merge_flags(wp.flags, part);
          }
        }
        if (stop != nullptr && stop->requested()) {  // during the tile: its sums may be incomplete
          abandoned = true;
          next = n_units;
          break;
        }
        tile_est[u] = pairwise_sum(est.data(), count, pl.tile);
        tile_var[u] = pairwise_sum(var.data(), count, pl.tile);
      }
    } catch (...) {
      std::lock_guard<std::mutex> lock(failure_mutex);
      if (!failure) failure = std::current_exception();
      next = n_units;  // stop the other workers early
    }
  };
  pool_->run(n_workers, work);
  if (splits(team)) {  // the parts' sums and flags, then the integer bins, exchanged (backend/team.hpp)
    std::vector<unsigned char> payload;
    for (std::size_t i = 0; i < n_passes && !failure && !abandoned; ++i) {
      const pass_plan& pl = plan[i];
      chunk_partial flags;
      for (const auto& pw : per_worker) merge_flags(flags, pw[i].flags);
      const std::uint64_t tiles_per_part = pl.split.part_chunks / pl.tile;
      put_team_pass(payload, flags, pl.split, [&](std::uint64_t p, double& est, double& var) {
        const std::uint64_t t0 = p * tiles_per_part - pl.first_tile;  // this rank's tiles are whole parts
        const std::uint64_t nt = std::min(tiles_per_part, pl.n_tiles - t0);
        est = pairwise_sum(tile_est.data() + pl.first_unit + t0, nt, tiles_per_part);
        var = pairwise_sum(tile_var.data() + pl.first_unit + t0, nt, tiles_per_part);
      });
    }
    const auto all = team_exchange(*team, failure, abandoned, payload);
    std::vector<iteration_sums> out(n_passes);
    std::vector<std::size_t> at(all.size(), 0);
    for (std::size_t i = 0; i < n_passes; ++i) out[i] = take_team_pass(*team, all, at, plan[i].split);
    std::vector<bin_accumulator> bins;  // every adapting pass's bins at the team's top level, then their sum
    for (std::size_t i = 0; i < n_passes; ++i) {
      if (!passes[i].adapt) continue;
      const std::size_t nv = plan[i].n_bin_values, first = bins.size();
      out[i].top_level = top_bin_level(out[i].flags.max_contribution, passes[i].sp->bin_scale);
      bins.resize(first + (static_cast<std::size_t>(out[i].top_level) + 1) * nv);
      for (const auto& pw : per_worker) {
        const worker_pass& wp = pw[i];
        if (!wp.used) continue;
        for (std::size_t b = 0; b < nv; ++b) bins[first + b].add(wp.bins[b]);
        if (!wp.over.empty())
          for (std::size_t b = nv; first + b < bins.size(); ++b) bins[first + b].add(wp.over[b - nv]);
      }
    }
    if (!bins.empty()) team_sum_bins(*team, bins);
    for (std::size_t i = 0, first = 0; i < n_passes; ++i) {
      if (!passes[i].adapt) continue;
      const std::size_t n = (static_cast<std::size_t>(out[i].top_level) + 1) * plan[i].n_bin_values;
      out[i].bins.assign(bins.begin() + static_cast<std::ptrdiff_t>(first), bins.begin() + static_cast<std::ptrdiff_t>(first + n));
      first += n;
    }
    return out;
  }
  if (failure) std::rethrow_exception(failure);
  if (abandoned) throw pass_abandoned();

  std::vector<iteration_sums> out(n_passes);
  for (std::size_t i = 0; i < n_passes; ++i) {
    const pass_plan& pl = plan[i];
    iteration_sums& o = out[i];
    o.estimate = pairwise_sum(tile_est.data() + pl.first_unit, pl.n_tiles, pl.width / pl.tile);
    o.variance = pairwise_sum(tile_var.data() + pl.first_unit, pl.n_tiles, pl.width / pl.tile);
    for (const auto& pw : per_worker) merge_flags(o.flags, pw[i].flags);
    if (passes[i].adapt) {
      const std::size_t nv = pl.n_bin_values;
      o.top_level = top_bin_level(o.flags.max_contribution, passes[i].sp->bin_scale);
      o.bins.assign((static_cast<std::size_t>(o.top_level) + 1) * nv, bin_accumulator{});
      for (const auto& pw : per_worker) {
        const worker_pass& wp = pw[i];
        if (!wp.used) continue;
        for (std::size_t b = 0; b < nv; ++b) o.bins[b].add(wp.bins[b]);
        if (!wp.over.empty())  // levels 1..top_level of the workers that have any
          for (std::size_t b = nv; b < o.bins.size(); ++b) o.bins[b].add(wp.over[b - nv]);
      }
    }
  }
  return out;
}

}  // namespace mcubes

#pragma once
/// @file backend/cpu/array_path.hpp
/// The array path of the CPU backend (backend/cpu.hpp): the Vegas pass for an *array integrand*
/// (integrand.hpp, is_array_integrand_v), one that evaluates many points in one call, such as a
/// NumPy function called from the Python module. Per tile of chunks, slice by slice:
///  1. the points of up to array_slice_samples consecutive samples, their jacobians and bins, are
///     generated into the worker's buffers in sample-index order by the fast path's generator
///     (fast_path.hpp, batch_generator: bitwise make_sample's points);
///  2. f is called once for the slice: f(x, n, values) with x row-major (n, D);
///  3. the values are accumulated in sample-index order by the fast path's accumulator
///     (sample_accumulator: per sub-cube s1, s2, the flags and the bin terms of sample_chunk).
/// Hence an array integrand gives bitwise the result of the scalar functor that computes the same
/// values (tests/integrand/test_array_integrand.cpp), for any number of threads and any slice size.
/// A pass with VEGAS+ counts does the same over counts_batches' samples (sample_chunks_counts_array):
/// VEGAS+ for array integrands, bitwise the one-point calls.
///
/// Tiles: an array integrand's tiles hold tile_chunks() chunks, enough for one call of about
/// array_slice_samples samples (a call from the CPU backend into Python costs microseconds, so it
/// must carry thousands of points). A tile is an aligned node of the one pairwise tree of the
/// pass (core/fixed_tree.hpp), whatever its power-of-two size, so the sums are those of the
/// 1024-chunk tiles of scalar integrands, bit for bit.
///
/// Threads: every worker runs this path on its own tiles; the integrand's array call may be made
/// from several threads at once (an integrand that needs a lock, e.g. Python's GIL, takes it in its
/// call: point generation and accumulation run outside it). Memory per worker: about
/// array_slice_samples x (12 D + 16) bytes (3.5 MiB for D = 8), besides the integrand's own.

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <type_traits>
#include <utility>
#include <vector>

#include "../../core/sampler.hpp"
#include "../../integrand.hpp"
#include "fast_path.hpp"

namespace mcubes {
namespace cpu_detail {

/// Samples per call of an array integrand (at most, and at least one chunk's samples when a chunk
/// holds more: then a call covers one chunk at a time). A multiple of the fast path's batch.
inline constexpr std::uint64_t array_slice_samples = array_call_points;

/// Chunks per CPU tile for chunks of `chunk_samples` samples: 1024 for a scalar integrand
/// (backend/cpu.hpp); for an array integrand (`array`), the largest power of two whose
/// chunks hold at most array_slice_samples samples, and at least 1024. The caller caps it at the
/// pass's tree width. Never changes a result (file comment).
constexpr std::uint64_t tile_chunks(bool array, std::uint64_t chunk_samples) {
  std::uint64_t t = 1024;
  if (array)
    while (chunk_samples > 0 && 2 * t * chunk_samples <= array_slice_samples) t *= 2;
  return t;
}
/// tile_chunks for integrand type F (is_array_integrand_v<F, D>).
template <int D, class F>
constexpr std::uint64_t tile_chunks(std::uint64_t chunk_samples) {
  return tile_chunks(is_array_integrand_v<F, D>, chunk_samples);
}

/// A worker's buffers for the array path (empty until the first array tile). Row i of a slice: the
/// point x[i], its jacobian jac[i], its bins bins[i * D + j] and f's value values[i].
template <int D>
struct array_workspace {
  std::vector<point<D>> x;
  std::vector<double> jac, values;
  std::vector<int> bins;
  /// A run of consecutive rows of one chunk run: its run number, its first row and sample index.
  struct segment {
    std::uint64_t run;
    std::size_t row, n;
    std::uint64_t index;
  };
  std::vector<segment> segments;
  /// VEGAS+ passes (sample_chunks_counts_array): row i's sample index, sub-cube, its count and ends.
  std::vector<std::uint64_t> index, cube;
  std::vector<double> pd;
  std::vector<unsigned char> ends;
};

/// The Vegas pass with VEGAS+ counts (sp.counts.per_cube()) over chunks (first + c) stride, c <
/// count, for an array integrand: the samples of counts_batches (fast_path.hpp: bitwise
/// sample_cubes' points, sub-cube by sub-cube) are stored row by row in sample-index order, f is
/// called once per slice of up to array_slice_samples rows, and the values are added in row order
/// by counts_sums (the segment rule, finish_cube, the bin terms): bitwise sample_chunks_counts
/// with the one-point calls, i.e. sample_chunk chunk by chunk. `stop` is looked at before each
/// batch of 64 samples (the sums are then incomplete: the caller abandons the pass).
/// @throws whatever f throws (the pass stops there).
template <int D, class Bins>
void sample_chunks_counts_array(const pass_integrand<D>& f, const sampling_params<D>& sp, const map_view<D>& map, std::uint64_t first,
                                std::uint64_t count, std::uint64_t stride, double* est, double* var, chunk_partial& flags,
                                Bins& bins, array_workspace<D>& ws, const stop_request* stop) {
  static_assert(array_slice_samples % batch == 0, "the slice must hold whole batches");
  const std::size_t cap = static_cast<std::size_t>(array_slice_samples);
  if (ws.x.size() < cap) {
    ws.x.resize(cap);
    ws.jac.resize(cap);
    ws.values.resize(cap);
  }
  if (Bins::enabled && ws.bins.size() < cap * D) ws.bins.resize(cap * D);
  if (ws.index.size() < cap) {
    ws.index.resize(cap);
    ws.cube.resize(cap);
    ws.pd.resize(cap);
    ws.ends.resize(cap);
  }
  counts_sums<D, Bins> sums{sp, est, var, flags, bins};
  std::size_t rows = 0;
  const auto flush = [&] {  // one call for the slice, then its sums in row (= sample-index) order
    if (rows == 0) return;
    f(ws.x.data(), rows, ws.values.data());
    for (std::size_t r = 0; r < rows; ++r)
      sums.add(ws.values[r], ws.jac[r], ws.index[r], ws.pd[r], ws.cube[r], ws.ends[r],
               [&](int j) { return Bins::enabled ? ws.bins[r * D + static_cast<std::size_t>(j)] : 0; });
    sums.flush();
    rows = 0;
  };
  const bool whole = counts_batches<D>(sp, map, first, count, stride, stop, [&](const counts_batch<D>& b) {
    for (int i = 0; i < b.n; ++i, ++rows) {
      ws.x[rows] = b.xs[i];
      ws.jac[rows] = b.jac[i];
      ws.index[rows] = b.index[i];
      ws.cube[rows] = b.cube_of[i];
      ws.pd[rows] = b.pd_of[i];
      ws.ends[rows] = b.ends[i];
      if constexpr (Bins::enabled)
        for (int j = 0; j < D; ++j) ws.bins[rows * D + static_cast<std::size_t>(j)] = b.bin[j][i];
    }
    if (rows + batch > cap) flush();
  });
  if (whole) flush();
}

/// The Vegas pass over chunks first*stride, (first+1)*stride, ..., (first+count-1)*stride for an
/// array integrand (file comment): stores chunk c's estimate and variance in est[c - first] and
/// var[c - first] (index c / stride - first for stride > 1), merges the flags into `flags` and adds
/// the bin terms to `bins`, bitwise as sample_chunk (core/sampler.hpp) does chunk by chunk.
/// @throws whatever f throws (the pass stops there).
template <int D, class Bins>
void sample_chunks_array(const pass_integrand<D>& f, const sampling_params<D>& sp, const map_view<D>& map,
                         const coordinate_tables<D>& tables, std::uint64_t first, std::uint64_t count,
                         std::uint64_t stride, double* est, double* var, chunk_partial& flags, Bins& bins,
                         array_workspace<D>& ws) {
  static_assert(array_slice_samples % batch == 0, "the slice must hold whole batches");
  const std::uint64_t n_runs = stride == 1 ? 1 : count;  // stride 1: one run of consecutive chunks
  const auto run_cubes = [&](std::uint64_t r, std::uint64_t& begin, std::uint64_t& end) {
    const std::uint64_t c0 = stride == 1 ? first : (first + r) * stride;
    const std::uint64_t c1 = stride == 1 ? first + count : c0 + 1;
    begin = c0 * sp.chunk_cubes;
    end = std::min(c1 * sp.chunk_cubes, sp.n_cubes);
  };
  for (std::uint64_t c = 0; c < count; ++c) est[c] = var[c] = 0;
  const std::size_t cap = static_cast<std::size_t>(array_slice_samples) + batch;  // + scratch rows of a batch
  if (ws.x.size() < cap) {
    ws.x.resize(cap);
    ws.jac.resize(cap);
    ws.values.resize(cap);
    if (Bins::enabled) ws.bins.resize(cap * D);
  }
  if (Bins::enabled && ws.bins.size() < cap * D) ws.bins.resize(cap * D);

  std::optional<batch_generator<D>> gen;
  std::optional<sample_accumulator<D>> acc;
  std::uint64_t next_run = 0, gen_run = 0, acc_run = 0;
  int bin[D][batch];
  for (;;) {
    // 1. the points of the slice, run after run, in sample-index order
    std::size_t filled = 0;
    ws.segments.clear();
    while (filled + batch <= array_slice_samples) {
      if (!gen || gen->remaining() == 0) {
        if (next_run == n_runs) break;
        std::uint64_t b, e;
        run_cubes(next_run, b, e);
        gen_run = next_run++;
        gen.emplace(sp, map, tables, b, e);
        continue;
      }
      const std::uint64_t index = gen->index();
      const int n = gen->next(ws.x.data() + filled, ws.jac.data() + filled, bin);
      if constexpr (Bins::enabled)
        for (int i = 0; i < n; ++i)
          for (int j = 0; j < D; ++j) ws.bins[(filled + static_cast<std::size_t>(i)) * D + j] = bin[j][i];
      if (!ws.segments.empty() && ws.segments.back().run == gen_run)
        ws.segments.back().n += static_cast<std::size_t>(n);
      else
        ws.segments.push_back({gen_run, filled, static_cast<std::size_t>(n), index});
      filled += static_cast<std::size_t>(n);
    }
    if (filled == 0) return;
    // 2. one call for the slice
    f(ws.x.data(), filled, ws.values.data());
    // 3. the sums, in sample-index order
    for (const auto& s : ws.segments) {
      if (!acc || acc_run != s.run) {
        std::uint64_t b, e;
        run_cubes(s.run, b, e);
        const std::uint64_t slot = stride == 1 ? 0 : s.run;
        acc.emplace(sample_accumulator<D>{sp, est + slot, var + slot, flags, e * sp.p});
        acc_run = s.run;
      }
      for (std::size_t r = s.row; r < s.row + s.n; ++r)
        acc->add(ws.values[r], ws.jac[r], s.index + (r - s.row), bins,
                 [&](int j) { return ws.bins[r * D + static_cast<std::size_t>(j)]; });
    }
  }
}

/// The array path of a tile (pass_integrand::array_tile, called by cpu_backend::sample_cpu_passes for
/// an array integrand): sample_chunks_counts_array for a pass with VEGAS+ counts (`stop` looked at
/// every 64 samples), sample_chunks_array on the uniform grid; V-Sample into `sink` when `adapt`,
/// No-Adjust otherwise.
template <int D>
void sample_tile_array(const pass_integrand<D>& f, const sampling_params<D>& sp, const map_view<D>& map,
                       const coordinate_tables<D>& tables, std::uint64_t first, std::uint64_t count,
                       std::uint64_t stride, bool adapt, double* est, double* var, chunk_partial& flags,
                       bin_array_sink& sink, array_workspace<D>& ws, const stop_request* stop) {
  const auto run = [&](auto& bins) {
    if (sp.counts.per_cube())  // VEGAS+ counts
      sample_chunks_counts_array<D>(f, sp, map, first, count, stride, est, var, flags, bins, ws, stop);
    else
      sample_chunks_array<D>(f, sp, map, tables, first, count, stride, est, var, flags, bins, ws);
  };
  no_bins none;
  if (adapt)
    run(sink);
  else
    run(none);
}

template <class F, int D, class = void>
struct points_call : std::false_type {};
template <class F, int D>
struct points_call<F, D, std::void_t<decltype(std::declval<const F&>()(std::declval<const point<D>*>(), std::size_t{},
                                                                    std::declval<double*>()))>> : std::true_type {};
/// True if F (not an array integrand) also has the points call f(const point<D>* xs, n, values),
/// values[i] = f(xs[i]) bitwise: pass_integrand::points then calls it once per batch of samples
/// (an integrand reached through a function pointer, as the run-time compiled ones,
/// jit/object_run_impl.hpp, or a batch member of one, core/batch.hpp with_parameters).
template <class F, int D>
inline constexpr bool has_points_call_v = points_call<F, D>::value;

/// The pass_integrand of f (an integrand of dimension D, integrand.hpp); f must outlive it. For an
/// array integrand (is_array_integrand_v) its array form and the array path (sample_tile_array);
/// for an integrand with the points call (has_points_call_v), that call.
template <int D, class F>
pass_integrand<D> pass_integrand_of(const F& f) {
  pass_integrand<D> r;
  r.f = &f;
  r.one = [](const void* p, const point<D>& x) -> double { return (*static_cast<const F*>(p))(x); };
  if constexpr (is_array_integrand_v<F, D>) {
    r.array_tile = &sample_tile_array<D>;
    r.points = [](const void* p, const point<D>* xs, std::size_t n, double* values) {
      (*static_cast<const F*>(p))(xs->x, n, values);
    };
  } else if constexpr (has_points_call_v<F, D>) {
    r.points = [](const void* p, const point<D>* xs, std::size_t n, double* values) {
      (*static_cast<const F*>(p))(xs, n, values);
    };
  } else {
    r.points = [](const void* p, const point<D>* xs, std::size_t n, double* values) {
      const F& g = *static_cast<const F*>(p);
      for (std::size_t i = 0; i < n; ++i) values[i] = g(xs[i]);
    };
  }
  return r;
}

}  // namespace cpu_detail
}  // namespace mcubes

#pragma once
/// @file backend/cpu/vector_pass.hpp
/// One Vegas pass of a vector-valued integrand on CPU threads (cpu_backend::sample_passes of a vector integrand): the
/// tile scheme of backend/cpu.hpp over the chunk partials of core/vector_sampler.hpp, i.e. N
/// estimates and the N (N + 1) / 2 covariance sums per chunk, merged element by element over the
/// same fixed pairwise tree as the scalar path (tiles of T chunks, T a power of two <= min(1024, P),
/// P the padded width; within a tile a binary counter over the chunk partials padded with zero
/// leaves to the tile's width, which is that tree's tile node; then the tree over the tile nodes).
/// Every aligned power-of-two group of leaves is a node of the tree, so T changes no bit: it is
/// halved (down to 16) until there are at least 4 tiles per thread, since vector chunks are few
/// (core/vector_sampler.hpp: vector_chunk_samples), except for array integrands, whose calls of f
/// stay as large as before. Deterministic for any thread count; a
/// one-component integrand's estimate and variance are bitwise those of the scalar pass.
///
/// Vector-valued array integrands (integrand.hpp: array_integrand = true, values row-major (n, N);
/// e.g. a NumPy function of the Python module): within a tile, per group of consecutive chunks of
/// at most array_call_points samples (at least one chunk), the points are written to the worker's
/// buffer in sample order (sample_chunk_vector with core/array_rows.hpp's point_writer), f is
/// called once for the group, and the chunk partials are computed from its values
/// (vector_value_reader): the same partials, bit for bit, as the one-point calls.

#include <algorithm>
#include <atomic>
#include <cstdint>
#include <exception>
#include <mutex>
#include <thread>
#include <vector>

#include "../../core/array_rows.hpp"
#include "../../core/fixed_tree.hpp"
#include "../../core/sampler.hpp"
#include "../../core/stratification.hpp"
#include "../../core/vector_pass_sums.hpp"
#include "../../core/vector_sampler.hpp"
#include "../../integrand.hpp"
#include "../worker_pool.hpp"
#include "fast_path.hpp"

namespace mcubes {

namespace cpu_detail {

/// The fixed pairwise tree over leaves of M doubles that arrive in order, with zero leaves padding
/// the count to `width` (a power of two) on finish(): bitwise fixed_tree_reduce over the padded
/// leaves with element-wise addition (left + right).
class vector_tree {
 public:
  vector_tree(int m, std::uint64_t width) : m_(m), width_(width), zero_(m, 0.0) {
    int levels = 1;
    while ((std::uint64_t(1) << (levels - 1)) < width) ++levels;
    stack_.assign(static_cast<std::size_t>(levels + 1) * m, 0.0);
    level_.assign(levels + 1, 0);
  }
  /// Appends the next leaf (m doubles).
  void push(const double* leaf) {
    double* top = stack_.data() + size_ * m_;
    std::copy(leaf, leaf + m_, top);
    int level = 0;
    while (size_ > 0 && level_[size_ - 1] == level) {  // merge with the left subtree of the same size
      double* left = top - m_;
      for (int i = 0; i < m_; ++i) left[i] = left[i] + top[i];
      top = left;
      --size_;
      ++level;
    }
    level_[size_] = level;
    ++size_;
    ++count_;
  }
  /// Pads with zero leaves to the width and returns the root.
  std::vector<double> finish() {
    while (count_ < width_) push(zero_.data());
    if (size_ == 0) return zero_;
    return std::vector<double>(stack_.begin(), stack_.begin() + m_);
  }

 private:
  int m_;
  std::uint64_t width_, count_ = 0;
  std::vector<double> zero_, stack_;  // stack_: size_ subtree roots of m doubles, in leaf order
  std::vector<int> level_;
  int size_ = 0;
};

}  // namespace cpu_detail

/// V-Sample (adapt) or No-Adjust of the vector-valued integrand f (values<N>) over chunks
/// 0, stride, 2 stride, ... on up to `threads` workers of `pool` (see the file comment).
/// @throws the first exception the integrand throws.
template <int D, int N, class F>
vector_pass_sums cpu_sample_vector(int threads, worker_pool& pool, const F& f, const sampling_params<D>& sp, const stratification& st,
                                   const map_view<D>& map, bool adapt, std::uint64_t stride) {
  constexpr int M = vector_partial_size<N>;
  const std::uint64_t n_sel = (st.n_chunks + stride - 1) / stride;
  const std::uint64_t width = next_pow2(n_sel);
  std::uint64_t tile = std::min<std::uint64_t>(1024, width);
  if constexpr (!is_array_integrand_v<F, D>)  // array integrands: one call of f per tile at most, keep them large
    while (tile > 16 && (n_sel + tile - 1) / tile < 4 * static_cast<std::uint64_t>(threads)) tile /= 2;
  const std::uint64_t n_tiles = (n_sel + tile - 1) / tile;
  const std::size_t n_bin_values = adapt ? static_cast<std::size_t>(D) * map.n_bins : 0;
  const int n_workers = static_cast<int>(std::min<std::uint64_t>(threads, n_tiles));
  std::vector<std::vector<double>> tile_sums(n_tiles);
  std::vector<chunk_partial> worker_flags(n_workers);
  std::vector<std::vector<bin_accumulator>> worker_bins(n_workers), worker_over(n_workers);
  std::atomic<std::uint64_t> next{0};
  std::exception_ptr failure;
  std::mutex failure_mutex;
  const vegas_stream_uniforms uni{sp.seed, sp.iteration};

  auto work = [&](int w) {
    try {
      worker_bins[w].assign(n_bin_values, bin_accumulator{});
      bin_array_sink sink{worker_bins[w].data(), map.n_bins, &worker_over[w], n_bin_values};
      no_bins none;
      double part[M];
      std::vector<double> xs, vs;  // array integrands: the points and values of a group of chunks
      std::vector<std::uint64_t> cube_rows;  // and with VEGAS+ counts, the rows of its sub-cubes
      for (std::uint64_t t = next++; t < n_tiles; t = next++) {
        cpu_detail::vector_tree tree(M, tile);
        const std::uint64_t first = t * tile;
        const std::uint64_t count = std::min(tile, n_sel - first);
        if constexpr (is_array_integrand_v<F, D>) {
          detail::array_rows rows;
          rows.stride = stride;
          rows.chunk_samples = sp.chunk_cubes * sp.p;
          sampling_params<D> sp_points = sp;  // the point writer's pass writes no shares (the reader's does)
          sp_points.counts.share_out = nullptr;
          // the points of selected chunks [sel0, sel1) (n rows), one call of f, the chunk partials from its values
          const auto group_pass = [&](std::uint64_t sel0, std::uint64_t sel1, std::uint64_t n) {
            rows.sel0 = sel0;
            rows.sel1 = sel1;
            rows.first_sample = rows.sel0 * stride * rows.chunk_samples;
            if (xs.size() < n * D) xs.resize(n * D);
            if (vs.size() < n * N) vs.resize(n * N);
            for (std::uint64_t sel = rows.sel0; sel < rows.sel1; ++sel)
              (void)sample_chunk_vector<D, N>(detail::point_writer<D, values<N>>{xs.data(), rows}, sp_points, map, sel * stride,
                                              none, uni, part);
            f(xs.data(), static_cast<std::size_t>(n), vs.data());
            const detail::vector_value_reader<D, N> reader{vs.data(), rows};
            for (std::uint64_t sel = rows.sel0; sel < rows.sel1; ++sel) {
              for (int k = 0; k < M; ++k) part[k] = 0;
              const chunk_partial fl = adapt ? sample_chunk_vector<D, N>(reader, sp, map, sel * stride, sink, uni, part)
                                             : sample_chunk_vector<D, N>(reader, sp, map, sel * stride, none, uni, part);
              merge_flags(worker_flags[w], fl);
              tree.push(part);
            }
          };
          if (sp.counts.per_cube()) {  // VEGAS+ counts: groups of whole chunks of at most array_call_points rows (at least one chunk)
            rows.p = sp.p;
            rows.chunk_cubes = sp.chunk_cubes;
            std::vector<std::uint64_t> counts(static_cast<std::size_t>(sp.chunk_cubes));
            for (std::uint64_t i = 0; i < count;) {
              // chunks [i, j): the rows of their sub-cubes (exclusive sums of the counts) as they are added
              std::uint64_t j = i, n = 0;
              cube_rows.clear();
              for (; j < count; ++j) {
                std::uint64_t c_rows = 0;
                for (std::uint64_t o = 0; o < sp.chunk_cubes; ++o)
                  c_rows += counts[o] = detail::selected_cube_count<D>(sp, stride, first + j, o);
                if (j > i && n + c_rows > array_call_points) break;
                for (std::uint64_t o = 0; o < sp.chunk_cubes; ++o) {
                  cube_rows.push_back(n);
                  n += counts[o];
                }
              }
              cube_rows.push_back(n);
              rows.cube_row = cube_rows.data();
              rows.sel_base = first + i;
              rows.first_row = 0;
              group_pass(first + i, first + j, n);
              i = j;
            }
          } else {
            const std::uint64_t group = std::max<std::uint64_t>(1, array_call_points / rows.chunk_samples);
            for (std::uint64_t i = 0; i < count; i += group) {
              rows.sel0 = first + i;
              rows.sel1 = first + std::min(count, i + group);
              group_pass(rows.sel0, rows.sel1, detail::array_row_count(sp, rows));
            }
          }
        } else {
          for (std::uint64_t i = 0; i < count; ++i) {
            for (int k = 0; k < M; ++k) part[k] = 0;
            const std::uint64_t chunk = (first + i) * stride;
            const chunk_partial fl = adapt ? sample_chunk_vector<D, N>(f, sp, map, chunk, sink, uni, part)
                                           : sample_chunk_vector<D, N>(f, sp, map, chunk, none, uni, part);
            merge_flags(worker_flags[w], fl);
            tree.push(part);
          }
        }
        tile_sums[t] = tree.finish();
      }
    } catch (...) {
      std::lock_guard<std::mutex> lock(failure_mutex);
      if (!failure) failure = std::current_exception();
      next = n_tiles;
    }
  };
  pool.run(n_workers, work);
  if (failure) std::rethrow_exception(failure);

  vector_pass_sums out;
  cpu_detail::vector_tree top(M, width / tile);
  for (const auto& s : tile_sums) top.push(s.data());
  out.sums = top.finish();
  iteration_sums& o = out.scalar;
  o.estimate = out.sums[0];
  o.variance = out.sums[N];
  for (const auto& fl : worker_flags) merge_flags(o.flags, fl);
  if (adapt) {
    o.top_level = top_bin_level(o.flags.max_contribution, sp.bin_scale);
    o.bins.assign((static_cast<std::size_t>(o.top_level) + 1) * n_bin_values, bin_accumulator{});
    for (const auto& wb : worker_bins)
      for (std::size_t i = 0; i < n_bin_values; ++i) o.bins[i].add(wb[i]);
    for (const auto& wo : worker_over)
      if (!wo.empty())
        for (std::size_t i = n_bin_values; i < o.bins.size(); ++i) o.bins[i].add(wo[i - n_bin_values]);
  }
  return out;
}

}  // namespace mcubes

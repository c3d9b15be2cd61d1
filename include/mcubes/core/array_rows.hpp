#pragma once
/// @file core/array_rows.hpp
/// The bookkeeping of the CUDA backend's array path (backend/cuda/array_path.cuh), host and device
/// code: where each sample of a slice of chunks goes in the slice's row-major point buffer, and the
/// two sample-indexed functors (core/sampler.hpp, sample_value) that run through the V-Sample
/// kernels: point_writer stores each sample's point at its row, value_reader gives back the value
/// the integrand computed there. Tested on the CPU with sample_chunk (tests/unit/test_array_rows.cpp).
/// The CPU backend's vector pass uses the same rows for vector-valued array integrands
/// (backend/cpu/vector_pass.hpp: point_writer<D, values<N>>, vector_value_reader).

#include <algorithm>
#include <cstdint>

#include "../config.hpp"
#include "../point.hpp"
#include "../values.hpp"
#include "sampler.hpp"

namespace mcubes {
namespace detail {

/// Where the samples of a slice go: selected chunks sel0 .. sel1 - 1 (chunk sel * stride each);
/// row of a sample = its position in the slice's chunks in chunk order, then sub-cube order, then
/// sample order.
/// - The uniform grid (cube_row null): every sub-cube holds p samples, a chunk chunk_samples =
///   chunk_cubes * p; only the pass's last chunk may hold fewer samples (the last rows).
/// - VEGAS+ counts (core/cube_counts.hpp; sample indices c * p + k, k < n_c, p the index stride):
///   cube_row[o] is the row of the first sample of the o-th selected sub-cube counted from chunk
///   sel_base * stride (o = (sel - sel_base) * chunk_cubes + the sub-cube's place in its chunk;
///   the exclusive sums of n_c over them, sub-cubes past the last, m, counting 0), minus first_row.
///   Memory: one 64-bit word per selected sub-cube (the CPU's vector pass: per group of chunks;
///   the CUDA array path: per pass, backend/cuda/array_path.cuh).
struct array_rows {
  std::uint64_t sel0 = 0, sel1 = 0;   ///< the slice's selected chunks [sel0, sel1)
  std::uint64_t stride = 1;           ///< chunk = sel * stride
  std::uint64_t chunk_samples = 0;    ///< chunk_cubes * p
  std::uint64_t first_sample = 0;     ///< sel0 * stride * chunk_samples
  const std::uint64_t* cube_row = nullptr;  ///< VEGAS+ counts: the rows of the sub-cubes (null: uniform)
  std::uint64_t sel_base = 0;         ///< cube_row's first selected chunk
  std::uint64_t first_row = 0;        ///< cube_row's value at the slice's first sub-cube
  std::uint64_t p = 1;                ///< the sample index stride of a sub-cube (sampling_params::p)
  std::uint64_t chunk_cubes = 1;      ///< sub-cubes per chunk
  MCUBES_HOST_DEVICE std::uint64_t row(std::uint64_t index) const {
    if (cube_row != nullptr) {
      const std::uint64_t c = index / p, chunk = c / chunk_cubes;
      const std::uint64_t o = (chunk / stride - sel_base) * chunk_cubes + (c - chunk * chunk_cubes);
      return cube_row[o] - first_row + (index - c * p);
    }
    if (stride == 1) return index - first_sample;
    const std::uint64_t chunk = index / chunk_samples;
    return (chunk / stride - sel0) * chunk_samples + (index - chunk * chunk_samples);
  }
};

/// Rows of the slice: the samples of its chunks (the pass's last chunk may be short). Uniform grid
/// only (with counts: the difference of cube_row at the slice's ends).
template <int D>
std::uint64_t array_row_count(const sampling_params<D>& sp, const array_rows& r) {
  if (r.sel1 <= r.sel0) return 0;
  const std::uint64_t last = (r.sel1 - 1) * r.stride;                // the slice's last chunk
  const std::uint64_t last_end = std::min((last + 1) * sp.chunk_cubes, sp.n_cubes);
  return (r.sel1 - 1 - r.sel0) * r.chunk_samples + (last_end - last * sp.chunk_cubes) * sp.p;
}

/// The samples of the o-th selected sub-cube from chunk sel_base * stride (array_rows): n_c of
/// sp.counts, 0 past the last sub-cube.
template <int D>
MCUBES_HOST_DEVICE std::uint64_t selected_cube_count(const sampling_params<D>& sp, std::uint64_t stride, std::uint64_t sel_base,
                                                     std::uint64_t o) {
  const std::uint64_t chunk = (sel_base + o / sp.chunk_cubes) * stride;
  const std::uint64_t c = chunk * sp.chunk_cubes + o % sp.chunk_cubes;
  return c < sp.n_cubes ? sp.counts.count(c) : 0;
}

/// Step 1 of the array path (backend/cuda/array_path.cuh): stores the point of each sample at its row of x
/// (row-major (rows, D)); the value it gives the kernel is 0 (the slice's tile sums are rewritten
/// by step 3, the flags and bins of a No-Adjust pass of zeros are untouched).
/// R: the integrand's value type (double, or values<N> for sample_chunk_vector), returned as zero.
template <int D, class R = double>
struct point_writer {
  static constexpr bool sample_indexed = true;
  double* x;
  array_rows rows;
  MCUBES_HOST_DEVICE R at_sample(const point<D>& p, std::uint64_t index) const {
    double* out = x + rows.row(index) * D;
    for (int j = 0; j < D; ++j) out[j] = p[j];
    return R{};
  }
};

/// Step 3 of the array path: the integrand's value of each sample, from its row of values.
template <int D>
struct value_reader {
  static constexpr bool sample_indexed = true;
  const double* values;
  array_rows rows;
  MCUBES_HOST_DEVICE double at_sample(const point<D>&, std::uint64_t index) const { return values[rows.row(index)]; }
};

/// The values of a vector-valued integrand (values<N>) from its rows: row r at data[r*N .. r*N + N).
template <int D, int N>
struct vector_value_reader {
  static constexpr bool sample_indexed = true;
  const double* data;
  array_rows rows;
  MCUBES_HOST_DEVICE values<N> at_sample(const point<D>&, std::uint64_t index) const {
    const double* r = data + rows.row(index) * N;
    values<N> v;
    for (int i = 0; i < N; ++i) v[i] = r[i];
    return v;
  }
};

}  // namespace detail
}  // namespace mcubes

#pragma once
/// @file core/array_rows.hpp
/// The bookkeeping of the CUDA backend's array path (backend/cuda/array_path.cuh), host and device
/// code: where each sample of a slice of chunks goes in the slice's row-major point buffer, and the
/// two sample-indexed functors (core/sampler.hpp, sample_value) that run through the V-Sample
/// kernels: point_writer stores each sample's point at its row, value_reader gives back the value
/// the integrand computed there. Tested on the CPU with sample_chunk (tests/unit/test_array_rows.cpp).

#include <algorithm>
#include <cstdint>

#include "../config.hpp"
#include "../point.hpp"
#include "sampler.hpp"

namespace mcubes {
namespace cuda_detail {

/// Where the samples of a slice go: selected chunks sel0 .. sel1 - 1 (chunk sel * stride each) of
/// chunk_samples = chunk_cubes * p samples; row of a sample = its position in the slice's chunks in
/// chunk order, then sample order. Only the pass's last chunk may hold fewer samples (the last rows).
struct array_rows {
  std::uint64_t sel0 = 0, sel1 = 0;   ///< the slice's selected chunks [sel0, sel1)
  std::uint64_t stride = 1;           ///< chunk = sel * stride
  std::uint64_t chunk_samples = 0;    ///< chunk_cubes * p
  std::uint64_t first_sample = 0;     ///< sel0 * stride * chunk_samples
  MCUBES_HOST_DEVICE std::uint64_t row(std::uint64_t index) const {
    if (stride == 1) return index - first_sample;
    const std::uint64_t chunk = index / chunk_samples;
    return (chunk / stride - sel0) * chunk_samples + (index - chunk * chunk_samples);
  }
};

/// Rows of the slice: the samples of its chunks (the pass's last chunk may be short).
template <int D>
std::uint64_t array_row_count(const sampling_params<D>& sp, const array_rows& r) {
  if (r.sel1 <= r.sel0) return 0;
  const std::uint64_t last = (r.sel1 - 1) * r.stride;                // the slice's last chunk
  const std::uint64_t last_end = std::min((last + 1) * sp.chunk_cubes, sp.n_cubes);
  return (r.sel1 - 1 - r.sel0) * r.chunk_samples + (last_end - last * sp.chunk_cubes) * sp.p;
}

/// Step 1 of the array path (backend/cuda/array_path.cuh): stores the point of each sample at its row of x
/// (row-major (rows, D)); the value it gives the kernel is 0 (the slice's tile sums are rewritten
/// by step 3, the flags and bins of a No-Adjust pass of zeros are untouched).
template <int D>
struct point_writer {
  static constexpr bool sample_indexed = true;
  double* x;
  array_rows rows;
  MCUBES_HOST_DEVICE double at_sample(const point<D>& p, std::uint64_t index) const {
    double* out = x + rows.row(index) * D;
    for (int j = 0; j < D; ++j) out[j] = p[j];
    return 0.0;
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

}  // namespace cuda_detail
}  // namespace mcubes

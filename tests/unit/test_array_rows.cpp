// The bookkeeping of the CUDA backend's array path (core/array_rows.hpp), on the CPU: slices of
// whole tiles of selected chunks, every sample's point written once to its row by point_writer, and
// value_reader's sums bitwise those of the one-point sample_chunk (estimates, variances, flags,
// bins), for strides 1 (every pass) and > 1 (the probe), several tile and slice sizes, and a short
// last chunk. The kernels that run these functors on a GPU are tested in tests/cuda/test_array_cuda.cu.
#include <gtest/gtest.h>

#include <mcubes/backend/cpu/fast_path.hpp>
#include <mcubes/core/adaptive_map.hpp>
#include <mcubes/core/array_rows.hpp>
#include <mcubes/core/sampler.hpp>

#include <cmath>
#include <cstdint>
#include <limits>
#include <vector>

#include "support/bits.hpp"

namespace {

using namespace mcubes;
using detail::array_rows;

constexpr int D = 3;

double value_at(const double* x) { return x[0] < 0.03 && x[1] > 0.9 ? NAN : 1 + x[0] * x[1] - 0.5 * x[2]; }

struct one_point {
  double operator()(const point<D>& x) const { return value_at(x.x); }
};

using mcubes_test::same_bits;

sampling_params<D> params(std::uint64_t g, std::uint64_t p, std::uint64_t chunk_cubes) {
  sampling_params<D> sp;
  for (int j = 0; j < D; ++j) sp.lower[j] = -1.0 + j, sp.width[j] = 2.0 + 0.5 * j;
  sp.g = g;
  sp.inv_g = 1.0 / static_cast<double>(g);
  sp.n_cubes = g * g * g;
  sp.p = p;
  sp.chunk_cubes = chunk_cubes;
  sp.seed = 77;
  sp.iteration = 3;
  sp.bin_scale = 1024.0;
  return sp;
}

// The array path over every slice of `slice_tiles` tiles of B selected chunks, checked against the
// one-point path chunk by chunk.
void check(const sampling_params<D>& sp, std::uint64_t stride, std::uint64_t B, std::uint64_t slice_tiles) {
  SCOPED_TRACE(testing::Message() << "g " << sp.g << ", p " << sp.p << ", chunk " << sp.chunk_cubes << ", stride "
                                  << stride << ", B " << B << ", slice tiles " << slice_tiles);
  const adaptive_map<D> map(7);
  const map_view<D> mv = map.view();
  const vegas_stream_uniforms uni{sp.seed, sp.iteration};
  const std::uint64_t n_chunks = (sp.n_cubes + sp.chunk_cubes - 1) / sp.chunk_cubes;
  const std::uint64_t n_sel = (n_chunks + stride - 1) / stride;
  const std::uint64_t n_tiles = (n_sel + B - 1) / B;
  const std::size_t n_values = static_cast<std::size_t>(D) * 7;
  std::vector<bin_accumulator> ref_bins(n_values), got_bins(n_values);
  std::vector<bin_accumulator> ref_over, got_over;
  bin_array_sink ref_sink{ref_bins.data(), 7, &ref_over, n_values};
  bin_array_sink got_sink{got_bins.data(), 7, &got_over, n_values};
  no_bins none;
  std::uint64_t rows_total = 0;
  for (std::uint64_t t0 = 0; t0 < n_tiles; t0 += slice_tiles) {
    const std::uint64_t t1 = std::min(n_tiles, t0 + slice_tiles);
    array_rows rows;
    rows.stride = stride;
    rows.chunk_samples = sp.chunk_cubes * sp.p;
    rows.sel0 = t0 * B;
    rows.sel1 = std::min(n_sel, t1 * B);
    rows.first_sample = rows.sel0 * stride * rows.chunk_samples;
    const std::uint64_t n = detail::array_row_count(sp, rows);
    const std::size_t cap = static_cast<std::size_t>(slice_tiles * B * rows.chunk_samples);
    ASSERT_LE(n, cap);
    rows_total += n;
    // 1. points: every row below n written once, nothing beyond
    std::vector<double> x(cap * D, std::numeric_limits<double>::quiet_NaN()), values(cap, 0.0);
    for (std::uint64_t sel = rows.sel0; sel < rows.sel1; ++sel) {
      const chunk_partial w = sample_chunk<D>(detail::point_writer<D>{x.data(), rows}, sp, mv, sel * stride, none, uni);
      EXPECT_EQ(w.estimate, 0.0);
      EXPECT_EQ(w.n_nonzero, 0u);
    }
    for (std::size_t i = 0; i < cap * D; ++i) ASSERT_EQ(std::isnan(x[i]), i >= n * D) << "row " << i / D;
    // 2. the integrand on the rows
    for (std::size_t i = 0; i < n; ++i) values[i] = value_at(x.data() + i * D);
    // 3. the sums, chunk by chunk, against the one-point path
    for (std::uint64_t sel = rows.sel0; sel < rows.sel1; ++sel) {
      const chunk_partial a = sample_chunk<D>(one_point{}, sp, mv, sel * stride, ref_sink, uni);
      const chunk_partial b =
          sample_chunk<D>(detail::value_reader<D>{values.data(), rows}, sp, mv, sel * stride, got_sink, uni);
      ASSERT_TRUE(same_bits(a.estimate, b.estimate)) << "chunk " << sel * stride;
      ASSERT_TRUE(same_bits(a.variance, b.variance)) << "chunk " << sel * stride;
      ASSERT_EQ(a.n_nonzero, b.n_nonzero);
      ASSERT_EQ(a.first_non_finite, b.first_non_finite);
      ASSERT_TRUE(same_bits(a.non_finite_value, b.non_finite_value) || (std::isnan(a.non_finite_value) && std::isnan(b.non_finite_value)));
      ASSERT_TRUE(same_bits(a.max_contribution, b.max_contribution));
    }
  }
  std::uint64_t expected = 0;  // the samples of the selected chunks
  for (std::uint64_t sel = 0; sel < n_sel; ++sel) {
    const std::uint64_t c = sel * stride;
    expected += (std::min((c + 1) * sp.chunk_cubes, sp.n_cubes) - c * sp.chunk_cubes) * sp.p;
  }
  EXPECT_EQ(rows_total, expected);
  for (std::size_t i = 0; i < n_values; ++i) {
    EXPECT_EQ(ref_bins[i].lo, got_bins[i].lo) << "bin " << i;
    EXPECT_EQ(ref_bins[i].hi, got_bins[i].hi) << "bin " << i;
  }
}

TEST(ArrayRows, SlicesOfWholeTilesGiveTheOnePointSumsBitwise) {
  for (const auto& sp : {params(5, 3, 4), params(6, 2, 8), params(4, 5, 1)})  // 125 cubes: a short last chunk
    for (std::uint64_t stride : {1u, 3u})
      for (std::uint64_t B : {1u, 4u, 32u})
        for (std::uint64_t slice_tiles : {1u, 2u, 1000u}) check(sp, stride, B, slice_tiles);
}

TEST(ArrayRows, TheNonFiniteSampleIsFound) {
  // value_at is NaN for x0 < 0.03 and x1 > 0.9 in region coordinates: some sample of this pass
  const sampling_params<D> sp = params(8, 4, 16);
  const adaptive_map<D> map(7);
  no_bins none;
  std::uint64_t first = ~0ull;
  const std::uint64_t n_chunks = (sp.n_cubes + sp.chunk_cubes - 1) / sp.chunk_cubes;
  for (std::uint64_t c = 0; c < n_chunks; ++c)
    first = std::min(first, sample_chunk<D>(one_point{}, sp, map.view(), c, none, vegas_stream_uniforms{sp.seed, sp.iteration})
                                .first_non_finite);
  EXPECT_NE(first, ~0ull) << "the test integrand must meet its NaN in this pass";
  check(sp, 1, 8, 3);
}

}  // namespace

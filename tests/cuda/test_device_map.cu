// The map adaptation on the device (backend/cuda/adapt_kernels.cuh) against the host's
// (adaptive_map::adapt): the same edges, bit for bit, for random exact bin sums, several numbers of
// bins (shared-memory and global-memory scratch), damping exponents, m-Cubes1D, and several rounds
// from non-uniform maps. Built with nvcc's default --fmad=true: the adaptation's arithmetic must not
// be contracted into FMAs (portable_math.hpp). Skips when no GPU is present. And cuda_backend is
// a backend (backend/backend.hpp: every operation, the pipeline ones included), checked at compile time.
#include <gtest/gtest.h>

#include <mcubes/backend/backend.hpp>
#include <mcubes/backend/cuda.cuh>
#include <mcubes/options.hpp>

#include "support/cuda.hpp"

#include <cmath>
#include <cstdint>
#include <random>
#include <vector>

namespace {

using namespace mcubes;
constexpr std::uint64_t test_seed = 20261122;

static_assert(has_chunk_operations_v<cuda_backend>, "cuda_backend: name, reduce, count");
static_assert(has_map_operations_v<cuda_backend>,
              "cuda_backend: make_map, sample, sample_vector, adapt_map, map_edges, set_map_edges, make_cube_values");
static_assert(has_batch_operations_v<cuda_backend>, "cuda_backend: make_batch, sample_batch, adapt_batch, batch_map_edges");
static_assert(backend_pipelines_batches<cuda_backend>::value && has_pipeline_operations_v<cuda_backend>,
              "cuda_backend: batch_pipeline, check_batch_memory, start_batch, finish_batch");
static_assert(is_backend_v<cuda_backend>, "cuda_backend is a backend");

// Random exact bin sums: about a third empty (as far from a peak), the rest spread over 30 decades
// of magnitude, some with a non-zero high word.
std::vector<bin_accumulator> random_bins(std::mt19937_64& rng, std::size_t n) {
  std::vector<bin_accumulator> bins(n);
  std::uniform_real_distribution<double> unif(0.0, 1.0);
  for (auto& b : bins) {
    const double u = unif(rng);
    if (u < 0.3) continue;
    b.lo = rng() >> static_cast<int>(unif(rng) * 60);
    if (u > 0.95) b.hi = rng() >> 40;
  }
  return bins;
}

// Levels 0..top_level of random exact bin sums (level-major, iteration_sums::bins): level 0 as
// random_bins, the overflow levels sparse (about one bin in 8 non-zero), as after a pass whose
// largest terms outgrew the scale.
std::vector<bin_accumulator> random_levels(std::mt19937_64& rng, std::size_t n, int top_level) {
  std::vector<bin_accumulator> bins = random_bins(rng, n);
  for (int level = 1; level <= top_level; ++level) {
    std::vector<bin_accumulator> lv = random_bins(rng, n);
    for (std::size_t i = 0; i < n; ++i)
      if (rng() % 8 != 0) lv[i] = bin_accumulator{};
    bins.insert(bins.end(), lv.begin(), lv.end());
  }
  return bins;
}

template <int D>
void expect_same_adaptation(int n_bins, double alpha, bool symmetric, int rounds, std::mt19937_64& rng,
                            int top_level = 0, double floor = 0) {
  cuda_backend backend;
  device_map<D> dev = backend.make_map<D>(n_bins);
  adaptive_map<D> host(n_bins);
  ASSERT_EQ(backend.map_edges(dev), host.edges());
  for (int round = 0; round < rounds; ++round) {
    const auto bins = random_levels(rng, static_cast<std::size_t>(D) * n_bins, top_level);
    backend.upload_bins(bins, top_level);
    iteration_sums sums;
    sums.top_level = top_level;
    backend.adapt_map(dev, sums, alpha, floor, symmetric);
    host.adapt(bins.data(), alpha, floor, symmetric, top_level);
    const std::vector<double> got = backend.map_edges(dev);
    ASSERT_EQ(got.size(), host.edges().size());
    for (std::size_t i = 0; i < got.size(); ++i)
      ASSERT_EQ(mcubes_test::bits(got[i]), mcubes_test::bits(host.edges()[i]))
          << "n_bins " << n_bins << ", alpha " << alpha << ", floor " << floor << (symmetric ? ", symmetric" : "") << ", top level "
          << top_level << ", round " << round
          << ", edge " << i << ": device " << got[i] << ", host " << host.edges()[i];
  }
}

TEST(DeviceMap, AdaptationBitwiseEqualToHost) {
  MCUBES_REQUIRE_DEVICE();
  std::mt19937_64 rng(test_seed);
  for (int n : {2, 7, 500, 512, 513, 1024, 1500, 5000}) {  // 1500 and 5000: scratch in global memory
    for (double alpha : {1.5, 1.0, 0.5, 2.0}) {
      expect_same_adaptation<3>(n, alpha, false, 3, rng);
      expect_same_adaptation<3>(n, alpha, true, 2, rng);
    }
  }
  expect_same_adaptation<9>(500, 1.5, false, 4, rng);
}

// The defensive floor of VEGAS+ runs (options.hpp: vegas_plus_map_floor): the device's floor
// weights come from the same exact total and old widths as the host's.
TEST(DeviceMap, AdaptationWithDefensiveFloorBitwiseEqualToHost) {
  MCUBES_REQUIRE_DEVICE();
  std::mt19937_64 rng(test_seed + 3);
  for (int n : {2, 7, 500, 513, 1500})
    for (double floor : {mcubes::vegas_plus_map_floor, 0.5}) {
      expect_same_adaptation<3>(n, 1.5, false, 3, rng, 0, floor);
      expect_same_adaptation<3>(n, 1.5, true, 2, rng, 1, floor);
    }
}

// Bins with overflow levels (reduction.hpp bin_level): the device folds the levels as the host does.
TEST(DeviceMap, AdaptationWithOverflowLevelsBitwiseEqualToHost) {
  MCUBES_REQUIRE_DEVICE();
  std::mt19937_64 rng(test_seed + 2);
  for (int top : {1, 3, max_bin_level})
    for (int n : {7, 500, 1500}) {
      expect_same_adaptation<3>(n, 1.5, false, 2, rng, top);
      expect_same_adaptation<3>(n, 1.5, true, 2, rng, top);
    }
  expect_same_adaptation<9>(500, 1.5, false, 3, rng, 2);
}

TEST(DeviceMap, AlphaZeroKeepsTheMapAndClearsTheBins) {
  MCUBES_REQUIRE_DEVICE();
  std::mt19937_64 rng(test_seed + 1);
  cuda_backend backend;
  device_map<2> dev = backend.make_map<2>(50);
  backend.upload_bins(random_bins(rng, 100));
  backend.adapt_map(dev, iteration_sums{}, 1.5, 0.0, false);
  const std::vector<double> before = backend.map_edges(dev);
  backend.upload_bins(random_bins(rng, 100));
  backend.adapt_map(dev, iteration_sums{}, 0.0, 0.0, false);
  EXPECT_EQ(backend.map_edges(dev), before);
  // the bins were cleared: adapting to them now changes nothing (all-zero contributions)
  backend.adapt_map(dev, iteration_sums{}, 1.5, 0.0, false);
  EXPECT_EQ(backend.map_edges(dev), before);
}

}  // namespace

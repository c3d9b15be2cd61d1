// The map adaptation on the device (backend/cuda/adapt_kernels.cuh) against the host's
// (adaptive_map::adapt): the same edges, bit for bit, for random exact bin sums, several numbers of
// bins (shared-memory and global-memory scratch), damping exponents, m-Cubes1D, and several rounds
// from non-uniform maps. Built with nvcc's default --fmad=true: the adaptation's arithmetic must not
// be contracted into FMAs (portable_math.hpp). Skips when no GPU is present. And cuda_backend is
// a backend (backend/backend.hpp: every operation, the pipeline ones included), checked at compile
// time; and VEGAS+'s allocation in one cooperative launch (backend/cuda/allocate.cuh) against the
// reduce and counts it replaces.
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
              "cuda_backend: sample_passes, make_map, adapt_map, map_edges, set_map_edges, make_cube_values");
static_assert(has_batch_operations_v<cuda_backend>, "cuda_backend: make_batch, sample_passes over a batch, adapt_batch, batch_map_edges");
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

namespace {

// Shares of m sub-cubes as VEGAS+ meets them: 40 % quiet (0), the rest spread over eight decades,
// and one sub-cube large enough to reach the cap.
std::vector<double> spread_shares(std::uint64_t m, std::mt19937_64& rng) {
  std::uniform_real_distribution<double> unif(0.0, 1.0);
  std::vector<double> host(m);
  for (double& v : host) v = unif(rng) < 0.4 ? 0.0 : std::pow(10.0, 8 * unif(rng) - 4);
  host[rng() % m] = 1e7;
  return host;
}

// The counts' chunk functor of stratification st reading the shares at `share` (scale 0: set per try).
count_sum_chunk counts_of(const stratification& st, const double* share) {
  count_sum_chunk counts{cube_counts{}, st.n_cubes, st.chunk_cubes};
  counts.counts.n_base = st.min_samples_per_cube;
  counts.counts.n_extra_max = st.samples_per_cube - st.min_samples_per_cube;
  counts.counts.share_in = share;
  return counts;
}

// VEGAS+'s allocation in one launch (cuda_backend::allocate_counts, backend/cuda/allocate.cuh)
// against the steps it replaces: the sum of the shares by reduce and the search of the counts'
// scale on the host over count() (algorithm/vegas.hpp, allocate_counts): the same total, scale and
// evaluations, bit for bit; with and without the sum, on grids from a few chunks to 2^20.
TEST(DeviceAllocation, OneLaunchGivesTheTotalScaleAndCountOfReduceAndCount) {
  MCUBES_REQUIRE_DEVICE();
  std::mt19937_64 rng(test_seed + 5);
  cuda_backend backend;
  struct problem {
    int dim;
    std::uint64_t calls;
  };
  for (const problem& pr : {problem{3, 200000}, problem{8, 1000000}, problem{2, 5000}, problem{4, std::uint64_t(1) << 28}}) {
    const stratification st = make_adaptive_stratification(pr.dim, pr.calls);
    const std::uint64_t m = st.n_cubes;
    const std::vector<double> host = spread_shares(m, rng);
    device_array<double> shares = backend.make_cube_values(m);
    backend.write_cube_values(shares.data(), 0, m, host.data());
    const share_sum_chunk sum{shares.data(), m, st.chunk_cubes};
    const count_sum_chunk counts = counts_of(st, shares.data());
    const double total = backend.reduce<double>(st.n_chunks, sum, plus_merge{});
    ASSERT_TRUE(usable_share_total(total));
    const auto count_at = [&](double s) {
      count_sum_chunk c = counts;
      c.counts.scale = s;
      return static_cast<std::uint64_t>(backend.count(st.n_chunks, c));
    };
    const double s0 = first_count_scale(st, total);
    const std::uint64_t base = m * st.min_samples_per_cube;
    const count_scale expected = find_count_scale(s0, count_at(s0), base, st.calls, count_at);
    SCOPED_TRACE(testing::Message() << pr.dim << "-D, " << pr.calls << " calls, " << m << " sub-cubes, " << st.n_chunks << " chunks");
    const auto one = backend.allocate_counts(sum, counts, st, true, 0.0, base, st.calls);
    EXPECT_EQ(mcubes_test::bits(one.total), mcubes_test::bits(total));
    EXPECT_EQ(one.searched, 1);
    EXPECT_EQ(mcubes_test::bits(one.scale), mcubes_test::bits(expected.scale));
    EXPECT_EQ(one.count, expected.count);
    EXPECT_LE(one.count, st.calls);
    const auto again = backend.allocate_counts(sum, counts, st, false, s0, base, st.calls);  // the search alone
    EXPECT_EQ(mcubes_test::bits(again.scale), mcubes_test::bits(expected.scale));
    EXPECT_EQ(again.count, expected.count);
    // a cap so high that n_cubes x n_cap reaches 2^47: the kernel's counts take the grid
    // synchronisation instead of the packed counters (allocate.cuh, step 3), the same search
    count_sum_chunk high = counts;
    high.counts.n_extra_max = (std::uint64_t(1) << 47) / m + 1;
    const auto count_high = [&](double s) {
      count_sum_chunk c = high;
      c.counts.scale = s;
      return static_cast<std::uint64_t>(backend.count(st.n_chunks, c));
    };
    const count_scale expected_high = find_count_scale(s0, count_high(s0), base, st.calls, count_high);
    const auto unpacked = backend.allocate_counts(sum, high, st, true, 0.0, base, st.calls);
    EXPECT_EQ(mcubes_test::bits(unpacked.scale), mcubes_test::bits(expected_high.scale));
    EXPECT_EQ(unpacked.count, expected_high.count);
  }
  // no usable total (every share 0): no search; the run then spreads the calls uniformly
  const stratification st = make_adaptive_stratification(3, 100000);
  std::vector<double> zeros(st.n_cubes, 0.0);
  device_array<double> shares = backend.make_cube_values(st.n_cubes);
  backend.write_cube_values(shares.data(), 0, st.n_cubes, zeros.data());
  const auto none = backend.allocate_counts(share_sum_chunk{shares.data(), st.n_cubes, st.chunk_cubes},
                                            count_sum_chunk{cube_counts{}, st.n_cubes, st.chunk_cubes}, st, true, 0.0, 0,
                                            st.calls);
  EXPECT_EQ(none.total, 0.0);
  EXPECT_EQ(none.searched, 0);
}

TEST(DeviceAllocation, ABatchOfRequestsGivesEachRequestsOwnAllocation) {
  MCUBES_REQUIRE_DEVICE();
  std::mt19937_64 rng(test_seed + 6);
  cuda_backend backend;
  struct problem {
    int dim;
    std::uint64_t calls;
    int with_total;
    bool zeros;
  };
  // small integrals as a batch has them, a large one (many tiles), the search alone, no usable total
  const std::vector<problem> problems = {{4, 100000, 1, false}, {3, 200000, 1, false}, {8, 1000000, 1, false},
                                         {2, 5000, 0, false},   {4, std::uint64_t(1) << 26, 1, false},
                                         {3, 100000, 1, true},  {6, 300000, 0, false}};
  std::vector<device_array<double>> shares;
  std::vector<counts_request> requests;
  for (const problem& pr : problems) {
    const stratification st = make_adaptive_stratification(pr.dim, pr.calls);
    const std::uint64_t m = st.n_cubes;
    const std::vector<double> host = pr.zeros ? std::vector<double>(m, 0.0) : spread_shares(m, rng);
    shares.push_back(backend.make_cube_values(m));
    backend.write_cube_values(shares.back().data(), 0, m, host.data());
    counts_request q;
    q.shares = share_sum_chunk{shares.back().data(), m, st.chunk_cubes};
    q.counts = counts_of(st, shares.back().data());
    q.st = st;
    q.with_total = pr.with_total;
    q.s0 = pr.with_total != 0 ? 0.0 : first_count_scale(st, backend.reduce<double>(st.n_chunks, q.shares, plus_merge{}));
    q.base = m * st.min_samples_per_cube;
    q.target = st.calls;
    requests.push_back(q);
  }
  const auto batch = backend.allocate_counts_batch(requests);
  ASSERT_EQ(batch.size(), requests.size());
  for (std::size_t i = 0; i < requests.size(); ++i) {
    const counts_request& q = requests[i];
    SCOPED_TRACE(testing::Message() << "request " << i << ": " << q.st.dim << "-D, " << q.st.calls << " calls, "
                                    << q.st.n_chunks << " chunks, with_total " << q.with_total);
    const auto one = backend.allocate_counts(q.shares, q.counts, q.st, q.with_total != 0, q.s0, q.base, q.target);
    ASSERT_TRUE(one.launched);
    EXPECT_TRUE(batch[i].launched);
    EXPECT_EQ(mcubes_test::bits(batch[i].total), mcubes_test::bits(one.total));
    EXPECT_EQ(batch[i].searched, one.searched);
    EXPECT_EQ(mcubes_test::bits(batch[i].scale), mcubes_test::bits(one.scale));
    EXPECT_EQ(batch[i].count, one.count);
    if (problems[i].zeros) EXPECT_EQ(batch[i].searched, 0);
    else EXPECT_EQ(batch[i].searched, 1);
  }
  EXPECT_TRUE(backend.allocate_counts_batch({}).empty());
}

}  // namespace

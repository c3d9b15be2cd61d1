// Determinism of mcubes::vegas on the CPU backend: for fixed options and seed the result is
// bitwise identical for any number of threads and on every run (backend/cpu.hpp contract). Every
// iteration record is compared, including those after adapting iterations: equal estimates after
// adaptation imply equal adaptive maps.

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <string>
#include <vector>

#include "mcubes/mcubes.hpp"

#include "support/results.hpp"

namespace {

constexpr int thread_counts[] = {1, 2, 3, 8};
constexpr int repeats = 2;

// A Gaussian peak of width sigma at c in [0,1]^D, normalised to 1 over R^D: adaptation moves the
// map strongly towards the peak.
template <int D>
struct gaussian_peak {
  double sigma = 0.1;
  double center = 0.5;
  double operator()(const mcubes::point<D>& x) const {
    double r2 = 0;
    for (int i = 0; i < D; ++i) r2 += (x[i] - center) * (x[i] - center);
    return std::exp(-r2 / (2 * sigma * sigma)) / std::pow(sigma * 2.5066282746310002, D);
  }
};

// A cheap, asymmetric 2-D integrand for the large problems (more than 2^20 sub-cubes).
struct product_2d {
  double operator()(const mcubes::point<2>& x) const { return x[0] * x[0] * (1 + 3 * x[1]) + 0.1; }
};

void expect_identical(const mcubes::result& a, const mcubes::result& b, const std::string& label) {
  SCOPED_TRACE(label);
  mcubes_test::expect_same_result(a, b);
}

// Runs f with every thread count, twice each, and checks all results against the first.
template <int D, class F>
mcubes::result check_thread_invariance(const F& f, const mcubes::region<D>& reg, mcubes::vegas_options opt,
                                       const std::string& label) {
  opt.threads = 1;
  const mcubes::result reference = mcubes::vegas(f, reg, opt);
  for (int t : thread_counts) {
    for (int rep = 0; rep < repeats; ++rep) {
      opt.threads = t;
      const mcubes::result r = mcubes::vegas(f, reg, opt);
      expect_identical(reference, r, label + ", threads = " + std::to_string(t) + ", repeat " + std::to_string(rep));
    }
  }
  // The same through vegas_with and an explicit backend.
  expect_identical(reference, mcubes::vegas_with<D>(f, reg, opt, mcubes::cpu_backend(3)), label + ", vegas_with");
  return reference;
}

mcubes::vegas_options adapting_options(std::uint64_t calls) {
  mcubes::vegas_options opt;
  opt.calls_per_iteration = calls;
  opt.max_iterations = 8;
  opt.adapt_iterations = 5;  // 5 V-Sample iterations, then 3 V-Sample-No-Adjust
  opt.skip = 1;
  opt.min_iterations = 2;
  opt.rel_tol = 1e-12;       // never met: every run does all 8 iterations
  opt.n_bins = 200;
  return opt;
}

template <int D>
void gaussian_case(std::uint64_t calls, bool symmetric) {
  mcubes::vegas_options opt = adapting_options(calls);
  opt.symmetric_map = symmetric;
  const auto st = mcubes::make_stratification(D, calls);
  const std::string label = std::to_string(D) + "-D Gaussian, " + std::to_string(calls) + " calls (" +
                            std::to_string(st.n_chunks) + " chunks), symmetric_map = " + (symmetric ? "true" : "false");
  const auto r = check_thread_invariance<D>(gaussian_peak<D>{}, mcubes::region<D>::unit(), opt, label);
  // The runs did adapt: later iterations are much more precise than the first, uniform-map one.
  ASSERT_EQ(r.iterations, 8);
  EXPECT_LT(r.records.back().error, 0.5 * r.records.front().error) << label;
  EXPECT_TRUE(r.records[4].adapted);
  EXPECT_FALSE(r.records[5].adapted);
  EXPECT_NEAR(r.estimate, 1.0, 5 * r.error) << label;  // the peak lies well inside the cube
}

TEST(DeterminismCpu, Gaussian4DManyChunks) {
  ASSERT_GT(mcubes::make_stratification(4, 100000).n_chunks, 1024u);  // several tiles of 1024 chunks
  gaussian_case<4>(100000, false);
  gaussian_case<4>(100000, true);
}

TEST(DeterminismCpu, Gaussian7DManyChunks) {
  ASSERT_GT(mcubes::make_stratification(7, 100000).n_chunks, 1024u);
  gaussian_case<7>(100000, false);
  gaussian_case<7>(100000, true);
}

TEST(DeterminismCpu, FewChunks) {
  // One tile (fewer than 1024 chunks): a single worker runs whatever the thread count.
  ASSERT_LT(mcubes::make_stratification(4, 2000).n_chunks, 1024u);
  gaussian_case<4>(2000, false);
  // A single sub-cube and a single chunk.
  mcubes::vegas_options opt = adapting_options(200);
  ASSERT_EQ(mcubes::make_stratification(7, 200).n_chunks, 1u);
  check_thread_invariance<7>(gaussian_peak<7>{0.3, 0.4}, mcubes::region<7>::unit(), opt, "7-D, one sub-cube");
}

TEST(DeterminismCpu, MoreSubCubesThanChunks) {
  // m > 2^20 sub-cubes: two sub-cubes per chunk, 2^19+ chunks in 500+ tiles.
  const std::uint64_t calls = 2200000;
  const auto st = mcubes::make_stratification(2, calls);
  ASSERT_GT(st.chunk_cubes, 1u);
  ASSERT_GT(st.n_chunks, 500u * 1024u);
  mcubes::vegas_options opt = adapting_options(calls);
  opt.max_iterations = 3;
  opt.adapt_iterations = 2;
  opt.skip = 0;
  const auto reg = mcubes::region<2>({-1.0, 0.5}, {2.0, 1.5});
  const auto r = check_thread_invariance<2>(product_2d{}, reg, opt, "2-D, 2.2e6 calls");
  // Exact integral: int_{-1}^{2} x^2 dx * int_{0.5}^{1.5} (1 + 3y) dy + 0.1 * 3 = 3 * 4 + 0.3 = 12.3.
  EXPECT_NEAR(r.estimate, 12.3, 5 * r.error + 1e-12);
}

// A spike of height H filling most of one sub-cube that the bin-scale probe (one chunk in
// n_chunks/1024) does not visit. H = 1e6: the first pass's largest bin term is ~1e12 (2^40) times
// the probe's, beyond the 2^32 headroom of the scale, so those terms go to overflow bin levels
// (record.top_bin_level > 0) and nothing is re-sampled. H = 1e120: ~1e240 times the probe's,
// beyond the top level (2^672 of headroom), so the iteration is re-accumulated with a new scale
// (record.rescaled). Both paths are deterministic too.
struct hidden_spike_2d {
  double height;
  double operator()(const mcubes::point<2>& x) const {
    const bool in = x[0] > 0.4081 && x[0] < 0.4125 && x[1] > 0.6996 && x[1] < 0.7040;
    return in ? height : 1.0;
  }
};

TEST(DeterminismCpu, OverflowBinLevelsAndRescaledIterations) {
  mcubes::vegas_options opt = adapting_options(100000);
  opt.stratification = mcubes::stratification_mode::uniform;  // the grid and probe stride the spike is placed for
  const auto st = mcubes::make_stratification(2, opt.calls_per_iteration);
  ASSERT_EQ(st.g, 223u);                     // the spike fills most of sub-cube (91, 156) = 34879,
  ASSERT_NE(34879u % (st.n_chunks / 1024), 0u);  // which the probe skips
  {
    const auto r = check_thread_invariance<2>(hidden_spike_2d{1e6}, mcubes::region<2>::unit(), opt, "2-D hidden spike 1e6");
    ASSERT_FALSE(r.records.empty());
    EXPECT_GE(r.records[0].top_bin_level, 1) << "the first pass did not use an overflow level";
    for (const auto& rec : r.records) EXPECT_FALSE(rec.rescaled) << "iteration " << rec.index << " was re-sampled";
  }
  {
    const auto r = check_thread_invariance<2>(hidden_spike_2d{1e120}, mcubes::region<2>::unit(), opt, "2-D hidden spike 1e120");
    ASSERT_FALSE(r.records.empty());
    EXPECT_TRUE(r.records[0].rescaled) << "the first pass was not rescaled: the test does not cover that path";
  }
}

TEST(DeterminismCpu, DifferentSeedsGiveDifferentEstimates) {
  mcubes::vegas_options opt = adapting_options(20000);
  opt.threads = 2;
  const auto a = mcubes::vegas(gaussian_peak<4>{}, mcubes::region<4>::unit(), opt);
  opt.seed = mcubes::default_seed + 1;
  const auto b = mcubes::vegas(gaussian_peak<4>{}, mcubes::region<4>::unit(), opt);
  opt.seed = 0;
  const auto c = mcubes::vegas(gaussian_peak<4>{}, mcubes::region<4>::unit(), opt);
  EXPECT_NE(a.records[0].estimate, b.records[0].estimate);
  EXPECT_NE(a.records[0].estimate, c.records[0].estimate);
  EXPECT_NE(b.records[0].estimate, c.records[0].estimate);
  EXPECT_NE(a.estimate, b.estimate);
  EXPECT_NE(a.estimate, c.estimate);
  EXPECT_EQ(a.seed, mcubes::default_seed);
  EXPECT_EQ(b.seed, mcubes::default_seed + 1);
  // ... but statistically compatible estimates of the same integral.
  EXPECT_NEAR(a.estimate, b.estimate, 5 * std::hypot(a.error, b.error));
}

}  // namespace

namespace {
// The CPU backend's batched SIMD fast path must give the bits of the serial reference body
// (core/sampler.hpp sample_chunk, which the CUDA kernels run): same points, same per-sub-cube sums
// in the same order, same integer bin terms.
template <int D, class F>
void expect_fast_path_equals_serial(const F& f, mcubes::vegas_options o, const std::string& label,
                                    const mcubes::region<D>& reg = mcubes::region<D>::unit()) {
  mcubes::cpu_backend fast(2), serial(2);
  serial.serial_sampler = true;
  expect_identical(mcubes::vegas_with<D>(f, reg, o, fast), mcubes::vegas_with<D>(f, reg, o, serial), label);
}

struct rational_peak4 {  // 1 / (1e-4 + |x - 0.37|^2): a sharp peak, VEGAS+ sub-cubes of several segments
  double operator()(const mcubes::point<4>& x) const {
    double r2 = 1e-4;
    for (int i = 0; i < 4; ++i) r2 += (x[i] - 0.37) * (x[i] - 0.37);
    return 1.0 / r2;
  }
};

// Both stratifications: the uniform grid's fast path (consecutive samples) and VEGAS+'s (batches
// across sub-cubes of varying counts, segments, the shares), each against sample_chunk.
TEST(DeterminismCpu, FastPathEqualsSerialSampleChunk) {
  for (const auto mode : {mcubes::stratification_mode::uniform, mcubes::stratification_mode::adaptive}) {
    mcubes::vegas_options o;
    o.stratification = mode;
    o.calls_per_iteration = 200000;
    o.max_iterations = 6;
    o.adapt_iterations = 4;
    o.skip = 1;
    o.min_iterations = 5;
    o.rel_tol = 1e-12;
    const std::string m = std::string(", ") + mcubes::to_string(mode);
    expect_fast_path_equals_serial<4>(gaussian_peak<4>{}, o, "gaussian 4-D" + m);
    expect_fast_path_equals_serial<7>(gaussian_peak<7>{0.2, 0.4}, o, "gaussian 7-D" + m);
    expect_fast_path_equals_serial<2>(product_2d{}, o, "product 2-D" + m);
    expect_fast_path_equals_serial<4>(rational_peak4{}, o, "rational peak 4-D" + m);
    // a region other than the unit cube (the map's x = lower + width x_unit; the AVX2 map leaves
    // it out only where every axis is [0, 1]): axis 1 unit, the others not
    expect_fast_path_equals_serial<4>(rational_peak4{}, o, "rational peak 4-D, region" + m,
                                      mcubes::region<4>({-0.5, 0.0, 0.25, 0.3}, {1.5, 1.0, 0.75, 0.4}));
    o.symmetric_map = true;
    o.n_bins = 37;
    expect_fast_path_equals_serial<5>(gaussian_peak<5>{}, o, "gaussian 5-D, symmetric map, 37 bins" + m);
  }
  // Bin terms of 2^52 units and more (the AVX2 fast path converts them one at a time) and of the
  // overflow levels: a spike the first pass's scale did not see (see OverflowBinLevels... below).
  for (const auto mode : {mcubes::stratification_mode::uniform, mcubes::stratification_mode::adaptive}) {
    mcubes::vegas_options o = adapting_options(100000);
    o.stratification = mode;
    for (double height : {1e4, 1e6})
      expect_fast_path_equals_serial<2>(hidden_spike_2d{height}, o,
                                        "hidden spike " + std::to_string(height) + ", " + mcubes::to_string(mode));
  }
}
// m-Cubes1D (symmetric_map) adapts its one map to axis 0's histogram (the paper's estimator,
// sampling_params::bin_axes = 1). On a fully symmetric integrand that histogram estimates what each
// axis's own histogram estimates without symmetric_map, so the one map must lie within the spread of
// the per-axis maps (4 seeds x 4 axes): every edge within 5 of their standard deviations of their
// mean (plus 1e-3 for edges that barely move). The spread is that of a map from one axis's
// contributions, the one-axis map's own. Thread-count invariance as every run's.
TEST(MCubes1D, OneAxisMapWithinTheSpreadOfThePerAxisMaps) {
  constexpr int D = 4, bins = 40;
  const gaussian_peak<D> f{0.08, 0.45};
  mcubes::vegas_options o;
  o.stratification = mcubes::stratification_mode::uniform;  // the map alone differs
  o.calls_per_iteration = 40000;
  o.max_iterations = o.adapt_iterations = 6;
  o.skip = 1;
  o.min_iterations = 1;
  o.rel_tol = 1e-12;
  o.n_bins = bins;
  o.threads = 2;
  std::vector<std::vector<double>> rows;  // per-axis maps
  for (std::uint64_t seed = 1; seed <= 4; ++seed) {
    o.seed = seed;
    mcubes::integrator<D> in(mcubes::region<D>::unit(), o);
    in.integrate(f);
    const std::vector<double> e = in.edges();
    for (int j = 0; j < D; ++j) rows.emplace_back(e.begin() + j * (bins + 1), e.begin() + (j + 1) * (bins + 1));
  }
  o.symmetric_map = true;
  for (std::uint64_t seed = 5; seed <= 6; ++seed) {
    o.seed = seed;
    mcubes::integrator<D> in(mcubes::region<D>::unit(), o);
    const mcubes::result r = in.integrate(f);
    EXPECT_LE(std::fabs(r.estimate - 1.0) / r.error, 4.0) << "seed " << seed;  // the peak lies well inside
    const std::vector<double> e = in.edges();
    for (int j = 1; j < D; ++j)
      EXPECT_TRUE(std::equal(e.begin(), e.begin() + bins + 1, e.begin() + j * (bins + 1))) << "axis " << j;
    for (int k = 1; k < bins; ++k) {
      double mean = 0, sq = 0;
      for (const auto& row : rows) mean += row[k];
      mean /= static_cast<double>(rows.size());
      for (const auto& row : rows) sq += (row[k] - mean) * (row[k] - mean);
      const double sd = std::sqrt(sq / static_cast<double>(rows.size() - 1));
      EXPECT_LE(std::fabs(e[k] - mean), 5 * sd + 1e-3) << "seed " << seed << ", edge " << k << ": " << e[k] << " against "
                                                      << mean << " +- " << sd;
    }
    o.threads = 3;
    mcubes::integrator<D> again(mcubes::region<D>::unit(), o);
    const mcubes::result r3 = again.integrate(f);
    EXPECT_EQ(r3.estimate, r.estimate);
    EXPECT_EQ(again.edges(), e);
    o.threads = 2;
  }
}

}  // namespace

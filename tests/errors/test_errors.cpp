// Bad input and bad integrands: every invalid option or region throws mcubes::invalid_input naming
// the offending item (before any sampling); a non-finite integrand value throws
// mcubes::non_finite_integrand for the smallest sample index, whatever the thread count; integrands
// that are zero (everywhere or where sampled) are never reported as converged 0 +- 0.

#include <gtest/gtest.h>

#include <array>
#include <atomic>
#include <cmath>
#include <cstdint>
#include <limits>
#include <string>
#include <vector>

#include "mcubes/core/sampler.hpp"
#include "mcubes/mcubes.hpp"

#include "support/bits.hpp"

namespace {

const double nan_v = std::numeric_limits<double>::quiet_NaN();
const double inf_v = std::numeric_limits<double>::infinity();

// Counts its evaluations (through a pointer: the functor stays const and trivially copyable).
template <int D>
struct counting {
  std::atomic<long>* calls;
  double operator()(const mcubes::point<D>&) const {
    ++*calls;
    return 1.0;
  }
};

mcubes::vegas_options small_options() {
  mcubes::vegas_options o;
  o.calls_per_iteration = 10000;
  o.max_iterations = 10;
  o.threads = 2;
  return o;
}

// Runs vegas with `o` and expects invalid_input whose message contains every one of `needles`, and
// that the integrand was never called.
void expect_invalid_option(const mcubes::vegas_options& o, std::initializer_list<const char*> needles) {
  std::atomic<long> calls{0};
  try {
    mcubes::vegas(counting<3>{&calls}, mcubes::region<3>::unit(), o);
    ADD_FAILURE() << "no exception; expected one naming " << *needles.begin();
  } catch (const mcubes::invalid_input& e) {
    const std::string what = e.what();
    for (const char* n : needles) EXPECT_NE(what.find(n), std::string::npos) << "message \"" << what << "\" lacks \"" << n << "\"";
  } catch (const std::exception& e) {
    ADD_FAILURE() << "wrong exception type: " << e.what();
  }
  EXPECT_EQ(calls.load(), 0) << "the integrand was called before the options were validated";
}

template <int D>
void expect_invalid_region(const std::array<double, D>& lo, const std::array<double, D>& hi,
                           std::initializer_list<const char*> needles) {
  try {
    mcubes::region<D> r(lo, hi);
    ADD_FAILURE() << "no exception for region " << lo[0] << " .. " << hi[0];
  } catch (const mcubes::invalid_input& e) {
    const std::string what = e.what();
    for (const char* n : needles) EXPECT_NE(what.find(n), std::string::npos) << "message \"" << what << "\" lacks \"" << n << "\"";
  }
}

TEST(BadInput, Regions) {
  expect_invalid_region<2>({0.0, 1.0}, {1.0, 0.5}, {"lower", "axis 1"});       // lower > upper on axis 1
  expect_invalid_region<2>({0.0, 1.0}, {0.0, 2.0}, {"lower", "axis 0"});       // lower == upper
  expect_invalid_region<3>({0.0, 0.0, 0.0}, {1.0, 1.0, -1.0}, {"axis 2"});
  expect_invalid_region<2>({nan_v, 0.0}, {1.0, 1.0}, {"not finite", "axis 0"});
  expect_invalid_region<2>({0.0, 0.0}, {1.0, nan_v}, {"not finite", "axis 1"});
  expect_invalid_region<2>({0.0, -inf_v}, {1.0, 1.0}, {"not finite", "axis 1"});
  expect_invalid_region<2>({0.0, 0.0}, {inf_v, 1.0}, {"not finite", "axis 0"});
  expect_invalid_region<1>({-1e308}, {1e308}, {"axis 0"});  // width overflows
  EXPECT_THROW(mcubes::region<3>::cube(1.0, 1.0), mcubes::invalid_input);
  EXPECT_THROW(mcubes::region<3>::cube(2.0, 1.0), mcubes::invalid_input);
  EXPECT_NO_THROW(mcubes::region<3>::cube(-1.0, 1.0));
}

TEST(BadInput, Tolerances) {
  auto o = small_options();
  o.rel_tol = 0;
  o.abs_tol = 0;
  expect_invalid_option(o, {"rel_tol", "abs_tol"});
  o.rel_tol = -1e-3;
  o.abs_tol = 0;
  expect_invalid_option(o, {"rel_tol", "-0.001"});
  o.rel_tol = 1e-3;
  o.abs_tol = -1;
  expect_invalid_option(o, {"abs_tol", "-1"});
  o.rel_tol = nan_v;
  o.abs_tol = 0;
  expect_invalid_option(o, {"rel_tol", "nan"});
  o.rel_tol = 1e-3;
  o.abs_tol = nan_v;
  expect_invalid_option(o, {"abs_tol", "nan"});
  // Either tolerance alone is fine.
  o = small_options();
  o.rel_tol = 0;
  o.abs_tol = 1e-3;
  std::atomic<long> calls{0};
  EXPECT_NO_THROW(mcubes::vegas(counting<3>{&calls}, mcubes::region<3>::unit(), o));
}

TEST(BadInput, SizesAndIterations) {
  auto o = small_options();
  for (std::uint64_t calls : {0ull, 1ull}) {
    o.calls_per_iteration = calls;
    expect_invalid_option(o, {"calls_per_iteration"});
  }
  o.calls_per_iteration = (std::uint64_t(1) << 50) + 1;
  expect_invalid_option(o, {"calls_per_iteration"});
  o = small_options();
  for (int nb : {1, -3, (1 << 20) + 1}) {  // 0 is valid: bins sized to the calls (map_bins_for)
    o.n_bins = nb;
    expect_invalid_option(o, {"n_bins"});
  }
  o = small_options();
  o.threads = -1;
  expect_invalid_option(o, {"threads", "-1"});
  o = small_options();
  for (int it : {0, -1}) {
    o.max_iterations = it;
    expect_invalid_option(o, {"max_iterations"});
  }
  o = small_options();
  o.max_iterations = 9;
  o.skip = 5;
  o.min_iterations = 5;
  expect_invalid_option(o, {"skip", "min_iterations", "max_iterations"});
  o = small_options();
  o.skip = -1;
  expect_invalid_option(o, {"skip"});
  o = small_options();
  o.min_iterations = 0;
  expect_invalid_option(o, {"min_iterations"});
  o = small_options();
  o.adapt_iterations = -1;
  expect_invalid_option(o, {"adapt_iterations"});
  o = small_options();
  o.cuda_threads_per_block = 100;
  expect_invalid_option(o, {"cuda_threads_per_block"});
  // threads = 0 means all hardware threads: valid.
  o = small_options();
  o.threads = 0;
  std::atomic<long> calls{0};
  EXPECT_NO_THROW(mcubes::vegas(counting<3>{&calls}, mcubes::region<3>::unit(), o));
  EXPECT_GT(calls.load(), 0);
  EXPECT_THROW(mcubes::cpu_backend(-2), mcubes::invalid_input);
}

TEST(BadInput, Chi2AndAlpha) {
  auto o = small_options();
  for (double c : {0.0, -1.0, nan_v, inf_v, -inf_v}) {  // inf would drop the agreement test silently
    o.max_chi2_dof = c;
    expect_invalid_option(o, {"max_chi2_dof"});
  }
  o = small_options();
  for (double a : {-0.5, -2.0, nan_v, inf_v}) {  // negative: only auto_alpha (-1), the stratification's
    o.alpha = a;
    expect_invalid_option(o, {"alpha"});
  }
  o = small_options();
  o.alpha = 0;  // frozen map: valid
  std::atomic<long> calls{0};
  EXPECT_NO_THROW(mcubes::vegas(counting<3>{&calls}, mcubes::region<3>::unit(), o));
  o.alpha = mcubes::auto_alpha;  // the default: valid
  EXPECT_NO_THROW(mcubes::vegas(counting<3>{&calls}, mcubes::region<3>::unit(), o));
}

TEST(BadInput, CudaBackendThroughCpuEntryPoint) {
  auto o = small_options();
  o.backend = mcubes::backend_kind::cuda;
  expect_invalid_option(o, {"cuda"});
  o.backend = mcubes::backend_kind::automatic;  // runs on the CPU here
  std::atomic<long> calls{0};
  const auto r = mcubes::vegas(counting<3>{&calls}, mcubes::region<3>::unit(), o);
  EXPECT_EQ(r.backend, "cpu");
}

// ---------------------------------------------------------------------------------------------
// Non-finite integrand values.

constexpr int nf_dim = 3;
using point3 = mcubes::point<nf_dim>;

// NaN in a small corner of the box (x0 > 1.5, x1 < 0.2, x2 > 4 in [-1,2] x [0,1] x [0,5]).
struct nan_corner {
  double operator()(const point3& x) const {
    if (x[0] > 1.5 && x[1] < 0.2 && x[2] > 4.0) return nan_v;
    return 1.0 + x[0] * x[1];
  }
};
// +Inf in another small box.
struct inf_box {
  double operator()(const point3& x) const {
    if (x[0] < -0.8 && x[1] > 0.9 && x[2] > 2.0 && x[2] < 2.5) return inf_v;
    return std::exp(-x[2]);
  }
};

const mcubes::region<nf_dim> nf_region({-1.0, 0.0, 0.0}, {2.0, 1.0, 5.0});

// Replays iteration 0 of vegas in sample-index order with the sampler's own make_sample (uniform
// map, same sampling parameters) and returns the first index where f is not finite.
template <class F>
std::uint64_t first_non_finite_index(const F& f, const mcubes::vegas_options& opt, point3& where) {
  const auto st = mcubes::make_stratification(nf_dim, opt.calls_per_iteration);
  mcubes::sampling_params<nf_dim> sp{};
  for (int j = 0; j < nf_dim; ++j) {
    sp.lower[j] = nf_region.lower()[j];
    sp.width[j] = nf_region.width(j);
  }
  sp.g = st.g;
  sp.inv_g = 1.0 / static_cast<double>(st.g);  // as vegas_with sets it
  sp.n_cubes = st.n_cubes;
  sp.p = st.samples_per_cube;
  sp.chunk_cubes = st.chunk_cubes;
  sp.seed = opt.seed;
  sp.iteration = 0;
  const mcubes::adaptive_map<nf_dim> map(opt.n_bins);
  const auto view = map.view();
  for (std::uint64_t c = 0; c < st.n_cubes; ++c) {
    std::uint64_t coord[nf_dim];
    mcubes::cube_coordinates<nf_dim>(c, st.g, coord);
    for (std::uint64_t k = 0; k < st.samples_per_cube; ++k) {
      const std::uint64_t index = c * st.samples_per_cube + k;
      point3 x;
      int bin[nf_dim];
      mcubes::make_sample<nf_dim>(sp, view, coord, index, x, bin);
      if (!std::isfinite(f(x))) {
        where = x;
        return index;
      }
    }
  }
  return ~std::uint64_t(0);
}

template <class F>
void check_non_finite(const F& f, bool expect_nan) {
  mcubes::vegas_options opt = small_options();
  opt.calls_per_iteration = 200000;  // 46^3 sub-cubes, one per chunk: the first bad one is mid-run
  // the replay above is the uniform grid's (sample c p + k of sub-cube c, on a map of 500 bins)
  opt.stratification = mcubes::stratification_mode::uniform;
  opt.n_bins = 500;
  point3 where{};
  const std::uint64_t expected = first_non_finite_index(f, opt, where);
  ASSERT_NE(expected, ~std::uint64_t(0)) << "the replay found no non-finite value: the test is void";
  const auto st = mcubes::make_stratification(nf_dim, opt.calls_per_iteration);
  ASSERT_GT(expected / st.samples_per_cube, 1024u) << "the first bad sample should not be in the first tile";
  for (int threads : {1, 2, 8}) {
    opt.threads = threads;
    try {
      mcubes::vegas(f, nf_region, opt);
      ADD_FAILURE() << "no exception with " << threads << " threads";
    } catch (const mcubes::non_finite_integrand& e) {
      EXPECT_EQ(e.sample_index(), expected) << threads << " threads";
      EXPECT_EQ(e.iteration(), 0);
      ASSERT_EQ(e.point().size(), static_cast<std::size_t>(nf_dim));
      point3 x;
      for (int j = 0; j < nf_dim; ++j) {
        x[j] = e.point()[j];
        EXPECT_TRUE(mcubes_test::same_bits(x[j], where[j])) << "coordinate " << j;
      }
      EXPECT_FALSE(std::isfinite(f(x)));
      if (expect_nan) {
        EXPECT_TRUE(std::isnan(e.value()));
      } else {
        EXPECT_TRUE(std::isinf(e.value()) && e.value() > 0);
      }
      const std::string what = e.what();
      EXPECT_NE(what.find(expect_nan ? "nan" : "inf"), std::string::npos) << what;
      EXPECT_NE(what.find("sample " + std::to_string(expected)), std::string::npos) << what;
      EXPECT_NE(what.find("x = ("), std::string::npos) << what;
      EXPECT_NE(what.find("x = " + mcubes::point_text(e.point())), std::string::npos) << what;  // the point itself
    }
  }
}

TEST(NonFiniteIntegrand, NaNReportsTheSmallestSampleIndex) { check_non_finite(nan_corner{}, true); }
TEST(NonFiniteIntegrand, InfReportsTheSmallestSampleIndex) { check_non_finite(inf_box{}, false); }

// VEGAS+ (the default): the sample named is one where f is not finite, the same one for any
// number of threads, at its point (the index is sub-cube * n_cap + k, core/cube_counts.hpp).
TEST(NonFiniteIntegrand, VegasPlusNamesTheSameSampleWhereFIsNotFinite) {
  mcubes::vegas_options opt = small_options();
  opt.calls_per_iteration = 200000;
  std::uint64_t first = ~std::uint64_t(0);
  for (int threads : {1, 2, 8}) {
    opt.threads = threads;
    try {
      mcubes::vegas(nan_corner{}, nf_region, opt);
      ADD_FAILURE() << "no exception with " << threads << " threads";
    } catch (const mcubes::non_finite_integrand& e) {
      if (first == ~std::uint64_t(0)) first = e.sample_index();
      EXPECT_EQ(e.sample_index(), first) << threads << " threads";
      ASSERT_EQ(e.point().size(), static_cast<std::size_t>(nf_dim));
      point3 x;
      for (int j = 0; j < nf_dim; ++j) x[j] = e.point()[j];
      EXPECT_TRUE(std::isnan(nan_corner{}(x))) << mcubes::point_text(e.point());
      EXPECT_TRUE(std::isnan(e.value()));
    }
  }
}

TEST(NonFiniteIntegrand, IsAnMcubesError) {
  auto opt = small_options();
  EXPECT_THROW(mcubes::vegas(nan_corner{}, nf_region, opt), mcubes::error);
}

// ---------------------------------------------------------------------------------------------
// Integrands that are zero where sampled, and a constant.

template <int D>
struct zero_fn {
  double operator()(const mcubes::point<D>&) const { return 0.0; }
};

TEST(ZeroIntegrand, IdenticallyZeroIsNotResolved) {
  auto opt = small_options();
  const auto r = mcubes::vegas(zero_fn<4>{}, mcubes::region<4>::unit(), opt);
  EXPECT_EQ(r.status, mcubes::status::not_resolved);
  EXPECT_FALSE(r.converged());
  EXPECT_EQ(r.accumulated, 0);
  EXPECT_EQ(r.iterations, opt.max_iterations);
  EXPECT_EQ(r.estimate, 0.0);
  EXPECT_FALSE(std::isfinite(r.error) && r.error == 0) << "0 +- 0 would claim an exact result";
  for (const auto& rec : r.records) {
    EXPECT_EQ(rec.n_nonzero, 0u);
    EXPECT_FALSE(rec.accumulated);
  }
}

// A narrow Gaussian (width 1e-4) at an off-grid point in 6-D, with 1e4 calls: never found, since
// exp(-r^2 / 2e-8) underflows to 0 at any sampled point. Must not come out as converged 0 +- 0.
struct narrow_peak_6d {
  double operator()(const mcubes::point<6>& x) const {
    const double c[6] = {0.31415926, 0.27182818, 0.57721566, 0.69314718, 0.41421356, 0.73205080};
    const double s = 1e-4;
    double r2 = 0;
    for (int i = 0; i < 6; ++i) r2 += (x[i] - c[i]) * (x[i] - c[i]);
    return std::exp(-r2 / (2 * s * s)) / std::pow(s * 2.5066282746310002, 6);
  }
};

TEST(ZeroIntegrand, NarrowPeakNeverFoundIsNotConvergedZero) {
  mcubes::vegas_options opt;
  opt.calls_per_iteration = 10000;
  opt.max_iterations = 6;
  opt.skip = 1;
  opt.min_iterations = 2;
  opt.threads = 2;
  const auto r = mcubes::vegas(narrow_peak_6d{}, mcubes::region<6>::unit(), opt);
  EXPECT_FALSE(r.converged() && r.estimate == 0.0) << "converged 0 +- " << r.error;
  if (r.estimate == 0.0) {
    EXPECT_EQ(r.status, mcubes::status::not_resolved);
  }
  // With these settings the peak is in fact never hit.
  EXPECT_EQ(r.status, mcubes::status::not_resolved);
  for (const auto& rec : r.records) EXPECT_FALSE(std::isnan(rec.estimate) || std::isnan(rec.error));
}

// f = 2 over a box of volume 3 (1 x 1.5 x 2).
struct two {
  double operator()(const mcubes::point<3>&) const { return 2.0; }
};
const mcubes::region<3> box_of_volume_3({0.0, -1.0, 2.0}, {1.0, 0.5, 4.0});
constexpr double value_tol = 1e-12;  // relative: rounding of sums of m sub-cube estimates
// Relative error reported for a constant: the one-pass sub-cube variance (s2 - s1^2/p)/(p(p-1))
// cancels to a few ulps of s2 per sub-cube (jacobians of the uniform map differ by an ulp or so), so
// the error of an exact estimate is rounding noise of order sqrt(eps/m), not exactly 0.
constexpr double rounding_error_tol = 1e-9;
constexpr double max_sigmas = 5.0;

// Before the first accumulated iteration (the skipped ones) there is no weighted estimate: the
// weighted fields are NaN, never a misleading 0 +- 0 with Q = 1; from then on none is NaN.
void expect_weighted_fields_honest(const mcubes::iteration_record& rec, int skip) {
  const bool none = std::isnan(rec.weighted_estimate) && std::isnan(rec.weighted_error) && std::isnan(rec.chi2_dof) &&
                    std::isnan(rec.q);
  const bool all = std::isfinite(rec.weighted_estimate) && std::isfinite(rec.weighted_error) &&
                   std::isfinite(rec.chi2_dof) && std::isfinite(rec.q);
  if (rec.index < skip)
    EXPECT_TRUE(none) << "iteration " << rec.index;
  else
    EXPECT_TRUE(all) << "iteration " << rec.index;
}

// With the map frozen (alpha = 0) the map stays uniform, every estimate is 6 up to rounding with
// zero (floored) variance: the run converges to 6 with a tiny error and no NaN anywhere.
TEST(ConstantIntegrand, FrozenMapGivesTheExactValue) {
  ASSERT_DOUBLE_EQ(box_of_volume_3.volume(), 3.0);
  auto opt = small_options();
  opt.max_iterations = 20;
  opt.alpha = 0;
  const auto r = mcubes::vegas(two{}, box_of_volume_3, opt);
  EXPECT_EQ(r.status, mcubes::status::converged) << "chi2/dof = " << r.chi2_dof;
  EXPECT_NEAR(r.estimate, 6.0, 6.0 * value_tol);
  EXPECT_LE(r.error, 6.0 * rounding_error_tol);
  EXPECT_TRUE(std::isfinite(r.chi2_dof));
  EXPECT_TRUE(std::isfinite(r.q));
  for (const auto& rec : r.records) {
    EXPECT_NEAR(rec.estimate, 6.0, 6.0 * value_tol);
    EXPECT_LE(rec.error, 6.0 * rounding_error_tol);
    expect_weighted_fields_honest(rec, r.options.skip);
  }
}

// With adaptation (default alpha): the first iteration (uniform map) is exact; the bin
// contributions are sums of (f J)^2 over the samples that fall in each bin, so the sampling noise
// of the per-bin sample counts moves the edges even for a constant integrand, and later iterations
// carry a genuine (small) Monte Carlo error. The run still converges to 6 within its error, no NaN.
TEST(ConstantIntegrand, AdaptingMapConvergesWithoutNaN) {
  for (bool symmetric : {false, true}) {
    SCOPED_TRACE(symmetric ? "symmetric map" : "per-axis map");
    auto opt = small_options();
    opt.max_iterations = 20;
    opt.symmetric_map = symmetric;
    const auto r = mcubes::vegas(two{}, box_of_volume_3, opt);
    EXPECT_EQ(r.status, mcubes::status::converged) << "chi2/dof = " << r.chi2_dof;
    EXPECT_NEAR(r.estimate, 6.0, max_sigmas * r.error);
    EXPECT_LE(r.error, opt.rel_tol * 6.0 * 1.01);
    EXPECT_GT(r.error, 0.0);
    EXPECT_TRUE(std::isfinite(r.chi2_dof));
    EXPECT_TRUE(std::isfinite(r.q));
    ASSERT_FALSE(r.records.empty());
    EXPECT_NEAR(r.records[0].estimate, 6.0, 6.0 * value_tol);
    EXPECT_LE(r.records[0].error, 6.0 * rounding_error_tol);
    for (const auto& rec : r.records) {
      EXPECT_TRUE(std::isfinite(rec.estimate) && std::isfinite(rec.error));
      expect_weighted_fields_honest(rec, r.options.skip);
    }
  }
}

}  // namespace

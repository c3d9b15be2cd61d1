// Vector-valued integrands (algorithm/vegas_vector.hpp) on the CPU: one component is bitwise the
// scalar run; the vector chunking; thread-count invariance (4 and 16 components); each component
// within 4 sigma of its exact value; the iteration covariance against a direct computation on the
// same samples (2 and 6 samples per sub-cube); linearly dependent components; convergence of every
// component; failures and the CUDA refusal.

#include <gtest/gtest.h>

#include <array>
#include <cmath>
#include <cstdint>
#include <vector>

#include "mcubes/mcubes.hpp"

#include "support/results.hpp"

namespace {

constexpr double max_pull = 4.0;                  // |estimate - exact| / error, fixed seeds
constexpr double covariance_rel_tolerance = 1e-11;  // engine vs direct sums (different order)

using mcubes_test::same_bits;

struct scalar_peak {
  double operator()(const mcubes::point<2>& x) const {
    return std::exp(-30 * ((x[0] - 0.3) * (x[0] - 0.3) + (x[1] - 0.6) * (x[1] - 0.6)));
  }
};
struct one_component {
  mcubes::values<1> operator()(const mcubes::point<2>& x) const { return {{scalar_peak{}(x)}}; }
};

// f0 = 1 + x0 x1 (1.25), f1 = x0 (0.5), f2 = x0^2 x1 (1/6), f3 = 2 f0 (2.5: linearly dependent on f0)
struct four {
  mcubes::values<4> operator()(const mcubes::point<2>& x) const {
    const double f0 = 1 + x[0] * x[1];
    return {{f0, x[0], x[0] * x[0] * x[1], 2 * f0}};
  }
};
const double four_exact[4] = {1.25, 0.5, 1.0 / 6, 2.5};

mcubes::vegas_options options(int threads) {
  mcubes::vegas_options o;
  o.threads = threads;
  o.calls_per_iteration = 20000;
  o.max_iterations = 12;
  o.adapt_iterations = 6;
  o.skip = 2;
  o.rel_tol = 1e-9;  // run every iteration
  o.n_bins = 50;
  o.seed = 99;
  return o;
}

TEST(VectorCpu, OneComponentIsTheScalarRunBitwise) {
  const auto reg = mcubes::region<2>::unit();
  const mcubes::result s = mcubes::vegas<2>(scalar_peak{}, reg, options(1));
  const mcubes::vector_result v = mcubes::vegas_vector<2>(one_component{}, reg, options(3));
  ASSERT_EQ(v.components, 1);
  EXPECT_TRUE(same_bits(v.estimate[0], s.estimate)) << v.estimate[0] << " vs " << s.estimate;
  EXPECT_TRUE(same_bits(v.error[0], s.error));
  EXPECT_TRUE(same_bits(v.run.estimate, s.estimate));
  EXPECT_EQ(v.run.iterations, s.iterations);
  ASSERT_EQ(v.run.records.size(), s.records.size());
  for (std::size_t k = 0; k < s.records.size(); ++k) {
    EXPECT_TRUE(same_bits(v.run.records[k].estimate, s.records[k].estimate)) << k;
    EXPECT_TRUE(same_bits(v.iterations[k].estimate[0], s.records[k].estimate)) << k;
  }
}

// Chunks of at least vector_chunk_samples samples for N > 1, the scalar chunking for N = 1
TEST(VectorCpu, VectorChunking) {
  static_assert(mcubes::vector_chunk_samples<1> == 0, "one component: the scalar chunking");
  const std::uint64_t s = mcubes::vector_chunk_samples<4>;
  EXPECT_EQ(s, 32u);
  EXPECT_EQ(mcubes::vector_chunk_samples<64>, s);
  const auto scalar = mcubes::make_stratification(2, 20000);
  const auto vec = mcubes::make_stratification(2, 20000, s);
  EXPECT_EQ(scalar.chunk_cubes, 1u);
  EXPECT_EQ(vec.samples_per_cube, 2u);
  EXPECT_EQ(vec.chunk_cubes, 16u);
  EXPECT_EQ(vec.n_chunks, (vec.n_cubes + 15) / 16);
  const auto seven = mcubes::make_stratification(7, 100000, s);  // 4^7 sub-cubes of 6 samples
  EXPECT_EQ(seven.samples_per_cube, 6u);
  EXPECT_EQ(seven.chunk_cubes, 6u);
  EXPECT_EQ(seven.n_chunks, 2731u);  // the last chunk holds 4 sub-cubes
  const auto tiny = mcubes::make_stratification(2, 40, s);  // fewer sub-cubes than a chunk wants
  EXPECT_EQ(tiny.chunk_cubes, tiny.n_cubes);
  EXPECT_EQ(tiny.n_chunks, 1u);
  const auto big = mcubes::make_stratification(3, 1ull << 26, s);  // max_chunks binds
  EXPECT_LE(big.n_chunks, mcubes::max_chunks);
  EXPECT_GE(big.chunk_cubes * big.samples_per_cube, s);
}

TEST(VectorCpu, SameBitsForAnyThreadCount) {
  const auto reg = mcubes::region<2>::unit();
  const auto a = mcubes::vegas_vector<2>(four{}, reg, options(1));
  for (int threads : {2, 3, 4, 7}) {
    SCOPED_TRACE(testing::Message() << threads << " threads");
    mcubes_test::expect_same(a, mcubes::vegas_vector<2>(four{}, reg, options(threads)));
  }
}

// 16 moments w x0^k of alternating signs
struct sixteen {
  mcubes::values<16> operator()(const mcubes::point<2>& x) const {
    const double w = scalar_peak{}(x) + 0.1 * x[1];
    mcubes::values<16> v;
    double m = w;
    for (int k = 0; k < 16; ++k, m *= x[0]) v[k] = k % 2 == 0 ? m : -m;
    return v;
  }
};
TEST(VectorCpu, SixteenComponentsSameBitsForAnyThreadCount) {
  const auto reg = mcubes::region<2>::unit();
  mcubes::vegas_options o = options(1);
  o.calls_per_iteration = 100000;
  o.max_iterations = 5;
  o.adapt_iterations = 3;
  o.skip = 1;
  o.min_iterations = 2;
  const auto a = mcubes::vegas_vector<2>(sixteen{}, reg, o);
  for (int threads : {2, 5}) {
    o.threads = threads;
    SCOPED_TRACE(testing::Message() << threads << " threads");
    mcubes_test::expect_same(a, mcubes::vegas_vector<2>(sixteen{}, reg, o));
  }
  // a covariance matrix: symmetric, non-negative diagonal, |correlation| <= 1
  for (const auto& it : a.iterations)
    for (int i = 0; i < 16; ++i) {
      EXPECT_GT(it.covariance[i * 16 + i], 0) << i;
      for (int j = 0; j < 16; ++j) {
        EXPECT_EQ(it.covariance[i * 16 + j], it.covariance[j * 16 + i]);
        EXPECT_LE(std::fabs(it.covariance[i * 16 + j]), std::sqrt(it.covariance[i * 16 + i] * it.covariance[j * 16 + j]) * (1 + 1e-12));
      }
    }
}

TEST(VectorCpu, EveryComponentWithinFourSigmaAndDependentComponentsExact) {
  mcubes::vegas_options o = options(0);
  o.rel_tol = 1e-4;
  o.max_iterations = 40;
  const auto r = mcubes::vegas_vector<2>(four{}, mcubes::region<2>::unit(), o);
  EXPECT_EQ(r.status(), mcubes::status::converged);
  for (int i = 0; i < 4; ++i) {
    EXPECT_LT(std::fabs(r.estimate[i] - four_exact[i]) / r.error[i], max_pull) << "component " << i;
    EXPECT_LE(r.error[i], o.rel_tol * std::fabs(r.estimate[i])) << "component " << i << " met its tolerance";
  }
  // f3 = 2 f0 on every sample: estimate, covariance and correlation follow exactly (to rounding)
  EXPECT_NEAR(r.estimate[3], 2 * r.estimate[0], 1e-12 * r.estimate[3]);
  EXPECT_NEAR(r.cov(0, 3), 2 * r.cov(0, 0), 1e-9 * r.cov(0, 3));
  EXPECT_NEAR(r.cov(3, 3), 4 * r.cov(0, 0), 1e-9 * r.cov(3, 3));
  EXPECT_NEAR(r.cov(0, 3) / std::sqrt(r.cov(0, 0) * r.cov(3, 3)), 1.0, 1e-9);
  EXPECT_EQ(r.cov(1, 2), r.cov(2, 1));
  // the dependent direction is dropped from the correlated chi2: 3 independent components
  const int acc = r.run.accumulated;
  EXPECT_EQ(r.dof_vector, 3 * acc - 4);
  EXPECT_GT(r.q_vector, 1e-3);
}

// `four` in 7 dimensions (x0, x1 and x6 only): 100000 calls give 4^7 sub-cubes of 6 samples
struct four7 {
  mcubes::values<4> operator()(const mcubes::point<7>& x) const {
    return four{}(mcubes::point<2>{{x[0], 0.5 * (x[1] + x[6])}});
  }
};

// The iteration covariance of a one-iteration run on the uniform map, recomputed directly from the
// same samples (sample points from the stream contract, per sub-cube sums in long double).
template <int D, class F>
void expect_iteration_covariance_matches_direct(const F& f, const mcubes::region<D>& reg, std::uint64_t calls) {
  mcubes::vegas_options o = options(2);
  o.stratification = mcubes::stratification_mode::uniform;  // the direct computation samples the uniform grid
  o.calls_per_iteration = calls;
  o.max_iterations = 1;
  o.adapt_iterations = 0;
  o.skip = 0;
  o.min_iterations = 1;
  const auto r = mcubes::vegas_vector<D>(f, reg, o);
  ASSERT_EQ(r.iterations.size(), 1u);

  const mcubes::stratification st = mcubes::make_stratification(D, o.calls_per_iteration);
  const mcubes::adaptive_map<D> uniform(o.n_bins);
  mcubes::sampling_params<D> sp{};
  for (int j = 0; j < D; ++j) sp.lower[j] = reg.lower()[j], sp.width[j] = reg.width(j);
  sp.g = st.g;
  sp.inv_g = 1.0 / static_cast<double>(st.g);
  sp.n_cubes = st.n_cubes;
  sp.p = st.samples_per_cube;
  sp.chunk_cubes = st.chunk_cubes;
  sp.seed = o.seed;
  sp.iteration = 0;
  const long double p = static_cast<long double>(st.samples_per_cube);
  long double est[4] = {}, cov[4][4] = {};
  for (std::uint64_t c = 0; c < st.n_cubes; ++c) {
    std::uint64_t coord[D];
    mcubes::cube_coordinates<D>(c, st.g, coord);
    long double s1[4] = {}, s2[4][4] = {};
    for (std::uint64_t k = 0; k < st.samples_per_cube; ++k) {
      mcubes::point<D> x;
      int bin[D];
      const double jac = mcubes::make_sample<D>(sp, uniform.view(), coord, c * st.samples_per_cube + k, x, bin);
      const auto v = f(x);
      for (int i = 0; i < 4; ++i) {
        s1[i] += static_cast<long double>(v[i]) * jac;
        for (int j = 0; j < 4; ++j) s2[i][j] += static_cast<long double>(v[i]) * jac * v[j] * jac;
      }
    }
    for (int i = 0; i < 4; ++i) {
      est[i] += s1[i] / p;
      for (int j = 0; j < 4; ++j) cov[i][j] += (s2[i][j] - s1[i] * s1[j] / p) / (p * (p - 1));
    }
  }
  const long double w = reg.volume() / static_cast<double>(st.n_cubes);
  for (int i = 0; i < 4; ++i) {
    const double want = static_cast<double>(w * est[i]);
    // relative to the estimate's error: a component whose integral is 0 (f2 here) has an estimate of
    // cancelling terms
    EXPECT_NEAR(r.iterations[0].estimate[i], want, covariance_rel_tolerance * std::sqrt(static_cast<double>(w * w * cov[i][i])))
        << i;
    for (int j = 0; j < 4; ++j) {
      const double cw = static_cast<double>(w * w * cov[i][j]);
      EXPECT_NEAR(r.iterations[0].covariance[i * 4 + j], cw, covariance_rel_tolerance * std::sqrt(static_cast<double>(w * w * cov[i][i] * w * w * cov[j][j])))
          << i << "," << j;
    }
  }
  // with one iteration, the result's covariance is the iteration's
  for (int t = 0; t < 16; ++t)
    if (t % 5 != 0) {
      EXPECT_NEAR(r.covariance[t], r.iterations[0].covariance[t], 1e-15 * std::fabs(r.covariance[t]) + 1e-300);
    }
}

TEST(VectorCpu, IterationCovarianceMatchesADirectComputation) {
  expect_iteration_covariance_matches_direct<2>(four{}, mcubes::region<2>({0.0, -1.0}, {2.0, 1.0}), 20000);
}

TEST(VectorCpu, IterationCovarianceMatchesADirectComputationWithSixSamplesPerCube) {
  ASSERT_EQ(mcubes::make_stratification(7, 100000).samples_per_cube, 6u);
  std::array<double, 7> lo{}, hi{};
  hi.fill(1.0);
  lo[1] = -1.0, hi[0] = 2.0;
  expect_iteration_covariance_matches_direct<7>(four7{}, mcubes::region<7>(lo, hi), 100000);
}

// Component 1 is much harder than component 0: the run goes on until it meets the tolerance too.
struct easy_and_hard {
  mcubes::values<2> operator()(const mcubes::point<2>& x) const {
    return {{1 + 0.1 * x[0], std::exp(-200 * ((x[0] - 0.7) * (x[0] - 0.7) + (x[1] - 0.2) * (x[1] - 0.2)))}};
  }
};
TEST(VectorCpu, ConvergesOnlyWhenEveryComponentDoes) {
  mcubes::vegas_options o = options(0);
  o.rel_tol = 1e-3;
  o.max_iterations = 60;
  o.skip = 0;
  o.min_iterations = 2;
  const auto r = mcubes::vegas_vector<2>(easy_and_hard{}, mcubes::region<2>::unit(), o);
  ASSERT_EQ(r.status(), mcubes::status::converged);
  for (int i = 0; i < 2; ++i) EXPECT_LE(r.error[i], o.rel_tol * std::fabs(r.estimate[i])) << i;
  // component 0 alone would have stopped at the first possible iteration
  EXPECT_GT(r.run.iterations, o.min_iterations);
}

struct nan_in_component_2 {
  mcubes::values<3> operator()(const mcubes::point<2>& x) const { return {{1.0, x[0], x[1] > 0.9 ? NAN : x[1]}}; }
};
TEST(VectorCpu, NonFiniteComponentNamesThePoint) {
  try {
    (void)mcubes::vegas_vector<2>(nan_in_component_2{}, mcubes::region<2>::unit(), options(2));
    ADD_FAILURE() << "no exception";
  } catch (const mcubes::non_finite_integrand& e) {
    EXPECT_GT(e.point()[1], 0.9);
    EXPECT_TRUE(std::isnan(e.value()));
  }
}

// `four` as a vector array integrand (values row-major (n, 4)), counting its calls and rows
struct four_rows {
  std::uint64_t* calls;
  std::uint64_t* rows;
  void operator()(const double* x, std::size_t n, double* v) const {
    ++*calls;
    *rows += n;
    for (std::size_t i = 0; i < n; ++i) {
      const mcubes::values<4> r = four{}(mcubes::point<2>{{x[2 * i], x[2 * i + 1]}});
      for (int c = 0; c < 4; ++c) v[4 * i + c] = r[c];
    }
  }
};

// Either stratification (VEGAS+ counts: the rows of a group come from its sub-cubes' counts,
// core/array_rows.hpp): bitwise the one-point run for any thread count and group size.
TEST(VectorCpu, ArrayIntegrandIsTheOnePointRunBitwise) {
  const auto reg = mcubes::region<2>({-1.0, 0.0}, {1.0, 2.0});
  for (auto mode : {mcubes::stratification_mode::uniform, mcubes::stratification_mode::adaptive}) {
    mcubes::vegas_options one = options(1);
    one.stratification = mode;
    const auto ref = mcubes::vegas_vector<2>(four{}, reg, one);
    EXPECT_EQ(ref.run.options.stratification, mode);
    for (int threads : {1, 2, 3})
      for (std::uint64_t calls_per_iteration : {20000ull, 300000ull}) {  // one call per tile, and several
        SCOPED_TRACE(testing::Message() << "stratification " << mcubes::to_string(mode) << ", threads " << threads
                                        << ", calls " << calls_per_iteration);
        std::uint64_t calls = 0, rows = 0;
        mcubes::vegas_options o = options(threads);
        o.calls_per_iteration = calls_per_iteration;
        o.stratification = mode;
        const auto got = mcubes::vegas_vector<2>(mcubes::vector_array_function<2, 4, four_rows>{{&calls, &rows}}, reg, o);
        EXPECT_EQ(got.run.options.stratification, mode);
        if (calls_per_iteration == 20000) mcubes_test::expect_same(ref, got);
        // every sample of every pass once: n_eval, plus the bin-scale probe's samples (not counted in n_eval)
        EXPECT_GE(rows, got.run.n_eval);
        EXPECT_LT(rows, got.run.n_eval + got.run.n_eval / 10);
        EXPECT_GE(calls, got.run.records.size());
        if (calls_per_iteration == 300000) {
          EXPECT_GT(calls, 2 * got.run.records.size());  // several groups per pass
          o.threads = 1;
          mcubes_test::expect_same(mcubes::vegas_vector<2>(four{}, reg, o), got);
        }
      }
  }
}

// backend cuda in a translation unit compiled by g++ (no CUDA backend here)
TEST(VectorCpu, CudaBackendOutsideNvccIsRefusedWithAClearMessage) {
  mcubes::vegas_options o = options(1);
  o.backend = mcubes::backend_kind::cuda;
  EXPECT_THROW((void)mcubes::vegas_vector<2>(four{}, mcubes::region<2>::unit(), o), mcubes::invalid_input);
}

}  // namespace

// vegas_vector_with's `components` (n < N: the Python module's widths): the first n components of
// a width-4 run, bit for bit, whatever the other columns hold; those columns enter nothing else.
struct two_of_four {
  mcubes::values<4> operator()(const mcubes::point<2>& x) const {
    const double f0 = 1 + x[0] * x[1];
    return {{f0, x[0], 0.0, 0.0}};
  }
};

TEST(VectorCpu, FewerComponentsReportedAreTheFirstOfTheWiderRun) {
  const mcubes::vegas_options o = options(2);
  mcubes::cpu_backend backend(2);
  const auto all = mcubes::vegas_vector_with<2, 4>(four{}, mcubes::region<2>::unit(), o, backend);
  const auto two = mcubes::vegas_vector_with<2, 4>(two_of_four{}, mcubes::region<2>::unit(), o, backend, {}, 2);
  ASSERT_EQ(two.components, 2);
  ASSERT_EQ(two.estimate.size(), 2u);
  ASSERT_EQ(two.covariance.size(), 4u);
  EXPECT_EQ(two.run.iterations, all.run.iterations);
  for (int i = 0; i < 2; ++i) {
    EXPECT_EQ(two.estimate[i], all.estimate[i]) << i;
    EXPECT_EQ(two.error[i], all.error[i]) << i;
    for (int j = 0; j < 2; ++j) EXPECT_EQ(two.cov(i, j), all.cov(i, j)) << i << "," << j;
    EXPECT_LT(std::fabs(two.estimate[i] - four_exact[i]) / two.error[i], max_pull) << "component " << i;
  }
  EXPECT_GT(two.dof_vector, 0);
  EXPECT_TRUE(std::isfinite(two.chi2_dof_vector));
  EXPECT_THROW((mcubes::vegas_vector_with<2, 4>(four{}, mcubes::region<2>::unit(), o, backend, {}, 5)), mcubes::invalid_input);
  EXPECT_THROW((mcubes::vegas_vector_with<2, 4>(four{}, mcubes::region<2>::unit(), o, backend, {}, 0)), mcubes::invalid_input);
}

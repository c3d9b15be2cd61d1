// Array integrands (integrand.hpp, backend/cpu/array_path.hpp): an integrand that evaluates many
// points per call gives bitwise the result of the one-point functor computing the same values, on
// every method (Vegas through the CPU backend's array path, either stratification: VEGAS+ counts or
// the uniform grid; plain Monte Carlo and the midpoint rule
// through groups of chunks), for any number of threads, with the probe pass (stride > 1), the
// No-Adjust passes, a chunk of many sub-cubes and the serial reference sampler; failures name the
// same sample; exceptions of the array call propagate.

#include <gtest/gtest.h>

#include <atomic>
#include <cmath>
#include <cstdint>
#include <limits>
#include <stdexcept>
#include <string>
#include <vector>

#include "mcubes/mcubes.hpp"

#include "support/results.hpp"

namespace {

using mcubes_test::same_bits;

#define EXPECT_SAME_BITS(a, b, what) EXPECT_TRUE(same_bits((a), (b))) << what << ": " << (a) << " vs " << (b)

void expect_identical(const mcubes::result& a, const mcubes::result& b, const std::string& label) {
  SCOPED_TRACE(label);
  mcubes_test::expect_same_result(a, b);
}

// A polynomial with a peak, the same arithmetic in both forms: 1 + sum_i c_i x_i^2 (1 - x_i)^3
// times 7 x_0^4 (x_0 < 0.3 shifted); cheap, asymmetric, and adapts the map.
template <int D>
double poly(const double* x) {
  double s = 1;
  for (int i = 0; i < D; ++i) {
    const double y = x[i], z = 1 - y;
    s += (i + 1) * y * y * z * z * z;
  }
  return s * (7 * x[0] * x[0] * x[0] * x[0] + 0.01);
}

template <int D>
struct poly_scalar {
  double operator()(const mcubes::point<D>& x) const { return poly<D>(x.x); }
};

// The array form of a point function fn, counting its calls and points (the counters are shared:
// copies of the functor count in the same place).
template <int D, double (*fn)(const double*)>
struct counted_array {
  static constexpr bool array_integrand = true;
  std::atomic<std::uint64_t>* calls = nullptr;
  std::atomic<std::uint64_t>* points = nullptr;
  void operator()(const double* x, std::size_t n, double* values) const {
    if (calls) ++*calls, *points += n;
    for (std::size_t i = 0; i < n; ++i) values[i] = fn(x + i * D);
  }
  double operator()(const mcubes::point<D>& x) const {
    double v;
    (*this)(x.x, 1, &v);
    return v;
  }
};
template <int D>
using poly_array = counted_array<D, &poly<D>>;

static_assert(mcubes::is_array_integrand_v<poly_array<3>, 3>);
static_assert(!mcubes::is_array_integrand_v<poly_scalar<3>, 3>);
static_assert(mcubes::is_integrand_v<poly_array<3>, 3>);

template <int D, class Scalar = poly_scalar<D>, class Array = poly_array<D>>
void check_vegas(std::uint64_t calls, int iterations,
                 mcubes::stratification_mode mode = mcubes::stratification_mode::uniform) {
  mcubes::vegas_options opt;
  opt.stratification = mode;
  opt.calls_per_iteration = calls;
  opt.max_iterations = iterations;
  opt.adapt_iterations = iterations / 2;  // V-Sample (with the probe) and No-Adjust passes
  opt.skip = 1;
  opt.min_iterations = 1;
  opt.rel_tol = 1e-12;  // runs every iteration
  opt.seed = 11;
  opt.threads = 1;
  const mcubes::result ref = mcubes::vegas(Scalar{}, mcubes::region<D>::unit(), opt);
  ASSERT_EQ(ref.iterations, iterations);
  EXPECT_EQ(ref.options.stratification, mode);
  for (int threads : {1, 2, 3}) {
    opt.threads = threads;
    std::atomic<std::uint64_t> n_calls{0}, n_points{0};
    const mcubes::result r = mcubes::vegas(Array{&n_calls, &n_points}, mcubes::region<D>::unit(), opt);
    expect_identical(ref, r, "D = " + std::to_string(D) + ", threads = " + std::to_string(threads));
    // every sample once per pass, in calls of thousands of points
    EXPECT_GE(n_points.load(), ref.n_eval);
    EXPECT_GE(n_points.load() / n_calls.load(), 1000u);
  }
}

TEST(ArrayIntegrand, VegasBitwiseTheOnePointFunctor1D) { check_vegas<1>(100000, 6); }
TEST(ArrayIntegrand, VegasBitwiseTheOnePointFunctor3D) { check_vegas<3>(200000, 6); }
TEST(ArrayIntegrand, VegasBitwiseTheOnePointFunctor8D) { check_vegas<8>(1000000, 4); }
// More than 2^20 sub-cubes: chunks of several sub-cubes.
TEST(ArrayIntegrand, VegasBitwiseWithChunksOfManySubCubes) { check_vegas<2>(5000000, 3); }

// VEGAS+ (the default stratification): the per-sub-cube counts change every adapting iteration.
constexpr auto adaptive = mcubes::stratification_mode::adaptive;
TEST(ArrayIntegrand, VegasPlusBitwiseTheOnePointFunctor1D) { check_vegas<1>(100000, 6, adaptive); }
TEST(ArrayIntegrand, VegasPlusBitwiseTheOnePointFunctor3D) { check_vegas<3>(200000, 6, adaptive); }
TEST(ArrayIntegrand, VegasPlusBitwiseTheOnePointFunctor8D) { check_vegas<8>(1000000, 4, adaptive); }

// A narrow peak off the grid (width 1e-3 at (0.3141, 0.2718)): VEGAS+ gives its sub-cubes tens of
// thousands of samples each, so a sub-cube's samples run over several segments and calls (slices of
// 32768 points end inside a sub-cube).
template <int D>
double narrow_peak(const double* x) {
  double r2 = 1e-6;
  for (int i = 0; i < D; ++i) {
    const double c = i == 0 ? 0.3141 : 0.2718;
    r2 += (x[i] - c) * (x[i] - c);
  }
  return 1e-6 / r2;
}
template <int D>
struct narrow_scalar {
  double operator()(const mcubes::point<D>& x) const { return narrow_peak<D>(x.x); }
};
template <int D>
using narrow_array = counted_array<D, &narrow_peak<D>>;
TEST(ArrayIntegrand, VegasPlusBitwiseWithSubCubesOverSeveralCalls) {
  check_vegas<2, narrow_scalar<2>, narrow_array<2>>(2000000, 6, adaptive);
}

TEST(ArrayIntegrand, SerialSamplerAndRegionBitwise) {
  mcubes::vegas_options opt;
  opt.stratification = mcubes::stratification_mode::uniform;  // what an array integrand samples
  opt.calls_per_iteration = 50000;
  opt.max_iterations = 5;
  opt.rel_tol = 1e-12;
  opt.skip = 0;
  opt.min_iterations = 1;
  const mcubes::region<4> reg({-1, 0, 2, 0.5}, {1, 0.5, 3, 4});
  const mcubes::result ref = mcubes::vegas(poly_scalar<4>{}, reg, opt);
  mcubes::cpu_backend serial(2);
  serial.serial_sampler = true;  // the one-point calls of core/sampler.hpp's sample_chunk
  expect_identical(ref, mcubes::vegas_with(poly_array<4>{}, reg, opt, serial), "serial sampler");
  expect_identical(ref, mcubes::vegas(poly_array<4>{}, reg, opt), "array path");
}

// Array integrands of one value sample the stratification the options ask (VEGAS+ by default) and
// their result's options say which; an integrator continues such a run bitwise.
TEST(ArrayIntegrand, SamplesTheDefaultVegasPlusAndSaysSo) {
  mcubes::vegas_options opt;
  opt.calls_per_iteration = 30000;
  opt.max_iterations = 3;
  opt.skip = 0;
  opt.min_iterations = 1;
  opt.rel_tol = 1e-12;
  ASSERT_EQ(opt.stratification, mcubes::stratification_mode::adaptive);  // the default
  const mcubes::result r = mcubes::vegas(poly_array<3>{}, mcubes::region<3>::unit(), opt);
  EXPECT_EQ(r.options.stratification, mcubes::stratification_mode::adaptive);
  expect_identical(mcubes::vegas(poly_scalar<3>{}, mcubes::region<3>::unit(), opt), r, "the VEGAS+ one-point run");
  opt.stratification = mcubes::stratification_mode::uniform;
  const mcubes::result u = mcubes::vegas(poly_array<3>{}, mcubes::region<3>::unit(), opt);
  EXPECT_EQ(u.options.stratification, mcubes::stratification_mode::uniform);
  expect_identical(mcubes::vegas(poly_scalar<3>{}, mcubes::region<3>::unit(), opt), u, "the uniform one-point run");
  // train then measure with an integrator: the VEGAS+ allocation continues, bitwise the one-point runs
  opt.stratification = mcubes::stratification_mode::adaptive;
  opt.threads = 2;
  mcubes::integrator<3> a(mcubes::region<3>::unit(), opt), s(mcubes::region<3>::unit(), opt);
  a.integrate(poly_array<3>{});
  s.integrate(poly_scalar<3>{});
  expect_identical(s.integrate(poly_scalar<3>{}), a.integrate(poly_array<3>{}), "the integrator's second call");
}

TEST(ArrayIntegrand, ArrayFunctionAdaptor) {
  const auto g = [](const double* x, std::size_t n, double* v) {
    for (std::size_t i = 0; i < n; ++i) v[i] = poly<3>(x + 3 * i);
  };
  const mcubes::array_function<3, decltype(g)> f{g};
  static_assert(mcubes::is_array_integrand_v<decltype(f), 3>);
  const mcubes::point<3> x{{0.25, 0.5, 0.75}};
  EXPECT_SAME_BITS(f(x), poly<3>(x.x), "one-point call");
  mcubes::vegas_options opt;
  opt.stratification = mcubes::stratification_mode::uniform;  // what an array integrand samples
  opt.calls_per_iteration = 30000;
  opt.max_iterations = 3;
  opt.skip = 0;
  opt.min_iterations = 1;
  opt.rel_tol = 1e-12;
  expect_identical(mcubes::vegas(poly_scalar<3>{}, mcubes::region<3>::unit(), opt),
                   mcubes::vegas(f, mcubes::region<3>::unit(), opt), "array_function");
}

TEST(ArrayIntegrand, IntegratorContinuesBitwise) {
  mcubes::vegas_options opt;
  opt.stratification = mcubes::stratification_mode::uniform;  // what an array integrand samples
  opt.calls_per_iteration = 40000;
  opt.max_iterations = 3;
  opt.skip = 0;
  opt.min_iterations = 1;
  opt.rel_tol = 1e-12;
  mcubes::integrator<3> a(mcubes::region<3>::unit(), opt), b(mcubes::region<3>::unit(), opt);
  for (int k = 0; k < 2; ++k)
    expect_identical(a.integrate(poly_scalar<3>{}), b.integrate(poly_array<3>{}), "call " + std::to_string(k));
  EXPECT_EQ(a.edges(), b.edges());
}

TEST(ArrayIntegrand, PlainMonteCarloBitwise) {
  for (std::uint64_t n : {std::uint64_t(1000), std::uint64_t(1000003), std::uint64_t(20000000)})  // 20 samples a chunk
    for (int threads : {1, 3}) {
      mcubes::plain_mc_options opt;
      opt.samples = n;
      opt.threads = threads;
      opt.seed = 5;
      expect_identical(mcubes::plain_mc(poly_scalar<3>{}, mcubes::region<3>::unit(), opt),
                       mcubes::plain_mc(poly_array<3>{}, mcubes::region<3>::unit(), opt),
                       "plain_mc N = " + std::to_string(n) + ", threads = " + std::to_string(threads));
    }
}

TEST(ArrayIntegrand, MidpointBitwise) {
  for (std::uint64_t n : {std::uint64_t(7), std::uint64_t(105), std::uint64_t(1000)})
    for (int threads : {1, 3}) {
      mcubes::midpoint_options opt;
      opt.threads = threads;
      const mcubes::region<2> reg({0, -1}, {1, 2});
      expect_identical(mcubes::midpoint(poly_scalar<2>{}, reg, n, opt), mcubes::midpoint(poly_array<2>{}, reg, n, opt),
                       "midpoint n = " + std::to_string(n) + ", threads = " + std::to_string(threads));
    }
}

// NaN for x_0 > 0.9: the first such sample in index order is reported, the same as the scalar's.
template <int D>
struct nan_beyond {
  static constexpr bool array_integrand = true;
  void operator()(const double* x, std::size_t n, double* values) const {
    for (std::size_t i = 0; i < n; ++i) values[i] = (*this)(*reinterpret_cast<const mcubes::point<D>*>(x + i * D));
  }
  double operator()(const mcubes::point<D>& x) const {
    return x[0] > 0.9 ? std::numeric_limits<double>::quiet_NaN() : 1 + x[D - 1];
  }
};
template <int D>
struct nan_beyond_scalar {
  double operator()(const mcubes::point<D>& x) const { return nan_beyond<D>{}(x); }
};

template <class F, class Run>
mcubes::non_finite_integrand caught(const F& f, const Run& run) {
  try {
    run(f);
  } catch (const mcubes::non_finite_integrand& e) {
    return e;
  }
  ADD_FAILURE() << "no non_finite_integrand";
  return mcubes::non_finite_integrand(0, 0, {}, 0);
}

TEST(ArrayIntegrand, NonFiniteNamesTheSameSample) {
  const auto vegas = [](const auto& f) {
    mcubes::vegas_options opt;
    opt.stratification = mcubes::stratification_mode::uniform;  // what an array integrand samples
    opt.calls_per_iteration = 100000;
    opt.threads = 2;
    mcubes::vegas(f, mcubes::region<2>::unit(), opt);
  };
  const auto plain = [](const auto& f) {
    mcubes::plain_mc_options opt;
    opt.threads = 2;
    mcubes::plain_mc(f, mcubes::region<2>::unit(), opt);
  };
  const auto mid = [](const auto& f) { mcubes::midpoint(f, mcubes::region<2>::unit(), 300); };
  for (int k = 0; k < 3; ++k) {
    SCOPED_TRACE("method " + std::to_string(k));
    const auto a = k == 0   ? caught(nan_beyond<2>{}, vegas)
                   : k == 1 ? caught(nan_beyond<2>{}, plain)
                            : caught(nan_beyond<2>{}, mid);
    const auto b = k == 0   ? caught(nan_beyond_scalar<2>{}, vegas)
                   : k == 1 ? caught(nan_beyond_scalar<2>{}, plain)
                            : caught(nan_beyond_scalar<2>{}, mid);
    EXPECT_EQ(a.sample_index(), b.sample_index());
    EXPECT_EQ(a.point(), b.point());
    ASSERT_EQ(a.point().size(), 2u);
    EXPECT_GT(a.point()[0], 0.9);
    EXPECT_TRUE(std::isnan(a.value()));
  }
}

struct throws_at_call {
  static constexpr bool array_integrand = true;
  void operator()(const double*, std::size_t, double*) const { throw std::runtime_error("from the array call"); }
  double operator()(const mcubes::point<2>&) const { return 1; }
};

TEST(ArrayIntegrand, ExceptionsOfTheCallPropagate) {
  mcubes::vegas_options opt;
  opt.stratification = mcubes::stratification_mode::uniform;  // what an array integrand samples
  opt.calls_per_iteration = 100000;
  for (int threads : {1, 2}) {
    opt.threads = threads;
    EXPECT_THROW(mcubes::vegas(throws_at_call{}, mcubes::region<2>::unit(), opt), std::runtime_error);
  }
  EXPECT_THROW(mcubes::plain_mc(throws_at_call{}, mcubes::region<2>::unit()), std::runtime_error);
  EXPECT_THROW(mcubes::midpoint(throws_at_call{}, mcubes::region<2>::unit(), 100), std::runtime_error);
}

TEST(ArrayIntegrand, TileChunksFillACall) {
  using mcubes::cpu_detail::tile_chunks;
  EXPECT_EQ((tile_chunks<2, poly_scalar<2>>(2)), 1024u);
  EXPECT_EQ((tile_chunks<2, poly_array<2>>(2)), 16384u);
  EXPECT_EQ((tile_chunks<2, poly_array<2>>(100000)), 1024u);
  EXPECT_EQ(mcubes::array_group_chunks(5, 16), 8u);
  EXPECT_EQ(mcubes::array_group_chunks(1u << 20, 16), 2048u);
  EXPECT_EQ(mcubes::array_group_chunks(1u << 20, 100000), 1u);
}

}  // namespace

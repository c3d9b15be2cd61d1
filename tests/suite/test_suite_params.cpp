// The parameters of the suite (mcubes/suite.hpp: Genz's difficulty a and shift u of f1..f6):
//  - at the default parameters every functor gives bitwise the values of the paper-form integrands
//    (copied below as they were before the parameters existed), at many points, in both call forms,
//    and a Vegas run gives bitwise the same result;
//  - exact values as functions of (a, u, d) against independent quadrature of the functors themselves:
//    nested adaptive Gauss-Kronrod (Boost.Math) in d = 1, 2, 3 at several (a, u) per family, GSL's
//    QAGS in d = 1, 2 where GSL is installed, and in higher d the one-dimensional factors of each
//    closed form (line integrals of the D-dimensional functor, the complex factors of f1, the Laplace
//    representation of f3) by Boost.Math quadrature up to d = 32;
//  - the guards: parameters outside their range, overflow of the integrand, and f3's cancellation
//    bound throw invalid_input naming the parameter; wherever f3's exact value is returned it agrees
//    with quadrature;
//  - a short seeded Vegas run at non-default parameters lands within kMaxPull reported standard
//    deviations of the exact value.
// Every check is deterministic (fixed seeds), with named tolerances.

#include <gtest/gtest.h>

#include <boost/math/quadrature/exp_sinh.hpp>
#include <boost/math/quadrature/gauss_kronrod.hpp>
#include <cctype>
#include <cmath>
#include <complex>
#include <cstdint>
#include <cstring>
#include <functional>
#include <limits>
#include <mcubes/integrand.hpp>
#include <mcubes/mcubes.hpp>
#include <mcubes/suite.hpp>
#include <string>
#include <type_traits>
#include <vector>

#if defined(MCUBES_TEST_HAVE_GSL)
#include <gsl/gsl_errno.h>
#include <gsl/gsl_integration.h>
#endif

#include "support/results.hpp"

namespace {

namespace suite = mcubes::suite;
using mcubes::point;

// Relative tolerance of an exact value against quadrature of the functor (relative to the integral
// of |f|, which is |I| except for f1). The functors are evaluated in double, so quadrature reaches
// ~1e-14; 1e-10 leaves room for the nested rules' error estimates.
constexpr double kQuadratureRelTol = 1e-10;
// The same for products of up to 32 one-dimensional quadratures (higher d).
constexpr double kProductRelTol = 1e-9;
// Error target and depth of each adaptive Gauss-Kronrod call.
constexpr double kGkTol = 1e-13;
constexpr unsigned kGkMaxDepth = 12;
// The same for a scale (the integral of |f|), which needs only a few digits.
constexpr double kScaleTol = 1e-6;
constexpr unsigned kScaleMaxDepth = 8;
// Largest accepted |estimate - exact| of a seeded Vegas run, in units of its reported standard
// deviation. Six runs at fixed seeds: a correct error estimate exceeds 4 sigma with probability ~4e-4.
constexpr double kMaxPull = 4.0;

using mcubes_test::same_bits;

// ---------------------------------------------------------------------------------------------
// The paper-form integrands, exactly as suite.hpp computed them before they took parameters.
namespace paper {
struct f1 {
  template <int D>
  double operator()(const point<D>& x) const {
    double s = 0;
    for (int j = 0; j < D; ++j) s += (j + 1) * x[j];
    return cos(s);
  }
};
struct f2 {
  static constexpr double a2 = 1.0 / (50.0 * 50.0);
  template <int D>
  double operator()(const point<D>& x) const {
    double p = 1;
    for (int j = 0; j < D; ++j) {
      const double u = x[j] - 0.5;
      p *= 1.0 / (a2 + u * u);
    }
    return p;
  }
};
struct f3 {
  template <int D>
  double operator()(const point<D>& x) const {
    double s = 1;
    for (int j = 0; j < D; ++j) s += (j + 1) * x[j];
    const double inv = 1.0 / s;
    double r = inv;
    for (int j = 0; j < D; ++j) r *= inv;
    return r;
  }
};
struct f4 {
  template <int D>
  double operator()(const point<D>& x) const {
    double s = 0;
    for (int j = 0; j < D; ++j) {
      const double u = x[j] - 0.5;
      s += u * u;
    }
    return exp(-625.0 * s);
  }
};
struct f5 {
  template <int D>
  double operator()(const point<D>& x) const {
    double s = 0;
    for (int j = 0; j < D; ++j) s += fabs(x[j] - 0.5);
    return exp(-10.0 * s);
  }
};
struct f6 {
  template <int D>
  double operator()(const point<D>& x) const {
    double s = 0;
    for (int j = 0; j < D; ++j) {
      const int i = j + 1;
      if (!(x[j] < (3 + i) / 10.0)) return 0.0;
      s += (i + 4) * x[j];
    }
    return exp(s);
  }
};
}  // namespace paper

// Deterministic point k in [lo, hi]^D (a Weyl sequence).
template <int D>
point<D> weyl_point(int k, double lo, double hi) {
  point<D> x;
  for (int j = 0; j < D; ++j) {
    const double t = 0.6180339887498949 * (k + 1) + 0.7548776662466927 * (j + 1);
    x[j] = lo + (hi - lo) * (t - std::floor(t));
  }
  return x;
}

// The points of the bitwise comparison: Weyl points of the unit cube, the same pulled towards the
// centre (the peaks of f2, f4, f5), points inside f6's thresholds, and f6's thresholds themselves
// with their neighbouring doubles on every axis.
template <int D>
std::vector<point<D>> comparison_points() {
  std::vector<point<D>> pts;
  for (int k = 0; k < 4096; ++k) {
    pts.push_back(weyl_point<D>(k, 0.0, 1.0));
    point<D> c = weyl_point<D>(k, 0.0, 1.0);
    for (int j = 0; j < D; ++j) c[j] = 0.5 + (c[j] - 0.5) * 0.05;
    pts.push_back(c);
    pts.push_back(weyl_point<D>(k, 0.0, 0.4));
  }
  for (int j = 0; j < D; ++j) {
    const double t = (3 + (j + 1)) / 10.0;
    for (const double v : {std::nextafter(t, 0.0), t, std::nextafter(t, 1.0)}) {
      point<D> x = weyl_point<D>(j, 0.0, 0.4);
      x[j] = v;
      pts.push_back(x);
    }
  }
  return pts;
}

template <class F, class Paper, int D>
void expect_bitwise(const char* name, const std::vector<point<D>>& pts) {
  const F f{};                           // default-constructed: the paper's parameters
  const F g{typename F::params_type{}};  // the parameter struct's defaults, explicitly
  const typename F::params_type p{};
  int mismatches = 0;
  for (const point<D>& x : pts) {
    const double ref = Paper{}(x);
    if (!same_bits(f(x), ref) || !same_bits(g(x), ref) || !same_bits(F{}(x, p), ref)) {
      if (++mismatches <= 3) ADD_FAILURE() << name << " d = " << D << ": " << f(x) << " vs the paper form's " << ref;
    }
  }
  EXPECT_EQ(mismatches, 0) << name << " d = " << D << ", " << pts.size() << " points";
}

template <int D>
void check_defaults_bitwise() {
  const std::vector<point<D>> pts = comparison_points<D>();
  expect_bitwise<suite::f1_oscillatory, paper::f1>("f1", pts);
  expect_bitwise<suite::f2_product_peak, paper::f2>("f2", pts);
  expect_bitwise<suite::f3_corner_peak, paper::f3>("f3", pts);
  expect_bitwise<suite::f4_gaussian, paper::f4>("f4", pts);
  expect_bitwise<suite::f5_c0, paper::f5>("f5", pts);
  expect_bitwise<suite::f6_discontinuous, paper::f6>("f6", pts);
}

TEST(SuiteParams, DefaultsAreBitwiseThePaperFormDim1) { check_defaults_bitwise<1>(); }
TEST(SuiteParams, DefaultsAreBitwiseThePaperFormDim3) { check_defaults_bitwise<3>(); }
TEST(SuiteParams, DefaultsAreBitwiseThePaperFormDim6) { check_defaults_bitwise<6>(); }
TEST(SuiteParams, DefaultsAreBitwiseThePaperFormDim8) { check_defaults_bitwise<8>(); }
TEST(SuiteParams, DefaultsAreBitwiseThePaperFormDim32) { check_defaults_bitwise<32>(); }

// A whole Vegas run (adapting and not) at the default parameters is bitwise that of the paper form.
template <int D, class F, class Paper>
void expect_same_run(const char* name) {
  mcubes::vegas_options o;
  o.backend = mcubes::backend_kind::cpu;
  o.calls_per_iteration = 20000;
  o.max_iterations = 8;
  o.adapt_iterations = 4;
  o.skip = 0;
  o.rel_tol = 1e-12;  // never converges: every iteration runs
  o.seed = 11;
  const mcubes::result a = mcubes::vegas<D>(F{}, mcubes::region<D>::unit(), o);
  const mcubes::result b = mcubes::vegas<D>(Paper{}, mcubes::region<D>::unit(), o);
  SCOPED_TRACE(name);
  mcubes_test::expect_same_result(a, b);
}

TEST(SuiteParams, DefaultRunsAreBitwiseThePaperForm) {
  expect_same_run<5, suite::f1_oscillatory, paper::f1>("f1");
  expect_same_run<6, suite::f2_product_peak, paper::f2>("f2");
  expect_same_run<3, suite::f3_corner_peak, paper::f3>("f3");
  expect_same_run<8, suite::f4_gaussian, paper::f4>("f4");
  expect_same_run<8, suite::f5_c0, paper::f5>("f5");
  expect_same_run<6, suite::f6_discontinuous, paper::f6>("f6");
}

// The two call forms agree bitwise at other parameters too: f{p}(x) == f(x, p), the functor a batch
// member integrates (core/batch.hpp's with_parameters) and the one the command runs.
TEST(SuiteParams, BothCallFormsAgreeAtOtherParameters) {
  const std::vector<point<4>> pts = comparison_points<4>();
  const suite::f1_params p1{2.5, 0.3};
  const suite::f2_params p2{7, 0.2};
  const suite::f3_params p3{3};
  const suite::f4_params p4{9, 0.8};
  const suite::f5_params p5{4, 0.1};
  const suite::f6_params p6{1.7, 0.25};
  for (const point<4>& x : pts) {
    ASSERT_TRUE(same_bits(suite::f1_oscillatory{p1}(x), suite::f1_oscillatory{}(x, p1)));
    ASSERT_TRUE(same_bits(suite::f2_product_peak{p2}(x), suite::f2_product_peak{}(x, p2)));
    ASSERT_TRUE(same_bits(suite::f3_corner_peak{p3}(x), suite::f3_corner_peak{}(x, p3)));
    ASSERT_TRUE(same_bits(suite::f4_gaussian{p4}(x), suite::f4_gaussian{}(x, p4)));
    ASSERT_TRUE(same_bits(suite::f5_c0{p5}(x), suite::f5_c0{}(x, p5)));
    ASSERT_TRUE(same_bits(suite::f6_discontinuous{p6}(x), suite::f6_discontinuous{}(x, p6)));
  }
  // and the parameters do change the values (a parameter that is ignored fails here)
  const point<4> x = weyl_point<4>(7, 0.0, 0.2);
  const suite::f1_params u1{1.0, 0.3};
  const suite::f2_params u2{50.0, 0.2};
  const suite::f4_params u4{25.0, 0.2};
  const suite::f5_params u5{10.0, 0.1};
  const suite::f6_params u6{1.0, 0.25};
  EXPECT_NE(suite::f1_oscillatory{p1}(x), suite::f1_oscillatory{}(x));
  EXPECT_NE(suite::f1_oscillatory{u1}(x), suite::f1_oscillatory{}(x));
  EXPECT_NE(suite::f2_product_peak{p2}(x), suite::f2_product_peak{}(x));
  EXPECT_NE(suite::f2_product_peak{u2}(x), suite::f2_product_peak{}(x));
  EXPECT_NE(suite::f3_corner_peak{p3}(x), suite::f3_corner_peak{}(x));
  EXPECT_NE(suite::f4_gaussian{p4}(x), suite::f4_gaussian{}(x));
  EXPECT_NE(suite::f4_gaussian{u4}(x), suite::f4_gaussian{}(x));
  EXPECT_NE(suite::f5_c0{p5}(x), suite::f5_c0{}(x));
  EXPECT_NE(suite::f5_c0{u5}(x), suite::f5_c0{}(x));
  EXPECT_NE(suite::f6_discontinuous{p6}(x), suite::f6_discontinuous{}(x));
  point<4> cut = x;
  cut[0] = 0.3;  // inside the default threshold 0.4, outside u = 0.25
  EXPECT_EQ(suite::f6_discontinuous{u6}(cut), 0.0);
  EXPECT_GT(suite::f6_discontinuous{}(cut), 0.0);
}

// The functors and their parameters satisfy the integrand contract for host and device.
TEST(SuiteParams, FunctorsAreTriviallyCopyableIntegrands) {
  static_assert(std::is_trivially_copyable_v<suite::f1_oscillatory> && std::is_trivially_copyable_v<suite::f6_params>);
  EXPECT_TRUE((mcubes::is_device_integrand_v<suite::f2_product_peak, 6>));
  EXPECT_TRUE((mcubes::is_device_integrand_v<suite::f6_discontinuous, 32>));
  EXPECT_TRUE((mcubes::is_device_integrand_v<suite::f3_corner_peak, 1>));
}

// ---------------------------------------------------------------------------------------------
// Independent quadrature.

using gk31 = boost::math::quadrature::gauss_kronrod<double, 31>;

// Adaptive Gauss-Kronrod over [0,1] split at the cuts inside (0,1), to the relative error `tol`.
double gk_unit(const std::function<double(double)>& g, const std::vector<double>& cuts, double tol = kGkTol,
               unsigned max_depth = kGkMaxDepth) {
  double lo = 0, sum = 0;
  std::vector<double> ends;
  for (const double c : cuts)
    if (c > 0 && c < 1) ends.push_back(c);
  ends.push_back(1);
  for (const double hi : ends) {
    if (hi > lo) sum += gk31::integrate(g, lo, hi, max_depth, tol);
    lo = hi;
  }
  return sum;
}

// Nested adaptive Gauss-Kronrod of f over [0,1]^D (axis j split at cuts[j]); with `absolute`, a
// rough integral of |f| (a scale for the comparison: |f| has kinks that are not cut, so only a few
// digits are asked).
template <int D, class F>
double nested_gk(const F& f, const std::vector<std::vector<double>>& cuts, bool absolute = false) {
  point<D> x{};
  std::function<double(int)> level = [&](int axis) -> double {
    return gk_unit(
        [&, axis](double t) {
          x[axis] = t;
          if (axis + 1 == D) return absolute ? std::fabs(f(x)) : f(x);
          return level(axis + 1);
        },
        cuts[static_cast<std::size_t>(axis)], absolute ? kScaleTol : kGkTol, absolute ? kScaleMaxDepth : kGkMaxDepth);
  };
  return level(0);
}

// The kinks, peaks and discontinuities of each family on axis j (0-based), for the quadrature.
std::vector<std::vector<double>> cuts_at(int d, const std::function<std::vector<double>(int)>& per_axis) {
  std::vector<std::vector<double>> c;
  for (int j = 0; j < d; ++j) c.push_back(per_axis(j));
  return c;
}

::testing::AssertionResult agree(double quadrature, double exact, double tol, double scale) {
  if (std::fabs(quadrature - exact) <= tol * scale) return ::testing::AssertionSuccess();
  return ::testing::AssertionFailure() << "quadrature " << quadrature << " vs exact " << exact << ": difference "
                                       << std::fabs(quadrature - exact) << " > " << tol << " * " << scale;
}

// Every family at the paper's parameters (sharp peaks: d <= 2) and at two or three other points.
template <int D>
void check_nested_family_values() {
  SCOPED_TRACE("d = " + std::to_string(D));
  const bool sharp_ok = D <= 2;
  for (const suite::f1_params p :
       {suite::f1_params{}, suite::f1_params{0.5, 0.3}, suite::f1_params{3.0, 0.8}, suite::f1_params{1.7, 0.125}}) {
    const suite::f1_oscillatory f{p};
    const auto none = cuts_at(D, [](int) { return std::vector<double>{}; });
    const double q = nested_gk<D>(f, none), scale = nested_gk<D>(f, none, true);
    EXPECT_TRUE(agree(q, suite::exact_f1(D, p), kQuadratureRelTol, scale)) << "f1 " << suite::params_text(p);
  }
  for (const suite::f2_params p : {suite::f2_params{5, 0.3}, suite::f2_params{12, 0.9}, suite::f2_params{2, 0.0}}) {
    const double q = nested_gk<D>(suite::f2_product_peak{p}, cuts_at(D, [&](int) { return std::vector<double>{p.u}; }));
    EXPECT_TRUE(agree(q, suite::exact_f2(D, p), kQuadratureRelTol, q)) << "f2 " << suite::params_text(p);
  }
  if (sharp_ok) {
    const double q = nested_gk<D>(suite::f2_product_peak{}, cuts_at(D, [](int) { return std::vector<double>{0.5}; }));
    EXPECT_TRUE(agree(q, suite::exact_f2(D), kQuadratureRelTol, q)) << "f2 defaults";
  }
  for (const suite::f3_params p :
       {suite::f3_params{}, suite::f3_params{0.3}, suite::f3_params{4.0}, suite::f3_params{25.0}}) {
    const double q = nested_gk<D>(suite::f3_corner_peak{p}, cuts_at(D, [](int) { return std::vector<double>{}; }));
    EXPECT_TRUE(agree(q, suite::exact_f3(D, p), kQuadratureRelTol, q)) << "f3 " << suite::params_text(p);
  }
  for (const suite::f4_params p : {suite::f4_params{4, 0.2}, suite::f4_params{10, 0.75}, suite::f4_params{1.5, 1.0}}) {
    const double q = nested_gk<D>(suite::f4_gaussian{p}, cuts_at(D, [&](int) { return std::vector<double>{p.u}; }));
    EXPECT_TRUE(agree(q, suite::exact_f4(D, p), kQuadratureRelTol, q)) << "f4 " << suite::params_text(p);
  }
  if (sharp_ok) {
    const double q = nested_gk<D>(suite::f4_gaussian{}, cuts_at(D, [](int) { return std::vector<double>{0.5}; }));
    EXPECT_TRUE(agree(q, suite::exact_f4(D), kQuadratureRelTol, q)) << "f4 defaults";
  }
  for (const suite::f5_params p :
       {suite::f5_params{}, suite::f5_params{3, 0.2}, suite::f5_params{20, 1.0}, suite::f5_params{0.7, 0.6}}) {
    const double q = nested_gk<D>(suite::f5_c0{p}, cuts_at(D, [&](int) { return std::vector<double>{p.u}; }));
    EXPECT_TRUE(agree(q, suite::exact_f5(D, p), kQuadratureRelTol, q)) << "f5 " << suite::params_text(p);
  }
  for (const suite::f6_params p :
       {suite::f6_params{}, suite::f6_params{2, 0.15}, suite::f6_params{0.5, 0.9}, suite::f6_params{3, 1.0}}) {
    const double q =
        nested_gk<D>(suite::f6_discontinuous{p},
                     cuts_at(D, [&](int j) { return std::vector<double>{suite::f6_discontinuous::threshold(p, j)}; }));
    EXPECT_TRUE(agree(q, suite::exact_f6(D, p), kQuadratureRelTol, q)) << "f6 " << suite::params_text(p);
  }
}

TEST(SuiteParams, ExactValuesAgainstNestedGaussKronrodDim1) { check_nested_family_values<1>(); }
TEST(SuiteParams, ExactValuesAgainstNestedGaussKronrodDim2) { check_nested_family_values<2>(); }
TEST(SuiteParams, ExactValuesAgainstNestedGaussKronrodDim3) { check_nested_family_values<3>(); }

#if defined(MCUBES_TEST_HAVE_GSL)
// GSL's adaptive QAGS (21-point Gauss-Kronrod with extrapolation), nested over [0,1]^D, each axis
// split at its cuts: a second, independent implementation.
template <int D>
struct gsl_nested {
  std::function<double(const point<D>&)> f;
  std::vector<std::vector<double>> cuts;
  point<D> x{};
  std::vector<gsl_integration_workspace*> ws;
  gsl_nested(std::function<double(const point<D>&)> g, std::vector<std::vector<double>> c)
      : f(std::move(g)), cuts(std::move(c)) {
    for (int j = 0; j < D; ++j) ws.push_back(gsl_integration_workspace_alloc(1000));
  }
  ~gsl_nested() {
    for (auto* w : ws) gsl_integration_workspace_free(w);
  }
  struct level_arg {
    gsl_nested* self;
    int axis;
  };
  static double integrand(double t, void* arg) {
    const auto* a = static_cast<level_arg*>(arg);
    a->self->x[a->axis] = t;
    return a->axis + 1 == D ? a->self->f(a->self->x) : a->self->integrate(a->axis + 1);
  }
  double integrate(int axis) {
    level_arg arg{this, axis};
    gsl_function F{&integrand, &arg};
    double lo = 0, sum = 0;
    std::vector<double> ends;
    for (const double c : cuts[static_cast<std::size_t>(axis)])
      if (c > 0 && c < 1) ends.push_back(c);
    ends.push_back(1);
    for (const double hi : ends) {
      double r = 0, err = 0;
      gsl_integration_qags(&F, lo, hi, 0, kGkTol, 1000, ws[static_cast<std::size_t>(axis)], &r, &err);
      sum += r;
      lo = hi;
    }
    return sum;
  }
};

template <int D>
void check_gsl_family_values() {
  SCOPED_TRACE("d = " + std::to_string(D));
  gsl_set_error_handler_off();  // a tolerance not reached is reported by the comparison, not abort()
  auto none = [](int) { return std::vector<double>{}; };
  {
    const suite::f1_params p{2.2, 0.6};
    gsl_nested<D> q([&](const point<D>& x) { return suite::f1_oscillatory{p}(x); }, cuts_at(D, none));
    gsl_nested<D> s([&](const point<D>& x) { return std::fabs(suite::f1_oscillatory{p}(x)); }, cuts_at(D, none));
    EXPECT_TRUE(agree(q.integrate(0), suite::exact_f1(D, p), kQuadratureRelTol, s.integrate(0))) << "f1";
  }
  {
    const suite::f2_params p{8, 0.35};
    gsl_nested<D> q([&](const point<D>& x) { return suite::f2_product_peak{p}(x); },
                    cuts_at(D, [&](int) { return std::vector<double>{p.u}; }));
    const double v = q.integrate(0);
    EXPECT_TRUE(agree(v, suite::exact_f2(D, p), kQuadratureRelTol, v)) << "f2";
  }
  {
    const suite::f3_params p{2.5};
    gsl_nested<D> q([&](const point<D>& x) { return suite::f3_corner_peak{p}(x); }, cuts_at(D, none));
    const double v = q.integrate(0);
    EXPECT_TRUE(agree(v, suite::exact_f3(D, p), kQuadratureRelTol, v)) << "f3";
  }
  {
    const suite::f4_params p{6, 0.1};
    gsl_nested<D> q([&](const point<D>& x) { return suite::f4_gaussian{p}(x); },
                    cuts_at(D, [&](int) { return std::vector<double>{p.u}; }));
    const double v = q.integrate(0);
    EXPECT_TRUE(agree(v, suite::exact_f4(D, p), kQuadratureRelTol, v)) << "f4";
  }
  {
    const suite::f5_params p{5, 0.65};
    gsl_nested<D> q([&](const point<D>& x) { return suite::f5_c0{p}(x); },
                    cuts_at(D, [&](int) { return std::vector<double>{p.u}; }));
    const double v = q.integrate(0);
    EXPECT_TRUE(agree(v, suite::exact_f5(D, p), kQuadratureRelTol, v)) << "f5";
  }
  {
    const suite::f6_params p{1.3, 0.55};
    gsl_nested<D> q([&](const point<D>& x) { return suite::f6_discontinuous{p}(x); },
                    cuts_at(D, [&](int j) { return std::vector<double>{suite::f6_discontinuous::threshold(p, j)}; }));
    const double v = q.integrate(0);
    EXPECT_TRUE(agree(v, suite::exact_f6(D, p), kQuadratureRelTol, v)) << "f6";
  }
}

TEST(SuiteParams, ExactValuesAgainstGslDim1) { check_gsl_family_values<1>(); }
TEST(SuiteParams, ExactValuesAgainstGslDim2) { check_gsl_family_values<2>(); }
#else
TEST(SuiteParams, ExactValuesAgainstGsl) { GTEST_SKIP() << "GSL is not installed: the GSL quadrature is not run"; }
#endif

// ---------------------------------------------------------------------------------------------
// Higher dimensions: the one-dimensional factors of each closed form by quadrature.

// A product integrand f(x) = prod_i g_i(x_i) through a reference point c with f(c) != 0:
// I = f(c) prod_i (L_i / f(c)), L_i = int_0^1 f(c with x_i = t) dt (the D-dimensional functor itself).
template <int D, class F>
long double product_of_lines(const F& f, double c, const std::function<std::vector<double>(int)>& cuts) {
  point<D> x;
  for (int j = 0; j < D; ++j) x[j] = c;
  const long double fc = f(x);
  long double prod = fc;
  for (int i = 0; i < D; ++i) {
    const double line = gk_unit(
        [&, i](double t) {
          point<D> y = x;
          y[i] = t;
          return f(y);
        },
        cuts(i));
    prod *= line / fc;
  }
  return prod;
}

template <int D>
void check_products() {
  SCOPED_TRACE("d = " + std::to_string(D));
  for (const suite::f2_params p : {suite::f2_params{7, 0.3}, suite::f2_params{20, 0.95}}) {
    const long double q =
        product_of_lines<D>(suite::f2_product_peak{p}, p.u, [&](int) { return std::vector<double>{p.u}; });
    EXPECT_TRUE(agree(static_cast<double>(q), suite::exact_f2(D, p), kProductRelTol, static_cast<double>(q))) << "f2";
  }
  for (const suite::f4_params p : {suite::f4_params{9, 0.35}, suite::f4_params{3, 0.0}}) {
    const long double q =
        product_of_lines<D>(suite::f4_gaussian{p}, p.u, [&](int) { return std::vector<double>{p.u}; });
    EXPECT_TRUE(agree(static_cast<double>(q), suite::exact_f4(D, p), kProductRelTol, static_cast<double>(q))) << "f4";
  }
  for (const suite::f5_params p : {suite::f5_params{6, 0.7}, suite::f5_params{0.5, 0.2}}) {
    const long double q = product_of_lines<D>(suite::f5_c0{p}, p.u, [&](int) { return std::vector<double>{p.u}; });
    EXPECT_TRUE(agree(static_cast<double>(q), suite::exact_f5(D, p), kProductRelTol, static_cast<double>(q))) << "f5";
  }
  for (const suite::f6_params p :
       {suite::f6_params{0.5, 0.2}, suite::f6_params{0.3, 0.75}}) {  // through c = 0, f(0) = 1
    const long double q = product_of_lines<D>(suite::f6_discontinuous{p}, 0.0, [&](int j) {
      return std::vector<double>{suite::f6_discontinuous::threshold(p, j)};
    });
    EXPECT_TRUE(agree(static_cast<double>(q), suite::exact_f6(D, p), kProductRelTol, static_cast<double>(q))) << "f6";
  }
}

TEST(SuiteParams, ProductFamiliesByLineIntegralsDim6) { check_products<6>(); }
TEST(SuiteParams, ProductFamiliesByLineIntegralsDim16) { check_products<16>(); }
TEST(SuiteParams, ProductFamiliesByLineIntegralsDim32) { check_products<32>(); }

// f1: I = Re e^{2 pi i u} prod_k z_k with z_k = int_0^1 e^{i a k x} dx, each z_k by quadrature of
// cos and sin; compared relative to |prod z_k|, the largest |I| over u.
TEST(SuiteParams, F1ComplexFactorsByQuadratureUpToDim32) {
  const long double pi = 3.141592653589793238462643383279502884L;
  for (const suite::f1_params p :
       {suite::f1_params{0.4, 0.2}, suite::f1_params{2.0, 0.9}, suite::f1_params{7.5, 0.55}}) {
    std::complex<long double> prod(1, 0);
    for (int k = 1; k <= suite::max_suite_dim; ++k) {
      const double c = p.a * k;
      const double re = gk_unit([c](double x) { return std::cos(c * x); }, {});
      const double im = gk_unit([c](double x) { return std::sin(c * x); }, {});
      prod *= std::complex<long double>(re, im);
      const long double q = (std::polar(1.0L, 2 * pi * static_cast<long double>(p.u)) * prod).real();
      double exact = 0;
      try {
        exact = suite::exact_f1(k, p);
      } catch (const mcubes::invalid_input&) {  // below the double range at large a and k
        EXPECT_LT(std::abs(prod), 1e-300L) << suite::params_text(p) << " d = " << k;
        break;
      }
      EXPECT_TRUE(agree(static_cast<double>(q), exact, kProductRelTol, static_cast<double>(std::abs(prod))))
          << suite::params_text(p) << " d = " << k;
    }
  }
}

// f3 through the Laplace representation (1+s)^-(d+1) = (1/d!) int_0^inf t^d e^{-t(1+s)} dt:
//   I = (d!^2 a^d)^-1 int_0^inf e^{-t} prod_{i=1}^d (1 - e^{-a i t}) dt,
// an integrand in [0, 1] (no cancellation), by exp-sinh quadrature. Wherever exact_f3 returns a value
// it must agree; where its cancellation bound (f3_max_cancellation) is exceeded it must throw.
long double f3_by_laplace(int d, double a) {
  boost::math::quadrature::exp_sinh<long double> integrator;
  const long double v = integrator.integrate(
      [d, a](long double t) {
        long double p = std::exp(-t);
        for (int i = 1; i <= d; ++i) p *= -std::expm1(-static_cast<long double>(a) * i * t);
        return p;
      },
      1e-16L);
  long double norm = 1;
  for (int i = 2; i <= d; ++i) norm *= static_cast<long double>(i) * i;
  for (int i = 0; i < d; ++i) norm *= a;
  return v / norm;
}

TEST(SuiteParams, F3AgreesWithLaplaceQuadratureWhereverItReturns) {
  int returned = 0, refused = 0;
  for (const int d : {1, 2, 3, 5, 8, 12, 20, 32}) {
    for (const double a : {0.005, 0.05, 0.1, 0.3, 1.0, 3.0, 40.0}) {
      double exact = 0;
      try {
        exact = suite::exact_f3(d, {a});
      } catch (const mcubes::invalid_input& e) {
        ++refused;
        EXPECT_NE(std::string(e.what()).find("would lose accuracy"), std::string::npos) << e.what();
        continue;
      }
      ++returned;
      const long double q = f3_by_laplace(d, a);
      EXPECT_TRUE(agree(static_cast<double>(q), exact, kProductRelTol, static_cast<double>(q)))
          << "a = " << a << ", d = " << d;
    }
  }
  EXPECT_GT(returned, 40);  // the common range returns
  EXPECT_GT(refused, 5);    // small a in high d is refused
  EXPECT_NO_THROW(suite::exact_f3(32, {1.0}));
  EXPECT_THROW(suite::exact_f3(8, {0.01}), mcubes::invalid_input);
}

// ---------------------------------------------------------------------------------------------
// The guards.

// The message of the invalid_input that `fn` throws ("" if it throws none).
template <class Fn>
std::string invalid_message(Fn&& fn) {
  try {
    fn();
  } catch (const mcubes::invalid_input& e) {
    return e.what();
  }
  return "";
}

TEST(SuiteParams, ParametersOutOfRangeThrowNamingTheParameter) {
  const double nan = std::numeric_limits<double>::quiet_NaN(), inf = std::numeric_limits<double>::infinity();
  for (const double a : {0.0, -1.0, nan, inf, -inf}) {
    EXPECT_NE(invalid_message([&] {
                suite::exact_f1(3, {a, 0.5});
              }).find("parameter a of f1 must be finite and > 0"),
              std::string::npos);
    EXPECT_NE(invalid_message([&] { suite::exact_f2(3, {a, 0.5}); }).find("parameter a of f2"), std::string::npos);
    EXPECT_NE(invalid_message([&] { suite::exact_f3(3, {a}); }).find("parameter a of f3"), std::string::npos);
    EXPECT_NE(invalid_message([&] { suite::exact_f4(3, {a, 0.5}); }).find("parameter a of f4"), std::string::npos);
    EXPECT_NE(invalid_message([&] { suite::exact_f5(3, {a, 0.5}); }).find("parameter a of f5"), std::string::npos);
    EXPECT_NE(invalid_message([&] { suite::exact_f6(3, {a, 0.5}); }).find("parameter a of f6"), std::string::npos);
  }
  for (const double u : {-0.25, 1.5, nan, inf}) {
    EXPECT_NE(invalid_message([&] {
                suite::exact_f1(3, {1, u});
              }).find("parameter u of f1 must be in [0, 1]"),
              std::string::npos);
    EXPECT_NE(invalid_message([&] { suite::exact_f2(3, {50, u}); }).find("parameter u of f2"), std::string::npos);
    EXPECT_NE(invalid_message([&] { suite::exact_f4(3, {25, u}); }).find("parameter u of f4"), std::string::npos);
    EXPECT_NE(invalid_message([&] { suite::exact_f5(3, {10, u}); }).find("parameter u of f5"), std::string::npos);
    EXPECT_NE(invalid_message([&] {
                suite::exact_f6(3, {1, u});
              }).find("parameter u of f6 must be in (0, 1]"),
              std::string::npos);
  }
  // the value is named, as the shortest text that reads back as it
  EXPECT_EQ(invalid_message([] {
              suite::exact_f2(3, {-0.1, 0.5});
            }),
            "parameter a of f2 must be finite and > 0, got -0.1");
  EXPECT_EQ(invalid_message([] { suite::exact_f6(3, {1, 0.0}); }), "parameter u of f6 must be in (0, 1], got 0");
  // the boundaries of the ranges are accepted
  EXPECT_NO_THROW(suite::exact_f1(3, {1, 0.0}));
  EXPECT_NO_THROW(suite::exact_f1(3, {1, 1.0}));
  EXPECT_NO_THROW(suite::exact_f4(3, {25, 0.0}));
  EXPECT_NO_THROW(suite::exact_f6(3, {1, 1.0}));
}

TEST(SuiteParams, IntegrandOverflowAndExactUnderflowThrow) {
  // f2's peak a^(2d) beyond the double range
  EXPECT_NE(invalid_message([] { suite::exact_f2(32, {1e5, 0.5}); }).find("the peak value a^(2d)"), std::string::npos);
  EXPECT_NO_THROW(suite::exact_f2(32, {6e4, 0.5}));
  EXPECT_NE(invalid_message([] { suite::exact_f2(1, {1e-200, 0.5}); }).find("parameter a of f2"), std::string::npos);
  // f4's a^2
  EXPECT_NE(invalid_message([] { suite::exact_f4(1, {1e200, 0.5}); }).find("a^2 must be finite"), std::string::npos);
  // f6's largest value exp(sum a (i+4) t_i): 642 at the paper's parameters in d = 32, twice that at a = 2
  EXPECT_NO_THROW(suite::exact_f6(32));
  EXPECT_NE(invalid_message([] { suite::exact_f6(32, {2, 0.4}); }).find("overflows double"), std::string::npos);
  // an exact value below the double range
  EXPECT_NE(invalid_message([] {
              suite::exact_f1(32, {1e12, 0.5});
            }).find("below the double range"),
            std::string::npos);
  EXPECT_NE(invalid_message([] {
              suite::exact_f4(32, {1e100, 0.5});
            }).find("below the double range"),
            std::string::npos);
}

// An integral beyond sqrt(DBL_MAX): Vegas's variance sums (f J)^2, about I^2 once the map has
// adapted, so such a run could only end in overflow_error. The paper's f6 passed validation in
// every d <= 32 although its integral is 2.4e160 at d = 26 (2.3e172 at d = 27); now refused before
// any run, through validate_params and the registry's exact_at (the command's check), while the
// exact value itself is still given.
TEST(SuiteParams, IntegralsBeyondTheVegasRangeAreRefusedBeforeARun) {
  EXPECT_NO_THROW(suite::validate_params(suite::f6_paper_max_dim, suite::f6_params{}));
  EXPECT_LT(suite::exact_f6(suite::f6_paper_max_dim), suite::max_integrable_value);
  EXPECT_GT(suite::exact_f6(suite::f6_paper_max_dim + 1), suite::max_integrable_value);
  for (const int d : {26, 27, 32}) {
    const std::string m = invalid_message([&] { suite::validate_params(d, suite::f6_params{}); });
    EXPECT_EQ(m.rfind("parameters of f6 in d = " + std::to_string(d) + " at a = 1, u = 0.4: the integral ", 0), 0u) << m;
    EXPECT_NE(m.find(" exceeds 1.34e+154 = sqrt(largest double)"), std::string::npos) << m;
    EXPECT_NE(m.find("(the paper's f6, a = 1, u = 0.4, runs up to d = 25; use a smaller a or u)"), std::string::npos) << m;
    EXPECT_EQ(invalid_message([&] { suite::find("f6")->exact_at(d, {1, 0.4}); }), m);
    EXPECT_TRUE(std::isfinite(suite::exact_f6(d)));  // the exact value is still given
  }
  EXPECT_NE(invalid_message([] { suite::validate_params(26, suite::f6_params{}); }).find("the integral 2.44e+160"),
            std::string::npos);
  EXPECT_NO_THROW(suite::validate_params(32, suite::f6_params{0.5, 0.4}));  // a smaller a: I = e^~250 in d = 32
  EXPECT_NO_THROW(suite::find("f6")->exact_at(32, {0.5, 0.4}));
  // f2: (a (atan(a/2) 2))^d; 6e4 in d = 32 keeps its peak finite but not its integral (1e169)
  EXPECT_NO_THROW(suite::exact_f2(32, {6e4, 0.5}));
  EXPECT_NE(invalid_message([] { suite::validate_params(32, suite::f2_params{6e4, 0.5}); })
                .find("parameters of f2 in d = 32 at a = 60000, u = 0.5: the integral "),
            std::string::npos);
  EXPECT_THROW(suite::find("f2")->exact_at(32, {6e4, 0.5}), mcubes::invalid_input);
  EXPECT_NO_THROW(suite::validate_params(32, suite::f2_params{}));  // the paper's: 8e69 in d = 32
  EXPECT_NO_THROW(suite::validate_params(20, suite::f2_params{1e4, 0.5}));
}

// ---------------------------------------------------------------------------------------------
// The registry: parameters, defaults and the run-time conversions.

// Whether `formula` holds the one-letter name as a word of its own ("-a sum", "2 pi u", "a^2").
bool mentions(const std::string& formula, const char* name) {
  const auto letter = [](char c) { return std::isalpha(static_cast<unsigned char>(c)) != 0; };
  for (std::size_t k = formula.find(name); k != std::string::npos; k = formula.find(name, k + 1))
    if ((k == 0 || !letter(formula[k - 1])) && (k + 1 == formula.size() || !letter(formula[k + 1]))) return true;
  return false;
}

TEST(SuiteParams, RegistryParametersMatchTheStructs) {
  int with_params = 0;
  suite::for_each_integrand([&](auto d) {
    using Desc = decltype(d);
    const suite::entry& e = *suite::find(Desc::name);
    ASSERT_EQ(e.parameters.size(), Desc::parameters.size());
    const std::vector<double> defaults = e.default_values();
    // the listed defaults are the struct's default member values, and give the paper's exact value
    const typename Desc::params from_list = suite::params_from<Desc>(defaults);
    const typename Desc::params from_struct{};
    // an empty parameter struct (fA, fB) has one byte of indeterminate value: nothing to compare
    if constexpr (!std::is_empty_v<typename Desc::params>) {
      EXPECT_EQ(std::memcmp(&from_list, &from_struct, sizeof from_list), 0) << Desc::name;
    }
    // f6's integral exceeds the Vegas range beyond d = 25 (IntegralsBeyondTheVegasRangeAreRefusedBeforeARun)
    const int top = std::string(Desc::name) == "f6" ? suite::f6_paper_max_dim : Desc::max_dim;
    for (int dim : {Desc::min_dim, Desc::default_dim, top})
      EXPECT_TRUE(same_bits(e.exact_at(dim, defaults), e.exact(dim))) << Desc::name << " d = " << dim;
    EXPECT_THROW(e.exact_at(Desc::default_dim, std::vector<double>(defaults.size() + 1, 0.5)), mcubes::invalid_input);
    EXPECT_FALSE(e.formula.empty());
    if (!e.parameters.empty()) {
      ++with_params;
      EXPECT_EQ(std::string(e.parameters[0].name), "a") << Desc::name;
      for (const suite::parameter& q : e.parameters)
        EXPECT_TRUE(mentions(e.formula, q.name)) << e.formula << ", " << q.name;
    }
  });
  EXPECT_EQ(with_params, 6);
  EXPECT_TRUE(suite::find("fA")->parameters.empty());
  EXPECT_TRUE(suite::find("fB")->parameters.empty());
  EXPECT_EQ(suite::params_text(*suite::find("f2"), suite::find("f2")->default_values()), "a = 50, u = 0.5");
  EXPECT_EQ(suite::params_text(*suite::find("f3"), {0.25}), "a = 0.25");
  // functor_at: empty values are the paper's parameters; values in the order of `parameters`
  const point<2> x{{0.3, 0.7}};
  EXPECT_TRUE(same_bits(suite::functor_at<suite::f4_desc>({})(x), suite::f4_gaussian{}(x)));
  EXPECT_TRUE(same_bits(suite::functor_at<suite::f4_desc>({3.0, 0.25})(x), suite::f4_gaussian{{3.0, 0.25}}(x)));
  EXPECT_TRUE(same_bits(suite::functor_at<suite::f3_desc>({2.0})(x), suite::f3_corner_peak{{2.0}}(x)));
  EXPECT_THROW(suite::functor_at<suite::f4_desc>({3.0}), mcubes::invalid_input);
  EXPECT_EQ(suite::find("f6")->exact_at(4, {1.5, 0.3}), suite::exact_f6(4, {1.5, 0.3}));
}

// ---------------------------------------------------------------------------------------------
// Vegas at non-default parameters lands within kMaxPull reported sigma of the exact value.

// The uniform grid (m-Cubes) converges at these settings; VEGAS+ (the default) is within kMaxPull
// too, converged or not (f6's discontinuity can leave its iterations in disagreement: chi2/dof > 2).
template <int D, class F>
void expect_vegas_near_exact(const F& f, double exact, const std::string& what) {
  for (const auto mode : {mcubes::stratification_mode::uniform, mcubes::stratification_mode::adaptive}) {
    mcubes::vegas_options o;
    o.backend = mcubes::backend_kind::cpu;
    o.calls_per_iteration = 200000;
    o.max_iterations = 40;
    o.adapt_iterations = 15;
    o.skip = 5;
    o.rel_tol = 1e-3;
    o.seed = 20240614;
    o.stratification = mode;
    const mcubes::result r = mcubes::vegas<D>(f, mcubes::region<D>::unit(), o);
    if (mode == mcubes::stratification_mode::uniform) {
      ASSERT_EQ(r.status, mcubes::status::converged) << what << ": " << r.estimate << " +- " << r.error;
    }
    EXPECT_LE(std::fabs(r.estimate - exact), kMaxPull * r.error)
        << what << ", " << mcubes::to_string(mode) << ": " << r.estimate << " +- " << r.error << " vs exact " << exact;
  }
}

TEST(SuiteParams, VegasAtOtherParametersWithinSigmaOfExact) {
  const suite::f1_params p1{0.6, 0.15};
  expect_vegas_near_exact<3>(suite::f1_oscillatory{p1}, suite::exact_f1(3, p1), "f1 " + suite::params_text(p1));
  const suite::f2_params p2{10, 0.3};
  expect_vegas_near_exact<4>(suite::f2_product_peak{p2}, suite::exact_f2(4, p2), "f2 " + suite::params_text(p2));
  const suite::f3_params p3{3};
  expect_vegas_near_exact<3>(suite::f3_corner_peak{p3}, suite::exact_f3(3, p3), "f3 " + suite::params_text(p3));
  const suite::f4_params p4{8, 0.7};
  expect_vegas_near_exact<4>(suite::f4_gaussian{p4}, suite::exact_f4(4, p4), "f4 " + suite::params_text(p4));
  const suite::f5_params p5{5, 0.25};
  expect_vegas_near_exact<4>(suite::f5_c0{p5}, suite::exact_f5(4, p5), "f5 " + suite::params_text(p5));
  const suite::f6_params p6{1.5, 0.3};
  expect_vegas_near_exact<4>(suite::f6_discontinuous{p6}, suite::exact_f6(4, p6), "f6 " + suite::params_text(p6));
}

}  // namespace

// Exact values of the test suite (mcubes/suite.hpp) against independent computations:
//  - nested adaptive Gauss-Legendre quadrature of the suite's own functors in d = 1, 2, 3
//    (long double accumulation, breakpoints at the kinks and discontinuities);
//  - tensor-product Gauss-Legendre of the smooth non-product integrands f1, f3 in d = 4..6;
//  - for the product integrands (f2, f4, f5, f6, fB): the product of line integrals of the
//    D-dimensional functor through a reference point c, I = f(c) prod_i (L_i / f(c)), up to d = 32;
//  - one-dimensional quadrature of the complex factors of f1 and fA, which the closed forms multiply;
//  - for f3: a brute-force sum over all subsets (d <= 16) and quadrature of int_0^1 prod (1 - t^i) dt;
//  - the value quoted in the paper for fA (table 1: -49.165073), and fB's normalisation.
// Nothing here is random: every check is deterministic, with named tolerances.

#include <gtest/gtest.h>

#include <mcubes/error.hpp>
#include <mcubes/options.hpp>
#include <mcubes/point.hpp>
#include <mcubes/suite.hpp>

#include <cmath>
#include <complex>
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

namespace {

using ld = long double;
namespace suite = mcubes::suite;

// Relative accuracy asked of the adaptive quadrature (relative to int |g|); reached to ~1e-14.
constexpr ld kQuadratureTol = 1e-13L;
// Tolerance of a quadrature result against a closed form, relative to the integral of |f| (or to the
// modulus of the complex product for f1 and fA). The integrands are evaluated in double precision,
// so about 1e-15 per evaluation is the floor; 1e-11 leaves room for d-fold products up to d = 32.
constexpr ld kAgreeTol = 1e-11L;
// Looser tolerance for products of up to 32 quadrature results, each good to ~1e-13.
constexpr ld kProductAgreeTol = 1e-10L;
// The paper's table 1 quotes fA's true value to 6 decimals (-49.165073, truncated).
constexpr double kPaperQuoteTol = 1e-6;
// Two long double evaluations of the same closed form by different arithmetic.
constexpr ld kArithmeticTol = 1e-15L;

constexpr ld kPi = 3.141592653589793238462643383279502884L;

// ---------------------------------------------------------------------------------------------
// Gauss-Legendre rule on [-1,1] with n nodes, by Newton's iteration on P_n in long double.
struct gl_rule {
  std::vector<ld> x, w;
};

gl_rule make_gauss_legendre(int n) {
  gl_rule r;
  r.x.resize(n);
  r.w.resize(n);
  for (int i = 0; i < n; ++i) {
    ld z = std::cos(kPi * (i + 0.75L) / (n + 0.5L));  // Tricomi's initial guess
    ld dp = 0;
    for (int it = 0; it < 100; ++it) {
      ld p0 = 1, p1 = z;
      for (int k = 2; k <= n; ++k) {
        const ld p2 = ((2 * k - 1) * z * p1 - (k - 1) * p0) / k;
        p0 = p1;
        p1 = p2;
      }
      dp = n * (z * p1 - p0) / (z * z - 1);
      const ld dz = p1 / dp;
      z -= dz;
      if (std::fabs(dz) < 1e-21L) break;
    }
    // recompute the derivative at the converged node
    ld p0 = 1, p1 = z;
    for (int k = 2; k <= n; ++k) {
      const ld p2 = ((2 * k - 1) * z * p1 - (k - 1) * p0) / k;
      p0 = p1;
      p1 = p2;
    }
    dp = n * (z * p1 - p0) / (z * z - 1);
    r.x[i] = z;
    r.w[i] = 2 / ((1 - z * z) * dp * dp);
  }
  return r;
}

const gl_rule& rule10() {
  static const gl_rule r = make_gauss_legendre(10);
  return r;
}
const gl_rule& rule20() {
  static const gl_rule r = make_gauss_legendre(20);
  return r;
}

using fun1 = std::function<ld(ld)>;

// Fixed rule on [a,b]; also returns int |g| on the same nodes.
ld apply_rule(const fun1& g, ld a, ld b, const gl_rule& r, ld* abs_integral = nullptr) {
  const ld h = (b - a) / 2, m = (a + b) / 2;
  ld s = 0, sa = 0;
  for (std::size_t i = 0; i < r.x.size(); ++i) {
    const ld v = g(m + h * r.x[i]);
    s += r.w[i] * v;
    sa += r.w[i] * std::fabs(v);
  }
  if (abs_integral) *abs_integral = sa * h;
  return s * h;
}

// Adaptive bisection with the 10-point rule: accept the two halves when they agree with the
// whole to `tol` (absolute), after at least `min_depth` levels.
ld adapt(const fun1& g, ld a, ld b, ld whole, ld tol, int depth, int min_depth) {
  const ld m = (a + b) / 2;
  const ld left = apply_rule(g, a, m, rule10()), right = apply_rule(g, m, b, rule10());
  const ld halves = left + right;
  if ((depth >= min_depth && std::fabs(halves - whole) <= tol) || depth > 60) return halves;
  return adapt(g, a, m, left, tol / 2, depth + 1, min_depth) + adapt(g, m, b, right, tol / 2, depth + 1, min_depth);
}

// int_a^b g with breakpoints (kinks, discontinuities, peaks) strictly inside (a,b). The absolute
// tolerance is kQuadratureTol times a 20-point estimate of int |g|, split over the pieces.
ld integrate(const fun1& g, ld a, ld b, std::vector<ld> breaks = {}) {
  std::vector<ld> pts{a};
  for (ld p : breaks)
    if (p > a && p < b) pts.push_back(p);
  pts.push_back(b);
  std::vector<ld> coarse(pts.size() - 1);
  ld scale = 0;
  for (std::size_t i = 0; i + 1 < pts.size(); ++i) {
    ld abs_i = 0;
    coarse[i] = apply_rule(g, pts[i], pts[i + 1], rule20(), &abs_i);
    scale += abs_i;
  }
  ld sum = 0;
  for (std::size_t i = 0; i + 1 < pts.size(); ++i) {
    const ld whole = apply_rule(g, pts[i], pts[i + 1], rule10());
    const ld tol = kQuadratureTol * scale * (pts[i + 1] - pts[i]) / (b - a);
    sum += adapt(g, pts[i], pts[i + 1], whole, tol, 0, 1);
  }
  return sum;
}

// Nested adaptive quadrature of a D-dimensional functor over [lo,hi]^D; breaks[j] are the
// breakpoints of axis j. Axis D-1 is outermost.
template <int D, class F>
ld integrate_box(const F& f, ld lo, ld hi, const std::vector<std::vector<ld>>& breaks) {
  mcubes::point<D> x{};
  std::function<ld(int)> level = [&](int axis) -> ld {
    return integrate(
        [&, axis](ld t) -> ld {
          x[axis] = static_cast<double>(t);
          return axis == 0 ? static_cast<ld>(f(x)) : level(axis - 1);
        },
        lo, hi, breaks[axis]);
  };
  return level(D - 1);
}

// Tensor-product Gauss-Legendre (n nodes per axis) of a smooth D-dimensional functor over [lo,hi]^D.
template <int D, class F>
ld tensor_gauss(const F& f, ld lo, ld hi, const gl_rule& r) {
  const int n = static_cast<int>(r.x.size());
  const ld h = (hi - lo) / 2, m = (lo + hi) / 2;
  int idx[D] = {};
  ld sum = 0;
  mcubes::point<D> x{};
  for (;;) {
    ld w = 1;
    for (int j = 0; j < D; ++j) {
      x[j] = static_cast<double>(m + h * r.x[idx[j]]);
      w *= r.w[idx[j]] * h;
    }
    sum += w * f(x);
    int j = 0;
    while (j < D && ++idx[j] == n) idx[j++] = 0;
    if (j == D) break;
  }
  return sum;
}

// Product structure: for f(x) = prod_i g_i(x_i) and a point c with f(c) != 0, the line integral
// L_i = int f(c + (t - c_i) e_i) dt equals int g_i * prod_{j != i} g_j(c_j), so
// int f = f(c) prod_i (L_i / f(c)). `breaks(i)` gives the breakpoints of axis i.
template <int D, class F>
ld product_of_lines(const F& f, ld lo, ld hi, double c, const std::function<std::vector<ld>(int)>& breaks) {
  mcubes::point<D> x;
  for (int j = 0; j < D; ++j) x[j] = c;
  const ld fc = f(x);
  ld prod = fc;
  for (int i = 0; i < D; ++i) {
    const ld line = integrate(
        [&, i](ld t) -> ld {
          mcubes::point<D> y = x;
          y[i] = static_cast<double>(t);
          return f(y);
        },
        lo, hi, breaks(i));
    prod *= line / fc;
  }
  return prod;
}

// |a - b| <= tol * scale
::testing::AssertionResult close(ld a, ld b, ld tol, ld scale) {
  if (std::fabs(a - b) <= tol * scale) return ::testing::AssertionSuccess();
  return ::testing::AssertionFailure() << "values " << static_cast<double>(a) << " and " << static_cast<double>(b)
                                       << " differ by " << static_cast<double>(std::fabs(a - b)) << " > "
                                       << static_cast<double>(tol) << " * " << static_cast<double>(scale);
}

std::vector<ld> no_breaks(int) { return {}; }
std::vector<ld> centre_break(int) { return {0.5L}; }
// f6: the threshold (3+i)/10 of axis j (i = j + 1) lies inside (0,1) for i <= 6.
std::vector<ld> f6_breaks(int j) { return {(3 + (j + 1)) / 10.0L}; }

template <int D>
std::vector<std::vector<ld>> axis_breaks(std::vector<ld> (*b)(int)) {
  std::vector<std::vector<ld>> out;
  for (int j = 0; j < D; ++j) out.push_back(b(j));
  return out;
}

// ---------------------------------------------------------------------------------------------
// Nested quadrature of every [0,1]^d functor in d = 1, 2, 3.

template <int D>
void check_nested_unit_cube() {
  SCOPED_TRACE("d = " + std::to_string(D));
  const ld q1 = integrate_box<D>(suite::f1_oscillatory{}, 0, 1, axis_breaks<D>(no_breaks));
  EXPECT_TRUE(close(q1, suite::exact_f1(D), kAgreeTol, 1)) << "f1";  // |f1| <= 1 on a unit volume
  const ld q2 = integrate_box<D>(suite::f2_product_peak{}, 0, 1, axis_breaks<D>(centre_break));
  EXPECT_TRUE(close(q2, suite::exact_f2(D), kAgreeTol, q2)) << "f2";
  const ld q3 = integrate_box<D>(suite::f3_corner_peak{}, 0, 1, axis_breaks<D>(no_breaks));
  EXPECT_TRUE(close(q3, suite::exact_f3(D), kAgreeTol, q3)) << "f3";
  const ld q4 = integrate_box<D>(suite::f4_gaussian{}, 0, 1, axis_breaks<D>(centre_break));
  EXPECT_TRUE(close(q4, suite::exact_f4(D), kAgreeTol, q4)) << "f4";
  const ld q5 = integrate_box<D>(suite::f5_c0{}, 0, 1, axis_breaks<D>(centre_break));
  EXPECT_TRUE(close(q5, suite::exact_f5(D), kAgreeTol, q5)) << "f5";
  const ld q6 = integrate_box<D>(suite::f6_discontinuous{}, 0, 1, axis_breaks<D>(f6_breaks));
  EXPECT_TRUE(close(q6, suite::exact_f6(D), kAgreeTol, q6)) << "f6";
}

TEST(SuiteExact, NestedQuadratureDim1) { check_nested_unit_cube<1>(); }
TEST(SuiteExact, NestedQuadratureDim2) { check_nested_unit_cube<2>(); }
TEST(SuiteExact, NestedQuadratureDim3) { check_nested_unit_cube<3>(); }

// ---------------------------------------------------------------------------------------------
// f1 and f3 (not products) in d = 4..6 by tensor-product Gauss-Legendre, 20 nodes per axis: both
// are analytic on a neighbourhood of the cube (f1 entire; f3's singularity 1 + sum i x_i = 0 is at
// distance >= 1/d of the cube), so the rule's error is below 1e-14 there.

template <int D>
void check_tensor_smooth() {
  SCOPED_TRACE("d = " + std::to_string(D));
  const ld q1 = tensor_gauss<D>(suite::f1_oscillatory{}, 0, 1, rule20());
  EXPECT_TRUE(close(q1, suite::exact_f1(D), kAgreeTol, 1)) << "f1";
  const ld q3 = tensor_gauss<D>(suite::f3_corner_peak{}, 0, 1, rule20());
  EXPECT_TRUE(close(q3, suite::exact_f3(D), kAgreeTol, q3)) << "f3";
}

TEST(SuiteExact, TensorGaussDim4) { check_tensor_smooth<4>(); }
TEST(SuiteExact, TensorGaussDim5) { check_tensor_smooth<5>(); }
TEST(SuiteExact, TensorGaussDim6) { check_tensor_smooth<6>(); }

// ---------------------------------------------------------------------------------------------
// f1 up to d = 32: the closed form multiplies z_k = int_0^1 e^{ikx} dx; compute each z_k by
// quadrature of cos(kx) and sin(kx) and compare Re prod z_k, relative to |prod z_k|.

TEST(SuiteExact, F1FactorsByQuadrature) {
  std::complex<ld> p(1, 0);
  for (int k = 1; k <= suite::max_suite_dim; ++k) {
    const ld re = integrate([k](ld x) { return std::cos(k * x); }, 0, 1);
    const ld im = integrate([k](ld x) { return std::sin(k * x); }, 0, 1);
    p *= std::complex<ld>(re, im);
    EXPECT_TRUE(close(p.real(), suite::exact_f1(k), kProductAgreeTol, std::abs(p))) << "d = " << k;
  }
}

// ---------------------------------------------------------------------------------------------
// Product integrands up to d = 32 through line integrals of the D-dimensional functor.

template <int D>
void check_products() {
  SCOPED_TRACE("d = " + std::to_string(D));
  const ld q2 = product_of_lines<D>(suite::f2_product_peak{}, 0, 1, 0.5, centre_break);
  EXPECT_TRUE(close(q2, suite::exact_f2(D), kProductAgreeTol, q2)) << "f2";
  const ld q4 = product_of_lines<D>(suite::f4_gaussian{}, 0, 1, 0.5, centre_break);
  EXPECT_TRUE(close(q4, suite::exact_f4(D), kProductAgreeTol, q4)) << "f4";
  const ld q5 = product_of_lines<D>(suite::f5_c0{}, 0, 1, 0.5, centre_break);
  EXPECT_TRUE(close(q5, suite::exact_f5(D), kProductAgreeTol, q5)) << "f5";
  // f6 through c = 0 (f6(0) = 1): the line of axis i has its threshold (3+i)/10, or none for i >= 7.
  const ld q6 = product_of_lines<D>(suite::f6_discontinuous{}, 0, 1, 0.0, f6_breaks);
  EXPECT_TRUE(close(q6, suite::exact_f6(D), kProductAgreeTol, q6)) << "f6";
}

TEST(SuiteExact, ProductIntegrandsDim1) { check_products<1>(); }
TEST(SuiteExact, ProductIntegrandsDim6) { check_products<6>(); }
TEST(SuiteExact, ProductIntegrandsDim7) { check_products<7>(); }  // first axis with no threshold in f6
TEST(SuiteExact, ProductIntegrandsDim8) { check_products<8>(); }
TEST(SuiteExact, ProductIntegrandsDim16) { check_products<16>(); }
TEST(SuiteExact, ProductIntegrandsDim32) { check_products<32>(); }

// ---------------------------------------------------------------------------------------------
// f3 up to d = 32 by two other routes to the inclusion-exclusion sum.

// Brute force: (d!)^-2 sum over all 2^d subsets S of (-1)^|S| / (1 + sum S), in long double.
ld f3_by_subsets(int d) {
  ld sum = 0;
  for (std::uint32_t mask = 0; mask < (std::uint32_t(1) << d); ++mask) {
    int s = 0, bits = 0;
    for (int i = 1; i <= d; ++i)
      if (mask & (std::uint32_t(1) << (i - 1))) s += i, ++bits;
    sum += (bits % 2 ? -1.0L : 1.0L) / (1 + s);
  }
  ld fact = 1;
  for (int i = 2; i <= d; ++i) fact *= i;
  return sum / (fact * fact);
}

TEST(SuiteExact, F3SubsetSumsSmallDims) {
  for (int d = 1; d <= 16; ++d) {
    const ld brute = f3_by_subsets(d);
    EXPECT_TRUE(close(brute, suite::exact_f3(d), kAgreeTol, brute)) << "d = " << d;
  }
}

// The Laplace representation (1+s)^(-d-1) = (1/d!) int_0^inf t^d e^{-t(1+s)} dt factorises the
// cube integral: I = (d!)^-2 int_0^inf e^{-t} prod_i (1 - e^{-it}) dt = (d!)^-2 int_0^1 prod_i (1 - u^i) du
// (u = e^{-t}). The last integrand lies in [0,1]: no cancellation; integrate it by quadrature.
TEST(SuiteExact, F3PolynomialIntegralAllDims) {
  for (int d = 1; d <= suite::max_suite_dim; ++d) {
    const ld poly = integrate(
        [d](ld u) {
          ld p = 1;
          for (int i = 1; i <= d; ++i) p *= 1 - std::pow(u, static_cast<ld>(i));
          return p;
        },
        0, 1);
    ld fact = 1;
    for (int i = 2; i <= d; ++i) fact *= i;
    const ld q = poly / (fact * fact);
    EXPECT_TRUE(close(q, suite::exact_f3(d), kAgreeTol, q)) << "d = " << d;
  }
}

// Hand-derived values: d = 1: int_0^1 (1+x)^-2 dx = 1/2; d = 2: (1/4)(1 - 1/2 - 1/3 + 1/4) = 5/48.
TEST(SuiteExact, F3SmallClosedForms) {
  EXPECT_TRUE(close(suite::exact_f3(1), 1.0L / 2, kArithmeticTol, 1));
  EXPECT_TRUE(close(suite::exact_f3(2), 5.0L / 48, kArithmeticTol, 1));
}

// ---------------------------------------------------------------------------------------------
// fA = sin(sum x) over (0,10)^6.

TEST(SuiteExact, FAAgainstPaperQuote) {
  // Sakiotis et al. 2022, table 1 (comparison with ZMCintegral): true value -49.165073.
  EXPECT_NEAR(suite::exact_fA(), -49.165073, kPaperQuoteTol);
}

TEST(SuiteExact, FAFactorsByQuadrature) {
  const ld re = integrate([](ld x) { return std::cos(x); }, 0, 10);
  const ld im = integrate([](ld x) { return std::sin(x); }, 0, 10);
  const std::complex<ld> z(re, im);
  const std::complex<ld> z6 = z * z * z * z * z * z;
  EXPECT_TRUE(close(z6.imag(), suite::exact_fA(), kAgreeTol, std::abs(z6)));
  // The functor itself: nested quadrature of sin(x1 + x2) over (0,10)^2 against Im z^2.
  const std::vector<std::vector<ld>> breaks = {{}, {}};
  const ld q2 = integrate_box<2>(suite::fA_sin_sum{}, 0, 10, breaks);
  EXPECT_TRUE(close(q2, (z * z).imag(), kAgreeTol, std::abs(z * z)));
}

// ---------------------------------------------------------------------------------------------
// fB: the normalised 9-D Gaussian of sigma 0.01.

TEST(SuiteExact, FBNormalisation) {
  const ld s2 = static_cast<ld>(suite::fB_narrow_gaussian::sigma) * suite::fB_narrow_gaussian::sigma;
  const ld norm9 = std::pow(2 * kPi * s2, -4.5L);
  mcubes::point<9> origin{};
  EXPECT_TRUE(close(suite::fB_narrow_gaussian{}(origin), norm9, 1e-14L, norm9));
  mcubes::point<9> x{};
  for (int j = 0; j < 9; ++j) x[j] = 0.003 * (j - 4);  // sum x_i^2 = 60 * 0.003^2
  ld r2 = 0;
  for (int j = 0; j < 9; ++j) r2 += static_cast<ld>(x[j]) * x[j];
  EXPECT_TRUE(close(suite::fB_narrow_gaussian{}(x), norm9 * std::exp(-r2 / (2 * s2)), 1e-13L, norm9));
  EXPECT_TRUE(close(suite::exact_fB(), 1, kArithmeticTol, 1));
}

TEST(SuiteExact, FBByQuadrature) {
  // One axis (the D = 1 functor is the normalised 1-D Gaussian), then the 9-D functor as a product
  // of its line integrals through the origin.
  const ld q1 = integrate([](ld t) { return suite::fB_narrow_gaussian{}(mcubes::point<1>{{static_cast<double>(t)}}); },
                          -1, 1, {0.0L});
  EXPECT_TRUE(close(q1, 1, kAgreeTol, 1));
  const ld q9 = product_of_lines<9>(suite::fB_narrow_gaussian{}, -1, 1, 0.0, [](int) { return std::vector<ld>{0.0L}; });
  EXPECT_TRUE(close(q9, suite::exact_fB(), kProductAgreeTol, 1));
}

// ---------------------------------------------------------------------------------------------
// The table.

TEST(SuiteTable, EntriesAndLookup) {
  const auto& es = suite::entries();
  const std::vector<std::string> names = {"f1", "f2", "f3", "f4", "f5", "f6", "fA", "fB"};
  ASSERT_EQ(es.size(), names.size());
  for (std::size_t i = 0; i < names.size(); ++i) {
    EXPECT_EQ(es[i].name, names[i]);
    ASSERT_EQ(suite::find(names[i]), &es[i]);
    const suite::entry& e = es[i];
    EXPECT_FALSE(e.description.empty());
    EXPECT_LT(e.lower, e.upper);
    EXPECT_GE(e.max_dim, e.default_dim);
    EXPECT_EQ(e.any_dim, i < 6);
    if (!e.any_dim) {
      EXPECT_EQ(e.max_dim, e.default_dim);
    }
    // The paper's settings are valid mcubes options (skip + default min_iterations <= max_iterations).
    mcubes::vegas_options o;
    o.calls_per_iteration = e.paper.calls;
    o.max_iterations = e.paper.max_iterations;
    o.adapt_iterations = e.paper.adapt_iterations;
    o.skip = e.paper.skip;
    EXPECT_NO_THROW(mcubes::validate(o, e.default_dim)) << e.name;
    EXPECT_TRUE(std::isfinite(e.exact(e.default_dim))) << e.name;
  }
  EXPECT_EQ(suite::find("f7"), nullptr);
  EXPECT_EQ(suite::find(""), nullptr);
  EXPECT_EQ(suite::find("F1"), nullptr);
  // The table's function pointers are the documented closed forms.
  EXPECT_EQ(suite::find("f4")->exact(8), suite::exact_f4(8));
  EXPECT_EQ(suite::find("fA")->exact(6), suite::exact_fA());
  EXPECT_EQ(suite::find("fB")->exact(9), suite::exact_fB());
}

TEST(SuiteTable, DimensionPreconditions) {
  EXPECT_THROW(suite::exact_f1(0), mcubes::invalid_input);
  EXPECT_THROW(suite::exact_f3(suite::max_suite_dim + 1), mcubes::invalid_input);
  EXPECT_THROW(suite::find("fA")->exact(5), mcubes::invalid_input);
  EXPECT_THROW(suite::find("fB")->exact(8), mcubes::invalid_input);
  for (const auto& e : suite::entries()) {
    if (!e.any_dim) continue;
    for (int d = 1; d <= e.max_dim; ++d) {
      EXPECT_TRUE(std::isfinite(e.exact(d)) && e.exact(d) != 0) << e.name << " d = " << d;
    }
  }
}

}  // namespace

// The registry (suite/registry.hpp) is the one list: its run-time table has one entry per
// descriptor, in order, with unique names; every dimension a descriptor offers has a finite exact
// value, and visit_dimension reaches exactly those dimensions.
TEST(SuiteRegistry, TableAndDescriptorsAgree) {
  std::vector<std::string> names;
  std::size_t i = 0;
  mcubes::suite::for_each_integrand([&](auto d) {
    using Desc = decltype(d);
    ASSERT_LT(i, mcubes::suite::entries().size());
    const mcubes::suite::entry& e = mcubes::suite::entries()[i++];
    EXPECT_EQ(e.name, Desc::name);
    EXPECT_EQ(e.max_dim, Desc::max_dim);
    EXPECT_EQ(mcubes::suite::find(Desc::name), &e);
    EXPECT_LT(Desc::lower, Desc::upper);
    EXPECT_TRUE(Desc::default_dim >= Desc::min_dim && Desc::default_dim <= Desc::max_dim);
    EXPECT_TRUE(Desc::study_dim >= Desc::min_dim && Desc::study_dim <= Desc::max_dim);
    for (int dim = Desc::min_dim; dim <= Desc::max_dim; ++dim) {
      EXPECT_TRUE(std::isfinite(Desc::exact(dim))) << Desc::name << " d = " << dim;
      EXPECT_EQ((mcubes::suite::visit_dimension<Desc, int>(dim, [](auto c) { return decltype(c)::value; })), dim);
    }
    EXPECT_THROW((mcubes::suite::visit_dimension<Desc, int>(Desc::max_dim + 1, [](auto c) { return decltype(c)::value; })),
                 mcubes::invalid_input);
    EXPECT_THROW((mcubes::suite::visit_dimension<Desc, int>(Desc::min_dim - 1, [](auto c) { return decltype(c)::value; })),
                 mcubes::invalid_input);
    for (const auto& n : names) EXPECT_NE(n, Desc::name);
    names.push_back(Desc::name);
  });
  EXPECT_EQ(i, mcubes::suite::entries().size());
  EXPECT_THROW(mcubes::suite::visit_integrand<int>("f7", [](auto) { return 0; }), mcubes::invalid_input);
}

// Interpolators (tables/): against GSL's interp/interp2d to 1e-12 relative, exactness on the
// polynomials of each scheme, edges, every out-of-range policy, bad construction, sharing, and
// tables inside integrands (within 4 sigma of the exact integral of the interpolant; the first
// out-of-range sample reported as table_out_of_range, the same for 1 and 2 threads).
#include <mcubes/mcubes.hpp>
#include <mcubes/tables/interp1d.hpp>
#include <mcubes/tables/interp2d.hpp>
#include <mcubes/tables/interpnd.hpp>

#include <gtest/gtest.h>

#include "table_cases.hpp"

#include <cmath>
#include <functional>
#include <string>
#include <vector>

#include <sys/mman.h>

#if defined(MCUBES_TEST_HAVE_GSL)
#include <gsl/gsl_errno.h>
#include <gsl/gsl_spline.h>
#include <gsl/gsl_spline2d.h>
#endif

namespace {

using mcubes::grid_axis;
using mcubes::interp1d;
using mcubes::interp1d_kind;
using mcubes::interp2d;
using mcubes::interp2d_kind;
using mcubes::out_of_range_policy;

constexpr double gsl_rel_tol = 1e-12;   // agreement with GSL (issue contract)
constexpr double exact_rel_tol = 1e-13;  // reproduction of polynomials of the scheme's degree
constexpr double n_sigma = 4.0;          // statistical tests

std::vector<double> irregular_nodes(int n, double lo) {
  std::vector<double> x;
  for (int i = 0; i < n; ++i) x.push_back(lo + 0.3 * i + 0.013 * i * i);
  return x;
}

std::vector<double> dense_points(double lo, double hi, int n) {
  std::vector<double> p;
  for (int k = 0; k <= n; ++k) p.push_back(lo + (hi - lo) * k / n);
  return p;
}

double rel_diff(double a, double b) { return std::fabs(a - b) / std::max(std::fabs(b), 1e-300); }

#if defined(MCUBES_TEST_HAVE_GSL)
struct gsl_off {  // GSL's default handler aborts on a domain error
  gsl_error_handler_t* old = gsl_set_error_handler_off();
  ~gsl_off() { gsl_set_error_handler(old); }
};

void compare_1d_with_gsl(const grid_axis& ax, const std::vector<double>& y, interp1d_kind kind) {
  gsl_off off;
  const interp1d mine(ax, y, kind);
  const auto& x = ax.node_values();
  gsl_spline* g = gsl_spline_alloc(kind == interp1d_kind::linear ? gsl_interp_linear : gsl_interp_cspline, x.size());
  gsl_spline_init(g, x.data(), y.data(), x.size());
  std::vector<double> pts = dense_points(x.front(), x.back(), 2000);
  pts.insert(pts.end(), x.begin(), x.end());  // every node
  double worst = 0;
  for (double p : pts) worst = std::max(worst, rel_diff(mine(p), gsl_spline_eval(g, p, nullptr)));
  gsl_spline_free(g);
  EXPECT_LE(worst, gsl_rel_tol) << "uniform " << ax.is_uniform();
}

void compare_2d_with_gsl(const grid_axis& ax, const grid_axis& ay, const std::vector<double>& z, interp2d_kind kind) {
  gsl_off off;
  const interp2d mine(ax, ay, z, kind);
  const auto& x = ax.node_values();
  const auto& y = ay.node_values();
  gsl_spline2d* g = gsl_spline2d_alloc(kind == interp2d_kind::bilinear ? gsl_interp2d_bilinear : gsl_interp2d_bicubic,
                                       x.size(), y.size());
  gsl_spline2d_init(g, x.data(), y.data(), z.data(), x.size(), y.size());
  double worst = 0;
  for (double px : dense_points(x.front(), x.back(), 150))
    for (double py : dense_points(y.front(), y.back(), 150))
      worst = std::max(worst, rel_diff(mine(px, py), gsl_spline2d_eval(g, px, py, nullptr, nullptr)));
  gsl_spline2d_free(g);
  EXPECT_LE(worst, gsl_rel_tol) << "uniform " << ax.is_uniform();
}
#endif

double smooth1(double x) { return 2.0 + std::sin(x) + 0.1 * x * x; }
double smooth2(double x, double y) { return 3.0 + std::cos(x) * std::exp(-0.2 * y) + 0.05 * x * y; }

std::vector<double> tabulate(const std::vector<double>& x, double (*f)(double)) {
  std::vector<double> y;
  for (double v : x) y.push_back(f(v));
  return y;
}
std::vector<double> tabulate2(const std::vector<double>& x, const std::vector<double>& y, double (*f)(double, double)) {
  std::vector<double> z;
  for (double yj : y)
    for (double xi : x) z.push_back(f(xi, yj));  // z[j * nx + i]
  return z;
}

}  // namespace

TEST(Interp1d, AgreesWithGslOnIrregularAndUniformGrids) {
#if defined(MCUBES_TEST_HAVE_GSL)
  for (interp1d_kind kind : {interp1d_kind::linear, interp1d_kind::cspline}) {
    const grid_axis irr = grid_axis::nodes(irregular_nodes(25, -1.0));
    compare_1d_with_gsl(irr, tabulate(irr.node_values(), smooth1), kind);
    const grid_axis uni = grid_axis::uniform(-1.0, 4.0, 33);
    compare_1d_with_gsl(uni, tabulate(uni.node_values(), smooth1), kind);
    const grid_axis three = grid_axis::nodes({0.0, 0.4, 1.5});  // the smallest cspline
    compare_1d_with_gsl(three, tabulate(three.node_values(), smooth1), kind);
  }
#else
  GTEST_SKIP() << "GSL not found at configure time (install libgsl-dev): comparison skipped";
#endif
}

TEST(Interp2d, AgreesWithGslOnRectilinearAndUniformGrids) {
#if defined(MCUBES_TEST_HAVE_GSL)
  for (interp2d_kind kind : {interp2d_kind::bilinear, interp2d_kind::bicubic}) {
    const grid_axis x = grid_axis::nodes(irregular_nodes(9, 0.0)), y = grid_axis::nodes(irregular_nodes(7, -0.5));
    compare_2d_with_gsl(x, y, tabulate2(x.node_values(), y.node_values(), smooth2), kind);
    const grid_axis ux = grid_axis::uniform(0.0, 3.0, 12), uy = grid_axis::uniform(-1.0, 2.0, 5);
    compare_2d_with_gsl(ux, uy, tabulate2(ux.node_values(), uy.node_values(), smooth2), kind);
  }
#else
  GTEST_SKIP() << "GSL not found at configure time (install libgsl-dev): comparison skipped";
#endif
}

TEST(Interp1d, ExactOnPolynomialsOfItsDegreeAndAtNodes) {
  const auto line = [](double x) { return 1.5 - 0.75 * x; };
  for (const grid_axis& ax : {grid_axis::nodes(irregular_nodes(11, 0.2)), grid_axis::uniform(0.2, 3.0, 8)}) {
    std::vector<double> y;
    for (double v : ax.node_values()) y.push_back(line(v));
    for (interp1d_kind kind : {interp1d_kind::linear, interp1d_kind::cspline}) {
      const interp1d t(ax, y, kind);
      for (double p : dense_points(ax.lower(), ax.upper(), 777)) EXPECT_NEAR(t(p), line(p), exact_rel_tol * 4) << p;
      for (std::size_t i = 0; i < y.size(); ++i)
        EXPECT_NEAR(t(ax.node_values()[i]), y[i], 1e-15 * std::fabs(y[i]) + 1e-15) << "node " << i;
    }
  }
  // The natural spline's degree: it is exact for degree 1 only (a cubic with S'' = 0 at both ends
  // has S'' = 0 everywhere), so its defining property is checked instead: S''(x_0) = 0.
  const grid_axis ax = grid_axis::nodes(irregular_nodes(9, 0.0));
  const interp1d s(ax, tabulate(ax.node_values(), smooth1), interp1d_kind::cspline, out_of_range_policy::extrapolate);
  const double a = ax.lower(), h = 1e-4;
  const double second = (s(a + 2 * h) - 2 * s(a + h) + s(a)) / (h * h);  // one-sided, O(h) from S''(a) = 0
  EXPECT_NEAR(second, 0.0, 1e-2);
}

TEST(Interp2d, ExactOnBilinearFunctions) {
  const auto f = [](double x, double y) { return 0.5 + 2 * x - 3 * y + 0.25 * x * y; };
  const grid_axis x = grid_axis::nodes(irregular_nodes(6, -1.0)), y = grid_axis::uniform(0.0, 2.0, 5);
  std::vector<double> z;
  for (double yj : y.node_values())
    for (double xi : x.node_values()) z.push_back(f(xi, yj));
  for (interp2d_kind kind : {interp2d_kind::bilinear, interp2d_kind::bicubic}) {
    const interp2d t(x, y, z, kind);
    for (double px : dense_points(x.lower(), x.upper(), 61))
      for (double py : dense_points(y.lower(), y.upper(), 41))
        EXPECT_NEAR(t(px, py), f(px, py), 1e-12) << px << " " << py;
  }
}

TEST(Interpnd, ExactOnMultilinearFunctionsAndMatchesInterp1dAnd2d) {
  const auto f = [](double a, double b, double c) { return 1 + 2 * a - c + a * b * c + 0.5 * b * c; };
  const std::array<grid_axis, 3> axes{grid_axis::uniform(0, 1, 5), grid_axis::uniform(0, 2, 4),
                                      grid_axis::nodes({-1, 0.5, 0.7, 3})};
  std::vector<double> v;
  for (double a : axes[0].node_values())
    for (double b : axes[1].node_values())
      for (double c : axes[2].node_values()) v.push_back(f(a, b, c));  // C order, last axis fastest
  const mcubes::interpnd<3> t(axes, v);
  for (double a : dense_points(0, 1, 13))
    for (double b : dense_points(0, 2, 11))
      for (double c : dense_points(-1, 3, 17)) EXPECT_NEAR(t({a, b, c}), f(a, b, c), 1e-13) << a << " " << b << " " << c;
  // N = 1 is interp1d linear and N = 2 interp2d bilinear (transposed layout), to rounding
  const grid_axis ax = grid_axis::nodes(irregular_nodes(10, 0.0));
  const std::vector<double> y = tabulate(ax.node_values(), smooth1);
  const mcubes::interpnd<1> t1({ax}, y);
  const interp1d l1(ax, y, interp1d_kind::linear);
  for (double p : dense_points(ax.lower(), ax.upper(), 301)) EXPECT_NEAR(t1({p}), l1(p), 1e-14 * std::fabs(l1(p)));
  const grid_axis bx = grid_axis::uniform(0, 3, 7), by = grid_axis::nodes({-0.5, 0.0, 1.0, 1.25});
  const std::vector<double> z = tabulate2(bx.node_values(), by.node_values(), smooth2);  // z[j * nx + i]
  std::vector<double> zt;  // C order (i, j)
  for (std::size_t i = 0; i < bx.size(); ++i)
    for (std::size_t j = 0; j < by.size(); ++j) zt.push_back(z[j * bx.size() + i]);
  const mcubes::interpnd<2> t2({bx, by}, zt);
  const interp2d b2(bx, by, z, interp2d_kind::bilinear);
  for (double px : dense_points(0, 3, 37))
    for (double py : dense_points(-0.5, 1.25, 29)) EXPECT_NEAR(t2({px, py}), b2(px, py), 1e-14 * std::fabs(b2(px, py)));
  // six axes, all uniform
  std::array<grid_axis, 6> six{grid_axis::uniform(0, 1, 3), grid_axis::uniform(0, 1, 2), grid_axis::uniform(-1, 1, 4),
                               grid_axis::uniform(0, 2, 3), grid_axis::uniform(1, 2, 2), grid_axis::uniform(0, 1, 5)};
  const auto g = [](const double* p) { return 1 + p[0] * p[1] - p[2] * p[3] * p[4] + 3 * p[5]; };
  std::vector<double> v6;
  std::size_t total = 1;
  for (const auto& a : six) total *= a.size();
  for (std::size_t flat = 0; flat < total; ++flat) {
    double p[6];
    std::size_t r = flat;
    for (int k = 5; k >= 0; --k) p[k] = six[k].node_values()[r % six[k].size()], r /= six[k].size();
    v6.push_back(g(p));
  }
  const mcubes::interpnd<6> t6(six, v6);
  const double q[6] = {0.3, 0.9, -0.2, 1.7, 1.4, 0.61};
  EXPECT_NEAR(t6(q), g(q), 1e-13);
  EXPECT_NEAR(t6.view()(0.3, 0.9, -0.2, 1.7, 1.4, 0.61), g(q), 1e-13);
}

TEST(Tables, OutOfRangePolicies) {
  const grid_axis ax = grid_axis::nodes({0.0, 1.0, 2.5, 3.0});
  const std::vector<double> y{1.0, 3.0, 2.0, 5.0};
  // error: NaN (the run reports it, below); also for NaN arguments under every policy
  EXPECT_TRUE(std::isnan(interp1d(ax, y, interp1d_kind::linear)(-0.1)));
  EXPECT_TRUE(std::isnan(interp1d(ax, y, interp1d_kind::linear)(3.0 + 1e-12)));
  EXPECT_EQ(interp1d(ax, y, interp1d_kind::linear)(3.0), 5.0);
  EXPECT_EQ(interp1d(ax, y, interp1d_kind::linear)(0.0), 1.0);
  for (auto p : {out_of_range_policy::error, out_of_range_policy::clamp, out_of_range_policy::extrapolate})
    EXPECT_TRUE(std::isnan(interp1d(ax, y, interp1d_kind::cspline, p)(std::nan(""))));
  // clamp: the end values
  const interp1d lc(ax, y, interp1d_kind::linear, out_of_range_policy::clamp);
  EXPECT_EQ(lc(-7.0), 1.0);
  EXPECT_EQ(lc(9.0), 5.0);
  // extrapolate: the end cells' lines for linear
  const interp1d le(ax, y, interp1d_kind::linear, out_of_range_policy::extrapolate);
  EXPECT_DOUBLE_EQ(le(-1.0), 1.0 - 2.0);
  EXPECT_DOUBLE_EQ(le(4.0), 5.0 + 6.0);
  // cspline: value and slope at the end (the slope compared with a centred difference inside)
  const interp1d se(ax, y, interp1d_kind::cspline, out_of_range_policy::extrapolate);
  const interp1d sc(ax, y, interp1d_kind::cspline, out_of_range_policy::clamp);
  const double h = 1e-6;
  const double slope_hi = (se(3.0) - se(3.0 - h)) / h;
  EXPECT_NEAR(se(3.5), se(3.0) + 0.5 * slope_hi, 1e-5);
  EXPECT_EQ(sc(3.5), sc(3.0));
  EXPECT_EQ(sc(-2.0), 1.0);
#if defined(MCUBES_TEST_HAVE_GSL)
  {
    gsl_off off;
    gsl_spline* g = gsl_spline_alloc(gsl_interp_cspline, 4);
    gsl_spline_init(g, ax.node_values().data(), y.data(), 4);
    EXPECT_NEAR(se(-0.5), 1.0 - 0.5 * gsl_spline_eval_deriv(g, 0.0, nullptr), 1e-13);
    EXPECT_NEAR(se(3.5), 5.0 + 0.5 * gsl_spline_eval_deriv(g, 3.0, nullptr), 1e-13);
    gsl_spline_free(g);
  }
#endif
  // 2-D: per axis; extrapolate is the Taylor expansion at the clamped point (exact for a plane)
  const auto plane = [](double x, double yy) { return 2 + x - 3 * yy; };
  const grid_axis gx = grid_axis::uniform(0, 1, 4), gy = grid_axis::uniform(0, 1, 4);
  std::vector<double> z;
  for (double yj : gy.node_values())
    for (double xi : gx.node_values()) z.push_back(plane(xi, yj));
  for (interp2d_kind kind : {interp2d_kind::bilinear, interp2d_kind::bicubic}) {
    EXPECT_TRUE(std::isnan(interp2d(gx, gy, z, kind)(0.5, 1.5)));
    EXPECT_NEAR(interp2d(gx, gy, z, kind, out_of_range_policy::clamp)(-1.0, 0.5), plane(0.0, 0.5), 1e-14);
    EXPECT_NEAR(interp2d(gx, gy, z, kind, out_of_range_policy::extrapolate)(-1.0, 2.0), plane(-1.0, 2.0), 1e-13);
  }
  const mcubes::interpnd<2> nd({gx, gy}, z, out_of_range_policy::extrapolate);  // the plane is symmetric in layout? no:
  // z is x-fastest; as C order it is f(y_j, x_i) on axes (gx, gy): the plane with x and y swapped
  EXPECT_NEAR(nd({2.0, -1.0}), plane(-1.0, 2.0), 1e-13);
  EXPECT_TRUE(std::isnan(mcubes::interpnd<2>({gx, gy}, z)({0.5, 1.0 + 1e-9})));
}

TEST(Tables, BadConstructionThrowsNamingTheProblem) {
  using mcubes::invalid_input;
  EXPECT_THROW(interp1d(std::vector<double>{0, 1, 2}, std::vector<double>{1, 2}, interp1d_kind::linear), invalid_input);
  EXPECT_THROW(interp1d(std::vector<double>{0, 1}, std::vector<double>{1, 2}, interp1d_kind::cspline), invalid_input);
  EXPECT_THROW(interp1d(std::vector<double>{0}, std::vector<double>{1}, interp1d_kind::linear), invalid_input);
  EXPECT_THROW(interp1d(std::vector<double>{0, 1, 1}, std::vector<double>{1, 2, 3}, interp1d_kind::linear), invalid_input);
  EXPECT_THROW(interp1d(std::vector<double>{0, 2, 1}, std::vector<double>{1, 2, 3}, interp1d_kind::linear), invalid_input);
  EXPECT_THROW(interp1d(std::vector<double>{0, NAN, 1}, std::vector<double>{1, 2, 3}, interp1d_kind::linear), invalid_input);
  EXPECT_THROW(interp1d(std::vector<double>{0, 1, 2}, std::vector<double>{1, INFINITY, 3}, interp1d_kind::linear),
               invalid_input);
  EXPECT_THROW(grid_axis::uniform(1, 1, 5), invalid_input);
  EXPECT_THROW(grid_axis::uniform(0, 1, 1), invalid_input);
  EXPECT_THROW(grid_axis::uniform(0, INFINITY, 4), invalid_input);
  const grid_axis a3 = grid_axis::uniform(0, 1, 3), a4 = grid_axis::uniform(0, 1, 4);
  EXPECT_THROW(interp2d(a4, a4, std::vector<double>(15, 1.0), interp2d_kind::bilinear), invalid_input);
  EXPECT_THROW(interp2d(a3, a4, std::vector<double>(12, 1.0), interp2d_kind::bicubic), invalid_input);
  EXPECT_NO_THROW(interp2d(a3, a4, std::vector<double>(12, 1.0), interp2d_kind::bilinear));
  EXPECT_THROW((mcubes::interpnd<2>({a3, a4}, std::vector<double>(11, 1.0))), invalid_input);
  try {
    interp1d(std::vector<double>{0, 1, 0.5, 2}, std::vector<double>{1, 2, 3, 4}, interp1d_kind::linear);
    FAIL() << "no exception";
  } catch (const invalid_input& e) {
    EXPECT_EQ(std::string(e.what()),
              "grid_axis::nodes: node 2 = 0.5 is not greater than node 1 = 1 (the nodes must strictly increase)");
  }
  // on_device in a program without the CUDA backend
  EXPECT_THROW(interp1d(a3, {1, 2, 3}, interp1d_kind::linear, out_of_range_policy::error,
                        mcubes::table_placement::on_device(0)),
               invalid_input);
}

// Grids and tables whose lookups would overflow: a range hi - lo beyond the double range (its
// h = inf made (x - lo) / h NaN, cast to int), a spacing whose reciprocal overflows, nodes whose
// range overflows (once taken as uniform: every comparison with inf passed), a node count that
// wraps std::size_t (interpnd<4> of four 2^16-node axes took 0 values and read past its block),
// values whose differences or spline slopes overflow.
std::string invalid_message(const std::function<void()>& f) {
  try {
    f();
  } catch (const mcubes::invalid_input& e) {
    return e.what();
  }
  return "no exception";
}

TEST(Tables, RangesSpacingsAndSizesThatOverflowAreRefused) {
  using mcubes::interpnd;
  EXPECT_EQ(invalid_message([] { grid_axis::uniform(-1e308, 1e308, 3); }),
            "grid_axis::uniform: the range hi - lo of [-1e+308, 1e+308] overflows double");
  EXPECT_EQ(invalid_message([] { interp1d(grid_axis::uniform(-1e308, 1e308, 3), {1, 2, 3}, interp1d_kind::linear); }),
            "grid_axis::uniform: the range hi - lo of [-1e+308, 1e+308] overflows double");
  EXPECT_NE(invalid_message([] { grid_axis::uniform(0, 4e-323, 3); }).find("1 / spacing overflows double"),
            std::string::npos);
  EXPECT_EQ(invalid_message([] { grid_axis::nodes({-1e308, 0, 1e308}); }),
            "grid_axis::nodes: the range x_2 - x_0 = 1e+308 - -1e+308 overflows double");
  const std::string close = invalid_message([] { grid_axis::nodes({0, 1e-320, 2e-320}); });
  EXPECT_EQ(close.rfind("grid_axis::nodes: node 1 = ", 0), 0u) << close;
  EXPECT_NE(close.find(" is too close to node 0 = 0 (1 / spacing overflows double)"), std::string::npos) << close;
  EXPECT_THROW(interp1d(std::vector<double>{0, 1e-320, 2e-320}, std::vector<double>{1, 2, 3}, interp1d_kind::linear),
               mcubes::invalid_input);
  // The largest finite ranges and the smallest spacings with a finite reciprocal still work.
  const grid_axis wide = grid_axis::nodes({-8e307, 0, 8e307});
  EXPECT_TRUE(wide.is_uniform());
  const interp1d w(wide, {1, 2, 4}, interp1d_kind::linear);
  EXPECT_DOUBLE_EQ(w(-8e307), 1.0);
  EXPECT_DOUBLE_EQ(w(4e307), 3.0);
  EXPECT_DOUBLE_EQ(w(8e307), 4.0);
  const interp1d tiny(grid_axis::uniform(0, 2e-300, 3), {1, 2, 4}, interp1d_kind::linear);
  EXPECT_DOUBLE_EQ(tiny(1.5e-300), 3.0);
  // The node count of interpnd<4> on four 65536-node axes is 2^64: it wrapped to 0 and 0 values passed.
  const grid_axis big = grid_axis::uniform(0, 1, 65536);
  EXPECT_EQ(invalid_message([&] { interpnd<4>({big, big, big, big}, {}); }),
            "interpnd<4>: the grid's node count 65536 x 65536 x 65536 x 65536 overflows std::size_t");
  // Values whose span overflows (y1 - y0 = inf: NaN at the nodes) and spline slopes beyond the double range.
  EXPECT_NE(invalid_message([] {
              interp1d(std::vector<double>{0, 1}, std::vector<double>{-1e308, 1e308}, interp1d_kind::linear);
            }).find("interp1d: the values span [-1e+308, 1e+308], whose width overflows double"),
            std::string::npos);
  const grid_axis a2 = grid_axis::uniform(0, 1, 2);
  EXPECT_NE(invalid_message([&] { interpnd<2>({a2, a2}, {0, 0, -1e308, 1e308}); }).find("whose width overflows double"),
            std::string::npos);
  EXPECT_NE(invalid_message([] {
              interp1d(std::vector<double>{0, 1e-300, 2e-300}, std::vector<double>{0, 1e10, 0}, interp1d_kind::cspline);
            }).find("interp1d: the interpolant's coefficients overflow double"),
            std::string::npos);
  const grid_axis t4 = grid_axis::nodes({0, 1e-300, 2e-300, 3e-300});
  std::vector<double> z(16, 0.0);
  z[5] = 1e10;
  EXPECT_NE(invalid_message([&] { interp2d(t4, t4, z, interp2d_kind::bicubic); }).find(
                "interp2d: the interpolant's coefficients overflow double"),
            std::string::npos);
  EXPECT_NO_THROW(interp2d(t4, t4, z, interp2d_kind::bilinear));
}

// Bisection on an axis of 2^31 - 1 explicit nodes (the most a grid_axis takes): the midpoint
// (a + b) / 2 overflowed int once a passed 2^30 (a negative index, read before the nodes). The
// nodes here are 16 GiB of zero pages mapped read-only (no memory is used): every node is 0, so an
// argument of 1 walks the bisection to the last cell.
TEST(Tables, BisectionOnTheLargestAxisStaysInside) {
  const std::size_t n = mcubes::grid_axis::max_nodes;
  void* p = ::mmap(nullptr, n * sizeof(double), PROT_READ, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
  if (p == MAP_FAILED) GTEST_SKIP() << "cannot map 16 GiB of address space";
  mcubes::axis_view v;
  v.lo = 0;
  v.hi = 1;
  v.n = static_cast<int>(n);
  v.uniform = false;
  v.nodes = 0;
  int i = -1;
  double u = 0;
  v.locate(static_cast<const double*>(p), 1.0, i, u);
  EXPECT_EQ(i, static_cast<int>(n) - 2);
  ::munmap(p, n * sizeof(double));
}

TEST(Tables, CopiesShareTheStorageAndViewsOutliveTheOriginal) {
  mcubes::interp1d_view v;
  interp1d keep(std::vector<double>{0, 1}, std::vector<double>{0, 0}, interp1d_kind::linear);
  {
    const interp1d t(std::vector<double>{0, 1, 2}, std::vector<double>{1, 2, 5}, interp1d_kind::linear);
    keep = t;
    v = t.view();
  }
  EXPECT_EQ(v(1.5), 3.5);
  EXPECT_EQ(keep.view().mem.host, v.mem.host);
  EXPECT_EQ(keep.device(), -1);  // no CUDA in this program: host only
  static_assert(std::is_trivially_copyable_v<mcubes::interp1d_view>);
  static_assert(std::is_trivially_copyable_v<mcubes::interp2d_view>);
  static_assert(std::is_trivially_copyable_v<mcubes::interpnd_view<6>>);
}

TEST(Tables, InsideAnIntegrandWithinFourSigmaOfTheExactIntegral) {
  const table_cases::exact_case c = table_cases::make_exact_case();
  mcubes::vegas_options o;
  o.backend = mcubes::backend_kind::cpu;
  o.rel_tol = 1e-5;
  o.calls_per_iteration = 200000;
  o.threads = 2;
  const mcubes::result r = mcubes::vegas(c.integrand(), c.region(), o);
  ASSERT_TRUE(r.converged());
  EXPECT_LE(std::fabs(r.estimate - c.exact), n_sigma * r.error) << r.estimate << " +- " << r.error << " vs " << c.exact;
  o.threads = 1;
  const mcubes::result r1 = mcubes::vegas(c.integrand(), c.region(), o);
  EXPECT_EQ(r1.estimate, r.estimate);  // bitwise, whatever the thread count
  EXPECT_EQ(r1.error, r.error);
}

namespace {
struct lookup_past_the_table {
  mcubes::interp1d_view t;
  double operator()(const mcubes::point<1>& x) const { return t(x[0]); }
};
}  // namespace

TEST(Tables, ErrorPolicyStopsTheRunNamingTheFirstSampleAndTheLookup) {
  const interp1d t(grid_axis::uniform(0.0, 1.0, 11), std::vector<double>(11, 2.0), interp1d_kind::linear);
  const mcubes::region<1> past({0.0}, {1.2});  // 1/6 of the samples fall outside the table
  std::uint64_t first = 0;
  for (int threads : {1, 2}) {
    mcubes::vegas_options o;
    o.backend = mcubes::backend_kind::cpu;
    o.threads = threads;
    o.calls_per_iteration = 10000;
    try {
      (void)mcubes::vegas(lookup_past_the_table{t.view()}, past, o);
      FAIL() << "no exception";
    } catch (const mcubes::table_out_of_range& e) {
      EXPECT_EQ(e.table(), "interp1d");
      ASSERT_EQ(e.argument().size(), 1u);
      EXPECT_GT(e.argument()[0], 1.0);
      EXPECT_EQ(e.argument()[0], e.point()[0]);
      EXPECT_EQ(e.lower(), std::vector<double>{0.0});
      EXPECT_EQ(e.upper(), std::vector<double>{1.0});
      EXPECT_TRUE(std::isnan(e.value()));
      EXPECT_EQ(e.iteration(), 0);
      if (threads == 1) first = e.sample_index();
      EXPECT_EQ(e.sample_index(), first);  // the same first sample whatever the thread count
      EXPECT_NE(std::string(e.what()).find("interp1d lookup at (1."), std::string::npos) << e.what();
    }
  }
  mcubes::plain_mc_options p;
  p.backend = mcubes::backend_kind::cpu;
  p.samples = 100000;
  EXPECT_THROW((void)mcubes::plain_mc(lookup_past_the_table{t.view()}, past, p), mcubes::table_out_of_range);
  EXPECT_THROW((void)mcubes::midpoint(lookup_past_the_table{t.view()}, past, 1000), mcubes::table_out_of_range);
  // a NaN from elsewhere stays a plain non_finite_integrand
  const auto nan_at_end = [](const mcubes::point<1>& x) { return x[0] > 0.9 ? std::nan("") : 1.0; };
  try {
    (void)mcubes::midpoint(nan_at_end, mcubes::region<1>({0.0}, {1.0}), 1000);
    FAIL() << "no exception";
  } catch (const mcubes::table_out_of_range&) {
    FAIL() << "not a table";
  } catch (const mcubes::non_finite_integrand&) {
  }
}

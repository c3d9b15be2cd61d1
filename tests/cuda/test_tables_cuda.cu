// Tables on the GPU (compiled with --fmad=false and --extended-lambda): device lookups bitwise
// equal to the host's for every kind and policy; Vegas with table integrands (a functor and an
// extended lambda) bitwise equal on CUDA and CPU and within 4 sigma of the exact integral; the
// out-of-range error names the same first sample on both backends; a host-only table read on the
// device is reported, not a crash. Skipped without a device, except the last test, which needs a
// machine without one (CI): tables stay on the host and backend automatic runs on the CPU.
#include <mcubes/cuda.cuh>
#include <mcubes/tables.hpp>

#include <gtest/gtest.h>

#include <cmath>
#include <vector>

#include "cuda_test_support.hpp"

namespace {

using mcubes::grid_axis;
using mcubes::out_of_range_policy;

constexpr double n_sigma = 4.0;

struct probe_tables {
  mcubes::interp1d_view lin, spl;
  mcubes::interp2d_view bil, bic;
  mcubes::interpnd_view<3> nd;
  MCUBES_HOST_DEVICE void eval(double a, double b, double c, double* out) const {
    out[0] = lin(a);
    out[1] = spl(a);
    out[2] = bil(a, b);
    out[3] = bic(a, b);
    out[4] = nd(a, b, c);
  }
};

__global__ void probe_kernel(probe_tables t, const double* pts, int n, double* out) {
  const int k = blockIdx.x * blockDim.x + threadIdx.x;
  if (k < n) t.eval(pts[3 * k], pts[3 * k + 1], pts[3 * k + 2], out + 5 * k);
}

std::vector<double> irregular(int n, double lo) {
  std::vector<double> x;
  for (int i = 0; i < n; ++i) x.push_back(lo + 0.3 * i + 0.013 * i * i);
  return x;
}

struct table_set {
  mcubes::interp1d lin, spl;
  mcubes::interp2d bil, bic;
  mcubes::interpnd<3> nd;
  probe_tables views() const { return {lin.view(), spl.view(), bil.view(), bic.view(), nd.view()}; }
};

table_set make_tables(out_of_range_policy p) {
  const grid_axis xa = grid_axis::nodes(irregular(12, 0.0)), ya = grid_axis::uniform(-1.0, 1.0, 9);
  std::vector<double> y, z, v;
  for (double x : xa.node_values()) y.push_back(2 + std::sin(x));
  for (double yy : ya.node_values())
    for (double x : xa.node_values()) z.push_back(3 + std::cos(x) * std::exp(-0.3 * yy));
  const std::array<grid_axis, 3> axes{xa, ya, grid_axis::uniform(0.0, 2.0, 5)};
  for (double a : axes[0].node_values())
    for (double b : axes[1].node_values())
      for (double c : axes[2].node_values()) v.push_back(std::sin(a) + b * c);
  using K1 = mcubes::interp1d_kind;
  using K2 = mcubes::interp2d_kind;
  return {mcubes::interp1d(xa, y, K1::linear, p), mcubes::interp1d(xa, y, K1::cspline, p),
          mcubes::interp2d(xa, ya, z, K2::bilinear, p), mcubes::interp2d(xa, ya, z, K2::bicubic, p),
          mcubes::interpnd<3>(axes, v, p)};
}

}  // namespace

TEST(TablesCuda, DeviceLookupsAreBitwiseTheHostsForEveryKindAndPolicy) {
  MCUBES_REQUIRE_DEVICE();
  std::vector<double> pts;  // inside, on the nodes' range ends, and outside
  for (int k = 0; k < 4000; ++k) {
    const double s = k / 3999.0;
    pts.push_back(-0.5 + 5.5 * s);                         // x in [-0.5, 5.0], the grid [0, 4.17]
    pts.push_back(-1.2 + 2.4 * std::fmod(s * 7.3, 1.0));   // y in [-1.2, 1.2], the grid [-1, 1]
    pts.push_back(-0.1 + 2.2 * std::fmod(s * 3.1, 1.0));   // c in [-0.1, 2.1], the grid [0, 2]
  }
  const int n = static_cast<int>(pts.size() / 3);
  for (out_of_range_policy p : {out_of_range_policy::error, out_of_range_policy::clamp, out_of_range_policy::extrapolate}) {
    const table_set t = make_tables(p);
    ASSERT_EQ(t.bic.device(), 0);  // automatic placement: copied to the current device
    const probe_tables v = t.views();
    mcubes::device_array<double> dpts(pts), dout(5 * static_cast<std::size_t>(n));
    probe_kernel<<<(n + 127) / 128, 128>>>(v, dpts.data(), n, dout.data());
    MCUBES_CUDA_CHECK_LAUNCH("probe_kernel");
    MCUBES_CUDA_CHECK(cudaDeviceSynchronize());
    const std::vector<double> dev = dout.to_host();
    int nan_count = 0;
    for (int k = 0; k < n; ++k) {
      double host[5];
      v.eval(pts[3 * k], pts[3 * k + 1], pts[3 * k + 2], host);
      for (int q = 0; q < 5; ++q) {
        if (std::isnan(host[q])) {
          ++nan_count;
          EXPECT_TRUE(std::isnan(dev[5 * k + q])) << "policy " << int(p) << " table " << q << " point " << k;
        } else {
          EXPECT_EQ(mcubes_test::bits(dev[5 * k + q]), mcubes_test::bits(host[q]))
              << "policy " << int(p) << " table " << q << " point " << k << ": " << dev[5 * k + q] << " vs " << host[q];
        }
      }
    }
    if (p == out_of_range_policy::error) EXPECT_GT(nan_count, 0);
    else EXPECT_EQ(nan_count, 0);
  }
}

namespace {
struct table_functor {
  mcubes::interp1d_view a;
  mcubes::interp2d_view b;
  MCUBES_HOST_DEVICE double operator()(const mcubes::point<2>& x) const { return a(x[0]) * b(x[0], x[1]); }
};

// a(x) piecewise linear, b(x, y) = g(y) piecewise linear: the exact integral is the product of
// the trapezoid sums (as in test_interp.cpp).
struct exact_case {
  mcubes::interp1d a;
  mcubes::interp2d b;
  double exact;
};
exact_case make_exact_case() {
  const grid_axis ax = grid_axis::uniform(0.0, 2.0, 9), ay = grid_axis::nodes({0.0, 0.3, 1.0});
  std::vector<double> ya, z;
  for (double x : ax.node_values()) ya.push_back(2 + std::sin(x));
  const std::vector<double> gy{1.0, 4.0, 2.0};
  for (double g : gy)
    for (std::size_t i = 0; i < ax.size(); ++i) z.push_back(g);
  double ta = 0, tg = 0;
  for (std::size_t i = 0; i + 1 < ax.size(); ++i) ta += 0.5 * (ya[i] + ya[i + 1]) * (ax.node_values()[i + 1] - ax.node_values()[i]);
  for (std::size_t j = 0; j + 1 < gy.size(); ++j) tg += 0.5 * (gy[j] + gy[j + 1]) * (ay.node_values()[j + 1] - ay.node_values()[j]);
  return {mcubes::interp1d(ax, ya, mcubes::interp1d_kind::linear),
          mcubes::interp2d(ax, ay, z, mcubes::interp2d_kind::bilinear), ta * tg};
}
// The same integrand as an extended lambda (nvcc --extended-lambda; not inside a TEST body,
// whose enclosing function is a private member).
mcubes::result vegas_with_lambda(mcubes::interp1d_view av, mcubes::interp2d_view bv, const mcubes::region<2>& reg,
                                 const mcubes::vegas_options& o) {
  const auto lambda = [=] MCUBES_HOST_DEVICE(const mcubes::point<2>& x) { return av(x[0]) * bv(x[0], x[1]); };
  return mcubes::vegas(lambda, reg, o);
}
}  // namespace

TEST(TablesCuda, VegasWithTablesIsBitwiseTheCpusAndWithinFourSigma) {
  MCUBES_REQUIRE_DEVICE();
  const exact_case c = make_exact_case();
  const mcubes::region<2> reg({0.0, 0.0}, {2.0, 1.0});
  mcubes::vegas_options o;
  o.rel_tol = 1e-5;
  o.calls_per_iteration = 200000;
  o.backend = mcubes::backend_kind::cuda;
  const table_functor f{c.a.view(), c.b.view()};
  const mcubes::result g = mcubes::vegas(f, reg, o);
  const mcubes::result gl = vegas_with_lambda(c.a.view(), c.b.view(), reg, o);
  o.backend = mcubes::backend_kind::cpu;
  const mcubes::result h = mcubes::vegas(f, reg, o);
  ASSERT_TRUE(g.converged());
  EXPECT_EQ(g.backend, "cuda");
  EXPECT_EQ(mcubes_test::bits(g.estimate), mcubes_test::bits(h.estimate));
  EXPECT_EQ(mcubes_test::bits(g.error), mcubes_test::bits(h.error));
  EXPECT_EQ(mcubes_test::bits(gl.estimate), mcubes_test::bits(g.estimate));
  EXPECT_LE(std::fabs(g.estimate - c.exact), n_sigma * g.error) << g.estimate << " +- " << g.error << " vs " << c.exact;
}

namespace {
struct past_the_table {
  mcubes::interp1d_view t;
  MCUBES_HOST_DEVICE double operator()(const mcubes::point<1>& x) const { return t(x[0]); }
};
}  // namespace

TEST(TablesCuda, OutOfRangeNamesTheSameFirstSampleAsTheCpu) {
  MCUBES_REQUIRE_DEVICE();
  const mcubes::interp1d t(grid_axis::uniform(0.0, 1.0, 11), std::vector<double>(11, 2.0), mcubes::interp1d_kind::linear);
  const mcubes::region<1> past({0.0}, {1.2});
  std::uint64_t index[2] = {0, 1};
  int k = 0;
  for (auto b : {mcubes::backend_kind::cuda, mcubes::backend_kind::cpu}) {
    mcubes::vegas_options o;
    o.backend = b;
    o.calls_per_iteration = 10000;
    try {
      (void)mcubes::vegas(past_the_table{t.view()}, past, o);
      ADD_FAILURE() << "no exception";
    } catch (const mcubes::table_out_of_range& e) {
      index[k] = e.sample_index();
      EXPECT_GT(e.argument().at(0), 1.0);
      EXPECT_EQ(e.table(), "interp1d");
    }
    ++k;
  }
  EXPECT_EQ(index[0], index[1]);
}

TEST(TablesCuda, AHostOnlyTableReadOnTheDeviceIsReportedNotACrash) {
  MCUBES_REQUIRE_DEVICE();
  const mcubes::interp1d t(grid_axis::uniform(0.0, 1.0, 11), std::vector<double>(11, 2.0), mcubes::interp1d_kind::linear,
                           out_of_range_policy::error, mcubes::table_placement::host_only());
  EXPECT_EQ(t.device(), -1);
  mcubes::vegas_options o;
  o.backend = mcubes::backend_kind::cuda;
  o.calls_per_iteration = 10000;
  EXPECT_THROW((void)mcubes::vegas(past_the_table{t.view()}, mcubes::region<1>({0.0}, {1.0}), o),
               mcubes::non_finite_integrand);
  o.backend = mcubes::backend_kind::cpu;  // the host reads it
  EXPECT_NO_THROW((void)mcubes::vegas(past_the_table{t.view()}, mcubes::region<1>({0.0}, {1.0}), o));
}

TEST(TablesCuda, WithoutADeviceTablesStayOnTheHostAndAutomaticRunsOnTheCpu) {
  if (mcubes_test::has_device()) GTEST_SKIP() << "needs a machine without a CUDA device (the CI machine): skipped";
  const exact_case c = make_exact_case();
  EXPECT_EQ(c.a.device(), -1);
  EXPECT_EQ(c.b.device(), -1);
  mcubes::vegas_options o;
  o.backend = mcubes::backend_kind::automatic;
  o.rel_tol = 1e-5;
  o.calls_per_iteration = 200000;
  const mcubes::result r = mcubes::vegas(table_functor{c.a.view(), c.b.view()}, mcubes::region<2>({0.0, 0.0}, {2.0, 1.0}), o);
  EXPECT_EQ(r.backend, "cpu");
  ASSERT_TRUE(r.converged());
  EXPECT_LE(std::fabs(r.estimate - c.exact), n_sigma * r.error);
  EXPECT_THROW(mcubes::interp1d(std::vector<double>{0, 1}, std::vector<double>{1, 2}, mcubes::interp1d_kind::linear,
                                out_of_range_policy::error, mcubes::table_placement::on_device(0)),
               mcubes::cuda_error);
}

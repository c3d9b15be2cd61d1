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

#include "support/cuda.hpp"
#include "table_probe.cuh"
#include "tables/table_cases.hpp"

namespace {

using mcubes::grid_axis;
using mcubes::out_of_range_policy;

constexpr double n_sigma = 4.0;

}  // namespace

TEST(TablesCuda, DeviceLookupsAreBitwiseTheHostsForEveryKindAndPolicy) {
  MCUBES_REQUIRE_DEVICE();
  table_probe::compare_device_with_host(0.0);  // --fmad=false: bitwise
}

namespace {
using table_cases::exact_case;
using table_cases::make_exact_case;
using table_functor = table_cases::product_integrand;

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

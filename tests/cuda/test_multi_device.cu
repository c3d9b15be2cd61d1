// One integral over several CUDA backends of one process (vegas_on_devices: a thread_team of
// cuda_backends, backend/team.hpp): bitwise the result on one device, for every device list the
// host allows, both stratifications; repeated ordinals (two streams of one device) run on a
// one-GPU host too. Skipped without a device.
#include <gtest/gtest.h>

#include <mcubes/cuda.cuh>

#include "support/cuda.hpp"

#include <cmath>
#include <string>
#include <vector>

namespace {

struct peaks {
  __host__ __device__ double operator()(const mcubes::point<4>& x) const {
    double s = 0;
    const double c[3] = {0.23, 0.39, 0.74};
    for (int k = 0; k < 3; ++k) {
      double r2 = 0;
      for (int j = 0; j < 4; ++j) r2 += (x[j] - c[k]) * (x[j] - c[k]);
      s += exp(-100 * r2);
    }
    return s;
  }
};

mcubes::vegas_options options(mcubes::stratification_mode mode, std::uint64_t calls) {
  mcubes::vegas_options o;
  o.backend = mcubes::backend_kind::cuda;
  o.stratification = mode;
  o.calls_per_iteration = calls;
  o.max_iterations = 12;
  o.adapt_iterations = 7;
  o.rel_tol = 1e-12;
  o.seed = 21;
  return o;
}

// The device lists of this host: {0, 0} always (two streams of one device), then 0..k-1 for
// k = 2 .. the number of devices.
std::vector<std::vector<int>> device_lists() {
  std::vector<std::vector<int>> lists = {{0, 0}, {0, 0, 0}};
  const int n = mcubes::cuda_device_count();
  for (int k = 2; k <= n; ++k) {
    std::vector<int> l;
    for (int d = 0; d < k; ++d) l.push_back(d);
    lists.push_back(l);
  }
  return lists;
}

TEST(MultiDevice, VegasIsBitwiseOneDeviceForEveryDeviceList) {
  MCUBES_REQUIRE_DEVICE();
  const mcubes::region<4> unit({0, 0, 0, 0}, {1, 1, 1, 1});
  for (auto mode : {mcubes::stratification_mode::adaptive, mcubes::stratification_mode::uniform}) {
    for (std::uint64_t calls : {std::uint64_t(2000), std::uint64_t(3000000)}) {
      SCOPED_TRACE(testing::Message() << mcubes::to_string(mode) << ", " << calls << " calls");
      const mcubes::vegas_options o = options(mode, calls);
      const mcubes::result one = mcubes::vegas<4>(peaks{}, unit, o);
      EXPECT_EQ(one.backend, "cuda");
      for (const std::vector<int>& devices : device_lists()) {
        SCOPED_TRACE(testing::Message() << devices.size() << " devices");
        mcubes_test::expect_same_result(mcubes::vegas_on_devices<4>(peaks{}, unit, o, devices), one);
      }
    }
  }
}

TEST(MultiDevice, AStopFromTheCallbackEndsEveryDeviceAtTheSameBoundary) {
  MCUBES_REQUIRE_DEVICE();
  const mcubes::region<4> unit({0, 0, 0, 0}, {1, 1, 1, 1});
  const mcubes::vegas_options o = options(mcubes::stratification_mode::adaptive, 1000000);
  const mcubes::result r = mcubes::vegas_on_devices<4>(peaks{}, unit, o, {0, 0}, [](const mcubes::iteration_record& rec,
                                                                                      const mcubes::result&) {
    return rec.index == 4 ? mcubes::run_control::stop : mcubes::run_control::proceed;
  });
  EXPECT_EQ(r.status, mcubes::status::interrupted);
  ASSERT_EQ(r.records.size(), 5u);
  const mcubes::result one = mcubes::vegas<4>(peaks{}, unit, o);
  for (std::size_t i = 0; i < 5; ++i)
    EXPECT_EQ(mcubes_test::bits(r.records[i].estimate), mcubes_test::bits(one.records[i].estimate)) << i;
}

TEST(MultiDevice, ABadOrdinalIsReported) {
  MCUBES_REQUIRE_DEVICE();
  const mcubes::region<4> unit({0, 0, 0, 0}, {1, 1, 1, 1});
  const int n = mcubes::cuda_device_count();
  EXPECT_THROW(mcubes::vegas_on_devices<4>(peaks{}, unit, options(mcubes::stratification_mode::adaptive, 10000), {0, n + 3}),
               mcubes::error);
  EXPECT_THROW(mcubes::vegas_on_devices<4>(peaks{}, unit, options(mcubes::stratification_mode::adaptive, 10000), {}),
               mcubes::invalid_input);
}

}  // namespace

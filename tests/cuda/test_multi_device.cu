// One integral over several CUDA backends of one process (vegas_on_devices: a thread_team of
// cuda_backends, backend/team.hpp) and a batch split over them (vegas_batch_on_devices), both
// also through execution::devices: bitwise the result on one device, for every device list the
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

TEST(MultiDevice, ExecutionDevicesRunsVegasOnEveryListedDevice) {
  MCUBES_REQUIRE_DEVICE();
  const mcubes::region<4> unit({0, 0, 0, 0}, {1, 1, 1, 1});
  mcubes::vegas_options o = options(mcubes::stratification_mode::adaptive, 400000);
  const mcubes::result one = mcubes::vegas<4>(peaks{}, unit, o);
  for (const std::vector<int>& devices : device_lists()) {
    SCOPED_TRACE(testing::Message() << devices.size() << " devices");
    o.devices = devices;
    const mcubes::result r = mcubes::vegas<4>(peaks{}, unit, o);
    mcubes_test::expect_same_result(r, one);
    EXPECT_EQ(r.options.devices, devices);
  }
  o.devices = {0, 0};
  EXPECT_THROW(mcubes::integrator<4>(unit, o), mcubes::invalid_input);  // one device per integrator
  o.backend = mcubes::backend_kind::cpu;
  EXPECT_THROW(mcubes::vegas<4>(peaks{}, unit, o), mcubes::invalid_input);  // devices need the CUDA backend
}

struct shifted_peak {
  __host__ __device__ double operator()(const mcubes::point<4>& x, const double& c) const {
    double r2 = 0;
    for (int j = 0; j < 4; ++j) r2 += (x[j] - c) * (x[j] - c);
    return exp(-50 * r2);
  }
};

struct poisoned_peak {  // NaN for c < 0: that integral fails, the others go on
  __host__ __device__ double operator()(const mcubes::point<4>& x, const double& c) const {
    return c < 0 ? x[0] / (x[0] - x[0]) : shifted_peak{}(x, c);
  }
};

TEST(MultiDevice, ABatchSplitOverDevicesIsBitwiseOneDevice) {
  MCUBES_REQUIRE_DEVICE();
  const mcubes::region<4> unit({0, 0, 0, 0}, {1, 1, 1, 1});
  for (auto mode : {mcubes::stratification_mode::adaptive, mcubes::stratification_mode::uniform}) {
    SCOPED_TRACE(mcubes::to_string(mode));
    mcubes::vegas_options o = options(mode, 20000);
    o.rel_tol = 2e-3;  // some integrals converge early: the devices' rounds differ
    std::vector<double> centres;
    for (int k = 0; k < 300; ++k) centres.push_back(0.2 + 0.6 * k / 299.0);  // 300: two lanes on one device
    const std::vector<mcubes::result> one = mcubes::vegas_batch<4>(shifted_peak{}, unit, centres, o);
    for (const std::vector<int>& devices : device_lists()) {
      SCOPED_TRACE(testing::Message() << devices.size() << " devices");
      o.devices = devices;
      std::size_t rounds_seen = 0;
      const std::vector<mcubes::result> many = mcubes::vegas_batch<4>(shifted_peak{}, unit, centres, o,
                                                                      [&](const mcubes::batch_progress& p) {
                                                                        EXPECT_EQ(p.integrals, centres.size());
                                                                        ++rounds_seen;
                                                                        return mcubes::run_control::proceed;
                                                                      });
      EXPECT_GT(rounds_seen, 0u);
      ASSERT_EQ(many.size(), one.size());
      for (std::size_t k = 0; k < one.size(); ++k) {
        SCOPED_TRACE(testing::Message() << "integral " << k);
        mcubes_test::expect_same_result(many[k], one[k]);
      }
      o.devices.clear();
    }
  }
}

TEST(MultiDevice, AFailingIntegralOfABatchOnDevicesLeavesTheOthersBitwise) {
  MCUBES_REQUIRE_DEVICE();
  const mcubes::region<4> unit({0, 0, 0, 0}, {1, 1, 1, 1});
  mcubes::vegas_options o = options(mcubes::stratification_mode::adaptive, 20000);
  const std::vector<double> centres = {0.3, 0.4, -1, 0.5, 0.6, 0.7, -1};
  mcubes::batch_failures f1, fn;
  const std::vector<mcubes::result> one = mcubes::vegas_batch<4>(poisoned_peak{}, unit, centres, o, {}, &f1);
  o.devices = {0, 0, 0};
  const std::vector<mcubes::result> many = mcubes::vegas_batch<4>(poisoned_peak{}, unit, centres, o, {}, &fn);
  ASSERT_EQ(fn.size(), centres.size());
  for (std::size_t k = 0; k < centres.size(); ++k) {
    SCOPED_TRACE(testing::Message() << "integral " << k);
    EXPECT_EQ(fn[k] != nullptr, centres[k] < 0);
    EXPECT_EQ(f1[k] != nullptr, centres[k] < 0);
    if (centres[k] >= 0) mcubes_test::expect_same_result(many[k], one[k]);
  }
  try {  // without failures: the lowest-index failing integral is named
    mcubes::vegas_batch<4>(poisoned_peak{}, unit, centres, o);
    ADD_FAILURE() << "no batch_error";
  } catch (const mcubes::batch_error& e) {
    EXPECT_EQ(e.integral(), 2u);
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

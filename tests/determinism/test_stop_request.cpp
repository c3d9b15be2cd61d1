// execution::stop (execution.hpp's stop_request): a stop requested in the middle of a pass on the
// CPU backend abandons that pass whole (far fewer evaluations than the pass holds), ends the run
// with status interrupted and the completed iterations, bitwise those of a run without the stop,
// and leaves the integrator's state at the abandoned iteration. The same for a parameter batch.
// The stop is requested by the integrand itself, at its first call of a chosen iteration.

#include <gtest/gtest.h>

#include <atomic>
#include <cmath>
#include <cstdint>
#include <vector>

#include <mcubes/mcubes.hpp>

#include "support/bits.hpp"

namespace {

constexpr int D = 4;
constexpr std::uint64_t calls = 1u << 20;

/// A smooth integrand that counts its calls and, once `armed`, requests the stop at its first call.
struct stopping_gauss {
  std::atomic<std::uint64_t>* calls_made;
  std::atomic<bool>* armed;
  mcubes::stop_request* stop;
  double operator()(const mcubes::point<D>& x) const {
    calls_made->fetch_add(1, std::memory_order_relaxed);
    if (armed->load(std::memory_order_relaxed)) stop->request();
    double s = 0;
    for (int i = 0; i < D; ++i) s += (x[i] - 0.5) * (x[i] - 0.5);
    return std::exp(-20 * s);
  }
  double operator()(const mcubes::point<D>& x, const double& width) const {
    calls_made->fetch_add(1, std::memory_order_relaxed);
    if (armed->load(std::memory_order_relaxed)) stop->request();
    double s = 0;
    for (int i = 0; i < D; ++i) s += (x[i] - 0.5) * (x[i] - 0.5);
    return std::exp(-s / width);
  }
};

mcubes::vegas_options options(int threads) {
  mcubes::vegas_options o;
  o.backend = mcubes::backend_kind::cpu;
  o.threads = threads;
  o.calls_per_iteration = calls;
  o.max_iterations = 8;
  o.adapt_iterations = 8;
  o.skip = 0;
  o.rel_tol = 1e-15;  // never converges: every iteration runs
  o.seed = 12345;
  return o;
}

using mcubes_test::bits;

void expect_same_records(const mcubes::result& stopped, const mcubes::result& full, int n) {
  ASSERT_EQ(stopped.records.size(), static_cast<std::size_t>(n));
  for (int i = 0; i < n; ++i) {
    EXPECT_EQ(bits(stopped.records[i].estimate), bits(full.records[i].estimate)) << i;
    EXPECT_EQ(bits(stopped.records[i].error), bits(full.records[i].error)) << i;
  }
  EXPECT_EQ(bits(stopped.estimate), bits(full.records[n - 1].weighted_estimate));
  EXPECT_EQ(bits(stopped.error), bits(full.records[n - 1].weighted_error));
}

TEST(StopRequest, AbandonsThePassMidWayAndKeepsTheCompletedIterations) {
  std::atomic<std::uint64_t> calls_made{0};
  std::atomic<bool> armed{false};
  mcubes::stop_request stop;
  const stopping_gauss f{&calls_made, &armed, &stop};
  const auto reg = mcubes::region<D>::unit();

  const mcubes::result full = mcubes::vegas(f, reg, options(2));
  ASSERT_EQ(full.records.size(), 8u);
  EXPECT_FALSE(stop.requested());

  for (int threads : {1, 3}) {
    mcubes::vegas_options o = options(threads);
    o.stop = &stop;
    stop.clear();
    armed = false;
    std::uint64_t calls_before = 0;
    mcubes::integrator<D> integ(reg, o);
    const mcubes::result r = integ.integrate(f, [&](const mcubes::iteration_record& rec, const mcubes::result&) {
      if (rec.index == 2) {  // iteration 3 requests the stop at its first sample
        calls_before = calls_made.load();
        armed = true;
      }
      return mcubes::run_control::proceed;
    });
    EXPECT_EQ(r.status, mcubes::status::interrupted);
    expect_same_records(r, full, 3);
    // the pass of iteration 3 was abandoned: at most a tile per thread of it was evaluated
    EXPECT_LT(calls_made.load() - calls_before, calls / 4) << threads << " threads";
    EXPECT_EQ(integ.state().next_iteration, 3);  // the abandoned iteration is the next one
  }
}

TEST(StopRequest, RequestedBeforeTheRunEndsItWithNoIteration) {
  std::atomic<std::uint64_t> calls_made{0};
  std::atomic<bool> armed{false};
  mcubes::stop_request stop;
  stop.request();
  mcubes::vegas_options o = options(2);
  o.stop = &stop;
  const mcubes::result r = mcubes::vegas(stopping_gauss{&calls_made, &armed, &stop}, mcubes::region<D>::unit(), o);
  EXPECT_EQ(r.status, mcubes::status::interrupted);
  EXPECT_EQ(r.iterations, 0);
  EXPECT_TRUE(r.records.empty());
  EXPECT_EQ(calls_made.load(), 0u);
}

TEST(StopRequest, BatchAbandonsTheRoundAndKeepsEveryMembersCompletedIterations) {
  std::atomic<std::uint64_t> calls_made{0};
  std::atomic<bool> armed{false};
  mcubes::stop_request stop;
  const stopping_gauss f{&calls_made, &armed, &stop};
  const std::vector<double> widths{0.05, 0.1, 0.2};
  mcubes::vegas_options o = options(2);
  o.calls_per_iteration = calls / 4;
  const std::vector<mcubes::result> full = mcubes::vegas_batch(f, mcubes::region<D>::unit(), widths, o);
  o.stop = &stop;
  std::uint64_t calls_before = 0;
  const std::vector<mcubes::result> rs =
      mcubes::vegas_batch(f, mcubes::region<D>::unit(), widths, o, [&](const mcubes::batch_progress& p) {
        if (p.round == 3) {  // after the third round (the probe is a pass of the first)
          calls_before = calls_made.load();
          armed = true;
        }
        return mcubes::run_control::proceed;
      });
  ASSERT_EQ(rs.size(), widths.size());
  for (std::size_t k = 0; k < rs.size(); ++k) {
    EXPECT_EQ(rs[k].status, mcubes::status::interrupted) << k;
    ASSERT_GE(rs[k].records.size(), 1u) << k;
    expect_same_records(rs[k], full[k], static_cast<int>(rs[k].records.size()));
  }
  EXPECT_LT(calls_made.load() - calls_before, 3 * (calls / 4) / 2);
}

}  // namespace

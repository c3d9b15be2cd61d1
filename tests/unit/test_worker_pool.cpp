/// @file tests/unit/test_worker_pool.cpp
/// The backends' host worker pool (backend/worker_pool.hpp): every worker of a job runs once and
/// at the same time as the others, the threads are kept between jobs, a job made from inside a job
/// runs in order on the calling thread, the first exception comes back, and the CPU backend's
/// passes and reductions give the same bits on one pool reused many times.
#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <mutex>
#include <set>
#include <stdexcept>
#include <thread>
#include <vector>

#include <mcubes/backend/worker_pool.hpp>
#include <mcubes/mcubes.hpp>

namespace {

// All n workers are inside fn at once: each waits (up to 20 s) until the others have arrived,
// which only concurrent workers can do.
TEST(WorkerPool, EveryWorkerRunsOnceAndAllAtOnce) {
  mcubes::worker_pool pool(4);
  EXPECT_EQ(pool.size(), 4);
  for (int round = 0; round < 50; ++round) {
    std::atomic<int> arrived{0};
    std::vector<int> calls(4, 0);
    std::atomic<bool> all_met{true};
    pool.run(4, [&](int w) {
      ++calls[static_cast<std::size_t>(w)];
      ++arrived;
      const auto until = std::chrono::steady_clock::now() + std::chrono::seconds(20);
      while (arrived.load() < 4)
        if (std::chrono::steady_clock::now() > until) {
          all_met = false;
          return;
        }
    });
    EXPECT_TRUE(all_met) << round;
    EXPECT_EQ(calls, std::vector<int>(4, 1)) << round;
  }
}

TEST(WorkerPool, ThreadsAreKeptBetweenJobsAndTheCallerIsWorkerZero) {
  mcubes::worker_pool pool(3);
  std::mutex m;
  std::set<std::thread::id> seen;
  std::thread::id zero;
  for (int round = 0; round < 20; ++round)
    pool.run(3, [&](int w) {
      std::lock_guard<std::mutex> lock(m);
      seen.insert(std::this_thread::get_id());
      if (w == 0) zero = std::this_thread::get_id();
    });
  EXPECT_EQ(seen.size(), 3u);  // the caller and two kept threads, whatever the number of jobs
  EXPECT_EQ(zero, std::this_thread::get_id());
}

TEST(WorkerPool, MoreWorkersThanThePoolAreCappedAndNestedJobsRunInOrderHere) {
  mcubes::worker_pool pool(2);
  std::atomic<int> calls{0};
  pool.run(8, [&](int) { ++calls; });
  EXPECT_EQ(calls.load(), 2);
  std::vector<int> order;
  std::mutex m;
  pool.run(2, [&](int w) {
    if (w != 0) return;
    const std::thread::id here = std::this_thread::get_id();
    pool.run(2, [&](int v) {  // nested: fn(0), fn(1) in turn on this thread
      EXPECT_EQ(std::this_thread::get_id(), here);
      std::lock_guard<std::mutex> lock(m);
      order.push_back(v);
    });
  });
  EXPECT_EQ(order, (std::vector<int>{0, 1}));
}

TEST(WorkerPool, TheFirstExceptionComesBackAfterEveryWorkerReturned) {
  mcubes::worker_pool pool(3);
  std::atomic<int> finished{0};
  EXPECT_THROW(pool.run(3, [&](int w) {
    if (w == 2) throw std::runtime_error("worker 2");
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
    ++finished;
  }),
               std::runtime_error);
  EXPECT_EQ(finished.load(), 2);
  std::atomic<int> again{0};  // the pool still works
  pool.run(3, [&](int) { ++again; });
  EXPECT_EQ(again.load(), 3);
}

struct gaussian {
  double operator()(const mcubes::point<3>& x) const {
    double s = 0;
    for (int i = 0; i < 3; ++i) s += (x[i] - 0.4) * (x[i] - 0.4);
    return std::exp(-30 * s);
  }
};

// One backend (one pool) reused by many runs, and batches on it (host work on the same pool),
// give the bits of fresh single-thread backends.
TEST(WorkerPool, OneCpuBackendReusedGivesTheBitsOfFreshOnes) {
  mcubes::vegas_options o;
  o.calls_per_iteration = 20000;
  o.max_iterations = 12;
  o.rel_tol = 1e-9;
  mcubes::cpu_backend shared(4);
  for (std::uint64_t seed = 1; seed <= 4; ++seed) {
    o.seed = seed;
    const mcubes::result a = mcubes::vegas_with<3>(gaussian{}, mcubes::region<3>::unit(), o, shared);
    const mcubes::result b = mcubes::vegas_with<3>(gaussian{}, mcubes::region<3>::unit(), o, mcubes::cpu_backend(1));
    EXPECT_EQ(a.estimate, b.estimate) << seed;
    EXPECT_EQ(a.error, b.error) << seed;
    EXPECT_EQ(a.iterations, b.iterations) << seed;
  }
  struct shifted {
    double operator()(const mcubes::point<3>& x, const double& u) const {
      double s = 0;
      for (int i = 0; i < 3; ++i) s += (x[i] - u) * (x[i] - u);
      return std::exp(-30 * s);
    }
  };
  std::vector<double> us(300);  // >= 256 integrals: the round's host work is split over the pool
  for (std::size_t k = 0; k < us.size(); ++k) us[k] = 0.3 + 0.4 * static_cast<double>(k) / 300.0;
  o.calls_per_iteration = 2000;
  o.seed = 9;
  const std::vector<mcubes::result> many =
      mcubes::vegas_batch_with<3>(shifted{}, {mcubes::region<3>::unit()}, us, o, shared);
  mcubes::cpu_backend one(1);
  const std::vector<mcubes::result> few =
      mcubes::vegas_batch_with<3>(shifted{}, {mcubes::region<3>::unit()}, us, o, one);
  ASSERT_EQ(many.size(), few.size());
  for (std::size_t k = 0; k < many.size(); ++k) {
    EXPECT_EQ(many[k].estimate, few[k].estimate) << k;
    EXPECT_EQ(many[k].error, few[k].error) << k;
  }
}

}  // namespace

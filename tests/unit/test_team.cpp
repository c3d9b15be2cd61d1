// Teams (backend/team.hpp) without MPI: the split of chunks over ranks, and one integral computed
// by a thread_team of CPU backends (one thread each) with bitwise the result of one process.
// The same code paths as MPI ranks (tests/mpi/test_mpi_team.cpp), in every CI build.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <exception>
#include <functional>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include "mcubes/mcubes.hpp"
#include "support/bits.hpp"
#include "support/results.hpp"

namespace {

TEST(TeamSplit, PartsAreAlignedContiguousAndCoverEveryChunkOnce) {
  for (std::uint64_t n : {1ull, 7ull, 1000ull, 1024ull, 1025ull, 100000ull, 1048576ull}) {
    for (int ranks : {1, 2, 3, 5, 64}) {
      std::uint64_t next = 0, parts = 0;
      for (int r = 0; r < ranks; ++r) {
        const mcubes::team_split s = mcubes::split_chunks(n, r, ranks);
        EXPECT_EQ(s.width, mcubes::next_pow2(n));
        EXPECT_EQ(s.part_chunks & (s.part_chunks - 1), 0u);  // a power of two: aligned nodes of the tree
        EXPECT_TRUE(s.part_chunks >= mcubes::team_min_part_chunks || s.part_chunks == s.width) << n << " " << ranks;
        EXPECT_EQ(s.part_begin, parts);
        parts = s.part_end;
        if (s.part_end > s.part_begin) {
          EXPECT_EQ(s.chunk_begin(), next);
          next = s.chunk_end();
        }
      }
      EXPECT_EQ(next, n) << n << " " << ranks;
      EXPECT_EQ(parts, mcubes::split_chunks(n, 0, ranks).n_parts);
    }
  }
}

// Runs fn(rank, communicator) on `n` threads of a thread_team (thread_team::run_each); returns
// their results.
template <class T>
std::vector<T> on_threads(int n, const std::function<T(int, const mcubes::communicator&)>& fn) {
  mcubes::thread_team team(n);
  std::vector<T> out(static_cast<std::size_t>(n));
  team.run_each([&](int r, const mcubes::communicator& c) { out[static_cast<std::size_t>(r)] = fn(r, c); });
  return out;
}

struct peaks {
  double operator()(const mcubes::point<3>& x) const {
    double s = 0;
    for (double c : {0.2, 0.45, 0.8}) {
      double r2 = 0;
      for (int j = 0; j < 3; ++j) r2 += (x[j] - c) * (x[j] - c);
      s += std::exp(-80 * r2);
    }
    return s;
  }
};

mcubes::vegas_options options(mcubes::stratification_mode mode) {
  mcubes::vegas_options o;
  o.stratification = mode;
  o.calls_per_iteration = 300000;
  o.max_iterations = 10;
  o.adapt_iterations = 6;
  o.rel_tol = 1e-12;
  o.seed = 5;
  o.threads = 1;
  return o;
}

TEST(ThreadTeam, VegasIsBitwiseOneProcessForAnyNumberOfRanks) {
  const mcubes::region<3> unit({0, 0, 0}, {1, 1, 1});
  for (auto mode : {mcubes::stratification_mode::adaptive, mcubes::stratification_mode::uniform}) {
    SCOPED_TRACE(mcubes::to_string(mode));
    const mcubes::vegas_options o = options(mode);
    const mcubes::result solo = mcubes::vegas<3>(peaks{}, unit, o);
    for (int n : {2, 3, 5}) {
      SCOPED_TRACE(testing::Message() << n << " ranks");
      const auto rs = on_threads<mcubes::result>(n, [&](int, const mcubes::communicator& c) {
        mcubes::vegas_options mine = o;
        mine.team = &c;
        return mcubes::vegas<3>(peaks{}, unit, mine);
      });
      for (const mcubes::result& r : rs) mcubes_test::expect_same_result(r, solo);
    }
  }
}

struct throws_high {
  double operator()(const mcubes::point<2>& x) const {
    if (x[1] > 0.97 && x[1] < 0.9701) throw std::runtime_error("thrown at the top");
    return x[0];
  }
};

TEST(ThreadTeam, AFailureOnOneRankIsThrownOnEveryRank) {
  mcubes::vegas_options o;
  o.calls_per_iteration = 1000000;
  o.max_iterations = 2;
  o.skip = 0;
  o.min_iterations = 1;
  o.threads = 1;
  const mcubes::region<2> unit({0, 0}, {1, 1});
  const int n = 3;
  std::vector<std::string> what(n);
  mcubes::thread_team team(n);
  team.run_each([&](int r, const mcubes::communicator& c) {
    mcubes::vegas_options mine = o;
    mine.team = &c;
    try {
      mcubes::vegas<2>(throws_high{}, unit, mine);
    } catch (const std::exception& e) {
      what[static_cast<std::size_t>(r)] = e.what();
    }
  });
  EXPECT_EQ(what[n - 1], "thrown at the top");  // the last rank owns the top rows of sub-cubes
  for (int r = 0; r + 1 < n; ++r) EXPECT_EQ(what[static_cast<std::size_t>(r)], "rank 2: thrown at the top");
  // run_each rethrows the failure itself, not the other ranks' echoes of it
  mcubes::thread_team again(n);
  try {
    again.run_each([&](int r, const mcubes::communicator& c) {
      mcubes::vegas_options mine = o;
      mine.team = &c;
      (void)r;
      mcubes::vegas<2>(throws_high{}, unit, mine);
    });
    ADD_FAILURE() << "nothing thrown";
  } catch (const std::runtime_error& e) {
    EXPECT_STREQ(e.what(), "thrown at the top");
  }
}

TEST(ThreadTeam, AMemberThatFailsOutsideAnExchangeReleasesTheOthers) {
  mcubes::thread_team team(3);
  try {
    team.run_each([&](int r, const mcubes::communicator& c) {
      if (r == 1) throw std::logic_error("before the first exchange");
      std::vector<std::vector<unsigned char>> all;
      c.all_gather({1, 2, 3}, all);  // would wait for rank 1 forever without abandon()
    });
    ADD_FAILURE() << "nothing thrown";
  } catch (const std::logic_error& e) {
    EXPECT_STREQ(e.what(), "before the first exchange");
  }
}

TEST(ThreadTeam, ReductionsAndCountsAreBitwiseOneProcess) {
  const auto chunk = [](std::uint64_t c) { return std::sin(static_cast<double>(c)) * 1e-3 + 1.0 / (1.0 + static_cast<double>(c)); };
  for (std::uint64_t n : {1ull, 999ull, 4097ull, 300001ull}) {
    mcubes::cpu_backend solo(2);
    const double want = solo.reduce<double>(n, chunk, mcubes::plus_merge{});
    const std::uint64_t count = solo.count(n, [](std::uint64_t c) { return static_cast<std::uint32_t>(c % 7); });
    const auto got = on_threads<std::pair<double, std::uint64_t>>(4, [&](int, const mcubes::communicator& c) {
      mcubes::cpu_backend b(1, nullptr, &c);
      return std::make_pair(b.reduce<double>(n, chunk, mcubes::plus_merge{}),
                            b.count(n, [](std::uint64_t i) { return static_cast<std::uint32_t>(i % 7); }));
    });
    for (const auto& g : got) {
      EXPECT_EQ(mcubes_test::bits(g.first), mcubes_test::bits(want)) << n;
      EXPECT_EQ(g.second, count) << n;
    }
  }
}

}  // namespace

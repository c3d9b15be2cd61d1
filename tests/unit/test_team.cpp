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

TEST(TeamLayout, BalancedLayoutGivesEachRankAboutTheSameWeight) {
  const std::uint64_t n = 300001;  // 147 parts of 2048 chunks for 2 and 3 ranks, 293 of 1024 for 5
  for (int ranks : {2, 3, 5}) {
    const std::uint64_t P = mcubes::split_chunks(n, 0, ranks).n_parts;
    std::vector<std::vector<std::uint64_t>> cases;
    cases.emplace_back(P, 10);                                  // even
    std::vector<std::uint64_t> front(P, 1);                     // the weight in the first parts
    for (std::uint64_t p = 0; p < P / 4; ++p) front[p] = 1000;
    cases.push_back(front);
    std::vector<std::uint64_t> heavy(P, 5);                     // one part heavier than a rank's share
    heavy[P / 3] = 100000;
    cases.push_back(heavy);
    for (const auto& w : cases) {
      const mcubes::team_layout l = mcubes::balanced_layout(n, ranks, w);
      ASSERT_EQ(l.first_part.size(), static_cast<std::size_t>(ranks) + 1);
      EXPECT_EQ(l.first_part.front(), 0u);
      EXPECT_EQ(l.first_part.back(), P);
      std::uint64_t total = 0, most = 0;
      for (std::uint64_t x : w) {
        total += x;
        most = std::max(most, x);
      }
      std::uint64_t next = 0;
      for (int r = 0; r < ranks; ++r) {
        const mcubes::team_split s = mcubes::split_chunks(n, r, ranks, &l);
        EXPECT_EQ(s.part_begin, l.first_part[static_cast<std::size_t>(r)]);
        EXPECT_LE(s.part_begin, s.part_end);
        if (s.part_end > s.part_begin) {
          EXPECT_EQ(s.chunk_begin(), next);
          next = s.chunk_end();
        }
        std::uint64_t mine = 0;
        for (std::uint64_t p = s.part_begin; p < s.part_end; ++p) mine += w[p];
        EXPECT_LE(mine, total / static_cast<std::uint64_t>(ranks) + most) << ranks << " ranks, rank " << r;
      }
      EXPECT_EQ(next, n);
    }
    // a layout of another chunking or rank count is not used
    const mcubes::team_layout l = mcubes::balanced_layout(n, ranks, cases[1]);
    EXPECT_EQ(mcubes::split_chunks(n + 1, 0, ranks, &l).part_end, mcubes::split_chunks(n + 1, 0, ranks).part_end);
    EXPECT_THROW(mcubes::balanced_layout(n, ranks, std::vector<std::uint64_t>(P + 1, 1)), mcubes::invalid_input);
  }
}

TEST(ThreadTeam, ReductionsFollowTheLayoutWithTheBitsOfOneProcess) {
  const auto chunk = [](std::uint64_t c) { return std::cos(static_cast<double>(c)) * 1e-3 + 1.0 / (3.0 + static_cast<double>(c)); };
  const std::uint64_t n = 300001;
  mcubes::cpu_backend solo(2);
  const double want = solo.reduce<double>(n, chunk, mcubes::plus_merge{});
  const auto weight = [](std::uint64_t c) { return static_cast<std::uint32_t>(c < 40000 ? 50 : 1); };
  const std::uint64_t count = solo.count(n, weight);
  const auto got = on_threads<std::pair<double, std::vector<std::uint64_t>>>(3, [&](int, const mcubes::communicator& c) {
    mcubes::cpu_backend b(1, nullptr, &c);
    std::vector<std::uint64_t> parts;
    EXPECT_EQ(b.count(n, weight, &parts), count);
    b.layout = mcubes::balanced_layout(n, 3, parts);  // most parts to ranks 1 and 2
    std::vector<std::uint64_t> again;
    EXPECT_EQ(b.count(n, weight, &again), count);
    EXPECT_EQ(again, parts);
    return std::make_pair(b.reduce<double>(n, chunk, mcubes::plus_merge{}), b.layout.first_part);
  });
  for (const auto& g : got) {
    EXPECT_EQ(mcubes_test::bits(g.first), mcubes_test::bits(want));
    EXPECT_EQ(g.second, got[0].second);
    EXPECT_LT(g.second[1], mcubes::split_chunks(n, 0, 3).part_end);  // the layout differs from the even split
  }
}

TEST(ThreadTeam, MovedSubCubeValuesReachTheirNewOwners) {
  const std::uint64_t n_chunks = 300001, chunk_cubes = 3, n_cubes = 3 * n_chunks - 2;
  const int R = 3;
  const std::uint64_t P = mcubes::split_chunks(n_chunks, 0, R).n_parts;
  const mcubes::team_layout from = mcubes::balanced_layout(n_chunks, R, std::vector<std::uint64_t>(P, 1));
  std::vector<std::uint64_t> w(P, 1);
  for (std::size_t p = 100; p < P; ++p) w[p] = 9;
  const mcubes::team_layout to = mcubes::balanced_layout(n_chunks, R, w);
  const auto owned = on_threads<std::vector<double>>(R, [&](int r, const mcubes::communicator& c) {
    const mcubes::team_split old = mcubes::split_chunks(n_chunks, r, R, &from);
    std::vector<double> a(n_cubes, -1.0);  // this rank's old cubes hold their index
    for (std::uint64_t k = old.chunk_begin() * chunk_cubes; k < std::min(n_cubes, old.chunk_end() * chunk_cubes); ++k)
      a[k] = static_cast<double>(k);
    mcubes::team_move_cubes(
        c, n_chunks, chunk_cubes, n_cubes, &from, &to,
        [&](std::uint64_t b, std::uint64_t k, double* out) { std::copy(a.begin() + b, a.begin() + b + k, out); },
        [&](std::uint64_t b, std::uint64_t k, const double* in) { std::copy(in, in + k, a.begin() + b); });
    return a;
  });
  for (int r = 0; r < R; ++r) {
    const mcubes::team_split now = mcubes::split_chunks(n_chunks, r, R, &to);
    for (std::uint64_t k = now.chunk_begin() * chunk_cubes; k < std::min(n_cubes, now.chunk_end() * chunk_cubes); ++k)
      ASSERT_EQ(owned[static_cast<std::size_t>(r)][k], static_cast<double>(k)) << "rank " << r << " sub-cube " << k;
  }
}

// One narrow peak near the origin: its sub-cubes lie in the first chunks, which the even split
// gives to rank 0 alone. Counts its evaluations in *n.
struct counted_peak {
  std::uint64_t* n;
  double operator()(const mcubes::point<3>& x) const {
    ++*n;
    double r2 = 0;
    for (int j = 0; j < 3; ++j) r2 += (x[j] - 0.15) * (x[j] - 0.15);
    return std::exp(-400 * r2) + 0.01;
  }
};

TEST(ThreadTeam, VegasPlusGivesEachRankAboutTheSameSamples) {
  const mcubes::region<3> unit({0, 0, 0}, {1, 1, 1});
  mcubes::vegas_options o = options(mcubes::stratification_mode::adaptive);
  o.max_iterations = 12;
  o.adapt_iterations = 10;
  std::uint64_t solo_evals = 0;
  const mcubes::result solo = mcubes::vegas<3>(counted_peak{&solo_evals}, unit, o);
  for (int n : {2, 3}) {
    SCOPED_TRACE(testing::Message() << n << " ranks");
    std::vector<std::uint64_t> evals(static_cast<std::size_t>(n), 0);
    const auto rs = on_threads<mcubes::result>(n, [&](int r, const mcubes::communicator& c) {
      mcubes::vegas_options mine = o;
      mine.team = &c;
      return mcubes::vegas<3>(counted_peak{&evals[static_cast<std::size_t>(r)]}, unit, mine);
    });
    for (const mcubes::result& r : rs) mcubes_test::expect_same_result(r, solo);
    std::uint64_t total = 0;
    for (std::uint64_t e : evals) total += e;
    EXPECT_EQ(total, solo_evals);
    // every rank within 10 % of an even share of the run's evaluations (the even split of the
    // chunks gives rank 0 1.1 (2 ranks) and 1.26 (3 ranks) of it)
    const double share = static_cast<double>(total) / n;
    for (int r = 0; r < n; ++r)
      EXPECT_LT(static_cast<double>(evals[static_cast<std::size_t>(r)]), 1.1 * share) << "rank " << r;
  }
}

}  // namespace

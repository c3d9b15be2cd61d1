// One integral computed by every MPI rank (execution::team, mcubes/mpi.hpp): each run under a team
// must give, on every rank, bitwise the result of the same run in one process (computed here on
// each rank without the team). Run by CTest under mpirun with 1, 2 and 3 ranks (tests/CMakeLists.txt);
// the ranks use different thread counts on purpose.
#include <gtest/gtest.h>
#include <mpi.h>

#include <atomic>
#include <cmath>
#include <cstdint>
#include <stdexcept>
#include <string>
#include <vector>

#include "mcubes/mcubes.hpp"
#include "mcubes/mpi.hpp"
#include "support/bits.hpp"
#include "support/results.hpp"

namespace {

const mcubes::communicator& world() {
  static const mcubes::mpi_communicator team(MPI_COMM_WORLD);
  return team;
}

int rank() { return world().rank(); }

// Options of a run under the team, and of the same run alone; threads differ by rank.
template <class O>
O on_team(O o) {
  o.threads = 1 + rank() % 2;
  o.team = &world();
  return o;
}
template <class O>
O alone(O o) {
  o.threads = 2;
  o.team = nullptr;
  return o;
}

// Three narrow Gaussian peaks on the diagonal of [0,1]^4 (Lepage 2021, Eq. 45 in 4-D): fools a
// uniform stratification, exercises the VEGAS+ allocation.
struct peaks {
  double operator()(const mcubes::point<4>& x) const {
    double s = 0;
    for (double c : {0.23, 0.39, 0.74}) {
      double r2 = 0;
      for (int j = 0; j < 4; ++j) r2 += (x[j] - c) * (x[j] - c);
      s += std::exp(-100 * r2);
    }
    return s;
  }
};

mcubes::vegas_options vegas_opts(mcubes::stratification_mode mode) {
  mcubes::vegas_options o;
  o.stratification = mode;
  o.calls_per_iteration = 40000;  // 8^4 sub-cubes under VEGAS+, 11^4 under the uniform grid
  o.max_iterations = 10;          // 4 after the adaptation ends (the checkpoints stop after 7)
  o.adapt_iterations = 6;
  o.rel_tol = 1e-9;  // runs every iteration
  o.seed = 77;
  return o;
}

const mcubes::region<4> unit4({0, 0, 0, 0}, {1, 1, 1, 1});

TEST(MpiTeam, VegasPlusIsBitwiseOneProcess) {
  const auto o = vegas_opts(mcubes::stratification_mode::adaptive);
  const mcubes::result solo = mcubes::vegas<4>(peaks{}, unit4, alone(o));
  const mcubes::result team = mcubes::vegas<4>(peaks{}, unit4, on_team(o));
  mcubes_test::expect_same_result(team, solo);
  EXPECT_EQ(team.records.size(), static_cast<std::size_t>(o.max_iterations));  // rel_tol 1e-9: every iteration runs
}

TEST(MpiTeam, UniformStratificationIsBitwiseOneProcess) {
  const auto o = vegas_opts(mcubes::stratification_mode::uniform);
  mcubes_test::expect_same_result(mcubes::vegas<4>(peaks{}, unit4, on_team(o)), mcubes::vegas<4>(peaks{}, unit4, alone(o)));
}

TEST(MpiTeam, SmallBudgetsLeaveRanksWithoutChunks) {
  auto o = vegas_opts(mcubes::stratification_mode::adaptive);
  o.calls_per_iteration = 2000;  // few chunks: some ranks may own none
  mcubes_test::expect_same_result(mcubes::vegas<4>(peaks{}, unit4, on_team(o)), mcubes::vegas<4>(peaks{}, unit4, alone(o)));
}

// Counts its evaluations on this rank.
std::atomic<std::uint64_t> evaluations{0};
struct counted {
  double operator()(const mcubes::point<4>& x) const {
    evaluations.fetch_add(1, std::memory_order_relaxed);
    return peaks{}(x);
  }
};

TEST(MpiTeam, EachRankEvaluatesItsShareOnly) {
  const auto o = vegas_opts(mcubes::stratification_mode::adaptive);
  evaluations = 0;
  mcubes::vegas<4>(counted{}, unit4, alone(o));
  const unsigned long long solo = evaluations.exchange(0);  // the samples and the bin-scale probe's
  mcubes::vegas<4>(counted{}, unit4, on_team(o));
  const unsigned long long mine = evaluations.load();
  unsigned long long total = 0;
  MPI_Allreduce(&mine, &total, 1, MPI_UNSIGNED_LONG_LONG, MPI_SUM, MPI_COMM_WORLD);
  EXPECT_EQ(total, solo);  // every sample once, on one rank
  EXPECT_LT(static_cast<double>(mine), 1.5 * static_cast<double>(solo) / world().size());
}

// Several threads per rank (as GPUs per rank do: algorithm/devices.hpp): rank q runs q + 1 CPU
// backends on a thread team, the ranks' threads one team (nested_communicator). Every member of
// every rank gets bitwise the one-process result, both stratifications, and the members number
// 0 .. sum of the threads - 1 in rank order.
TEST(MpiTeam, ThreadsOfEveryRankFormOneTeamBitwiseOneProcess) {
  for (auto mode : {mcubes::stratification_mode::adaptive, mcubes::stratification_mode::uniform}) {
    const auto o = vegas_opts(mode);
    const mcubes::result solo = mcubes::vegas<4>(peaks{}, unit4, alone(o));
    const int mine = rank() + 1, ranks = world().size();
    const int before = rank() * (rank() + 1) / 2, all = ranks * (ranks + 1) / 2;
    mcubes::thread_team local(mine);
    std::vector<mcubes::result> got(static_cast<std::size_t>(mine));
    local.run_each([&](int g, const mcubes::communicator& member) {
      const mcubes::nested_communicator team(world(), member);
      EXPECT_EQ(team.rank(), before + g);
      EXPECT_EQ(team.size(), all);
      mcubes::cpu_backend backend(1, nullptr, &team);
      mcubes::vegas_options v = alone(o);
      v.threads = 1;
      got[static_cast<std::size_t>(g)] = mcubes::vegas_with<4>(peaks{}, unit4, v, backend);
    });
    for (const mcubes::result& r : got) mcubes_test::expect_same_result(r, solo);
  }
}

// A call under the team stopped by its callback after k iterations (the same decision on every
// rank) with checkpoint_to: rank 0 writes the file, whose VEGAS+ shares are every rank's; then
// resumed in one process, and the reverse (written alone, resumed by the team): the bits of the
// call never stopped, whichever number of processes wrote or read the file.
TEST(MpiTeam, CheckpointsCrossTheNumberOfRanksBitwise) {
  for (auto mode : {mcubes::stratification_mode::adaptive, mcubes::stratification_mode::uniform}) {
    SCOPED_TRACE(mcubes::to_string(mode));
    const auto o = vegas_opts(mode);
    mcubes::integrator<4> whole_integ(unit4, alone(o));
    const mcubes::result whole = whole_integ.integrate(peaks{});
    const std::string path = ::testing::TempDir() + "mcubes_mpi_team_" + std::to_string(world().size()) + ".ckpt";
    const auto stop_after = [](int k) {
      return [k](const mcubes::iteration_record& r, const mcubes::result&) {
        return r.index + 1 >= k ? mcubes::run_control::stop : mcubes::run_control::proceed;
      };
    };
    for (const bool team_writes : {true, false}) {
      SCOPED_TRACE(team_writes ? "written by the team, resumed alone" : "written alone, resumed by the team");
      if (team_writes || rank() == 0) {
        mcubes::integrator<4> first(unit4, team_writes ? on_team(o) : alone(o));
        first.checkpoint_to(path, "peaks");
        const mcubes::result part = first.integrate(peaks{}, stop_after(7));
        EXPECT_EQ(part.status, mcubes::status::interrupted);
      }
      MPI_Barrier(MPI_COMM_WORLD);  // the file is written
      if (!team_writes || rank() == 0) {
        mcubes::integrator<4> second(unit4, team_writes ? alone(o) : on_team(o));
        second.resume(path, "peaks");
        mcubes_test::expect_same_result(whole, second.integrate(peaks{}));
      }
      MPI_Barrier(MPI_COMM_WORLD);
      if (rank() == 0) std::remove(path.c_str());
    }
  }
}

// After a VEGAS+ call under the team, the integrator's weighted samples and its checkpoint (both
// collectives: the shares of every rank gathered) are those of one process.
TEST(MpiTeam, WeightedSamplesAndCheckpointsAfterATeamCallAreOneProcesss) {
  const auto o = vegas_opts(mcubes::stratification_mode::adaptive);
  mcubes::integrator<4> solo(unit4, alone(o)), team(unit4, on_team(o));
  solo.integrate(peaks{});
  team.integrate(peaks{});
  const mcubes::weighted_points a = solo.sample(5000, 3), b = team.sample(5000, 3);
  ASSERT_EQ(a.w.size(), b.w.size());
  bool same = a.x.size() == b.x.size();
  for (std::size_t i = 0; same && i < a.w.size(); ++i) same = mcubes_test::bits(a.w[i]) == mcubes_test::bits(b.w[i]);
  for (std::size_t i = 0; same && i < a.x.size(); ++i) same = mcubes_test::bits(a.x[i]) == mcubes_test::bits(b.x[i]);
  EXPECT_TRUE(same) << "the weighted samples differ";
  const mcubes::checkpoint ca = solo.checkpoint_of("peaks"), cb = team.checkpoint_of("peaks");
  ASSERT_FALSE(ca.progress.shares.empty());
  EXPECT_EQ(ca.progress.shares.size(), cb.progress.shares.size());
  bool shares = ca.progress.shares.size() == cb.progress.shares.size();
  for (std::size_t i = 0; shares && i < ca.progress.shares.size(); ++i)
    shares = mcubes_test::bits(ca.progress.shares[i]) == mcubes_test::bits(cb.progress.shares[i]);
  EXPECT_TRUE(shares) << "the checkpoint's shares differ";
}

struct shifted {
  double operator()(const mcubes::point<2>& x, const double& c) const {
    return std::exp(-50 * ((x[0] - c) * (x[0] - c) + (x[1] - c) * (x[1] - c)));
  }
};

TEST(MpiTeam, BatchIsBitwiseOneProcess) {
  auto o = vegas_opts(mcubes::stratification_mode::adaptive);
  o.calls_per_iteration = 50000;
  const std::vector<double> centres = {0.1, 0.3, 0.5, 0.7, 0.9};
  const mcubes::region<2> unit2({0, 0}, {1, 1});
  const auto solo = mcubes::vegas_batch<2>(shifted{}, unit2, centres, alone(o));
  const auto team = mcubes::vegas_batch<2>(shifted{}, unit2, centres, on_team(o));
  ASSERT_EQ(team.size(), solo.size());
  for (std::size_t k = 0; k < solo.size(); ++k) mcubes_test::expect_same_result(team[k], solo[k]);
}

TEST(MpiTeam, ChunkMethodsAreBitwiseOneProcess) {
  mcubes::plain_mc_options p;
  p.samples = 3000001;
  mcubes_test::expect_same_result(mcubes::plain_mc<4>(peaks{}, unit4, on_team(p)), mcubes::plain_mc<4>(peaks{}, unit4, alone(p)));
  mcubes::midpoint_options m;
  mcubes_test::expect_same_result(mcubes::midpoint<4>(peaks{}, unit4, 37, on_team(m)),
                                  mcubes::midpoint<4>(peaks{}, unit4, 37, alone(m)));
  mcubes::pi_options q;
  q.samples = 10000019;
  const mcubes::pi_mc_result a = mcubes::pi_monte_carlo(on_team(q)), b = mcubes::pi_monte_carlo(alone(q));
  EXPECT_EQ(a.hits, b.hits);
  EXPECT_EQ(mcubes_test::bits(a.estimate), mcubes_test::bits(b.estimate));
}

TEST(MpiTeam, AStopOnOneRankEndsEveryRankAtTheSameBoundary) {
  const auto o = vegas_opts(mcubes::stratification_mode::adaptive);
  mcubes::stop_request stop;
  auto opt = on_team(o);
  opt.stop = &stop;
  const int stopper = world().size() - 1;
  const mcubes::result r = mcubes::vegas<4>(peaks{}, unit4, opt, [&](const mcubes::iteration_record& rec, const mcubes::result&) {
    if (rec.index == 3 && rank() == stopper) stop.request();  // one rank only
    return mcubes::run_control::proceed;
  });
  EXPECT_EQ(r.status, mcubes::status::interrupted);
  ASSERT_EQ(r.records.size(), 4u);
  auto shorter = alone(o);
  shorter.max_iterations = 4;
  shorter.skip = 1;
  shorter.min_iterations = 1;
  const mcubes::result solo = mcubes::vegas<4>(peaks{}, unit4, shorter);
  for (std::size_t i = 0; i < 4; ++i)
    EXPECT_EQ(mcubes_test::bits(r.records[i].estimate), mcubes_test::bits(solo.records[i].estimate)) << i;
}

// Throws at the samples in a thin slab of x1 near its upper end: the sub-cubes there (the last
// axis varies slowest in the sub-cube index) are the last rank's.
struct throws_in_slab {
  double operator()(const mcubes::point<2>& x) const {
    if (x[1] > 0.95 && x[1] < 0.9501) throw std::runtime_error("slab reached");
    return x[0];
  }
};

TEST(MpiTeam, AFailureOnOneRankIsReportedOnEvery) {
  mcubes::vegas_options o;
  o.stratification = mcubes::stratification_mode::uniform;
  o.calls_per_iteration = 1000000;
  o.max_iterations = 3;
  o.skip = 0;
  o.min_iterations = 1;
  const mcubes::region<2> unit2({0, 0}, {1, 1});
  std::string what;
  try {
    mcubes::vegas<2>(throws_in_slab{}, unit2, on_team(o));
  } catch (const std::exception& e) {
    what = e.what();
  }
  EXPECT_NE(what.find("slab reached"), std::string::npos) << what;  // every rank
  const int last = world().size() - 1;
  if (rank() != last) {  // named by the others
    EXPECT_EQ(what.rfind("rank " + std::to_string(last) + ": ", 0), 0u) << what;
  }
}

// NaN at one point: the same first failing sample, with its point, on every rank.
struct nan_at_corner {
  double operator()(const mcubes::point<2>& x) const { return x[0] > 0.999 && x[1] > 0.999 ? std::nan("") : 1.0; }
};

TEST(MpiTeam, ANonFiniteSampleIsTheOneProcessOne) {
  mcubes::vegas_options o;
  o.calls_per_iteration = 1000000;
  o.max_iterations = 3;
  o.skip = 0;
  o.min_iterations = 1;
  const mcubes::region<2> unit2({0, 0}, {1, 1});
  std::uint64_t solo = 0, team = 1;
  try {
    mcubes::vegas<2>(nan_at_corner{}, unit2, alone(o));
  } catch (const mcubes::non_finite_integrand& e) {
    solo = e.sample_index();
  }
  try {
    mcubes::vegas<2>(nan_at_corner{}, unit2, on_team(o));
  } catch (const mcubes::non_finite_integrand& e) {
    team = e.sample_index();
  }
  EXPECT_EQ(team, solo);
}

TEST(MpiTeam, VectorIntegrandsAreRefusedUnderSeveralRanks) {
  if (world().size() == 1) GTEST_SKIP() << "one rank: nothing is split";
  mcubes::vegas_options o;
  o.calls_per_iteration = 10000;
  const auto f = [](const mcubes::point<2>& x) { return mcubes::values<2>{x[0], x[1]}; };
  EXPECT_THROW((mcubes::vegas_vector<2>(f, mcubes::region<2>({0, 0}, {1, 1}), on_team(o))), mcubes::invalid_input);
}

}  // namespace

int main(int argc, char** argv) {
  int provided = 0;
  MPI_Init_thread(&argc, &argv, MPI_THREAD_FUNNELED, &provided);
  ::testing::InitGoogleTest(&argc, argv);
  if (rank() != 0) {  // one report: the other ranks print their failures only
    auto& listeners = ::testing::UnitTest::GetInstance()->listeners();
    delete listeners.Release(listeners.default_result_printer());
  }
  const int rc = RUN_ALL_TESTS();
  int worst = 0;
  MPI_Allreduce(&rc, &worst, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
  MPI_Finalize();
  return worst;
}

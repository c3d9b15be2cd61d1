/// @file tests/cli/test_cli_mpi.cpp
/// `mpirun -np R mcubes integrate|scan ...` (cli/mpi_session.hpp): the record that rank 0 writes is
/// bitwise the one-process record (every summary number and every iteration's estimate and error)
/// for R = 2 and 3, VEGAS+ and the uniform stratification, integrate and scan; rank 0 alone prints
/// the report; what does not run under several ranks yet is refused with exit 2 and one line.
/// Paths in MCUBES_CLI_PATH and MCUBES_MPIEXEC; run as root too (CI).
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <regex>
#include <string>

#include <nlohmann/json.hpp>

#include "cli/cli_test_support.hpp"

#if !defined(MCUBES_CLI_PATH) || !defined(MCUBES_MPIEXEC)
#error "MCUBES_CLI_PATH and MCUBES_MPIEXEC must be defined"
#endif

namespace {

using json = nlohmann::json;
using mcubes_test::cli_run;
using mcubes_test::read_file;

std::string temp_path(const std::string& suffix) { return mcubes_test::temp_path("mcubes_mpi", suffix); }

/// `mcubes ARGS` in one process (ranks = 0) or under mpirun with `ranks` ranks.
cli_run run_cli(int ranks, const std::string& args) {
  const std::string cli = std::string("'") + MCUBES_CLI_PATH + "' " + args;
  if (ranks == 0) return mcubes_test::run_captured(cli, "mcubes_mpi");
  return mcubes_test::run_captured("OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 '" + std::string(MCUBES_MPIEXEC) +
                                       "' --oversubscribe -np " + std::to_string(ranks) + " " + cli,
                                   "mcubes_mpi");
}

/// The same run: every summary number and each iteration's estimate and error (JSON numbers
/// round-trip doubles exactly).
void expect_same_record(const json& j, const json& whole, const std::string& what) {
  for (const char* key : {"estimate", "error", "chi2_dof", "q", "n_eval", "n_iterations", "status"})
    EXPECT_EQ(j.at(key), whole.at(key)) << what << ": " << key;
  ASSERT_EQ(j.at("iterations").size(), whole.at("iterations").size()) << what;
  for (std::size_t i = 0; i < whole.at("iterations").size(); ++i) {
    EXPECT_EQ(j.at("iterations")[i].at("estimate"), whole.at("iterations")[i].at("estimate")) << what << " " << i;
    EXPECT_EQ(j.at("iterations")[i].at("error"), whole.at("iterations")[i].at("error")) << what << " " << i;
  }
}

/// Runs `args --json FILE` in one process and under 2 and 3 ranks; returns the records.
std::vector<json> records(const std::string& args) {
  std::vector<json> out;
  for (int ranks : {0, 2, 3}) {
    const std::string path = temp_path(".json");
    const cli_run r = run_cli(ranks, args + " --json '" + path + "'");
    EXPECT_LE(r.exit_code, 1) << ranks << " ranks: " << r.err;  // 1: not converged (the runs go to max_iterations)
    out.push_back(json::parse(read_file(path), nullptr, false));
    EXPECT_FALSE(out.back().is_discarded()) << ranks << " ranks: " << r.out << r.err;
    std::remove(path.c_str());
    if (ranks > 0) {  // one report on stdout: rank 0's
      const std::size_t first = r.out.find("estimate");
      EXPECT_NE(first, std::string::npos) << r.out;
      EXPECT_EQ(r.out.find("backend: "), r.out.rfind("backend: ")) << r.out;
      EXPECT_NE(r.out.find(std::to_string(ranks) + " MPI ranks"), std::string::npos) << r.out;
      if (r.out.find("integrand ") == 0) {  // integrate: the exchange time, once
        EXPECT_EQ(r.out.find("exchange: " + std::to_string(ranks) + " MPI ranks, "), r.out.rfind("exchange: ")) << r.out;
      }
    }
  }
  return out;
}

const std::string options =
    "--calls-per-iter 1e5 --max-iterations 8 --adapt-iterations 5 --skip 2 --min-iterations 2 --rel-tol 1e-12 --backend cpu";

TEST(CliMpi, IntegrateWithVegasPlusIsBitwiseOneProcess) {
  const auto rs = records("integrate f4 --dim 4 --seed 11 --threads 1 " + options);
  ASSERT_EQ(rs.size(), 3u);
  if (rs[0].is_discarded()) return;
  EXPECT_EQ(rs[0].at("iterations").size(), 8u);
  for (std::size_t i = 1; i < rs.size(); ++i)
    if (!rs[i].is_discarded()) expect_same_record(rs[i], rs[0], std::to_string(i + 1) + " ranks");
}

TEST(CliMpi, IntegrateWithTheUniformStratificationIsBitwiseOneProcess) {
  const auto rs = records("integrate f2 --dim 3 --seed 5 --threads 2 --stratification uniform " + options);
  if (rs[0].is_discarded()) return;
  for (std::size_t i = 1; i < rs.size(); ++i)
    if (!rs[i].is_discarded()) expect_same_record(rs[i], rs[0], std::to_string(i + 1) + " ranks");
}

TEST(CliMpi, ScanIsBitwiseOneProcess) {
  const auto rs = records("scan f4 --dim 2 --param a=5:10:2 --param u=0.3:0.7:3 --seed 7 --threads 1 " + options);
  if (rs[0].is_discarded()) return;
  const json& whole = rs[0].at("results");
  ASSERT_EQ(whole.size(), 6u);
  for (std::size_t i = 1; i < rs.size(); ++i) {
    if (rs[i].is_discarded()) continue;
    const json& part = rs[i].at("results");
    ASSERT_EQ(part.size(), whole.size());
    for (std::size_t k = 0; k < whole.size(); ++k)
      for (const char* key : {"estimate", "error", "chi2_dof", "status", "n_iterations"})
        EXPECT_EQ(part[k].at(key), whole[k].at(key)) << i + 1 << " ranks, integral " << k << ": " << key;
  }
}

TEST(CliMpi, WhatDoesNotRunUnderSeveralRanksIsRefused) {
  const std::string npy = temp_path(".npy");
  for (const std::string& args :
       {std::string("integrate --expr 'x0*x1' --dim 2"), std::string("scan f4 --dim 2 --param a=5:10:2 --backend cuda"),
        "sample f4 --dim 2 --points 10 --npy '" + npy + "'"}) {
    const cli_run r = run_cli(2, args + " --calls-per-iter 1e4");
    EXPECT_EQ(r.exit_code, 2) << args << "\n" << r.out << r.err;
    EXPECT_NE(r.err.find("under mpirun"), std::string::npos) << args << "\n" << r.err;
    EXPECT_EQ(r.err.find("mcubes: error"), r.err.rfind("mcubes: error")) << "one line, rank 0's:\n" << r.err;
  }
  EXPECT_EQ(read_file(npy), "");
}

// A run checkpointed at its 4th iteration under `writer` ranks (0: one process), resumed to the 8th
// under `reader` ranks: the record of the run never stopped, bit for bit (the state in the file has
// no trace of the number of processes; rank 0 writes every rank's VEGAS+ shares).
void expect_resumed_across(const std::string& command, int writer, int reader, const json& whole) {
  SCOPED_TRACE(testing::Message() << "written by " << writer << " ranks, resumed by " << reader);
  const std::string ckpt = temp_path(".ckpt"), path = temp_path(".json");
  const std::string part = std::regex_replace(command, std::regex("--max-iterations 8"), "--max-iterations 4");
  const cli_run w = run_cli(writer, part + " --checkpoint '" + ckpt + "'");
  ASSERT_LE(w.exit_code, 1) << w.err;
  ASSERT_NE(read_file(ckpt), "") << "no checkpoint";
  const cli_run r = run_cli(reader, command + " --resume '" + ckpt + "' --force --json '" + path + "'");
  ASSERT_LE(r.exit_code, 1) << r.err;
  const json j = json::parse(read_file(path), nullptr, false);
  ASSERT_FALSE(j.is_discarded()) << r.out << r.err;
  if (j.contains("results")) {  // a scan: every integral
    ASSERT_EQ(j.at("results").size(), whole.at("results").size());
    for (std::size_t k = 0; k < whole.at("results").size(); ++k)
      for (const char* key : {"estimate", "error", "chi2_dof", "status", "n_iterations"})
        EXPECT_EQ(j.at("results")[k].at(key), whole.at("results")[k].at(key)) << "integral " << k << ": " << key;
  } else {
    expect_same_record(j, whole, "resumed");
  }
  std::remove(ckpt.c_str());
  std::remove(path.c_str());
}

TEST(CliMpi, CheckpointsCrossTheNumberOfRanksBitwise) {
  for (const std::string& command :
       {"integrate f4 --dim 4 --seed 3 --threads 1 " + options,
        "scan f4 --dim 2 --param a=5:10:2 --param u=0.3:0.7:2 --seed 7 --threads 1 " + options}) {
    SCOPED_TRACE(command);
    const std::string path = temp_path(".json");
    const cli_run r = run_cli(0, command + " --json '" + path + "'");
    ASSERT_LE(r.exit_code, 1) << r.err;
    const json whole = json::parse(read_file(path));
    std::remove(path.c_str());
    expect_resumed_across(command, 2, 0, whole);
    expect_resumed_across(command, 0, 3, whole);
    expect_resumed_across(command, 3, 2, whole);
  }
}

// Ranks with one GPU each (a CUDA device needed; 3 ranks on a host of fewer GPUs share them): the
// record of one process on one GPU bit for bit, the exchange time in the record; checkpoints
// written by 2 ranks on GPUs resume in one process and the reverse, with the same bits.
TEST(CliMpi, RanksWithAGpuEachGiveTheOneGpuRecord) {
  // uniform stratification: a small checkpoint, which a run of seconds writes at its end
  const std::string command = "integrate f4 --dim 6 --seed 4 --calls-per-iter 1e7 --rel-tol 1e-12 --skip 0 "
                              "--min-iterations 1 --max-iterations 8 --stratification uniform --backend cuda";
  const std::string path = temp_path(".json");
  const cli_run one = run_cli(0, command + " --json '" + path + "'");
  if (one.exit_code == 3) GTEST_SKIP() << "no CUDA device: " << one.err;
  ASSERT_EQ(one.exit_code, 1) << one.err;
  const json whole = json::parse(read_file(path));
  for (int ranks : {2, 3}) {
    const cli_run r = run_cli(ranks, command + " --json '" + path + "'");
    ASSERT_EQ(r.exit_code == 0 ? 1 : r.exit_code, 1) << ranks << " ranks: " << r.err;  // mpirun's own status may be 0
    const json j = json::parse(read_file(path), nullptr, false);
    ASSERT_FALSE(j.is_discarded()) << r.out << r.err;
    expect_same_record(j, whole, std::to_string(ranks) + " ranks on GPUs");
    EXPECT_EQ(j.at("exchange").at("team"), std::to_string(ranks) + " MPI ranks");
    EXPECT_NE(r.out.find("one GPU per rank (" + std::to_string(ranks) + " MPI ranks)"), std::string::npos) << r.out;
    EXPECT_NE(r.out.find("exchange: " + std::to_string(ranks) + " MPI ranks, "), std::string::npos) << r.out;
  }
  // ranks x devices: 2 ranks of 2 devices each (two streams of one GPU where there is one), and 3
  // ranks of 2: every rank's devices one team (nested_communicator), the same record; a
  // checkpoint written so is resumed in one process with the same bits
  for (int ranks : {2, 3}) {
    const cli_run r = run_cli(ranks, command + " --devices 0,0 --json '" + path + "'");
    ASSERT_EQ(r.exit_code == 0 ? 1 : r.exit_code, 1) << ranks << " ranks x 2 devices: " << r.err;
    const json j = json::parse(read_file(path), nullptr, false);
    ASSERT_FALSE(j.is_discarded()) << r.out << r.err;
    expect_same_record(j, whole, std::to_string(ranks) + " ranks x 2 devices");
    EXPECT_EQ(j.at("exchange").at("team"), std::to_string(ranks) + " MPI ranks x 2 devices");
    EXPECT_NE(r.out.find("on devices 0,0 (each rank)"), std::string::npos) << r.out;
  }
  std::remove(path.c_str());
  expect_resumed_across(command, 2, 0, whole);
  expect_resumed_across(command, 0, 2, whole);
  expect_resumed_across(command + " --devices 0,0", 2, 0, whole);
}

// SIGTERM to mpirun (which forwards it to the ranks): every rank stops at the same iteration
// boundary, rank 0 writes the record (status interrupted, the completed iterations) and the
// checkpoint, and the run resumed in one process ends with the bits of the run never stopped.
TEST(CliMpi, SigtermToMpirunKeepsTheCompletedIterationsAndTheirCheckpoint) {
  // 4e7 evaluations in 200 iterations (~9 s in one process at -O1 on one core)
  const std::string command = "integrate f4 --dim 6 --seed 9 --threads 1 --calls-per-iter 2e5 --max-iterations 200 "
                              "--adapt-iterations 10 --skip 2 --rel-tol 1e-12 --backend cpu";
  const std::string whole_path = temp_path(".json"), ckpt = temp_path(".ckpt"), stopped = temp_path(".json"),
                    resumed = temp_path(".json");
  ASSERT_LE(run_cli(0, command + " --json '" + whole_path + "'").exit_code, 1);
  const json whole = json::parse(read_file(whole_path));
  // mpirun in the background, SIGTERM once its first checkpoint exists (an iteration boundary
  // passed; waiting at most 60 s), then 0.2 s more: mid-run whatever the machine's load
  const std::string launch = "OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 '" + std::string(MCUBES_MPIEXEC) +
                             "' --oversubscribe -np 2 '" + MCUBES_CLI_PATH + "' " + command + " --checkpoint '" + ckpt +
                             "' --json '" + stopped + "' >/dev/null 2>&1 & pid=$!; for i in $(seq 1200); do [ -s '" +
                             ckpt + "' ] && break; sleep 0.05; done; sleep 0.2; kill -TERM $pid; wait $pid";
  const cli_run k = mcubes_test::run_captured(launch, "mcubes_mpi");
  const json j = json::parse(read_file(stopped), nullptr, false);
  ASSERT_FALSE(j.is_discarded()) << k.out << k.err;
  if (j.at("status") != "interrupted") GTEST_SKIP() << "the run ended before the signal (" << j.at("status") << ")";
  EXPECT_LT(j.at("n_iterations").get<int>(), 200);
  ASSERT_NE(read_file(ckpt), "");
  const cli_run r = run_cli(0, command + " --resume '" + ckpt + "' --json '" + resumed + "'");
  ASSERT_LE(r.exit_code, 1) << r.err;
  expect_same_record(json::parse(read_file(resumed)), whole, "resumed after SIGTERM");
  for (const std::string& f : {whole_path, ckpt, stopped, resumed}) std::remove(f.c_str());
}

}  // namespace

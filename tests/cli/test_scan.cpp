/// @file tests/cli/test_scan.cpp
/// Tests of `mcubes scan`, run as a program (path in MCUBES_CLI_PATH): the grid (K = the product of
/// the COUNTs, grid order, the last parameter fastest), the JSON record (one object per point with
/// its parameters, seed batch_seed(seed, k), estimate, error, status, iterations, exact value, pull),
/// rows reproduced bit for bit by `mcubes integrate` with their seeds, pulls against the exact values,
/// SIGINT/SIGTERM keeping every integral's completed iterations, and a failing grid point (suite or
/// --expr) becoming a "failed" row while the others are kept. Bad inputs are in the catalogue
/// tests/cli/bad_inputs.tsv (run by test_cli). Every run is seeded and runs on the CPU.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <iostream>
#include <sstream>
#include <string>
#include <vector>

#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <nlohmann/json.hpp>

#include <mcubes/core/batch.hpp>
#include <mcubes/options.hpp>

#include "cli/child_process.hpp"
#include "cli/cli_test_support.hpp"

#include "support/bits.hpp"

#ifndef MCUBES_CLI_PATH
#error "MCUBES_CLI_PATH (path of the mcubes program) must be defined"
#endif

namespace {

using json = nlohmann::json;
using mcubes_test::read_file;

/// Largest |pull| = |estimate - exact| / error accepted for a converged integral, in units of its
/// reported sigma (6 integrals: a 4-sigma excursion has probability 4e-4 for all of them together).
constexpr double max_pull_sigma = 4.0;

std::string temp_path(const std::string& suffix) { return mcubes_test::temp_path("mcubes_scan", suffix); }

using mcubes_test::cli_run;

/// Runs `mcubes <args>` (args as on a shell command line) and captures its output.
cli_run run_cli(const std::string& args) {
  return mcubes_test::run_captured(std::string("'") + MCUBES_CLI_PATH + "' " + args, "mcubes_scan");
}

using mcubes_test::same_bits;

/// The options of the small scans below (and of integrate's reproductions of their rows).
const std::string small_options =
    "--calls-per-iter 2e4 --max-iterations 15 --adapt-iterations 10 --skip 2 --min-iterations 3 --rel-tol 2e-3 "
    "--backend cpu";

/// A 2 x 3 grid of f4 in d = 2: a in {5, 10}, u in {0.3, 0.5, 0.7}, seed 7.
const std::string small_scan = "scan f4 --dim 2 --param a=5:10:2 --param u=0.3:0.7:3 --seed 7 " + small_options;

/// The scan above run once with --json (and --json-iterations), shared by the tests that read it.
struct scan_output {
  cli_run run;
  json record;
};
const scan_output& small_scan_output() {
  static const scan_output s = [] {
    scan_output o;
    const std::string path = temp_path(".json");
    o.run = run_cli(small_scan + " --threads 2 --json-iterations --json '" + path + "'");
    o.record = json::parse(read_file(path), nullptr, false);
    std::remove(path.c_str());
    return o;
  }();
  return s;
}

TEST(Scan, JsonHasOneObjectPerPointInGridOrderWithItsSeed) {
  const scan_output& s = small_scan_output();
  ASSERT_EQ(s.run.exit_code, 0) << s.run.out << s.run.err;
  const json& j = s.record;
  ASSERT_FALSE(j.is_discarded());
  EXPECT_EQ(j.at("command"), "scan");
  EXPECT_EQ(j.at("integrand").at("name"), "f4");
  EXPECT_EQ(j.at("integrand").at("dim"), 2);
  EXPECT_EQ(j.at("status"), "converged");
  EXPECT_EQ(j.at("options").at("seed"), 7u);
  EXPECT_EQ(j.at("options").at("n_bins"), 500);
  EXPECT_EQ(j.at("backend"), "cpu");
  EXPECT_EQ(j.at("parameter_grid").at("integrals"), 6u);
  const json& results = j.at("results");
  ASSERT_EQ(results.size(), 6u);
  const double as[] = {5, 10}, us[] = {0.3, 0.5, 0.7};
  std::uint64_t n_eval = 0;
  for (std::size_t k = 0; k < 6; ++k) {
    const json& r = results[k];
    EXPECT_EQ(r.at("index"), k);
    EXPECT_EQ(r.at("params").at("a").get<double>(), as[k / 3]) << k;  // u varies fastest
    EXPECT_EQ(r.at("params").at("u").get<double>(), us[k % 3]) << k;
    EXPECT_EQ(r.at("seed").get<std::uint64_t>(), mcubes::batch_seed(7, k)) << k;
    EXPECT_TRUE(r.at("estimate").is_number());
    EXPECT_TRUE(r.at("error").is_number());
    EXPECT_EQ(r.at("status"), "converged");
    EXPECT_GE(r.at("n_iterations").get<int>(), 3);
    EXPECT_EQ(r.at("iterations").size(), r.at("n_iterations").get<std::size_t>());
    EXPECT_TRUE(r.at("exact").is_number());
    EXPECT_TRUE(r.at("pull").is_number());
    EXPECT_EQ(r.at("reproduce").get<std::string>().rfind("mcubes integrate f4 --dim 2 --param a=", 0), 0u);
    n_eval += r.at("n_eval").get<std::uint64_t>();
  }
  EXPECT_EQ(j.at("n_eval").get<std::uint64_t>(), n_eval);
  // The text report: the header, one row per point (in grid order) and the summary.
  EXPECT_NE(s.run.out.find("grid: K = 6 integrals: a: 2 values in [5, 10] x u: 3 values in [0.3, 0.7]"),
            std::string::npos)
      << s.run.out;
  std::istringstream lines(s.run.out);
  int rows = 0;
  for (std::string l; std::getline(lines, l);) {
    std::istringstream fields(l);
    std::size_t k;
    double a, u;
    if (fields >> k >> a >> u && l.find("converged") != std::string::npos) {
      EXPECT_EQ(k, static_cast<std::size_t>(rows));
      EXPECT_EQ(a, as[k / 3]);
      EXPECT_EQ(u, us[k % 3]);
      ++rows;
    }
  }
  EXPECT_EQ(rows, 6) << s.run.out;
  EXPECT_NE(s.run.out.find("scan: 6 integrals: 6 converged;"), std::string::npos) << s.run.out;
}

// Every integral converged and lies within max_pull_sigma of its exact value.
TEST(Scan, PullsAgainstTheExactValuesAreWithinFourSigma) {
  const scan_output& s = small_scan_output();
  ASSERT_EQ(s.run.exit_code, 0) << s.run.err;
  for (const json& r : s.record.at("results")) {
    ASSERT_EQ(r.at("status"), "converged");
    const double estimate = r.at("estimate"), error = r.at("error"), exact = r.at("exact");
    EXPECT_GT(error, 0);
    EXPECT_LT(std::fabs(estimate - exact), max_pull_sigma * error) << r.dump();
    EXPECT_DOUBLE_EQ(r.at("pull").get<double>(), (estimate - exact) / error);
  }
}

/// The fields of a result that must agree bit for bit between a scan row and integrate.
void expect_same_result(const json& row, const json& single, const std::string& what) {
  for (const char* key : {"estimate", "error", "chi2_dof", "q"})
    EXPECT_TRUE(same_bits(row.at(key).get<double>(), single.at(key).get<double>()))
        << what << ": " << key << " " << row.at(key) << " vs " << single.at(key);
  EXPECT_EQ(row.at("n_eval"), single.at("n_eval")) << what;
  EXPECT_EQ(row.at("n_iterations"), single.at("n_iterations")) << what;
  EXPECT_EQ(row.at("status"), single.at("status")) << what;
  EXPECT_EQ(row.at("seed"), single.at("seed")) << what;
  const json& a = row.at("iterations");
  const json& b = single.at("iterations");
  ASSERT_EQ(a.size(), b.size()) << what;
  for (std::size_t i = 0; i < a.size(); ++i)
    for (const char* key : {"estimate", "error", "weighted_estimate"})
      if (a[i].at(key).is_number()) {
        EXPECT_TRUE(same_bits(a[i].at(key).get<double>(), b[i].at(key).get<double>())) << what << ": iteration " << i;
      }
}

// `mcubes integrate f4 --param ... --seed SEED` with a row's seed and the scan's options gives that
// row bit for bit: one row by a command written here, one by the row's own "reproduce" command.
TEST(Scan, RowsAreReproducedBitwiseByIntegrateWithTheirSeeds) {
  const scan_output& s = small_scan_output();
  ASSERT_EQ(s.run.exit_code, 0) << s.run.err;
  const json& results = s.record.at("results");
  {
    const json& row = results[1];  // a = 5, u = 0.5
    const std::string path = temp_path(".json");
    const cli_run r = run_cli("integrate f4 --dim 2 --param a=" + row.at("params").at("a").dump() + " --param u=" +
                              row.at("params").at("u").dump() + " --seed " + row.at("seed").dump() + " " +
                              small_options + " --threads 1 --json '" + path + "'");
    ASSERT_EQ(r.exit_code, 0) << r.err;
    expect_same_result(row, json::parse(read_file(path)), "row 1");
    std::remove(path.c_str());
  }
  {
    const json& row = results[5];  // a = 10, u = 0.7
    std::string command = row.at("reproduce").get<std::string>();
    ASSERT_EQ(command.rfind("mcubes ", 0), 0u);
    command = command.substr(7);
    EXPECT_NE(command.find("--seed " + row.at("seed").dump()), std::string::npos) << command;
    const std::string path = temp_path(".json");
    const cli_run r = run_cli(command + " --threads 1 --json '" + path + "'");
    ASSERT_EQ(r.exit_code, 0) << command << "\n" << r.err;
    expect_same_result(row, json::parse(read_file(path)), "row 5 (" + command + ")");
    std::remove(path.c_str());
  }
}

// `mcubes scan --expr` with the parameters p[0], p[1] of the text over a grid, over [0, 2]^2, in
// one batch: each row within max_pull_sigma of its exact value, and each row's "reproduce"
// command (`mcubes integrate --expr ... --lower 0 --upper 2 --param p0=... --param p1=... --seed
// SEED`) gives it bit for bit.
TEST(Scan, AnExpressionIsScannedOverItsParametersAndItsRowsAreReproducedBitwise) {
  const std::string text = "exp(-p[0]*x[0]) * (1 + p[1]*x[1])";
  const std::string path = temp_path(".json");
  const cli_run s = run_cli("scan --expr '" + text + "' --dim 2 --lower 0 --upper 2 --param p0=0.5:2:3 "
                            "--param p1=0:1:2 --seed 11 " + small_options + " --threads 2 --json-iterations --json '" +
                            path + "'");
  ASSERT_EQ(s.exit_code, 0) << s.out << s.err;
  EXPECT_NE(s.out.find("grid: K = 6 integrals: p0: 3 values in [0.5, 2] x p1: 2 values in [0, 1]"), std::string::npos)
      << s.out;
  EXPECT_NE(s.out.find("compiled: "), std::string::npos) << s.out;
  const json j = json::parse(read_file(path));
  std::remove(path.c_str());
  EXPECT_EQ(j.at("integrand").at("name"), "expr");
  EXPECT_EQ(j.at("source").at("text"), text);
  EXPECT_EQ(j.at("compile").at("backend"), "cpu");
  EXPECT_EQ(j.at("region"), json::parse("[[0, 2], [0, 2]]"));
  const json& results = j.at("results");
  ASSERT_EQ(results.size(), 6u);
  const double p0s[] = {0.5, 1.25, 2}, p1s[] = {0, 1};
  for (std::size_t k = 0; k < 6; ++k) {
    const json& row = results[k];
    const double a = p0s[k / 2], b = p1s[k % 2];
    EXPECT_EQ(row.at("params").at("p0").get<double>(), a) << k;
    EXPECT_EQ(row.at("params").at("p1").get<double>(), b) << k;
    EXPECT_EQ(row.at("seed").get<std::uint64_t>(), mcubes::batch_seed(11, k));
    EXPECT_TRUE(row.at("exact").is_null());  // no exact value for a text
    ASSERT_EQ(row.at("status"), "converged") << k;
    const double exact = (1 - std::exp(-2 * a)) / a * (2 + 2 * b);  // int_0^2 e^{-a x} dx * int_0^2 (1 + b y) dy
    const double estimate = row.at("estimate").get<double>(), error = row.at("error").get<double>();
    EXPECT_LE(std::fabs(estimate - exact), max_pull_sigma * error) << k << ": " << estimate << " +- " << error;
    std::string command = row.at("reproduce").get<std::string>();
    ASSERT_EQ(command.rfind("mcubes integrate --expr '" + text + "' --lower 0 --upper 2 --dim 2 --param p0=", 0), 0u)
        << command;
    command = command.substr(7);
    const std::string single = temp_path(".json");
    const cli_run r = run_cli(command + " --threads 1 --json '" + single + "'");
    ASSERT_EQ(r.exit_code, 0) << command << "\n" << r.err;
    expect_same_result(row, json::parse(read_file(single)), "row " + std::to_string(k) + " (" + command + ")");
    std::remove(single.c_str());
  }
}

// K is the product of the COUNTs; one value per parameter is a grid of one point; START == STOP with
// COUNT > 1 repeats the point with independent seeds.
TEST(Scan, TheNumberOfIntegralsIsTheProductOfTheCounts) {
  const std::string quick = " --calls-per-iter 1e3 --max-iterations 3 --skip 0 --min-iterations 1 --backend cpu --json -";
  {
    const cli_run r = run_cli("scan f5 --dim 3 --param u=0.2:0.6:3 --param a=4:6:4" + quick);
    ASSERT_TRUE(r.exit_code == 0 || r.exit_code == 1) << r.err;
    const json j = json::parse(r.out);
    EXPECT_EQ(j.at("results").size(), 12u);
    EXPECT_EQ(j.at("results")[1].at("params").at("a"), 4.66666666666667);  // a varies fastest; 15 digits
    EXPECT_EQ(j.at("results")[4].at("params").at("u"), 0.4);
    EXPECT_EQ(j.at("results")[11].at("params").at("a"), 6.0);  // STOP exactly
  }
  {
    const cli_run r = run_cli("scan f2 --dim 3 --param a=20" + quick);
    ASSERT_TRUE(r.exit_code == 0 || r.exit_code == 1) << r.err;
    const json j = json::parse(r.out);
    ASSERT_EQ(j.at("results").size(), 1u);
    EXPECT_EQ(j.at("results")[0].at("params").at("a"), 20.0);
    EXPECT_EQ(j.at("results")[0].at("params").at("u"), 0.5);  // the default
    EXPECT_EQ(j.at("results")[0].at("seed").get<std::uint64_t>(), mcubes::batch_seed(mcubes::default_seed, 0));
  }
  {
    const cli_run r = run_cli("scan f4 --dim 2 --param u=0.5:0.5:3 --param a=10:10:1" + quick);
    ASSERT_TRUE(r.exit_code == 0 || r.exit_code == 1) << r.err;
    const json j = json::parse(r.out);
    ASSERT_EQ(j.at("results").size(), 3u);
    EXPECT_NE(j.at("results")[0].at("seed"), j.at("results")[1].at("seed"));
    EXPECT_NE(j.at("results")[0].at("estimate"), j.at("results")[1].at("estimate"));
  }
}

using mcubes_test::child;

/// Waits until the scan's JSON record (status "running", rewritten during the scan) reports at
/// least `rounds` rounds (or the child ended, or 60 s passed).
void wait_for_rounds(const child& c, const std::string& path, int rounds) {
  mcubes_test::wait_while_running(
      c,
      [&] {
        const json j = json::parse(read_file(path), nullptr, false);
        return !j.is_discarded() && j.at("progress").at("round").get<int>() >= rounds;
      },
      std::to_string(rounds) + " rounds");
}

void expect_interrupted(int sig, int expected_exit) {
  constexpr int rounds = 3;
  const std::string path = temp_path(".json");
  const child c = mcubes_test::start("mcubes_scan", {"scan", "f4", "--dim", "4", "--param", "u=0.4:0.6:2",
                                                     "--calls-per-iter", "1e6", "--max-iterations", "300", "--rel-tol",
                                                     "1e-14", "--threads", "1", "--backend", "cpu", "--json", path,
                                                     // every iteration m p evaluations: n_eval a multiple of them
                                                     "--stratification", "uniform"});
  wait_for_rounds(c, path, rounds);
  ASSERT_EQ(kill(c.pid, sig), 0);
  int status = 0;
  ASSERT_EQ(waitpid(c.pid, &status, 0), c.pid);
  ASSERT_TRUE(WIFEXITED(status)) << "killed by signal " << (WIFSIGNALED(status) ? WTERMSIG(status) : 0);
  EXPECT_EQ(WEXITSTATUS(status), expected_exit);
  const std::string out = read_file(c.out);
  EXPECT_NE(out.find("status: interrupted: stopped by signal"), std::string::npos) << out;
  EXPECT_NE(out.find("scan: 2 integrals: 2 interrupted;"), std::string::npos) << out;
  const json j = json::parse(read_file(path));
  EXPECT_EQ(j.at("status"), "interrupted");
  EXPECT_EQ(j.at("signal"), sig);
  ASSERT_EQ(j.at("results").size(), 2u);
  for (const json& r : j.at("results")) {
    EXPECT_EQ(r.at("status"), "interrupted");
    // the completed iterations are kept: after `rounds` rounds at least rounds - 1 iterations (the
    // first round may be the bin-scale probe, a pass that is not an iteration)
    EXPECT_GE(r.at("n_iterations").get<int>(), rounds - 1);
    EXPECT_TRUE(r.at("estimate").is_number());
    EXPECT_EQ(r.at("n_eval").get<std::uint64_t>() % r.at("n_iterations").get<std::uint64_t>(), 0u);
  }
  EXPECT_EQ(read_file(c.err), "");
  std::remove(path.c_str());
  mcubes_test::remove_outputs(c);
}

TEST(Scan, SigintKeepsEveryIntegralsCompletedIterations) { expect_interrupted(SIGINT, 130); }

TEST(Scan, SigtermKeepsEveryIntegralsCompletedIterations) { expect_interrupted(SIGTERM, 143); }

// A scan of very long rounds (2 integrals x 10^10 evaluations per pass): the time warning on
// stderr (as integrate's), and SIGTERM in the middle of the first round ends it at once (well
// before the 60 s limit of the test) with every integral interrupted, exit 143.
TEST(Scan, WarnsAboutLongRoundsAndSigtermAbandonsTheRound) {
  const std::string path = temp_path(".json");
  const child c = mcubes_test::start("mcubes_scan", {"scan", "f4", "--dim", "4", "--param", "u=0.4:0.6:2",
                                                     "--calls-per-iter", "1e10", "--max-iterations", "2", "--skip", "0",
                                                     "--min-iterations", "1", "--threads", "2", "--backend", "cpu",
                                                     "--json", path});
  mcubes_test::wait_while_running(
      c, [&] { return read_file(c.err).find("mcubes: warning: each round of the scan will take about") != std::string::npos; },
      "the time warning");
  ASSERT_EQ(kill(c.pid, SIGTERM), 0);
  const int status = mcubes_test::wait_for_exit(c, 60);
  ASSERT_TRUE(WIFEXITED(status)) << "killed by signal " << (WIFSIGNALED(status) ? WTERMSIG(status) : 0);
  EXPECT_EQ(WEXITSTATUS(status), 143);
  const json j = json::parse(read_file(path));
  EXPECT_EQ(j.at("status"), "interrupted");
  EXPECT_EQ(j.at("signal"), SIGTERM);
  ASSERT_EQ(j.at("results").size(), 2u);
  for (const json& r : j.at("results")) EXPECT_EQ(r.at("status"), "interrupted");
  EXPECT_EQ(read_file(c.err).find("cannot be abandoned"), std::string::npos) << read_file(c.err);
  std::remove(path.c_str());
  mcubes_test::remove_outputs(c);
}

/// Runs `mcubes scan args... --json FILE` to its end; returns its peak resident memory (bytes, from
/// wait4) and sets `estimate` to the record's memory.host_bytes.
double scan_peak_rss(const std::vector<std::string>& args, double& estimate) {
  const std::string path = temp_path(".json");
  std::vector<std::string> all = args;
  all.insert(all.end(), {"--json", path, "--no-progress"});
  const child c = mcubes_test::start("mcubes_scan", all);
  int status = 0;
  rusage usage{};
  EXPECT_EQ(wait4(c.pid, &status, 0, &usage), c.pid);
  EXPECT_TRUE(WIFEXITED(status) && (WEXITSTATUS(status) == 0 || WEXITSTATUS(status) == 1)) << read_file(c.err);
  const json j = json::parse(read_file(path));
  estimate = j.at("memory").at("host_bytes").get<double>();
  std::remove(path.c_str());
  mcubes_test::remove_outputs(c);
  return static_cast<double>(usage.ru_maxrss) * 1024;
}

// The host memory estimate in the header (checked against --max-memory) is that of the scan: the
// growth of the peak resident memory from 2 to 10,000 integrals is within a factor 1.5 of the
// growth of the estimate, with small maps (where the per-integral state dominates) and default
// ones, and with each integral's iterations in the JSON record.
TEST(Scan, TheMemoryEstimateIsWithinAFactor1Point5OfThePeak) {
  for (const std::vector<std::string>& extra :
       {std::vector<std::string>{"--bins", "10"}, std::vector<std::string>{"--bins", "500"},
        std::vector<std::string>{"--bins", "10", "--json-iterations"}}) {
    const auto args = [&](const std::string& a_points) {
      std::vector<std::string> v{"scan",   "f4",           "--dim",   "4",       "--param", "a=" + a_points,
                                 "--param", "u=0.2:0.8:2", "--calls-per-iter", "1e3", "--max-iterations", "4",
                                 "--skip",  "0",           "--min-iterations", "1", "--threads", "2",
                                 "--backend", "cpu"};
      v.insert(v.end(), extra.begin(), extra.end());
      return v;
    };
    double small_estimate = 0, large_estimate = 0;
    const double small_peak = scan_peak_rss(args("5"), small_estimate);
    const double large_peak = scan_peak_rss(args("5:20:5000"), large_estimate);
    const double measured = large_peak - small_peak, estimated = large_estimate - small_estimate;
    std::cout << "  " << extra[0] << " " << extra[1] << (extra.size() > 2 ? " " + extra[2] : std::string()) << ": estimated "
              << estimated << " bytes, measured " << measured << " (ratio " << estimated / measured << ")\n";
    EXPECT_GT(estimated, measured / 1.5) << extra.back() << ": estimated " << estimated << ", measured " << measured;
    EXPECT_LT(estimated, measured * 1.5) << extra.back() << ": estimated " << estimated << ", measured " << measured;
  }
}

// The CPU scan runs on any thread count with the same bits (the batch's contract, through the command).
TEST(Scan, ResultsDoNotDependOnTheThreadCount) {
  const cli_run one = run_cli(small_scan + " --threads 1 --json -");
  ASSERT_EQ(one.exit_code, 0) << one.err;
  const json j = json::parse(one.out);
  const json& two = small_scan_output().record.at("results");
  ASSERT_EQ(j.at("results").size(), two.size());
  for (std::size_t k = 0; k < two.size(); ++k) {
    EXPECT_TRUE(same_bits(j.at("results")[k].at("estimate"), two[k].at("estimate"))) << k;
    EXPECT_TRUE(same_bits(j.at("results")[k].at("error"), two[k].at("error"))) << k;
  }
}

/// The row's failure reason, or "" ("failure" is present only in failed rows).
std::string failure_of(const json& row) { return row.contains("failure") ? row.at("failure").get<std::string>() : ""; }

/// Checks a scan whose rows `failing` failed (status "failed", the reason containing `why`, null
/// estimate, error, chi2_dof, q, pull) and whose other rows are complete and reproduced bit for bit
/// by their "reproduce" commands (row `check`): exit 3 after every row and the summary.
void expect_failed_rows(const cli_run& s, const json& j, std::size_t K, const std::vector<std::size_t>& failing,
                        const std::string& why, std::size_t check) {
  EXPECT_EQ(s.exit_code, 3) << s.out << s.err;
  EXPECT_EQ(j.at("status"), "failed");
  EXPECT_EQ(j.at("counts").at("failed").get<std::size_t>(), failing.size());
  const json& results = j.at("results");
  ASSERT_EQ(results.size(), K);
  for (std::size_t k = 0; k < K; ++k) {
    const json& row = results[k];
    const bool fails = std::find(failing.begin(), failing.end(), k) != failing.end();
    SCOPED_TRACE("row " + std::to_string(k));
    if (fails) {
      EXPECT_EQ(row.at("status"), "failed");
      EXPECT_NE(failure_of(row).find(why), std::string::npos) << failure_of(row);
      for (const char* key : {"estimate", "error", "chi2_dof", "q", "pull", "true_rel_error"})
        EXPECT_TRUE(row.at(key).is_null()) << key << ": " << row.at(key);
      EXPECT_NE(s.out.find("failed: integral " + std::to_string(k) + " ("), std::string::npos) << s.out;
    } else {
      EXPECT_NE(row.at("status"), "failed");
      EXPECT_FALSE(row.contains("failure"));
      EXPECT_TRUE(row.at("estimate").is_number());
      EXPECT_TRUE(row.at("error").is_number());
    }
  }
  EXPECT_NE(s.out.find("scan: " + std::to_string(K) + " integrals: "), std::string::npos) << s.out;
  EXPECT_NE(s.err.find("mcubes: error: " + std::to_string(failing.size()) + " of " + std::to_string(K) +
                       " integrals failed"),
            std::string::npos)
      << s.err;
  // a kept row is its single run, bit for bit (the failing ones left the batch without touching it)
  std::string command = results[check].at("reproduce").get<std::string>().substr(7);
  const std::string single = temp_path(".json");
  const cli_run r = run_cli(command + " --threads 1 --json '" + single + "'");
  ASSERT_TRUE(r.exit_code == 0 || r.exit_code == 1) << command << "\n" << r.err;
  expect_same_result(results[check], json::parse(read_file(single)), "row " + std::to_string(check));
  std::remove(single.c_str());
}

// One grid point whose integrand overflows (f6 with a = 200 in d = 1: f^2 beyond the double range)
// fails alone: its row says "failed" and why, the other rows are kept, complete; exit 3 at the end.
TEST(Scan, AFailingGridPointIsAFailedRowAndTheOthersAreKept) {
  const std::string path = temp_path(".json");
  const cli_run s = run_cli("scan f6 --dim 1 --param a=1:72:3 --param u=1 --seed 9 --calls-per-iter 1e4 --max-iterations 6 "
                            "--adapt-iterations 4 --skip 1 --min-iterations 2 --backend cpu --threads 2 "
                            "--json-iterations --json '" + path + "'");
  const json j = json::parse(read_file(path));
  std::remove(path.c_str());
  expect_failed_rows(s, j, 3, {2}, "overflow", 1);
  EXPECT_EQ(j.at("results")[2].at("params").at("a").get<double>(), 72.0);
}

// The same through an integrand compiled at run time (the batch's per-integral failures cross
// the compiled object's interface): NaN where p0 > 1.
TEST(Scan, AFailingGridPointOfAnExpressionIsAFailedRow) {
  const std::string path = temp_path(".json");
  const cli_run s = run_cli("scan --expr 'x[0] > 0.5 ? log(1 - p[0]) : x[0]' --dim 2 --param p0=0.5:2:3 --seed 4 " +
                            small_options + " --threads 2 --json-iterations --json '" + path + "'");
  const json j = json::parse(read_file(path));
  std::remove(path.c_str());
  expect_failed_rows(s, j, 3, {1, 2}, "integrand returned ", 0);
}

// --json /dev/null: the device stays a device (it gets the final record, straight through).
TEST(Scan, JsonToDevNullLeavesItACharacterDevice) {
  const cli_run s = run_cli(small_scan + " --quiet --json /dev/null");
  EXPECT_EQ(s.exit_code, 0) << s.err;
  struct stat st;
  ASSERT_EQ(::lstat("/dev/null", &st), 0);
  EXPECT_TRUE(S_ISCHR(st.st_mode));
}

}  // namespace

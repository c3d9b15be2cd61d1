/// @file tests/cli/test_interrupt.cpp
/// Nothing lost: `mcubes integrate` interrupted by SIGINT or SIGTERM stops at once (the pass under
/// way abandoned on the CPU, even a pass of days), prints the completed iterations and the result with status "interrupted", writes
/// them to --json and exits 130 / 143; killed outright (SIGKILL) it leaves a complete JSON record
/// of the iterations so far (status "running"); an existing --json file is never left truncated.
/// The program runs as a child process (fork/exec), its stdout in a file that is polled.
#include <gtest/gtest.h>

#include <csignal>
#include <fstream>
#include <functional>
#include <random>
#include <regex>
#include <chrono>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include <sys/wait.h>
#include <unistd.h>

#include <nlohmann/json.hpp>

#include "cli/child_process.hpp"
#include "cli/cli_test_support.hpp"

namespace {

using json = nlohmann::json;

using mcubes_test::read_file;

std::string temp_path(const std::string& suffix) { return mcubes_test::temp_path("mcubes_interrupt", suffix); }

/// Rows of the iteration table in `out` ("   3 a*---  ...").
int count_rows(const std::string& out) {
  static const std::regex row(R"(^\s*\d+ [a-][*-][r-][o-][u-] )");
  int n = 0;
  std::istringstream s(out);
  for (std::string l; std::getline(s, l);)
    if (std::regex_search(l, row)) ++n;
  return n;
}

using mcubes_test::child;
using mcubes_test::remove_outputs;

/// Starts `mcubes args...` with stdout and stderr in files.
child start(const std::vector<std::string>& args) { return mcubes_test::start("mcubes_interrupt", args); }

/// Waits until stdout holds at least `rows` rows (fails if the child ended first, or after 60 s).
void wait_for_rows(const child& c, int rows) {
  mcubes_test::wait_while_running(c, [&] { return count_rows(read_file(c.out)) >= rows; },
                                  std::to_string(rows) + " rows");
}

/// A run long enough to be interrupted: about 0.1 s per iteration, 300 iterations at most, never
/// converging.
std::vector<std::string> long_run(const std::string& json_path) {
  return {"integrate", "f4",       "--calls-per-iter", "1e6", "--max-iterations", "300", "--rel-tol", "1e-14",
          "--threads", "1",        "--backend",        "cpu", "--json",           json_path};
}

void expect_interrupted(int sig, int expected_exit) {
  const std::string path = temp_path(".json");
  const child c = start(long_run(path));
  wait_for_rows(c, 3);
  ASSERT_EQ(kill(c.pid, sig), 0);
  int status = 0;
  ASSERT_EQ(waitpid(c.pid, &status, 0), c.pid);
  ASSERT_TRUE(WIFEXITED(status)) << "killed by signal " << (WIFSIGNALED(status) ? WTERMSIG(status) : 0);
  EXPECT_EQ(WEXITSTATUS(status), expected_exit);
  const std::string out = read_file(c.out);
  const int rows = count_rows(out);
  EXPECT_GE(rows, 3);
  EXPECT_NE(out.find("status: interrupted"), std::string::npos) << out;
  EXPECT_NE(out.find("\nresult: "), std::string::npos) << out;
  const json j = json::parse(read_file(path));
  EXPECT_EQ(j.at("status"), "interrupted");
  EXPECT_EQ(j.at("signal"), sig);
  EXPECT_EQ(j.at("n_iterations").get<int>(), rows);
  EXPECT_EQ(j.at("iterations").size(), static_cast<std::size_t>(rows));
  EXPECT_TRUE(j.at("estimate").is_number());
  EXPECT_EQ(read_file(c.err), "");
  std::remove(path.c_str());
  remove_outputs(c);
}

TEST(Interrupt, SigintKeepsTheCompletedIterationsOnStdoutAndInTheJson) { expect_interrupted(SIGINT, 130); }

TEST(Interrupt, SigtermKeepsTheCompletedIterationsOnStdoutAndInTheJson) { expect_interrupted(SIGTERM, 143); }

// Killed outright: the JSON file, replaced atomically during the run (at the first iteration, then
// at most once a second), is complete and holds the iterations done so far with status "running";
// it was never truncated.
TEST(Interrupt, SigkillLeavesACompleteRecordOfTheIterationsSoFar) {
  const std::string path = temp_path(".json");
  { std::ofstream(path) << "previous content"; }
  const child c = start(long_run(path));
  mcubes_test::wait_while_running(
      c,
      [&] {
        const json j = json::parse(read_file(path), nullptr, false);
        return !j.is_discarded() && j.at("iterations").size() >= 2;
      },
      "a record of 2 iterations");
  kill(c.pid, SIGKILL);
  int status = 0;
  waitpid(c.pid, &status, 0);
  const json j = json::parse(read_file(path));  // throws (fails) if incomplete
  EXPECT_EQ(j.at("status"), "running");
  EXPECT_GE(j.at("iterations").size(), 2u);
  EXPECT_EQ(j.at("iterations").size(), j.at("n_iterations").get<std::size_t>());
  std::remove(path.c_str());
  remove_outputs(c);
}

// One very long pass (an iteration of 10^15 evaluations, days on any machine): SIGTERM abandons
// the pass mid-way on the CPU and the run ends at once (well before the 60 s limit of the test)
// with status interrupted, its record written, exit 143; the time warning was printed, the notice
// of a pass that cannot be abandoned was not.
// SIGTERM during a pass of 1e15 calls ends it at once (the CPU backend abandons it: the fast path
// every 64 samples; VEGAS+'s sub-cubes of ~6e7 samples each, 2^24 of them, every 64 samples too).
void expect_very_long_pass_abandoned(const char* stratification) {
  const std::string path = temp_path(".json");
  const child c = start({"integrate", "f4", "--calls-per-iter", "1e15", "--max-iterations", "1", "--skip", "0",
                         "--min-iterations", "1", "--threads", "2", "--backend", "cpu", "--json", path,
                         "--stratification", stratification});
  mcubes_test::wait_while_running(c, [&] { return read_file(c.out).find("backend: ") != std::string::npos; },
                                  "the table header");
  std::this_thread::sleep_for(std::chrono::milliseconds(300));  // into the pass
  ASSERT_EQ(kill(c.pid, SIGTERM), 0);
  const int status = mcubes_test::wait_for_exit(c, 60);
  ASSERT_TRUE(WIFEXITED(status)) << "killed by signal " << (WIFSIGNALED(status) ? WTERMSIG(status) : 0);
  EXPECT_EQ(WEXITSTATUS(status), 143);
  const std::string out = read_file(c.out), err = read_file(c.err);
  EXPECT_NE(out.find("status: interrupted"), std::string::npos) << out;
  EXPECT_EQ(count_rows(out), 0);
  EXPECT_NE(err.find("mcubes: warning: the first iteration will take about"), std::string::npos) << err;
  EXPECT_EQ(err.find("cannot be abandoned"), std::string::npos) << err;
  const json j = json::parse(read_file(path));
  EXPECT_EQ(j.at("status"), "interrupted");
  EXPECT_EQ(j.at("signal"), SIGTERM);
  EXPECT_EQ(j.at("n_iterations").get<int>(), 0);
  std::remove(path.c_str());
  remove_outputs(c);
}

TEST(Interrupt, SigtermAbandonsAVeryLongPass) { expect_very_long_pass_abandoned("uniform"); }
TEST(Interrupt, SigtermAbandonsAVeryLongVegasPlusPass) { expect_very_long_pass_abandoned("adaptive"); }

/// Runs to completion and returns the exit code.
int run_to_end(const std::vector<std::string>& args, child& c) {
  c = start(args);
  int status = 0;
  waitpid(c.pid, &status, 0);
  return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

// Bad input leaves an existing file untouched; a failed run replaces it only by a complete record
// that says "failed" and why.
TEST(Interrupt, FailuresNeverTruncateAnExistingJsonFile) {
  const std::string path = temp_path(".json");
  { std::ofstream(path) << "previous content"; }
  child c;
  EXPECT_EQ(run_to_end({"integrate", "f4", "--alpha", "-1", "--json", path}, c), 2);
  EXPECT_EQ(read_file(path), "previous content");
  EXPECT_EQ(run_to_end({"integrate", "f6", "--dim", "1", "--param", "a=72", "--param", "u=1", "--backend", "cpu",
                       "--calls-per-iter", "1e5", "--json", path},
                      c),
            3);  // (f J)^2 overflows at x > 0.986 in the first iteration
  const json j = json::parse(read_file(path));
  EXPECT_EQ(j.at("status"), "failed");
  EXPECT_NE(j.at("status_detail").get<std::string>().find("overflow"), std::string::npos) << j.dump();
  std::remove(path.c_str());
  remove_outputs(c);
}

// Write errors on stdout are failures (exit 3), not success.
TEST(Interrupt, FullStdoutIsARuntimeFailure) {
  if (access("/dev/full", W_OK) != 0) GTEST_SKIP() << "no /dev/full here";
  const std::string cmd = std::string("'") + MCUBES_CLI_PATH + "' integrate f4 --calls-per-iter 1e4 --backend cpu >/dev/full 2>/dev/null";
  const int status = std::system(cmd.c_str());
  ASSERT_TRUE(WIFEXITED(status));
  EXPECT_EQ(WEXITSTATUS(status), 3);
}

// Every command, --help and --version included, checks that standard output took everything: on
// /dev/full each exits 3 with one line, never 0.
TEST(Interrupt, FullStdoutFailsEveryCommand) {
  if (access("/dev/full", W_OK) != 0) GTEST_SKIP() << "no /dev/full here";
  const std::string err = temp_path(".err");
  for (const char* args : {"list", "--help", "--version", "integrate --help", "scan --help",
                           "pi --method mc --samples 1000 --backend cpu", "pi --method midpoint --samples 999 --backend cpu"}) {
    const std::string cmd = std::string("'") + MCUBES_CLI_PATH + "' " + args + " >/dev/full 2>'" + err + "'";
    const int status = std::system(cmd.c_str());
    ASSERT_TRUE(WIFEXITED(status)) << args;
    EXPECT_EQ(WEXITSTATUS(status), 3) << args;
    const std::string e = read_file(err);
    EXPECT_EQ(e.rfind("mcubes: error: cannot write to standard output", 0), 0u) << args << ": " << e;
    EXPECT_EQ(e.find('\n'), e.size() - 1) << args << ": " << e;  // one line
  }
  std::remove(err.c_str());
}

}  // namespace

namespace {

// Resources: --dry-run prints the plan (grid, evaluations per iteration, memory, estimated time
// from a quick calibration) and exits 0 without running; a request of about two years per
// iteration says so in the plan.
TEST(Resources, DryRunPrintsThePlanWithoutRunning) {
  child c;
  EXPECT_EQ(run_to_end({"integrate", "f4", "--calls-per-iter", "1e15", "--backend", "cpu", "--dry-run"}, c), 0);
  const std::string out = read_file(c.out);
  EXPECT_NE(out.find("sub-cubes m = g^d"), std::string::npos) << out;
  EXPECT_NE(out.find("evaluations per iteration"), std::string::npos) << out;
  EXPECT_NE(out.find("memory: about"), std::string::npos) << out;
  EXPECT_TRUE(out.find("years") != std::string::npos || out.find("days") != std::string::npos) << out;
  EXPECT_EQ(count_rows(out), 0);
  remove_outputs(c);
}

// The memory estimate is checked before the run: a limit below it is refused (exit 2).
TEST(Resources, MemoryAboveTheLimitIsRefusedBeforeTheRun) {
  child c;
  EXPECT_EQ(run_to_end({"integrate", "f4", "--bins", "1048576", "--max-memory", "64M", "--backend", "cpu"}, c), 2);
  EXPECT_EQ(read_file(c.out), "");
  EXPECT_NE(read_file(c.err).find("of memory"), std::string::npos) << read_file(c.err);
  remove_outputs(c);
}

// Long runs that survive: `--checkpoint FILE` killed with SIGKILL at random moments (20 trials, fixed
// seeds of the moments), then the same command with `--resume FILE`: every resumed run ends with
// the bits of the uninterrupted run (estimate, error, chi2/dof, every iteration's estimate), on
// another thread count; the checkpoint is never torn (every resume reads it). The first 4 trials
// are killed at any moment (one killed before the first checkpoint starts afresh: no file), the
// other 16 at a random moment after the first checkpoint appeared.
// Two runs' JSON records are the same run (their numbers round-trip exactly): the summary and
// every iteration's estimate.
void expect_same_record(const json& j, const json& whole) {
  for (const char* key : {"estimate", "error", "chi2_dof", "q", "n_eval", "n_iterations"})
    EXPECT_EQ(j.at(key), whole.at(key)) << key;
  ASSERT_EQ(j.at("iterations").size(), whole.at("iterations").size());
  for (std::size_t i = 0; i < whole.at("iterations").size(); ++i)
    EXPECT_EQ(j.at("iterations")[i].at("estimate"), whole.at("iterations")[i].at("estimate")) << "iteration " << i;
}

// Starts with({"--threads", "2", "--checkpoint", FILE}) `trials` times and kills it with SIGKILL
// at a random moment (the first `anytime` trials at any moment, maybe before the first checkpoint;
// the others after it), then runs with({"--threads", "1", "--checkpoint", FILE, "--json", J}) and
// --resume FILE where a checkpoint was left: it must exit 1 (not every integral converged, as the
// uninterrupted run), and `compare` checks its record J. `resumed` counts the resumes from a file.
void kill_and_resume(const std::function<std::vector<std::string>(std::vector<std::string>)>& with, int trials,
                     int anytime, double whole_seconds, std::uint64_t seed, const std::string& name, int& resumed,
                     const std::function<void(const json&)>& compare) {
  std::mt19937_64 moments(seed);
  for (int trial = 0; trial < trials; ++trial) {
    SCOPED_TRACE(testing::Message() << "trial " << trial);
    const std::string ckpt = temp_path(name + ".ckpt"), out_json = temp_path(name + "r.json");
    const child c = start(with({"--threads", "2", "--checkpoint", ckpt}));
    const auto started = std::chrono::steady_clock::now();
    if (trial >= anytime) {
      while (read_file(ckpt).empty() && std::chrono::steady_clock::now() - started < std::chrono::seconds(60))
        std::this_thread::sleep_for(std::chrono::milliseconds(2));
    }
    const double at = std::uniform_real_distribution<double>(0.0, 0.9)(moments) * whole_seconds;
    std::this_thread::sleep_for(std::chrono::duration<double>(at) - (std::chrono::steady_clock::now() - started) / 2);
    kill(c.pid, SIGKILL);
    int status = 0;
    waitpid(c.pid, &status, 0);
    remove_outputs(c);
    const bool have = !read_file(ckpt).empty();
    resumed += have;
    std::vector<std::string> again = {"--threads", "1", "--checkpoint", ckpt, "--json", out_json};
    if (have) again.insert(again.end(), {"--resume", ckpt});
    const child r = start(with(again));
    const int rs = mcubes_test::wait_for_exit(r, 120);
    EXPECT_TRUE(WIFEXITED(rs)) << read_file(r.err);
    if (WIFEXITED(rs)) {
      EXPECT_EQ(WEXITSTATUS(rs), 1) << read_file(r.err);
      compare(json::parse(read_file(out_json)));
    }
    remove_outputs(r);
    for (const std::string& f : {ckpt, out_json}) std::remove(f.c_str());
  }
}

TEST(Checkpoint, SigkillAtRandomMomentsThenResumeGivesTheUninterruptedBits) {
  const std::vector<std::string> run = {"integrate", "f2", "--dim", "4", "--calls-per-iter", "2e5", "--max-iterations",
                                        "60", "--rel-tol", "1e-14", "--backend", "cpu", "--seed", "5"};
  const auto with = [&](std::vector<std::string> extra) {
    std::vector<std::string> a = run;
    a.insert(a.end(), extra.begin(), extra.end());
    return a;
  };
  const std::string whole_json = temp_path(".json");
  const child w = start(with({"--threads", "2", "--json", whole_json}));
  const auto t0 = std::chrono::steady_clock::now();
  ASSERT_TRUE(WIFEXITED(mcubes_test::wait_for_exit(w, 120)));
  const double whole_seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  const json whole = json::parse(read_file(whole_json));
  ASSERT_EQ(whole.at("n_iterations"), 60);
  int resumed_from_file = 0;
  kill_and_resume(with, 20, 4, whole_seconds, 2026, "", resumed_from_file,
                  [&](const json& j) { expect_same_record(j, whole); });
  EXPECT_GE(resumed_from_file, 16) << "the kills after the first checkpoint find one";
  std::remove(whole_json.c_str());
}

// A checkpoint of another problem, or a damaged one, is refused with one line (exit 2).
TEST(Checkpoint, ResumeRefusesAnotherProblemAndADamagedFile) {
  const std::string ckpt = temp_path(".ckpt");
  const auto problem = [&](const std::string& name, const std::string& dim, const std::string& iterations) {
    return std::vector<std::string>{"integrate", name, "--dim", dim, "--calls-per-iter", "1e4", "--max-iterations",
                                    iterations, "--skip", "0", "--min-iterations", "2", "--rel-tol", "1e-12",
                                    "--backend", "cpu"};
  };
  std::vector<std::string> run = problem("f2", "3", "8");
  run.insert(run.end(), {"--checkpoint", ckpt});
  const child c = start(run);
  ASSERT_TRUE(WIFEXITED(mcubes_test::wait_for_exit(c, 60)));
  remove_outputs(c);
  const auto refused = [&](std::vector<std::string> args, const std::string& fragment) {
    args.insert(args.end(), {"--resume", ckpt});
    const child r = start(args);
    const int st = mcubes_test::wait_for_exit(r, 60);
    EXPECT_TRUE(WIFEXITED(st) && WEXITSTATUS(st) == 2) << read_file(r.err);
    EXPECT_NE(read_file(r.err).find(fragment), std::string::npos) << read_file(r.err);
    remove_outputs(r);
  };
  refused(problem("f3", "3", "8"), "integrand 'suite f2");
  refused(problem("f2", "4", "8"), "dimension 3, not 4");
  std::vector<std::string> seed = problem("f2", "3", "8");
  seed.insert(seed.end(), {"--seed", "3"});
  refused(seed, "its seed is");
  refused(problem("f2", "3", "9"), "--force allows this change");
  // with --force, the finished run of 8 iterations goes on to 9: its first 8 are the checkpoint's
  std::vector<std::string> more = problem("f2", "3", "9");
  const std::string js = temp_path(".json");
  more.insert(more.end(), {"--resume", ckpt, "--force", "--json", js});
  const child m = start(more);
  const int ms = mcubes_test::wait_for_exit(m, 60);
  EXPECT_TRUE(WIFEXITED(ms)) << read_file(m.err);
  EXPECT_NE(read_file(m.out).find("resumed from"), std::string::npos) << read_file(m.out);
  EXPECT_EQ(json::parse(read_file(js)).at("n_iterations"), 9);
  remove_outputs(m);
  std::remove(js.c_str());
  const std::string bytes = read_file(ckpt);
  ASSERT_GT(bytes.size(), 100u);
  { std::ofstream(ckpt, std::ios::binary) << bytes.substr(0, bytes.size() - 7); }
  refused(run, "checksum");
  std::remove(ckpt.c_str());
}

// --expr (compiled at run time): the progress crosses the compiled object's interface. A run of 4
// iterations, resumed with --force to 9, has the bits of the run of 9; another text is refused.
TEST(Checkpoint, AnExpressionRunResumesThroughTheCompiledObject) {
  const auto problem = [](const std::string& text, const std::string& iterations) {
    return std::vector<std::string>{"integrate", "--expr", text, "--dim", "3", "--calls-per-iter", "2e4",
                                    "--max-iterations", iterations, "--skip", "1", "--min-iterations", "2", "--rel-tol", "1e-14",
                                    "--backend", "cpu", "--seed", "11"};
  };
  const std::string text = "exp(-20 * (x[0] - 0.3) * (x[0] - 0.3)) * (1 + x[1] * x[2])";
  const std::string whole_json = temp_path(".json"), ckpt = temp_path(".ckpt"), out_json = temp_path("r.json");
  std::vector<std::string> whole_args = problem(text, "9");
  whole_args.insert(whole_args.end(), {"--threads", "2", "--json", whole_json});
  const child w = start(whole_args);
  const int ws = mcubes_test::wait_for_exit(w, 300);
  ASSERT_TRUE(WIFEXITED(ws)) << read_file(w.err);
  remove_outputs(w);
  const json whole = json::parse(read_file(whole_json));
  ASSERT_EQ(whole.at("n_iterations"), 9);
  const std::string part_json = temp_path("p.json");
  std::vector<std::string> part = problem(text, "4");
  part.insert(part.end(), {"--threads", "1", "--checkpoint", ckpt, "--json", part_json});
  const child p = start(part);
  ASSERT_TRUE(WIFEXITED(mcubes_test::wait_for_exit(p, 300))) << read_file(p.err);
  remove_outputs(p);
  std::vector<std::string> rest = problem(text, "9");
  rest.insert(rest.end(), {"--threads", "3", "--resume", ckpt, "--force", "--json", out_json});
  const child r = start(rest);
  const int rs = mcubes_test::wait_for_exit(r, 300);
  ASSERT_TRUE(WIFEXITED(rs)) << read_file(r.err);
  EXPECT_NE(read_file(r.out).find("resumed from"), std::string::npos) << read_file(r.out);
  remove_outputs(r);
  const json resumed = json::parse(read_file(out_json));
  expect_same_record(resumed, whole);
  // continued, not run again: the first 4 iterations are those of the checkpoint (their timings too)
  const json first = json::parse(read_file(part_json));
  for (std::size_t i = 0; i < 4; ++i)
    EXPECT_EQ(resumed.at("iterations")[i].at("seconds"), first.at("iterations")[i].at("seconds")) << "iteration " << i;
  std::remove(part_json.c_str());
  std::vector<std::string> other = problem("x[0] * x[1] * x[2]", "9");
  other.insert(other.end(), {"--resume", ckpt, "--force"});
  const child o = start(other);
  const int os = mcubes_test::wait_for_exit(o, 300);
  EXPECT_TRUE(WIFEXITED(os) && WEXITSTATUS(os) == 2) << read_file(o.err);
  EXPECT_NE(read_file(o.err).find("integrand 'expr exp(-20"), std::string::npos) << read_file(o.err);
  remove_outputs(o);
  for (const std::string& f : {whole_json, ckpt, out_json}) std::remove(f.c_str());
}

// Two scans' JSON records hold the same results (numbers round-trip exactly): every integral's
// summary and its iterations' estimates.
void expect_same_scan(const json& j, const json& whole) {
  ASSERT_EQ(j.at("results").size(), whole.at("results").size());
  for (std::size_t k = 0; k < whole.at("results").size(); ++k) {
    SCOPED_TRACE(testing::Message() << "integral " << k);
    const json& a = j.at("results")[k];
    const json& b = whole.at("results")[k];
    for (const char* key : {"estimate", "error", "chi2_dof", "q", "n_eval", "n_iterations", "status", "seed"})
      EXPECT_EQ(a.at(key), b.at(key)) << key;
    ASSERT_EQ(a.at("iterations").size(), b.at("iterations").size());
    for (std::size_t i = 0; i < b.at("iterations").size(); ++i)
      EXPECT_EQ(a.at("iterations")[i].at("estimate"), b.at("iterations")[i].at("estimate")) << "iteration " << i;
  }
}

// `mcubes scan --checkpoint` killed at random moments (SIGKILL) and resumed on another thread
// count: every integral of the scan has the bits of the scan never stopped; integrals that
// converged before the kill are not run again.
TEST(Checkpoint, AScanKilledAtRandomMomentsResumesToTheUninterruptedBits) {
  const std::vector<std::string> run = {"scan", "f2", "--dim", "3", "--param", "a=20:60:5", "--calls-per-iter", "1e5",
                                        "--max-iterations", "60", "--skip", "2", "--min-iterations", "2", "--rel-tol",
                                        "2e-5", "--backend", "cpu", "--seed", "9", "--json-iterations", "--quiet",
                                        "--alpha", "1.5"};  // the map of this scan's counts below (VEGAS+'s 1.0: all 5 converge)
  const auto with = [&](std::vector<std::string> extra) {
    std::vector<std::string> a = run;
    a.insert(a.end(), extra.begin(), extra.end());
    return a;
  };
  const std::string whole_json = temp_path("scan.json");
  const child w = start(with({"--threads", "2", "--json", whole_json}));
  const auto t0 = std::chrono::steady_clock::now();
  ASSERT_TRUE(WIFEXITED(mcubes_test::wait_for_exit(w, 120))) << read_file(w.err);
  remove_outputs(w);
  const double whole_seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  const json whole = json::parse(read_file(whole_json));
  ASSERT_EQ(whole.at("results").size(), 5u);
  int converged = 0;
  for (const json& r : whole.at("results")) converged += r.at("status") == "converged";
  EXPECT_EQ(converged, 2);  // a = 20 and 30 end before the others (iterations 23 and 32; a = 40 would need 74)
  int resumed_from_file = 0;
  kill_and_resume(with, 8, 2, whole_seconds, 2027, "scan", resumed_from_file,
                  [&](const json& j) { expect_same_scan(j, whole); });
  EXPECT_GE(resumed_from_file, 6) << "the kills after the first checkpoint find one";
  std::remove(whole_json.c_str());
}

// A scan's checkpoint names its grid: another grid and a single run's checkpoint are refused with
// one line (exit 2); integrate refuses a scan's checkpoint.
TEST(Checkpoint, AScanRefusesAnotherGridAndASingleRunsCheckpoint) {
  const std::string ckpt = temp_path("grid.ckpt"), single = temp_path("single.ckpt");
  const auto scan = [](const std::string& grid) {
    return std::vector<std::string>{"scan", "f2", "--dim", "2", "--param", grid, "--calls-per-iter", "1e4",
                                    "--max-iterations", "6", "--skip", "1", "--min-iterations", "2", "--backend", "cpu",
                                    "--quiet"};
  };
  const auto finish = [](std::vector<std::string> args) {
    const child c = start(args);
    const int st = mcubes_test::wait_for_exit(c, 60);
    EXPECT_TRUE(WIFEXITED(st) && WEXITSTATUS(st) <= 1) << read_file(c.err);
    remove_outputs(c);
  };
  std::vector<std::string> first = scan("a=10:30:3");
  first.insert(first.end(), {"--checkpoint", ckpt});
  finish(first);
  finish({"integrate", "f2", "--dim", "2", "--calls-per-iter", "1e4", "--max-iterations", "6", "--skip", "1",
          "--min-iterations", "2", "--backend", "cpu", "--checkpoint", single});
  const auto refused = [&](std::vector<std::string> args, const std::string& fragment) {
    const child r = start(args);
    const int st = mcubes_test::wait_for_exit(r, 60);
    EXPECT_TRUE(WIFEXITED(st) && WEXITSTATUS(st) == 2) << read_file(r.err);
    EXPECT_NE(read_file(r.err).find(fragment), std::string::npos) << read_file(r.err);
    remove_outputs(r);
  };
  std::vector<std::string> other = scan("a=10:30:4");
  other.insert(other.end(), {"--resume", ckpt});
  refused(other, "a batch of 3 integrals, not 4");
  std::vector<std::string> moved = scan("a=10:31:3");
  moved.insert(moved.end(), {"--resume", ckpt});
  refused(moved, "its integral 1 has the parameters");
  std::vector<std::string> from_single = scan("a=10:30:3");
  from_single.insert(from_single.end(), {"--resume", single});
  refused(from_single, "of one run, not of a batch of 3 integrals");
  refused({"integrate", "f2", "--dim", "2", "--calls-per-iter", "1e4", "--max-iterations", "6", "--skip", "1",
           "--min-iterations", "2", "--backend", "cpu", "--resume", ckpt},
          "a batch of 3 integrals (a scan), not of one run");
  for (const std::string& f : {ckpt, single}) std::remove(f.c_str());
}

// A scan of an expression (compiled at run time): its integrals' progresses cross the compiled
// object's interface (encode_progresses). A scan of 4 iterations, resumed with --force to 8 on
// another thread count, has the bits of the scan of 8; a scan of another text is refused.
TEST(Checkpoint, AScanOfAnExpressionResumesThroughTheCompiledObject) {
  const auto scan = [](const std::string& text, const std::string& iterations) {
    return std::vector<std::string>{"scan", "--expr", text, "--dim", "3", "--param", "p0=10:30:3", "--calls-per-iter",
                                    "2e4", "--max-iterations", iterations, "--skip", "1", "--min-iterations", "2",
                                    "--rel-tol", "1e-14", "--backend", "cpu", "--seed", "5", "--json-iterations"};
  };
  const std::string text = "exp(-p[0] * (x[0] - 0.4) * (x[0] - 0.4)) * (1 + x[1] * x[2])";
  const std::string whole_json = temp_path(".json"), ckpt = temp_path(".ckpt"), out_json = temp_path("r.json");
  const auto finish = [](std::vector<std::string> args) {
    const child c = start(args);
    const int st = mcubes_test::wait_for_exit(c, 300);
    EXPECT_TRUE(WIFEXITED(st) && WEXITSTATUS(st) <= 1) << read_file(c.err);
    const std::string out = read_file(c.out);
    remove_outputs(c);
    return out;
  };
  std::vector<std::string> whole_args = scan(text, "8");
  whole_args.insert(whole_args.end(), {"--threads", "2", "--json", whole_json});
  finish(whole_args);
  const json whole = json::parse(read_file(whole_json));
  ASSERT_EQ(whole.at("results").size(), 3u);
  ASSERT_EQ(whole.at("results")[0].at("n_iterations"), 8);
  const std::string part_json = temp_path("p.json");
  std::vector<std::string> part = scan(text, "4");
  part.insert(part.end(), {"--threads", "1", "--checkpoint", ckpt, "--json", part_json});
  finish(part);
  ASSERT_NE(read_file(ckpt), "") << "no checkpoint";
  std::vector<std::string> rest = scan(text, "8");
  rest.insert(rest.end(), {"--threads", "3", "--resume", ckpt, "--force", "--json", out_json});
  EXPECT_NE(finish(rest).find("resumed from"), std::string::npos);
  const json resumed = json::parse(read_file(out_json));
  expect_same_scan(resumed, whole);
  // continued, not run again: the first 4 iterations are those of the checkpoint (their timings too)
  const json first = json::parse(read_file(part_json));
  for (std::size_t k = 0; k < 3; ++k)
    for (std::size_t i = 0; i < 4; ++i)
      EXPECT_EQ(resumed.at("results")[k].at("iterations")[i].at("seconds"),
                first.at("results")[k].at("iterations")[i].at("seconds")) << "integral " << k << ", iteration " << i;
  std::remove(part_json.c_str());
  std::vector<std::string> other = scan("x[0] * p[0]", "8");
  other.insert(other.end(), {"--resume", ckpt, "--force"});
  const child o = start(other);
  const int os = mcubes_test::wait_for_exit(o, 300);
  EXPECT_TRUE(WIFEXITED(os) && WEXITSTATUS(os) == 2) << read_file(o.err);
  EXPECT_NE(read_file(o.err).find("integrand 'expr exp(-p[0]"), std::string::npos) << read_file(o.err);
  remove_outputs(o);
  for (const std::string& f : {whole_json, ckpt, out_json}) std::remove(f.c_str());
}

}  // namespace

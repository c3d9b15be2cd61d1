/// @file tests/jit/test_jit_cli.cpp
/// `mcubes integrate --expr / --body` and the region options, run as a program: known integrals
/// within max_pull sigma, the report and JSON record of the compilation (a cache hit the second
/// time), the region of a suite integrand, and the runtime failures (a missing compiler, the time
/// limit). Bad input (exit 2, one line) is in tests/cli/bad_inputs.tsv. Every run uses a fresh
/// cache folder of this test program (XDG_CACHE_HOME).
#include <gtest/gtest.h>

#include <cmath>
#include <complex>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <regex>
#include <sstream>
#include <string>
#include <vector>

#include <chrono>
#include <csignal>
#include <thread>

#include <fcntl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <nlohmann/json.hpp>

#ifndef MCUBES_CLI_PATH
#error "MCUBES_CLI_PATH (path of the mcubes program) must be defined"
#endif

namespace {

using json = nlohmann::json;

/// A result within this many of its reported standard deviations of the exact value passes.
constexpr double max_pull = 4;

std::string fresh_folder(const std::string& name) {
  std::string templ = ::testing::TempDir() + name + ".XXXXXX";
  std::vector<char> buf(templ.begin(), templ.end());
  buf.push_back('\0');
  EXPECT_NE(::mkdtemp(buf.data()), nullptr);
  return buf.data();
}

const std::string& cache_home() {
  static const std::string dir = fresh_folder("jit_cli_cache");
  return dir;
}

std::string read_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}

struct cli_run {
  int exit_code = -1;
  std::string out, err;
};

/// Runs `<env> mcubes <args>` through /bin/sh with XDG_CACHE_HOME set to this program's cache.
cli_run run_cli(const std::string& args, const std::string& env = "") {
  static int counter = 0;
  const std::string base = cache_home() + "/run" + std::to_string(counter++);
  const std::string cmd = "XDG_CACHE_HOME='" + cache_home() + "' " + env + " '" + MCUBES_CLI_PATH + "' " + args + " >'" +
                          base + ".out' 2>'" + base + ".err'";
  const int status = std::system(cmd.c_str());
  cli_run r;
  r.exit_code = (status != -1 && WIFEXITED(status)) ? WEXITSTATUS(status) : -1;
  r.out = read_file(base + ".out");
  r.err = read_file(base + ".err");
  return r;
}

const char* const gaussian = "'exp(-625*((x[0]-0.5)*(x[0]-0.5) + (x[1]-0.5)*(x[1]-0.5)))'";

double f4_exact(int d) { return std::pow(std::sqrt(M_PI) / 25 * std::erf(12.5), d); }

TEST(JitCli, ExpressionIsCompiledThenTakenFromTheCache) {
  const cli_run a = run_cli(std::string("integrate --expr ") + gaussian + " --dim 2 --backend cpu --json -");
  ASSERT_EQ(a.exit_code, 0) << a.err << a.out;
  EXPECT_EQ(a.err, "");
  const json j = json::parse(a.out);
  EXPECT_EQ(j.at("status"), "converged");
  const double estimate = j.at("estimate").get<double>(), error = j.at("error").get<double>();
  EXPECT_LE(std::fabs(estimate - f4_exact(2)), max_pull * error) << estimate << " +- " << error;
  EXPECT_EQ(j.at("integrand").at("name"), "expr");
  EXPECT_EQ(j.at("integrand").at("dim"), 2);
  EXPECT_EQ(j.at("source").at("kind"), "expression");
  EXPECT_EQ(j.at("source").at("text"), "exp(-625*((x[0]-0.5)*(x[0]-0.5) + (x[1]-0.5)*(x[1]-0.5)))");
  EXPECT_TRUE(j.at("exact").is_null());  // no exact value for a user's integrand
  EXPECT_TRUE(j.at("pull").is_null());
  EXPECT_EQ(j.at("region"), json::parse("[[0, 1], [0, 1]]"));
  const json& c = j.at("compile");
  EXPECT_EQ(c.at("cache_hit"), false);
  EXPECT_GT(c.at("compile_seconds").get<double>(), 0);
  EXPECT_EQ(c.at("backend"), "cpu");
  const std::string object = c.at("object").get<std::string>();
  EXPECT_EQ(object.rfind(cache_home() + "/mcubes/jit/", 0), 0u) << object;

  const cli_run b = run_cli(std::string("integrate --expr ") + gaussian + " --dim 2 --backend cpu");
  ASSERT_EQ(b.exit_code, 0) << b.err;
  EXPECT_NE(b.out.find("compiled: cache hit"), std::string::npos) << b.out;
  EXPECT_NE(b.out.find("integrand expr (exp(-625*"), std::string::npos) << b.out;
  EXPECT_EQ(b.out.find("exact:"), std::string::npos) << b.out;  // no exact line
  // the same bits from the cached object
  const cli_run c2 = run_cli(std::string("integrate --expr ") + gaussian + " --dim 2 --backend cpu --json -");
  const json j2 = json::parse(c2.out);
  EXPECT_EQ(j2.at("compile").at("cache_hit"), true);
  EXPECT_EQ(j2.at("estimate").get<double>(), estimate);
  EXPECT_EQ(j2.at("error").get<double>(), error);
}

// --param p0=V, p1=V give p[0], p[1] of the text; the report names them like a suite integrand's.
TEST(JitCli, ParametersOfTheTextAreGivenAsP0P1) {
  // int over [0,1]^2 of exp(-p0 x0) (1 + p1 x1) = (1 - e^{-p0})/p0 (1 + p1/2)
  const double exact = (1 - std::exp(-2.5)) / 2.5 * (1 + 3.0 / 2);
  const cli_run r = run_cli("integrate --expr 'exp(-p[0]*x[0]) * (1 + p[1]*x[1])' --dim 2 --param p1=3 --param p0=2.5 "
                            "--seed 5 --backend cpu --json -");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const json j = json::parse(r.out);
  EXPECT_EQ(j.at("params"), json::parse(R"({"p0": 2.5, "p1": 3})"));
  const double estimate = j.at("estimate").get<double>(), error = j.at("error").get<double>();
  EXPECT_LE(std::fabs(estimate - exact), max_pull * error) << estimate << " +- " << error << " vs " << exact;
  const cli_run t = run_cli("integrate --expr 'exp(-p[0]*x[0]) * (1 + p[1]*x[1])' --dim 2 --param p0=2.5 --param p1=3 "
                            "--seed 5 --backend cpu");
  ASSERT_EQ(t.exit_code, 0) << t.err;
  EXPECT_NE(t.out.find("parameters p0 = 2.5, p1 = 3"), std::string::npos) << t.out;
  // Other values, the same object (a cache hit): the parameters are not part of the compiled code.
  const cli_run o = run_cli("integrate --expr 'exp(-p[0]*x[0]) * (1 + p[1]*x[1])' --dim 2 --param p0=1 --param p1=0 "
                            "--seed 5 --backend cpu --json -");
  ASSERT_EQ(o.exit_code, 0) << o.err;
  const json k = json::parse(o.out);
  EXPECT_EQ(k.at("compile").at("cache_hit"), true);
  EXPECT_LE(std::fabs(k.at("estimate").get<double>() - (1 - std::exp(-1.0))), max_pull * k.at("error").get<double>());
}

TEST(JitCli, BodyOverARegionOfItsOwn) {
  // int over [0,1]^2 x [0,2] of sin(x0 + x1 + x2) = Im(z1^2 z2), z_b = int_0^b e^{ix} dx = sin b + i (1 - cos b)
  const std::complex<double> z1(std::sin(1.0), 1 - std::cos(1.0)), z2(std::sin(2.0), 1 - std::cos(2.0));
  const double exact = (z1 * z1 * z2).imag();
  const cli_run r = run_cli(
      "integrate --body 'double s = 0; for (int i = 0; i < D; ++i) s += x[i]; return sin(s);' --dim 3 "
      "--region 0:1,0:1,0:2 --backend cpu --json -");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const json j = json::parse(r.out);
  EXPECT_EQ(j.at("source").at("kind"), "body");
  EXPECT_EQ(j.at("region"), json::parse("[[0, 1], [0, 1], [0, 2]]"));
  EXPECT_TRUE(j.at("integrand").at("lower").is_null());
  const double estimate = j.at("estimate").get<double>(), error = j.at("error").get<double>();
  EXPECT_LE(std::fabs(estimate - exact), max_pull * error) << estimate << " +- " << error << " vs " << exact;
}

TEST(JitCli, LowerAndUpperForEveryAxis) {
  const cli_run r = run_cli("integrate --expr 'x[0] * x[1]' --dim 2 --lower 1 --upper 3 --backend cpu --json -");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const json j = json::parse(r.out);
  const double estimate = j.at("estimate").get<double>(), error = j.at("error").get<double>();
  EXPECT_LE(std::fabs(estimate - 16.0), max_pull * error) << r.out;  // (int_1^3 x dx)^2 = 4^2
}

TEST(JitCli, ASuiteIntegrandOverAnotherRegionHasNoExactValue) {
  const std::string opts = " --calls-per-iter 1e5 --backend cpu --json -";
  const cli_run own = run_cli("integrate f1 --dim 2 --region 0:1" + opts);  // its own region: the exact value stays
  ASSERT_TRUE(own.exit_code == 0 || own.exit_code == 1) << own.err;
  EXPECT_FALSE(json::parse(own.out).at("exact").is_null());
  const cli_run other = run_cli("integrate f1 --dim 2 --lower 0 --upper 0.5" + opts);
  ASSERT_TRUE(other.exit_code == 0 || other.exit_code == 1) << other.err;
  const json j = json::parse(other.out);
  EXPECT_TRUE(j.at("exact").is_null());
  EXPECT_EQ(j.at("region"), json::parse("[[0, 0.5], [0, 0.5]]"));
  // int over [0, 1/2]^2 of cos(x + 2y) = Re(((e^{i/2} - 1)/i) ((e^{i} - 1)/(2i)))
  const std::complex<double> i1 = (std::exp(std::complex<double>(0, 0.5)) - 1.0) / std::complex<double>(0, 1);
  const std::complex<double> i2 = (std::exp(std::complex<double>(0, 1.0)) - 1.0) / std::complex<double>(0, 2);
  const double exact = (i1 * i2).real();
  EXPECT_LE(std::fabs(j.at("estimate").get<double>() - exact), max_pull * j.at("error").get<double>());
  const cli_run text = run_cli("integrate f1 --dim 2 --lower 0 --upper 0.5 --calls-per-iter 1e5 --backend cpu");
  EXPECT_NE(text.out.find("exact: not known for this region"), std::string::npos) << text.out;
  EXPECT_NE(text.out.find("region [0, 0.5] x [0, 0.5]"), std::string::npos) << text.out;
}

// A suite integrand in a dimension outside suite::precompiled_dims (here f4 in d = 13) is compiled
// at run time: its exact value and pull are reported as for any suite run, the record says what
// the compilation did, and the bits are those of the same arithmetic given as --body (f4's own
// operator: s = sum (x_j - u)^2, exp(-(a a) s)), which the library's tests tie to the functor
// compiled ahead of time (test_jit.cpp).
TEST(JitCli, ASuiteIntegrandOutsideThePrecompiledDimensionsIsCompiledAtRunTime) {
  const std::string opts = " --dim 13 --backend cpu --calls-per-iter 20000 --max-iterations 12 --rel-tol 0.01 --seed 7 --json -";
  const cli_run a = run_cli("integrate f4 --param a=5" + opts);
  ASSERT_EQ(a.exit_code, 0) << a.err << a.out;
  const json j = json::parse(a.out);
  EXPECT_EQ(j.at("integrand").at("name"), "f4");
  EXPECT_EQ(j.at("integrand").at("dim"), 13);
  EXPECT_FALSE(j.contains("source"));
  const json& c = j.at("compile");
  EXPECT_EQ(c.at("backend"), "cpu");
  EXPECT_FALSE(c.at("object").get<std::string>().empty());
  ASSERT_TRUE(j.at("exact").is_number());  // a suite integrand keeps its exact value
  const double exact = std::pow(std::sqrt(M_PI) / 5 * std::erf(2.5), 13);
  EXPECT_NEAR(j.at("exact").get<double>(), exact, 1e-12 * exact);
  const double estimate = j.at("estimate").get<double>(), error = j.at("error").get<double>();
  EXPECT_EQ(j.at("status"), "converged");
  EXPECT_LE(std::fabs(estimate - exact), max_pull * error) << estimate << " +- " << error;
  const std::string body = "'double s = 0; for (int j = 0; j < D; ++j) { const double t = x[j] - p[1]; s += t * t; } "
                           "return exp(-(p[0] * p[0]) * s);'";
  const cli_run b = run_cli("integrate --body " + body + " --param p0=5 --param p1=0.5" + opts);
  ASSERT_EQ(b.exit_code, 0) << b.err << b.out;
  const json k = json::parse(b.out);
  EXPECT_EQ(k.at("estimate").get<double>(), estimate);
  EXPECT_EQ(k.at("error").get<double>(), error);
  EXPECT_EQ(k.at("chi2_dof").get<double>(), j.at("chi2_dof").get<double>());
  EXPECT_EQ(k.at("n_iterations"), j.at("n_iterations"));

  // the text report: the compile line and the exact value
  const cli_run t = run_cli("integrate f4 --param a=5 --dim 13 --backend cpu --calls-per-iter 20000 --max-iterations 12 --rel-tol 0.01 --seed 7");
  ASSERT_EQ(t.exit_code, 0) << t.err;
  EXPECT_NE(t.out.find("compiled: cache hit"), std::string::npos) << t.out;
  EXPECT_NE(t.out.find("exact:"), std::string::npos) << t.out;

  // a scan in that dimension: row k has the bits of integrate with the row's seed
  const cli_run sc = run_cli("scan f4 --dim 13 --param a=4:5:2 --backend cpu --calls-per-iter 20000 --max-iterations 12 --rel-tol 0.01 "
                             "--seed 7 --json -");
  // exit 1: a row may stop not converged (VEGAS+ in 13-D at 2e4 calls has one sub-cube); the bits are the test
  ASSERT_LE(sc.exit_code, 1) << sc.err << sc.out;
  const json sj = json::parse(sc.out);
  EXPECT_TRUE(sj.contains("compile"));
  const json& row = sj.at("results").at(1);
  EXPECT_EQ(row.at("params").at("a").get<double>(), 5.0);
  const cli_run one = run_cli("integrate f4 --param a=5 --param u=0.5 --dim 13 --backend cpu --calls-per-iter 20000 "
                              "--max-iterations 12 --rel-tol 0.01 --json - --seed " + std::to_string(row.at("seed").get<std::uint64_t>()));
  ASSERT_LE(one.exit_code, 1) << one.err;
  const json oj = json::parse(one.out);
  EXPECT_EQ(row.at("estimate").get<double>(), oj.at("estimate").get<double>());
  EXPECT_EQ(row.at("error").get<double>(), oj.at("error").get<double>());
}

// A refused run is refused before anything is compiled: the catalogue's refusals of f1..f6 in
// d = 26..32 (tests/cli/bad_inputs.tsv) run without a compiler too.
TEST(JitCli, ARefusedSuiteRunInARunTimeDimensionCompilesNothing) {
  const cli_run r = run_cli("integrate f6 --dim 26", "CXX=/nonexistent/c++");
  EXPECT_EQ(r.exit_code, 2) << r.err;
  EXPECT_NE(r.err.find("exceeds"), std::string::npos) << r.err;
}

TEST(JitCli, CompileErrorsAreOneLineAgainstTheUserText) {
  const cli_run r = run_cli("integrate --expr 'exp(-foo*x[0])' --dim 1 --backend cpu");  // g++'s words
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_EQ(r.err, "mcubes: error: --expr:1:6: error: 'foo' was not declared in this scope\n");
  EXPECT_EQ(r.out, "");
  const cli_run b = run_cli("integrate --body 'double s = 0;\nreturn s + bar;' --dim 1 --backend cpu");
  EXPECT_EQ(b.exit_code, 2);
  EXPECT_EQ(b.err, "mcubes: error: --body:2:12: error: 'bar' was not declared in this scope\n");
}

TEST(JitCli, AMissingCompilerIsARuntimeFailureThatSaysWhatToInstall) {
  const std::string empty = fresh_folder("jit_cli_empty_path");
  const cli_run r = run_cli("integrate --expr 'x[0]' --dim 1 --backend cpu", "CXX= PATH='" + empty + "'");
  EXPECT_EQ(r.exit_code, 3);
  EXPECT_EQ(r.err,
            "mcubes: error: no C++ compiler found (looked for $CXX (unset), c++ and g++ on PATH): install g++ (Debian: "
            "apt-get install g++)\n");
}

// A CXX that is set but names no compiler is refused, not silently replaced by c++.
TEST(JitCli, ACxxThatIsNotFoundIsRefused) {
  const cli_run r = run_cli("integrate --expr 'x[0]' --dim 1 --backend cpu", "CXX=clang++-99");
  EXPECT_EQ(r.exit_code, 3);
  EXPECT_EQ(r.err,
            "mcubes: error: the C++ compiler of $CXX, 'clang++-99', was not found (an executable path, or a program on "
            "PATH): install it, or unset CXX to use c++ or g++\n");
  EXPECT_EQ(r.out, "");
}

TEST(JitCli, AHangingCompilerIsStoppedAfterTheCompileTimeout) {
  const std::string dir = fresh_folder("jit_cli_hang");
  const std::string cxx = dir + "/hanging-c++";
  std::ofstream(cxx) << "#!/bin/sh\nif [ \"$1\" = --version ]; then echo 'g++ (hanging) 1.0'; exit 0; fi\nsleep 30\n";
  ::chmod(cxx.c_str(), 0755);
  const cli_run r = run_cli("integrate --expr 'x[0]' --dim 1 --backend cpu --compile-timeout 1", "CXX='" + cxx + "'");
  EXPECT_EQ(r.exit_code, 3);
  EXPECT_NE(r.err.find("did not finish within 1 s and was stopped"), std::string::npos) << r.err;
}

/// A running `mcubes args...` (environment: this program's, with XDG_CACHE_HOME and `env` set).
struct child {
  pid_t pid = -1;
  std::string out, err;
  /// Waits for the end; the exit code (128 + signal for a signal).
  int wait() const {
    int status = 0;
    while (::waitpid(pid, &status, 0) < 0) {
    }
    return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
  }
};

child start(const std::vector<std::string>& args, const std::vector<std::pair<std::string, std::string>>& env = {}) {
  static int counter = 0;
  child c;
  c.out = cache_home() + "/child" + std::to_string(counter) + ".out";
  c.err = cache_home() + "/child" + std::to_string(counter++) + ".err";
  c.pid = ::fork();
  if (c.pid == 0) {
    const int o = ::open(c.out.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
    const int e = ::open(c.err.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
    ::dup2(o, 1);
    ::dup2(e, 2);
    ::setenv("XDG_CACHE_HOME", cache_home().c_str(), 1);
    for (const auto& [k, v] : env) ::setenv(k.c_str(), v.c_str(), 1);
    std::vector<std::string> copy = args;
    std::string prog = MCUBES_CLI_PATH;
    std::vector<char*> argv{prog.data()};
    for (std::string& a : copy) argv.push_back(a.data());
    argv.push_back(nullptr);
    ::execv(prog.c_str(), argv.data());
    ::_exit(127);
  }
  return c;
}

/// Waits (at most 60 s) until `done()` holds.
template <class Pred>
bool wait_until(Pred done) {
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(60);
  while (std::chrono::steady_clock::now() < deadline) {
    if (done()) return true;
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  return false;
}

/// Rows of the iteration table in `out` ("   3 a*---  ...").
int count_rows(const std::string& out) {
  static const std::regex row(R"(^\s*\d+ [a-][*-][r-][o-][u-] )");
  int n = 0;
  std::istringstream s(out);
  for (std::string l; std::getline(s, l);)
    if (std::regex_search(l, row)) ++n;
  return n;
}

TEST(JitCli, SigintDuringTheRunKeepsTheIterationsSoFar) {
  const std::string expr = "exp(-x[0] * x[1] * x[2])";
  const cli_run warm = run_cli("integrate --expr '" + expr + "' --dim 3 --backend cpu --calls-per-iter 1e3 "
                               "--max-iterations 1 --skip 0 --min-iterations 1 -q");  // compiled: the run starts at once
  ASSERT_TRUE(warm.exit_code == 0 || warm.exit_code == 1) << warm.err;
  const std::string json_path = cache_home() + "/interrupted.json";
  const child c = start({"integrate", "--expr", expr, "--dim", "3", "--backend", "cpu", "--calls-per-iter", "2e6",
                         "--rel-tol", "1e-12", "--max-iterations", "1000", "--json", json_path});
  ASSERT_TRUE(wait_until([&] { return count_rows(read_file(c.out)) >= 2; })) << read_file(c.out) << read_file(c.err);
  ::kill(c.pid, SIGINT);
  EXPECT_EQ(c.wait(), 130) << read_file(c.err);
  const std::string out = read_file(c.out);
  EXPECT_NE(out.find("compiled: cache hit"), std::string::npos) << out;
  EXPECT_NE(out.find("status: interrupted"), std::string::npos) << out;
  const json j = json::parse(read_file(json_path));
  EXPECT_EQ(j.at("status"), "interrupted");
  EXPECT_GE(j.at("n_iterations").get<int>(), 2);
}

TEST(JitCli, SigintDuringTheCompilationStopsTheCompiler) {
  const std::string dir = fresh_folder("jit_cli_sigint");
  const std::string cxx = dir + "/slow-c++";
  std::ofstream(cxx) << "#!/bin/sh\nif [ \"$1\" = --version ]; then echo 'g++ (slow) 1.0'; exit 0; fi\n"
                        "echo $$ > '" << dir << "/started'\nsleep 30\n";
  ::chmod(cxx.c_str(), 0755);
  const child c = start({"integrate", "--expr", "x[0] + 1", "--dim", "1", "--backend", "cpu"}, {{"CXX", cxx}});
  ASSERT_TRUE(wait_until([&] { return ::access((dir + "/started").c_str(), F_OK) == 0; })) << read_file(c.err);
  const auto t0 = std::chrono::steady_clock::now();
  ::kill(c.pid, SIGINT);
  EXPECT_EQ(c.wait(), 130);
  EXPECT_LT(std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count(), 10.0);
  EXPECT_EQ(read_file(c.err), "mcubes: interrupted during the compilation of the integrand\n");
  EXPECT_EQ(read_file(c.out), "");
  std::ifstream in(dir + "/started");
  pid_t compiler = 0;
  in >> compiler;
  ASSERT_GT(compiler, 0);
  EXPECT_TRUE(wait_until([&] { return ::kill(compiler, 0) != 0; })) << "the compiler outlived the command";
}

}  // namespace

namespace {

// An integrand that never returns: the pass cannot be abandoned. The first SIGINT says so at once
// on stderr (one line: the run stops at the end of the current pass, a second signal aborts), the
// second ends the program at once.
TEST(JitCli, AnIntegrandThatNeverReturnsIsAbortedByTheSecondSignal) {
  // p0 = 0 returns (the warm-up compiles the object into the cache), p0 = 1 spins for ever
  const std::string body = "volatile int spin = 1; while (spin && p[0] > 0) {} return x[0];";
  const cli_run warm = run_cli("integrate --body '" + body + "' --param p0=0 --dim 2 --backend cpu --calls-per-iter 1e3 "
                               "--max-iterations 1 --skip 0 --min-iterations 1 -q");
  if (warm.exit_code == 3 && warm.err.find("no C++ compiler") != std::string::npos)
    GTEST_SKIP() << "no C++ compiler for the run-time compilation: " << warm.err;
  ASSERT_TRUE(warm.exit_code == 0 || warm.exit_code == 1) << warm.err;
  const child c = start({"integrate", "--body", body, "--param", "p0=1", "--dim", "2", "--backend", "cpu",
                         "--calls-per-iter", "1e4", "--threads", "1"});
  ASSERT_TRUE(wait_until([&] { return read_file(c.out).find("backend: ") != std::string::npos; }))
      << read_file(c.out) << read_file(c.err);
  std::this_thread::sleep_for(std::chrono::milliseconds(200));  // into the integrand
  ::kill(c.pid, SIGINT);
  const std::string notice =
      "mcubes: interrupt: the run stops at the end of the current pass (it cannot be abandoned mid-way); a second "
      "SIGINT or SIGTERM aborts at once\n";
  ASSERT_TRUE(wait_until([&] { return read_file(c.err).find(notice) != std::string::npos; })) << read_file(c.err);
  int status = 0;
  EXPECT_EQ(::waitpid(c.pid, &status, WNOHANG), 0) << "the program ended after the first signal";
  ::kill(c.pid, SIGINT);
  EXPECT_EQ(c.wait(), 128 + SIGINT);
  EXPECT_EQ(read_file(c.err), notice);
}

}  // namespace

namespace {

bool no_compiler() {
  const cli_run probe = run_cli("integrate --expr 'x[0]' --dim 1 --backend cpu --calls-per-iter 1e3 "
                                "--max-iterations 1 --skip 0 --min-iterations 1 -q");
  return probe.exit_code == 3 && probe.err.find("no C++ compiler") != std::string::npos;
}

// An integrand that crashes or calls abort() does not end the program silently: one line names
// the signal, and the program ends by that signal (the shell's 128 + signal).
TEST(JitCli, AnIntegrandThatCrashesIsNamedOnStderr) {
  if (no_compiler()) GTEST_SKIP() << "no C++ compiler for the run-time compilation";
  const std::string common =
      " --dim 1 --backend cpu --calls-per-iter 1e3 --max-iterations 1 --skip 0 --min-iterations 1 --threads 2";
  const cli_run segv = run_cli("integrate --body 'volatile double* p = nullptr; return *p + x[0];'" + common);
  EXPECT_EQ(segv.exit_code, 128 + SIGSEGV) << segv.err;
  // (the shell that ran it may add its own report of the signal after the line)
  EXPECT_EQ(segv.err.substr(0, segv.err.find('\n') + 1),
            "mcubes: error: the integrand crashed (signal SIGSEGV: invalid memory access)\n");
  const cli_run abrt = run_cli("integrate --body 'std::abort(); return x[0];'" + common);
  EXPECT_EQ(abrt.exit_code, 128 + SIGABRT) << abrt.err;
  EXPECT_EQ(abrt.err.substr(0, abrt.err.find('\n') + 1),
            "mcubes: error: the integrand crashed (signal SIGABRT: abort() called)\n");
}

// An integrand that calls exit(0) is a runtime failure (exit 3, one line), not a silent success.
TEST(JitCli, AnIntegrandThatCallsExitIsARuntimeFailure) {
  if (no_compiler()) GTEST_SKIP() << "no C++ compiler for the run-time compilation";
  const cli_run r = run_cli("integrate --body 'std::exit(0); return x[0];' --dim 1 --backend cpu --calls-per-iter 1e3 "
                            "--max-iterations 1 --skip 0 --min-iterations 1 --threads 2");
  EXPECT_EQ(r.exit_code, 3) << r.err;
  EXPECT_EQ(r.err, "mcubes: error: the integrand called exit() during the run\n");
  EXPECT_EQ(r.out.find("result"), std::string::npos) << r.out;
}

}  // namespace

namespace {

// A compiler that cannot write its output for want of space is a runtime failure (exit 3) that
// says so, not bad input (the text is not at fault); nothing is stored in the cache, so the next
// run compiles again.
TEST(JitCli, ACompilerOnAFullDiskIsARuntimeFailure) {
  const std::string dir = fresh_folder("jit_cli_full");
  const std::string cxx = dir + "/full-disk-c++";
  std::ofstream(cxx) << "#!/bin/sh\nif [ \"$1\" = --version ]; then echo 'g++ (full disk) 1.0'; exit 0; fi\n"
                        "echo '/usr/bin/ld: final link failed: No space left on device' >&2\n"
                        "echo 'collect2: error: ld returned 1 exit status' >&2\nexit 1\n";
  ::chmod(cxx.c_str(), 0755);
  for (int attempt = 0; attempt < 2; ++attempt) {
    const cli_run r = run_cli("integrate --expr 'x[0] * 3' --dim 1 --backend cpu", "CXX='" + cxx + "'");
    EXPECT_EQ(r.exit_code, 3) << r.err;
    EXPECT_NE(r.err.find("could not write its output (No space left on device"), std::string::npos) << r.err;
    EXPECT_NE(r.err.find("final link failed"), std::string::npos) << r.err;
    EXPECT_EQ(r.err.find('\n'), r.err.size() - 1) << r.err;  // one line
  }
}

}  // namespace

namespace {

// Build folders left in the cache by compilations killed outright (SIGKILL) are removed by the
// next compilation: one whose owner process has ended, one without an owner older than a day;
// the folder of a running compilation (its owner alive) stays.
TEST(JitCli, StaleBuildFoldersAreRemovedByTheNextCompilation) {
  const std::string jit_dir = cache_home() + "/mcubes/jit";
  const cli_run first = run_cli("integrate --expr 'x[0] + 2' --dim 1 --backend cpu --calls-per-iter 1e3 "
                                "--max-iterations 1 --skip 0 --min-iterations 1 -q");
  if (first.exit_code == 3 && first.err.find("no C++ compiler") != std::string::npos)
    GTEST_SKIP() << "no C++ compiler for the run-time compilation";
  char host[256] = {};
  ::gethostname(host, sizeof host - 1);
  const std::string dead = jit_dir + "/build.dead01", orphan = jit_dir + "/build.orph01", live = jit_dir + "/build.live01";
  for (const std::string& d : {dead, orphan, live}) ASSERT_EQ(::mkdir(d.c_str(), 0700), 0) << d;
  std::ofstream(dead + "/owner") << "999999999 " << host << "\n";  // beyond any pid_max: not running
  std::ofstream(dead + "/integrand.so") << "partial";
  std::ofstream(orphan + "/integrand.so") << "partial";
  const timespec old_times[2] = {{std::time(nullptr) - 3 * 24 * 3600, 0}, {std::time(nullptr) - 3 * 24 * 3600, 0}};
  ASSERT_EQ(::utimensat(AT_FDCWD, orphan.c_str(), old_times, 0), 0);
  std::ofstream(live + "/owner") << ::getpid() << " " << host << "\n";
  const cli_run r = run_cli("integrate --expr 'x[0] + 4' --dim 1 --backend cpu --calls-per-iter 1e3 "
                            "--max-iterations 1 --skip 0 --min-iterations 1 -q");
  EXPECT_TRUE(r.exit_code == 0 || r.exit_code == 1) << r.err;
  struct stat st;
  EXPECT_NE(::stat(dead.c_str(), &st), 0) << "the folder of an ended compilation is still there";
  EXPECT_NE(::stat(orphan.c_str(), &st), 0) << "the old folder without an owner is still there";
  EXPECT_EQ(::stat(live.c_str(), &st), 0) << "the folder of a running compilation was removed";
  ::unlink((live + "/owner").c_str());
  ::rmdir(live.c_str());
}

}  // namespace

namespace {

// Killed outright (SIGKILL) during the compilation, the command takes the compiler with it: the
// compiler driver and what the driver started (here a `sleep` standing for cc1plus).
TEST(JitCli, SigkillDuringTheCompilationEndsTheCompilersChildrenToo) {
  const std::string dir = fresh_folder("jit_cli_sigkill");
  const std::string cxx = dir + "/slow-c++";
  std::ofstream(cxx) << "#!/bin/sh\nif [ \"$1\" = --version ]; then echo 'g++ (slow) 1.0'; exit 0; fi\n"
                        "sleep 30 &\necho $! > '" << dir << "/worker.tmp'\nmv '" << dir << "/worker.tmp' '" << dir
                     << "/worker'\nwait\n";
  ::chmod(cxx.c_str(), 0755);
  const child c = start({"integrate", "--expr", "x[0] + 5", "--dim", "1", "--backend", "cpu"}, {{"CXX", cxx}});
  ASSERT_TRUE(wait_until([&] { return ::access((dir + "/worker").c_str(), F_OK) == 0; })) << read_file(c.err);
  std::ifstream in(dir + "/worker");
  pid_t worker = 0;
  in >> worker;
  ASSERT_GT(worker, 0);
  ::kill(c.pid, SIGKILL);
  EXPECT_EQ(c.wait(), 128 + SIGKILL);
  const auto ended = [&] {  // gone, or a zombie that nobody reaped yet
    if (::kill(worker, 0) != 0) return true;
    const std::string stat = read_file("/proc/" + std::to_string(worker) + "/stat");
    const std::size_t paren = stat.rfind(')');
    return paren != std::string::npos && paren + 2 < stat.size() && stat[paren + 2] == 'Z';
  };
  EXPECT_TRUE(wait_until(ended)) << "the compiler's child outlived the command";
}

}  // namespace

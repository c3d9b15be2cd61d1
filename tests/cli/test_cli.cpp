/// @file tests/cli/test_cli.cpp
/// Tests of the `mcubes` command, run as a program (path in MCUBES_CLI_PATH): exit codes, the
/// one-line error messages of every bad input, `mcubes list`, the JSON record (keys, exact round
/// trip of doubles, null for non-finite values) and thread-count invariance of the result.
/// Every run is seeded; total run time is a few seconds.
#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cfloat>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <limits>
#include <sstream>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include <mcubes/suite.hpp>

#ifndef MCUBES_CLI_PATH
#error "MCUBES_CLI_PATH (path of the mcubes program) must be defined"
#endif

namespace {

using json = nlohmann::json;

/// What one run of the program produced.
struct cli_run {
  int exit_code = -1;
  std::string out;  ///< stdout
  std::string err;  ///< stderr
};

std::string read_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}

/// A fresh path in the test temporary folder (unique per process and call).
std::string temp_path(const std::string& suffix) {
  static int counter = 0;
  return ::testing::TempDir() + "mcubes_cli_" + std::to_string(::getpid()) + "_" + std::to_string(counter++) + suffix;
}

/// Runs `mcubes <args>` (args as written on a shell command line) and captures its output.
cli_run run_cli(const std::string& args) {
  const std::string out = temp_path(".out"), err = temp_path(".err");
  const std::string cmd = std::string("'") + MCUBES_CLI_PATH + "' " + args + " >'" + out + "' 2>'" + err + "'";
  const int status = std::system(cmd.c_str());
  cli_run r;
  r.exit_code = (status != -1 && WIFEXITED(status)) ? WEXITSTATUS(status) : -1;
  r.out = read_file(out);
  r.err = read_file(err);
  std::remove(out.c_str());
  std::remove(err.c_str());
  return r;
}

std::vector<std::string> lines(const std::string& text) {
  std::vector<std::string> v;
  std::istringstream s(text);
  for (std::string l; std::getline(s, l);) v.push_back(l);
  return v;
}

/// The double written after `prefix` at the start of a line of `text` (NaN if there is none).
double number_after(const std::string& text, const std::string& prefix) {
  for (const std::string& l : lines(text))
    if (l.compare(0, prefix.size(), prefix) == 0) return std::strtod(l.c_str() + prefix.size(), nullptr);
  return std::numeric_limits<double>::quiet_NaN();
}

/// The raw text of the number that follows the first `"key": ` in a JSON document.
std::string raw_json_number(const std::string& doc, const std::string& key) {
  const std::string k = "\"" + key + "\": ";
  const std::size_t at = doc.find(k);
  if (at == std::string::npos) return {};
  const std::size_t begin = at + k.size();
  const std::size_t end = doc.find_first_of(",\n}", begin);
  return doc.substr(begin, end - begin);
}

bool same_bits(double a, double b) { return std::memcmp(&a, &b, sizeof a) == 0; }

// ---------------------------------------------------------------------------------------------
// Bad input: one line "mcubes: error: ..." on stderr, exit code 2, nothing on stdout.

struct bad_input_case {
  const char* label;
  const char* args;
  const char* message;  ///< a substring the error line must contain
};

void PrintTo(const bad_input_case& c, std::ostream* os) { *os << "mcubes " << c.args; }

class BadInput : public ::testing::TestWithParam<bad_input_case> {};

TEST_P(BadInput, OneLineOnStderrExitTwoNothingOnStdout) {
  const bad_input_case& c = GetParam();
  const cli_run r = run_cli(c.args);
  EXPECT_EQ(r.exit_code, 2) << c.args;
  EXPECT_EQ(r.out, "") << c.args;
  const std::vector<std::string> err = lines(r.err);
  ASSERT_EQ(err.size(), 1u) << c.args << "\nstderr:\n" << r.err;
  EXPECT_EQ(err[0].rfind("mcubes: error: ", 0), 0u) << err[0];
  EXPECT_NE(err[0].find(c.message), std::string::npos) << "expected '" << c.message << "' in: " << err[0];
}

const bad_input_case bad_inputs[] = {
    {"unknown_integrand", "integrate f9", "unknown integrand 'f9' (known: f1, f2, f3, f4, f5, f6, fA, fB)"},
    {"no_integrand", "integrate", "integrand is required"},
    {"no_subcommand", "", "subcommand is required"},
    {"unknown_subcommand", "integrat f4", "unknown command 'integrat' (commands: integrate, list"},
    {"unknown_option", "integrate f4 --bogus 3", "--bogus"},
    {"dim_zero", "integrate f4 --dim 0", "--dim for f4 must be in [1, 32], got 0"},
    {"dim_negative", "integrate f1 --dim -3", "--dim for f1 must be in [1, 32], got -3"},
    {"dim_too_large", "integrate f2 --dim 33", "--dim for f2 must be in [1, 32], got 33"},
    {"dim_wrong_for_fA", "integrate fA --dim 5", "--dim for fA must be 6"},
    {"dim_wrong_for_fB", "integrate fB --dim 10", "--dim for fB must be 9"},
    {"both_tolerances_zero", "integrate f4 --rel-tol 0 --abs-tol 0", "at least one of --rel-tol and --abs-tol"},
    {"negative_rel_tol", "integrate f4 --rel-tol -1e-3", "tolerances must be non-negative"},
    {"negative_abs_tol", "integrate f4 --abs-tol -1", "tolerances must be non-negative"},
    {"nan_rel_tol", "integrate f4 --rel-tol nan", "tolerances must be non-negative"},
    {"calls_one", "integrate f4 --calls-per-iter 1", "--calls-per-iter must be at least 2"},
    {"calls_zero", "integrate f4 --calls-per-iter 0", "--calls-per-iter must be at least 2"},
    {"calls_negative", "integrate f4 --calls-per-iter -100", "--calls-per-iter must be a non-negative integer"},
    {"calls_fraction", "integrate f4 --calls-per-iter 1.5e0", "--calls-per-iter must be a non-negative integer"},
    {"calls_not_a_number", "integrate f4 --calls-per-iter many", "--calls-per-iter must be a non-negative integer"},
    {"bins_one", "integrate f4 --bins 1", "--bins must be in [2, 2^20], got 1"},
    {"threads_zero", "integrate f4 --threads 0", "--threads must be at least 1, got 0"},
    {"threads_negative", "integrate f4 --threads -4", "--threads must be at least 1, got -4"},
    {"dim_not_a_number", "integrate f4 --dim eight", "--dim"},
    {"dim_fraction", "integrate f4 --dim 3.5", "--dim"},
    {"rel_tol_not_a_number", "integrate f4 --rel-tol small", "--rel-tol"},
    {"max_iterations_not_a_number", "integrate f4 --max-iterations ten", "--max-iterations"},
    {"threads_not_a_number", "integrate f4 --threads all", "--threads"},
    {"seed_not_a_number", "integrate f4 --seed abc", "--seed must be a non-negative integer"},
    {"seed_negative", "integrate f4 --seed -1", "--seed must be a non-negative integer"},
    {"max_iterations_zero", "integrate f4 --max-iterations 0", "--max-iterations must be at least 1, got 0"},
    {"skip_plus_min_exceeds_max", "integrate f4 --skip 5 --min-iterations 5 --max-iterations 9",
     "--skip (5) + --min-iterations (5) exceeds --max-iterations (9)"},
    {"min_iterations_zero", "integrate f4 --min-iterations 0", "--min-iterations must be at least 1"},
    {"negative_skip", "integrate f4 --skip -1", "--skip must be non-negative"},
    {"negative_alpha", "integrate f4 --alpha -0.5", "--alpha must be a finite non-negative number"},
    {"max_chi2_dof_zero", "integrate f4 --max-chi2-dof 0", "--max-chi2-dof must be positive"},
    {"unknown_backend", "integrate f4 --backend gpu", "--backend"},
    {"json_unwritable", "integrate f4 --json /nonexistent-dir/out.json", "--json: cannot open"},
};

INSTANTIATE_TEST_SUITE_P(Cli, BadInput, ::testing::ValuesIn(bad_inputs),
                         [](const ::testing::TestParamInfo<bad_input_case>& info) { return info.param.label; });

// ---------------------------------------------------------------------------------------------
// Runtime failure, help, list.

// Without the CUDA backend in the build, or without a device: a runtime failure (exit 3) that says
// which. With a device the run goes through and this test does not apply.
TEST(Cli, CudaBackendWithoutCudaIsARuntimeFailure) {
  const cli_run r = run_cli("integrate f4 --backend cuda");
  if (r.exit_code == 0) GTEST_SKIP() << "a CUDA device ran the integration: the failure path is not reachable here";
  EXPECT_EQ(r.exit_code, 3);
  EXPECT_EQ(r.out, "");
  const std::vector<std::string> err = lines(r.err);
  ASSERT_EQ(err.size(), 1u) << r.err;
  EXPECT_EQ(err[0].rfind("mcubes: error: ", 0), 0u);
  EXPECT_TRUE(err[0].find("this build has no CUDA backend") != std::string::npos ||
              err[0].find("no CUDA device") != std::string::npos)
      << err[0];
}

TEST(Cli, HelpExitsZero) {
  for (const char* args : {"--help", "integrate --help", "list --help"}) {
    const cli_run r = run_cli(args);
    EXPECT_EQ(r.exit_code, 0) << args;
    EXPECT_NE(r.out.find("Usage"), std::string::npos) << args;
    EXPECT_EQ(r.err, "") << args;
  }
  const cli_run h = run_cli("integrate --help");
  for (const char* option : {"--dim", "--rel-tol", "--abs-tol", "--calls-per-iter", "--max-iterations",
                             "--adapt-iterations", "--skip", "--min-iterations", "--max-chi2-dof", "--bins", "--alpha",
                             "--symmetric-map", "--seed", "--threads", "--backend", "--json", "--quiet"})
    EXPECT_NE(h.out.find(option), std::string::npos) << option;
}

TEST(Cli, ListShowsEveryIntegrandWithItsExactValue) {
  const cli_run r = run_cli("list");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const std::vector<std::string> out = lines(r.out);
  ASSERT_EQ(mcubes::suite::entries().size(), 8u);
  for (const mcubes::suite::entry& e : mcubes::suite::entries()) {
    char exact[64];
    std::snprintf(exact, sizeof exact, "%.17g", e.exact(e.default_dim));
    bool found = false;
    for (const std::string& l : out) {
      if (l.rfind(e.name + " ", 0) != 0) continue;
      found = true;
      EXPECT_NE(l.find(exact), std::string::npos) << l;
      EXPECT_NE(l.find(e.any_dim ? "(any)" : "(fixed)"), std::string::npos) << l;
      EXPECT_NE(l.find(e.description), std::string::npos) << l;
    }
    EXPECT_TRUE(found) << "no line for " << e.name << " in:\n" << r.out;
  }
}

// ---------------------------------------------------------------------------------------------
// JSON.

TEST(Cli, NlohmannDumpRoundTripsDoublesExactly) {
  // nlohmann::json writes the shortest decimal that parses back to the same double (at most 17
  // significant digits): check the round trip on values where fewer digits would not suffice.
  const double values[] = {0.1,
                           1.0 / 3.0,
                           2.0 / 3.0,
                           6.3838021900043833e-10,
                           std::nextafter(1.0, 2.0),
                           std::nextafter(0.1, 1.0),
                           -49.165073816419458,
                           1.7976931348623157e308,
                           DBL_MIN,
                           4.9406564584124654e-324,
                           12868879901109.877,
                           123456789012345678.0};
  for (const double v : values) {
    const std::string text = json(v).dump();
    EXPECT_TRUE(same_bits(std::strtod(text.c_str(), nullptr), v)) << text;
    EXPECT_TRUE(same_bits(json::parse(text).get<double>(), v)) << text;
  }
  // ... and at most 17 significant digits, the value needing them printed with all 17.
  EXPECT_EQ(json(0.1).dump(), "0.1");
  EXPECT_EQ(json(1.0 / 3.0).dump(), "0.3333333333333333");
  EXPECT_EQ(json(std::nextafter(0.1, 1.0)).dump(), "0.10000000000000002");
}

TEST(Cli, IntegrateWritesCompleteJsonWhoseNumbersRoundTrip) {
  const std::string path = temp_path(".json");
  const cli_run r = run_cli("integrate f4 --calls-per-iter 200000 --seed 3 --json '" + path + "'");
  const std::string doc = read_file(path);
  std::remove(path.c_str());
  ASSERT_TRUE(r.exit_code == 0 || r.exit_code == 1) << r.err;
  EXPECT_EQ(r.err, "");
  const json j = json::parse(doc);

  for (const char* key : {"estimate", "error", "chi2_dof", "q", "dof", "status", "n_eval", "iterations", "n_iterations",
                          "seed", "backend", "options", "integrand", "exact", "true_rel_error", "seconds",
                          "evals_per_second", "version"})
    EXPECT_TRUE(j.contains(key)) << key;
  const std::string status = j.at("status").get<std::string>();
  EXPECT_EQ(r.exit_code, status == "converged" ? 0 : 1) << status;
  EXPECT_TRUE(status == "converged" || status == "not converged" || status == "not resolved") << status;

  // every iteration_record field, one object per iteration
  ASSERT_TRUE(j.at("iterations").is_array());
  EXPECT_EQ(j.at("iterations").size(), j.at("n_iterations").get<std::size_t>());
  ASSERT_GE(j.at("iterations").size(), 1u);
  std::uint64_t n_eval = 0;
  for (const json& it : j.at("iterations")) {
    for (const char* key : {"index", "estimate", "error", "adapted", "accumulated", "weighted_estimate",
                            "weighted_error", "chi2_dof", "q", "n_eval", "n_nonzero", "rescaled", "top_bin_level", "seconds"})
      EXPECT_TRUE(it.contains(key)) << key;
    n_eval += it.at("n_eval").get<std::uint64_t>();
  }
  EXPECT_EQ(n_eval, j.at("n_eval").get<std::uint64_t>());

  // every option, with the values given and the paper's defaults for the others
  const json& o = j.at("options");
  for (const char* key : {"rel_tol", "abs_tol", "calls_per_iteration", "max_iterations", "adapt_iterations", "skip",
                          "min_iterations", "max_chi2_dof", "n_bins", "alpha", "symmetric_map", "seed", "threads",
                          "backend", "cuda_threads_per_block"})
    EXPECT_TRUE(o.contains(key)) << key;
  const mcubes::suite::entry* f4 = mcubes::suite::find("f4");
  ASSERT_NE(f4, nullptr);
  EXPECT_EQ(o.at("calls_per_iteration").get<std::uint64_t>(), 200000u);
  EXPECT_EQ(o.at("max_iterations").get<int>(), f4->paper.max_iterations);
  EXPECT_EQ(o.at("adapt_iterations").get<int>(), f4->paper.adapt_iterations);
  EXPECT_EQ(o.at("skip").get<int>(), f4->paper.skip);
  EXPECT_EQ(o.at("rel_tol").get<double>(), 1e-3);
  EXPECT_EQ(o.at("threads").get<int>(), 0);  // all cores
  EXPECT_EQ(j.at("seed").get<std::uint64_t>(), 3u);
  EXPECT_EQ(j.at("backend").get<std::string>(), "cpu");
  EXPECT_EQ(j.at("integrand").at("name").get<std::string>(), "f4");
  EXPECT_EQ(j.at("integrand").at("dim").get<int>(), 8);

  // exact value and true relative error
  const double estimate = j.at("estimate").get<double>();
  const double exact = j.at("exact").get<double>();
  EXPECT_TRUE(same_bits(exact, f4->exact(8)));
  EXPECT_TRUE(same_bits(j.at("true_rel_error").get<double>(), std::fabs(estimate - exact) / std::fabs(exact)));

  // the estimate's text parses back to exactly the double, in the JSON and in the text report
  const std::string raw = raw_json_number(doc, "estimate");
  ASSERT_FALSE(raw.empty());
  EXPECT_TRUE(same_bits(std::strtod(raw.c_str(), nullptr), estimate)) << raw;
  EXPECT_TRUE(same_bits(number_after(r.out, "result: "), estimate)) << r.out;
  const std::string raw_error = raw_json_number(doc, "error");
  EXPECT_TRUE(same_bits(std::strtod(raw_error.c_str(), nullptr), j.at("error").get<double>())) << raw_error;
  EXPECT_EQ(nlohmann::ordered_json::parse(doc).dump(2) + "\n", doc);  // dump(parse(doc)) == doc: nothing rounded

  // the text report: table and result lines
  EXPECT_NE(r.out.find("weighted est."), std::string::npos);
  EXPECT_NE(r.out.find("status: " + status), std::string::npos);
  EXPECT_NE(r.out.find("exact: "), std::string::npos);
  EXPECT_NE(r.out.find("seed: 3"), std::string::npos);
}

TEST(Cli, ResultIsBitwiseIdenticalForOneAndTwoThreads) {
  json runs[3];
  const char* threads[] = {"--threads 1", "--threads 2", ""};
  for (int k = 0; k < 3; ++k) {
    const cli_run r = run_cli(std::string("integrate f4 --calls-per-iter 200000 --seed 3 -q --json - ") + threads[k]);
    ASSERT_TRUE(r.exit_code == 0 || r.exit_code == 1) << r.err;
    runs[k] = json::parse(r.out);
  }
  EXPECT_EQ(runs[0].at("threads").get<int>(), 1);
  EXPECT_EQ(runs[1].at("threads").get<int>(), 2);
  for (int k = 1; k < 3; ++k) {
    EXPECT_TRUE(same_bits(runs[k].at("estimate").get<double>(), runs[0].at("estimate").get<double>()));
    EXPECT_TRUE(same_bits(runs[k].at("error").get<double>(), runs[0].at("error").get<double>()));
    EXPECT_EQ(runs[k].at("n_iterations"), runs[0].at("n_iterations"));
    ASSERT_EQ(runs[k].at("iterations").size(), runs[0].at("iterations").size());
    for (std::size_t i = 0; i < runs[0].at("iterations").size(); ++i)
      EXPECT_TRUE(same_bits(runs[k].at("iterations")[i].at("estimate").get<double>(),
                            runs[0].at("iterations")[i].at("estimate").get<double>()))
          << "iteration " << i;
  }
}

TEST(Cli, NotConvergedExitsOneAndStillPrintsTheResult) {
  const cli_run r = run_cli(
      "integrate f4 --calls-per-iter 1000 --max-iterations 2 --skip 0 --min-iterations 1 --rel-tol 1e-12 --quiet");
  EXPECT_EQ(r.exit_code, 1) << r.err;
  const std::vector<std::string> out = lines(r.out);
  ASSERT_EQ(out.size(), 1u) << r.out;  // --quiet: the result line only
  EXPECT_EQ(out[0].rfind("result: ", 0), 0u);
  EXPECT_NE(out[0].find("(not converged)"), std::string::npos) << out[0];
}

TEST(Cli, NotResolvedWritesNullErrorAndExitsOne) {
  // fB's peak (sigma 0.01 in (-1,1)^9) is never hit by 2 samples: every value underflows to 0.
  const cli_run r = run_cli(
      "integrate fB --calls-per-iter 2 --max-iterations 1 --adapt-iterations 0 --skip 0 --min-iterations 1 --json -");
  EXPECT_EQ(r.exit_code, 1) << r.err;
  const json j = json::parse(r.out);  // stdout carries only the JSON: it parses as a whole
  EXPECT_EQ(j.at("status").get<std::string>(), "not resolved");
  EXPECT_TRUE(j.at("error").is_null());  // infinite error -> null
  EXPECT_TRUE(j.at("pull").is_null());
  EXPECT_EQ(j.at("estimate").get<double>(), 0.0);
}

// auto: the CPU when the build has no CUDA backend or no device is present, saying why; the GPU
// (saying so) when one is present.
TEST(Cli, AutoBackendSaysWhichBackendRan) {
  const cli_run r = run_cli("integrate f3 --calls-per-iter 20000 --backend auto --threads 1");
  ASSERT_TRUE(r.exit_code == 0 || r.exit_code == 1) << r.err;
  const bool on_cpu = r.out.find("backend: cpu (auto: no CUDA") != std::string::npos;
  const bool on_gpu = r.out.find("backend: cuda (") != std::string::npos && r.out.find("(auto: device found)") != std::string::npos;
  EXPECT_TRUE(on_cpu || on_gpu) << r.out;
  const cli_run q = run_cli("integrate f3 --calls-per-iter 20000 --backend auto --quiet");
  if (on_cpu) EXPECT_NE(q.err.find("auto: no CUDA"), std::string::npos) << q.err;
}

TEST(Cli, DimensionDefaultsAndFixedDimensionsAreAccepted) {
  const cli_run d = run_cli("integrate f1 --dim 2 --calls-per-iter 10000 --max-iterations 3 --skip 0 "
                            "--min-iterations 1 --json -");
  ASSERT_TRUE(d.exit_code == 0 || d.exit_code == 1) << d.err;
  EXPECT_EQ(json::parse(d.out).at("integrand").at("dim").get<int>(), 2);
  const cli_run a = run_cli("integrate fA --dim 6 --calls-per-iter 1e4 --max-iterations 1 --min-iterations 1 --json -");
  ASSERT_TRUE(a.exit_code == 0 || a.exit_code == 1) << a.err;
  const json ja = json::parse(a.out);
  EXPECT_EQ(ja.at("integrand").at("dim").get<int>(), 6);
  EXPECT_EQ(ja.at("options").at("calls_per_iteration").get<std::uint64_t>(), 10000u);  // "1e4" accepted
}

}  // namespace

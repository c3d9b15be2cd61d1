/// @file tests/cli/test_cli.cpp
/// Tests of the `mcubes` command, run as a program (path in MCUBES_CLI_PATH): exit codes, the
/// one-line error messages of every bad input (the catalogue tests/cli/bad_inputs.tsv, path in
/// MCUBES_BAD_INPUTS), `mcubes list`, the text report (rows, result, status and iterations lines),
/// the JSON record (keys, exact round trip of doubles, null for non-finite values) and thread-count
/// invariance of the result; --json to what is not a regular file (/dev/null, a FIFO, links,
/// /dev/stdout), failing record writes and a failed run's record. Every run is seeded; total run
/// time is a few seconds.
#include <gtest/gtest.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <cfloat>
#include <cmath>
#include <cstdio>
#include <utility>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <limits>
#include <map>
#include <regex>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include <nlohmann/json.hpp>

#include "cli/cli_test_support.hpp"

#include <mcubes/options.hpp>
#include <mcubes/suite.hpp>

#include "support/bits.hpp"

#ifndef MCUBES_CLI_PATH
#error "MCUBES_CLI_PATH (path of the mcubes program) must be defined"
#endif
#ifndef MCUBES_BAD_INPUTS
#error "MCUBES_BAD_INPUTS (path of tests/cli/bad_inputs.tsv) must be defined"
#endif

namespace {

using json = nlohmann::json;

using mcubes_test::cli_run;

using mcubes_test::read_file;

/// A fresh path in the test temporary folder (unique per process and call).
std::string temp_path(const std::string& suffix) { return mcubes_test::temp_path("mcubes_cli", suffix); }

/// Runs `mcubes <args>` (args as written on a shell command line) and captures its output.
cli_run run_cli(const std::string& args) {
  return mcubes_test::run_captured(std::string("'") + MCUBES_CLI_PATH + "' " + args, "mcubes_cli");
}

std::vector<std::string> lines(const std::string& text) {
  std::vector<std::string> v;
  std::istringstream s(text);
  for (std::string l; std::getline(s, l);) v.push_back(l);
  return v;
}

/// The line of `text` that starts with `prefix` ("" if there is none).
std::string line_starting(const std::string& text, const std::string& prefix) {
  for (const std::string& l : lines(text))
    if (l.compare(0, prefix.size(), prefix) == 0) return l;
  return {};
}

/// The result line of the text report, "result: 1.084673(68)e-02  (0.01084673348898635 +- 6.77567e-07,
/// relative ...)": the short form, the full-precision estimate and the error inside the parentheses.
struct result_line {
  std::string short_form;
  double estimate = std::numeric_limits<double>::quiet_NaN();
  double error = std::numeric_limits<double>::quiet_NaN();
};

result_line parse_result_line(const std::string& text) {
  result_line r;
  const std::string l = line_starting(text, "result: ");
  const std::size_t open = l.find("  (");
  if (open == std::string::npos) return r;
  r.short_form = l.substr(8, open - 8);
  const char* p = l.c_str() + open + 3;
  char* end = nullptr;
  r.estimate = std::strtod(p, &end);
  if (std::strncmp(end, " +- ", 4) == 0) r.error = std::strtod(end + 4, nullptr);
  return r;
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

using mcubes_test::same_bits;

// ---------------------------------------------------------------------------------------------
// The bad-input catalogue (tests/cli/bad_inputs.tsv, path in MCUBES_BAD_INPUTS): one test per line,
// named by its label. Exit code 2: exactly one line "mcubes: error: <message>" on stderr holding
// the fragment, nothing on stdout. Exit code 3: the same stderr line; stdout may hold what was
// printed before the failure. The file format is described at its top.

/// One line of the catalogue. A malformed line becomes a case with `problem` set: its test fails.
struct catalogue_case {
  std::string label;
  int exit_code = 0;
  bool skipped_where_a_gpu_runs_it = false;  ///< exit code "3/no-gpu"
  std::vector<std::string> fragments;       ///< the error line must contain one of them
  std::string fragment_text;                ///< as written ("A|B")
  std::string args;
  int line = 0;
  std::string text;     ///< the line as written
  std::string problem;  ///< non-empty: why the line is malformed
};

void PrintTo(const catalogue_case& c, std::ostream* os) { *os << "line " << c.line << ": mcubes " << c.args; }

bool valid_label(const std::string& s) {
  if (s.empty()) return false;
  for (const char ch : s)
    if (!(std::isalnum(static_cast<unsigned char>(ch)) || ch == '_')) return false;
  return true;
}

std::vector<std::string> split(const std::string& s, char sep) {
  std::vector<std::string> parts;
  std::size_t begin = 0;
  for (;;) {
    const std::size_t at = s.find(sep, begin);
    parts.push_back(s.substr(begin, at == std::string::npos ? std::string::npos : at - begin));
    if (at == std::string::npos) return parts;
    begin = at + 1;
  }
}

/// Reads a catalogue: every line that is neither blank (spaces only) nor a comment ('#' after
/// optional spaces) gives one case, well formed or not.
std::vector<catalogue_case> parse_catalogue(std::istream& in) {
  std::vector<catalogue_case> cases;
  std::vector<std::string> labels;
  std::string line;
  for (int number = 1; std::getline(in, line); ++number) {
    if (!line.empty() && line.back() == '\r') line.pop_back();
    const std::size_t first = line.find_first_not_of(' ');
    if (first == std::string::npos || line[first] == '#') continue;
    catalogue_case c;
    c.line = number;
    c.text = line;
    const std::vector<std::string> f = split(line, '\t');
    if (f.size() != 4) {
      c.problem = std::to_string(f.size()) + " TAB-separated fields, expected 4 (label, exit code, fragment, arguments)";
    } else if (!valid_label(f[0])) {
      c.problem = "label '" + f[0] + "' is not letters, digits and '_'";
    } else if (std::find(labels.begin(), labels.end(), f[0]) != labels.end()) {
      c.problem = "label '" + f[0] + "' is used by an earlier line";
    } else if (f[1] != "2" && f[1] != "3" && f[1] != "3/no-gpu") {
      c.problem = "exit code '" + f[1] + "' is not 2, 3 or 3/no-gpu";
    } else {
      c.label = f[0];
      c.exit_code = f[1][0] - '0';
      c.skipped_where_a_gpu_runs_it = f[1] == "3/no-gpu";
      c.fragment_text = f[2];
      c.fragments = split(f[2], '|');
      c.args = f[3];
      for (const std::string& alternative : c.fragments)
        if (alternative.empty()) c.problem = "empty message fragment";
    }
    if (!c.problem.empty()) c.label = "malformed_line_" + std::to_string(number);
    labels.push_back(c.label);
    cases.push_back(c);
  }
  return cases;
}

/// The catalogue file, read once (at static initialisation, by the instantiation below). An
/// unreadable file gives one failing case.
const std::vector<catalogue_case>& catalogue() {
  static const std::vector<catalogue_case> cases = [] {
    std::ifstream in(MCUBES_BAD_INPUTS);
    if (!in) {
      catalogue_case c;
      c.label = "catalogue_file_unreadable";
      c.problem = std::string("cannot read ") + MCUBES_BAD_INPUTS;
      return std::vector<catalogue_case>{c};
    }
    return parse_catalogue(in);
  }();
  return cases;
}

class BadInput : public ::testing::TestWithParam<catalogue_case> {};

TEST_P(BadInput, FailsWithOneErrorLine) {
  const catalogue_case& c = GetParam();
  const std::string where = std::string(MCUBES_BAD_INPUTS) + ":" + std::to_string(c.line) + ": mcubes " + c.args;
  ASSERT_TRUE(c.problem.empty()) << MCUBES_BAD_INPUTS << ":" << c.line << ": malformed line: " << c.problem
                                 << "\n  " << c.text;
  const cli_run r = run_cli(c.args);
  if (c.skipped_where_a_gpu_runs_it && (r.exit_code == 0 || r.exit_code == 1))
    GTEST_SKIP() << "a CUDA device ran it: the failure without one is not reachable here";
  EXPECT_EQ(r.exit_code, c.exit_code) << where << "\nstderr:\n" << r.err;
  if (c.exit_code == 2) {
    EXPECT_EQ(r.out, "") << where;
  }
  ASSERT_TRUE(!r.err.empty() && r.err.back() == '\n' && r.err.find('\n') == r.err.size() - 1)
      << where << ": not exactly one line on stderr:\n" << r.err;
  const std::string prefix = "mcubes: error: ";
  ASSERT_EQ(r.err.rfind(prefix, 0), 0u) << where << "\n" << r.err;
  const std::string message = r.err.substr(prefix.size());
  bool found = false;
  for (const std::string& fragment : c.fragments) found = found || message.find(fragment) != std::string::npos;
  EXPECT_TRUE(found) << where << "\nexpected '" << c.fragment_text << "' in: " << r.err;
}

INSTANTIATE_TEST_SUITE_P(Catalogue, BadInput, ::testing::ValuesIn(catalogue()),
                         [](const ::testing::TestParamInfo<catalogue_case>& info) { return info.param.label; });

TEST(Catalogue, HasAtLeast150WellFormedCasesForEveryCommand) {
  const std::vector<catalogue_case>& cases = catalogue();
  EXPECT_GE(cases.size(), 150u);
  int malformed = 0, integrate = 0, pi = 0, list = 0, scan = 0, runtime = 0;
  for (const catalogue_case& c : cases) {
    malformed += !c.problem.empty();
    integrate += c.args.rfind("integrate ", 0) == 0;
    pi += c.args.rfind("pi ", 0) == 0;
    list += c.args.rfind("list ", 0) == 0;
    scan += c.args.rfind("scan", 0) == 0;
    runtime += c.exit_code == 3;
  }
  EXPECT_EQ(malformed, 0);
  EXPECT_GE(integrate, 100);
  EXPECT_GE(pi, 30);
  EXPECT_GE(list, 1);
  EXPECT_GE(scan, 40);
  EXPECT_GE(runtime, 3);
}

TEST(Catalogue, MalformedLinesAreCasesThatFailNeverSkipped) {
  std::istringstream in(
      "# a comment\n"
      "\n"
      "   \n"
      "  # an indented comment\n"
      "good\t2\tsome text\tintegrate f9\n"
      "no_args\t2\tA subcommand is required\t\n"
      "either\t3/no-gpu\tfirst|second\tpi --compare\r\n"
      "three_fields\t2\tintegrate f9\n"
      "five_fields\t2\tx\tintegrate f9\textra\n"
      "bad label!\t2\tx\tintegrate f9\n"
      "good\t2\tx\tintegrate f9\n"
      "code_one\t1\tx\tintegrate f9\n"
      "code_word\ttwo\tx\tintegrate f9\n"
      "empty_fragment\t2\t\tintegrate f9\n"
      "empty_alternative\t2\ta|\tintegrate f9\n"
      "spaces  instead of tabs\n");
  const std::vector<catalogue_case> cases = parse_catalogue(in);
  ASSERT_EQ(cases.size(), 12u);
  EXPECT_EQ(cases[0].label, "good");
  EXPECT_EQ(cases[0].exit_code, 2);
  EXPECT_EQ(cases[0].fragments, std::vector<std::string>{"some text"});
  EXPECT_EQ(cases[0].args, "integrate f9");
  EXPECT_EQ(cases[0].line, 5);
  EXPECT_EQ(cases[1].label, "no_args");
  EXPECT_EQ(cases[1].args, "");
  EXPECT_EQ(cases[2].exit_code, 3);
  EXPECT_TRUE(cases[2].skipped_where_a_gpu_runs_it);
  EXPECT_EQ(cases[2].fragments, (std::vector<std::string>{"first", "second"}));
  EXPECT_EQ(cases[2].args, "pi --compare");  // a CRLF line ending is not part of the arguments
  for (int k = 0; k < 3; ++k) EXPECT_EQ(cases[k].problem, "") << k;
  for (std::size_t k = 3; k < cases.size(); ++k) {
    EXPECT_NE(cases[k].problem, "") << cases[k].text;
    EXPECT_EQ(cases[k].label, "malformed_line_" + std::to_string(cases[k].line));
  }
  EXPECT_NE(cases[6].problem.find("earlier line"), std::string::npos) << cases[6].problem;  // the second "good"
}

// The same option, value and message in both commands (one grammar, one set of messages).
TEST(Catalogue, IntegrateAndPiRejectTheSameValuesWithTheSameMessage) {
  for (const char* bad : {"--threads 0", "--threads 1.5", "--seed 0x10", "--seed -1", "--seed 1e20", "--threads-per-block 48",
                          "--threads-per-block ''", "--backend gpu"}) {
    const cli_run i = run_cli(std::string("integrate f4 ") + bad);
    const cli_run p = run_cli(std::string("pi --method mc --samples 1000 ") + bad);
    EXPECT_EQ(i.exit_code, 2) << bad;
    EXPECT_EQ(p.exit_code, 2) << bad;
    EXPECT_EQ(i.err, p.err) << bad;
    EXPECT_EQ(i.err.rfind("mcubes: error: --", 0), 0u) << i.err;
  }
}

// ---------------------------------------------------------------------------------------------
// Runtime failure, help, list.

// Without the CUDA backend in the build, or without a device: a runtime failure (exit 3) that says
// which, before anything is printed. With a device the run goes through and this test does not
// apply.
TEST(Cli, CudaBackendWithoutCudaIsARuntimeFailure) {
  const cli_run r = run_cli("integrate f4 --backend cuda --calls-per-iter 1e4 --max-iterations 2 --skip 0 --min-iterations 1");
  if (r.exit_code == 0 || r.exit_code == 1)
    GTEST_SKIP() << "a CUDA device ran the integration: the failure path is not reachable here";
  EXPECT_EQ(r.exit_code, 3);
  EXPECT_EQ(r.out, "");
  const std::vector<std::string> err = lines(r.err);
  ASSERT_EQ(err.size(), 1u) << r.err;
  EXPECT_EQ(err[0].rfind("mcubes: error: backend cuda requested, but ", 0), 0u) << err[0];
  EXPECT_TRUE(err[0].find("no CUDA backend in this build") != std::string::npos ||
              err[0].find("no CUDA device") != std::string::npos)
      << err[0];
  EXPECT_NE(err[0].find("(use --backend cpu or auto)"), std::string::npos) << err[0];
}

// Every integrand runs in every dimension of the suite registry (1..32 for f1..f6) on every backend
// of the build: the CPU here, and the GPU where a device is present (--backend auto). The exit
// status is 0 or 1 (converged or not), never a failure.
TEST(Cli, F4RunsInDimensions1And32OnEveryBackend) {
  for (const char* backend : {"cpu", "auto"})
    for (const char* dim : {"1", "32"}) {
      const std::string args = std::string("integrate f4 --dim ") + dim + " --backend " + backend +
                               " --calls-per-iter 1e5 --max-iterations 6 --skip 1 --min-iterations 2";
      const cli_run r = run_cli(args);
      EXPECT_TRUE(r.exit_code == 0 || r.exit_code == 1) << args << "\n" << r.err;
      EXPECT_NE(r.out.find(std::string("), d = ") + dim + ","), std::string::npos) << args << "\n" << r.out;
    }
}

TEST(Cli, HelpExitsZero) {
  for (const char* args : {"--help", "integrate --help", "list --help"}) {
    const cli_run r = run_cli(args);
    EXPECT_EQ(r.exit_code, 0) << args;
    EXPECT_NE(r.out.find("Usage"), std::string::npos) << args;
    EXPECT_EQ(r.err, "") << args;
  }
  const cli_run h = run_cli("integrate --help");
  for (const char* option : {"--dim", "--param", "--rel-tol", "--abs-tol", "--calls-per-iter", "--max-iterations",
                             "--adapt-iterations", "--skip", "--min-iterations", "--max-chi2-dof", "--bins", "--alpha",
                             "--symmetric-map", "--seed", "--threads", "--threads-per-block", "--backend", "--json",
                             "--max-memory", "--dry-run", "--no-progress", "--quiet"})
    EXPECT_NE(h.out.find(option), std::string::npos) << option;
}

// A bare `mcubes`: the usage (the commands) on stdout, one error line on stderr, exit 2.
TEST(Cli, BareCommandPrintsTheUsageAndExitsTwo) {
  const cli_run r = run_cli("");
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.out.find("Usage"), std::string::npos) << r.out;
  for (const char* command : {"integrate", "list", "pi", "scan"}) EXPECT_NE(r.out.find(command), std::string::npos) << command;
  EXPECT_EQ(r.err, "mcubes: error: a command is required: integrate, list, pi, plot, sample or scan ('mcubes COMMAND --help' for its "
                   "options)\n");
}

// --help names what each option takes (INT, FLOAT, ...), never CLI11's TEXT.
TEST(Cli, HelpShowsWhatEachOptionTakes) {
  const cli_run i = run_cli("integrate --help");
  for (const char* shown : {"--dim INT", "--rel-tol FLOAT", "--abs-tol FLOAT", "--max-iterations INT", "--skip INT",
                            "--max-chi2-dof FLOAT", "--alpha FLOAT|auto", "--beta FLOAT", "--threads INT",
                            "--threads-per-block INT", "--backend cpu|cuda|auto", "--max-memory BYTES", "--seed UINT"})
    EXPECT_NE(i.out.find(shown), std::string::npos) << shown;
  const cli_run s = run_cli("scan --help");
  EXPECT_NE(s.out.find("--bins N|auto"), std::string::npos) << s.out;
  const cli_run p = run_cli("pi --help");
  EXPECT_NE(p.out.find("--samples N"), std::string::npos) << p.out;
  for (const cli_run* r : {&i, &s, &p}) {
    EXPECT_EQ(r->exit_code, 0);
    EXPECT_EQ(r->out.find(" TEXT "), std::string::npos) << r->out;
    EXPECT_EQ(r->out.find(" TEXT="), std::string::npos) << r->out;
  }
}

// --quiet: one line, the value(error) form of the report and the status; the same run's JSON
// has that text as result_text.
TEST(Cli, QuietPrintsTheValueWithItsErrorAndTheStatus) {
  const std::string run = "integrate f3 --dim 3 --calls-per-iter 1e5 --seed 9 --backend cpu";
  const cli_run q = run_cli(run + " --quiet");
  const cli_run j = run_cli(run + " --json -");
  ASSERT_TRUE(q.exit_code == 0 || q.exit_code == 1) << q.err;
  EXPECT_EQ(j.exit_code, q.exit_code) << j.err;
  const json doc = json::parse(j.out);
  ASSERT_TRUE(doc.at("warnings").empty()) << j.out;
  const std::string status = " (" + doc.at("status").get<std::string>() + ")\n";
  EXPECT_EQ(q.out, "result: " + doc.at("result_text").get<std::string>() + status);
  EXPECT_LT(q.out.find('('), q.out.find(status)) << q.out;  // value(error): a parenthesis before the status
  EXPECT_EQ(q.err, "");
}

// Every field of the options table (options.hpp, for_each_vegas_option) is a flag of `integrate`
// and of `scan` (its option_info::flag) that sets that field: a value given on the command line is
// the one the JSON record's "options" (generated from the table) reports. A new entry of the
// table fails here until its flag is registered (cli/integrate_args.cpp) and a value listed below.
TEST(Cli, EveryOptionOfTheTableIsAFlagOfIntegrateAndScanThatSetsIt) {
  struct given {
    const char* text;  // after the flag; empty: a flag without a value
    json expected;     // options[name] in the record
  };
  const std::map<std::string, given> values = {
      {"rel_tol", {"0.25", 0.25}},          {"abs_tol", {"1e-9", 1e-9}},
      {"calls_per_iteration", {"3000", 3000}}, {"max_iterations", {"11", 11}},
      {"adapt_iterations", {"3", 3}},       {"skip", {"1", 1}},
      {"min_iterations", {"2", 2}},         {"max_chi2_dof", {"7.5", 7.5}},
      {"n_bins", {"64", 64}},               {"alpha", {"0.5", 0.5}},
      {"symmetric_map", {"", true}},        {"stratification", {"uniform", "uniform"}},
      {"beta", {"0.5", 0.5}},               {"seed", {"12345", 12345}}};
  int entries = 0;
  mcubes::for_each_vegas_option([&](const mcubes::option_info& info, auto) {
    ++entries;
    const std::string name = info.name, flag = info.flag;
    SCOPED_TRACE(name + " (" + flag + ")");
    const auto v = values.find(name);
    ASSERT_NE(v, values.end()) << "no command-line value for the table's option " << name << " in this test";
    // a small run; the option under test replaces the base's value of the same flag
    std::string base = "f4 --dim 2 --backend cpu --threads 1";
    if (name != "calls_per_iteration") base += " --calls-per-iter 2000";
    if (name != "max_iterations") base += " --max-iterations 12";
    const std::string arg = " " + flag + (*v->second.text != '\0' ? std::string(" ") + v->second.text : std::string());
    for (const std::string& command : {"integrate " + base, "scan " + base + " --param a=5:6:2"}) {
      const cli_run r = run_cli(command + arg + " --json -");
      ASSERT_TRUE(r.exit_code == 0 || r.exit_code == 1) << command << arg << ": " << r.err;
      const json doc = json::parse(r.out);
      EXPECT_EQ(doc.at("options").at(name), v->second.expected) << command << arg;
    }
  });
  EXPECT_EQ(entries, mcubes::vegas_option_count);
  EXPECT_EQ(values.size(), static_cast<std::size_t>(mcubes::vegas_option_count)) << "a value for an option the table lacks";
}

// `mcubes --completion bash`: a script whose _mcubes completes the commands, each command's
// options, the suite's integrands and the values of --backend (run in bash, as the shell would).
TEST(Cli, BashCompletionCompletesCommandsOptionsIntegrandsAndValues) {
  const auto complete = [](const std::string& words, int cword) {
    const std::string script = std::string("source <('") + MCUBES_CLI_PATH + "' --completion bash) && COMP_WORDS=(" +
                               words + ") && COMP_CWORD=" + std::to_string(cword) + " && _mcubes && echo \"${COMPREPLY[*]}\"";
    return mcubes_test::run_captured("bash -c '" + std::regex_replace(script, std::regex("'"), "'\\''") + "'",
                                     "mcubes_completion");
  };
  const cli_run commands = complete("mcubes sc", 1);
  EXPECT_EQ(commands.exit_code, 0) << commands.err;
  EXPECT_EQ(commands.out, "scan\n");
  EXPECT_EQ(complete("mcubes integrate --rel", 2).out, "--rel-tol\n");
  EXPECT_EQ(complete("mcubes pi --sam", 2).out, "--samples\n");
  EXPECT_EQ(complete("mcubes integrate f", 2).out, "f1 f2 f3 f4 f5 f6 fA fB\n");
  EXPECT_EQ(complete("mcubes integrate f4 --backend c", 4).out, "cpu cuda\n");
  const cli_run bad = run_cli("--completion zsh");
  EXPECT_EQ(bad.exit_code, 2);
  EXPECT_EQ(bad.err, "mcubes: error: --completion takes one shell: bash\n");
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
  const cli_run r = run_cli("integrate f4 --calls-per-iter 200000 --seed 3 --backend cpu --json '" + path + "'");
  const std::string doc = read_file(path);
  std::remove(path.c_str());
  ASSERT_TRUE(r.exit_code == 0 || r.exit_code == 1) << r.err;
  EXPECT_EQ(r.err, "");
  const json j = json::parse(doc);

  for (const char* key : {"estimate", "error", "chi2_dof", "q", "dof", "status", "n_eval", "iterations", "n_iterations",
                          "seed", "backend", "options", "integrand", "exact", "true_rel_error", "seconds",
                          "evals_per_second", "version", "status_detail", "result_text", "evaluations_per_iteration",
                          "grid", "accumulated", "backend_description", "pull"})
    EXPECT_TRUE(j.contains(key)) << key;
  const std::string status = j.at("status").get<std::string>();
  EXPECT_EQ(r.exit_code, status == "converged" ? 0 : 1) << status;
  EXPECT_TRUE(status == "converged" || status == "not converged" || status == "not resolved" || status == "underflow" ||
              status == "interrupted")
      << status;
  EXPECT_FALSE(j.at("status_detail").get<std::string>().empty());

  // the plan: evaluations per iteration = sub-cubes x samples per sub-cube = g^8 x p, at most those asked
  const json& grid = j.at("grid");
  const std::uint64_t g = grid.at("g").get<std::uint64_t>();
  std::uint64_t g8 = 1;
  for (int k = 0; k < 8; ++k) g8 *= g;
  EXPECT_EQ(grid.at("sub_cubes").get<std::uint64_t>(), g8);
  const std::uint64_t per_iteration = j.at("evaluations_per_iteration").get<std::uint64_t>();
  const bool uniform = j.at("options").at("stratification") == "uniform";
  EXPECT_EQ(j.at("options").at("stratification"), "adaptive");  // the default
  // VEGAS+: per_iteration is the calls (at most), m n_min of them spread uniformly
  if (uniform)
    EXPECT_EQ(per_iteration, g8 * grid.at("samples_per_cube").get<std::uint64_t>());
  else
    EXPECT_LE(g8 * grid.at("min_samples_per_cube").get<std::uint64_t>(), per_iteration);
  EXPECT_LE(per_iteration, 200000u);
  EXPECT_GE(per_iteration, 2u);

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
    if (uniform)
      EXPECT_EQ(it.at("n_eval").get<std::uint64_t>(), per_iteration);
    else  // the counts within the calls; the floors and caps leave at most a few per cent unused
      EXPECT_TRUE(it.at("n_eval").get<std::uint64_t>() <= per_iteration &&
                  it.at("n_eval").get<std::uint64_t>() >= per_iteration - per_iteration / 10)
          << it.at("n_eval");
  }
  EXPECT_EQ(n_eval, j.at("n_eval").get<std::uint64_t>());

  // every option, with the values given and the paper's defaults for the others
  const json& o = j.at("options");
  for (const char* key : {"rel_tol", "abs_tol", "calls_per_iteration", "max_iterations", "adapt_iterations", "skip",
                          "min_iterations", "max_chi2_dof", "n_bins", "alpha", "map_floor", "symmetric_map", "seed", "threads",
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
  EXPECT_EQ(o.at("map_floor").get<double>(), o.at("stratification").get<std::string>() == "adaptive" ? mcubes::vegas_plus_map_floor : 0.0);
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
  const result_line result = parse_result_line(r.out);
  EXPECT_TRUE(same_bits(result.estimate, estimate)) << r.out;  // %.17g inside the parentheses
  const double error = j.at("error").get<double>();
  EXPECT_NEAR(result.error, error, 1e-5 * error) << r.out;      // %.6g
  EXPECT_EQ(result.short_form, j.at("result_text").get<std::string>()) << r.out;
  const std::string raw_error = raw_json_number(doc, "error");
  EXPECT_TRUE(same_bits(std::strtod(raw_error.c_str(), nullptr), j.at("error").get<double>())) << raw_error;
  EXPECT_EQ(nlohmann::ordered_json::parse(doc).dump(2) + "\n", doc);  // dump(parse(doc)) == doc: nothing rounded

  // the text report: table, result, status and iterations lines
  EXPECT_NE(r.out.find("weighted est."), std::string::npos);
  const std::string status_line = line_starting(r.out, "status: ");
  EXPECT_EQ(status_line.rfind("status: " + status + ": ", 0), 0u) << r.out;
  EXPECT_GT(status_line.size(), ("status: " + status + ": ").size()) << r.out;  // the sentence
  const std::string iterations_line = "iterations: " + std::to_string(j.at("n_iterations").get<int>()) + " (" +
                                      std::to_string(j.at("accumulated").get<int>()) + " accumulated, ";
  EXPECT_NE(line_starting(r.out, iterations_line), "") << r.out;
  EXPECT_NE(r.out.find("exact: "), std::string::npos);
  EXPECT_NE(r.out.find("seed: 3"), std::string::npos);

  // seeded, so this can fail: the estimate within 5 reported sigma of the exact value
  if (status == "converged") {
    EXPECT_LT(std::fabs(estimate - exact), 5 * error) << r.out;
  }
}

TEST(Cli, ResultIsBitwiseIdenticalForOneAndTwoThreads) {
  json runs[3];
  const char* threads[] = {"--threads 1", "--threads 2", ""};
  for (int k = 0; k < 3; ++k) {
    const cli_run r =
        run_cli(std::string("integrate f4 --calls-per-iter 200000 --seed 3 --backend cpu -q --json - ") + threads[k]);
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

// --devices (a CUDA device needed; two or three streams of device 0 stand for several devices):
// integrate and scan give the record of one device bit for bit, the report names the devices and
// the exchange time, and a checkpoint written on two devices resumes on one (and the reverse) to
// the bits of the run never stopped.
TEST(Cli, DevicesGiveTheBitsOfOneDevice) {
  const std::string run = "integrate f4 --dim 5 --calls-per-iter 1e6 --seed 5 --rel-tol 1e-12 --skip 0 --min-iterations 1 --max-iterations 8 "
                          "--backend cuda";
  const cli_run one = run_cli(run + " -q --json -");
  if (one.exit_code == 3) GTEST_SKIP() << "no CUDA device: " << one.err;
  ASSERT_EQ(one.exit_code, 1) << one.err;
  const json a = json::parse(one.out);
  const auto expect_same = [&](const json& b) {
    EXPECT_TRUE(same_bits(b.at("estimate").get<double>(), a.at("estimate").get<double>()));
    EXPECT_TRUE(same_bits(b.at("error").get<double>(), a.at("error").get<double>()));
    ASSERT_EQ(b.at("iterations").size(), a.at("iterations").size());
    for (std::size_t i = 0; i < a.at("iterations").size(); ++i)
      EXPECT_TRUE(same_bits(b.at("iterations")[i].at("estimate").get<double>(),
                            a.at("iterations")[i].at("estimate").get<double>()))
          << "iteration " << i;
  };
  for (const char* devices : {"0,0", "0,0,0"}) {
    SCOPED_TRACE(devices);
    const cli_run many = run_cli(run + " -q --json - --devices " + devices);
    ASSERT_EQ(many.exit_code, 1) << many.err;
    const json b = json::parse(many.out);
    expect_same(b);
    EXPECT_EQ(b.at("exchange").at("team"), std::string(devices).size() == 3 ? "2 devices" : "3 devices");
    EXPECT_GT(b.at("exchange").at("exchanges").get<std::uint64_t>(), 0u);
  }
  const cli_run text = run_cli(run + " --devices 0,0");
  EXPECT_NE(text.out.find("on devices 0,0"), std::string::npos) << text.out;
  EXPECT_NE(text.out.find("exchange: 2 devices, "), std::string::npos) << text.out;

  // checkpoints across device counts: 4 iterations on two devices, then to 8 on one; and the reverse
  const std::string ck = "devices_test.ckpt";
  for (const auto& [first, second] : {std::pair<std::string, std::string>{" --devices 0,0", ""},
                                      std::pair<std::string, std::string>{"", " --devices 0,0"}}) {
    SCOPED_TRACE(first + " then" + second);
    std::remove(ck.c_str());
    std::string head = run;
    head.replace(head.find("--max-iterations 8"), 18, "--max-iterations 4");
    const cli_run part = run_cli(head + " -q --checkpoint " + ck + first);
    ASSERT_EQ(part.exit_code, 1) << part.err;
    const cli_run rest = run_cli(run + " -q --json - --force --resume " + ck + second);
    ASSERT_EQ(rest.exit_code, 1) << rest.err;
    expect_same(json::parse(rest.out));
  }
  std::remove(ck.c_str());

  // an integrand compiled at run time (its object splits the run over the devices)
  const std::string expr = "integrate --expr 'exp(-50*((x[0]-0.3)*(x[0]-0.3)+(x[1]-0.6)*(x[1]-0.6)))' --dim 2 "
                           "--calls-per-iter 1e5 --rel-tol 1e-12 --skip 0 --min-iterations 1 --max-iterations 5 "
                           "--backend cuda -q --json -";
  const cli_run e1 = run_cli(expr);
  ASSERT_EQ(e1.exit_code, 1) << e1.err;
  const cli_run e2 = run_cli(expr + " --devices 0,0");
  ASSERT_EQ(e2.exit_code, 1) << e2.err;
  const json j1 = json::parse(e1.out), j2 = json::parse(e2.out);
  EXPECT_TRUE(same_bits(j2.at("estimate").get<double>(), j1.at("estimate").get<double>()));
  EXPECT_TRUE(same_bits(j2.at("error").get<double>(), j1.at("error").get<double>()));

  // a scan: its integrals split over the devices
  const std::string scan = "scan f4 --dim 3 --param a=10:40:7 --calls-per-iter 20000 --seed 9 --backend cuda --json -";
  const cli_run s1 = run_cli(scan);
  ASSERT_TRUE(s1.exit_code == 0 || s1.exit_code == 1) << s1.err;
  const cli_run s3 = run_cli(scan + " --devices 0,0,0");
  ASSERT_EQ(s3.exit_code, s1.exit_code) << s3.err;
  const json r1 = json::parse(s1.out).at("results"), r3 = json::parse(s3.out).at("results");
  ASSERT_EQ(r1.size(), 7u);
  ASSERT_EQ(r3.size(), r1.size());
  for (std::size_t k = 0; k < r1.size(); ++k) {
    EXPECT_TRUE(same_bits(r3[k].at("estimate").get<double>(), r1[k].at("estimate").get<double>())) << k;
    EXPECT_TRUE(same_bits(r3[k].at("error").get<double>(), r1[k].at("error").get<double>())) << k;
    EXPECT_EQ(r3[k].at("n_iterations"), r1[k].at("n_iterations")) << k;
  }
}

// Checkpoints across device counts of what the test above leaves out (a CUDA device needed; streams
// of device 0 stand for several devices): a scan (its integrals split over the devices; every
// integral's progress as its device last handed it) written on three devices resumes on one and
// the reverse, and a run compiled at run time (its first device's program saver decides, the
// others follow) written on two devices resumes on one and the reverse: each to the bits of the
// call never stopped, continued (the checkpoint's iterations kept, their timings too), not run again.
TEST(Cli, ScansAndCompiledRunsResumeAcrossDeviceCounts) {
  const std::string scan = "scan f4 --dim 3 --param a=10:40:7 --calls-per-iter 20000 --seed 9 --backend cuda --rel-tol 1e-12 "
                           "--skip 0 --min-iterations 1 --json-iterations --json - -q";
  const cli_run whole = run_cli(scan + " --max-iterations 6");
  if (whole.exit_code == 3) GTEST_SKIP() << "no CUDA device: " << whole.err;
  ASSERT_EQ(whole.exit_code, 1) << whole.err;
  const json w = json::parse(whole.out).at("results");
  ASSERT_EQ(w.size(), 7u);
  const std::string ck = "devices_scan_test.ckpt";
  // (with --checkpoint-every 1000 the part writes its end alone: every integral's third iteration;
  // the last pair writes whenever the schedule says, after any device's round, so its file may
  // hold some integrals' earlier iterations: the bits are the same, the iterations since are redone)
  for (const auto& [first, second] : {std::pair<std::string, std::string>{" --devices 0,0,0 --checkpoint-every 1000", ""},
                                      std::pair<std::string, std::string>{" --checkpoint-every 1000", " --devices 0,0,0"},
                                      std::pair<std::string, std::string>{" --devices 0,0", " --devices 0,0,0"}}) {
    SCOPED_TRACE("scan:" + first + " then" + second);
    const bool end_alone = first.find("checkpoint-every") != std::string::npos;
    std::remove(ck.c_str());
    const cli_run part = run_cli(scan + " --max-iterations 3 --checkpoint " + ck + first);
    ASSERT_EQ(part.exit_code, 1) << part.err;
    const json p = json::parse(part.out).at("results");
    const cli_run rest = run_cli(scan + " --max-iterations 6 --force --resume " + ck + second);
    ASSERT_EQ(rest.exit_code, 1) << rest.err;
    const json r = json::parse(rest.out).at("results");
    ASSERT_EQ(r.size(), w.size());
    for (std::size_t k = 0; k < w.size(); ++k) {
      EXPECT_TRUE(same_bits(r[k].at("estimate").get<double>(), w[k].at("estimate").get<double>())) << k;
      EXPECT_TRUE(same_bits(r[k].at("error").get<double>(), w[k].at("error").get<double>())) << k;
      ASSERT_EQ(r[k].at("iterations").size(), 6u) << k;
      for (std::size_t i = 0; end_alone && i < 3; ++i)  // continued: the part's iterations, timings included
        EXPECT_EQ(r[k].at("iterations")[i].at("seconds"), p[k].at("iterations")[i].at("seconds")) << k << " " << i;
    }
  }
  std::remove(ck.c_str());

  const std::string expr = "integrate --expr 'exp(-50*((x[0]-0.3)*(x[0]-0.3)+(x[1]-0.6)*(x[1]-0.6)))' --dim 2 "
                           "--calls-per-iter 1e5 --rel-tol 1e-12 --skip 0 --min-iterations 1 --backend cuda -q --json -";
  const cli_run e = run_cli(expr + " --max-iterations 8");
  ASSERT_EQ(e.exit_code, 1) << e.err;
  const json a = json::parse(e.out);
  const std::string eck = "devices_expr_test.ckpt";
  for (const auto& [first, second] : {std::pair<std::string, std::string>{" --devices 0,0", ""},
                                      std::pair<std::string, std::string>{"", " --devices 0,0"},
                                      std::pair<std::string, std::string>{" --devices 0,0,0", " --devices 0,0"}}) {
    SCOPED_TRACE("expr:" + first + " then" + second);
    std::remove(eck.c_str());
    const cli_run part = run_cli(expr + " --max-iterations 4 --checkpoint-every 1000 --checkpoint " + eck + first);
    ASSERT_EQ(part.exit_code, 1) << part.err;
    const json p = json::parse(part.out);
    const cli_run rest = run_cli(expr + " --max-iterations 8 --force --resume " + eck + second);
    ASSERT_EQ(rest.exit_code, 1) << rest.err;
    const json b = json::parse(rest.out);
    EXPECT_TRUE(same_bits(b.at("estimate").get<double>(), a.at("estimate").get<double>()));
    EXPECT_TRUE(same_bits(b.at("error").get<double>(), a.at("error").get<double>()));
    ASSERT_EQ(b.at("iterations").size(), 8u);
    for (std::size_t i = 0; i < 4; ++i)
      EXPECT_EQ(b.at("iterations")[i].at("seconds"), p.at("iterations")[i].at("seconds")) << i;
  }
  std::remove(eck.c_str());

  // a scan compiled at run time: the compiled object's batch split over the devices
  const std::string escan = "scan --expr 'exp(-p[0]*((x[0]-0.4)*(x[0]-0.4)+(x[1]-0.5)*(x[1]-0.5)))' --dim 2 "
                            "--param p0=10:40:5 --calls-per-iter 20000 --seed 3 --backend cuda --rel-tol 1e-12 --skip 0 "
                            "--min-iterations 1 --json-iterations --json - -q";
  const cli_run ew = run_cli(escan + " --max-iterations 6");
  ASSERT_EQ(ew.exit_code, 1) << ew.err;
  const json ewr = json::parse(ew.out).at("results");
  const cli_run epart = run_cli(escan + " --max-iterations 3 --checkpoint-every 1000 --checkpoint " + eck + " --devices 0,0,0");
  ASSERT_EQ(epart.exit_code, 1) << epart.err;
  const cli_run erest = run_cli(escan + " --max-iterations 6 --force --resume " + eck + " --devices 0,0");
  ASSERT_EQ(erest.exit_code, 1) << erest.err;
  const json err = json::parse(erest.out).at("results"), epr = json::parse(epart.out).at("results");
  ASSERT_EQ(err.size(), ewr.size());
  for (std::size_t k = 0; k < ewr.size(); ++k) {
    EXPECT_TRUE(same_bits(err[k].at("estimate").get<double>(), ewr[k].at("estimate").get<double>())) << k;
    EXPECT_TRUE(same_bits(err[k].at("error").get<double>(), ewr[k].at("error").get<double>())) << k;
    for (std::size_t i = 0; i < 3; ++i)
      EXPECT_EQ(err[k].at("iterations")[i].at("seconds"), epr[k].at("iterations")[i].at("seconds")) << k << " " << i;
  }
  std::remove(eck.c_str());
}

TEST(Cli, NotConvergedExitsOneAndStillPrintsTheResult) {
  const cli_run r = run_cli(
      "integrate f4 --calls-per-iter 1000 --max-iterations 2 --skip 0 --min-iterations 1 --rel-tol 1e-12 --seed 5 --quiet");
  EXPECT_EQ(r.exit_code, 1) << r.err;
  const std::vector<std::string> out = lines(r.out);
  ASSERT_EQ(out.size(), 1u) << r.out;  // --quiet: the result line only
  EXPECT_EQ(out[0].rfind("result: ", 0), 0u);
  EXPECT_NE(out[0].find("(not converged)"), std::string::npos) << out[0];
}

TEST(Cli, NotResolvedWritesNullErrorAndExitsOne) {
  // fB's peak (sigma 0.01 in (-1,1)^9) is never hit by 2 samples: every value underflows to 0.
  const cli_run r = run_cli("integrate fB --calls-per-iter 2 --max-iterations 1 --adapt-iterations 0 --skip 0 "
                            "--min-iterations 1 --backend cpu --json -");
  EXPECT_EQ(r.exit_code, 1) << r.err;
  EXPECT_EQ(r.err, "");
  const json j = json::parse(r.out);  // stdout carries only the JSON: it parses as a whole
  EXPECT_EQ(j.at("status").get<std::string>(), "not resolved");
  EXPECT_NE(j.at("status_detail").get<std::string>().find("no sample was non-zero"), std::string::npos);
  EXPECT_TRUE(j.at("error").is_null());  // infinite error -> null
  EXPECT_TRUE(j.at("pull").is_null());
  EXPECT_EQ(j.at("estimate").get<double>(), 0.0);
}

TEST(Cli, UnderflowIsItsOwnStatusAndExitsOne) {
  // f4 (d = 8) with 5 samples: non-zero values far below 2^-460, so no estimate carries weight.
  const char* args = "integrate f4 --calls-per-iter 5 --max-iterations 1 --adapt-iterations 0 --skip 0 "
                     "--min-iterations 1 --backend cpu";
  const cli_run r = run_cli(std::string(args) + " --json -");
  EXPECT_EQ(r.exit_code, 1) << r.err;
  const json j = json::parse(r.out);
  EXPECT_EQ(j.at("status").get<std::string>(), "underflow");
  EXPECT_NE(j.at("status_detail").get<std::string>().find("2^-460"), std::string::npos);
  EXPECT_TRUE(j.at("error").is_null());
  ASSERT_EQ(j.at("iterations").size(), 1u);
  EXPECT_TRUE(j.at("iterations")[0].at("underflow").get<bool>());
  const cli_run t = run_cli(args);
  EXPECT_EQ(t.exit_code, 1) << t.err;
  EXPECT_EQ(line_starting(t.out, "status: underflow: ").empty(), false) << t.out;
  EXPECT_EQ(line_starting(t.out, "iterations: 1 (0 accumulated, ").empty(), false) << t.out;
}

// The text report: the header, the backend line, the table header, one row per iteration (printed
// as each completes), the legend, then the result, status and iterations lines. The rows agree
// with the JSON record of the same seeded run.
TEST(Cli, TextReportHasOneRowPerIterationThenTheResult) {
  const std::string path = temp_path(".json");
  const cli_run r = run_cli("integrate f3 --calls-per-iter 20000 --seed 1 --backend cpu --threads 2 --json '" + path + "'");
  const std::string doc = read_file(path);
  std::remove(path.c_str());
  ASSERT_EQ(r.exit_code, 0) << r.err;  // f3 in d = 3 converges within 100 iterations
  EXPECT_EQ(r.err, "");
  const json j = json::parse(doc);
  const std::vector<std::string> out = lines(r.out);
  ASSERT_GE(out.size(), 4u) << r.out;
  EXPECT_EQ(out[0].rfind("integrand f3 (", 0), 0u) << out[0];
  EXPECT_EQ(out[1].rfind("evaluations/iteration " + std::to_string(j.at("evaluations_per_iteration").get<std::uint64_t>()), 0),
            0u)
      << out[1];
  EXPECT_EQ(out[2], "backend: cpu, 2 threads");
  EXPECT_EQ(out[3].rfind("iter flags", 0), 0u) << out[3];
  const std::size_t n = j.at("iterations").size();
  ASSERT_GE(n, 1u);
  ASSERT_GE(out.size(), 4 + n + 4) << r.out;
  for (std::size_t i = 0; i < n; ++i) {
    const json& it = j.at("iterations")[i];
    std::istringstream row(out[4 + i]);
    int index = -1;
    std::string flags;
    double estimate = 0, error = 0;
    row >> index >> flags >> estimate >> error;
    EXPECT_EQ(index, it.at("index").get<int>()) << out[4 + i];
    EXPECT_EQ(flags.size(), 5u) << out[4 + i];
    EXPECT_EQ(flags[1] == '*', it.at("accumulated").get<bool>()) << out[4 + i];
    const double e = it.at("estimate").get<double>();
    EXPECT_NEAR(estimate, e, 1e-9 * std::fabs(e)) << out[4 + i];  // %.10g
    EXPECT_NEAR(error, it.at("error").get<double>(), 1e-3 * it.at("error").get<double>()) << out[4 + i];  // %.4g
  }
  EXPECT_EQ(out[4 + n].rfind("flags: ", 0), 0u) << out[4 + n];
  EXPECT_EQ(out[5 + n].rfind("result: " + j.at("result_text").get<std::string>() + "  (", 0), 0u) << out[5 + n];
  EXPECT_EQ(out[6 + n], "status: converged: " + j.at("status_detail").get<std::string>());
  EXPECT_EQ(out[7 + n].rfind("iterations: " + std::to_string(n) + " (", 0), 0u) << out[7 + n];
  const result_line result = parse_result_line(r.out);
  EXPECT_TRUE(same_bits(result.estimate, j.at("estimate").get<double>())) << out[5 + n];
  // seeded, so this can fail: within 5 reported sigma of the exact value
  EXPECT_LT(std::fabs(result.estimate - j.at("exact").get<double>()), 5 * j.at("error").get<double>()) << r.out;
}

// Integers are decimal: a leading zero never means octal ("010" is ten).
TEST(Cli, LeadingZerosAreDecimal) {
  const cli_run r = run_cli("integrate f1 --dim 02 --bins 010 --calls-per-iter 01000 --max-iterations 010 --skip 00 "
                            "--min-iterations 01 --adapt-iterations 08 --seed 010 --threads 01 --backend cpu --json -");
  ASSERT_TRUE(r.exit_code == 0 || r.exit_code == 1) << r.err;
  const json j = json::parse(r.out);
  const json& o = j.at("options");
  EXPECT_EQ(j.at("integrand").at("dim").get<int>(), 2);
  EXPECT_EQ(o.at("n_bins").get<int>(), 10);
  EXPECT_EQ(o.at("calls_per_iteration").get<std::uint64_t>(), 1000u);
  EXPECT_EQ(o.at("max_iterations").get<int>(), 10);
  EXPECT_EQ(o.at("skip").get<int>(), 0);
  EXPECT_EQ(o.at("min_iterations").get<int>(), 1);
  EXPECT_EQ(o.at("adapt_iterations").get<int>(), 8);
  EXPECT_EQ(j.at("seed").get<std::uint64_t>(), 10u);
  EXPECT_EQ(j.at("threads").get<int>(), 1);
}

// The default backend is auto: the CPU when the build has no CUDA backend or no device is present,
// saying why; the GPU (saying so) when one is present.
TEST(Cli, DefaultBackendIsAutoAndSaysWhichBackendRan) {
  for (const char* backend : {"", " --backend auto"}) {
    const std::string args = std::string("integrate f3 --calls-per-iter 20000 --threads 1 --seed 2") + backend;
    const cli_run r = run_cli(args + " --json -");
    ASSERT_TRUE(r.exit_code == 0 || r.exit_code == 1) << args << "\n" << r.err;
    const json j = json::parse(r.out);
    EXPECT_EQ(j.at("options").at("backend").get<std::string>(), "auto") << args;
    const std::string ran = j.at("backend").get<std::string>();
    const std::string description = j.at("backend_description").get<std::string>();
    if (ran == "cpu") {
      EXPECT_EQ(description.rfind("cpu (auto: no CUDA", 0), 0u) << description;
    } else {
      EXPECT_TRUE(ran == "cuda" && description.find("(auto: device found)") != std::string::npos) << description;
    }

    const cli_run t = run_cli(args);
    ASSERT_TRUE(t.exit_code == 0 || t.exit_code == 1) << t.err;
    EXPECT_NE(t.out.find("\nbackend: " + description + ", "), std::string::npos) << t.out;
    EXPECT_EQ(t.out.find("backend: "), t.out.rfind("backend: ")) << "one backend line:\n" << t.out;
    const cli_run q = run_cli(args + " --quiet");  // the result line only; nothing on stderr
    EXPECT_EQ(lines(q.out).size(), 1u) << q.out;
    EXPECT_EQ(q.out.rfind("result: ", 0), 0u) << q.out;
    EXPECT_EQ(q.err, "");
  }
}

// --param: the run integrates the integrand at the given parameters (the others at the paper's), the
// exact value and the true relative error are those at the parameters, the header and the JSON
// record them, and the seed does not depend on them.
TEST(Cli, ParametersSetTheIntegrandTheExactValueAndTheRecord) {
  const std::string common = "integrate f4 --dim 3 --calls-per-iter 20000 --seed 5 --backend cpu";
  const cli_run r = run_cli(common + " --param a=8 --param u=0.7 --json -");
  ASSERT_TRUE(r.exit_code == 0 || r.exit_code == 1) << r.err;
  const json j = json::parse(r.out);
  ASSERT_TRUE(j.contains("params"));
  EXPECT_EQ(j.at("params"), json::parse(R"({"a": 8, "u": 0.7})"));
  const double exact = j.at("exact").get<double>(), estimate = j.at("estimate").get<double>();
  EXPECT_TRUE(same_bits(exact, mcubes::suite::exact_f4(3, {8, 0.7})));
  EXPECT_FALSE(same_bits(exact, mcubes::suite::exact_f4(3)));
  EXPECT_TRUE(same_bits(j.at("true_rel_error").get<double>(), std::fabs(estimate - exact) / std::fabs(exact)));
  EXPECT_EQ(j.at("seed").get<std::uint64_t>(), 5u);
  EXPECT_EQ(j.at("integrand").at("description").get<std::string>(), mcubes::suite::find("f4")->formula);
  // seeded, so this can fail: within 5 reported sigma of the exact value at the parameters
  if (j.at("status") == "converged") {
    EXPECT_LT(std::fabs(estimate - exact), 5 * j.at("error").get<double>()) << r.out;
  }

  // one parameter given: the other keeps the paper's value; the text report names both
  const cli_run t = run_cli(common + " --param u=0.7");
  ASSERT_TRUE(t.exit_code == 0 || t.exit_code == 1) << t.err;
  EXPECT_NE(lines(t.out).at(0).find(", parameters a = 25, u = 0.7"), std::string::npos) << t.out;
  char exact_line[96];
  std::snprintf(exact_line, sizeof exact_line, "exact: %.17g, ", mcubes::suite::exact_f4(3, {25, 0.7}));
  EXPECT_NE(t.out.find(exact_line), std::string::npos) << t.out;

  // the paper's values given explicitly: bitwise the run without --param, the same record
  const cli_run d = run_cli(common + " --json -");
  const cli_run e = run_cli(common + " --param u=0.5 --param a=25 --json -");
  ASSERT_TRUE(d.exit_code == 0 || d.exit_code == 1) << d.err;
  ASSERT_TRUE(e.exit_code == 0 || e.exit_code == 1) << e.err;
  const json jd = json::parse(d.out), je = json::parse(e.out);
  EXPECT_TRUE(same_bits(jd.at("estimate").get<double>(), je.at("estimate").get<double>()));
  EXPECT_TRUE(same_bits(jd.at("error").get<double>(), je.at("error").get<double>()));
  EXPECT_EQ(jd.at("params"), je.at("params"));
  EXPECT_EQ(jd.at("params"), json::parse(R"({"a": 25, "u": 0.5})"));
  EXPECT_EQ(jd.at("integrand").at("description").get<std::string>(), mcubes::suite::find("f4")->description);
  // and other parameters change the estimate (the parameters reach the integrand)
  EXPECT_FALSE(same_bits(jd.at("estimate").get<double>(), j.at("estimate").get<double>()));

  // fA has none: an empty object
  const cli_run a = run_cli("integrate fA --calls-per-iter 1e4 --max-iterations 1 --min-iterations 1 --json -");
  ASSERT_TRUE(a.exit_code == 0 || a.exit_code == 1) << a.err;
  EXPECT_EQ(json::parse(a.out).at("params"), json::object());
}

// `mcubes list` gives each integrand's parameters with the paper's values, and their meaning.
TEST(Cli, ListShowsTheParametersAndTheirDefaults) {
  const cli_run r = run_cli("list");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  for (const mcubes::suite::entry& e : mcubes::suite::entries()) {
    const std::string row = line_starting(r.out, e.name + " ");
    ASSERT_NE(row, "") << e.name;
    if (e.parameters.empty()) continue;
    EXPECT_NE(row.find(mcubes::suite::params_text(e, e.default_values())), std::string::npos) << row;
    const std::string legend = line_starting(r.out, "  " + e.name + "  " + e.formula + ": ");
    EXPECT_NE(legend, "") << r.out;
    for (const mcubes::suite::parameter& p : e.parameters)
      EXPECT_NE(legend.find(std::string(p.name) + ": " + p.role), std::string::npos) << legend;
  }
  EXPECT_NE(line_starting(r.out, "f2 ").find("a = 50, u = 0.5"), std::string::npos);
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

// --json to what is not a regular file. Run as root (as in a container) the command could replace
// any file it names, so each check is on what the path is afterwards: /dev/null and a FIFO stay
// what they are and get the final record only (written straight through); a link stays a link
// and its final target gets the record; a dangling link creates its target; /dev/stdout carries
// the record after the text.
mode_t lstat_type(const std::string& path) {
  struct stat st;
  EXPECT_EQ(::lstat(path.c_str(), &st), 0) << path;
  return st.st_mode & S_IFMT;
}

const std::string short_run =
    "integrate f4 --dim 2 --calls-per-iter 1e4 --max-iterations 4 --skip 0 --min-iterations 1 --rel-tol 1e-12 --seed 3 "
    "--backend cpu";

/// A fresh folder in the test temporary folder.
std::string fresh_folder() {
  std::string pattern = ::testing::TempDir() + "mcubes_cli_XXXXXX";
  EXPECT_NE(::mkdtemp(pattern.data()), nullptr);
  return pattern;
}

TEST(Cli, JsonToDevNullLeavesItACharacterDevice) {
  const cli_run r = run_cli(short_run + " --quiet --json /dev/null");
  EXPECT_TRUE(r.exit_code == 0 || r.exit_code == 1) << r.err;
  EXPECT_EQ(r.err, "");
  EXPECT_EQ(lstat_type("/dev/null"), S_IFCHR);
}

TEST(Cli, JsonToAFifoSendsTheFinalRecordOnce) {
  const std::string dir = fresh_folder(), fifo = dir + "/pipe";
  ASSERT_EQ(::mkfifo(fifo.c_str(), 0600), 0);
  std::string got;
  std::thread reader([&] { got = read_file(fifo); });  // opens when the command opens it for the final record
  const cli_run r = run_cli(short_run + " --quiet --json '" + fifo + "'");
  const int release = ::open(fifo.c_str(), O_WRONLY | O_NONBLOCK);  // a reader still waiting (no record) gets EOF
  if (release >= 0) ::close(release);
  reader.join();
  EXPECT_TRUE(r.exit_code == 0 || r.exit_code == 1) << r.err;
  EXPECT_EQ(lstat_type(fifo), S_IFIFO);
  const json j = json::parse(got);  // one document, not one per iteration
  EXPECT_NE(j.at("status"), "running");
  EXPECT_EQ(j.at("n_iterations").get<int>(), static_cast<int>(j.at("iterations").size()));
  std::remove(fifo.c_str());
  ::rmdir(dir.c_str());
}

TEST(Cli, JsonThroughALinkReplacesItsTargetAndKeepsTheLink) {
  const std::string dir = fresh_folder();
  ASSERT_EQ(::mkdir((dir + "/records").c_str(), 0755), 0);
  { std::ofstream(dir + "/records/run.json") << "previous content"; }
  ASSERT_EQ(::symlink("records/run.json", (dir + "/latest.json").c_str()), 0);  // relative target
  const cli_run r = run_cli(short_run + " --quiet --json '" + dir + "/latest.json'");
  EXPECT_TRUE(r.exit_code == 0 || r.exit_code == 1) << r.err;
  EXPECT_EQ(lstat_type(dir + "/latest.json"), S_IFLNK);
  EXPECT_EQ(lstat_type(dir + "/records/run.json"), S_IFREG);
  const json j = json::parse(read_file(dir + "/records/run.json"));
  EXPECT_NE(j.at("status"), "running");
  // a dangling link in an existing folder: its target is created, the link stays
  ASSERT_EQ(::symlink("records/new.json", (dir + "/next.json").c_str()), 0);
  const cli_run n = run_cli(short_run + " --quiet --json '" + dir + "/next.json'");
  EXPECT_TRUE(n.exit_code == 0 || n.exit_code == 1) << n.err;
  EXPECT_EQ(lstat_type(dir + "/next.json"), S_IFLNK);
  EXPECT_EQ(json::parse(read_file(dir + "/records/new.json")).at("estimate"), j.at("estimate"));
  // nothing else was left in the folders (no temporary file)
  EXPECT_EQ(std::system(("test $(ls -A '" + dir + "' | wc -l) -eq 3").c_str()), 0);  // latest.json next.json records
  EXPECT_EQ(std::system(("test $(ls -A '" + dir + "/records' | wc -l) -eq 2").c_str()), 0);  // run.json new.json
  (void)std::system(("rm -rf '" + dir + "'").c_str());
}

TEST(Cli, JsonToDevStdoutFollowsTheText) {
  const cli_run r = run_cli(short_run + " --quiet --json /dev/stdout");
  ASSERT_TRUE(r.exit_code == 0 || r.exit_code == 1) << r.err;
  const std::size_t brace = r.out.find('{');
  ASSERT_NE(brace, std::string::npos) << r.out;
  EXPECT_EQ(r.out.rfind("result: ", 0), 0u) << r.out;  // the --quiet line first, then the record
  EXPECT_NE(json::parse(r.out.substr(brace)).at("status"), "running");
}

// A record that cannot be written during the run (here: a file size limit below the record's size,
// as a full disk) warns once and the run goes on to its end: every row and the result are printed;
// the final record's failure is then the runtime failure (exit 3), after the result.
TEST(Cli, FailingRecordWritesNeitherStopTheRunNorLoseItsResult) {
  const std::string dir = fresh_folder(), path = dir + "/run.json";
  // stdout and stderr go through a pipe (no size limit); SIGXFSZ ignored: a write past the limit fails with EFBIG
  const cli_run r = mcubes_test::run_captured(
      "sh -c \"trap '' XFSZ; prlimit --fsize=600 '" + std::string(MCUBES_CLI_PATH) + "' " + short_run +
          " --json '" + path + "' 2>&1; echo exit=\\$?\" | cat",
      "mcubes_cli");
  const std::vector<std::string> out = lines(r.out);
  static const std::regex row(R"(^\s*\d+ [a-][*-][r-][o-][u-] )");  // a row of the iteration table
  int rows = 0, warnings = 0;
  std::size_t result_at = out.size(), error_at = out.size();
  for (std::size_t i = 0; i < out.size(); ++i) {
    if (out[i].rfind("mcubes: warning: ", 0) == 0) ++warnings;
    if (out[i].rfind("result: ", 0) == 0) result_at = i;
    if (out[i].rfind("mcubes: error: ", 0) == 0) error_at = i;
    if (std::regex_search(out[i], row)) ++rows;
  }
  EXPECT_EQ(warnings, 1) << r.out;
  EXPECT_EQ(rows, 4) << r.out;  // --max-iterations 4: every row
  ASSERT_LT(result_at, out.size()) << r.out;
  ASSERT_LT(error_at, out.size()) << r.out;
  EXPECT_LT(result_at, error_at) << r.out;
  EXPECT_NE(out[error_at].find("cannot write '" + path + "'"), std::string::npos) << out[error_at];
  EXPECT_EQ(out.back(), "exit=3") << r.out;
  (void)std::system(("rm -rf '" + dir + "'").c_str());
}

// A failed run's record has no result: null estimate, error, chi2_dof and q (not 0 and 1).
TEST(Cli, AFailedRunsRecordHasNullEstimates) {
  const std::string path = temp_path(".json");
  const cli_run r = run_cli("integrate f6 --dim 1 --param a=72 --param u=1 --backend cpu --calls-per-iter 1e5 --json '" + path + "'");
  EXPECT_EQ(r.exit_code, 3) << r.err;
  const json j = json::parse(read_file(path));
  EXPECT_EQ(j.at("status"), "failed");
  for (const char* key : {"estimate", "error", "chi2_dof", "q", "result_text", "pull", "true_rel_error"})
    EXPECT_TRUE(j.at(key).is_null()) << key << ": " << j.at(key);
  EXPECT_EQ(j.at("iterations").size(), j.at("n_iterations").get<std::size_t>());
  std::remove(path.c_str());
}

// `mcubes sample`: the .npy file (format 1.0, shape (N, d + 1)), its weighted sum of f against the
// exact integral, the report's "sample", the same bytes for any thread count, other bytes for
// another --sample-seed.
struct npy_array {
  std::string header;
  std::vector<double> data;
};

npy_array read_npy(const std::string& bytes) {
  npy_array a;
  EXPECT_GE(bytes.size(), 10u);
  if (bytes.size() < 10) return a;
  EXPECT_EQ(bytes.substr(0, 8), std::string("\x93NUMPY\x01\x00", 8));
  const std::size_t len = static_cast<unsigned char>(bytes[8]) | (static_cast<std::size_t>(static_cast<unsigned char>(bytes[9])) << 8);
  EXPECT_EQ((10 + len) % 64, 0u);
  a.header = bytes.substr(10, len);
  const std::size_t n = (bytes.size() - 10 - len) / 8;
  EXPECT_EQ((bytes.size() - 10 - len) % 8, 0u);
  a.data.resize(n);
  std::memcpy(a.data.data(), bytes.data() + 10 + len, n * 8);  // '<f8' on a little-endian host
  return a;
}

TEST(Cli, SampleWritesWeightedPointsWhoseSumEstimatesTheIntegral) {
  const std::string npy = temp_path(".npy"), npy1 = temp_path(".npy"), npy2 = temp_path(".npy"), js = temp_path(".json");
  const std::string run = "sample f3 --dim 2 --calls-per-iter 1e4 --backend cpu --seed 4 --points 20000";
  const cli_run r = run_cli(run + " --threads 2 --npy '" + npy + "' --json '" + js + "'");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find("sample: 20000 weighted points (seed 4, "), std::string::npos) << r.out;
  const cli_run quiet = run_cli(run + " --threads 2 --npy '" + npy + "' -q");  // the result line alone
  ASSERT_EQ(quiet.exit_code, 0) << quiet.err;
  EXPECT_EQ(lines(quiet.out).size(), 1u) << quiet.out;
  EXPECT_EQ(quiet.out.rfind("result: ", 0), 0u) << quiet.out;
  const json j = json::parse(read_file(js));
  EXPECT_EQ(j.at("sample").at("points"), 20000);
  EXPECT_EQ(j.at("sample").at("seed"), 4);
  const double exact = j.at("exact").get<double>();
  const std::string bytes = read_file(npy);
  const npy_array a = read_npy(bytes);
  EXPECT_NE(a.header.find("'descr': '<f8', 'fortran_order': False, 'shape': (20000, 3), }"), std::string::npos) << a.header;
  ASSERT_EQ(a.data.size(), 60000u);
  double sum = 0, sum2 = 0;
  for (std::size_t i = 0; i < 20000; ++i) {
    const double x1 = a.data[3 * i], x2 = a.data[3 * i + 1], w = a.data[3 * i + 2];
    ASSERT_TRUE(x1 >= 0 && x1 <= 1 && x2 >= 0 && x2 <= 1 && w > 0) << i;
    const double f = std::pow(1 + x1 + 2 * x2, -3.0);  // f3 in d = 2 (suite.hpp)
    sum += w * f;
    sum2 += w * f * w * f;
  }
  const double sigma = std::sqrt(sum2 - sum * sum / 20000);  // the unstratified bound of the error
  EXPECT_LT(std::fabs(sum - exact), 5 * sigma) << sum << " +- " << sigma << " vs " << exact;
  EXPECT_LT(sigma, 0.01 * exact);
  EXPECT_EQ(run_cli(run + " --threads 1 --npy '" + npy1 + "'").exit_code, 0);
  EXPECT_EQ(read_file(npy1), bytes);  // the same bits for any thread count
  EXPECT_EQ(run_cli(run + " --sample-seed 5 --npy '" + npy2 + "'").exit_code, 0);
  EXPECT_NE(read_file(npy2), bytes);
  for (const std::string& p : {npy, npy1, npy2, js}) std::remove(p.c_str());
}

// `mcubes plot`: a record written with --json-map gives two non-empty PNG pictures (the convergence
// and the map's density per axis); a record without the map, the convergence alone.
TEST(Cli, PlotDrawsTheConvergenceAndTheMapOfARecord) {
  const std::string js = temp_path(".json"), prefix = temp_path("_plot");
  ASSERT_EQ(run_cli("integrate f3 --dim 2 --calls-per-iter 1e4 --backend cpu --quiet --json '" + js + "' --json-map").exit_code, 0);
  const json doc = json::parse(read_file(js));
  ASSERT_TRUE(doc.contains("map"));
  EXPECT_EQ(doc.at("map").at("edges").size(), 2u);
  EXPECT_EQ(doc.at("map").at("edges").at(0).size(), doc.at("map").at("n_bins").get<std::size_t>() + 1);
  EXPECT_EQ(doc.at("map").at("edges").at(1).front(), 0.0);
  EXPECT_EQ(doc.at("map").at("edges").at(1).back(), 1.0);
  const cli_run r = run_cli("plot '" + js + "' --prefix '" + prefix + "'");
  if (r.exit_code == 3 && r.err.find("matplotlib") != std::string::npos) GTEST_SKIP() << r.err;
  ASSERT_EQ(r.exit_code, 0) << r.err;
  for (const char* suffix : {"-convergence.png", "-map.png"}) {
    const std::string png = read_file(prefix + suffix);
    EXPECT_GT(png.size(), 10000u) << suffix;
    EXPECT_EQ(png.substr(0, 8), std::string("\x89PNG\r\n\x1a\n", 8)) << suffix;
    std::remove((prefix + suffix).c_str());
  }
  const std::string plain = temp_path(".json");
  ASSERT_EQ(run_cli("integrate f3 --dim 2 --calls-per-iter 1e4 --backend cpu --quiet --json '" + plain + "'").exit_code, 0);
  const cli_run p = run_cli("plot '" + plain + "' --prefix '" + prefix + "'");
  ASSERT_EQ(p.exit_code, 0) << p.err;
  EXPECT_NE(p.out.find("no map in the report"), std::string::npos) << p.out;
  EXPECT_GT(read_file(prefix + "-convergence.png").size(), 10000u);
  EXPECT_EQ(read_file(prefix + "-map.png"), "");
  std::ofstream(plain) << "{\"a\": 1}";
  const cli_run bad = run_cli("plot '" + plain + "'");
  EXPECT_EQ(bad.exit_code, 2);
  EXPECT_NE(bad.err.find("has no iterations"), std::string::npos) << bad.err;
  for (const std::string& f : {js, plain, prefix + "-convergence.png"}) std::remove(f.c_str());
}

}  // namespace

// `mcubes pi` (cli/pi_command.cpp): bad input is rejected before anything runs (mcubes::invalid_input,
// exit code 2), a missing CUDA backend is a runtime failure (exit 3), the default backend is auto,
// and good runs print the estimate. Tested in-process (this target compiles pi_command.cpp without
// the CUDA backend) and through the mcubes program (MCUBES_CLI_PATH). The messages of every bad
// input are in the catalogue tests/cli/bad_inputs.tsv (run by test_cli).
#include <gtest/gtest.h>

#include <sys/wait.h>

#include <array>
#include <cmath>
#include <cstdlib>
#include <cstdio>
#include <limits>
#include <sstream>
#include <string>

#include <CLI/CLI.hpp>

#include <mcubes/error.hpp>

#include "parse.hpp"
#include "pi_command.hpp"

namespace {

// The integer options read the count forms when the value is an exact integer, so that a refusal
// of "1e9" for a range that holds 10^9 never says it is out of range; values outside the range,
// fractions and other text are refused with the range.
TEST(ParseInt, TakesTheCountFormsOfAnExactIntegerInRange) {
  using mcubes::cli::parse_int;
  EXPECT_EQ(parse_int("1e9", "--max-iterations", 1, 1000000000), 1000000000);
  EXPECT_EQ(parse_int("2.5e1", "--dim", 1, 32), 25);
  EXPECT_EQ(parse_int("-1e2", "--x", -1000, 0), -100);
  EXPECT_EQ(parse_int("1E0", "--x", 1, 1), 1);
  EXPECT_EQ(parse_int("-9.223372036854775808e18", "--x", std::numeric_limits<long long>::min(), 0),
            std::numeric_limits<long long>::min());
  for (const char* bad : {"2e9", "1e10", "2.5", "1e-1", "1e", "e3", ".e1", "1e+", "-", "9.3e18"}) {
    try {
      parse_int(bad, "--max-iterations", 1, 1000000000);
      ADD_FAILURE() << bad << " was accepted";
    } catch (const mcubes::invalid_input& e) {
      EXPECT_EQ(std::string(e.what()),
                std::string("--max-iterations must be an integer in [1, 1000000000], got '") + bad + "'");
    }
  }
}

/// Parses `args` (after "mcubes") with only the pi subcommand registered and runs it.
int run_in_process(const std::string& args) {
  CLI::App app{"test", "mcubes"};
  app.require_subcommand(1);
  auto run = mcubes::cli::add_pi_command(app);
  app.parse(args, false);
  return run();
}

struct outcome {
  int exit_code = -1;
  std::string output;
};

/// Runs the mcubes program with `args`, capturing stdout and stderr.
outcome run_program(const std::string& args) {
  outcome o;
  const std::string cmd = std::string(MCUBES_CLI_PATH) + " " + args + " 2>&1";
  FILE* p = popen(cmd.c_str(), "r");
  if (!p) return o;
  std::array<char, 4096> buf;
  std::size_t n;
  while ((n = fread(buf.data(), 1, buf.size(), p)) > 0) o.output.append(buf.data(), n);
  const int status = pclose(p);
  o.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  return o;
}

TEST(PiCommand, BadSampleCountsAreInvalidInput) {
  for (const char* s : {"0", "1", "abc", "1e30", "2.5", "1e-3", "18446744073709551616", "5000000000000000000", "1.5e"}) {
    EXPECT_THROW(run_in_process(std::string("pi --method mc --samples '") + s + "' --backend cpu"), mcubes::invalid_input)
        << "--samples " << s;
  }
  EXPECT_THROW(run_in_process("pi --method midpoint --samples 0 --backend cpu"), mcubes::invalid_input);
  EXPECT_THROW(run_in_process("pi --method midpoint --samples 9007199254740993 --backend cpu"), mcubes::invalid_input);
}

TEST(PiCommand, BadOptionsAreInvalidInput) {
  EXPECT_THROW(run_in_process("pi --method mc --samples 1000 --threads-per-block 48"), mcubes::invalid_input);
  EXPECT_THROW(run_in_process("pi --method mc --samples 1000 --threads-per-block 2048"), mcubes::invalid_input);
  EXPECT_THROW(run_in_process("pi --method mc --samples 1000 --threads -1"), mcubes::invalid_input);
  EXPECT_THROW(run_in_process("pi --method mc --samples 1000 --seed -1"), mcubes::invalid_input);
  EXPECT_THROW(run_in_process("pi --method mc --samples 1000 --seed 0x10"), mcubes::invalid_input);
  EXPECT_THROW(run_in_process("pi --method mc --samples 1000 --threads 0"), mcubes::invalid_input);
  EXPECT_THROW(run_in_process("pi --method midpoint --samples 1000 --threads -3"), mcubes::invalid_input);
  EXPECT_THROW(run_in_process("pi --method foo --samples 1000"), CLI::ParseError);
  EXPECT_THROW(run_in_process("pi --method mc"), CLI::ParseError);
  EXPECT_THROW(run_in_process("pi --samples 1000"), CLI::ParseError);
  // --backend is read by the grammar shared with integrate (cli/parse.hpp): bad input, not a parse error
  EXPECT_THROW(run_in_process("pi --method mc --samples 1000 --backend gpu"), mcubes::invalid_input);
  EXPECT_THROW(run_in_process("pi --method mc --samples 1e19 --backend cpu"), mcubes::invalid_input);  // above 2^62
}

TEST(PiCommand, CudaWithoutTheCudaBackendIsARuntimeFailure) {
  // this target is built without MCUBES_HAS_CUDA_BACKEND
  try {
    run_in_process("pi --method mc --samples 1000 --backend cuda");
    FAIL() << "no exception";
  } catch (const mcubes::invalid_input&) {
    FAIL() << "not bad input: exit code 3 expected";
  } catch (const mcubes::error& e) {
    EXPECT_NE(std::string(e.what()).find("no CUDA backend"), std::string::npos) << e.what();
  }
  EXPECT_THROW(run_in_process("pi --method mc --samples 1000 --compare"), mcubes::error);
  EXPECT_EQ(run_in_process("pi --method mc --samples 1000 --backend auto"), 0);  // falls back to the CPU
  EXPECT_EQ(run_in_process("pi --method mc --samples 1000"), 0);                 // auto is the default
}

TEST(PiCommand, GoodRunsSucceed) {
  EXPECT_EQ(run_in_process("pi --method mc --samples 1e5 --backend cpu --seed 3 --threads 2"), 0);
  EXPECT_EQ(run_in_process("pi --method midpoint --samples 1000000 --backend cpu"), 0);
}

TEST(PiProgram, ExitCodesAndOutput) {
  for (const char* bad : {"--method mc --samples 0", "--method mc --samples -5", "--method mc --samples abc",
                          "--method mc --samples 1e30", "--method midpoint --samples 1e16", "--method pi --samples 10",
                          "--method mc", "--method mc --samples 100 --threads-per-block 100",
                          "--method mc --samples 100 --threads x"}) {
    const outcome o = run_program(std::string("pi ") + bad + " --backend cpu");
    EXPECT_EQ(o.exit_code, 2) << bad << "\n" << o.output;
    EXPECT_NE(o.output.find("error"), std::string::npos) << bad << "\n" << o.output;
  }
  const outcome mc = run_program("pi --method mc --samples 200000 --backend cpu --threads 2");
  EXPECT_EQ(mc.exit_code, 0) << mc.output;
  EXPECT_NE(mc.output.find("hits"), std::string::npos) << mc.output;
  const outcome mid = run_program("pi --method midpoint --samples 1e6 --backend cpu");
  EXPECT_EQ(mid.exit_code, 0) << mid.output;
  EXPECT_NE(mid.output.find("3.141592653589877"), std::string::npos) << mid.output;  // 16 significant digits
  const outcome aut = run_program("pi --method midpoint --samples 1000 --backend auto");
  EXPECT_EQ(aut.exit_code, 0) << aut.output;  // GPU if present, else the CPU with a note
}

/// The estimate and standard error of the row of `backend` ("cpu" or "cuda") in the output of
/// `mcubes pi --method mc`; false if there is no such row.
bool mc_row(const std::string& output, const std::string& backend, double& estimate, double& std_error) {
  std::istringstream lines(output);
  for (std::string line; std::getline(lines, line);) {
    std::istringstream row(line);
    std::string name;
    double error_vs_pi = 0;
    if (row >> name >> estimate >> error_vs_pi >> std_error && name == backend) return true;
  }
  return false;
}

// The default backend is auto, for pi as for integrate: the GPU where one is present, else the CPU
// with a note saying why.
TEST(PiProgram, DefaultBackendIsAuto) {
  const outcome o = run_program("pi --method mc --samples 100000 --seed 11");
  ASSERT_EQ(o.exit_code, 0) << o.output;
  double estimate = 0, std_error = 0;
  const bool on_cpu = mc_row(o.output, "cpu", estimate, std_error);
  const bool on_gpu = mc_row(o.output, "cuda", estimate, std_error);
  EXPECT_TRUE(on_cpu != on_gpu) << o.output;
  if (on_cpu) {
    EXPECT_NE(o.output.find("  backend auto: "), std::string::npos) << o.output;
  }
  EXPECT_EQ(o.output.find("error:"), std::string::npos) << o.output;
}

// Seeded, so it can fail: the Monte Carlo estimate within 5 of its reported standard errors of pi,
// for several seeds and thread counts (the hits do not depend on the thread count).
TEST(PiProgram, MonteCarloEstimateIsWithinFiveStandardErrors) {
  const double pi = 3.141592653589793;
  for (const char* args : {"--seed 1 --threads 1", "--seed 1 --threads 2", "--seed 2", "--seed 18446744073709551615"}) {
    const outcome o = run_program(std::string("pi --method mc --samples 1e6 --backend cpu ") + args);
    ASSERT_EQ(o.exit_code, 0) << args << "\n" << o.output;
    double estimate = 0, std_error = 0;
    ASSERT_TRUE(mc_row(o.output, "cpu", estimate, std_error)) << o.output;
    EXPECT_GT(std_error, 0) << o.output;
    EXPECT_LT(std::fabs(estimate - pi), 5 * std_error) << args << "\n" << o.output;
  }
  const outcome one = run_program("pi --method mc --samples 1e6 --backend cpu --seed 1 --threads 1");
  const outcome two = run_program("pi --method mc --samples 1e6 --backend cpu --seed 1 --threads 2");
  const std::size_t h1 = one.output.find("cpu hits:"), h2 = two.output.find("cpu hits:");
  ASSERT_NE(h1, std::string::npos) << one.output;
  ASSERT_NE(h2, std::string::npos) << two.output;
  EXPECT_EQ(one.output.substr(h1), two.output.substr(h2));
}

}  // namespace

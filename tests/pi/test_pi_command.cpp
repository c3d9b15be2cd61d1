// `mcubes pi` (cli/pi_command.cpp): bad input is rejected before anything runs (mcubes::invalid_input,
// exit code 2), a missing CUDA backend is a runtime failure (exit 3), and good runs print the
// estimate. Tested in-process (this target compiles pi_command.cpp without the CUDA backend) and
// through the mcubes program (MCUBES_CLI_PATH).
#include <gtest/gtest.h>

#include <sys/wait.h>

#include <array>
#include <cstdio>
#include <string>

#include <CLI/CLI.hpp>

#include <mcubes/error.hpp>

#include "pi_command.hpp"

namespace {

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
  EXPECT_THROW(run_in_process("pi --method midpoint --samples 1000 --threads -3"), mcubes::invalid_input);
  EXPECT_THROW(run_in_process("pi --method foo --samples 1000"), CLI::ParseError);
  EXPECT_THROW(run_in_process("pi --method mc"), CLI::ParseError);
  EXPECT_THROW(run_in_process("pi --samples 1000"), CLI::ParseError);
  EXPECT_THROW(run_in_process("pi --method mc --samples 1000 --backend gpu"), CLI::ParseError);
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

}  // namespace

#pragma once
/// @file tests/cli/cli_test_support.hpp
/// Helpers of the tests that run the `mcubes` program: reading its output files, fresh temporary
/// paths, and running a command with its output captured.
#include <gtest/gtest.h>

#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <sstream>
#include <string>

#include <sys/wait.h>
#include <unistd.h>

namespace mcubes_test {

/// The whole content of a file ("" if it cannot be read).
inline std::string read_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}

/// A fresh path in the test temporary folder, unique per process and call:
/// <TempDir><prefix>_<pid>_<n><suffix>.
inline std::string temp_path(const std::string& prefix, const std::string& suffix) {
  static int counter = 0;
  return ::testing::TempDir() + prefix + "_" + std::to_string(::getpid()) + "_" + std::to_string(counter++) + suffix;
}

/// What one run of a command produced.
struct cli_run {
  int exit_code = -1;  ///< -1 if it did not exit normally
  std::string out;     ///< stdout
  std::string err;     ///< stderr
};

/// Runs `command` (a shell command line) through /bin/sh with stdout and stderr in fresh files
/// named after `prefix`, and returns its exit code and output (the files are removed).
inline cli_run run_captured(const std::string& command, const std::string& prefix) {
  const std::string out = temp_path(prefix, ".out"), err = temp_path(prefix, ".err");
  const std::string cmd = command + " >'" + out + "' 2>'" + err + "'";
  const int status = std::system(cmd.c_str());
  cli_run r;
  r.exit_code = (status != -1 && WIFEXITED(status)) ? WEXITSTATUS(status) : -1;
  r.out = read_file(out);
  r.err = read_file(err);
  std::remove(out.c_str());
  std::remove(err.c_str());
  return r;
}

}  // namespace mcubes_test

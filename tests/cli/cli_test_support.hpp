#pragma once
/// @file tests/cli/cli_test_support.hpp
/// Helpers of the tests that run the `mcubes` program: reading its output files and fresh
/// temporary paths.
#include <gtest/gtest.h>

#include <fstream>
#include <sstream>
#include <string>

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

}  // namespace mcubes_test

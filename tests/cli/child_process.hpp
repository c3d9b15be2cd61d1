#pragma once
/// @file tests/cli/child_process.hpp
/// Helpers of the tests that interrupt the `mcubes` program (path in MCUBES_CLI_PATH): it runs as a
/// child process (fork/exec) with its stdout and stderr in files that the test polls.
#include <gtest/gtest.h>

#include <chrono>
#include <csignal>
#include <cstdio>
#include <string>
#include <thread>
#include <vector>

#include <fcntl.h>
#include <sys/wait.h>
#include <unistd.h>

#include "cli/cli_test_support.hpp"

#ifndef MCUBES_CLI_PATH
#error "MCUBES_CLI_PATH (path of the mcubes program) must be defined"
#endif

namespace mcubes_test {

/// A started `mcubes` process and the files of its stdout and stderr.
struct child {
  pid_t pid = -1;
  std::string out, err;
};

/// Starts `mcubes args...` with stdout and stderr in fresh files named after `prefix` (temp_path).
inline child start(const std::string& prefix, const std::vector<std::string>& args) {
  child c;
  c.out = temp_path(prefix, ".out");
  c.err = temp_path(prefix, ".err");
  c.pid = fork();
  if (c.pid == 0) {
    const int o = open(c.out.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
    const int e = open(c.err.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
    dup2(o, 1);
    dup2(e, 2);
    std::vector<char*> argv;
    std::string prog = MCUBES_CLI_PATH;
    argv.push_back(prog.data());
    std::vector<std::string> copy = args;
    for (auto& a : copy) argv.push_back(a.data());
    argv.push_back(nullptr);
    execv(prog.c_str(), argv.data());
    _exit(127);
  }
  return c;
}

/// Polls `done()` every 20 ms while the child runs; fails the test if the child ends first or 60 s
/// pass (`what` names what was awaited, e.g. "3 rows").
template <class Pred>
void wait_while_running(const child& c, Pred done, const std::string& what) {
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(60);
  while (std::chrono::steady_clock::now() < deadline) {
    if (done()) return;
    int status = 0;
    if (waitpid(c.pid, &status, WNOHANG) == c.pid)
      FAIL() << "the program ended before " << what << ":\n" << read_file(c.out) << read_file(c.err);
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  FAIL() << "no " << what << " within 60 s";
}

/// Waits at most `seconds` for the child to end and returns its waitpid status; after that the
/// child is killed (SIGKILL), the test fails and -1 is returned.
inline int wait_for_exit(const child& c, int seconds) {
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(seconds);
  int status = 0;
  while (std::chrono::steady_clock::now() < deadline) {
    if (waitpid(c.pid, &status, WNOHANG) == c.pid) return status;
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  kill(c.pid, SIGKILL);
  waitpid(c.pid, &status, 0);
  ADD_FAILURE() << "the program did not end within " << seconds << " s (killed):\n" << read_file(c.out) << read_file(c.err);
  return -1;
}

/// Removes the child's output files.
inline void remove_outputs(const child& c) {
  std::remove(c.out.c_str());
  std::remove(c.err.c_str());
}

}  // namespace mcubes_test

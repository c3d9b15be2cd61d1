#pragma once
/// @file jit/process.hpp
/// Running a compiler (POSIX): find a program on PATH, run it with a time limit and collect its
/// output. The child runs in its own process group, so that a timeout or a cancellation kills it
/// with everything it started (the compiler driver's cc1plus, as, ld; nvcc's cicc, ptxas); on Linux
/// it also dies with the thread that started it, with everything it started: the child is a
/// supervisor that runs the compiler and, told by PR_SET_PDEATHSIG that the thread that started it
/// died (even by SIGKILL), kills its process group. Its messages are in English
/// (LC_ALL=C), so that they can be read back (jit/source.hpp). Host only.

#include <cerrno>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <functional>
#include <sstream>
#include <string>
#include <vector>

#include <fcntl.h>
#include <signal.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#if defined(__linux__)
#include <sys/prctl.h>
#endif

#include "../error.hpp"

extern char** environ;

namespace mcubes::jit {

/// The path of an executable regular file `name`: as given when it holds a '/', else the first
/// match on PATH; "" if there is none.
inline std::string find_program(const std::string& name) {
  auto executable = [](const std::string& p) {
    struct stat st;
    return ::stat(p.c_str(), &st) == 0 && S_ISREG(st.st_mode) && ::access(p.c_str(), X_OK) == 0;
  };
  if (name.empty()) return {};
  if (name.find('/') != std::string::npos) return executable(name) ? name : std::string();
  const char* path = std::getenv("PATH");
  std::string dirs = path != nullptr ? path : "/usr/local/bin:/usr/bin:/bin";
  std::size_t start = 0;
  while (start <= dirs.size()) {
    std::size_t end = dirs.find(':', start);
    if (end == std::string::npos) end = dirs.size();
    const std::string dir = end > start ? dirs.substr(start, end - start) : std::string(".");
    const std::string candidate = dir + "/" + name;
    if (executable(candidate)) return candidate;
    start = end + 1;
  }
  return {};
}

namespace detail {

/// SIGHUP handler of run_process's supervisor (the parent died): kills its process group.
extern "C" inline void kill_own_group(int) { ::kill(0, SIGKILL); }

}  // namespace detail

/// What a child process did.
struct process_result {
  int exit_code = -1;      ///< its exit status, or -1 if it did not exit normally
  int signal = 0;          ///< the signal that ended it, or 0
  bool timed_out = false;  ///< killed with its process group when the time limit passed
  bool cancelled = false;  ///< killed with its process group because `cancelled` returned true
  std::string output;      ///< its standard output and error, interleaved
  double seconds = 0;      ///< wall time from the start to the end
  bool ok() const noexcept { return exit_code == 0 && !timed_out && !cancelled; }
};

/// Runs argv[0] (a path: find_program) with arguments argv[1..], standard input /dev/null, standard
/// output and error to `output_file` (created or truncated, mode 0600; read back into the result),
/// the environment of this process with LC_ALL=C. Waits for it; after `timeout_seconds` (> 0), or
/// as soon as `cancelled` (polled every few milliseconds; may be empty) returns true, kills its
/// whole process group (SIGKILL) and reports that. The group is killed at the end in any case (a
/// straggler the compiler left behind).
/// @throws error if the output file cannot be created or the process cannot be started.
inline process_result run_process(const std::vector<std::string>& argv, const std::string& output_file,
                                  double timeout_seconds, const std::function<bool()>& cancelled = {}) {
  MCUBES_EXPECTS(!argv.empty(), "run_process: no program");
  process_result res;
  const int out = ::open(output_file.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
  if (out < 0) throw error("cannot create '" + output_file + "': " + std::strerror(errno));
  const int in = ::open("/dev/null", O_RDONLY | O_CLOEXEC);
  // Everything the child needs, made before fork (the child calls async-signal-safe functions only).
  std::vector<char*> args;
  for (const std::string& a : argv) args.push_back(const_cast<char*>(a.c_str()));
  args.push_back(nullptr);
  std::vector<std::string> env_text;
  for (char** e = environ; e != nullptr && *e != nullptr; ++e)
    if (std::strncmp(*e, "LC_ALL=", 7) != 0 && std::strncmp(*e, "LANGUAGE=", 9) != 0) env_text.emplace_back(*e);
  env_text.emplace_back("LC_ALL=C");
  std::vector<char*> env;
  for (std::string& e : env_text) env.push_back(e.data());
  env.push_back(nullptr);
  const pid_t parent = ::getpid();

  const auto t0 = std::chrono::steady_clock::now();
  const pid_t pid = ::fork();
  if (pid < 0) {
    const int err = errno;
    ::close(out);
    if (in >= 0) ::close(in);
    throw error(std::string("cannot start '") + argv[0] + "': " + std::strerror(err));
  }
  if (pid == 0) {  // the child
    ::setpgid(0, 0);
#if defined(__linux__)
    // A supervisor: when the thread that started it dies (even by SIGKILL), it gets SIGHUP and
    // kills its whole process group, the compiler driver's own children (cc1plus, as, ld) included;
    // otherwise it waits for the compiler and ends as it did.
    {
      struct sigaction sa;
      std::memset(&sa, 0, sizeof sa);
      sa.sa_handler = &detail::kill_own_group;
      sigemptyset(&sa.sa_mask);
      ::sigaction(SIGHUP, &sa, nullptr);
    }
    sigset_t none;
    sigemptyset(&none);
    ::sigprocmask(SIG_SETMASK, &none, nullptr);
    ::prctl(PR_SET_PDEATHSIG, SIGHUP);
    if (::getppid() != parent) ::_exit(127);
    const pid_t compiler = ::fork();
    if (compiler > 0) {
      int st = 0;
      while (::waitpid(compiler, &st, 0) < 0 && errno == EINTR) {
      }
      if (WIFEXITED(st)) ::_exit(WEXITSTATUS(st));
      const int sig = WIFSIGNALED(st) ? WTERMSIG(st) : SIGKILL;
      ::signal(sig, SIG_DFL);
      ::prctl(PR_SET_PDEATHSIG, 0);
      ::kill(::getpid(), sig);  // end as the compiler did
      ::_exit(128 + sig);
    }
    if (compiler < 0) ::_exit(127);
    ::signal(SIGHUP, SIG_DFL);  // the compiler: the default actions
#else
    (void)parent;
    sigset_t none;
    sigemptyset(&none);
    ::sigprocmask(SIG_SETMASK, &none, nullptr);
#endif
    ::signal(SIGPIPE, SIG_DFL);
    if (in >= 0) ::dup2(in, 0);
    ::dup2(out, 1);
    ::dup2(out, 2);
    ::execve(args[0], args.data(), env.data());
    const char* why = std::strerror(errno);
    const char prefix[] = "cannot execute the compiler: ";
    (void)!::write(2, prefix, sizeof prefix - 1);
    (void)!::write(2, why, std::strlen(why));
    (void)!::write(2, "\n", 1);
    ::_exit(127);
  }
  ::setpgid(pid, pid);  // also here: no window in which a kill of the group misses the child
  ::close(out);
  if (in >= 0) ::close(in);

  int status = 0;
  long sleep_us = 1000;
  for (;;) {
    const pid_t w = ::waitpid(pid, &status, WNOHANG);
    if (w == pid) break;
    if (w < 0 && errno != EINTR) break;
    const double elapsed = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    const bool stop_cancel = cancelled && cancelled();
    if ((timeout_seconds > 0 && elapsed > timeout_seconds) || stop_cancel) {
      ::kill(-pid, SIGKILL);
      while (::waitpid(pid, &status, 0) < 0 && errno == EINTR) {
      }
      res.timed_out = !stop_cancel;
      res.cancelled = stop_cancel;
      break;
    }
    timespec ts{0, sleep_us * 1000};
    ::nanosleep(&ts, nullptr);
    if (sleep_us < 10000) sleep_us *= 2;
  }
  ::kill(-pid, SIGKILL);
  res.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  if (WIFEXITED(status)) res.exit_code = WEXITSTATUS(status);
  if (WIFSIGNALED(status)) res.signal = WTERMSIG(status);
  if (res.timed_out || res.cancelled) res.exit_code = -1;
  std::ifstream f(output_file, std::ios::binary);
  std::ostringstream s;
  s << f.rdbuf();
  res.output = s.str();
  return res;
}

}  // namespace mcubes::jit

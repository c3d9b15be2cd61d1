/// @file cli/plot_command.cpp
/// See plot_command.hpp. The interpreter: $MCUBES_PYTHON, else the build's Python
/// (MCUBES_PLOT_PYTHON: CMake's Python3_EXECUTABLE), else python3 on PATH. The plotting file: beside
/// the installed command (<bindir>/../share/mcubes/plots.py), else the source tree's
/// (MCUBES_PLOT_SCRIPT, a build that is not installed).
#include "plot_command.hpp"

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <memory>
#include <string>
#include <vector>

#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <nlohmann/json.hpp>

#include <mcubes/error.hpp>

#ifndef MCUBES_PLOT_PYTHON
#define MCUBES_PLOT_PYTHON "python3"
#endif
#ifndef MCUBES_PLOT_SCRIPT
#define MCUBES_PLOT_SCRIPT ""
#endif

namespace mcubes::cli {

namespace {

struct plot_args {
  std::string report, prefix;
};

bool is_file(const std::string& p) {
  struct stat st {};
  return ::stat(p.c_str(), &st) == 0 && S_ISREG(st.st_mode);
}

/// The plotting file: installed beside the command, else the source tree's.
std::string plot_script() {
  char self[4096];
  const ssize_t n = ::readlink("/proc/self/exe", self, sizeof self - 1);
  if (n > 0) {
    std::string exe(self, static_cast<std::size_t>(n));
    const std::size_t slash = exe.find_last_of('/');
    const std::string installed = exe.substr(0, slash) + "/../share/mcubes/plots.py";
    if (is_file(installed)) return installed;
  }
  const std::string source = MCUBES_PLOT_SCRIPT;
  if (!source.empty() && is_file(source)) return source;
  throw error("mcubes plot: the plotting file plots.py is not installed (share/mcubes/plots.py beside the command)");
}

/// Runs argv (argv[0] looked up on PATH when it has no '/'), with this process's standard output and
/// error; returns its exit code, or -1 if it could not be started or did not exit.
int run_program(const std::vector<std::string>& argv) {
  std::vector<char*> args;
  for (const std::string& a : argv) args.push_back(const_cast<char*>(a.c_str()));
  args.push_back(nullptr);
  std::fflush(stdout);
  std::fflush(stderr);
  const pid_t pid = ::fork();
  if (pid < 0) return -1;
  if (pid == 0) {
    ::execvp(args[0], args.data());
    std::fprintf(stderr, "mcubes: error: cannot run %s: %s\n", args[0], std::strerror(errno));
    ::_exit(127);
  }
  int status = 0;
  while (::waitpid(pid, &status, 0) < 0)
    if (errno != EINTR) return -1;
  return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

int run_plot(const plot_args& a) {
  // The record, checked here: one clear line for a file that is not a record of the command.
  std::ifstream in(a.report);
  MCUBES_EXPECTS(in.good(), "cannot read the report '", a.report, "'");
  nlohmann::json doc;
  try {
    doc = nlohmann::json::parse(in);
  } catch (const nlohmann::json::exception&) {
    mcubes::detail::throw_invalid("'", a.report, "' is not JSON (a record of 'mcubes integrate --json FILE')");
  }
  MCUBES_EXPECTS(doc.is_object() && doc.contains("iterations") && doc["iterations"].is_array(), "'", a.report,
                 "' has no iterations (a record of 'mcubes integrate --json FILE' or 'mcubes sample --json FILE')");
  std::string prefix = a.prefix;
  if (prefix.empty()) {
    prefix = a.report;
    if (prefix.size() > 5 && prefix.compare(prefix.size() - 5, 5, ".json") == 0) prefix.resize(prefix.size() - 5);
  }
  const bool has_map = doc.contains("map") && doc["map"].is_object();
  const char* env = std::getenv("MCUBES_PYTHON");
  const std::string python = env != nullptr && *env != '\0' ? env : MCUBES_PLOT_PYTHON;
  std::vector<std::string> argv = {python, plot_script(), a.report, "--out", prefix + "-convergence.png"};
  if (has_map) {
    argv.push_back("--map-out");
    argv.push_back(prefix + "-map.png");
  }
  const int rc = run_program(argv);
  if (rc == 2) mcubes::detail::throw_invalid("the report '", a.report, "' could not be drawn (above)");
  if (rc != 0)
    throw error("mcubes plot needs " + python + " with NumPy and matplotlib (Debian: python3-matplotlib); it exited with " +
                std::to_string(rc) + " (MCUBES_PYTHON names another interpreter)");
  std::printf("plot: %s-convergence.png%s%s\n", prefix.c_str(), has_map ? ", " : " (no map in the report: --json-map)",
              has_map ? (prefix + "-map.png").c_str() : "");
  return 0;
}

}  // namespace

std::function<int()> add_plot_command(CLI::App& app) {
  auto a = std::make_shared<plot_args>();
  CLI::App* sub = app.add_subcommand(
      "plot",
      "Draw a run from its JSON record (matplotlib): PREFIX-convergence.png, each iteration's estimate with its "
      "error bar, the weighted average with its one-sigma band and the exact value; and, for a record written with "
      "--json-map, PREFIX-map.png, the adaptive map's sampling density per axis. Needs Python 3 with NumPy and "
      "matplotlib ($MCUBES_PYTHON, else the build's). Exit code 0 written, 2 bad input, 3 runtime failure.");
  sub->add_option("report", a->report, "A record of 'mcubes integrate --json FILE' (or sample)")->required()->type_name("FILE");
  sub->add_option("--prefix", a->prefix, "Prefix of the pictures (default: the record's path without .json)")
      ->type_name("PATH");
  return [a] { return run_plot(*a); };
}

}  // namespace mcubes::cli

/// @file cli/main.cpp
/// The `mcubes` command: a CLI11 app with the subcommands integrate, list, pi and scan
/// (cli/<name>_command.{hpp,cpp}). The only place that turns exceptions into exit codes:
///   0  success (integrate: converged), and --help / --version
///   1  integrate finished without converging (or not resolved); the result is still printed
///   2  bad input: command-line parse errors and mcubes::invalid_input
///   3  runtime failure: any other mcubes::error (non-finite integrand, numerical error, no CUDA
///      backend) or other exception
/// Errors are one line on stderr: "mcubes: error: <message>".
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <exception>
#include <functional>
#include <new>
#include <string>
#include <utility>
#include <vector>

#include <CLI/CLI.hpp>

#include <mcubes/config.hpp>
#include <mcubes/error.hpp>

#include "integrate_command.hpp"
#include "list_command.hpp"
#include "pi_command.hpp"
#include "scan_command.hpp"

namespace {

constexpr int exit_bad_input = 2;
constexpr int exit_runtime_failure = 3;

/// Prints "mcubes: error: <message>" on one line (newlines in the message become spaces).
void print_error(std::string message) {
  for (char& c : message)
    if (c == '\n' || c == '\r') c = ' ';
  while (!message.empty() && message.back() == ' ') message.pop_back();
  std::fflush(stdout);
  std::fprintf(stderr, "mcubes: error: %s\n", message.c_str());
}

/// The exit code of a command that ended normally with `code`, once standard output is known to
/// have taken everything: a write error (a full disk, /dev/full) is a runtime failure with one
/// line, never a silent success.
int with_stdout_checked(int code) {
  errno = 0;
  if (std::fflush(stdout) == 0 && !std::ferror(stdout)) return code;
  const int err = errno;  // 0 when the write that failed was an earlier one (its reason is gone)
  std::fprintf(stderr, "mcubes: error: cannot write to standard output%s%s\n", err != 0 ? ": " : "",
               err != 0 ? std::strerror(err) : "");
  return exit_runtime_failure;
}

/// For a parse error: if the first argument names no subcommand, a clearer message than CLI11's
/// "A subcommand is required" ("unknown command 'x' (commands: integrate, list, pi)"); else "".
std::string unknown_command_message(const CLI::App& app, int argc, char** argv) {
  if (argc < 2 || argv[1][0] == '-') return {};
  const std::string first = argv[1];
  std::string known;
  for (const CLI::App* sub : app.get_subcommands([](const CLI::App*) { return true; })) {
    if (sub->get_name() == first) return {};
    known += (known.empty() ? "" : ", ") + sub->get_name();
  }
  return "unknown command '" + first + "' (commands: " + known + ")";
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"mcubes: m-Cubes (Vegas) Monte Carlo integration on CPUs and GPUs", "mcubes"};
  app.set_version_flag("--version", MCUBES_VERSION_STRING);
  app.require_subcommand(1);
  try {
    const std::vector<std::pair<std::string, std::function<int()>>> commands = {
        {"integrate", mcubes::cli::add_integrate_command(app)},
        {"list", mcubes::cli::add_list_command(app)},
        {"pi", mcubes::cli::add_pi_command(app)},
        {"scan", mcubes::cli::add_scan_command(app)},
    };
    app.parse(argc, argv);
    for (const auto& [name, run] : commands)
      if (run && app.got_subcommand(name)) return with_stdout_checked(run());
    print_error("no command to run");
    return exit_bad_input;
  } catch (const CLI::ParseError& e) {
    if (e.get_exit_code() == 0) return with_stdout_checked(app.exit(e));  // --help, --version
    const std::string unknown = unknown_command_message(app, argc, argv);
    print_error(unknown.empty() ? e.what() : unknown);
    return exit_bad_input;
  } catch (const mcubes::invalid_input& e) {
    print_error(e.what());
    return exit_bad_input;
  } catch (const mcubes::error& e) {
    print_error(e.what());
    return exit_runtime_failure;
  } catch (const std::bad_alloc&) {
    print_error("out of memory");
    return exit_runtime_failure;
  } catch (const std::exception& e) {
    print_error(e.what());
    return exit_runtime_failure;
  }
}

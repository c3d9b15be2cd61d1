/// @file cli/main.cpp
/// The `mcubes` command: a CLI11 app with the subcommands integrate, list, pi, plot, sample and scan
/// (cli/<name>_command.{hpp,cpp}). The only place that turns exceptions into exit codes:
///   0  success (integrate: converged), and --help / --version
///   1  integrate finished without converging (or not resolved); the result is still printed
///   2  bad input: command-line parse errors and mcubes::invalid_input
///   3  runtime failure: any other mcubes::error (non-finite integrand, numerical error, no CUDA
///      backend) or other exception
/// Errors are one line on stderr: "mcubes: error: <message>".
/// `mcubes --completion bash` prints the bash completion script (cli/completion.hpp).
#include <algorithm>
#include <cctype>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <exception>
#include <functional>
#include <new>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include <CLI/CLI.hpp>

#include <mcubes/config.hpp>
#include <mcubes/error.hpp>

#include "completion.hpp"
#include "integrate_command.hpp"
#include "list_command.hpp"
#include "mpi_session.hpp"
#include "pi_command.hpp"
#include "plot_command.hpp"
#include "scan_command.hpp"

namespace {

constexpr int exit_bad_input = 2;
constexpr int exit_runtime_failure = 3;

/// Prints "mcubes: error: <message>" on one line (newlines in the message become spaces).
/// Prints "mcubes: error: MESSAGE" on stderr. Under mpirun (cli/mpi_session.hpp) bad input, the
/// same on every rank, is printed by rank 0 alone (`every_rank` false); other failures by every
/// rank, the others naming themselves ("mcubes: error (rank R): ...").
void print_error(std::string message, bool every_rank = false) {
  for (char& c : message)
    if (c == '\n' || c == '\r') c = ' ';
  while (!message.empty() && message.back() == ' ') message.pop_back();
  std::fflush(stdout);
  const int rank = mcubes::cli::cli_rank();
  if (rank == 0)
    std::fprintf(stderr, "mcubes: error: %s\n", message.c_str());
  else if (every_rank)
    std::fprintf(stderr, "mcubes: error (rank %d): %s\n", rank, message.c_str());
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

/// The edit distance of a and b (Levenshtein: insertions, deletions, substitutions).
std::size_t edit_distance(std::string_view a, std::string_view b) {
  std::vector<std::size_t> row(b.size() + 1);
  for (std::size_t j = 0; j <= b.size(); ++j) row[j] = j;
  for (std::size_t i = 1; i <= a.size(); ++i) {
    std::size_t diagonal = row[0];
    row[0] = i;
    for (std::size_t j = 1; j <= b.size(); ++j) {
      const std::size_t up = row[j];
      row[j] = std::min({row[j] + 1, row[j - 1] + 1, diagonal + (a[i - 1] == b[j - 1] ? 0 : 1)});
      diagonal = up;
    }
  }
  return row[b.size()];
}

/// The lower-case letters and digits of s ("--Rel_Tol" -> "reltol").
std::string letters_and_digits(std::string_view s) {
  std::string out;
  for (const char c : s)
    if (std::isalnum(static_cast<unsigned char>(c))) out += static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return out;
}

/// The name among `known` that the user probably meant by `typed`, or "": the same letters and
/// digits (--reltol for --rel-tol), one of 6 letters or more that the other begins with, at most 5
/// letters shorter (--calls-per-iteration for --calls-per-iter), or an edit distance of at most 2
/// (at most 1 for names of 4 letters or fewer); the closest such name, the first on a tie.
std::string closest_name(const std::string& typed, const std::vector<std::string>& known) {
  const std::string t = letters_and_digits(typed);
  if (t.size() < 2) return {};
  std::string best;
  std::size_t best_distance = 3;
  for (const std::string& k : known) {
    const std::string n = letters_and_digits(k);
    std::size_t d = edit_distance(t, n);
    const std::size_t shorter = std::min(t.size(), n.size()), longer = std::max(t.size(), n.size());
    if (shorter >= 6 && longer - shorter <= 5 && (t.rfind(n, 0) == 0 || n.rfind(t, 0) == 0)) d = 0;
    const std::size_t limit = std::min(t.size(), n.size()) <= 4 ? 1 : 2;
    if (d <= limit && d < best_distance) best = k, best_distance = d;
  }
  return best;
}

/// For a parse error: if the first argument names no subcommand, a clearer message than CLI11's
/// "A subcommand is required" ("unknown command 'x' (commands: integrate, list, pi); did you mean
/// 'y'?"), or, for an unknown option before the command, "unknown option '--versio' before the
/// command; did you mean --version?"; else "".
std::string unknown_command_message(const CLI::App& app, int argc, char** argv) {
  if (argc < 2) return {};
  if (argv[1][0] == '-') {  // an option before the command: one of the program's own (--version, ...)?
    const std::string typed = std::string(argv[1]).substr(0, std::string(argv[1]).find('='));
    std::vector<std::string> names;
    for (const CLI::Option* o : app.get_options())
      for (const std::string& n : o->get_lnames()) names.push_back("--" + n);
    if (typed.rfind("--", 0) != 0 || std::find(names.begin(), names.end(), typed) != names.end()) return {};
    const std::string meant = closest_name(typed, names);
    return "unknown option '" + typed + "' before the command" + (meant.empty() ? "" : "; did you mean " + meant + "?");
  }
  const std::string first = argv[1];
  std::string known;
  std::vector<std::string> names;
  for (const CLI::App* sub : app.get_subcommands([](const CLI::App*) { return true; })) {
    if (sub->get_name() == first) return {};
    known += (known.empty() ? "" : ", ") + sub->get_name();
    names.push_back(sub->get_name());
  }
  const std::string meant = closest_name(first, names);
  return "unknown command '" + first + "' (commands: " + known + ")" + (meant.empty() ? "" : "; did you mean '" + meant + "'?");
}

/// For a parse error of a subcommand ("The following arguments were not expected: ...", or
/// "--samples is required" when --sample was typed): the first argument that looks like an option
/// of none of its names, with the option the user probably meant ("; did you mean --rel-tol
/// instead of --reltol?"); else "".
std::string misspelled_option_hint(const CLI::App& app, int argc, char** argv) {
  const CLI::App* sub = nullptr;
  for (const CLI::App* s : app.get_subcommands()) sub = s;  // the parsed subcommand
  if (sub == nullptr) return {};
  std::vector<std::string> names;
  for (const CLI::Option* o : sub->get_options())
    for (const std::string& n : o->get_lnames()) names.push_back("--" + n);
  for (int i = 2; i < argc; ++i) {
    std::string a = argv[i];
    if (a == "--") break;
    if (a.rfind("--", 0) != 0) continue;
    a = a.substr(0, a.find('='));
    if (std::find(names.begin(), names.end(), a) != names.end()) continue;
    const std::string meant = closest_name(a, names);
    return meant.empty() ? std::string() : "; did you mean " + meant + " instead of " + a + "?";
  }
  return {};
}

/// The placeholders of the options whose values are read as text and checked by the command
/// (integrate_args.cpp, scan_command.cpp, pi_command.cpp), by long name: --help shows
/// "--dim INT" rather than CLI11's "--dim TEXT".
void name_placeholders(CLI::App& app) {
  static const std::pair<const char*, const char*> placeholders[] = {
      {"dim", "INT"},           {"rel-tol", "FLOAT"},      {"abs-tol", "FLOAT"},       {"max-iterations", "INT"},
      {"adapt-iterations", "INT"}, {"skip", "INT"},        {"min-iterations", "INT"},  {"max-chi2-dof", "FLOAT"},
      {"alpha", "FLOAT|auto"},  {"beta", "FLOAT"},         {"threads", "INT"},         {"threads-per-block", "INT"},
      {"backend", "cpu|cuda|auto"}, {"max-memory", "BYTES"}, {"bins", "N|auto"},       {"samples", "N"},
      {"seed", "UINT"}};
  for (CLI::App* sub : app.get_subcommands([](CLI::App*) { return true; }))
    for (CLI::Option* o : sub->get_options([](CLI::Option*) { return true; })) {
      if (o->get_type_name() != "TEXT") continue;
      if (o->get_lnames().empty() && o->get_name() == "integrand") o->type_name("NAME");  // the positional
      for (const auto& [name, placeholder] : placeholders)
        if (o->check_lname(name)) o->type_name(placeholder);
    }
}

}  // namespace

int main(int argc, char** argv) {
  const mcubes::cli::mpi_session mpi(argc, argv);  // under mpirun: MPI, rank 0 prints (mpi_session.hpp)
  CLI::App app{"mcubes: m-Cubes (Vegas) Monte Carlo integration on CPUs and GPUs", "mcubes"};
  app.set_version_flag("--version", MCUBES_VERSION_STRING);
  app.require_subcommand(1);
  try {
    const std::vector<std::pair<std::string, std::function<int()>>> commands = {
        {"integrate", mcubes::cli::add_integrate_command(app)},
        {"list", mcubes::cli::add_list_command(app)},
        {"pi", mcubes::cli::add_pi_command(app)},
        {"plot", mcubes::cli::add_plot_command(app)},
        {"sample", mcubes::cli::add_sample_command(app)},
        {"scan", mcubes::cli::add_scan_command(app)},
    };
    name_placeholders(app);
    if (argc >= 2 && std::string(argv[1]) == "--completion") {  // the build's bash completion script
      if (argc != 3 || std::string(argv[2]) != "bash") {
        print_error("--completion takes one shell: bash");
        return exit_bad_input;
      }
      std::fputs(mcubes::cli::bash_completion(app).c_str(), stdout);
      return with_stdout_checked(0);
    }
    if (argc < 2) {  // a bare `mcubes`: the usage, then the one-line error
      std::fputs(app.help().c_str(), stdout);
      print_error("a command is required: integrate, list, pi, plot, sample or scan ('mcubes COMMAND --help' for its options)");
      return exit_bad_input;
    }
    app.parse(argc, argv);
    for (const auto& [name, run] : commands)
      if (run && app.got_subcommand(name)) return with_stdout_checked(run());
    print_error("no command to run");
    return exit_bad_input;
  } catch (const CLI::ParseError& e) {
    if (e.get_exit_code() == 0) return with_stdout_checked(app.exit(e));  // --help, --version
    const std::string unknown = unknown_command_message(app, argc, argv);
    std::string message = unknown.empty() ? e.what() : unknown;
    if (unknown.empty()) message += misspelled_option_hint(app, argc, argv);  // also "--samples is required"
    print_error(message);
    return exit_bad_input;
  } catch (const mcubes::invalid_input& e) {
    print_error(e.what());
    return exit_bad_input;
  } catch (const mcubes::error& e) {
    print_error(e.what(), true);
    return exit_runtime_failure;
  } catch (const std::bad_alloc&) {
    print_error("out of memory", true);
    return exit_runtime_failure;
  } catch (const std::exception& e) {
    print_error(e.what(), true);
    return exit_runtime_failure;
  }
}

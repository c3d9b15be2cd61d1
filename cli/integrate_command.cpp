/// @file cli/integrate_command.cpp
/// `mcubes integrate`: option parsing and checking, then the run through the compile-time
/// dispatch (integrand_dispatch.hpp) and the reports (report.hpp).
#include "integrate_command.hpp"

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <memory>
#include <thread>
#include <utility>

#include <mcubes/error.hpp>
#include <mcubes/options.hpp>
#include <mcubes/suite.hpp>

#include "integrand_dispatch.hpp"
#include "report.hpp"
#include "run_backend.hpp"

namespace mcubes::cli {

namespace {

/// Values of the command line, bound to the CLI11 options. The Option pointers tell which
/// options were given (those with defaults from the integrand's paper settings).
struct integrate_args {
  std::string name;
  int dim = 0;
  double rel_tol = vegas_options{}.rel_tol;
  double abs_tol = vegas_options{}.abs_tol;
  std::string calls;
  int max_iterations = 0;
  int adapt_iterations = 0;
  int skip = 0;
  int min_iterations = vegas_options{}.min_iterations;
  double max_chi2_dof = vegas_options{}.max_chi2_dof;
  int bins = vegas_options{}.n_bins;
  double alpha = vegas_options{}.alpha;
  bool symmetric_map = false;
  std::string seed = std::to_string(vegas_options{}.seed);
  int threads = 0;
  int threads_per_block = 256;
  std::string backend = "cpu";
  std::string json;
  bool quiet = false;

  CLI::Option* dim_opt = nullptr;
  CLI::Option* calls_opt = nullptr;
  CLI::Option* max_iterations_opt = nullptr;
  CLI::Option* adapt_iterations_opt = nullptr;
  CLI::Option* skip_opt = nullptr;
  CLI::Option* threads_opt = nullptr;
  CLI::Option* json_opt = nullptr;
};

/// "f1, f2, ..." : the names of the suite integrands.
std::string known_names() {
  std::string s;
  for (const suite::entry& e : suite::entries()) s += (s.empty() ? "" : ", ") + e.name;
  return s;
}

/// Rewrites the vegas_options field names in a message of mcubes::validate as the command-line
/// options that set them ("n_bins must be ..." -> "--bins must be ..."); whole words only.
std::string with_option_names(const std::string& message) {
  static const std::pair<const char*, const char*> names[] = {
      {"rel_tol", "--rel-tol"},
      {"abs_tol", "--abs-tol"},
      {"calls_per_iteration", "--calls-per-iter"},
      {"max_iterations", "--max-iterations"},
      {"adapt_iterations", "--adapt-iterations"},
      {"min_iterations", "--min-iterations"},
      {"skip", "--skip"},
      {"max_chi2_dof", "--max-chi2-dof"},
      {"n_bins", "--bins"},
      {"alpha", "--alpha"},
      {"threads", "--threads"},
  };
  auto is_word = [](char c) { return std::isalnum(static_cast<unsigned char>(c)) || c == '_' || c == '-'; };
  std::string out;
  std::size_t i = 0;
  while (i < message.size()) {
    bool replaced = false;
    if (i == 0 || !is_word(message[i - 1])) {
      for (const auto& [field, option] : names) {
        const std::size_t n = std::char_traits<char>::length(field);
        if (message.compare(i, n, field) == 0 && (i + n == message.size() || !is_word(message[i + n]))) {
          out += option;
          i += n;
          replaced = true;
          break;
        }
      }
    }
    if (!replaced) out += message[i++];
  }
  return out;
}

backend_kind parse_backend(const std::string& s) {
  if (s == "cpu") return backend_kind::cpu;
  if (s == "cuda") return backend_kind::cuda;
  if (s == "auto") return backend_kind::automatic;
  mcubes::detail::throw_invalid("--backend must be cpu, cuda or auto, got '", s, "'");
}

/// The dimension of the run: --dim if given (checked against the integrand), else its default.
int resolve_dim(const integrate_args& a, const suite::entry& e) {
  if (a.dim_opt->count() == 0) return e.default_dim;
  if (e.any_dim) {
    const int max_dim = std::min(max_cli_dim, e.max_dim);
    MCUBES_EXPECTS(a.dim >= 1 && a.dim <= max_dim, "--dim for ", e.name, " must be in [1, ", max_dim, "], got ",
                   a.dim);
  } else {
    MCUBES_EXPECTS(a.dim == e.default_dim, "--dim for ", e.name, " must be ", e.default_dim,
                   " (its dimension is fixed), got ", a.dim);
  }
  return a.dim;
}

/// The options of the run: command-line values, the integrand's paper settings for the options
/// not given. Checks the command-line-only rules; mcubes::validate checks the rest.
vegas_options resolve_options(const integrate_args& a, const suite::entry& e, int dim) {
  vegas_options o;
  o.rel_tol = a.rel_tol;
  o.abs_tol = a.abs_tol;
  o.calls_per_iteration = a.calls_opt->count() ? parse_count(a.calls, "--calls-per-iter") : e.paper.calls;
  o.max_iterations = a.max_iterations_opt->count() ? a.max_iterations : e.paper.max_iterations;
  o.adapt_iterations = a.adapt_iterations_opt->count() ? a.adapt_iterations : e.paper.adapt_iterations;
  o.skip = a.skip_opt->count() ? a.skip : e.paper.skip;
  o.min_iterations = a.min_iterations;
  o.max_chi2_dof = a.max_chi2_dof;
  o.n_bins = a.bins;
  o.alpha = a.alpha;
  o.symmetric_map = a.symmetric_map;
  o.seed = parse_count(a.seed, "--seed");
  // --threads absent means all cores (0 in vegas_options); an explicit value must be >= 1.
  MCUBES_EXPECTS(a.threads_opt->count() == 0 || a.threads >= 1, "--threads must be at least 1, got ", a.threads,
                 " (leave it out to use all cores)");
  o.threads = a.threads_opt->count() ? a.threads : 0;
  o.cuda_threads_per_block = a.threads_per_block;
  o.backend = parse_backend(a.backend);
  try {
    validate(o, dim);
  } catch (const invalid_input& e) {
    throw invalid_input(with_option_names(e.what()));
  }
  return o;
}

int run_integrate(const integrate_args& a) {
  // 1. Everything that is bad input, before anything is printed or run.
  const suite::entry* e = suite::find(a.name);
  MCUBES_EXPECTS(e != nullptr, "unknown integrand '", a.name, "' (known: ", known_names(), ")");
  const runner run = find_runner(e->name);
  if (run == nullptr) throw error("integrand " + e->name + " has no compiled runner in this build");
  const int dim = resolve_dim(a, *e);
  const vegas_options opts = resolve_options(a, *e, dim);

  const bool json_stdout = a.json_opt->count() && a.json == "-";
  std::ofstream json_file;
  if (a.json_opt->count() && !json_stdout) {
    json_file.open(a.json);
    MCUBES_EXPECTS(json_file.is_open(), "--json: cannot open '", a.json, "' for writing");
  }

  // 2. The backend (cuda is a runtime failure in this build, not bad input).
  run_request rq;
  rq.entry = e;
  rq.dim = dim;
  rq.options = opts;
  rq.backend = choose_backend(opts.backend, e->name, dim);

  run_report report;
  report.entry = e;
  report.dim = dim;
  report.backend_description = rq.backend.description;
  report.threads = rq.backend.used == backend_kind::cuda
                       ? opts.cuda_threads_per_block
                       : (opts.threads > 0 ? opts.threads : static_cast<int>(std::max(1u, std::thread::hardware_concurrency())));
  report.res.options = opts;

  // 3. The run and the reports. With --json - stdout carries only the JSON.
  const bool text = !json_stdout;
  if (text && !a.quiet) {
    print_header(stdout, report);
    std::fprintf(stdout, "backend: %s, %d thread%s%s\n", report.backend_description.c_str(), report.threads,
                 report.threads == 1 ? "" : "s", rq.backend.used == backend_kind::cuda ? " per block" : "");
    std::fflush(stdout);
  } else if (rq.backend.requested != rq.backend.used) {
    std::fprintf(stderr, "mcubes: note: backend %s\n", report.backend_description.c_str());
  }

  report.res = rq.backend.used == backend_kind::cuda ? run_suite_on_cuda(rq) : run(rq);

  if (text) {
    if (a.quiet) {
      print_quiet_result(stdout, report);
    } else {
      print_iteration_table(stdout, report.res);
      print_result(stdout, report);
    }
    std::fflush(stdout);
  }
  if (a.json_opt->count()) {
    const std::string dumped = to_json(report).dump(2) + "\n";
    if (json_stdout) {
      std::fputs(dumped.c_str(), stdout);
      std::fflush(stdout);
      if (std::ferror(stdout)) throw error("cannot write the JSON record to stdout");
    } else {
      json_file << dumped;
      json_file.close();
      if (!json_file) throw error("cannot write the JSON record to '" + a.json + "'");
    }
  }
  return exit_code(report.res.status);
}

}  // namespace

std::uint64_t parse_count(const std::string& text, const std::string& option) {
  const char* s = text.c_str();
  MCUBES_EXPECTS(!text.empty() && text.find_first_of(" \t\n") == std::string::npos && text[0] != '-',
                 option, " must be a non-negative integer (e.g. 1000000 or 1e6), got '", text, "'");
  char* end = nullptr;
  errno = 0;
  if (text.find_first_not_of("0123456789") == std::string::npos) {
    const unsigned long long v = std::strtoull(s, &end, 10);
    MCUBES_EXPECTS(errno == 0 && *end == '\0', option, " is out of range, got '", text, "'");
    return static_cast<std::uint64_t>(v);
  }
  const double v = std::strtod(s, &end);
  MCUBES_EXPECTS(end != s && *end == '\0' && std::isfinite(v) && v >= 0 && v == std::floor(v) && v < 0x1p63, option,
                 " must be a non-negative integer (e.g. 1000000 or 1e6), got '", text, "'");
  return static_cast<std::uint64_t>(v);
}

std::function<int()> add_integrate_command(CLI::App& app) {
  auto a = std::make_shared<integrate_args>();
  CLI::App* sub = app.add_subcommand(
      "integrate",
      "Integrate a test integrand of the suite (see 'mcubes list') with m-Cubes. Prints one row per iteration and "
      "the result; exit code 0 converged, 1 not converged or not resolved, 2 bad input, 3 runtime failure. "
      "Options marked [paper] default to the integrand's settings in the m-Cubes paper.");
  sub->add_option("integrand", a->name, "Name of the integrand (see 'mcubes list')")->required();
  a->dim_opt = sub->add_option("--dim", a->dim,
                               "Dimension d: 1..32 for f1..f6 (default: the integrand's default), fixed for fA (6) "
                               "and fB (9)");
  sub->add_option("--rel-tol", a->rel_tol, "Relative tolerance: stop when error <= max(abs-tol, rel-tol*|estimate|)")
      ->capture_default_str();
  sub->add_option("--abs-tol", a->abs_tol, "Absolute tolerance")->capture_default_str();
  a->calls_opt = sub->add_option("--calls-per-iter", a->calls,
                                 "[paper] Integrand evaluations per iteration (at most), e.g. 1000000 or 1e6")
                     ->type_name("N");
  a->max_iterations_opt = sub->add_option("--max-iterations", a->max_iterations, "[paper] Iterations at most");
  a->adapt_iterations_opt =
      sub->add_option("--adapt-iterations", a->adapt_iterations, "[paper] Leading iterations that adapt the map");
  a->skip_opt = sub->add_option("--skip", a->skip, "[paper] Leading iterations left out of the weighted estimate");
  sub->add_option("--min-iterations", a->min_iterations,
                  "Accumulated iterations needed before convergence is declared")
      ->capture_default_str();
  sub->add_option("--max-chi2-dof", a->max_chi2_dof, "Convergence also needs chi2/dof <= this")->capture_default_str();
  sub->add_option("--bins", a->bins, "Bins per axis of the adaptive map")->capture_default_str();
  sub->add_option("--alpha", a->alpha, "Damping exponent of the map adaptation (0 freezes the map)")
      ->capture_default_str();
  sub->add_flag("--symmetric-map", a->symmetric_map, "One map shared by every axis (m-Cubes1D)");
  sub->add_option("--seed", a->seed, "Seed of the random streams (an integer in [0, 2^64))")
      ->capture_default_str()
      ->type_name("UINT");
  a->threads_opt = sub->add_option("--threads", a->threads,
                                   "CPU threads, at least 1 (default: all cores); never changes the result");
  sub->add_option("--threads-per-block", a->threads_per_block,
                  "CUDA threads per block, a power of two in [32, 1024]; never changes the result")
      ->capture_default_str();
  sub->add_option("--backend", a->backend, "Who computes the samples: cpu, cuda or auto (cuda when available)")
      ->capture_default_str()
      ->check(CLI::IsMember({"cpu", "cuda", "auto"}));
  a->json_opt = sub->add_option("--json", a->json,
                                "Write a JSON record of the run to FILE ('-': stdout, which then carries only the "
                                "JSON); non-finite numbers are written as null")
                    ->type_name("FILE");
  sub->add_flag("--quiet,-q", a->quiet, "Print only the final result line");
  return [a] { return run_integrate(*a); };
}

}  // namespace mcubes::cli

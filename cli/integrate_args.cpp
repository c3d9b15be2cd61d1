/// @file cli/integrate_args.cpp
/// The command line of `mcubes integrate` (integrate_args.hpp).
#include "integrate_args.hpp"

#include <cctype>
#include <limits>
#include <string>
#include <utility>
#include <vector>

#include <mcubes/error.hpp>

#include "run_backend.hpp"

namespace mcubes::cli {

namespace {

/// Rewrites the vegas_options field names in a message of mcubes::validate as the command-line
/// options that set them ("n_bins must be ..." -> "--bins must be ..."); whole words only.
std::string with_option_names(const std::string& message) {
  static const std::vector<std::pair<const char*, const char*>> names = [] {  // the options table's, and threads
    std::vector<std::pair<const char*, const char*>> n;
    for_each_vegas_option([&](const option_info& info, auto) { n.emplace_back(info.name, info.flag); });
    n.emplace_back("threads", "--threads");
    return n;
  }();
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

/// Largest integer an iteration-count option accepts (every count of iterations is an int).
constexpr long long max_count_option = 1000000000;

}  // namespace

void add_integrate_options(CLI::App& sub, integrate_args& a) {
  a.name_opt = sub.add_option("integrand", a.name, "Name of a suite integrand (see 'mcubes list'); or --expr / --body");
  a.expr_opt = sub.add_option("--expr", a.expr,
                              "The integrand as a C++ expression of x[0] .. x[D-1] (and D, and the parameters p[0], "
                              "p[1], ... given by --param p0=V ...) with the <cmath> functions, e.g. "
                              "'exp(-p[0]*x[0]*x[1])'; needs --dim. Compiled at run time (cached), with your rights")
                   ->type_name("EXPR");
  a.body_opt = sub.add_option("--body", a.body,
                              "The integrand as the body of a C++ function of x and D that returns its value, e.g. "
                              "'double s = 0; for (int i = 0; i < D; ++i) s += x[i]; return sin(s);'; needs --dim")
                   ->type_name("BODY");
  a.region_opt = sub.add_option("--region", a.region,
                                "The region, one LOWER:UPPER pair per axis (or one for every axis), e.g. 0:1,0:2 "
                                "(default: the integrand's; [0,1]^d for --expr/--body)")
                     ->type_name("A:B,...");
  a.lower_opt = sub.add_option("--lower", a.lower, "Lower bound of every axis (with --upper)")->type_name("A");
  a.upper_opt = sub.add_option("--upper", a.upper, "Upper bound of every axis (with --lower)")->type_name("B");
  a.compile_timeout_opt = sub.add_option("--compile-timeout", a.compile_timeout,
                                         "Stop the compiler of --expr/--body after this many seconds")
                              ->capture_default_str()
                              ->type_name("SECONDS");
  a.dim_opt = sub.add_option("--dim", a.dim,
                               "Dimension d: 1..32 for f1..f6 (default: the integrand's default), fixed for fA (6) "
                               "and fB (9)");
  add_vegas_flags(sub, a, "");
  sub.add_option("--bins", a.bins,
                 "Bins per axis of the adaptive map, 2..2^20, or auto: min(500, calls per iteration / 10), about ten "
                 "samples a bin")
      ->capture_default_str()
      ->type_name("N|auto");
  sub.add_option("--param", a.params,
                  "A parameter of the integrand, NAME=VALUE (repeat for each; f1..f6: a = difficulty, u = shift; "
                  "the others keep the paper's values, see 'mcubes list'; --expr/--body: p0=V, p1=V, ... give "
                  "p[0], p[1], ... of the text, each one read needs its value)")
      ->type_name("NAME=VALUE")
      ->allow_extra_args(false);
  sub.add_option("--seed", a.common.seed, "Seed of the random streams (an integer in [0, 2^64))")
      ->capture_default_str()
      ->type_name("UINT");
  a.threads_opt = sub.add_option("--threads", a.common.threads,
                                   "CPU threads, at least 1 (default: all cores); never changes the result");
  sub.add_option("--threads-per-block", a.common.threads_per_block,
                  "CUDA threads per block, a power of two in [32, 1024]; never changes the result")
      ->capture_default_str();
  sub.add_option("--backend", a.common.backend,
                  "Who computes the samples: cpu, cuda or auto (cuda when a device is present)")
      ->capture_default_str();
  add_devices_option(sub, a.common);
  a.json_opt = sub.add_option("--json", a.json,
                                "Write a JSON record of the run to FILE ('-': stdout, which then carries only the "
                                "JSON); a file is replaced atomically during the run (status \"running\"; at the first "
                                "iteration, then at most once a second) and at the end; a link's target is replaced, "
                                "a device or FIFO (/dev/null, /dev/stdout) gets the final record only; non-finite "
                                "numbers are written as null")
                    ->type_name("FILE");
  add_checkpoint_options(sub, a, "run");
  sub.add_flag("--json-map", a.json_map,
               "The final --json record has the adaptive map's edges too (\"map\": d rows of bins + 1 unit "
               "coordinates; for 'mcubes plot')");
  a.max_memory_opt = sub.add_option("--max-memory", a.max_memory,
                                      "Refuse a run whose memory estimate exceeds this (bytes, or e.g. 512M, 8G; "
                                      "default: the free memory)");
  sub.add_flag("--dry-run", a.dry_run,
                "Print the plan (grid, evaluations per iteration, memory, estimated time from a quick calibration) "
                "and exit");
  sub.add_flag("--no-progress", a.no_progress, "No progress line on stderr (shown on a terminal by default)");
  sub.add_flag("--quiet,-q", a.quiet, "Print only the final result line");
}

std::string known_names() {
  std::string s;
  for (const suite::entry& e : suite::entries()) s += (s.empty() ? "" : ", ") + e.name;
  return s;
}

int resolve_dim(const integrate_args& a, const suite::entry& e) {
  if (a.dim_opt->count() == 0) return e.default_dim;
  if (e.any_dim) return static_cast<int>(parse_int(a.dim, "--dim for " + e.name, 1, e.max_dim));
  const long long dim = parse_int(a.dim, "--dim", std::numeric_limits<int>::min(), std::numeric_limits<int>::max());
  {
    MCUBES_EXPECTS(dim == e.default_dim, "--dim for ", e.name, " must be ", e.default_dim,
                   " (its dimension is fixed), got ", dim);
  }
  return static_cast<int>(dim);
}

void add_checkpoint_options(CLI::App& sub, integrate_args& a, const std::string& what) {
  a.checkpoint_opt = sub.add_option("--checkpoint", a.checkpoint,
                                    "Write the " + what + "'s checkpoint to FILE (replaced atomically) at iteration boundaries "
                                    "(at most 2 % of the " + what + "'s time, and at least --checkpoint-every seconds apart) "
                                    "and at the end of an interrupted " + what + " (or of one that wrote none): the same command "
                                    "with --resume FILE continues it to the very result of an uninterrupted " + what)
                         ->type_name("FILE");
  a.resume_opt = sub.add_option("--resume", a.resume,
                                "Continue the " + what + " of a checkpoint (of the same integrand, region, dimension" +
                                    (what == "scan" ? ", grid" : "") + " and options; one line names any difference); "
                                "with --checkpoint the same FILE is kept up to date")
                     ->type_name("FILE");
  sub.add_option("--checkpoint-every", a.checkpoint_every, "Seconds between checkpoints, at least")
      ->capture_default_str()
      ->type_name("SECONDS");
  sub.add_flag("--force", a.force,
               "With --resume: accept other --max-iterations, --min-iterations, --rel-tol, --abs-tol or "
               "--max-chi2-dof than the checkpoint's (the rest must match)");
}

void add_devices_option(CLI::App& sub, common_args& c) {
  sub.add_option("--devices", c.devices,
                 "CUDA devices that share each run: ordinals such as 0,1,2 or all (default: device 0); the same "
                 "bits for any list (a single integral splits its sub-cubes, a scan its integrals)")
      ->type_name("LIST|all");
}

void add_vegas_flags(CLI::App& sub, integrate_args& a, const std::string& each) {
  sub.add_option("--rel-tol", a.rel_tol, "Relative tolerance" + each + ": stop when error <= max(abs-tol, rel-tol*|estimate|)")
      ->capture_default_str();
  sub.add_option("--abs-tol", a.abs_tol, "Absolute tolerance" + each)->capture_default_str();
  a.calls_opt = sub.add_option("--calls-per-iter", a.calls,
                               "[paper] Integrand evaluations per iteration" + each +
                                   " (at most; the header shows those used), e.g. 1000000 or 1e6")
                    ->type_name("N");
  a.max_iterations_opt = sub.add_option("--max-iterations", a.max_iterations, "[paper] Iterations at most");
  a.adapt_iterations_opt =
      sub.add_option("--adapt-iterations", a.adapt_iterations, "[paper] Leading iterations that adapt the map");
  a.skip_opt = sub.add_option("--skip", a.skip, "[paper] Leading iterations left out of the weighted estimate");
  sub.add_option("--min-iterations", a.min_iterations, "Accumulated iterations needed before convergence is declared")
      ->capture_default_str();
  sub.add_option("--max-chi2-dof", a.max_chi2_dof, "Convergence also needs chi2/dof <= this")->capture_default_str();
  sub.add_option("--alpha", a.alpha,
                 "Damping exponent of the map adaptation, 0..64 (0 freezes the map), or auto: 1.0 under the adaptive "
                 "stratification, the paper's 1.5 under the uniform one")
      ->capture_default_str();
  sub.add_flag("--symmetric-map", a.symmetric_map,
               "One map shared by every axis, adapted to axis 0's histogram (m-Cubes1D: fully symmetric integrands)");
  sub.add_option("--stratification", a.stratification,
                 "How samples spread over the sub-cubes: adaptive (VEGAS+, Lepage 2021: a quarter uniformly, the rest "
                 "where the sub-cubes varied most; finds peaks off the map's grid) or uniform (m-Cubes, the paper's "
                 "algorithm)")
      ->capture_default_str()
      ->type_name("adaptive|uniform");
  sub.add_option("--beta", a.beta,
                 "VEGAS+ damping exponent: a multiple of 1/16 in [0, 1] (0: no redistribution, 1: the optimum of a "
                 "noiseless allocation)")
      ->capture_default_str();
}

vegas_options resolve_options(const integrate_args& a, const suite::entry& e, int dim) {
  vegas_options o;
  const double big = std::numeric_limits<double>::max();
  o.rel_tol = parse_real(a.rel_tol, "--rel-tol", 0, big);
  o.abs_tol = parse_real(a.abs_tol, "--abs-tol", 0, big);
  o.calls_per_iteration = a.calls_opt->count() ? parse_count(a.calls, "--calls-per-iter") : e.paper.calls;
  auto count = [&](const std::string& text, const char* option, long long min, long long max = max_count_option) {
    return static_cast<int>(parse_int(text, option, min, max));
  };
  o.max_iterations =
      a.max_iterations_opt->count() ? count(a.max_iterations, "--max-iterations", 1) : e.paper.max_iterations;
  o.adapt_iterations =
      a.adapt_iterations_opt->count() ? count(a.adapt_iterations, "--adapt-iterations", 0) : e.paper.adapt_iterations;
  o.skip = a.skip_opt->count() ? count(a.skip, "--skip", 0) : e.paper.skip;
  o.min_iterations = count(a.min_iterations, "--min-iterations", 1);
  o.max_chi2_dof = parse_real(a.max_chi2_dof, "--max-chi2-dof", 0, big);
  o.n_bins = a.bins == "auto" ? 0 : count(a.bins, "--bins", 2, 1 << 20);
  o.alpha = a.alpha == "auto" ? auto_alpha : parse_real(a.alpha, "--alpha", 0, max_alpha);
  MCUBES_EXPECTS(a.stratification == "adaptive" || a.stratification == "uniform",
                 "--stratification must be adaptive (VEGAS+) or uniform (m-Cubes), got '", a.stratification, "'");
  o.stratification = a.stratification == "uniform" ? stratification_mode::uniform : stratification_mode::adaptive;
  o.beta = parse_real(a.beta, "--beta", 0, 1);
  o.symmetric_map = a.symmetric_map;
  const common_values c = parse_common(a.common, a.threads_opt->count() > 0);
  o.seed = c.seed;
  o.threads = c.threads;
  o.cuda_threads_per_block = c.threads_per_block;
  o.backend = c.backend;
  o.devices = devices_of(c);
  try {
    validate(o, dim);
  } catch (const invalid_input& ex) {
    throw invalid_input(with_option_names(ex.what()));
  }
  return o;
}

std::vector<double> resolve_params(const integrate_args& a, const suite::entry& e, int dim) {
  std::vector<double> values = e.default_values();
  std::vector<bool> given(values.size(), false);
  std::string names;
  for (const suite::parameter& p : e.parameters) names += std::string(names.empty() ? "" : ", ") + p.name;
  for (const std::string& text : a.params) {
    const std::size_t eq = text.find('=');
    MCUBES_EXPECTS(eq != std::string::npos && eq > 0, "--param must be NAME=VALUE (e.g. a=2), got '", text, "'");
    const std::string name = text.substr(0, eq);
    MCUBES_EXPECTS(!e.parameters.empty(), "--param ", name, ": integrand ", e.name, " has no parameters");
    std::size_t k = 0;
    while (k < e.parameters.size() && name != e.parameters[k].name) ++k;
    MCUBES_EXPECTS(k < e.parameters.size(), "--param: integrand ", e.name, " has no parameter '", name,
                   "' (its parameters: ", names, ")");
    MCUBES_EXPECTS(!given[k], "--param ", name, " given twice");
    const double big = std::numeric_limits<double>::max();
    values[k] = parse_real(text.substr(eq + 1), "--param " + name, -big, big);
    given[k] = true;
  }
  e.exact_at(dim, values);  // the integrand's checks of its parameters (suite::validate_params) and exact value
  return values;
}

}  // namespace mcubes::cli

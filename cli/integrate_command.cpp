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
#include <cstring>
#include <limits>
#include <fstream>
#include <memory>
#include <thread>
#include <utility>

#include <mcubes/error.hpp>
#include <mcubes/options.hpp>
#include <mcubes/plan.hpp>
#include <mcubes/suite.hpp>

#include <unistd.h>

#include "integrand_dispatch.hpp"
#include "interrupt.hpp"
#include "output_file.hpp"
#include "parse.hpp"
#include "report.hpp"
#include "run_backend.hpp"

namespace mcubes::cli {

namespace {

/// Values of the command line, bound to the CLI11 options as text and read by parse.hpp's one
/// grammar. The Option pointers tell which options were given (those with defaults from the
/// integrand's paper settings).
struct integrate_args {
  std::string name;
  std::string dim;
  std::string rel_tol = "0.001";
  std::string abs_tol = "0";
  std::string calls;
  std::string max_iterations;
  std::string adapt_iterations;
  std::string skip;
  std::string min_iterations = std::to_string(vegas_options{}.min_iterations);
  std::string max_chi2_dof = "2";
  std::string bins = std::to_string(vegas_options{}.n_bins);
  std::string alpha = "1.5";
  bool symmetric_map = false;
  common_args common;
  std::string json;
  std::string max_memory;
  bool quiet = false;
  bool dry_run = false;
  bool no_progress = false;

  CLI::Option* dim_opt = nullptr;
  CLI::Option* calls_opt = nullptr;
  CLI::Option* max_iterations_opt = nullptr;
  CLI::Option* adapt_iterations_opt = nullptr;
  CLI::Option* skip_opt = nullptr;
  CLI::Option* threads_opt = nullptr;
  CLI::Option* json_opt = nullptr;
  CLI::Option* max_memory_opt = nullptr;
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

/// Largest integer an iteration-count option accepts (every count of iterations is an int).
constexpr long long max_count_option = 1000000000;

/// The dimension of the run: --dim if given (checked against the integrand), else its default.
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

/// The options of the run: command-line values, the integrand's paper settings for the options
/// not given. Checks the command-line grammar (parse.hpp); mcubes::validate checks the rest.
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
  o.n_bins = count(a.bins, "--bins", 2, 1 << 20);
  o.alpha = parse_real(a.alpha, "--alpha", 0, max_alpha);
  o.symmetric_map = a.symmetric_map;
  const common_values c = parse_common(a.common, a.threads_opt->count() > 0);
  o.seed = c.seed;
  o.threads = c.threads;
  o.cuda_threads_per_block = c.threads_per_block;
  o.backend = c.backend;
  try {
    validate(o, dim);
  } catch (const invalid_input& ex) {
    throw invalid_input(with_option_names(ex.what()));
  }
  return o;
}

/// Free memory of this machine (MemAvailable of /proc/meminfo), or 0 if unknown.
double available_memory_bytes() {
  std::ifstream in("/proc/meminfo");
  std::string key;
  double kib = 0;
  std::string unit;
  while (in >> key >> kib >> unit)
    if (key == "MemAvailable:") return kib * 1024;
  return 0;
}

/// Evaluations per second of the integrand on the chosen backend, from a quick run of at most
/// 2^16 evaluations per iteration (two iterations; the second, with an adapted map, is timed).
double calibrate(const run_request& rq, runner run) {
  run_request c = rq;
  c.on_iteration = nullptr;
  c.options.calls_per_iteration = std::min<std::uint64_t>(rq.options.calls_per_iteration, 1u << 16);
  c.options.max_iterations = 2;
  c.options.adapt_iterations = 2;
  c.options.skip = 0;
  c.options.min_iterations = 1;
  c.options.rel_tol = 1e-300;  // never converges: both iterations run
  c.options.abs_tol = 0;
  const result r = c.backend.used == backend_kind::cuda ? run_suite_on_cuda(c) : run(c);
  const iteration_record& last = r.records.back();
  return last.seconds > 0 ? static_cast<double>(last.n_eval) / last.seconds : 0.0;
}

/// The progress line on stderr (a terminal only): iteration, estimate +- error, evaluations/s and
/// the time left to max_iterations, redrawn after each iteration once the run has taken a second.
class progress_line {
 public:
  explicit progress_line(bool enabled) : enabled_(enabled) {}
  void update(const result& so_far, int max_iterations) {
    if (!enabled_ || so_far.seconds < 1.0 || so_far.iterations == 0) return;
    const double rate = static_cast<double>(so_far.n_eval) / so_far.seconds;
    const double left = so_far.seconds / so_far.iterations * (max_iterations - so_far.iterations);
    std::fprintf(stderr, "\r\033[K[mcubes] iteration %d/%d  %s  %.3g evaluations/s  at most %s left", so_far.iterations,
                 max_iterations, format_with_error(so_far.estimate, so_far.error).c_str(), rate,
                 format_duration(left).c_str());
    std::fflush(stderr);
    shown_ = true;
  }
  void clear() {
    if (!shown_) return;
    std::fprintf(stderr, "\r\033[K");
    std::fflush(stderr);
    shown_ = false;
  }

 private:
  bool enabled_;
  bool shown_ = false;
};

/// Checks that standard output took everything (a full disk, a closed pipe).
/// @throws mcubes::error naming the reason.
void check_stdout() {
  if (std::fflush(stdout) != 0 || std::ferror(stdout))
    throw error(std::string("cannot write to standard output: ") + std::strerror(errno));
}

int run_integrate(const integrate_args& a) {
  // 1. Everything that is bad input, before anything is printed or run.
  const suite::entry* e = suite::find(a.name);
  MCUBES_EXPECTS(e != nullptr, "unknown integrand '", a.name, "' (known: ", known_names(), ")");
  const runner run = find_runner(e->name);
  if (run == nullptr) throw error("integrand " + e->name + " has no compiled runner in this build");
  const int dim = resolve_dim(a, *e);
  const vegas_options opts = resolve_options(a, *e, dim);
  const double memory_limit = a.max_memory_opt->count() ? static_cast<double>(parse_bytes(a.max_memory, "--max-memory")) : 0;
  const bool json_stdout = a.json_opt->count() && a.json == "-";
  std::unique_ptr<atomic_output_file> json_file;
  if (a.json_opt->count() && !json_stdout) json_file = std::make_unique<atomic_output_file>(a.json);

  // 2. The backend (cuda is a runtime failure in this build, not bad input) and the plan.
  run_request rq;
  rq.entry = e;
  rq.dim = dim;
  rq.options = opts;
  rq.backend = choose_backend(opts.backend, e->name, dim);

  run_report report;
  report.entry = e;
  report.dim = dim;
  report.backend_description = rq.backend.description;
  const bool on_cuda = rq.backend.used == backend_kind::cuda;
  const int cpu_threads = opts.threads > 0 ? opts.threads : static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
  report.threads = on_cuda ? opts.cuda_threads_per_block : cpu_threads;
  report.res.options = opts;
  report.plan = plan_vegas(dim, opts, on_cuda ? 1 : cpu_threads);

  // 3. Resources: memory against the limit, time from a quick calibration.
  const double available = available_memory_bytes();
  const double limit = a.max_memory_opt->count() ? memory_limit : available;
  if (limit > 0 && report.plan.worst_bytes > limit)
    mcubes::detail::throw_invalid("the run may need up to ", format_bytes(report.plan.worst_bytes), " of memory for ",
                                  opts.n_bins, " bins x ", dim, " axes x ", on_cuda ? 1 : cpu_threads,
                                  (on_cuda || cpu_threads == 1) ? " thread" : " threads",
                                  " with every overflow bin level, above the ",
                                  a.max_memory_opt->count() ? "--max-memory limit " : "free memory ",
                                  format_bytes(limit), " (use fewer --bins or --threads)");
  double rate = 0;
  if (a.dry_run || opts.calls_per_iteration > (1u << 17)) rate = calibrate(rq, run);
  const double first_seconds = rate > 0 ? static_cast<double>(report.plan.n_eval) / rate : 0;
  if (a.dry_run) {
    const stratification& g = report.plan.grid;
    std::printf("plan: integrand %s, d = %d, backend %s\n", e->name.c_str(), dim, report.backend_description.c_str());
    std::printf("  sub-cubes m = g^d = %llu^%d = %llu, samples per sub-cube p = %llu, chunks %llu\n",
                static_cast<unsigned long long>(g.g), dim, static_cast<unsigned long long>(g.n_cubes),
                static_cast<unsigned long long>(g.samples_per_cube), static_cast<unsigned long long>(g.n_chunks));
    std::printf("  evaluations per iteration %llu (at most %llu asked), iterations at most %d\n",
                static_cast<unsigned long long>(report.plan.n_eval),
                static_cast<unsigned long long>(opts.calls_per_iteration), opts.max_iterations);
    std::printf("  memory: about %s (%s with every overflow bin level)%s; free: %s\n",
                format_bytes(report.plan.typical_bytes).c_str(), format_bytes(report.plan.worst_bytes).c_str(),
                on_cuda ? (", device " + format_bytes(report.plan.device_bytes)).c_str() : "",
                available > 0 ? format_bytes(available).c_str() : "unknown");
    std::printf("  calibration: %.3g evaluations/s; estimated time per iteration %s, for %d iterations %s\n", rate,
                format_duration(first_seconds).c_str(), opts.max_iterations,
                format_duration(first_seconds * opts.max_iterations).c_str());
    check_stdout();
    return 0;
  }
  if (first_seconds > 60)
    std::fprintf(stderr,
                 "mcubes: warning: the first iteration will take about %s (%llu evaluations at %.3g evaluations/s "
                 "measured); --dry-run shows the plan, Ctrl-C stops at the next iteration boundary\n",
                 format_duration(first_seconds).c_str(), static_cast<unsigned long long>(report.plan.n_eval), rate);

  // 4. The run: each iteration's row printed and flushed as it completes, the JSON record replaced
  // atomically after each, the progress line on a terminal, SIGINT/SIGTERM honoured at the next
  // iteration boundary. With --json - stdout carries only the JSON.
  const bool text = !json_stdout;
  const bool rows = text && !a.quiet;
  if (rows) {
    print_header(stdout, report);
    std::fprintf(stdout, "backend: %s, %d thread%s%s\n", report.backend_description.c_str(), report.threads,
                 report.threads == 1 ? "" : "s", on_cuda ? " per block" : "");
    print_table_header(stdout);
    check_stdout();
  }
  progress_line progress(!a.no_progress && isatty(fileno(stderr)));
  install_interrupt_handlers();
  rq.on_iteration = [&](const iteration_record& rec, const result& so_far) {
    progress.clear();
    if (rows) {
      print_iteration_row(stdout, rec);
      check_stdout();
    }
    if (json_file) {
      run_report partial = report;
      partial.res = so_far;
      partial.run_state = "running";
      json_file->write(to_json(partial).dump(2) + "\n", false);
    }
    progress.update(so_far, opts.max_iterations);
    return interrupt_signal() != 0 ? run_control::stop : run_control::proceed;
  };
  try {
    report.res = on_cuda ? run_suite_on_cuda(rq) : run(rq);
  } catch (const std::exception& ex) {
    progress.clear();
    if (json_file) {  // the record says what happened; an existing file is replaced only by a complete one
      report.run_state = "failed";
      report.failure = ex.what();
      try {
        json_file->write(to_json(report).dump(2) + "\n", true);
      } catch (const std::exception&) {
      }
    }
    throw;
  }
  progress.clear();
  report.signal = report.res.status == status::interrupted ? interrupt_signal() : 0;

  // 5. The result and the final record.
  if (text) {
    if (a.quiet) {
      print_quiet_result(stdout, report);
    } else {
      print_table_legend(stdout);
      print_result(stdout, report);
    }
    check_stdout();
  }
  const std::string dumped = to_json(report).dump(2) + "\n";
  if (json_stdout) {
    std::fputs(dumped.c_str(), stdout);
    check_stdout();
  } else if (json_file) {
    json_file->write(dumped, true);
  }
  if (report.signal != 0) return 128 + report.signal;
  return exit_code(report.res.status);
}

}  // namespace

std::function<int()> add_integrate_command(CLI::App& app) {
  auto a = std::make_shared<integrate_args>();
  CLI::App* sub = app.add_subcommand(
      "integrate",
      "Integrate a test integrand of the suite (see 'mcubes list') with m-Cubes. Prints one row per iteration as it "
      "completes and the result; exit code 0 converged, 1 not converged, not resolved or underflow, 2 bad input, "
      "3 runtime failure, 130/143 interrupted by SIGINT/SIGTERM (at the next iteration boundary; a second signal "
      "stops at once). Options marked [paper] default to the integrand's settings in the m-Cubes paper. Integers are "
      "decimal; counts also take 1e6; reals must be finite.");
  sub->add_option("integrand", a->name, "Name of the integrand (see 'mcubes list')")->required();
  a->dim_opt = sub->add_option("--dim", a->dim,
                               "Dimension d: 1..32 for f1..f6 (default: the integrand's default), fixed for fA (6) "
                               "and fB (9)");
  sub->add_option("--rel-tol", a->rel_tol, "Relative tolerance: stop when error <= max(abs-tol, rel-tol*|estimate|)")
      ->capture_default_str();
  sub->add_option("--abs-tol", a->abs_tol, "Absolute tolerance")->capture_default_str();
  a->calls_opt = sub->add_option("--calls-per-iter", a->calls,
                                 "[paper] Integrand evaluations per iteration (at most; the header shows those used), "
                                 "e.g. 1000000 or 1e6")
                     ->type_name("N");
  a->max_iterations_opt = sub->add_option("--max-iterations", a->max_iterations, "[paper] Iterations at most");
  a->adapt_iterations_opt =
      sub->add_option("--adapt-iterations", a->adapt_iterations, "[paper] Leading iterations that adapt the map");
  a->skip_opt = sub->add_option("--skip", a->skip, "[paper] Leading iterations left out of the weighted estimate");
  sub->add_option("--min-iterations", a->min_iterations,
                  "Accumulated iterations needed before convergence is declared")
      ->capture_default_str();
  sub->add_option("--max-chi2-dof", a->max_chi2_dof, "Convergence also needs chi2/dof <= this")->capture_default_str();
  sub->add_option("--bins", a->bins, "Bins per axis of the adaptive map, 2..2^20")->capture_default_str();
  sub->add_option("--alpha", a->alpha, "Damping exponent of the map adaptation, 0..64 (0 freezes the map)")
      ->capture_default_str();
  sub->add_flag("--symmetric-map", a->symmetric_map, "One map shared by every axis (m-Cubes1D)");
  sub->add_option("--seed", a->common.seed, "Seed of the random streams (an integer in [0, 2^64))")
      ->capture_default_str()
      ->type_name("UINT");
  a->threads_opt = sub->add_option("--threads", a->common.threads,
                                   "CPU threads, at least 1 (default: all cores); never changes the result");
  sub->add_option("--threads-per-block", a->common.threads_per_block,
                  "CUDA threads per block, a power of two in [32, 1024]; never changes the result")
      ->capture_default_str();
  sub->add_option("--backend", a->common.backend,
                  "Who computes the samples: cpu, cuda or auto (cuda when a device is present)")
      ->capture_default_str();
  a->json_opt = sub->add_option("--json", a->json,
                                "Write a JSON record of the run to FILE ('-': stdout, which then carries only the "
                                "JSON), replaced atomically after every iteration (status \"running\" until the end); "
                                "non-finite numbers are written as null")
                    ->type_name("FILE");
  a->max_memory_opt = sub->add_option("--max-memory", a->max_memory,
                                      "Refuse a run whose memory estimate exceeds this (bytes, or e.g. 512M, 8G; "
                                      "default: the free memory)");
  sub->add_flag("--dry-run", a->dry_run,
                "Print the plan (grid, evaluations per iteration, memory, estimated time from a quick calibration) "
                "and exit");
  sub->add_flag("--no-progress", a->no_progress, "No progress line on stderr (shown on a terminal by default)");
  sub->add_flag("--quiet,-q", a->quiet, "Print only the final result line");
  return [a] { return run_integrate(*a); };
}

}  // namespace mcubes::cli

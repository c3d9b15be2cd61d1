/// @file cli/scan_command.cpp
/// `mcubes scan`: the command line (the options of integrate that apply, read by integrate_args'
/// resolvers, and the grid of scan_grid.hpp), the backend, the memory check, one parameter batch
/// through the compile-time dispatch (scan_dispatch.hpp) with a progress line and SIGINT/SIGTERM
/// honoured at round boundaries, and the reports (scan_report.hpp), JSON written atomically
/// (output_file.hpp).
#include "scan_command.hpp"

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <memory>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include <mcubes/algorithm/vegas_batch.hpp>
#include <mcubes/checkpoint.hpp>
#include <mcubes/error.hpp>
#include <mcubes/plan.hpp>
#include <mcubes/suite.hpp>

#include <unistd.h>

#include "integrate_args.hpp"
#include "checkpoint_file.hpp"
#include "integrate_plan.hpp"
#include "interrupt.hpp"
#include "output_file.hpp"
#include "parse.hpp"
#include "progress_line.hpp"
#include "run_backend.hpp"
#include "scan_dispatch.hpp"
#include "scan_grid.hpp"
#include "scan_report.hpp"
#include "user_integrand.hpp"

#include <mcubes/jit.hpp>

namespace mcubes::cli {

namespace {

/// The command line of `mcubes scan`: integrate's values (read by integrate_args.hpp's resolvers,
/// with the same grammar, defaults and messages) and the scan's own.
struct scan_args {
  integrate_args run;            ///< integrand, --dim and the options shared with integrate
  std::vector<std::string> params;  ///< --param NAME=V or NAME=START:STOP:COUNT
  bool json_iterations = false;  ///< --json-iterations
};

/// Checks that standard output took everything (a full disk, a closed pipe).
/// @throws mcubes::error naming the reason.
void check_stdout() {
  if (std::fflush(stdout) != 0 || std::ferror(stdout))
    throw error(std::string("cannot write to standard output: ") + std::strerror(errno));
}

/// The progress line of a scan on stderr (a terminal only): round, integrals finished,
/// evaluations/s; redrawn after each round once the scan has taken a second.
class scan_progress_line : public status_line {
 public:
  using status_line::status_line;
  void update(const batch_progress& p, double seconds) {
    if (!enabled() || seconds < 1.0) return;
    show("[mcubes] round %d  %zu/%zu integrals finished  %.3g evaluations/s", p.round, p.finished, p.integrals,
         static_cast<double>(p.n_eval) / seconds);
  }
};

/// The backend of a scan: choose_backend's answer, then the CUDA scan's own dimensions (it compiles
/// fewer than integrate's: scan_cuda.cu).
/// @throws invalid_input for --backend cuda in a dimension without the CUDA scan; as choose_backend.
backend_choice choose_scan_backend(backend_kind requested, const std::string& name, int dim) {
  MCUBES_EXPECTS(cli_team() == nullptr || requested != backend_kind::cuda,
                 "a scan under mpirun runs on the CPU (the CUDA batch is not split over ranks yet): use --backend cpu");
  backend_choice c = choose_backend(requested, name, dim);
  if (cli_team() != nullptr && c.used == backend_kind::cuda) {
    c.used = backend_kind::cpu;
    c.description = "cpu (auto: a scan under mpirun runs on the CPU)" + ranks_note();
    return c;
  }
  if (c.used != backend_kind::cuda || scan_cuda_supports(name, dim)) return c;
  if (requested == backend_kind::cuda)
    throw invalid_input("the command's CUDA scan is compiled for " + name + " in d = " + scan_cuda_dims() +
                        ", not d = " + std::to_string(dim) + " (use --backend cpu, or the library's vegas_batch)");
  c.used = backend_kind::cpu;
  c.description = "cpu (auto: the CUDA scan is not compiled for d = " + std::to_string(dim) + ")";
  return c;
}

/// `text` as one word of a POSIX shell command line: in single quotes, each ' written '\''.
std::string shell_word(const std::string& text) {
  std::string s = "'";
  for (char c : text) s += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return s + "'";
}

/// The integrand of a scan of --expr/--body (user_integrand.hpp): P from the --param names, its
/// region (--lower/--upper or --region with the same bounds on every axis, which the report's
/// [lower, upper]^d and the rows' integrate commands carry), and the entry, named by the
/// options that give it to `mcubes integrate` ("--expr '<text>' [--lower A --upper B]"), so that
/// a row's reproduce command is that integrate command.
/// @throws invalid_input (one line) for --dim, the --param names (user_parameter_count), no
///         --param, a bad region or one with different bounds per axis.
const suite::entry& user_scan_entry(const scan_args& sa, int dim, std::vector<double>& lower, std::vector<double>& upper) {
  const integrate_args& a = sa.run;
  const bool expr = a.expr_opt->count() > 0;
  const std::size_t n = user_parameter_count(a, sa.params, dim);
  MCUBES_EXPECTS(n > 0, "scan ", expr ? "--expr" : "--body",
                 " needs the parameters to scan: --param p0=START:STOP:COUNT (p[0] of the text), p1=..., ...");
  resolve_region(a, user_entry(a, n), dim, lower, upper);
  std::string head = std::string(expr ? "--expr " : "--body ") + shell_word(expr ? a.expr : a.body);
  if (lower.empty()) return user_entry(a, n, head);
  for (int i = 1; i < dim; ++i)
    MCUBES_EXPECTS(lower[static_cast<std::size_t>(i)] == lower[0] && upper[static_cast<std::size_t>(i)] == upper[0],
                   "scan ", expr ? "--expr" : "--body", ": the region must have the same bounds on every axis "
                   "(--lower A --upper B, or --region A:B), got axis ", i, " [", suite::detail::number_text(lower[i]),
                   ", ", suite::detail::number_text(upper[i]), "] beside [", suite::detail::number_text(lower[0]), ", ",
                   suite::detail::number_text(upper[0]), "]");
  head += " --lower " + suite::detail::number_text(lower[0]) + " --upper " + suite::detail::number_text(upper[0]);
  return user_entry(a, n, head, lower[0], upper[0]);
}

/// The JSON record of the scan: scan_to_json, and for --expr/--body the integrand's name ("expr",
/// "body"), its source {kind, text} and compilation (user_integrand_json); for a suite integrand
/// compiled at run time (`compiled`) its compilation.
std::string scan_json_text(const scan_report& report, const std::optional<user_integrand_report>& user,
                           const std::optional<user_integrand_report>& compiled) {
  nlohmann::ordered_json j = scan_to_json(report);
  if (user) {
    j["integrand"]["name"] = user->option.substr(2);
    const nlohmann::ordered_json u = user_integrand_json(*user);
    for (const auto& [key, value] : u.items()) j[key] = value;
  }
  if (compiled) j["compile"] = user_integrand_json(*compiled)["compile"];
  return j.dump(2) + "\n";
}

/// Warns on stderr when a round of the scan (one pass of each of the K integrals, n_eval
/// evaluations each) will take more than a minute, from a quick calibration as integrate's: a batch
/// of min(K, 64) copies of the first point, two iterations of at most 2^16 evaluations each, timed
/// whole (run state and adaptation included), scaled to K integrals of n_eval evaluations. Made
/// only for rounds above 2^20 evaluations. A signal during the calibration stops it (no warning).
void warn_long_rounds(const scan_request& rq, scan_runner run, std::uint64_t K, std::uint64_t n_eval) {
  const double round_evals = static_cast<double>(K) * static_cast<double>(n_eval);
  if (round_evals <= static_cast<double>(1u << 20)) return;
  scan_request c = rq;
  const std::vector<std::vector<double>> copies(std::min<std::uint64_t>(K, 64), rq.points->front());
  c.points = &copies;
  c.on_round = nullptr;
  c.resume = {};
  c.options = calibration_options(rq.options);
  const auto t0 = std::chrono::steady_clock::now();
  const std::vector<result> rs = run(c);
  const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  if (rs.empty() || rs.front().records.size() < 2 || !(seconds > 0)) return;
  const double calls = static_cast<double>(rs.front().records.back().n_eval);
  const double per_integral_round = seconds / (2.0 * static_cast<double>(copies.size()));  // two rounds
  const double round_seconds =
      static_cast<double>(K) * per_integral_round * std::max(1.0, static_cast<double>(n_eval) / calls);
  if (round_seconds > 60)
    std::fprintf(stderr,
                 "mcubes: warning: each round of the scan will take about %s (K = %llu integrals x %llu evaluations, "
                 "from a calibration); Ctrl-C stops the scan and keeps the completed iterations\n",
                 format_duration(round_seconds).c_str(), static_cast<unsigned long long>(K),
                 static_cast<unsigned long long>(n_eval));
}

int run_scan(const scan_args& sa) {
  const integrate_args& a = sa.run;
  // 1. Everything that is bad input, before anything is printed or run.
  const bool user = is_user_integrand(a);  // --expr / --body (user_integrand.hpp)
  MCUBES_EXPECTS(user || a.name_opt->count() > 0,
                 "an integrand is required: a suite NAME with parameters (f1..f6, see 'mcubes list'), or --expr/--body");
  MCUBES_EXPECTS(!user || a.name_opt->count() == 0, "give the integrand once: a suite NAME ('", a.name,
                 "') or --expr/--body, not both");
  MCUBES_EXPECTS(user || (a.region_opt->count() == 0 && a.lower_opt->count() == 0 && a.upper_opt->count() == 0 &&
                          a.compile_timeout_opt->count() == 0),
                 "--region, --lower, --upper and --compile-timeout apply to --expr and --body only");
  std::vector<double> lower, upper;
  const int user_dim = user ? resolve_user_dim(a) : 0;
  const suite::entry* e = user ? &user_scan_entry(sa, user_dim, lower, upper) : suite::find(a.name);
  MCUBES_EXPECTS(e != nullptr, "unknown integrand '", a.name, "' (known: ", known_names(), ")");
  const int dim = user ? user_dim : resolve_dim(a, *e);
  const vegas_options opts = resolve_options(a, *e, dim);
  const scan_grid grid = parse_scan_grid(sa.params, *e);
  MCUBES_EXPECTS(!e->parameters.empty(), "integrand ", e->name,
                 " has no parameters to scan (f1..f6 have a and u; use 'mcubes integrate ", e->name, "')");
  // A suite integrand outside suite::precompiled_dims is compiled at run time (the same bits).
  const bool suite_jit = !user && suite_compiled_at_run_time(*e, dim);
  if (cli_team() != nullptr) {  // under mpirun with several ranks (mpi_session.hpp): what is not split yet
    MCUBES_EXPECTS(!user && !suite_jit,
                   "integrands compiled at run time (--expr, --body, or a suite integrand outside its precompiled "
                   "dimensions) do not run under mpirun yet: run them in one process");
  }
  const double memory_limit = a.max_memory_opt->count() ? static_cast<double>(parse_bytes(a.max_memory, "--max-memory")) : 0;
  const double available = available_memory_bytes();
  const double limit = a.max_memory_opt->count() ? memory_limit : available;
  const int cpu_threads = opts.threads > 0 ? opts.threads : static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
  const vegas_plan plan = plan_vegas(dim, opts, cpu_threads);
  // The host memory against the limit: first what any backend needs (the results), before the grid
  // is expanded; the CPU's maps and bins once the backend is known.
  const auto check_memory = [&](double bytes, bool on_cuda) {
    if (limit > 0 && bytes > limit)
      mcubes::detail::throw_invalid(
          "the scan needs about ", format_bytes(bytes), " of memory for K = ", grid.size, " integrals x (",
          on_cuda ? "" : "8 d (n_bins + 1) map + 16 d n_bins (1 + W) bin sums + ",
          "max_iterations records) with d = ", dim, ", n_bins = ", map_bins_for(opts), ", above the ",
          a.max_memory_opt->count() ? "--max-memory limit " : "free memory ", format_bytes(limit),
          " (use fewer --bins or --max-iterations, a coarser grid, or split the scan)");
  };
  check_memory(scan_host_bytes(grid.size, dim, opts, plan, cpu_threads, true, sa.json_iterations), true);
  std::vector<double> exact;
  const std::vector<std::vector<double>> points = check_scan_points(grid, dim, exact);
  const bool json_stdout = a.json_opt->count() && a.json == "-";
  std::unique_ptr<atomic_output_file> json_file;
  if (a.json_opt->count() && !json_stdout) json_file = std::make_unique<atomic_output_file>(a.json);
  // --checkpoint / --resume (checkpoint.hpp): the scan's identity (the suite integrand, or the whole
  // text of --expr / --body; its region and dimension, the options and every grid point's
  // parameters), the checkpoint read and compared before anything runs.
  const bool checkpoints = a.checkpoint_opt->count() > 0 || a.resume_opt->count() > 0;
  MCUBES_EXPECTS(!a.force || a.resume_opt->count(), "--force applies to --resume");
  const double checkpoint_every = parse_real(a.checkpoint_every, "--checkpoint-every", 0, 1e9);
  std::unique_ptr<atomic_output_file> checkpoint_file;
  if (a.checkpoint_opt->count()) checkpoint_file = std::make_unique<atomic_output_file>(a.checkpoint, "--checkpoint");
  MCUBES_EXPECTS(!checkpoint_file || !json_file || checkpoint_file->path() != json_file->path(),
                 "--checkpoint and --json name the same file");
  checkpoint problem;
  if (checkpoints) {
    problem.integrand = !user ? "suite " + e->name : a.expr_opt->count() ? "expr " + a.expr : "body " + a.body;
    problem.dim = dim;
    problem.lower.assign(static_cast<std::size_t>(dim), e->lower);
    problem.upper.assign(static_cast<std::size_t>(dim), e->upper);
    problem.options = opts;
    problem.parameters = points;
  }
  std::optional<checkpoint> resumed;
  if (a.resume_opt->count()) {
    resumed = load_checkpoint(a.resume);
    const std::string diff = checkpoint_difference(*resumed, problem.integrand, dim, problem.lower, problem.upper, opts,
                                                   a.force, &problem.parameters);
    MCUBES_EXPECTS(diff.empty(), "--resume ", a.resume, ": cannot continue this scan: ", diff);
  }
  backend_choice backend =  // may be a runtime failure
      user || suite_jit ? choose_user_backend(opts.backend) : choose_scan_backend(opts.backend, e->name, dim);
  check_devices(opts.devices, backend);  // several: the integrals split over the devices (vegas_batch_on_devices)
  const bool on_cuda = backend.used == backend_kind::cuda;
  // The backend is chosen once; its runner (compiled ahead of time, or the run-time compiled object).
  const scan_runner run = user || suite_jit ? &run_user_scan : find_scan_runner(e->name, backend.used);
  if (run == nullptr) throw error("integrand " + e->name + " has no compiled scan runner in this build");
  std::shared_ptr<const jit::compiled_integrand> compiled;
  std::optional<user_integrand_report> user_report;
  if (user) {  // compiled for a batch (or found in the cache) before anything is printed
    install_interrupt_handlers();  // Ctrl-C stops the compiler
    try {
      compiled = compile_user_integrand(a, dim, e->parameters.size(), true, backend,
                                        !a.no_progress && isatty(fileno(stderr)));
    } catch (const jit::compile_cancelled&) {
      std::fprintf(stderr, "mcubes: interrupted during the compilation of the integrand\n");
      return 128 + interrupt_signal();
    }
    user_report = report_of(a, *compiled);
  }
  std::optional<integrand_guard> guard;  // a crash or an exit() of the compiled integrand is reported
  if (user || suite_jit) guard.emplace();

  scan_report report;
  report.entry = e;
  report.dim = dim;
  report.grid = &grid;
  report.points = &points;
  report.exact = &exact;
  report.options = opts;
  report.backend = on_cuda ? "cuda" : "cpu";
  report.backend_description = backend.description;
  report.threads = on_cuda ? opts.cuda_threads_per_block : cpu_threads;
  report.plan = on_cuda ? plan_vegas(dim, opts, 1) : plan;
  report.host_bytes = scan_host_bytes(grid.size, dim, opts, report.plan, cpu_threads, on_cuda, sa.json_iterations);
  report.device_bytes = on_cuda ? scan_device_bytes(grid.size, dim, map_bins_for(opts)) : 0;
  if (on_cuda && opts.stratification == stratification_mode::adaptive)  // VEGAS+: two doubles per sub-cube and integral
    report.device_bytes += 16.0 * static_cast<double>(grid.size) * static_cast<double>(report.plan.grid.n_cubes);
  report.json_iterations = sa.json_iterations;
  check_memory(report.host_bytes, on_cuda);
  std::optional<user_integrand_report> compiled_report;
  if (suite_jit) {  // after the checks: a refused scan compiles nothing
    install_interrupt_handlers();
    try {
      compiled = compile_suite_integrand(*e, dim, true, backend, !a.no_progress && isatty(fileno(stderr)));
    } catch (const jit::compile_cancelled&) {
      std::fprintf(stderr, "mcubes: interrupted during the compilation of the integrand\n");
      return 128 + interrupt_signal();
    }
    compiled_report = report_of(*e, *compiled);
  }

  // 2. The header, then the batch: one progress line per round on a terminal, the JSON record
  // (status "running", the progress; a file) replaced atomically by the rule of record_schedule
  // (output_file.hpp; a failing write warns once and the scan goes on), SIGINT/SIGTERM honoured at
  // the next round boundary. An integral that fails leaves the batch (vegas_batch_with's failures:
  // the others' bits are unchanged) and gets a "failed" row. With --json - stdout carries only the
  // JSON.
  const bool text = !json_stdout;
  if (text && !a.quiet) {
    print_scan_header(stdout, report);
    if (user_report) print_compile_line(stdout, *user_report);
    if (compiled_report) print_compile_line(stdout, *compiled_report);
    check_stdout();
  }
  scan_request rq;
  rq.entry = e;
  rq.dim = dim;
  rq.points = &points;
  rq.options = opts;
  rq.backend = backend;
  rq.compiled = compiled.get();
  rq.lower = lower;
  rq.upper = upper;
  batch_failures failures;
  rq.failures = &failures;
  if (resumed) rq.resume.from = &resumed->members;
  // The schedule of checkpoint_saver (as integrate's): at most 2 % of the scan's time, and
  // --checkpoint-every; a failing write warns once and the scan goes on, except the last.
  std::optional<checkpoint_saver> saver;
  if (checkpoint_file) {
    open_checkpoints(saver, std::move(problem), *checkpoint_file, checkpoint_every, "scan");
    rq.resume.save = saver->batch_save();
  }
  if (resumed && text && !a.quiet) {
    std::size_t done = 0;
    for (const vegas_progress& p : resumed->members) done += p.records.size();
    std::fprintf(stdout, "resumed from %s: %zu completed iteration%s of %zu integrals\n", a.resume.c_str(), done,
                 done == 1 ? "" : "s", resumed->members.size());
  }
  scan_progress_line progress(!a.no_progress && isatty(fileno(stderr)));
  // A signal stops the scan (interrupt.hpp): the CPU backend abandons the round under way; a CUDA
  // round, or an integrand call that does not return, is waited for (the notice says so).
  install_interrupt_handlers();
  rq.options.stop = &interrupt_stop();
  std::optional<pass_stop_scope> running(std::in_place, on_cuda ? pass_stop::at_end : pass_stop::abandoned);
  warn_long_rounds(rq, run, grid.size, report.plan.n_eval);
  if (saver) saver->start();
  const auto start = std::chrono::steady_clock::now();
  const auto elapsed = [&] { return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count(); };
  running_record record;
  rq.on_round = [&](const batch_progress& p) {
    report.progress = p;
    report.seconds = elapsed();
    progress.update(p, report.seconds);
    if (json_file)
      record.step(*json_file, elapsed, [&] {
        scan_report partial = report;
        partial.run_state = "running";
        return scan_json_text(partial, user_report, compiled_report);
      }, "scan");
    return interrupt_signal() != 0 ? run_control::stop : run_control::proceed;
  };
  try {
    try {
      report.results = run(rq);
    } catch (const batch_error& ex) {  // name the point of the failing integral
      const std::string what = ex.what();
      const std::size_t colon = what.find(": ");
      throw error("integral " + std::to_string(ex.integral()) + " of the scan (" +
                  suite::params_text(*e, points[ex.integral()]) + ", seed " +
                  std::to_string(batch_seed(opts.seed, ex.integral())) +
                  "): " + (colon == std::string::npos ? what : what.substr(colon + 2)));
    }
  } catch (const std::exception& ex) {
    progress.clear();
    if (json_file) {  // the record says what happened; an existing file is replaced only by a complete one
      report.run_state = "failed";
      report.failure = ex.what();
      report.seconds = elapsed();
      try {
        json_file->write(scan_json_text(report, user_report, compiled_report), true);
      } catch (const std::exception&) {
      }
    }
    throw;
  }
  running.reset();
  progress.clear();
  report.seconds = elapsed();
  report.progress.finished = report.results.size();
  for (std::size_t k = 0; k < failures.size(); ++k) {
    if (!failures[k]) continue;
    report.failures.resize(report.results.size());
    try {
      std::rethrow_exception(failures[k]);
    } catch (const std::exception& ex) {
      report.failures[k] = ex.what();
    } catch (...) {
      report.failures[k] = "an exception that is not a std::exception";
    }
  }
  bool interrupted = false;
  for (std::size_t k = 0; k < report.results.size(); ++k)  // a failed integral's status is interrupted too
    interrupted = interrupted ||
                  (report.results[k].status == status::interrupted && (k >= failures.size() || !failures[k]));
  report.signal = interrupted ? interrupt_signal() : 0;

  // 3. The rows in grid order, the summary, the final record.
  if (text) {
    if (!a.quiet) {
      print_scan_row_header(stdout, report);
      for (std::uint64_t k = 0; k < report.results.size(); ++k) print_scan_row(stdout, report, k);
    }
    print_scan_summary(stdout, report);
    check_stdout();
  }
  const std::string dumped = scan_json_text(report, user_report, compiled_report);
  if (json_stdout) {
    std::fputs(dumped.c_str(), stdout);
    check_stdout();
  } else if (json_file) {
    json_file->write(dumped, true);
  }
  if (report.signal != 0) return 128 + report.signal;
  if (const std::size_t n = failed_count(report); n > 0)
    std::fprintf(stderr, "mcubes: error: %zu of %zu integrals failed (status \"failed\"; the others are complete)\n", n,
                 report.results.size());
  return scan_exit_code(report);
}

/// Registers the options of `scan` on `sub`: integrate's (bound to sa.run, whose resolvers read
/// them) minus those that do not apply (--dry-run), plus the grid and --json-iterations.
void add_scan_options(CLI::App& sub, scan_args& sa) {
  integrate_args& a = sa.run;
  a.name_opt = sub.add_option("integrand", a.name,
                              "Name of a suite integrand with parameters: f1..f6 (see 'mcubes list'); or --expr / --body");
  a.expr_opt = sub.add_option("--expr", a.expr,
                              "The integrand as a C++ expression of x[0] .. x[D-1], D and the parameters p[0], p[1], "
                              "... scanned by --param p0=START:STOP:COUNT ..., e.g. 'exp(-p[0]*x[0])'; needs --dim. "
                              "Compiled at run time (cached), with your rights")
                   ->type_name("EXPR");
  a.body_opt = sub.add_option("--body", a.body,
                              "The integrand as the body of a C++ function of x, D and p that returns its value; "
                              "needs --dim")
                   ->type_name("BODY");
  a.region_opt = sub.add_option("--region", a.region,
                                "--expr/--body: the region, one LOWER:UPPER pair for every axis (a scan's region has "
                                "the same bounds on every axis; default [0,1]^d)")
                     ->type_name("A:B");
  a.lower_opt = sub.add_option("--lower", a.lower, "--expr/--body: lower bound of every axis (with --upper)")->type_name("A");
  a.upper_opt = sub.add_option("--upper", a.upper, "--expr/--body: upper bound of every axis (with --lower)")->type_name("B");
  a.compile_timeout_opt = sub.add_option("--compile-timeout", a.compile_timeout,
                                         "Stop the compiler of --expr/--body after this many seconds")
                              ->capture_default_str()
                              ->type_name("SECONDS");
  a.dim_opt = sub.add_option("--dim", a.dim, "Dimension d: 1..32 (default: the integrand's default; required with --expr/--body)");
  sub.add_option("--param", sa.params,
                 "A parameter's values: NAME=V (one value) or NAME=START:STOP:COUNT (COUNT values from START to STOP "
                 "inclusive, linearly spaced; START <= STOP). Repeat for each parameter; the grid is the product in the "
                 "order given, the last varying fastest; the others keep their defaults (see 'mcubes list'). "
                 "--expr/--body: the names are p0, p1, ... (p[0], p[1], ... of the text), each one given")
      ->type_name("NAME=RANGE")
      ->allow_extra_args(false);
  add_vegas_flags(sub, a, " of each integral");
  sub.add_option("--bins", a.bins,
                 "Bins per axis of each integral's map, 2..2^20 (integrate's default, so that integrate reproduces a "
                 "row without --bins). Memory per integral, d axes, n bins: CPU 8 d (n+1) + 16 d n (1 + threads) "
                 "bytes at most; GPU 8 d (n+1) + 16 d n bytes (0.1 MB for d = 8, n = 500; 256 d n more for an integral whose terms reach the "
                 "overflow bin levels): fewer bins for large K")
      ->capture_default_str();
  add_checkpoint_options(sub, a, "scan");
  sub.add_option("--seed", a.common.seed,
                 "Seed of the scan: integral k uses batch_seed(SEED, k), reported in its row (an integer in [0, 2^64))")
      ->capture_default_str()
      ->type_name("UINT");
  a.threads_opt = sub.add_option("--threads", a.common.threads,
                                 "CPU threads, at least 1 (default: all cores); never changes the results");
  sub.add_option("--threads-per-block", a.common.threads_per_block,
                 "CUDA threads per block, a power of two in [32, 1024]; never changes the results")
      ->capture_default_str();
  sub.add_option("--backend", a.common.backend, "Who computes the samples: cpu, cuda or auto (cuda when a device is present)")
      ->capture_default_str();
  add_devices_option(sub, a.common);
  a.json_opt = sub.add_option("--json", a.json,
                              "Write a JSON record of the scan to FILE ('-': stdout, which then carries only the JSON): "
                              "one object per grid point in 'results'; a file is replaced atomically during the scan (status "
                              "\"running\"; at the first round, then at most once a second) and at the end; non-finite "
                              "numbers are written as null")
                   ->type_name("FILE");
  sub.add_flag("--json-iterations", sa.json_iterations, "Add every integral's iterations to the JSON record");
  a.max_memory_opt = sub.add_option("--max-memory", a.max_memory,
                                    "Refuse a scan whose host memory estimate exceeds this (bytes, or e.g. 512M, 8G; "
                                    "default: the free memory)");
  sub.add_flag("--no-progress", a.no_progress, "No progress line on stderr (shown on a terminal by default)");
  sub.add_flag("--quiet,-q", a.quiet, "Print only the summary line");
}

}  // namespace

std::function<int()> add_scan_command(CLI::App& app) {
  auto sa = std::make_shared<scan_args>();
  CLI::App* sub = app.add_subcommand(
      "scan",
      "Integrate a suite integrand (f1..f6), or one given as C++ text with --expr or --body and parameters p[j], at "
      "every point of a parameter grid, --param NAME=START:STOP:COUNT (p0=START:STOP:COUNT for p[0]), in one "
      "batch: every integral has its own map, iterations and result, and integral k the seed batch_seed(seed, k), so "
      "'mcubes integrate NAME --param ... --seed SEED' (--expr ... for a text) reproduces its row bit for bit. Prints one row per grid point "
      "(parameters, estimate, error, exact value, pull, status, iterations, seed); exit code 0 all converged, 1 some "
      "did not, 2 bad input, 3 runtime failure (or an integral failed: its row says why, the others are kept), "
      "130/143 interrupted by SIGINT/SIGTERM (at the next round; completed "
      "iterations kept). Options marked [paper] default to the integrand's settings in the m-Cubes paper.");
  add_scan_options(*sub, *sa);
  return [sa] { return run_scan(*sa); };
}

}  // namespace mcubes::cli

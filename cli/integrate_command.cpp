/// @file cli/integrate_command.cpp
/// `mcubes integrate`: the run, in order: the command line (integrate_args.hpp), the backend and
/// the plan (integrate_plan.hpp), the iterations through the compile-time dispatch
/// (integrand_dispatch.hpp) with the progress line (progress_line.hpp), and the reports
/// (report.hpp), JSON written atomically (output_file.hpp).
#include "integrate_command.hpp"

#include <algorithm>
#include <chrono>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <memory>
#include <functional>
#include <optional>
#include <thread>

#include <mcubes/error.hpp>
#include <mcubes/jit.hpp>
#include <mcubes/options.hpp>
#include <mcubes/checkpoint.hpp>
#include <mcubes/plan.hpp>
#include <mcubes/suite.hpp>

#include <unistd.h>

#include "integrand_dispatch.hpp"
#include "integrate_args.hpp"
#include "integrate_plan.hpp"
#include "checkpoint_file.hpp"
#include "interrupt.hpp"
#include "mpi_session.hpp"
#include "npy_file.hpp"
#include "output_file.hpp"
#include "parse.hpp"
#include "progress_line.hpp"
#include "report.hpp"
#include "run_backend.hpp"
#include "user_integrand.hpp"

namespace mcubes::cli {

namespace {

/// Seconds on the monotonic clock (record_schedule's clock).
double seconds_now() {
  return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

/// Checks that standard output took everything (a full disk, a closed pipe).
/// @throws mcubes::error naming the reason.
void check_stdout() {
  if (std::fflush(stdout) != 0 || std::ferror(stdout))
    throw error(std::string("cannot write to standard output: ") + std::strerror(errno));
}

/// The options `sample` adds to integrate's.
struct sample_args {
  std::string points, seed, npy;
  CLI::Option* seed_opt = nullptr;
};

int run_integrate(const integrate_args& a, const sample_args* sample = nullptr) {
  // 1. Everything that is bad input, before anything is printed or run.
  const bool user = is_user_integrand(a);  // --expr / --body (user_integrand.hpp)
  MCUBES_EXPECTS(user || a.name_opt->count() > 0,
                 "an integrand is required: a suite NAME (see 'mcubes list'), --expr EXPR or --body BODY");
  const int user_dim = user ? resolve_user_dim(a) : 0;
  // --expr/--body: the parameters p0, p1, ... (p[0], p[1], ... of the text) become the entry's
  const std::size_t n_user_params = user ? user_parameter_count(a, a.params, user_dim) : 0;
  const suite::entry* e = user ? &user_entry(a, n_user_params) : suite::find(a.name);
  MCUBES_EXPECTS(e != nullptr, "unknown integrand '", a.name, "' (known: ", known_names(), ")");
  MCUBES_EXPECTS(user || a.compile_timeout_opt->count() == 0, "--compile-timeout applies to --expr and --body only");
  const int dim = user ? user_dim : resolve_dim(a, *e);
  // A suite integrand outside suite::precompiled_dims is compiled at run time (the same bits).
  const bool suite_jit = !user && suite_compiled_at_run_time(*e, dim);
  if (cli_team() != nullptr) {  // under mpirun with several ranks (mpi_session.hpp): what is not split yet
    MCUBES_EXPECTS(!user && !suite_jit,
                   "integrands compiled at run time (--expr, --body, or a suite integrand outside its precompiled "
                   "dimensions) do not run under mpirun yet: run them in one process");
    MCUBES_EXPECTS(sample == nullptr, "mcubes sample does not run under mpirun yet: run it in one process");
  }
  const vegas_options opts = resolve_options(a, *e, dim);
  const std::vector<double> params = resolve_params(a, *e, dim);
  const double memory_limit = a.max_memory_opt->count() ? static_cast<double>(parse_bytes(a.max_memory, "--max-memory")) : 0;
  std::vector<double> lower, upper;
  resolve_region(a, *e, dim, lower, upper);
  const bool json_stdout = a.json_opt->count() && a.json == "-";
  std::unique_ptr<atomic_output_file> json_file;
  if (a.json_opt->count() && !json_stdout) json_file = std::make_unique<atomic_output_file>(a.json);
  MCUBES_EXPECTS(!a.json_map || a.json_opt->count(), "--json-map adds the map to the --json record: give --json FILE");
  // --checkpoint / --resume: the problem's identity, the checkpoint read and compared before anything runs
  const bool checkpoints = a.checkpoint_opt->count() > 0 || a.resume_opt->count() > 0;
  MCUBES_EXPECTS(!a.force || a.resume_opt->count(), "--force applies to --resume");
  const double checkpoint_every = parse_real(a.checkpoint_every, "--checkpoint-every", 0, 1e9);
  std::unique_ptr<atomic_output_file> checkpoint_file;
  if (a.checkpoint_opt->count()) checkpoint_file = std::make_unique<atomic_output_file>(a.checkpoint, "--checkpoint");
  checkpoint problem;  // the identity every checkpoint of this run carries
  if (checkpoints) {
    // the fingerprint: the suite's name, or the whole text of --expr / --body; then the parameters
    problem.integrand = !user ? "suite " + e->name : a.expr_opt->count() ? "expr " + a.expr : "body " + a.body;
    for (double p : params) {  // every bit of the parameters
      char text[40];
      std::snprintf(text, sizeof text, " %.17g", p);
      problem.integrand += text;
    }
    problem.dim = dim;
    for (int j = 0; j < dim; ++j) {
      problem.lower.push_back(lower.empty() ? e->lower : lower[static_cast<std::size_t>(j)]);
      problem.upper.push_back(upper.empty() ? e->upper : upper[static_cast<std::size_t>(j)]);
    }
    problem.options = opts;
  }
  std::optional<checkpoint> resumed;
  if (a.resume_opt->count()) {
    resumed = load_checkpoint(a.resume);
    const std::string diff =
        checkpoint_difference(*resumed, problem.integrand, dim, problem.lower, problem.upper, opts, a.force);
    MCUBES_EXPECTS(diff.empty(), "--resume ", a.resume, ": cannot continue this run: ", diff);
  }
  std::uint64_t sample_points = 0, sample_seed = opts.seed;
  std::unique_ptr<atomic_output_file> npy_file;
  if (sample != nullptr) {
    sample_points = parse_count(sample->points, "--points", 1);
    if (sample->seed_opt->count()) sample_seed = parse_count(sample->seed, "--sample-seed");
    MCUBES_EXPECTS(sample->npy != "-", "--npy needs a file (the points are binary; standard output carries the report)");
    npy_file = std::make_unique<atomic_output_file>(sample->npy, "--npy");
    MCUBES_EXPECTS(!json_file || npy_file->path() != json_file->path(), "--npy and --json name the same file");
  }

  // 2. The backend (cuda is a runtime failure in this build, not bad input) and the plan.
  run_request rq;
  rq.entry = e;
  rq.dim = dim;
  rq.params = params;
  rq.options = opts;
  rq.backend = user || suite_jit ? choose_user_backend(opts.backend) : choose_backend(opts.backend, e->name, dim);
  check_devices(opts.devices, rq.backend);
  if (cli_team() != nullptr && rq.backend.used == backend_kind::cuda) rq.options.device = cli_rank_device();
  // The backend is chosen once; its runner (compiled ahead of time, or the run-time compiled object).
  const runner run = user || suite_jit ? &run_user_integrand : find_runner(e->name, rq.backend.used);
  if (run == nullptr) throw error("integrand " + e->name + " has no compiled runner in this build");
  rq.lower = lower;
  rq.upper = upper;
  sampling_density trained;
  if (sample != nullptr || a.json_map) rq.trained = &trained;
  if (resumed) rq.resume.from = &resumed->progress;
  // The schedule of checkpoint_saver (checkpoint.hpp): at most 2 % of the run's time, and
  // --checkpoint-every; a failing write warns once and the run goes on, except the last.
  std::optional<checkpoint_saver> saver;
  std::vector<std::unique_ptr<checkpoint_saver>> member_savers;  // --devices: the other devices' (they write nothing)
  if (checkpoint_file) {
    open_checkpoints(saver, problem, *checkpoint_file, checkpoint_every, "run");
    rq.resume.save = saver->save();
    if (opts.devices.size() > 1) {  // every device's saver joins the team; the first one's decides and writes
      member_savers.resize(opts.devices.size());
      rq.resume_of_member = [&](int m, const communicator& team) {
        vegas_resumption r = rq.resume;
        if (m > 0) {
          member_savers[static_cast<std::size_t>(m)] = std::make_unique<checkpoint_saver>(
              problem, [](const std::string&, bool) {}, checkpoint_schedule{}, [] { return interrupt_signal() != 0; });
          r.save = member_savers[static_cast<std::size_t>(m)]->save();
        }
        (m == 0 ? *saver : *member_savers[static_cast<std::size_t>(m)]).set_team(&team);
        return r;
      };
    }
  }

  run_report report;
  report.entry = e;
  report.dim = dim;
  report.params = params;
  report.backend_description = rq.backend.description;
  report.lower = lower;
  report.upper = upper;
  std::shared_ptr<const jit::compiled_integrand> compiled;
  if (user) {  // compiled (or found in the cache) before the plan: the calibration runs it
    install_interrupt_handlers();  // Ctrl-C stops the compiler
    try {
      compiled = compile_user_integrand(a, dim, n_user_params, false, rq.backend,
                                        !a.no_progress && isatty(fileno(stderr)));
    } catch (const jit::compile_cancelled&) {
      std::fprintf(stderr, "mcubes: interrupted during the compilation of the integrand\n");
      return 128 + interrupt_signal();
    }
    rq.compiled = compiled.get();
    report.user = report_of(a, *compiled);
  }
  std::optional<integrand_guard> guard;  // a crash or an exit() of the compiled integrand is reported
  if (user || suite_jit) guard.emplace();
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
                                  map_bins_for(opts), " bins x ", dim, " axes x ", on_cuda ? 1 : cpu_threads,
                                  (on_cuda || cpu_threads == 1) ? " thread" : " threads",
                                  " with every overflow bin level, above the ",
                                  a.max_memory_opt->count() ? "--max-memory limit " : "free memory ",
                                  format_bytes(limit), " (use fewer --bins or --threads)");
  // From here a signal stops the run (interrupt.hpp): the CPU backend abandons a pass between
  // tiles; a CUDA pass, or an integrand call that does not return, is waited for (the notice says so).
  install_interrupt_handlers();
  if (suite_jit) {  // after the checks of the plan: a refused run compiles nothing
    try {
      compiled = compile_suite_integrand(*e, dim, false, rq.backend, !a.no_progress && isatty(fileno(stderr)));
    } catch (const jit::compile_cancelled&) {
      std::fprintf(stderr, "mcubes: interrupted during the compilation of the integrand\n");
      return 128 + interrupt_signal();
    }
    rq.compiled = compiled.get();
    report.compiled = report_of(*e, *compiled);
  }
  rq.options.stop = &interrupt_stop();
  const pass_stop how = on_cuda ? pass_stop::at_end : pass_stop::abandoned;
  double rate = 0;
  if (a.dry_run || opts.calls_per_iteration > (1u << 17)) {
    const pass_stop_scope calibrating(how);
    rate = calibrate(rq, run);
  }
  const double first_seconds = rate > 0 ? static_cast<double>(report.plan.n_eval) / rate : 0;
  if (a.dry_run) {
    if (report.user) print_compile_line(stdout, *report.user);
    if (report.compiled) print_compile_line(stdout, *report.compiled);
    print_plan(report, opts, on_cuda, available, rate);
    check_stdout();
    return 0;
  }
  if (first_seconds > 60)
    std::fprintf(stderr,
                 "mcubes: warning: the first iteration will take about %s (%llu evaluations at %.3g evaluations/s "
                 "measured); --dry-run shows the plan, Ctrl-C stops the run and keeps the completed iterations\n",
                 format_duration(first_seconds).c_str(), static_cast<unsigned long long>(report.plan.n_eval), rate);

  // 4. The run: each iteration's row printed and flushed as it completes, the JSON record (a file)
  // replaced atomically by the rule of record_schedule (output_file.hpp; a failing write warns once
  // and the run goes on), the progress line on a terminal, SIGINT/SIGTERM honoured at once (the
  // pass under way abandoned on the CPU) or at the end of the pass. With --json - stdout carries
  // only the JSON.
  const bool text = !json_stdout;
  const bool rows = text && !a.quiet;
  if (rows) {
    print_header(stdout, report);
    if (report.user) print_compile_line(stdout, *report.user);
    if (report.compiled) print_compile_line(stdout, *report.compiled);
    std::fprintf(stdout, "backend: %s, %d thread%s%s\n", report.backend_description.c_str(), report.threads,
                 report.threads == 1 ? "" : "s", on_cuda ? " per block" : "");
    if (resumed)
      std::fprintf(stdout, "resumed from %s: %zu completed iteration%s\n", a.resume.c_str(),
                   resumed->progress.records.size(), resumed->progress.records.size() == 1 ? "" : "s");
    print_table_header(stdout);
    if (resumed)
      for (const iteration_record& rec : resumed->progress.records) print_iteration_row(stdout, rec);
    check_stdout();
  }
  progress_line progress(!a.no_progress && isatty(fileno(stderr)));
  running_record record;
  result last;  // the completed iterations (a failed run's record), O(1) per iteration: no copy of so_far
  if (resumed) last.records = resumed->progress.records;
  rq.on_iteration = [&](const iteration_record& rec, const result& so_far) {
    progress.clear();
    last.records.push_back(rec);
    last.iterations = so_far.iterations;
    last.accumulated = so_far.accumulated;
    last.dof = so_far.dof;
    last.n_eval = so_far.n_eval;
    last.seed = so_far.seed;
    last.seconds = so_far.seconds;
    last.backend = so_far.backend;
    if (rows) {
      print_iteration_row(stdout, rec);
      check_stdout();
    }
    if (json_file)
      record.step(*json_file, seconds_now, [&] {
        run_report partial = report;
        partial.res = so_far;
        partial.run_state = "running";
        return to_json(partial).dump(2) + "\n";
      }, "run");
    progress.update(so_far, opts.max_iterations);
    return interrupt_signal() != 0 ? run_control::stop : run_control::proceed;
  };
  if (saver) saver->start();
  exchange_time exchanged;  // --devices: the first device's; under mpirun: this rank's, less the calibration's
  const exchange_time before = cli_team_exchange_time();
  if (opts.devices.size() > 1) rq.exchange = &exchanged;
  try {
    const pass_stop_scope running(how);
    report.res = run(rq);
  } catch (const std::exception& ex) {
    progress.clear();
    if (json_file) {  // the record says what happened; an existing file is replaced only by a complete one
      report.res = last;  // the iterations completed before the failure (no estimate: to_json)
      report.res.options = opts;
      report.res.seed = opts.seed;
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
  if (saver) saver->set_team(cli_team());  // --devices: the devices' team has ended with the run
  report.signal = report.res.status == status::interrupted ? interrupt_signal() : 0;
  if (cli_team() != nullptr && opts.devices.size() > 1) {  // the first device's exchanges (its rank's MPI ones within)
    report.exchange = run_report::exchange_report{
        std::to_string(cli_team()->size()) + " MPI ranks x " + std::to_string(opts.devices.size()) + " devices", exchanged};
  } else if (cli_team() != nullptr) {
    const exchange_time after = cli_team_exchange_time();
    exchanged = {after.seconds - before.seconds, after.exchanges - before.exchanges, after.bytes - before.bytes};
    report.exchange = run_report::exchange_report{std::to_string(cli_team()->size()) + " MPI ranks", exchanged};
  } else if (opts.devices.size() > 1 && !(user || suite_jit)) {  // (a compiled object's exchanges are not timed)
    report.exchange = run_report::exchange_report{std::to_string(opts.devices.size()) + " devices", exchanged};
  }
  if (a.json_map && !trained.edges.empty()) {
    const std::size_t row = static_cast<std::size_t>(trained.n_bins) + 1;
    for (int j = 0; j < trained.dim; ++j)
      report.map_edges.emplace_back(trained.edges.begin() + static_cast<std::ptrdiff_t>(j * row),
                                    trained.edges.begin() + static_cast<std::ptrdiff_t>((j + 1) * row));
  }
  if (sample != nullptr && report.signal == 0 && report.res.status != status::interrupted) {
    if (trained.lower.empty()) {  // the suite runners: the region of the run
      for (int j = 0; j < dim; ++j) {
        trained.lower.push_back(lower.empty() ? e->lower : lower[static_cast<std::size_t>(j)]);
        trained.upper.push_back(upper.empty() ? e->upper : upper[static_cast<std::size_t>(j)]);
      }
    }
    const weighted_sampler sampler(std::move(trained), sample_points, sample_seed);
    write_weighted_npy(*npy_file, sampler);
    report.sample = run_report::sample_report{sample_points, sample_seed, sampler.n_cubes(), sampler.allocated(),
                                              npy_file->path()};
  }

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
  if (report.sample) {
    if (text && !a.quiet) {  // --quiet: the result line alone
      std::fprintf(stdout, "sample: %llu weighted points (seed %llu, %s over %llu sub-cube%s) written to %s: columns "
                   "x0 .. x%d, weight; sum of weight * f estimates the integral\n",
                   static_cast<unsigned long long>(report.sample->points), static_cast<unsigned long long>(report.sample->seed),
                   report.sample->allocated ? "the VEGAS+ allocation" : "uniform", static_cast<unsigned long long>(report.sample->n_cubes),
                   report.sample->n_cubes == 1 ? "" : "s", report.sample->file.c_str(), dim - 1);
      check_stdout();
    }
    return 0;
  }
  return exit_code(report.res.status);
}

}  // namespace

std::function<int()> add_integrate_command(CLI::App& app) {
  auto a = std::make_shared<integrate_args>();
  CLI::App* sub = app.add_subcommand(
      "integrate",
      "Integrate a test integrand of the suite (see 'mcubes list'), or one given as C++ text with --expr or --body "
      "(compiled at run time and run with your rights), with m-Cubes. Prints one row per iteration as it "
      "completes and the result; exit code 0 converged, 1 not converged, not resolved or underflow, 2 bad input, "
      "3 runtime failure, 130/143 interrupted by SIGINT/SIGTERM (the completed iterations kept; on the CPU the "
      "iteration under way is abandoned, on CUDA it is finished first; a second signal aborts at once). Options "
      "marked [paper] default to the integrand's settings in the m-Cubes paper. Integers are decimal; integers and "
      "counts also take 1e6 when that is an exact integer; reals must be finite.");
  add_integrate_options(*sub, *a);
  return [a] { return run_integrate(*a); };
}

std::function<int()> add_sample_command(CLI::App& app) {
  auto a = std::make_shared<integrate_args>();
  auto s = std::make_shared<sample_args>();
  CLI::App* sub = app.add_subcommand(
      "sample",
      "Weighted samples (vegas's random_batch): trains the adaptive map (and the VEGAS+ allocation) on an integrand "
      "as 'mcubes integrate' does, with the same options and report, then writes --points N points of the region "
      "drawn from it, with weights w such that sum w f(x) estimates the integral of any f (a weighted histogram of "
      "a quantity of x, with weights w f(x), estimates its distribution under f). --npy FILE: a NumPy float64 array "
      "of shape (N, d + 1), columns x0 .. x(d-1) and the weight, replaced atomically. The points are the same bits "
      "on every backend and thread count. Exit code 0 when written (the training's status is in the report), 2 bad "
      "input, 3 runtime failure, 130/143 interrupted during the training (nothing written).");
  add_integrate_options(*sub, *a);
  sub->add_option("--points", s->points, "Number of weighted points to write (exactly N)")->required()->type_name("N");
  s->seed_opt = sub->add_option("--sample-seed", s->seed, "Seed of the points (default: --seed)")->type_name("UINT");
  sub->add_option("--npy", s->npy, "The .npy file to write")->required()->type_name("FILE");
  return [a, s] { return run_integrate(*a, s.get()); };
}

}  // namespace mcubes::cli

/// @file cli/pi_command.cpp
/// `mcubes pi`: pi by Monte Carlo on the quarter circle or by the composite midpoint rule for
/// int_0^1 4/(1+x^2) dx (the classic GPU exercise), on the GPU and/or the CPU (algorithm/pi.hpp).
///
///   mcubes pi --method mc|midpoint --samples N [--backend cpu|cuda|auto] [--seed S]
///             [--threads-per-block T] [--threads N] [--compare]
///
/// Prints, per backend, the estimate (16 significant digits), its error against pi, the standard
/// error (Monte Carlo), the samples, the wall time and samples/s. --compare runs the GPU and the
/// CPU and prints both rows. N accepts integers and exact integers in scientific notation (1e9,
/// 2.5e6). Bad input throws mcubes::invalid_input (exit 2); no CUDA backend or device when one is
/// required throws mcubes::error / cuda_error (exit 3). The CUDA part lives in pi_cuda.cu.

#include "pi_command.hpp"

#include <cmath>
#include <cstdint>
#include <cstdio>
#include <memory>
#include <string>

#include <mcubes/mcubes.hpp>
#include <mcubes/backend/cpu_tiles.hpp>
#include <mcubes/backend/launch_report.hpp>
#include <mcubes/error.hpp>
#include <mcubes/options.hpp>

#include "parse.hpp"
#include "mpi_session.hpp"
#include "pi_cuda.hpp"

namespace mcubes::cli {

namespace {

constexpr double pi_value = 3.141592653589793238462643383279502884;

struct pi_args {
  std::string method;
  std::string samples;
  common_args common;
  bool compare = false;
  CLI::Option* threads_opt = nullptr;
};

/// One printed row.
struct row {
  std::string backend;
  double estimate = 0;
  double std_error = std::nan("");  // Monte Carlo: standard error; midpoint: the rule's error estimate
  std::uint64_t samples = 0;
  std::uint64_t hits = 0;           // Monte Carlo only
  double seconds = 0;
  std::string status;               // midpoint: the status of the error estimate
};

void print_rows_header(bool mc) {
  std::printf("  %-8s %-20s %-12s %-12s %-15s %-11s %-11s\n", "backend", "estimate", "error vs pi", mc ? "std. error" : "error est.",
              "samples", "time [s]", "samples/s");
}

void print_row(const row& r) {
  char stat[32] = "";
  std::snprintf(stat, sizeof stat, "%.3e", r.std_error);
  const double rate = r.seconds > 0 ? static_cast<double>(r.samples) / r.seconds : 0.0;
  std::printf("  %-8s %-#20.16g %-12.3e %-12s %-15llu %-11.4g %-11.4g\n", r.backend.c_str(), r.estimate, r.estimate - pi_value,
              stat, static_cast<unsigned long long>(r.samples), r.seconds, rate);
}

#if defined(MCUBES_HAS_CUDA_BACKEND) && MCUBES_HAS_CUDA_BACKEND
void print_launch(const launch_report& l) {
  std::printf("  cuda: %s, %d SMs, %d threads/block, %d blocks/SM resident, %lld blocks, kernel %.4f ms\n",
              l.device_name.c_str(), l.multiprocessors, l.threads_per_block, l.blocks_per_sm, l.grid, l.kernel_ms);
}
#endif

int run_pi(const pi_args& a) {
  // 1. Check everything before running anything.
  const bool mc = a.method == "mc";
  if (!mc && a.method != "midpoint") mcubes::detail::throw_invalid("--method must be mc or midpoint, got '", a.method, "'");
  const std::uint64_t n = mc ? parse_count(a.samples, "--samples", 2, pi_max_samples)
                             : parse_count(a.samples, "--samples", 1, midpoint_max_points);
  const common_values c = parse_common(a.common, a.threads_opt->count() > 0);
  const std::uint64_t seed = c.seed;
  const backend_kind requested = c.backend;
  pi_options mo;
  mo.samples = n;
  mo.seed = seed;
  mo.threads = c.threads;
  mo.cuda_threads_per_block = c.threads_per_block;
  if (mc) {
    validate(mo);
  } else {
    MCUBES_EXPECTS(n >= 1, "--samples must be at least 1 for the midpoint rule, got ", n);
    MCUBES_EXPECTS(n <= midpoint_max_points, "--samples must be at most 2^52 = ", midpoint_max_points,
                   " for the midpoint rule, got ", n);
    midpoint_options o;
    o.threads = c.threads;
    o.cuda_threads_per_block = c.threads_per_block;
    validate(o);
  }

  // 2. Who runs: the GPU, the CPU, or both (--compare).
  bool run_gpu = false, run_cpu = false;
  std::string note;
  if (cli_team() != nullptr) {  // under mpirun: the ranks share the CPU run (mpi_session.hpp)
    MCUBES_EXPECTS(!a.compare && requested != backend_kind::cuda,
                   "--backend cuda and --compare do not run under mpirun yet (several ranks): use --backend cpu");
    run_cpu = true;
    note = "backend: cpu" + ranks_note();
  } else if (a.compare) {
    if (!pi_cuda::compiled)
      throw error("--compare runs the GPU and the CPU, but this build has no CUDA backend");
    run_gpu = run_cpu = true;
  } else if (requested == backend_kind::cpu) {
    run_cpu = true;
  } else if (requested == backend_kind::cuda) {
    if (!pi_cuda::compiled)
      throw error("backend cuda requested, but this build has no CUDA backend (use --backend cpu or auto)");
    run_gpu = true;
  } else {  // auto
#if defined(MCUBES_HAS_CUDA_BACKEND) && MCUBES_HAS_CUDA_BACKEND
    const pi_cuda::device_probe probe = pi_cuda::probe();
    if (probe.available) {
      run_gpu = true;
    } else {
      run_cpu = true;
      note = "backend auto: " + probe.description + "; running on the CPU";
    }
#else
    run_cpu = true;
    note = "backend auto: this build has no CUDA backend; running on the CPU";
#endif
  }

#if defined(MCUBES_HAS_CUDA_BACKEND) && MCUBES_HAS_CUDA_BACKEND
  if (run_gpu && (a.compare || requested == backend_kind::cuda)) {  // fail before printing anything
    const pi_cuda::device_probe probe = pi_cuda::probe();
    if (!probe.available) throw error("the GPU run needs a CUDA device: " + probe.description);
  }
#endif

  // 3. Header.
  if (mc)
    std::printf("mcubes pi: Monte Carlo on the quarter circle, N = %llu samples, seed %llu\n",
                static_cast<unsigned long long>(n), static_cast<unsigned long long>(seed));
  else
    std::printf("mcubes pi: composite midpoint rule for int_0^1 4/(1+x^2) dx, N = %llu points\n",
                static_cast<unsigned long long>(n));
  if (!note.empty()) std::printf("  %s\n", note.c_str());
  if (run_cpu) std::printf("  cpu: %d thread%s\n", resolve_cpu_threads(c.threads), resolve_cpu_threads(c.threads) == 1 ? "" : "s");
  std::fflush(stdout);

  // 4. Run.
  row gpu_row, cpu_row;
  if (run_gpu) {
#if defined(MCUBES_HAS_CUDA_BACKEND) && MCUBES_HAS_CUDA_BACKEND
    launch_report launch;
    if (mc) {
      const pi_mc_result r = pi_cuda::monte_carlo(mo, &launch);
      gpu_row = row{"cuda", r.estimate, r.error, r.samples, r.hits, r.seconds, ""};
    } else {
      const result r = pi_cuda::midpoint(n, c.threads_per_block, &launch);
      gpu_row = row{"cuda", r.estimate, r.error, r.n_eval, 0, r.seconds, to_string(r.status)};
    }
    print_launch(launch);
#endif
  }
  if (run_cpu) {
    if (mc) {
      pi_options cpu_options = mo;
      cpu_options.backend = backend_kind::cpu;
      cpu_options.team = cli_team();
      const pi_mc_result r = pi_monte_carlo(cpu_options);
      cpu_row = row{"cpu", r.estimate, r.error, r.samples, r.hits, r.seconds, ""};
    } else {
      midpoint_options o;
      o.threads = c.threads;
      o.team = cli_team();
      const result r = pi_midpoint(n, o);
      cpu_row = row{"cpu", r.estimate, r.error, r.n_eval, 0, r.seconds, to_string(r.status)};
    }
  }

  // 5. Report.
  print_rows_header(mc);
  if (run_gpu) print_row(gpu_row);
  if (run_cpu) print_row(cpu_row);
  if (mc) {
    if (run_gpu) std::printf("  cuda hits: %llu\n", static_cast<unsigned long long>(gpu_row.hits));
    if (run_cpu) std::printf("  cpu hits:  %llu\n", static_cast<unsigned long long>(cpu_row.hits));
    if (run_gpu && run_cpu)
      std::printf("  the GPU and the CPU counted %s hits\n", gpu_row.hits == cpu_row.hits ? "the same" : "DIFFERENT");
  } else {
    if (run_gpu && run_cpu) std::printf("  GPU - CPU: %.3e\n", gpu_row.estimate - cpu_row.estimate);
    // the error estimate of the rule: |M_N - M_{N/k}| / (k^2 - 1) plus the rounding level, k = 3, 5 or 7
    // dividing N (algorithm/midpoint.hpp); none (inf, not converged) for other N
    const row& r = run_cpu ? cpu_row : gpu_row;
    std::printf("  status: %s (error estimate from the embedded coarse rule%s)\n", r.status.c_str(),
                std::isinf(r.std_error) ? "; none: N has no factor 3, 5 or 7" : "");
  }
  if (run_gpu && run_cpu && mc && gpu_row.hits != cpu_row.hits)
    throw error("the GPU and the CPU counted different hits for the same samples (a bug)");
  return 0;
}

}  // namespace

std::function<int()> add_pi_command(CLI::App& app) {
  auto args = std::make_shared<pi_args>();
  CLI::App* sub = app.add_subcommand(
      "pi", "Estimate pi by Monte Carlo on the quarter circle or by the midpoint rule for int_0^1 4/(1+x^2) dx");
  sub->add_option("--method", args->method, "mc (Monte Carlo hit test) or midpoint (composite midpoint rule)")
      ->required()
      ->check(CLI::IsMember({"mc", "midpoint"}));
  sub->add_option("--samples", args->samples,
                  "N: Monte Carlo samples (2 .. 2^62) or midpoint points (1 .. 2^52); integers or e.g. 1e9")
      ->required();
  sub->add_option("--backend", args->common.backend, "cpu, cuda or auto (cuda when a device is present)")
      ->capture_default_str();
  sub->add_option("--seed", args->common.seed, "Seed of the Philox stream (Monte Carlo), an integer in [0, 2^64)")
      ->capture_default_str();
  sub->add_option("--threads-per-block", args->common.threads_per_block,
                  "CUDA block size, a power of two in [32, 1024]; never changes the result")
      ->capture_default_str();
  args->threads_opt = sub->add_option("--threads", args->common.threads,
                                      "CPU threads, at least 1 (default: all cores); never changes the result");
  sub->add_flag("--compare", args->compare, "Run on the GPU and on the CPU and print both rows");
  return [args]() { return run_pi(*args); };
}

}  // namespace mcubes::cli

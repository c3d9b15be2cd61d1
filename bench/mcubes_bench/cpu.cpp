// mcubes-bench cpu: evaluations per CPU-second per thread (process CPU time / evaluations, robust
// to load) and per wall second of the CPU backend for f4 8-D and f2 6-D, 10 iterations of 1e6
// calls, the protocol of gsl-vegas-bench.
#include "common.hpp"

#include <time.h>

namespace mcubes_bench {

/// CPU time of the whole process (all threads), seconds.
double process_cpu_seconds() {
  timespec ts{};
  clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
  return static_cast<double>(ts.tv_sec) + 1e-9 * static_cast<double>(ts.tv_nsec);
}

/// Evaluations per CPU-second per thread: the process CPU time of a run (all threads together)
/// divided into its evaluations, which equals the per-thread rate of threads that are never
/// descheduled and is robust to other processes loading the cores; and the wall-clock rate (total
/// and divided by the threads). Median of `runs` runs after a warm-up run. The runs do what
/// gsl-vegas-bench does with GSL: 10 iterations of ~calls evaluations, estimate from the last 5.
/// Evaluations are the counted n_eval: the bin-scale probe of the first adapting iteration and a
/// re-accumulation of its bins (when the scale was off) are extra work, included in the time.
int cpu_rates(vegas_options o, std::uint64_t calls, int runs) {
  o.backend = backend_kind::cpu;
  print_header(o);
  const int threads = cpu_backend(o.threads).threads();
  std::printf("%-26s | %4s | %10s | %8s | %8s | %11s | %10s | %10s | %s\n", "run (median of runs)", "it", "evals",
              "CPU s", "wall s", "ev/CPU-s/th", "ev/wall-s", "per thread", "estimate +- error, chi2/dof, true rel.err");
  auto row = [&](const char* label, double exact, auto run) {
    run();  // warm-up
    std::vector<double> cpu_s, wall_s;
    result r;
    for (int i = 0; i < runs; ++i) {
      const double c0 = process_cpu_seconds();
      const auto t0 = std::chrono::steady_clock::now();
      result ri = run();
      wall_s.push_back(std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count());
      cpu_s.push_back(process_cpu_seconds() - c0);
      if (i > 0 && (ri.estimate != r.estimate || ri.error != r.error))
        std::printf("  WARNING: %s run %d differs from run %d (not bitwise reproducible)\n", label, i, i - 1);
      r = ri;
    }
    const double n = static_cast<double>(r.n_eval), c = median(cpu_s), w = median(wall_s);
    std::printf("%-26s | %4d | %10.4g | %8.3f | %8.3f | %11.4g | %10.4g | %10.4g | %.10g +- %.3g, %.2f, %.2e (%s)\n", label,
                r.iterations, n, c, w, n / c, n / w, n / w / threads, r.estimate, r.error, r.chi2_dof,
                std::fabs(r.estimate - exact) / std::fabs(exact), to_string(r.status));
  };
  vegas_options a = o;
  a.calls_per_iteration = calls ? calls : 1000000;
  a.max_iterations = 10;
  a.adapt_iterations = 10;
  a.skip = 5;
  a.rel_tol = 1e-12;  // run all 10 iterations
  const double e4 = suite::exact_f4(8), e2 = suite::exact_f2(6);
  row("f4 8-D, 10 adapting it.", e4, [&] { return vegas<8>(suite::f4_gaussian{}, region<8>::unit(), a); });
  row("f2 6-D, 10 adapting it.", e2, [&] { return vegas<6>(suite::f2_product_peak{}, region<6>::unit(), a); });
  a.adapt_iterations = 5;  // the reference's pattern: adapt, then sample the frozen map (No-Adjust)
  row("f4 8-D, 5 adapt + 5 fixed", e4, [&] { return vegas<8>(suite::f4_gaussian{}, region<8>::unit(), a); });
  row("f2 6-D, 5 adapt + 5 fixed", e2, [&] { return vegas<6>(suite::f2_product_peak{}, region<6>::unit(), a); });
  return 0;
}

}  // namespace mcubes_bench

// gsl-vegas-bench: benchmark program (not a test). GSL's gsl_monte_vegas on the mcubes suite
// integrands f4 8-D (Gaussian) and f2 6-D (product peak) over the unit cube, single thread, so
// that mcubes-bench's `cpu` subcommand can be compared with it per core (bench/results/).
//
//   gsl-vegas-bench [--calls N] [--runs R] [--seed S]
//
// Protocol (GSL reference manual, "VEGAS" and its example program: "it is necessary to warm up
// the grid ... then discard the results and start the measurement with stage 1"):
//   1. gsl_monte_vegas_integrate with params.stage = 0 (fresh uniform grid), params.iterations = 5,
//      `calls` calls per iteration: the warm-up, which adapts the grid; its estimate is discarded;
//   2. gsl_monte_vegas_integrate with params.stage = 1 (keep the grid, forget the accumulated
//      estimates), params.iterations = 5: the measurement. Its weighted average, error and
//      chi2/dof are reported.
// That is 10 iterations of ~`calls` evaluations each, every one adapting the grid (GSL refines
// after every iteration), like mcubes-bench cpu's "10 adapting iterations, skip 5" rows. GSL
// rounds calls down to calls_per_box * boxes^d: for 1e6 calls that is 5^8 * 2 = 781250 (8-D) and
// 8^6 * 3 = 786432 (6-D), the same m*p as mcubes' stratification. Other parameters are GSL's
// defaults (alpha 1.5, 50 bins, importance mode). RNG: gsl_rng_mt19937 (GSL's default).
//
// Timing: CPU time of this thread (clock_gettime(CLOCK_THREAD_CPUTIME_ID)) and wall time
// (steady_clock) around both calls; evaluations are counted in the integrand wrapper. Reports
// evaluations per CPU-second (robust to other processes sharing the cores) and per wall second,
// the median over `runs` runs (each after a fresh gsl_monte_vegas_init, same seed) plus the
// estimate of the last run.
#include <mcubes/suite.hpp>

#include <gsl/gsl_monte.h>
#include <gsl/gsl_monte_vegas.h>
#include <gsl/gsl_rng.h>
#include <gsl/gsl_version.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <string>
#include <vector>

namespace {

double thread_cpu_seconds() {
  timespec ts{};
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
  return static_cast<double>(ts.tv_sec) + 1e-9 * static_cast<double>(ts.tv_nsec);
}

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  const std::size_t n = v.size();
  return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

/// The suite functor F in D dimensions behind GSL's function pointer; counts evaluations.
template <int D, class F>
struct wrapped {
  std::uint64_t count = 0;
  static double call(double* x, std::size_t, void* self) {
    auto* w = static_cast<wrapped*>(self);
    ++w->count;
    mcubes::point<D> p;
    std::memcpy(p.x, x, sizeof(p.x));
    return F{}(p);
  }
};

struct run_result {
  double cpu = 0, wall = 0;
  std::uint64_t evals = 0;
  double estimate = 0, error = 0, chi2 = 0;
};

template <int D, class F>
run_result run_once(std::size_t calls, unsigned long seed) {
  wrapped<D, F> w;
  gsl_monte_function G{&wrapped<D, F>::call, D, &w};
  double xl[D], xu[D];
  for (int j = 0; j < D; ++j) xl[j] = 0.0, xu[j] = 1.0;
  gsl_rng* r = gsl_rng_alloc(gsl_rng_mt19937);
  gsl_rng_set(r, seed);
  gsl_monte_vegas_state* s = gsl_monte_vegas_alloc(D);
  gsl_monte_vegas_params par;
  run_result out;

  const double c0 = thread_cpu_seconds();
  const auto w0 = std::chrono::steady_clock::now();
  double res = 0, err = 0;
  gsl_monte_vegas_params_get(s, &par);
  par.stage = 0;
  par.iterations = 5;
  gsl_monte_vegas_params_set(s, &par);
  gsl_monte_vegas_integrate(&G, xl, xu, D, calls, r, s, &res, &err);  // warm-up, discarded
  gsl_monte_vegas_params_get(s, &par);
  par.stage = 1;
  par.iterations = 5;
  gsl_monte_vegas_params_set(s, &par);
  gsl_monte_vegas_integrate(&G, xl, xu, D, calls, r, s, &res, &err);
  out.wall = std::chrono::duration<double>(std::chrono::steady_clock::now() - w0).count();
  out.cpu = thread_cpu_seconds() - c0;

  out.evals = w.count;
  out.estimate = res;
  out.error = err;
  out.chi2 = gsl_monte_vegas_chisq(s);
  gsl_monte_vegas_free(s);
  gsl_rng_free(r);
  return out;
}

template <int D, class F>
void row(const char* label, double exact, std::size_t calls, int runs, unsigned long seed) {
  run_once<D, F>(calls, seed);  // warm-up run (page faults, caches)
  std::vector<double> cpu_rate, wall_rate, cpu_s, wall_s;
  run_result last;
  for (int i = 0; i < runs; ++i) {
    last = run_once<D, F>(calls, seed);
    cpu_rate.push_back(last.evals / last.cpu);
    wall_rate.push_back(last.evals / last.wall);
    cpu_s.push_back(last.cpu);
    wall_s.push_back(last.wall);
  }
  std::printf("%-22s | %10.4g | %8.3f | %8.3f | %10.4g | %10.4g | %.10g +- %.3g | %6.2f | %.2e\n", label,
              static_cast<double>(last.evals), median(cpu_s), median(wall_s), median(cpu_rate), median(wall_rate),
              last.estimate, last.error, last.chi2, std::fabs(last.estimate - exact) / std::fabs(exact));
}

}  // namespace

int main(int argc, char** argv) {
  std::size_t calls = 1000000;
  int runs = 5;
  unsigned long seed = 20211231;
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    if ((a == "--calls" || a == "--runs" || a == "--seed") && i + 1 < argc) {
      const char* v = argv[++i];
      if (a == "--calls") calls = std::strtoull(v, nullptr, 10);
      if (a == "--runs") runs = std::max(1, std::atoi(v));
      if (a == "--seed") seed = std::strtoul(v, nullptr, 10);
    } else {
      std::fprintf(stderr, "usage: gsl-vegas-bench [--calls N] [--runs R] [--seed S]\n");
      return 2;
    }
  }
  std::printf("GSL %s gsl_monte_vegas, 1 thread, %zu calls per iteration, 5 warm-up (stage 0) + 5 measured (stage 1) "
              "iterations, mt19937 seed %lu, median of %d runs after a warm-up run\n",
              gsl_version, calls, seed, runs);
  std::printf("%-22s | %10s | %8s | %8s | %10s | %10s | %s | %6s | %s\n", "integrand", "evals", "CPU s", "wall s",
              "ev/CPU-s", "ev/wall-s", "estimate +- error (last run)", "chi2/d", "true rel.err");
  row<8, mcubes::suite::f4_gaussian>("f4 8-D (Gaussian)", mcubes::suite::exact_f4(8), calls, runs, seed);
  row<6, mcubes::suite::f2_product_peak>("f2 6-D (product peak)", mcubes::suite::exact_f2(6), calls, runs, seed);
  return 0;
}

// mcubes-bench: benchmark program (not a test). Prints time and accuracy together.
//
//   mcubes-bench reference  [--backend cuda|cpu] [--runs 5] [--threads N] [--tpb 256]
//       the configurations of the reference m-Cubes code table 1 (same calls per iteration, iterations,
//       adapting iterations, skip, rel_tol 1e-3); per integrand: median of `runs` runs after one
//       warm-up run: time, iterations, evaluations, evaluations/s, estimate, error, true rel. error.
//   mcubes-bench throughput [--backend cuda|cpu] [--calls N] [--breakdown]
//       one adapting iteration of f4 8-D (default 3e9 calls on CUDA) and non-adapting iterations of
//       fA 6-D (2e9 calls), in evaluations/s per iteration. --breakdown adds No-Adjust runs of 6-D
//       integrands over fA's region that cost less than fA: f = 1 (random numbers, bins and
//       jacobian; the points are not needed) and f = sum x_i (the whole map), so that the cost of
//       each part of fA's sample is measured, not guessed.
//   mcubes-bench cpu [--threads N] [--calls N] [--runs 5]
//       evaluations per CPU-second per thread (process CPU time / evaluations, robust to load) and
//       per wall second of the CPU backend for f4 8-D and f2 6-D, 10 iterations of 1e6 calls, the
//       protocol of gsl-vegas-bench (issue: at least twice GSL's monte_vegas per core).
//   mcubes-bench accuracy [--backend cuda|cpu] [--seeds 100] [--first-seed 1] [--first-level 1] [--levels 9]
//                         [--integrands f2,f3,...] [--csv FILE] [--summary FILE] [--max-evals E] [--max-calls N]
//                         [--fail-fast] [--dry-run]
//       the paper's accuracy study (section 5.1, Figure 1): tolerance ladder 1e-3, 2e-4, ... 2.56e-9
//       (levels 1..9), N seeds per level; every run to --csv, per-level summary printed and to
//       --summary. See accuracy_rule() and bench/README-accuracy.md; bench/accuracy_summary.py
//       merges the CSVs of a study split over several invocations.
//
// GPU times are taken with CUDA events around the whole run (the host loop synchronises every
// iteration, so they equal the wall time of the run); CPU wall times with steady_clock, CPU time
// with clock_gettime(CLOCK_PROCESS_CPUTIME_ID).
#include <mcubes/mcubes.hpp>
#include <mcubes/suite.hpp>
#if defined(MCUBES_HAS_CUDA_BACKEND)
#include <mcubes/cuda.cuh>
#endif

#include <CLI/CLI.hpp>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include <time.h>

namespace {

using namespace mcubes;

struct timing {
  double seconds;
  result r;
};

#if defined(MCUBES_HAS_CUDA_BACKEND)
/// The launch policy of the benchmark's CUDA integrators (--adapt-tiles, --max-blocks; no field
/// changes a result).
cuda_launch_policy& bench_policy() {
  static cuda_launch_policy policy;
  return policy;
}
#endif

/// The benchmark's integrator for (D, F, region, n_bins, execution): made once and kept, so that a
/// timed run pays for no stream or buffer set-up (reset() before each run: a uniform map at
/// iteration 0, hence the one-call result).
template <int D, class F>
integrator<D>& bench_integrator(const region<D>& reg, const vegas_options& o) {
  static std::map<std::vector<double>, std::unique_ptr<integrator<D>>> cache;
  std::vector<double> key(reg.lower().begin(), reg.lower().end());
  key.insert(key.end(), reg.upper().begin(), reg.upper().end());
  key.insert(key.end(), {static_cast<double>(o.n_bins), static_cast<double>(o.backend), static_cast<double>(o.threads),
                         static_cast<double>(o.cuda_threads_per_block), static_cast<double>(o.device)});
  auto& slot = cache[key];
  if (!slot) {
#if defined(MCUBES_HAS_CUDA_BACKEND)
    if (o.backend == backend_kind::cuda) {
      slot = std::make_unique<integrator<D>>(reg, o, bench_policy());
      return *slot;
    }
#endif
    slot = std::make_unique<integrator<D>>(reg, o);
  }
  return *slot;
}

/// Runs one integration on the chosen backend and times it (the integrator's set-up excluded).
template <int D, class F>
timing run_once(const F& f, const region<D>& reg, const vegas_options& o) {
  integrator<D>& integ = bench_integrator<D, F>(reg, o);
  integ.reset();
#if defined(MCUBES_HAS_CUDA_BACKEND)
  if (o.backend == backend_kind::cuda) {
    cudaEvent_t a, b;
    MCUBES_CUDA_CHECK(cudaEventCreate(&a));
    MCUBES_CUDA_CHECK(cudaEventCreate(&b));
    MCUBES_CUDA_CHECK(cudaEventRecord(a));
    result r = integ.integrate(f, o);
    MCUBES_CUDA_CHECK(cudaEventRecord(b));
    MCUBES_CUDA_CHECK(cudaEventSynchronize(b));
    float ms = 0;
    MCUBES_CUDA_CHECK(cudaEventElapsedTime(&ms, a, b));
    cudaEventDestroy(a);
    cudaEventDestroy(b);
    return {ms * 1e-3, r};
  }
#endif
  const auto t0 = std::chrono::steady_clock::now();
  result r = integ.integrate(f, o);
  return {std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count(), r};
}

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  const std::size_t n = v.size();
  return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

template <int D, class F>
void reference_row(const std::string& name, const F& f, vegas_options o, int runs) {
  const suite::entry& e = *suite::find(name);
  o.calls_per_iteration = e.paper.calls;
  o.max_iterations = e.paper.max_iterations;
  o.adapt_iterations = e.paper.adapt_iterations;
  o.skip = e.paper.skip;
  o.rel_tol = 1e-3;
  if (o.skip + o.min_iterations > o.max_iterations) o.min_iterations = o.max_iterations - o.skip;
  const region<D> reg = region<D>::cube(e.lower, e.upper);
  const double exact = e.exact(D);
  run_once<D>(f, reg, o);  // warm-up
  std::vector<double> times;
  result last;
  for (int i = 0; i < runs; ++i) {
    timing t = run_once<D>(f, reg, o);
    times.push_back(t.seconds);
    if (i > 0 && (t.r.estimate != last.estimate || t.r.error != last.error))
      std::printf("  WARNING: %s run %d differs from run %d (not bitwise reproducible)\n", name.c_str(), i, i - 1);
    last = t.r;
  }
  const double med = median(times);
  std::printf("%-3s %2d %10.3g %4d %4d %4d | %9.3f ms %3d it %10.3g ev %9.3g ev/s | %.10g +- %.3g  rel.err %.2e  pull %+.2f  %s\n",
              name.c_str(), D, static_cast<double>(o.calls_per_iteration), o.max_iterations, o.adapt_iterations, o.skip,
              med * 1e3, last.iterations, static_cast<double>(last.n_eval), last.n_eval / med, last.estimate, last.error,
              std::fabs(last.estimate - exact) / std::fabs(exact), (last.estimate - exact) / last.error,
              to_string(last.status));
}

void print_header(const vegas_options& o) {
  std::printf("mcubes %s, backend %s", MCUBES_VERSION_STRING, to_string(o.backend));
#if defined(MCUBES_HAS_CUDA_BACKEND)
  if (o.backend == backend_kind::cuda) {
    cudaDeviceProp p;
    MCUBES_CUDA_CHECK(cudaGetDeviceProperties(&p, 0));
    std::printf(", device %s (%d SMs), threads per block %d", p.name, p.multiProcessorCount, o.cuda_threads_per_block);
  }
#endif
  if (o.backend == backend_kind::cpu) std::printf(", threads %d", cpu_backend(o.threads).threads());
  std::printf(", seed %llu\n", static_cast<unsigned long long>(o.seed));
}

template <int D, class F>
int trace_one(const std::string& name, const F& f, vegas_options o) {
  const suite::entry& e = *suite::find(name);
  o.calls_per_iteration = e.paper.calls;
  o.max_iterations = e.paper.max_iterations;
  o.adapt_iterations = e.paper.adapt_iterations;
  o.skip = e.paper.skip;
  timing t = run_once<D>(f, region<D>::cube(e.lower, e.upper), o);
  for (const auto& k : t.r.records)
    std::printf("  %3d %s%s %.10g +- %.3g   weighted %.10g +- %.3g  chi2/dof %.2f  Q %.3f  nonzero %llu  %.3f ms%s\n", k.index,
                k.adapted ? "A" : " ", k.accumulated ? "*" : " ", k.estimate, k.error, k.weighted_estimate, k.weighted_error,
                k.chi2_dof, k.q, static_cast<unsigned long long>(k.n_nonzero), k.seconds * 1e3, k.rescaled ? "  (bins rescaled)" : (k.top_bin_level > 0 ? "  (bin overflow levels)" : ""));
  std::printf("%s seed %llu: %.10g +- %.3g, exact %.10g, %s after %d iterations, %.3f ms\n", name.c_str(),
              static_cast<unsigned long long>(o.seed), t.r.estimate, t.r.error, e.exact(D), to_string(t.r.status), t.r.iterations,
              t.seconds * 1e3);
  return 0;
}

int trace(const std::string& name, vegas_options o) {
  print_header(o);
  return suite::visit_integrand<int>(name, [&](auto d) {
    using Desc = decltype(d);
    return trace_one<Desc::study_dim>(name, typename Desc::functor{}, o);
  });
}

int reference(vegas_options o, int runs) {
  print_header(o);
  std::printf("int  d      ncall titr  ita skip | median time, iterations, evaluations, evaluations/s | estimate, error, true rel. error, pull, status (median of %d runs after a warm-up)\n", runs);
  suite::for_each_integrand([&](auto d) {
    using Desc = decltype(d);
    if constexpr (Desc::in_reference_table) reference_row<Desc::study_dim>(Desc::name, typename Desc::functor{}, o, runs);
  });
  return 0;
}

template <int D, class F>
void throughput_row(const char* label, const F& f, const region<D>& reg, vegas_options o, int runs) {
  run_once<D>(f, reg, o);  // warm-up
  std::vector<double> per_iter;
  for (int i = 0; i < runs; ++i) {
    timing t = run_once<D>(f, reg, o);
    for (const auto& rec : t.r.records)
      if (rec.index > 0 || o.adapt_iterations == 0) per_iter.push_back(rec.n_eval / rec.seconds);
    bool rescaled = false;
    for (const auto& rec : t.r.records) rescaled |= rec.rescaled;
    if (i == 0)
      std::printf("%-34s calls %.3g, %d iterations (%d adapting), run %.3f ms, %s%s\n", label,
                  static_cast<double>(o.calls_per_iteration), t.r.iterations, std::min(o.adapt_iterations, t.r.iterations),
                  t.seconds * 1e3, to_string(t.r.status), rescaled ? ", bins re-accumulated once" : "");
  }
  std::printf("%-34s median %.3g evaluations/s per iteration (%zu iterations timed)\n", label, median(per_iter), per_iter.size());
}

/// f = 1 (throughput --breakdown): what a No-Adjust sample costs without its point and integrand.
struct bench_one {
  MCUBES_HOST_DEVICE double operator()(const point<6>&) const { return 1.0; }
};
/// f = x_1 + ... + x_6 (throughput --breakdown): fA without the sine.
struct bench_sum {
  MCUBES_HOST_DEVICE double operator()(const point<6>& x) const {
    double s = 0;
    for (int i = 0; i < 6; ++i) s += x[i];
    return s;
  }
};

int throughput(vegas_options o, std::uint64_t calls, int runs, bool breakdown) {
  print_header(o);
  vegas_options a = o;  // adapting iterations of f4 8-D; the first iteration (with the scale probe) is not timed
  a.calls_per_iteration = calls ? calls : (o.backend == backend_kind::cuda ? 3000000000ull : 20000000ull);
  a.max_iterations = 4;
  a.adapt_iterations = 4;
  a.skip = 0;
  a.min_iterations = 4;
  a.rel_tol = 1e-12;
  throughput_row<8>("f4 8-D, adapting (V-Sample)", suite::f4_gaussian{}, region<8>::unit(), a, runs);
  vegas_options n = o;  // fA 6-D, the reference's run: 10 non-adapting iterations
  n.calls_per_iteration = calls ? calls : (o.backend == backend_kind::cuda ? 2000000000ull : 20000000ull);
  n.max_iterations = 10;
  n.adapt_iterations = 0;
  n.skip = 0;
  n.rel_tol = 1e-12;
  throughput_row<6>("fA 6-D, non-adapting (No-Adjust)", suite::fA_sin_sum{}, region<6>::cube(0, 10), n, runs);
  if (breakdown) {
    throughput_row<6>("f=sum x 6-D, non-adapting", bench_sum{}, region<6>::cube(0, 10), n, runs);
    throughput_row<6>("f=1 6-D, non-adapting", bench_one{}, region<6>::cube(0, 10), n, runs);
  }
  return 0;
}

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

// ---------------------------------------------------------------------------------------------
// accuracy: the paper's accuracy study (Sakiotis et al. 2022 section 5.1, Figure 1).
//
// Tolerance ladder: level 1..9 has rel_tol = 1e-3 / 5^(level-1): 1e-3, 2e-4, 4e-5, 8e-6, 1.6e-6,
// 3.2e-7, 6.4e-8, 1.28e-8, 2.56e-9 (the next, 5.12e-10, is below the paper's 1e-9). One invocation
// runs levels --first-level..--levels with seeds --first-seed..--first-seed+--seeds-1 per level, so
// the study can be split over sessions and merged afterwards (bench/accuracy_summary.py). An
// integrand's ladder stops after the first level where fewer than half of this invocation's runs
// converged ("until failing to achieve the tolerance").
//
// The rule for calls per iteration and iterations is accuracy_rule() below; it depends only on the
// level, the integrand's paper settings (suite::entry::paper) and the per-run evaluation budget,
// never on an exact value or on results. bench/README-accuracy.md gives it with its justification
// and a cost projection.
// ---------------------------------------------------------------------------------------------

/// Options of `mcubes-bench accuracy` (see main() for their command-line names).
struct accuracy_args {
  int seeds = 100;               ///< runs per level
  int first_seed = 1;            ///< seeds first_seed .. first_seed + seeds - 1
  int first_level = 1;           ///< first ladder level run (1 = rel_tol 1e-3)
  int last_level = 9;            ///< last ladder level run (9 = rel_tol 2.56e-9)
  double max_evals = 0;          ///< per-run evaluation budget E; 0: 2e10 (CUDA) / 2e9 (CPU)
  double max_calls = 0;          ///< cap C of calls per iteration; 0: E / 100
  bool fail_fast = false;        ///< end a level once it cannot reach half converged
  bool dry_run = false;          ///< print the settings of every level, run nothing
  std::string integrands = "f2,f3,f4,f5,f6,fA,fB,f1";
  std::string csv, summary;
};

inline constexpr int accuracy_max_level = 9;          ///< 2.56e-9; level 10 (5.12e-10) is below 1e-9
inline constexpr int accuracy_iteration_cap = 1000;   ///< max_iterations never exceeds this
inline constexpr int accuracy_iterations_at_cap = 100; ///< the default calls cap leaves room for this many

/// Calls-per-iteration factor of level 1..9 relative to level 1: x2 and x2.5 alternately, so x5
/// every two levels (x sqrt(5) per level on average) with round numbers.
constexpr std::uint64_t accuracy_calls_factor[accuracy_max_level] = {1, 2, 5, 10, 25, 50, 125, 250, 625};

/// Relative tolerance of ladder level 1..9: 1e-3 divided by 5 (level - 1) times, by repeated
/// division as the paper describes it (this also keeps the printed values, e.g. 2.0000000000000001e-4,
/// identical to those of earlier CSV files).
double accuracy_tolerance(int level) {
  double tol = 1e-3;
  for (int l = 1; l < level; ++l) tol /= 5;
  return tol;
}

/// Settings of one ladder level for one integrand.
struct level_settings {
  int level;                   ///< 1..9
  double tol;                  ///< requested relative tolerance
  std::uint64_t calls;         ///< calls per iteration
  int max_iterations;          ///< iterations at most
  std::uint64_t budget;        ///< evaluation budget of one run, B
  std::uint64_t max_evals() const { return calls * static_cast<std::uint64_t>(max_iterations); }  ///< <= budget
};

/// The accuracy study's rule (bench/README-accuracy.md, "The rule"). With N0, M0 the paper's calls
/// and max(paper max_iterations, 100), E the per-run evaluation budget, C the calls cap (--max-calls
/// if given, else max(N0, E / 100)) and s = skip + min_iterations (the fewest iterations that can
/// converge):
///   budget          B = min(N0 * M0 * 25^(level-1), E)
///   calls           N = floor(min(N0 * factor[level], C, E / s))
///   max_iterations  M = min(floor(B / N), 1000)
/// so N * M <= B <= E: no run of any level evaluates the integrand more than E times. Level 1 is the
/// paper's setting (N0 calls, M0 iterations) whenever N0 * M0 <= E (and fA's, 2e9 calls x 10
/// iterations, at the default E = 2e10). The integrator alone decides convergence within these
/// limits.
/// @throws invalid_input when E is too small for even one convergent run (E / s < 2 calls).
level_settings accuracy_rule(const suite::entry& e, int level, const vegas_options& defaults, double max_evals,
                             double max_calls) {
  const double n0 = static_cast<double>(e.paper.calls);
  const double m0 = std::max(e.paper.max_iterations, 100);
  const int s = e.paper.skip + defaults.min_iterations;
  const double tol = accuracy_tolerance(level);
  const double budget = std::min(n0 * m0 * std::pow(25.0, level - 1), max_evals);
  const double cap = max_calls > 0 ? max_calls : std::max(n0, max_evals / accuracy_iterations_at_cap);
  const double calls =
      std::floor(std::min({n0 * static_cast<double>(accuracy_calls_factor[level - 1]), cap, max_evals / s}));
  if (calls < 2) {
    char msg[200];
    std::snprintf(msg, sizeof msg, "accuracy: --max-evals %g is too small for %s: a run needs at least skip + min_iterations "
                  "= %d iterations of 2 calls or more", max_evals, e.name.c_str(), s);
    throw invalid_input(msg);
  }
  const int iters = static_cast<int>(std::min<double>(std::floor(budget / calls), accuracy_iteration_cap));
  const auto n = static_cast<std::uint64_t>(calls);
  return {level, tol, n, iters, static_cast<std::uint64_t>(budget)};
}

struct accuracy_run {
  double estimate, error, true_rel, chi2_dof, seconds;
  int iterations;
  std::uint64_t n_eval;
  status st;
};

const char* csv_status(status s) {
  switch (s) {
    case status::converged: return "converged";
    case status::not_converged: return "not_converged";
    default: return "not_resolved";
  }
}

/// Counters over the whole invocation, for the closing lines and the exit status.
struct accuracy_totals {
  int flagged = 0;        ///< levels with frac_within_2sigma < 0.9 or a converged run beyond 10x its tolerance
  int beyond_10x = 0;     ///< levels with a converged run beyond 10x its tolerance
  double seconds = 0;     ///< summed run time
  double evaluations = 0; ///< summed integrand evaluations
};

/// Runs the ladder for one integrand; appends to the CSV files and prints the summary table rows.
template <int D, class F>
void accuracy_integrand(const std::string& name, const F& f, vegas_options o, const accuracy_args& a, double max_evals,
                        std::FILE* csv, std::FILE* sum, accuracy_totals& tot) {
  const suite::entry& e = *suite::find(name);
  const region<D> reg = region<D>::cube(e.lower, e.upper);
  const double exact = e.exact(D);
  for (int level = a.first_level; level <= a.last_level; ++level) {
    const level_settings ls = accuracy_rule(e, level, o, max_evals, a.max_calls);
    o.rel_tol = ls.tol;
    o.abs_tol = 0;
    o.calls_per_iteration = ls.calls;
    o.max_iterations = ls.max_iterations;
    o.adapt_iterations = e.paper.adapt_iterations;
    o.skip = e.paper.skip;
    if (a.dry_run) {
      std::printf("%-3s %2d %5d %9.3g %10.3g %5d %9.3g %9.3g\n", name.c_str(), D, level, ls.tol, static_cast<double>(ls.calls),
                  ls.max_iterations, static_cast<double>(ls.max_evals()), static_cast<double>(ls.max_evals()) * a.seeds);
      if (csv)
        std::fprintf(csv, "%s,%d,%d,%.17g,%llu,%d,%llu,%d,%d,%d\n", name.c_str(), D, level, ls.tol,
                     static_cast<unsigned long long>(ls.calls), ls.max_iterations,
                     static_cast<unsigned long long>(ls.max_evals()), o.skip, o.min_iterations, o.adapt_iterations);
      continue;
    }
    std::vector<accuracy_run> runs;
    int failures = 0;
    for (int s = a.first_seed; s < a.first_seed + a.seeds; ++s) {
      o.seed = static_cast<std::uint64_t>(s);
      timing t = run_once<D>(f, reg, o);
      const accuracy_run r{t.r.estimate, t.r.error, std::fabs(t.r.estimate - exact) / std::fabs(exact), t.r.chi2_dof,
                           t.seconds, t.r.iterations, t.r.n_eval, t.r.status};
      runs.push_back(r);
      tot.seconds += r.seconds;
      tot.evaluations += static_cast<double>(r.n_eval);
      if (csv) {
        std::fprintf(csv, "%s,%d,%.17g,%d,%.17g,%.17g,%.17g,%.17g,%.17g,%d,%llu,%s,%.17g,%llu,%d\n", name.c_str(), D, ls.tol, s,
                     r.estimate, r.error, exact, r.true_rel, r.chi2_dof, r.iterations,
                     static_cast<unsigned long long>(r.n_eval), csv_status(r.st), r.seconds,
                     static_cast<unsigned long long>(ls.calls), ls.max_iterations);
        std::fflush(csv);
      }
      failures += r.st != status::converged;
      // --fail-fast: even if every remaining seed converged, fewer than half of the level would.
      if (a.fail_fast && 2 * (a.seeds - failures) < a.seeds) break;
    }
    // Summary over the converged runs.
    std::vector<double> rel, ratio;
    int within_tol = 0, within_2s = 0;
    for (const auto& r : runs) {
      if (r.st != status::converged) continue;
      rel.push_back(r.true_rel);
      ratio.push_back(r.true_rel / ls.tol);
      within_tol += r.true_rel <= ls.tol;
      within_2s += std::fabs(r.estimate - exact) <= 2 * r.error;
    }
    std::vector<double> secs;
    for (const auto& r : runs) secs.push_back(r.seconds);
    const int n = static_cast<int>(runs.size()), c = static_cast<int>(rel.size());
    const bool failed = 2 * c < a.seeds;  // of the planned seeds: with --fail-fast n may be smaller
    const double nan = std::nan("");
    const double med_rel = c ? median(rel) : nan, max_rel = c ? *std::max_element(rel.begin(), rel.end()) : nan;
    const double f_tol = c ? double(within_tol) / c : nan, f_2s = c ? double(within_2s) / c : nan;
    const double max_ratio = c ? *std::max_element(ratio.begin(), ratio.end()) : nan, med_t = median(secs);
    std::string flag;
    if (c && f_2s < 0.9) flag += "2SIGMA<0.9";
    if (c && max_ratio > 10) flag += flag.empty() ? "ERR>10TOL" : ";ERR>10TOL";
    if (failed) flag += flag.empty() ? "FAILED" : ";FAILED";
    if (c && (f_2s < 0.9 || max_ratio > 10)) ++tot.flagged;
    if (c && max_ratio > 10) ++tot.beyond_10x;
    std::printf("%-3s %2d %9.3g %10.3g %4d | %4d %4d | %9.3g %9.3g | %6.2f %6.2f %8.3g | %9.3f s %s%s\n", name.c_str(), D, ls.tol,
                static_cast<double>(ls.calls), ls.max_iterations, n, c, med_rel, max_rel, f_tol, f_2s, max_ratio, med_t,
                flag.empty() ? "" : "  <-- ", flag.c_str());
    std::fflush(stdout);
    if (sum) {
      std::fprintf(sum, "%s,%d,%.17g,%llu,%d,%d,%d,%.17g,%.17g,%.17g,%.17g,%.17g,%.17g,%s\n", name.c_str(), D, ls.tol,
                   static_cast<unsigned long long>(ls.calls), ls.max_iterations, n, c, med_rel, max_rel, f_tol, f_2s, max_ratio,
                   med_t, flag.c_str());
      std::fflush(sum);
    }
    if (failed) break;  // fewer than half converged: the ladder ends here
  }
}

/// Splits "f2, f3,f4" into names; @throws invalid_input on an unknown or repeated name.
std::vector<std::string> accuracy_integrand_list(const std::string& list) {
  std::vector<std::string> names;
  std::string cur;
  for (char ch : list + ",") {
    if (ch == ',') {
      if (!cur.empty()) {
        if (!suite::find(cur)) throw invalid_input("accuracy: unknown integrand '" + cur + "' (f1..f6, fA, fB)");
        if (std::find(names.begin(), names.end(), cur) != names.end())
          throw invalid_input("accuracy: integrand '" + cur + "' listed twice in --integrands");
        names.push_back(cur);
      }
      cur.clear();
    } else if (ch != ' ') {
      cur += ch;
    }
  }
  if (names.empty()) throw invalid_input("accuracy: --integrands lists no integrand");
  return names;
}

/// CLI11 check for a count given as a number such as 2e10: finite, integral and within [lo, hi];
/// the message names the bounds in the same notation.
CLI::Validator count_in(double lo, double hi) {
  char desc[64];
  std::snprintf(desc, sizeof desc, "COUNT in [%g, %g]", lo, hi);
  return CLI::Validator(
      [lo, hi](std::string& v) -> std::string {
        char* end = nullptr;
        const double x = std::strtod(v.c_str(), &end);
        char msg[128];
        std::snprintf(msg, sizeof msg, "'%s' is not a whole number in [%g, %g]", v.c_str(), lo, hi);
        if (end == v.c_str() || *end != '\0' || !std::isfinite(x) || x < lo || x > hi || x != std::floor(x)) return msg;
        return {};
      },
      desc);
}

int accuracy(vegas_options o, const accuracy_args& a) {
  if (a.first_level > a.last_level)
    throw invalid_input("accuracy: --first-level " + std::to_string(a.first_level) + " is beyond the last level --levels " +
                        std::to_string(a.last_level));
  if (a.fail_fast && a.first_seed != 1)
    throw invalid_input("accuracy: --fail-fast decides a level from this invocation's seeds alone, so it cannot be combined "
                        "with --first-seed (a level split over several invocations)");
  const std::vector<std::string> names = accuracy_integrand_list(a.integrands);
  const double max_evals = a.max_evals > 0 ? a.max_evals : (o.backend == backend_kind::cuda ? 2e10 : 2e9);
  for (const auto& nm : names)  // every level's settings are valid before anything runs
    for (int level = a.first_level; level <= a.last_level; ++level) accuracy_rule(*suite::find(nm), level, o, max_evals, a.max_calls);
  std::FILE* csv = nullptr;
  std::FILE* sum = nullptr;
  if (!a.csv.empty()) {
    csv = std::fopen(a.csv.c_str(), "w");
    if (!csv) throw invalid_input("accuracy: cannot write " + a.csv);
    if (a.dry_run)  // the plan: one line per (integrand, level), for bench/accuracy_project.py
      std::fprintf(csv, "integrand,d,level,tolerance,calls_per_iteration,max_iterations,max_evaluations,skip,min_iterations,"
                        "adapt_iterations\n");
    else
      std::fprintf(csv, "integrand,d,tolerance,seed,estimate,error,exact,true_rel_error,chi2_dof,iterations,n_eval,status,"
                        "seconds,calls_per_iteration,max_iterations\n");
  }
  if (!a.dry_run && !a.summary.empty()) {
    sum = std::fopen(a.summary.c_str(), "w");
    if (!sum) throw invalid_input("accuracy: cannot write " + a.summary);
    std::fprintf(sum, "integrand,d,tolerance,calls_per_iteration,max_iterations,runs,converged,median_true_rel_error,"
                      "max_true_rel_error,frac_within_tol,frac_within_2sigma,max_ratio_to_tol,median_seconds,flag\n");
  }
  if (!a.dry_run) print_header(o);
  std::printf("levels %d..%d, seeds %d..%d per level%s; per-run evaluation budget E = %.3g, calls cap %s\n", a.first_level,
              a.last_level, a.first_seed, a.first_seed + a.seeds - 1, a.fail_fast ? " (--fail-fast)" : "", max_evals,
              a.max_calls > 0 ? std::to_string(static_cast<unsigned long long>(a.max_calls)).c_str() : "max(paper calls, E/100)");
  std::printf("rule: rel_tol 1e-3/5^(level-1); calls = min(paper calls x {1,2,5,10,25,50,125,250,625}[level], cap, E/(skip+min_iterations)); "
              "max_iterations = min(budget / calls, %d); budget = min(paper calls x max(paper iterations, 100) x "
              "25^(level-1), E)\n",
              accuracy_iteration_cap);
  if (a.dry_run)
    std::printf("int  d level       tol      calls  titr  evals/run  evals/level (at most; --dry-run: nothing is run)\n");
  else
    std::printf("int  d       tol      calls titr | runs conv | med.rel   max.rel   | <=tol  <=2sig max.r/tol | median time\n");
  accuracy_totals tot;
  for (const auto& nm : names) {
    suite::visit_integrand<int>(nm, [&](auto d) {
      using Desc = decltype(d);
      accuracy_integrand<Desc::study_dim>(nm, typename Desc::functor{}, o, a, max_evals, csv, sum, tot);
      return 0;
    });
  }
  if (csv) std::fclose(csv);
  if (sum) std::fclose(sum);
  if (a.dry_run) return 0;
  std::printf("total: %.1f s of runs, %.3g evaluations\n", tot.seconds, tot.evaluations);
  std::printf("%d level(s) flagged (fraction within 2 sigma < 0.9, or a converged run beyond 10x its tolerance)\n", tot.flagged);
  // Exit status 1 when a converged run claims a precision 10x better than it has (issue 5's hard bound).
  if (tot.beyond_10x) std::printf("%d level(s) with a converged run beyond 10x its tolerance\n", tot.beyond_10x);
  return tot.beyond_10x ? 1 : 0;
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"mcubes-bench: time and accuracy of mcubes on the reference configurations"};
  app.require_subcommand(1);
  std::string backend = "cuda";
  int runs = 5, threads = 0, tpb = 256;
  std::uint64_t calls = 0, seed = mcubes::default_seed;
  auto* ref = app.add_subcommand("reference", "the reference m-Cubes code table 1 configurations");
  auto* thr = app.add_subcommand("throughput", "evaluations/s of adapting and non-adapting iterations");
  auto* cpu = app.add_subcommand("cpu", "CPU evaluations/s per thread, f4 8-D and f2 6-D");
  auto* trc = app.add_subcommand("trace", "one run at the reference settings, every iteration printed");
  auto* acc = app.add_subcommand("accuracy", "accuracy study (paper section 5.1): tolerance ladder x seeds, CSV + summary");
  accuracy_args acc_args;
  acc->add_option("--seeds", acc_args.seeds, "runs per level (default 100), seeds --first-seed .. --first-seed + N - 1")
      ->check(CLI::Range(1, 100000));
  acc->add_option("--first-seed", acc_args.first_seed, "first seed (default 1): splits a level's seeds over invocations")
      ->check(CLI::Range(1, 1000000000));
  acc->add_option("--first-level", acc_args.first_level, "first ladder level, 1 (rel_tol 1e-3) .. 9 (default 1)")
      ->check(CLI::Range(1, accuracy_max_level));
  acc->add_option("--levels", acc_args.last_level, "last ladder level, 1 .. 9 (2.56e-9; the default)")
      ->check(CLI::Range(1, accuracy_max_level));
  acc->add_option("--integrands", acc_args.integrands, "comma-separated list (default f2,f3,f4,f5,f6,fA,fB,f1)");
  acc->add_option("--csv", acc_args.csv, "CSV of every run (with --dry-run: the plan, one line per level)");
  acc->add_option("--summary", acc_args.summary, "CSV of the per-level summary");
  acc->add_option("--threads", threads, "CPU threads (0 = all)");
  acc->add_option("--max-evals", acc_args.max_evals, "evaluation budget of one run (default 2e10 CUDA, 2e9 CPU)")
      ->check(count_in(1e3, 1e15));
  acc->add_option("--max-calls", acc_args.max_calls, "cap of calls per iteration (default max(paper calls, budget / 100))")
      ->check(count_in(2, 1e15));
  acc->add_flag("--fail-fast", acc_args.fail_fast,
                "end a level as soon as fewer than half of its seeds can converge (the rest are not run)");
  acc->add_flag("--dry-run", acc_args.dry_run,
                "print every level's calls, iterations and budget (and write them to --csv as a plan); run nothing");
  bool breakdown = false;
  thr->add_flag("--breakdown", breakdown, "also f = sum x_i and f = 1, 6-D No-Adjust (what each part of fA costs)");
  std::string trace_name;
  trc->add_option("integrand", trace_name, "f2..f6, fA, fB")->required();
  for (auto* s : {ref, thr, cpu, trc}) {
    s->add_option("--threads", threads, "CPU threads (0 = all)");
    s->add_option("--seed", seed, "seed");
  }
  for (auto* s : {ref, thr, trc, acc}) {
    s->add_option("--backend", backend, "cuda or cpu")->check(CLI::IsMember({"cuda", "cpu"}));
    s->add_option("--tpb", tpb, "CUDA threads per block");
  }
  int adapt_tiles = 1, max_blocks = 0;
  for (auto* s : {ref, thr, trc, acc}) {
    s->add_option("--adapt-tiles", adapt_tiles, "CUDA: at least this many tiles per block in V-Sample (cuda_launch_policy)")
        ->check(CLI::Range(1, 1 << 20));
    s->add_option("--max-blocks", max_blocks, "CUDA: at most this many blocks (0: fill the GPU)")->check(CLI::Range(0, 1 << 30));
  }
  for (auto* s : {ref, thr, cpu}) s->add_option("--runs", runs, "timed runs (median)")->check(CLI::Range(1, 1000));
  for (auto* s : {thr, cpu}) s->add_option("--calls", calls, "calls per iteration");
  CLI11_PARSE(app, argc, argv);
  mcubes::vegas_options o;
  o.backend = backend == "cuda" ? mcubes::backend_kind::cuda : mcubes::backend_kind::cpu;
  o.threads = threads;
  o.cuda_threads_per_block = tpb;
  o.seed = seed;
  try {
#if defined(MCUBES_HAS_CUDA_BACKEND)
    bench_policy().adapt_tiles_per_block = adapt_tiles;
    bench_policy().max_blocks = max_blocks;
#else
    (void)adapt_tiles, (void)max_blocks;
#endif
#if !defined(MCUBES_HAS_CUDA_BACKEND)
    if (o.backend == mcubes::backend_kind::cuda && !cpu->parsed() && !(acc->parsed() && acc_args.dry_run)) {
      std::fprintf(stderr, "mcubes-bench: this build has no CUDA backend; use --backend cpu\n");
      return 3;
    }
#endif
    if (ref->parsed()) return reference(o, runs);
    if (trc->parsed()) return trace(trace_name, o);
    if (acc->parsed()) return accuracy(o, acc_args);
    if (thr->parsed()) return throughput(o, calls, runs, breakdown);
    return cpu_rates(o, calls, runs);
  } catch (const mcubes::invalid_input& e) {
    std::fprintf(stderr, "mcubes-bench: error: %s\n", e.what());
    return 2;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "mcubes-bench: error: %s\n", e.what());
    return 3;
  }
}

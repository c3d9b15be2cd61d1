#pragma once
// The shared part of mcubes-bench (bench/mcubes_bench/*.cpp): the includes, the timed run on the
// chosen backend (one integrator per configuration, reset before each run), the median, the
// header line, and the entry of each benchmark. GPU times are taken with CUDA events around the
// whole run (the host loop synchronises every iteration, so they equal the wall time of the run);
// CPU wall times with steady_clock.
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


namespace mcubes_bench {

using namespace mcubes;

struct timing {
  double seconds;
  result r;
};

#if defined(MCUBES_HAS_CUDA_BACKEND)
/// The launch policy of the benchmark's CUDA integrators (--adapt-tiles, --max-blocks; no field
/// changes a result).
inline cuda_launch_policy& bench_policy() {
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

inline double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  const std::size_t n = v.size();
  return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

inline void print_header(const vegas_options& o) {
  std::printf("mcubes %s, backend %s", MCUBES_VERSION_STRING, to_string(o.backend));
#if defined(MCUBES_HAS_CUDA_BACKEND)
  if (o.backend == backend_kind::cuda) {
    cudaDeviceProp p;
    MCUBES_CUDA_CHECK(cudaGetDeviceProperties(&p, 0));
    std::printf(", device %s (%d SMs), threads per block %d", p.name, p.multiProcessorCount, o.cuda_threads_per_block);
  }
#endif
  if (o.backend == backend_kind::cpu) std::printf(", threads %d", cpu_backend(o.threads).threads());
  std::printf(", seed %llu, stratification %s, alpha %g%s\n", static_cast<unsigned long long>(o.seed),
              to_string(o.stratification), alpha_for(o), o.symmetric_map ? ", symmetric map (m-Cubes1D)" : "");
}

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

/// Highest level of the accuracy study's tolerance ladder (accuracy.cpp).
inline constexpr int accuracy_max_level = 9;          ///< 2.56e-9; level 10 (5.12e-10) is below 1e-9

/// CLI11 check for a count given as a number such as 2e10: finite, integral and within [lo, hi];
/// the message names the bounds in the same notation.
inline CLI::Validator count_in(double lo, double hi) {
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

// The benchmarks, one file each (their comments say what they measure and how).
int reference(vegas_options o, int runs);                               // reference.cpp
int trace(const std::string& name, vegas_options o);                    // reference.cpp
int throughput(vegas_options o, std::uint64_t calls, int runs, bool breakdown);  // throughput.cpp
int cpu_rates(vegas_options o, std::uint64_t calls, int runs);          // cpu.cpp
int accuracy(vegas_options o, const accuracy_args& a);                  // accuracy.cpp
int eq45(vegas_options o, std::uint64_t calls, int seeds, std::uint64_t first_seed);  // eq45.cpp

}  // namespace mcubes_bench

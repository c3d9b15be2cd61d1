// jit-bench: an integrand compiled at run time (include/mcubes/jit.hpp) against the same integrand
// compiled ahead of time, and the cost of the compilation.
//
//  - speed: f4 8-D as the expression text of `mcubes integrate --expr` against the built-in
//    mcubes::suite::f4_gaussian, the protocol of `mcubes-bench cpu` (10 iterations of ~1e6
//    evaluations; 10 adapting, then 5 adapting + 5 with the map frozen), in alternating pairs
//    (built-in, compiled at run time) so that each pair's ratio is taken within the same moment of
//    a loaded machine; median of the pairs. CPU: evaluations per CPU-second (process CPU time, robust
//    to other processes on the cores) and per wall second; CUDA: evaluations per second of the runs.
//  - compile time: the first use (a fresh, empty cache folder each time: the compiler runs) and a
//    cache hit (key, checks of the cached object, dlopen), median of several.
//
// In a CUDA build this file is compiled by nvcc, so that the built-in f4 runs on the GPU as well
// (--backend cuda); the run-time compiled one is compiled by nvcc at run time either way.
//
//   jit-bench [--backend cpu|cuda] [--threads N] [--pairs P] [--calls N] [--cold K] [--warm W]
#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include <time.h>
#include <unistd.h>

#include <CLI/CLI.hpp>

#if defined(__CUDACC__)
#include <mcubes/cuda.cuh>
#else
#include <mcubes/mcubes.hpp>
#endif
#include <mcubes/jit.hpp>
#include <mcubes/suite.hpp>

namespace {

using namespace mcubes;

/// The f4 8-D text, as a user types it (exp(-625 sum (x_i - 1/2)^2), the built-in's arithmetic).
const char* const f4_text =
    "exp(-625*((x[0]-0.5)*(x[0]-0.5) + (x[1]-0.5)*(x[1]-0.5) + (x[2]-0.5)*(x[2]-0.5) + (x[3]-0.5)*(x[3]-0.5) + "
    "(x[4]-0.5)*(x[4]-0.5) + (x[5]-0.5)*(x[5]-0.5) + (x[6]-0.5)*(x[6]-0.5) + (x[7]-0.5)*(x[7]-0.5)))";

double process_cpu_seconds() {
  timespec ts{};
  clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
  return static_cast<double>(ts.tv_sec) + 1e-9 * static_cast<double>(ts.tv_nsec);
}

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  const std::size_t n = v.size();
  return n == 0 ? std::nan("") : n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

/// A fresh folder under TMPDIR (or /tmp) for a cold compilation's cache.
std::string fresh_folder() {
  const char* t = std::getenv("TMPDIR");
  std::string templ = std::string(t != nullptr && t[0] == '/' ? t : "/tmp") + "/jit-bench.XXXXXX";
  std::vector<char> buf(templ.begin(), templ.end());
  buf.push_back('\0');
  if (::mkdtemp(buf.data()) == nullptr) throw error("cannot create a temporary folder");
  return buf.data();
}

struct timing {
  double rate_cpu = 0;   ///< evaluations per CPU-second (per thread: divided by the threads)
  double rate_wall = 0;  ///< evaluations per wall second of the run
  result r;
};

template <class Run>
timing timed(Run&& run, int threads) {
  const double c0 = process_cpu_seconds();
  const auto t0 = std::chrono::steady_clock::now();
  timing t;
  t.r = run();
  const double wall = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  const double cpu = process_cpu_seconds() - c0;
  const double n = static_cast<double>(t.r.n_eval);
  t.rate_cpu = n / cpu / threads;
  t.rate_wall = n / wall;
  return t;
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"jit-bench: an integrand compiled at run time against the built-in one, and the compile time"};
  std::string backend = "cpu";
  int threads = 1, pairs = 5, cold = 3, warm = 20;
  double calls = 1e6;
  app.add_option("--backend", backend, "cpu or cuda")->capture_default_str();
  app.add_option("--threads", threads, "CPU threads")->capture_default_str();
  app.add_option("--pairs", pairs, "alternating (built-in, run-time compiled) pairs per row")->capture_default_str();
  app.add_option("--calls", calls, "evaluations per iteration (at most)")->capture_default_str();
  app.add_option("--cold", cold, "first-use compilations (each into an empty cache folder)")->capture_default_str();
  app.add_option("--warm", warm, "cache hits timed")->capture_default_str();
  CLI11_PARSE(app, argc, argv);
  std::setvbuf(stdout, nullptr, _IOLBF, 0);  // each line as it comes, also into a pipe
  try {
    const bool cuda = backend == "cuda";
    MCUBES_EXPECTS(cuda || backend == "cpu", "--backend must be cpu or cuda");
#if !defined(__CUDACC__)
    MCUBES_EXPECTS(!cuda, "--backend cuda needs the CUDA build of jit-bench (for the built-in f4 on the GPU)");
#endif
    vegas_options o;
    o.backend = cuda ? backend_kind::cuda : backend_kind::cpu;
    o.threads = threads;
    o.calls_per_iteration = static_cast<std::uint64_t>(calls);
    o.max_iterations = 10;
    o.skip = 5;
    o.rel_tol = 1e-12;  // all 10 iterations run
    const double exact = suite::exact_f4(8);

    char host[256] = {};
    ::gethostname(host, sizeof host - 1);
    std::printf("jit-bench: mcubes %s, backend %s, threads %d, host %s\n", MCUBES_VERSION_STRING, backend.c_str(),
                threads, host);

    // 1. The compile time: first use, then cache hits.
    jit::integrand_source src = jit::expression(f4_text, 8);
    const backend_kind kind = o.backend;
    std::vector<double> cold_s, cold_total_s, warm_s;
    std::string cold_dir;
    for (int k = 0; k < cold; ++k) {
      jit::compile_options c;
      cold_dir = fresh_folder() + "/mcubes";
      c.cache_dir = cold_dir;
      const jit::compiled_integrand f = jit::compile(src, jit::method::vegas, kind, c);
      if (f.info().cache_hit) throw error("a cold compilation found its object in the cache");
      cold_s.push_back(f.info().compile_seconds);
      cold_total_s.push_back(f.info().total_seconds);
      if (k == 0)
        std::printf("compiler: %s (%s)%s%s\n", f.info().compiler.c_str(), f.info().compiler_version.c_str(),
                    f.info().cuda_arch.empty() ? "" : ", ", f.info().cuda_arch.c_str());
    }
    jit::compile_options warm_opts;
    warm_opts.cache_dir = cold_dir;  // the last cold compilation's cache
    for (int k = 0; k < warm; ++k) {
      const jit::compiled_integrand f = jit::compile(src, jit::method::vegas, kind, warm_opts);
      if (!f.info().cache_hit) throw error("a warm compilation missed the cache");
      warm_s.push_back(f.info().total_seconds);
    }
    std::printf("first use (compiler wall time, median of %d): %.2f s (whole compile() call %.2f s; min %.2f, max %.2f)\n",
                cold, median(cold_s), median(cold_total_s), *std::min_element(cold_s.begin(), cold_s.end()),
                *std::max_element(cold_s.begin(), cold_s.end()));
    std::printf("cache hit (whole compile() call, median of %d): %.1f ms (min %.1f, max %.1f)\n", warm,
                1e3 * median(warm_s), 1e3 * *std::min_element(warm_s.begin(), warm_s.end()),
                1e3 * *std::max_element(warm_s.begin(), warm_s.end()));

    // 2. Speed against the built-in f4, in alternating pairs.
    const jit::compiled_integrand f = jit::compile(src, jit::method::vegas, kind, warm_opts);
    const int rate_threads = cuda ? 1 : cpu_backend(threads).threads();
    std::printf("\n%-26s | %-13s | %-13s | %-13s | %-13s | %-8s | %s\n", "f4 8-D, 10 iterations", "built-in ev/s",
                "run-time ev/s", "built-in/CPU-s", "run-time/CPU-s", "ratio", "same bits, |estimate - exact|/error");
    for (const int adapt : {10, 5}) {
      o.adapt_iterations = adapt;
      auto builtin = [&] { return vegas<8>(suite::f4_gaussian{}, region<8>::unit(), o); };
      auto compiled = [&] { return f.vegas(jit::box::unit(8), o); };
      (void)builtin(), (void)compiled();  // warm-up
      std::vector<double> ratios, a_wall, b_wall, a_cpu, b_cpu;
      bool same = true;
      result last;
      for (int p = 0; p < pairs; ++p) {
        const timing a = timed(builtin, rate_threads);
        const timing b = timed(compiled, rate_threads);
        same = same && a.r.estimate == b.r.estimate && a.r.error == b.r.error;
        ratios.push_back(cuda ? b.rate_wall / a.rate_wall : b.rate_cpu / a.rate_cpu);
        a_wall.push_back(a.rate_wall), b_wall.push_back(b.rate_wall);
        a_cpu.push_back(a.rate_cpu), b_cpu.push_back(b.rate_cpu);
        last = b.r;
      }
      const std::string label = adapt == 10 ? "10 adapting" : "5 adapting + 5 frozen";
      std::printf("%-26s | %13.4g | %13.4g | %13.4g | %13.4g | %8.3f | %s, %.2f (min ratio %.3f, max %.3f)\n",
                  label.c_str(), median(a_wall), median(b_wall), cuda ? std::nan("") : median(a_cpu),
                  cuda ? std::nan("") : median(b_cpu), median(ratios), same ? "yes" : "NO",
                  std::fabs(last.estimate - exact) / last.error, *std::min_element(ratios.begin(), ratios.end()),
                  *std::max_element(ratios.begin(), ratios.end()));
    }
    std::printf("ratio: run-time compiled / built-in, per CPU-second on the CPU, per wall second on CUDA (median of "
                "%d pairs)\n",
                pairs);
    return 0;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "jit-bench: error: %s\n", e.what());
    return 1;
  }
}

// pi-bench: Monte Carlo pi and the composite midpoint rule (the classic GPU exercise) on the GPU and the CPU,
// time and accuracy together (issue 4).
//
//   GPU  Monte Carlo pi, N = 1e11 (--mc-samples), threads per block 32 .. 1024: one warm-up run, then
//        --reps runs (default 5); median kernel time (CUDA events) -> G samples/s; checks that the
//        hit count is bitwise identical for every block size and within 5 sigma of pi.
//   GPU  midpoint rule for int_0^1 4/(1+x^2) dx, N = 1e6 and 1e9: median kernel time and wall time
//        of the whole call (kernel, copy of the tile values, host tree); error against pi; checks
//        the bits for every block size and |error| <= 1e-13 (1e6), 2e-15 (1e9).
//   CPU  the same methods (Monte Carlo with --cpu-mc-samples, default 1e9), all hardware threads.
//
// Exit status 0 when every check passes, 1 otherwise. Build: cmake ... -DMCUBES_CUDA_ARCHITECTURES=90,
// target pi_bench (bin/pi-bench).
#include <cuda_runtime.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <string>
#include <thread>
#include <vector>

#include <mcubes/cuda.cuh>
#include <mcubes/backend/cuda/check.cuh>

namespace {

constexpr double pi_value = 3.141592653589793238462643383279502884;
constexpr int block_sizes[] = {32, 64, 128, 256, 512, 1024};

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  const std::size_t n = v.size();
  return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

std::uint64_t parse_u64(const char* s) {
  const double d = std::strtod(s, nullptr);  // accepts 1e11
  if (!(d >= 1) || d > 9.2e18) {
    std::fprintf(stderr, "pi-bench: bad count '%s'\n", s);
    std::exit(2);
  }
  return static_cast<std::uint64_t>(d);
}

bool all_ok = true;
void check(bool ok, const std::string& what) {
  std::printf("  check %-70s %s\n", what.c_str(), ok ? "PASS" : "FAIL");
  if (!ok) all_ok = false;
}

}  // namespace

int main(int argc, char** argv) {
  std::uint64_t mc_samples = 100000000000ull;  // 1e11
  std::uint64_t cpu_mc_samples = 1000000000ull;
  int reps = 5;
  bool cpu = true;
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    if (a == "--mc-samples" && i + 1 < argc) mc_samples = parse_u64(argv[++i]);
    else if (a == "--cpu-mc-samples" && i + 1 < argc) cpu_mc_samples = parse_u64(argv[++i]);
    else if (a == "--reps" && i + 1 < argc) reps = std::max(1, std::atoi(argv[++i]));
    else if (a == "--no-cpu") cpu = false;
    else {
      std::fprintf(stderr, "usage: pi-bench [--mc-samples N] [--cpu-mc-samples N] [--reps R] [--no-cpu]\n");
      return 2;
    }
  }
  try {
    if (mcubes::cuda_device_count() < 1) {
      std::fprintf(stderr, "pi-bench: no CUDA device\n");
      return 1;
    }
    cudaDeviceProp p{};
    MCUBES_CUDA_CHECK(cudaGetDeviceProperties(&p, 0));
    int driver = 0, runtime = 0;
    MCUBES_CUDA_CHECK(cudaDriverGetVersion(&driver));
    MCUBES_CUDA_CHECK(cudaRuntimeGetVersion(&runtime));
    const std::time_t now = std::time(nullptr);
    char date[32];
    std::strftime(date, sizeof date, "%Y-%m-%d %H:%M UTC", std::gmtime(&now));
    std::printf("pi-bench %s | device %s, %d SMs, cc %d.%d | driver %d, runtime %d, nvcc %d.%d | host threads %u\n", date,
                p.name, p.multiProcessorCount, p.major, p.minor, driver, runtime, __CUDACC_VER_MAJOR__,
                __CUDACC_VER_MINOR__, std::thread::hardware_concurrency());
    std::printf("median of %d runs after one warm-up; kernel time from CUDA events, wall time of the whole call\n\n", reps);

    // ---- GPU Monte Carlo pi
    std::printf("GPU Monte Carlo pi, N = %.4g, seed %llu\n", static_cast<double>(mc_samples),
                static_cast<unsigned long long>(mcubes::default_seed));
    std::printf("  %-6s %-8s %-6s %-14s %-20s %-11s %-8s %-11s %-11s %-9s\n", "tpb", "grid", "b/SM", "hits", "estimate",
                "error", "pull", "kernel ms", "wall ms", "G samp/s");
    std::uint64_t ref_hits = 0;
    bool same_hits = true, within = true;
    double best_rate = 0;
    for (int b : block_sizes) {
      mcubes::pi_options o;
      o.samples = mc_samples;
      o.backend = mcubes::backend_kind::cuda;
      o.cuda_threads_per_block = b;
      mcubes::cuda_launch_policy policy;
      policy.threads_per_block = b;
      mcubes::cuda_backend backend(policy);
      mcubes::pi_monte_carlo_with(o, backend);  // warm-up
      mcubes::launch_report rep;
      std::vector<double> kms, wms;
      mcubes::pi_mc_result r;
      for (int k = 0; k < reps; ++k) {
        r = mcubes::pi_monte_carlo_with(o, backend);
        rep = backend.last_launch();
        kms.push_back(rep.kernel_ms);
        wms.push_back(r.seconds * 1e3);
        if (b == block_sizes[0] && k == 0) ref_hits = r.hits;
        if (r.hits != ref_hits) same_hits = false;
      }
      const double pull = (r.estimate - pi_value) / r.error;
      if (std::fabs(pull) > 5) within = false;
      const double km = median(kms), rate = static_cast<double>(mc_samples) / (km * 1e-3) / 1e9;
      best_rate = std::max(best_rate, rate);
      std::printf("  %-6d %-8lld %-6d %-14llu %-20.16g %-11.3e %-8.2f %-11.3f %-11.3f %-9.1f\n", b, rep.grid, rep.blocks_per_sm,
                  static_cast<unsigned long long>(r.hits), r.estimate, r.estimate - pi_value, pull, km, median(wms), rate);
    }
    check(same_hits, "hit count bitwise identical for every block size and run");
    check(within, "|estimate - pi| <= 5 sigma");
    std::printf("  best: %.1f G samples/s (issue target >= 500 on an H100)\n\n", best_rate);

    // ---- GPU midpoint
    for (std::uint64_t n : {std::uint64_t(1000000), std::uint64_t(1000000000)}) {
      const double bound = n == 1000000 ? 1e-13 : 2e-15;
      std::printf("GPU midpoint rule, N = %.0e\n", static_cast<double>(n));
      std::printf("  %-6s %-8s %-6s %-20s %-11s %-11s %-11s\n", "tpb", "grid", "b/SM", "estimate", "error", "kernel ms",
                  "wall ms");
      double ref = 0;
      bool same = true, accurate = true;
      for (int b : block_sizes) {
        mcubes::midpoint_options o;
        o.backend = mcubes::backend_kind::cuda;
        o.cuda_threads_per_block = b;
        const auto f = mcubes::detail::as_point_integrand(mcubes::pi_integrand{});
        const mcubes::region<1> reg({0.0}, {1.0});
        mcubes::cuda_launch_policy policy;
        policy.threads_per_block = b;
        mcubes::cuda_backend backend(policy);
        mcubes::midpoint_with<1>(f, reg, n, o, backend);  // warm-up
        mcubes::launch_report rep;
        std::vector<double> kms, wms;
        mcubes::result r;
        for (int k = 0; k < reps; ++k) {
          r = mcubes::midpoint_with<1>(f, reg, n, o, backend);
          rep = backend.last_launch();
          kms.push_back(rep.kernel_ms);
          wms.push_back(r.seconds * 1e3);
          if (b == block_sizes[0] && k == 0) ref = r.estimate;
          if (std::memcmp(&ref, &r.estimate, sizeof ref) != 0) same = false;
        }
        if (!(std::fabs(r.estimate - pi_value) <= bound)) accurate = false;
        std::printf("  %-6d %-8lld %-6d %-20.16g %-11.3e %-11.4f %-11.4f\n", b, rep.grid, rep.blocks_per_sm, r.estimate,
                    r.estimate - pi_value, median(kms), median(wms));
      }
      check(same, "estimate bitwise identical for every block size and run");
      char what[96];
      std::snprintf(what, sizeof what, "|error| <= %.0e", bound);
      check(accurate, what);
      std::printf("\n");
    }

    // ---- CPU rows
    if (cpu) {
      std::printf("CPU (%u threads)\n", std::thread::hardware_concurrency());
      mcubes::pi_options o;
      o.samples = cpu_mc_samples;
      const mcubes::pi_mc_result r = mcubes::pi_monte_carlo(o);
      std::printf("  Monte Carlo pi  N = %-9.3g estimate %-20.16g error %-11.3e pull %-7.2f %9.3f s  %8.3f G samples/s\n",
                  static_cast<double>(r.samples), r.estimate, r.estimate - pi_value, (r.estimate - pi_value) / r.error,
                  r.seconds, static_cast<double>(r.samples) / r.seconds / 1e9);
      mcubes::pi_options g = o;
      g.backend = mcubes::backend_kind::cuda;
      check(mcubes::pi_monte_carlo(g).hits == r.hits, "CPU and GPU hit counts equal for the same N and seed");
      for (std::uint64_t n : {std::uint64_t(1000000), std::uint64_t(1000000000)}) {
        const mcubes::result m = mcubes::pi_midpoint(n);
        std::printf("  midpoint        N = %-9.3g estimate %-20.16g error %-11.3e %9.4f s\n", static_cast<double>(n),
                    m.estimate, m.estimate - pi_value, m.seconds);
      }
    }
  } catch (const mcubes::error& e) {
    std::fprintf(stderr, "pi-bench: %s\n", e.what());
    return 1;
  }
  std::printf("\n%s\n", all_ok ? "all checks passed" : "SOME CHECKS FAILED");
  return all_ok ? 0 : 1;
}

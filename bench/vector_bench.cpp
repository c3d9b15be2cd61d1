// Vector-valued integrands (algorithm/vegas_vector.hpp): the cost of N components that share an
// expensive part, against one component. The integrand: w(x) = exp(-sum_i 20 (x_i - c_i)^2)
// sin-modulated (the expensive part, computed once per sample), and the N moments w x_0^k,
// k = 0..N-1. Figures, each the median of --runs runs after a warm-up, wall time of the run:
//   scalar   w alone through mcubes::vegas (the CPU fast path);
//   vector1  values<1>{w} through mcubes::vegas_vector;
//   vector16 the 16 moments through mcubes::vegas_vector (covariance of 16 x 16 included).
// Each line prints the evaluations/s and the ratio to the scalar run.
//
//   vector-bench [--backend cpu|cuda] [--calls N] [--iterations I] [--runs R] [--threads T] [--block B]
#if defined(__CUDACC__)
#include <mcubes/cuda.cuh>
#else
#include <mcubes/mcubes.hpp>
#endif

#include <algorithm>
#include <chrono>
#include <cmath>
#include <string>
#include <cstdio>
#include <cstdlib>
#include <functional>
#include <string>
#include <vector>

#include "median_seconds.hpp"

namespace {

MCUBES_HOST_DEVICE inline double shared_part(const mcubes::point<4>& x) {
  double r2 = 0;
  for (int i = 0; i < 4; ++i) r2 += 20 * (x[i] - 0.4) * (x[i] - 0.4);
  return exp(-r2) * (1.5 + sin(7 * x[0] + 3 * x[1]) * cos(5 * x[2] - x[3]));
}
struct scalar_w {
  MCUBES_HOST_DEVICE double operator()(const mcubes::point<4>& x) const { return shared_part(x); }
};
template <int N>
struct moments {
  MCUBES_HOST_DEVICE mcubes::values<N> operator()(const mcubes::point<4>& x) const {
    const double w = shared_part(x);
    mcubes::values<N> v;
    double m = w;
    for (int k = 0; k < N; ++k, m *= x[0]) v[k] = m;
    return v;
  }
};


}  // namespace

int main(int argc, char** argv) {
  unsigned long long calls = 2000000;
  int iterations = 5, runs = 3, threads = 0, block = 256;
  std::string backend = "cpu";
  for (int i = 1; i + 1 < argc; i += 2) {
    const std::string a = argv[i];
    if (a == "--backend") backend = argv[i + 1];
    else if (a == "--calls") calls = std::strtoull(argv[i + 1], nullptr, 10);
    else if (a == "--iterations") iterations = std::atoi(argv[i + 1]);
    else if (a == "--runs") runs = std::atoi(argv[i + 1]);
    else if (a == "--threads") threads = std::atoi(argv[i + 1]);
    else if (a == "--block") block = std::atoi(argv[i + 1]);
    else {
      std::fprintf(stderr, "usage: %s [--backend cpu|cuda] [--calls N] [--iterations I] [--runs R] [--threads T] [--block B]\n", argv[0]);
      return 2;
    }
  }
  mcubes::vegas_options o;
  o.calls_per_iteration = calls;
  o.max_iterations = iterations;
  o.adapt_iterations = iterations;
  o.skip = 0;
  o.min_iterations = 1;
  o.rel_tol = 1e-14;
  o.threads = threads;
  o.cuda_threads_per_block = block;
  o.backend = backend == "cuda" ? mcubes::backend_kind::cuda : mcubes::backend_kind::cpu;
  const auto reg = mcubes::region<4>::unit();
  std::printf("vector-bench: %s, %llu calls/iteration, %d iterations, %d threads (0: all), median of %d runs\n", backend.c_str(), calls,
              iterations, threads, runs);
  mcubes::result s;
  const double t_s = median_seconds(runs, [&] { s = mcubes::vegas<4>(scalar_w{}, reg, o); });
  std::printf("scalar    %8.4f s  %7.2f M evals/s  estimate %.9g +- %.3g\n", t_s, s.n_eval / t_s * 1e-6, s.estimate, s.error);
  mcubes::vector_result v1, v16;
  const double t_1 = median_seconds(runs, [&] { v1 = mcubes::vegas_vector<4>(moments<1>{}, reg, o); });
  std::printf("vector1   %8.4f s  %7.2f M evals/s  estimate %.9g +- %.3g  (time / scalar %.2f)\n", t_1,
              v1.run.n_eval / t_1 * 1e-6, v1.estimate[0], v1.error[0], t_1 / t_s);
  const double t_16 = median_seconds(runs, [&] { v16 = mcubes::vegas_vector<4>(moments<16>{}, reg, o); });
  std::printf("vector16  %8.4f s  %7.2f M evals/s  estimate[0] %.9g +- %.3g  (time / scalar %.2f, / vector1 %.2f)\n", t_16,
              v16.run.n_eval / t_16 * 1e-6, v16.estimate[0], v16.error[0], t_16 / t_s, t_16 / t_1);
  return 0;
}

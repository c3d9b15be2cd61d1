// The C++ side of the Python module's benchmark (bench/python_bench.py): the paper's f4,
// exp(-625 sum (x_i - 1/2)^2) in 8-D, by m-Cubes on the CPU backend, as a one-point functor (the
// fast path) and as an array integrand (backend/cpu/array_path.hpp, the path a NumPy function
// takes, here with the values computed in C++): evaluations per second of wall time, the estimate
// and its error. Usage: array-bench [calls_per_iteration] [iterations] [threads]
// (defaults 1e7, 10, all cores). The same options as python_bench.py, so the figures compare.

#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>

#include "mcubes/mcubes.hpp"

namespace {

constexpr int dim = 8;

struct f4_point {
  double operator()(const mcubes::point<dim>& x) const {
    double s = 0;
    for (int i = 0; i < dim; ++i) s += (x[i] - 0.5) * (x[i] - 0.5);
    return std::exp(-625 * s);
  }
};

struct f4_array {
  static constexpr bool array_integrand = true;
  void operator()(const double* x, std::size_t n, double* values) const {
    for (std::size_t i = 0; i < n; ++i) values[i] = f4_point{}(*reinterpret_cast<const mcubes::point<dim>*>(x + i * dim));
  }
  double operator()(const mcubes::point<dim>& x) const { return f4_point{}(x); }
};

template <class F>
void run(const char* label, const F& f, const mcubes::vegas_options& opt) {
  const auto t0 = std::chrono::steady_clock::now();
  const mcubes::result r = mcubes::vegas(f, mcubes::region<dim>::unit(), opt);
  const double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  std::printf("%-22s %12.6e +- %.2e  n_eval %llu  %.3f s  %.2f M evaluations/s\n", label, r.estimate, r.error,
              static_cast<unsigned long long>(r.n_eval), s, r.n_eval / s / 1e6);
}

}  // namespace

int main(int argc, char** argv) {
  mcubes::vegas_options opt;
  opt.calls_per_iteration = argc > 1 ? static_cast<std::uint64_t>(std::atof(argv[1])) : 10000000;
  opt.max_iterations = argc > 2 ? std::atoi(argv[2]) : 10;
  opt.threads = argc > 3 ? std::atoi(argv[3]) : 0;
  opt.adapt_iterations = opt.max_iterations / 2;
  opt.skip = 0;
  opt.min_iterations = opt.max_iterations;  // every iteration runs
  opt.rel_tol = 1e-12;
  std::printf("f4 8-D, %llu calls per iteration, %d iterations (%d adapting), threads %d\n",
              static_cast<unsigned long long>(opt.calls_per_iteration), opt.max_iterations, opt.adapt_iterations,
              opt.threads);
  run("one-point functor", f4_point{}, opt);
  run("array integrand (C++)", f4_array{}, opt);
  return 0;
}

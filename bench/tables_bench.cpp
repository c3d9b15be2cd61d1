// Tables inside integrands (issue: stateful integrands): evaluations/s of the cluster-counts
// example (examples/cluster_counts.hpp, 6-D, a bicubic 2-D table and two cubic splines) against
// the same integrand with the analytic functions inlined, and of a 2-D integrand that is one
// bicubic lookup per sample (uniform and irregular grid) against the analytic function it tabulates.
// Each figure: Vegas with a fixed number of iterations (rel_tol 1e-14: never converged), warm-up
// first, the median of --runs runs; evaluations/s = n_eval / seconds of the run (sampling,
// adaptation and reduction included), printed with the estimate and its error.
//
//   tables-bench [--backend cuda|cpu] [--calls N] [--iterations I] [--runs R]
#if defined(__CUDACC__)
#include <mcubes/cuda.cuh>
#else
#include <mcubes/mcubes.hpp>
#endif
#include <mcubes/tables.hpp>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include "../examples/cluster_counts.hpp"

namespace {

/// The cluster-counts integrand with a register budget of 128 (2 blocks of 256 threads per SM) for
/// the CUDA sampling kernel instead of 80 (integrand.hpp, cuda_min_blocks).
struct cluster_counts_2_blocks : cluster_counts {
  static constexpr int cuda_min_blocks = 2;
};

struct bicubic_lookup {
  mcubes::interp2d_view t;
  MCUBES_HOST_DEVICE double operator()(const mcubes::point<2>& x) const { return t(x[0], x[1]); }
};
struct analytic_2d {
  MCUBES_HOST_DEVICE double operator()(const mcubes::point<2>& x) const {
    return 2 + sin(3 * x[0]) * exp(-x[1]) + x[0] * x[1];
  }
};

template <int D, class F>
void measure(const char* name, const F& f, const mcubes::region<D>& reg, mcubes::vegas_options o, int runs) {
  o.rel_tol = 1e-14;
  (void)mcubes::vegas(f, reg, o);  // warm-up
  std::vector<double> secs;
  mcubes::result r;
  for (int k = 0; k < runs; ++k) {
    r = mcubes::vegas(f, reg, o);
    secs.push_back(r.seconds);
  }
  std::sort(secs.begin(), secs.end());
  const double med = secs[secs.size() / 2];
  std::printf("%-34s %-5s calls/it %-10llu it %-3d median %9.4f s  %8.3f G evals/s  estimate %.9g +- %.3g\n", name,
              r.backend.c_str(), static_cast<unsigned long long>(o.calls_per_iteration), r.iterations, med,
              static_cast<double>(r.n_eval) / med * 1e-9, r.estimate, r.error);
}

}  // namespace

int main(int argc, char** argv) {
  std::string backend = "cuda";
  unsigned long long calls = 0;
  int iterations = 10, runs = 5;
  for (int i = 1; i + 1 < argc; i += 2) {
    const std::string a = argv[i];
    if (a == "--backend") backend = argv[i + 1];
    else if (a == "--calls") calls = std::strtoull(argv[i + 1], nullptr, 10);
    else if (a == "--iterations") iterations = std::atoi(argv[i + 1]);
    else if (a == "--runs") runs = std::atoi(argv[i + 1]);
    else {
      std::fprintf(stderr, "usage: %s [--backend cuda|cpu] [--calls N] [--iterations I] [--runs R]\n", argv[0]);
      return 2;
    }
  }
  try {
    mcubes::vegas_options o;
    o.backend = backend == "cpu" ? mcubes::backend_kind::cpu : mcubes::backend_kind::cuda;
    o.calls_per_iteration = calls ? calls : (backend == "cpu" ? 2000000ull : 100000000ull);
    o.max_iterations = iterations;
    o.adapt_iterations = iterations;
    o.skip = 0;
    o.min_iterations = 1;
    const cluster::tables t = cluster::read_tables(MCUBES_BENCH_CLUSTER_DATA);
    const cluster_counts tabulated{t.mass_function.view(), t.distance.view(), t.selection.view()};
    std::printf("tables-bench: backend %s, %d runs, %d iterations each; exact cluster counts %.9g\n", backend.c_str(), runs,
                iterations, model::exact());
    measure("cluster counts, tables", tabulated, cluster_region(), o, runs);
    measure("cluster counts, tables, 128 registers", cluster_counts_2_blocks{tabulated}, cluster_region(), o, runs);
    measure("cluster counts, analytic inline", cluster_counts_analytic{}, cluster_region(), o, runs);

    // A 2-D bicubic table of 2 + sin(3x) e^-y + x y on [0, 1]^2, 201 x 201 nodes.
    std::vector<double> xs, z;
    for (int i = 0; i <= 200; ++i) xs.push_back(i / 200.0);
    for (double y : xs)
      for (double x : xs) z.push_back(2 + std::sin(3 * x) * std::exp(-y) + x * y);
    std::vector<double> irr;  // the same count of nodes, irregular (bisection)
    for (int i = 0; i <= 200; ++i) irr.push_back(std::pow(i / 200.0, 1.3));
    std::vector<double> zi;
    for (double y : irr)
      for (double x : irr) zi.push_back(2 + std::sin(3 * x) * std::exp(-y) + x * y);
    const mcubes::interp2d uni(mcubes::grid_axis::uniform(0, 1, 201), mcubes::grid_axis::uniform(0, 1, 201), z,
                               mcubes::interp2d_kind::bicubic);
    const mcubes::interp2d bis(mcubes::grid_axis::nodes(irr), mcubes::grid_axis::nodes(irr), zi, mcubes::interp2d_kind::bicubic);
    const mcubes::region<2> square({0, 0}, {1, 1});
    measure("2-D bicubic lookup, uniform grid", bicubic_lookup{uni.view()}, square, o, runs);
    measure("2-D bicubic lookup, irregular grid", bicubic_lookup{bis.view()}, square, o, runs);
    measure("2-D analytic (the tabulated function)", analytic_2d{}, square, o, runs);
    return 0;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "error: %s\n", e.what());
    return 3;
  }
}

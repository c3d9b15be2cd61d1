// The cluster-counts example (cluster_counts.hpp: the integrand, its tables and its exact value):
// reads the tables, integrates on the chosen backend and compares with the exact value.
//
//   example_cluster_counts [--backend cpu|cuda|automatic] [--data DIR] [--rel-tol R] [--check K]
//                          [--skip-without-device]
//   example_cluster_counts --write-tables DIR
//
// --check K: exit 1 unless the run converged within K sigma of the exact value (used by the tests);
// --skip-without-device: exit 77 (a skipped test) when no CUDA device is present.
// The same file is compiled by g++ (CPU) and, as cluster_counts_cuda.cu, by nvcc (CPU and GPU).
#include "cluster_counts.hpp"

#include <cstdio>
#include <cstdlib>
#include <string>

#ifndef MCUBES_EXAMPLE_DATA_DIR
#define MCUBES_EXAMPLE_DATA_DIR "examples/data/cluster_counts"
#endif

using namespace cluster;

int main(int argc, char** argv) {
  std::string data = MCUBES_EXAMPLE_DATA_DIR, backend = "automatic", write_dir;
  double rel_tol = 1e-4, check = 0;
  bool skip_without_device = false;  // exit 77 (a skipped test) when no CUDA device is present
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    const bool has_value = i + 1 < argc;
    if (a == "--backend" && has_value) backend = argv[++i];
    else if (a == "--data" && has_value) data = argv[++i];
    else if (a == "--rel-tol" && has_value) rel_tol = std::atof(argv[++i]);
    else if (a == "--check" && has_value) check = std::atof(argv[++i]);
    else if (a == "--write-tables" && has_value) write_dir = argv[++i];
    else if (a == "--skip-without-device") skip_without_device = true;
    else {
      std::fprintf(stderr, "usage: %s [--backend cpu|cuda|automatic] [--data DIR] [--rel-tol R] [--check K] | --write-tables DIR\n", argv[0]);
      return 2;
    }
  }
  try {
    if (!write_dir.empty()) {
      write_tables(write_dir);
      const table_accuracy a = check_tables(read_tables(write_dir));
      std::printf("tables written to %s\nlargest interpolation error / largest value on the region: mass function "
                  "%.1e, distance %.1e, selection %.1e\nrelative bias of the integral of the tabulated integrand: %.1e\n",
                  write_dir.c_str(), a.mass_function, a.distance, a.selection, a.integral_bias);
      return 0;
    }
#if defined(__CUDACC__)
    if (skip_without_device && mcubes::cuda_device_count() == 0) {
      std::printf("no CUDA device: skipped\n");
      return 77;
    }
#else
    (void)skip_without_device;
#endif
    const tables t = read_tables(data);
    const cluster_counts f{t.mass_function.view(), t.distance.view(), t.selection.view()};
    const mcubes::region<6> reg = cluster_region();
    mcubes::vegas_options opt;
    opt.backend = backend == "cpu" ? mcubes::backend_kind::cpu
                  : backend == "cuda" ? mcubes::backend_kind::cuda
                                      : mcubes::backend_kind::automatic;
    opt.rel_tol = rel_tol;
    opt.calls_per_iteration = 4000000;
    const mcubes::result r = mcubes::vegas(f, reg, opt);
    const double exact = model::exact();
    const double pull = (r.estimate - exact) / r.error;
    std::printf("N = %.10g +- %.3g (%s, %d iterations, chi2/dof %.2f, backend %s)\nexact %.10g, pull %.2f sigma\n",
                r.estimate, r.error, mcubes::to_string(r.status), r.iterations, r.chi2_dof, r.backend.c_str(), exact, pull);
    if (check > 0 && !(r.converged() && std::fabs(pull) <= check)) {
      std::fprintf(stderr, "check failed: not converged or more than %g sigma from the exact value\n", check);
      return 1;
    }
    return 0;
  } catch (const mcubes::invalid_input& e) {
    std::fprintf(stderr, "error: %s\n", e.what());
    return 2;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "error: %s\n", e.what());
    return 3;
  }
}

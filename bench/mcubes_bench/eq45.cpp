// mcubes-bench eq45: G. P. Lepage's Eq. (45) (arXiv:2009.05112; three Gaussians on the diagonal of
// [0,1]^8, tests/support/eq45.hpp) at --calls per iteration (default 1e7) and every other option at
// the library's defaults (rel_tol 1e-3 among them; --stratification as given), seeds --first-seed ..
// --first-seed + --seeds - 1: per seed the time to the result (one warm-up run first), iterations,
// estimate, error and pull against the exact value; then the median time. The program of issue 27's
// side-by-side with cuVegas (bench/results/2026-11-27-eq45-cuvegas.md).
#include "common.hpp"

#include "../../tests/support/eq45.hpp"

namespace mcubes_bench {

int eq45(vegas_options o, std::uint64_t calls, int seeds, std::uint64_t first_seed) {
  o.calls_per_iteration = calls != 0 ? calls : 10000000;
  o.seed = first_seed;
  print_header(o);
  const region<8> reg = region<8>::unit();
  const double exact = mcubes_test::exact_eq45();
  const mcubes_test::lepage_eq45 f{};
  run_once<8>(f, reg, o);  // warm-up
  std::vector<double> times;
  for (int s = 0; s < seeds; ++s) {
    o.seed = first_seed + static_cast<std::uint64_t>(s);
    const timing t = run_once<8>(f, reg, o);
    times.push_back(t.seconds);
    std::printf("eq45 8-D %10.3g calls  seed %3llu | %9.3f ms %3d it %10.3g ev | %.10g +- %.3g  rel.err %.2e  pull %+.2f  %s\n",
                static_cast<double>(o.calls_per_iteration), static_cast<unsigned long long>(o.seed), t.seconds * 1e3,
                t.r.iterations, static_cast<double>(t.r.n_eval), t.r.estimate, t.r.error,
                std::fabs(t.r.estimate - exact) / exact, (t.r.estimate - exact) / t.r.error, to_string(t.r.status));
  }
  std::printf("eq45 median time to the result: %.3f ms over %d seeds\n", median(times) * 1e3, seeds);
  return 0;
}

}  // namespace mcubes_bench

// mcubes-bench reference: the configurations of the reference m-Cubes code, table 1 (same calls per
// iteration, iterations, adapting iterations, skip, rel_tol 1e-3); per integrand of the suite
// registry in that table: median of `runs` runs after one warm-up run: time, iterations,
// evaluations, evaluations/s, estimate, error, true relative error. `trace` prints one run's
// iterations.
#include "common.hpp"

namespace mcubes_bench {

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

}  // namespace mcubes_bench

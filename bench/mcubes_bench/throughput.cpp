// mcubes-bench throughput: one adapting iteration of f4 8-D (default 3e9 calls on CUDA) and
// non-adapting iterations of fA 6-D (2e9 calls), in evaluations/s per iteration. --breakdown adds
// No-Adjust runs of 6-D integrands over fA's region that cost less than fA: f = 1 (random numbers,
// bins and jacobian) and f = sum x_i (the whole map), so that the cost of each part of fA's sample
// is measured, not guessed.
#include "common.hpp"

namespace mcubes_bench {

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

}  // namespace mcubes_bench

// Many integrals in one run (parameter batches, algorithm/vegas_batch.hpp): K 4-D Gaussians
// exp(-a^2 |x - c_k|^2) over [0,1]^4 with different centres c_k, each with calls_per_iteration
// calls and exactly `iterations` iterations (rel_tol 1e-14: never converged; the first half adapt).
// Figures, each the median of --runs runs after a warm-up, wall time of the whole call:
//   batch       one vegas_batch call of K integrals;
//   sequential  K vegas() calls one after the other (each makes its backend, as a user's loop does);
//   reused      K vegas_with() calls on one backend (the lower bound of a loop);
//   one large   one integral with K * calls_per_iteration calls per iteration (the same evaluations);
//   batch K=1   a batch of one, against one vegas() call of the same integral.
// Each line prints the evaluations/s and, for the batch, the largest |pull| against the exact
// values, so that speed and accuracy are read together.
//
//   batch-bench [--backend cuda|cpu] [--K 1024] [--calls 100000] [--iterations 10] [--runs 3]
//               [--sequential N]   (N of the K sequential calls are timed and scaled to K; default K)
//               [--adapt A]        (adapting iterations; default half) [--only-batch 1] (the batch line only)
//               [--only-large 1]   (the one large integral only) [--breakdown 1] (CUDA: the phases of a batch,
//                                  the timeline of one call: each backend call and when the device finished it)
//               [--stratification adaptive|uniform]  (default adaptive, the library's: VEGAS+; uniform: m-Cubes)
#if defined(__CUDACC__)
#include <mcubes/cuda.cuh>
#else
#include <mcubes/mcubes.hpp>
#endif

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <functional>
#include <string>
#include <type_traits>
#include <vector>

#include "median_seconds.hpp"

namespace {

struct gauss_params {
  double centre[4];
};

struct gauss4 {
  double a2;  // a^2
  MCUBES_HOST_DEVICE double operator()(const mcubes::point<4>& x, const gauss_params& p) const {
    double r2 = 0;
    for (int i = 0; i < 4; ++i) r2 += (x[i] - p.centre[i]) * (x[i] - p.centre[i]);
    return exp(-a2 * r2);
  }
};

double exact(double a, const gauss_params& p) {
  double v = 1;
  for (int i = 0; i < 4; ++i) v *= std::sqrt(M_PI) / (2 * a) * (std::erf(a * (1 - p.centre[i])) + std::erf(a * p.centre[i]));
  return v;
}


#if defined(__CUDACC__)
// A CUDA backend that forwards the batch interface and records, per call, the host's time when it
// was called and when it returned, and for start_batch and adapt_batch an event after their
// launches (when the device finished them): where a batch's wall time goes, round by round.
struct timeline_backend : mcubes::cuda_backend {
  using clk = std::chrono::steady_clock;
  timeline_backend(const mcubes::cuda_launch_policy& policy, clk::time_point start_time)
      : mcubes::cuda_backend(policy, 0), t0(start_time) {}
  mcubes::cuda_backend& be = *this;
  clk::time_point t0;
  struct mark {
    const char* what;
    double called, returned;  // ms from t0
    cudaEvent_t done = nullptr;
  };
  std::vector<mark> marks;
  cudaEvent_t start = nullptr;
  double ms_now() const { return std::chrono::duration<double>(clk::now() - t0).count() * 1e3; }
  static std::string name() { return "cuda"; }
  // fn() timed on the host (its result returned); with `launches`, an event after its launches too
  template <class Fn>
  auto timed(const char* what, bool launches, Fn&& fn) {
    const double a = ms_now();
    const auto record = [&] {
      mark m{what, a, ms_now()};
      if (launches) {
        cudaEventCreate(&m.done);
        cudaEventRecord(m.done, be.stream());
      }
      marks.push_back(m);
    };
    if constexpr (std::is_void_v<decltype(fn())>) {
      fn();
      record();
    } else {
      auto r = fn();
      record();
      return r;
    }
  }
  template <int D, class P>
  auto make_batch(const P* params, std::size_t n, int n_bins) {
    return timed("make_batch", false, [&] { return be.template make_batch<D>(params, n, n_bins); });
  }
  template <class Values = double, int D, class F, class B>
  std::vector<mcubes::pass_sums_t<Values>> sample_passes(const F& f, B& b, const std::vector<mcubes::batch_pass<D>>& passes) {
    return timed("sample", false, [&] { return be.template sample_passes<Values>(f, b, passes); });
  }
  template <int D, class F, class B>
  void start_batch(const F& f, B& b, const std::vector<mcubes::batch_pass<D>>& passes) {
    timed("start", true, [&] { be.start_batch(f, b, passes); });
  }
  template <int D, class F, class B>
  std::vector<mcubes::iteration_sums> finish_batch(const F& f, B& b, const std::vector<mcubes::batch_pass<D>>& passes) {
    return timed("finish", false, [&] { return be.finish_batch(f, b, passes); });
  }
  template <class B, class Items>
  void adapt_batch(B& b, const Items& items, double alpha, double floor, bool symmetric) {
    timed("adapt", true, [&] { be.adapt_batch(b, items, alpha, floor, symmetric); });
  }
  template <class B>
  std::vector<double> batch_map_edges(const B& b, std::size_t k) {
    return be.batch_map_edges(b, k);
  }
};
#endif

}  // namespace

int main(int argc, char** argv) {
  std::string backend = "cuda";
  std::size_t K = 1024;
  unsigned long long calls = 100000;
  int iterations = 10, runs = 3;
  long sequential = -1;
  int adapt = -1;
  bool only_batch = false, only_large = false, breakdown = false;
  std::string stratification = "adaptive";  // the library's default (VEGAS+); uniform: m-Cubes
  for (int i = 1; i + 1 < argc; i += 2) {
    const std::string a = argv[i];
    if (a == "--backend") backend = argv[i + 1];
    else if (a == "--K") K = std::strtoull(argv[i + 1], nullptr, 10);
    else if (a == "--calls") calls = std::strtoull(argv[i + 1], nullptr, 10);
    else if (a == "--iterations") iterations = std::atoi(argv[i + 1]);
    else if (a == "--runs") runs = std::atoi(argv[i + 1]);
    else if (a == "--sequential") sequential = std::atol(argv[i + 1]);
    else if (a == "--adapt") adapt = std::atoi(argv[i + 1]);
    else if (a == "--only-batch") only_batch = std::string(argv[i + 1]) == "1";
    else if (a == "--only-large") only_large = std::string(argv[i + 1]) == "1";
    else if (a == "--breakdown") breakdown = std::string(argv[i + 1]) == "1";
    else if (a == "--stratification" && (std::string(argv[i + 1]) == "adaptive" || std::string(argv[i + 1]) == "uniform"))
      stratification = argv[i + 1];
    else {
      std::fprintf(stderr,
                   "usage: %s [--backend cuda|cpu] [--K N] [--calls N] [--iterations I] [--runs R] [--sequential N]"
                   " [--stratification adaptive|uniform]\n",
                   argv[0]);
      return 2;
    }
  }
  if (sequential < 0 || static_cast<std::size_t>(sequential) > K) sequential = static_cast<long>(K);
  try {
    const double a = 10;
    const gauss4 f{a * a};
    std::vector<gauss_params> ps(K);
    for (std::size_t k = 0; k < K; ++k)
      for (int i = 0; i < 4; ++i) ps[k].centre[i] = 0.3 + 0.4 * std::fmod(0.6180339887498949 * (k + 1) * (i + 1), 1.0);
    mcubes::vegas_options o;
    o.backend = backend == "cpu" ? mcubes::backend_kind::cpu : mcubes::backend_kind::cuda;
    o.calls_per_iteration = calls;
    o.max_iterations = iterations;
    o.adapt_iterations = adapt >= 0 ? adapt : (iterations + 1) / 2;
    o.skip = 0;
    o.min_iterations = 1;
    o.rel_tol = 1e-14;
    o.stratification = stratification == "uniform" ? mcubes::stratification_mode::uniform : mcubes::stratification_mode::adaptive;
    const auto reg = mcubes::region<4>::unit();
    std::printf("batch-bench: backend %s, K = %zu Gaussians in 4-D (a = %g), %llu calls/iteration, %d iterations (%d adapting), "
                "n_bins %d, stratification %s, median of %d runs\n", backend.c_str(), K, a, calls, iterations, o.adapt_iterations,
                mcubes::map_bins_for(o), stratification.c_str(), runs);

#if !defined(__CUDACC__)
    if (breakdown) std::printf("breakdown: the CUDA build only\n");
#else
    if (breakdown) {  // where a batch's time goes: the backend, the maps, one round of passes, one adaptation
      using clk = std::chrono::steady_clock;
      const auto ms = [](clk::time_point a, clk::time_point b) { return std::chrono::duration<double>(b - a).count() * 1e3; };
      for (int rep = 0; rep < 2; ++rep) {
        const auto t0 = clk::now();
        mcubes::cuda_launch_policy pol;
        mcubes::cuda_backend be(pol, 0);
        const auto t1 = clk::now();
        auto st = be.make_batch<4>(ps.data(), K, mcubes::map_bins_for(o));
        const auto t2 = clk::now();
        std::vector<mcubes::vegas_state> states(K);
        std::vector<mcubes::batch_pass<4>> passes;
        for (std::size_t k = 0; k < K; ++k) {
          mcubes::vegas_options ok = o;
          ok.seed = mcubes::batch_seed(o.seed, k);
          mcubes::vegas_run<4> run(reg, ok, states[k], "cuda", mcubes::map_bins_for(o));
          mcubes::batch_pass<4> p;
          p.integral = k;
          p.sp = run.params();
          p.sp.bin_scale = 1;
          p.st = run.strat();
          p.adapt = false;
          passes.push_back(p);
        }
        const auto t3 = clk::now();
        auto sums = be.sample_passes(f, st, passes);
        const auto t4 = clk::now();
        for (auto& p : passes) p.adapt = true;
        sums = be.sample_passes(f, st, passes);
        const auto t5 = clk::now();
        std::vector<std::pair<std::size_t, const mcubes::iteration_sums*>> items;
        for (std::size_t k = 0; k < K; ++k) items.emplace_back(k, &sums[k]);
        be.adapt_batch(st, items, mcubes::alpha_for(o), mcubes::map_floor_for(o), false);
        (void)be.batch_map_edges(st, 0);
        const auto t6 = clk::now();
        st = decltype(st){};  // frees the batch's buffers
        const auto t7 = clk::now();
        std::printf("breakdown: backend %.3f ms, make_batch %.3f ms, runs %.3f ms, No-Adjust round %.3f ms, V-Sample round "
                    "%.3f ms, adapt %.3f ms, free %.3f ms\n", ms(t0, t1), ms(t1, t2), ms(t2, t3), ms(t3, t4), ms(t4, t5),
                    ms(t5, t6), ms(t6, t7));
      }
    }
#endif
#if defined(__CUDACC__)
    if (breakdown) {  // the timeline of one batch call on a backend made for it (after a warm-up)
      using clk = std::chrono::steady_clock;
      for (int rep = 0; rep < 2; ++rep) {
        const auto t0 = clk::now();
        std::vector<timeline_backend::mark> marks;
        double made = 0, returned = 0;
        {
          timeline_backend tb(mcubes::launch_policy_of(o), t0);
          cudaEventCreate(&tb.start);
          cudaEventRecord(tb.start, tb.stream());
          made = tb.ms_now();
          (void)mcubes::vegas_batch_with<4>(f, std::vector<mcubes::region<4>>{reg}, ps, o, tb);
          returned = tb.ms_now();
          cudaStreamSynchronize(tb.stream());
          std::printf("timeline %d (ms from the call's start; backend made at %.3f):\n", rep, made);
          double last = made;
          for (auto& m : tb.marks) {
            std::printf("  %-10s host gap %.3f, call %.3f -> %.3f (%.3f)", m.what, m.called - last, m.called, m.returned,
                        m.returned - m.called);
            if (m.done) {
              float ev = 0;
              cudaEventElapsedTime(&ev, tb.start, m.done);
              std::printf(", device done at %.3f", made + ev);
              cudaEventDestroy(m.done);
            }
            std::printf("\n");
            last = m.returned;
          }
          std::printf("  vegas_batch returned at %.3f (%.3f after the last call)\n", returned, returned - last);
          cudaEventDestroy(tb.start);
        }
        std::printf("  backend destroyed at %.3f\n", std::chrono::duration<double>(clk::now() - t0).count() * 1e3);
      }
    }
#endif
    if (breakdown) {  // wall time of each round of one batch call (from the call's start), after a warm-up
      using clk = std::chrono::steady_clock;
      (void)mcubes::vegas_batch<4>(f, reg, ps, o);
      std::vector<double> at;
      const auto t0 = clk::now();
      (void)mcubes::vegas_batch<4>(f, reg, ps, o, [&](const mcubes::batch_progress&) {
        at.push_back(std::chrono::duration<double>(clk::now() - t0).count() * 1e3);
        return mcubes::run_control::proceed;
      });
      const double total = std::chrono::duration<double>(clk::now() - t0).count() * 1e3;
      std::printf("rounds (ms from the call's start):");
      for (const double t : at) std::printf(" %.2f", t);
      std::printf("; returned at %.2f\n", total);
    }
    // one integral with K * calls per iteration (the same evaluations as the batch): time, evaluations/s
    const auto one_large = [&] {
      mcubes::vegas_options big = o;
      big.calls_per_iteration = calls * K;
      mcubes::result rb;
      const double t = median_seconds(runs, [&] { rb = mcubes::vegas<4>(mcubes::with_parameters<gauss4, gauss_params>{f, ps[0]}, reg, big); });
      std::printf("one large    calls %-10llu %8.4f s  %8.3f G evals/s", static_cast<unsigned long long>(big.calls_per_iteration), t,
                  rb.n_eval / t * 1e-9);
      return rb.n_eval / t;
    };
    if (only_large) {  // the one large integral alone (for profilers)
      one_large();
      std::printf("\n");
      return 0;
    }
    std::vector<mcubes::result> rs;
    const double t_batch = median_seconds(runs, [&] { rs = mcubes::vegas_batch<4>(f, reg, ps, o); });
    std::uint64_t n_eval = 0;
    double worst = 0;
    for (std::size_t k = 0; k < K; ++k) {
      n_eval += rs[k].n_eval;
      worst = std::max(worst, std::fabs(rs[k].estimate - exact(a, ps[k])) / rs[k].error);
    }
    std::printf("batch        K = %-6zu %10.4f s  %8.3f G evals/s  (%llu evaluations; largest |pull| %.2f)\n", K, t_batch,
                n_eval / t_batch * 1e-9, static_cast<unsigned long long>(n_eval), worst);

    if (only_batch) return 0;
    const std::size_t S = static_cast<std::size_t>(sequential);
    double t_seq = median_seconds(runs, [&] {
      for (std::size_t k = 0; k < S; ++k) {
        mcubes::vegas_options ok = o;
        ok.seed = mcubes::batch_seed(o.seed, k);
        (void)mcubes::vegas<4>(mcubes::with_parameters<gauss4, gauss_params>{f, ps[k]}, reg, ok);
      }
    }) * static_cast<double>(K) / static_cast<double>(S);
    std::printf("sequential   K = %-6zu %10.4f s  %8.3f G evals/s  (%zu calls timed, scaled to K)  batch speed-up %.1fx\n", K,
                t_seq, n_eval / t_seq * 1e-9, S, t_seq / t_batch);

    double t_reused = 0;
    mcubes::on_backend(o, [&](auto& be) {
      t_reused = median_seconds(runs, [&] {
        for (std::size_t k = 0; k < S; ++k) {
          mcubes::vegas_options ok = o;
          ok.seed = mcubes::batch_seed(o.seed, k);
          (void)mcubes::vegas_with<4>(mcubes::with_parameters<gauss4, gauss_params>{f, ps[k]}, reg, ok, be);
        }
      }) * static_cast<double>(K) / static_cast<double>(S);
      return 0;
    });
    std::printf("reused       K = %-6zu %10.4f s  %8.3f G evals/s  (one backend for all calls)  batch speed-up %.1fx\n", K,
                t_reused, n_eval / t_reused * 1e-9, t_reused / t_batch);

    const double rate_big = one_large();
    std::printf("  (batch / one large: %.2f)\n", (n_eval / t_batch) / rate_big);

    const auto one = mcubes::with_parameters<gauss4, gauss_params>{f, ps[0]};
    mcubes::result r1;
    std::vector<mcubes::result> b1;
    const std::vector<gauss_params> first{ps[0]};
    const double t_single = median_seconds(runs * 3, [&] {
      mcubes::vegas_options ok = o;
      ok.seed = mcubes::batch_seed(o.seed, 0);
      r1 = mcubes::vegas<4>(one, reg, ok);
    });
    const double t_b1 = median_seconds(runs * 3, [&] { b1 = mcubes::vegas_batch<4>(f, reg, first, o); });
    std::printf("batch K = 1  %10.5f s   single vegas() %10.5f s  (ratio %.3f; bitwise equal: %s)\n", t_b1, t_single,
                t_b1 / t_single, b1[0].estimate == r1.estimate && b1[0].error == r1.error ? "yes" : "NO");
    return 0;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "error: %s\n", e.what());
    return 3;
  }
}

// mcubes-bench: benchmark program (not a test). Prints time and accuracy together.
//
//   mcubes-bench reference  [--backend cuda|cpu] [--runs 5] [--threads N] [--tpb 256]
//       the configurations of the reference m-Cubes code table 1 (same calls per iteration, iterations,
//       adapting iterations, skip, rel_tol 1e-3); per integrand: median of `runs` runs after one
//       warm-up run: time, iterations, evaluations, evaluations/s, estimate, error, true rel. error.
//   mcubes-bench throughput [--backend cuda|cpu] [--calls N] [--breakdown]
//       one adapting iteration of f4 8-D (default 3e9 calls on CUDA) and non-adapting iterations of
//       fA 6-D (2e9 calls), in evaluations/s per iteration. --breakdown adds No-Adjust runs of 6-D
//       integrands over fA's region that cost less than fA: f = 1 (random numbers, bins and
//       jacobian; the points are not needed) and f = sum x_i (the whole map), so that the cost of
//       each part of fA's sample is measured, not guessed.
//   mcubes-bench cpu [--threads N] [--calls N] [--runs 5]
//       evaluations per CPU-second per thread (process CPU time / evaluations, robust to load) and
//       per wall second of the CPU backend for f4 8-D and f2 6-D, 10 iterations of 1e6 calls, the
//       protocol of gsl-vegas-bench (issue: at least twice GSL's monte_vegas per core).
//   mcubes-bench eq45 [--backend cuda|cpu] [--calls 1e7] [--seeds 5] [--first-seed 1] [--stratification adaptive]
//       Lepage's Eq. (45) (8-D, three peaks off the grid) at the library's default options but the
//       calls: per seed the time to the result, iterations, estimate, pull; the median time.
//   mcubes-bench accuracy [--backend cuda|cpu] [--seeds 100] [--first-seed 1] [--first-level 1] [--levels 9]
//                         [--integrands f2,f3,...] [--csv FILE] [--summary FILE] [--max-evals E] [--max-calls N]
//                         [--fail-fast] [--dry-run]
//       the paper's accuracy study (section 5.1, Figure 1): tolerance ladder 1e-3, 2e-4, ... 2.56e-9
//       (levels 1..9), N seeds per level; every run to --csv, per-level summary printed and to
//       --summary. See accuracy_rule() and bench/README-accuracy.md; bench/accuracy_summary.py
//       merges the CSVs of a study split over several invocations.
//
// GPU times are taken with CUDA events around the whole run (the host loop synchronises every
// iteration, so they equal the wall time of the run); CPU wall times with steady_clock, CPU time
// with clock_gettime(CLOCK_PROCESS_CPUTIME_ID).
#include "common.hpp"

int main(int argc, char** argv) {
  using namespace mcubes_bench;
  CLI::App app{"mcubes-bench: time and accuracy of mcubes on the reference configurations"};
  app.require_subcommand(1);
  std::string backend = "cuda";
  int runs = 5, threads = 0, tpb = 256;
  std::uint64_t calls = 0, seed = mcubes::default_seed;
  auto* ref = app.add_subcommand("reference", "the reference m-Cubes code table 1 configurations");
  auto* thr = app.add_subcommand("throughput", "evaluations/s of adapting and non-adapting iterations");
  auto* cpu = app.add_subcommand("cpu", "CPU evaluations/s per thread, f4 8-D and f2 6-D");
  auto* trc = app.add_subcommand("trace", "one run at the reference settings, every iteration printed");
  auto* eq = app.add_subcommand("eq45", "Lepage's Eq. (45) at the default options: time to the result per seed");
  int eq_seeds = 5;
  std::uint64_t eq_first_seed = 1;
  eq->add_option("--seeds", eq_seeds, "seeds (default 5)")->check(CLI::Range(1, 100000));
  eq->add_option("--first-seed", eq_first_seed, "first seed (default 1)");
  auto* acc = app.add_subcommand("accuracy", "accuracy study (paper section 5.1): tolerance ladder x seeds, CSV + summary");
  accuracy_args acc_args;
  acc->add_option("--seeds", acc_args.seeds, "runs per level (default 100), seeds --first-seed .. --first-seed + N - 1")
      ->check(CLI::Range(1, 100000));
  acc->add_option("--first-seed", acc_args.first_seed, "first seed (default 1): splits a level's seeds over invocations")
      ->check(CLI::Range(1, 1000000000));
  acc->add_option("--first-level", acc_args.first_level, "first ladder level, 1 (rel_tol 1e-3) .. 9 (default 1)")
      ->check(CLI::Range(1, accuracy_max_level));
  acc->add_option("--levels", acc_args.last_level, "last ladder level, 1 .. 9 (2.56e-9; the default)")
      ->check(CLI::Range(1, accuracy_max_level));
  acc->add_option("--integrands", acc_args.integrands, "comma-separated list (default f2,f3,f4,f5,f6,fA,fB,f1)");
  acc->add_option("--csv", acc_args.csv, "CSV of every run (with --dry-run: the plan, one line per level)");
  acc->add_option("--summary", acc_args.summary, "CSV of the per-level summary");
  acc->add_option("--threads", threads, "CPU threads (0 = all)");
  acc->add_option("--max-evals", acc_args.max_evals, "evaluation budget of one run (default 2e10 CUDA, 2e9 CPU)")
      ->check(count_in(1e3, 1e15));
  acc->add_option("--max-calls", acc_args.max_calls, "cap of calls per iteration (default max(paper calls, budget / 100))")
      ->check(count_in(2, 1e15));
  acc->add_flag("--fail-fast", acc_args.fail_fast,
                "end a level as soon as fewer than half of its seeds can converge (the rest are not run)");
  acc->add_flag("--dry-run", acc_args.dry_run,
                "print every level's calls, iterations and budget (and write them to --csv as a plan); run nothing");
  bool breakdown = false;
  thr->add_flag("--breakdown", breakdown, "also f = sum x_i and f = 1, 6-D No-Adjust (what each part of fA costs)");
  std::string trace_name;
  trc->add_option("integrand", trace_name, "f2..f6, fA, fB")->required();
  for (auto* s : {ref, thr, cpu, trc}) {
    s->add_option("--threads", threads, "CPU threads (0 = all)");
    s->add_option("--seed", seed, "seed");
  }
  std::string stratification = "uniform";  // the m-Cubes reference's algorithm; adaptive: VEGAS+
  for (auto* s : {ref, thr, trc, acc, cpu, eq})
    s->add_option("--stratification", stratification, "uniform (m-Cubes, the default here) or adaptive (VEGAS+)")
        ->check(CLI::IsMember({"uniform", "adaptive"}));
  for (auto* s : {ref, thr, trc, acc, eq}) {
    s->add_option("--backend", backend, "cuda or cpu")->check(CLI::IsMember({"cuda", "cpu"}));
    s->add_option("--tpb", tpb, "CUDA threads per block");
  }
  int adapt_tiles = 1, max_blocks = 0;
  std::uint64_t sort_light = std::uint64_t(1) << 19;  // cuda_launch_policy's default
  double heavy_above = 2, balance_above = 0, spread_heavy_below = 0.5;  // cuda_launch_policy's defaults
  double spread_light = 1.25;
  bool lists_in_pass = false;
  bool allocation_round_trip = false;
  bool allocation_in_stream = false, light_after_heavy = false, spread_after_heavy = false, heavy_finish_launch = false;
  bool adapt_when_asked = false;
  for (auto* s : {ref, thr, trc, acc, eq}) {
    s->add_option("--adapt-tiles", adapt_tiles, "CUDA: at least this many tiles per block in V-Sample (cuda_launch_policy)")
        ->check(CLI::Range(1, 1 << 20));
    s->add_option("--max-blocks", max_blocks, "CUDA: at most this many blocks (0: fill the GPU)")->check(CLI::Range(0, 1 << 30));
    s->add_option("--heavy-above", heavy_above,
                  "CUDA, VEGAS+: sub-cubes above this multiple of the average count are sampled by segments "
                  "(cuda_launch_policy::heavy_above_average; single integrals)")
        ->check(CLI::Range(1.0, 1e6));
    s->add_option("--balance-above", balance_above, "CUDA, VEGAS+: cuda_launch_policy::balance_above (0: never)")
        ->check(CLI::Range(0.0, 1e30));
    s->add_option("--sort-light", sort_light,
                  "CUDA, VEGAS+: cuda_launch_policy::sort_light_min_cubes (0: never; k: passes of at least k sub-cubes)");
    s->add_option("--spread-heavy-below", spread_heavy_below, "CUDA, VEGAS+: cuda_launch_policy::spread_heavy_below")
        ->check(CLI::Range(0.0, 1e30));
    s->add_option("--spread-light", spread_light,
                  "CUDA, VEGAS+: cuda_launch_policy::spread_light_above (0: always spread; above 32: never)")
        ->check(CLI::Range(0.0, 1e30));
    s->add_flag("--heavy-lists-in-pass", lists_in_pass,
                "CUDA, VEGAS+: each pass lists its heavy sub-cubes (cuda_launch_policy::list_heavy_with_allocation = false)");
    s->add_flag("--allocation-round-trip", allocation_round_trip,
                "CUDA, VEGAS+: each allocation waits for its own round trip, not queued behind the pass before it "
                "(cuda_launch_policy::allocate_after_pass = false)");
    s->add_flag("--allocation-in-stream", allocation_in_stream,
                "CUDA, VEGAS+: the allocation behind a pass in its stream, not beside it (cuda_launch_policy::allocate_beside = false)");
    s->add_flag("--light-after-heavy", light_after_heavy,
                "CUDA, VEGAS+: a sorted pass's light sub-cubes after its heavy ones in the stream, not beside them "
                "(cuda_launch_policy::light_beside_heavy = false)");
    s->add_flag("--spread-after-heavy", spread_after_heavy,
                "CUDA, VEGAS+: a spread pass's light sub-cubes after its heavy ones, not beside them "
                "(cuda_launch_policy::spread_beside_heavy = false)");
    s->add_flag("--adapt-when-asked", adapt_when_asked,
                "CUDA: the map's adaptation launched when the run asks, not queued behind its pass "
                "(cuda_launch_policy::adapt_after_pass = false)");
    s->add_flag("--heavy-finish-launch", heavy_finish_launch,
                "CUDA, VEGAS+: the heavy sub-cubes' sums finished by their own launch, not by the spread V-Sample "
                "(cuda_launch_policy::heavy_sums_in_v_sample = false)");
  }
  for (auto* s : {ref, thr, cpu}) s->add_option("--runs", runs, "timed runs (median)")->check(CLI::Range(1, 1000));
  bool symmetric_map = false;
  for (auto* s : {ref, thr, trc, cpu}) s->add_flag("--symmetric-map", symmetric_map, "m-Cubes1D: one map for every axis");
  for (auto* s : {thr, cpu, eq}) s->add_option("--calls", calls, "calls per iteration");
  double alpha = mcubes::auto_alpha;
  for (auto* s : {ref, thr, trc, acc, cpu, eq})
    s->add_option("--alpha", alpha, "damping exponent of the map adaptation (default: the stratification's, alpha_for)")
        ->check(CLI::Range(0.0, mcubes::max_alpha));
  CLI11_PARSE(app, argc, argv);
  mcubes::vegas_options o;
  o.backend = backend == "cuda" ? mcubes::backend_kind::cuda : mcubes::backend_kind::cpu;
  o.threads = threads;
  o.cuda_threads_per_block = tpb;
  o.seed = seed;
  o.symmetric_map = symmetric_map;
  o.alpha = alpha;
  o.stratification = stratification == "adaptive" ? mcubes::stratification_mode::adaptive : mcubes::stratification_mode::uniform;
  if (eq->parsed() && eq->count("--stratification") == 0) o.stratification = mcubes::stratification_mode::adaptive;  // the library's default
  try {
#if defined(MCUBES_HAS_CUDA_BACKEND)
    bench_policy().adapt_tiles_per_block = adapt_tiles;
    bench_policy().max_blocks = max_blocks;
    bench_policy().heavy_above_average = heavy_above;
    bench_policy().balance_above = balance_above;
    bench_policy().sort_light_min_cubes = sort_light;
    bench_policy().spread_heavy_below = spread_heavy_below;
    bench_policy().spread_light_above = spread_light;
    bench_policy().list_heavy_with_allocation = !lists_in_pass;
    bench_policy().allocate_after_pass = !allocation_round_trip;
    bench_policy().allocate_beside = !allocation_in_stream;
    bench_policy().light_beside_heavy = !light_after_heavy;
    bench_policy().spread_beside_heavy = !spread_after_heavy;
    bench_policy().heavy_sums_in_v_sample = !heavy_finish_launch;
    bench_policy().adapt_after_pass = !adapt_when_asked;
#else
    (void)adapt_tiles, (void)max_blocks, (void)sort_light, (void)heavy_above, (void)balance_above, (void)spread_heavy_below, (void)spread_light;
    (void)lists_in_pass, (void)allocation_round_trip, (void)allocation_in_stream, (void)light_after_heavy;
    (void)spread_after_heavy, (void)heavy_finish_launch, (void)adapt_when_asked;
#endif
#if !defined(MCUBES_HAS_CUDA_BACKEND)
    if (o.backend == mcubes::backend_kind::cuda && !cpu->parsed() && !(acc->parsed() && acc_args.dry_run)) {
      std::fprintf(stderr, "mcubes-bench: this build has no CUDA backend; use --backend cpu\n");
      return 3;
    }
#endif
    if (ref->parsed()) return reference(o, runs);
    if (trc->parsed()) return trace(trace_name, o);
    if (acc->parsed()) return accuracy(o, acc_args);
    if (eq->parsed()) return eq45(o, calls, eq_seeds, eq_first_seed);
    if (thr->parsed()) return throughput(o, calls, runs, breakdown);
    return cpu_rates(o, calls, runs);
  } catch (const mcubes::invalid_input& e) {
    std::fprintf(stderr, "mcubes-bench: error: %s\n", e.what());
    return 2;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "mcubes-bench: error: %s\n", e.what());
    return 3;
  }
}

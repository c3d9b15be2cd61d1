/// @file cli/integrate_plan.cpp
/// Free memory, calibration and the --dry-run plan of `mcubes integrate` (integrate_plan.hpp).
#include "integrate_plan.hpp"
#include "parse.hpp"

#include <algorithm>
#include <cstdio>
#include <fstream>
#include <string>

namespace mcubes::cli {

double available_memory_bytes() {
  std::ifstream in("/proc/meminfo");
  std::string key;
  double kib = 0;
  std::string unit;
  while (in >> key >> kib >> unit)
    if (key == "MemAvailable:") return kib * 1024;
  return 0;
}

vegas_options calibration_options(const vegas_options& o) {
  vegas_options c = o;
  c.calls_per_iteration = std::min<std::uint64_t>(o.calls_per_iteration, 1u << 16);
  c.max_iterations = 2;
  c.adapt_iterations = 2;
  c.skip = 0;
  c.min_iterations = 1;
  c.rel_tol = 1e-300;  // never converges: both iterations run
  c.abs_tol = 0;
  return c;
}

double calibrate(const run_request& rq, runner run) {
  run_request c = rq;
  c.on_iteration = nullptr;
  c.trained = nullptr;  // the run's own: sample's density, --checkpoint / --resume
  c.resume = {};
  c.resume_of_member = nullptr;
  c.exchange = nullptr;
  c.options = calibration_options(rq.options);
  const result r = run(c);
  if (r.records.empty()) return 0;  // stopped by a signal (execution::stop) before one iteration
  const iteration_record& last = r.records.back();
  return last.seconds > 0 ? static_cast<double>(last.n_eval) / last.seconds : 0.0;
}

void print_plan(const run_report& report, const vegas_options& opts, bool on_cuda, double available, double rate) {
  const int dim = report.dim;
  const double first_seconds = rate > 0 ? static_cast<double>(report.plan.n_eval) / rate : 0;
  const stratification& g = report.plan.grid;
  std::printf("plan: integrand %s, d = %d, backend %s\n", report.entry->name.c_str(), dim, report.backend_description.c_str());
  if (g.adaptive())
    std::printf("  sub-cubes m = g^d = %llu^%d = %llu (adaptive stratification, VEGAS+), at least %llu samples per "
                "sub-cube, chunks %llu\n",
                static_cast<unsigned long long>(g.g), dim, static_cast<unsigned long long>(g.n_cubes),
                static_cast<unsigned long long>(g.min_samples_per_cube), static_cast<unsigned long long>(g.n_chunks));
  else
    std::printf("  sub-cubes m = g^d = %llu^%d = %llu, samples per sub-cube p = %llu, chunks %llu\n",
                static_cast<unsigned long long>(g.g), dim, static_cast<unsigned long long>(g.n_cubes),
                static_cast<unsigned long long>(g.samples_per_cube), static_cast<unsigned long long>(g.n_chunks));
  std::printf("  evaluations per iteration %llu (at most %llu asked), iterations at most %d\n",
              static_cast<unsigned long long>(report.plan.n_eval),
              static_cast<unsigned long long>(opts.calls_per_iteration), opts.max_iterations);
  std::printf("  memory: about %s (%s with every overflow bin level)%s; free: %s\n",
              format_bytes(report.plan.typical_bytes).c_str(), format_bytes(report.plan.worst_bytes).c_str(),
              on_cuda ? (", device " + format_bytes(report.plan.device_bytes)).c_str() : "",
              available > 0 ? format_bytes(available).c_str() : "unknown");
  std::printf("  calibration: %.3g evaluations/s; estimated time per iteration %s, for %d iterations %s\n", rate,
              format_duration(first_seconds).c_str(), opts.max_iterations,
              format_duration(first_seconds * opts.max_iterations).c_str());
}

}  // namespace mcubes::cli

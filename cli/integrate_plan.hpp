#pragma once
/// @file cli/integrate_plan.hpp
/// What `mcubes integrate` knows before it runs: free memory, a quick calibration of the
/// integrand's speed on the chosen backend, and the plan printed by --dry-run.

#include <mcubes/plan.hpp>

#include "integrand_dispatch.hpp"
#include "report.hpp"

namespace mcubes::cli {

/// Free memory of this machine (MemAvailable of /proc/meminfo), or 0 if unknown.
double available_memory_bytes();

/// Evaluations per second of the integrand on the chosen backend, from a quick run of at most
/// 2^16 evaluations per iteration (two iterations; the second, with an adapted map, is timed).
double calibrate(const run_request& rq, runner run);

/// The options of a calibration run made from `o`: two adapting iterations of at most 2^16 calls
/// that never converge (both run), the rest of `o` kept (integrate's calibrate and scan's round
/// estimate use it).
vegas_options calibration_options(const vegas_options& o);

/// Prints the plan of --dry-run: grid, evaluations, memory (free: `available` bytes, 0 unknown),
/// the calibration `rate` and the time it predicts.
void print_plan(const run_report& report, const vegas_options& opts, bool on_cuda, double available, double rate);

}  // namespace mcubes::cli

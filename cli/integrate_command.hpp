#pragma once
/// @file cli/integrate_command.hpp
/// `mcubes integrate <name> [options]`: integrates one suite integrand with m-Cubes and prints the
/// per-iteration table and the result (or only the result with --quiet), optionally a JSON record.
/// Exit codes: 0 converged, 1 not converged / not resolved / underflow (result still printed),
/// 2 bad input, 3 runtime failure (exceptions propagate to main, which maps them), 130 / 143 when
/// SIGINT / SIGTERM stopped the run (the completed iterations kept; result and JSON written).
#include <CLI/CLI.hpp>
#include <cstdint>
#include <functional>
#include <string>

namespace mcubes::cli {

/// Registers the `integrate` subcommand on `app`; the returned function runs it after parsing and
/// returns the exit code. It throws mcubes::invalid_input for bad input (before anything is
/// printed on stdout) and mcubes::error for runtime failures.
std::function<int()> add_integrate_command(CLI::App& app);

/// Registers `sample`: the run of `integrate` (the same options and report), then the weighted
/// points of the trained map and VEGAS+ allocation (core/weighted_sample.hpp) written to --npy
/// FILE. Exit codes: 0 when the points are written (whatever the training run's status, which the
/// report gives: the weights are unbiased for any map), 2 bad input, 3 runtime failure, 130 / 143
/// when a signal stopped the training (nothing written).
std::function<int()> add_sample_command(CLI::App& app);

}  // namespace mcubes::cli

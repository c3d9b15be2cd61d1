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

}  // namespace mcubes::cli

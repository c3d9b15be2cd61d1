#pragma once
/// @file cli/integrate_command.hpp
/// `mcubes integrate <name> [options]`: integrates one suite integrand with m-Cubes and prints the
/// per-iteration table and the result (or only the result with --quiet), optionally a JSON record.
/// Exit codes: 0 converged, 1 not converged / not resolved (result still printed), 2 bad input,
/// 3 runtime failure (exceptions propagate to main, which maps them).
#include <CLI/CLI.hpp>
#include <cstdint>
#include <functional>
#include <string>

namespace mcubes::cli {

/// Registers the `integrate` subcommand on `app`; the returned function runs it after parsing and
/// returns the exit code. It throws mcubes::invalid_input for bad input (before anything is
/// printed on stdout) and mcubes::error for runtime failures.
std::function<int()> add_integrate_command(CLI::App& app);

/// Parses a count such as "1000000", "1e6" or "2.5e7": a non-negative integer written either in
/// decimal digits or as a floating-point literal with an exact integer value below 2^63.
/// @throws mcubes::invalid_input naming `option` and the text otherwise.
std::uint64_t parse_count(const std::string& text, const std::string& option);

}  // namespace mcubes::cli

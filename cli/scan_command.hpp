#pragma once
/// @file cli/scan_command.hpp
/// `mcubes scan NAME --param u=START:STOP:COUNT [--param a=...] [options]`: integrates one suite
/// integrand at every point of a parameter grid in one parameter batch (mcubes::vegas_batch_with),
/// then prints one row per point in grid order, optionally a JSON record. Integral k uses the seed
/// batch_seed(seed, k), so `mcubes integrate NAME --param ... --seed SEED` (the row's seed, the same
/// options and backend) reproduces row k bit for bit. `mcubes scan --expr EXPR --dim D --param
/// p0=START:STOP:COUNT ...` (or --body) does the same for a text's parameters p[0], p[1], ...: the
/// text compiled once for a batch (user_integrand.hpp), rows reproduced by `mcubes integrate --expr`.
/// Exit codes: 0 every integral converged, 1 some did not (the rows are still printed), 2 bad input,
/// 3 runtime failure, 130 / 143 when SIGINT / SIGTERM stopped it at a round boundary (every
/// integral keeps its completed iterations; the rows and the JSON are written).
#include <CLI/CLI.hpp>
#include <functional>

namespace mcubes::cli {

/// Registers the `scan` subcommand on `app`; the returned function runs it after parsing and
/// returns the exit code. It throws mcubes::invalid_input for bad input (before anything is
/// printed on stdout) and mcubes::error for runtime failures.
std::function<int()> add_scan_command(CLI::App& app);

}  // namespace mcubes::cli

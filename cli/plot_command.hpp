#pragma once
/// @file cli/plot_command.hpp
/// `mcubes plot REPORT.json`: pictures of a run from its JSON record, drawn by the Python module's
/// plotting file (python/mcubes/plots.py, installed as share/mcubes/plots.py; NumPy and matplotlib
/// only): PREFIX-convergence.png (each iteration with its error bar, the weighted average and its
/// band, the exact value) and, for a record written with --json-map, PREFIX-map.png (the map's
/// sampling density per axis). Exit codes: 0 written, 2 bad input (a file that is not a record),
/// 3 runtime failure (no Python with matplotlib, a failed drawing).
#include <CLI/CLI.hpp>
#include <functional>

namespace mcubes::cli {

/// Registers the `plot` subcommand on `app`; the returned function draws and returns the exit code.
std::function<int()> add_plot_command(CLI::App& app);

}  // namespace mcubes::cli

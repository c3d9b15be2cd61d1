#pragma once
/// @file cli/pi_command.hpp
/// Each subcommand of `mcubes` lives in cli/<name>_command.{hpp,cpp} and exposes one function that
/// registers it on the CLI11 app and returns the function that runs it after parsing (its return
/// value is the exit code: 0 ok/converged, 1 not converged, 2 bad input, 3 runtime failure).
#include <CLI/CLI.hpp>
#include <functional>

namespace mcubes::cli {
std::function<int()> add_pi_command(CLI::App& app);
}

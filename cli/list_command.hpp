#pragma once
/// @file cli/list_command.hpp
/// `mcubes list`: the table of the suite integrands (name, dimension, region, exact value at the
/// default dimension, paper settings, description). Exit code 0.
#include <CLI/CLI.hpp>
#include <functional>

namespace mcubes::cli {

/// Registers the `list` subcommand on `app`; the returned function prints the table and returns 0.
std::function<int()> add_list_command(CLI::App& app);

}  // namespace mcubes::cli

#pragma once
/// @file cli/completion.hpp
/// The bash completion script of the command, generated from its CLI11 definition (the build runs
/// `mcubes --completion bash` and installs the script as
/// share/bash-completion/completions/mcubes).

#include <string>

#include <CLI/CLI.hpp>

namespace mcubes::cli {

/// A bash script defining _mcubes and `complete -F _mcubes mcubes`: the commands after `mcubes`,
/// each command's long options after a word that starts with '-', the suite's integrand names as
/// the first word after integrate or scan, the values of --backend, --stratification and --method;
/// file names elsewhere (complete -o default).
std::string bash_completion(const CLI::App& app);

}  // namespace mcubes::cli

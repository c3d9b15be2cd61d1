#pragma once
/// @file cli/integrate_args.hpp
/// The command line of `mcubes integrate`: its values as text (integrate_args), their registration
/// on the CLI11 subcommand, and their conversion into a dimension and vegas_options through the one
/// grammar of parse.hpp. Bad input throws mcubes::invalid_input naming the option.

#include <CLI/CLI.hpp>

#include <string>
#include <vector>

#include <mcubes/options.hpp>
#include <mcubes/suite.hpp>

#include "parse.hpp"

namespace mcubes::cli {

/// Values of the command line, bound to the CLI11 options as text and read by parse.hpp's one
/// grammar. The Option pointers tell which options were given (those with defaults from the
/// integrand's paper settings).
struct integrate_args {
  std::string name;
  std::string dim;
  std::string rel_tol = "0.001";
  std::string abs_tol = "0";
  std::string calls;
  std::string max_iterations;
  std::string adapt_iterations;
  std::string skip;
  std::string min_iterations = std::to_string(vegas_options{}.min_iterations);
  std::string max_chi2_dof = "2";
  std::string bins = "auto";
  std::string alpha = "auto";
  std::string stratification = "adaptive";
  std::string beta = "0.75";
  bool symmetric_map = false;
  common_args common;
  std::string json;
  bool json_map = false;              ///< --json-map: the final record has the map's edges
  std::string checkpoint;             ///< --checkpoint FILE
  std::string resume;                 ///< --resume FILE
  std::string checkpoint_every = "0"; ///< --checkpoint-every SECONDS
  bool force = false;                 ///< --force: resume with other stopping options
  std::string max_memory;
  bool quiet = false;
  bool dry_run = false;
  bool no_progress = false;
  std::string expr;                   ///< --expr: the integrand as a C++ expression (user_integrand.hpp)
  std::string body;                   ///< --body: the integrand as a C++ function body
  std::string region;                 ///< --region a1:b1,a2:b2,...
  std::string lower, upper;           ///< --lower A --upper B (every axis)
  std::string compile_timeout = "60"; ///< --compile-timeout SECONDS
  std::vector<std::string> params;  ///< --param NAME=VALUE, once per parameter

  CLI::Option* name_opt = nullptr;
  CLI::Option* expr_opt = nullptr;
  CLI::Option* body_opt = nullptr;
  CLI::Option* region_opt = nullptr;
  CLI::Option* lower_opt = nullptr;
  CLI::Option* upper_opt = nullptr;
  CLI::Option* compile_timeout_opt = nullptr;
  CLI::Option* dim_opt = nullptr;
  CLI::Option* calls_opt = nullptr;
  CLI::Option* max_iterations_opt = nullptr;
  CLI::Option* adapt_iterations_opt = nullptr;
  CLI::Option* skip_opt = nullptr;
  CLI::Option* threads_opt = nullptr;
  CLI::Option* json_opt = nullptr;
  CLI::Option* checkpoint_opt = nullptr;
  CLI::Option* resume_opt = nullptr;
  CLI::Option* max_memory_opt = nullptr;
};

/// Registers the options of `integrate` on `sub`, bound to `a`.
void add_integrate_options(CLI::App& sub, integrate_args& a);
/// The flags of the options table's fields (options.hpp) that integrate and scan share: --rel-tol,
/// --abs-tol, --calls-per-iter, --max-iterations, --adapt-iterations, --skip, --min-iterations,
/// --max-chi2-dof, --alpha, --symmetric-map, --stratification, --beta (`each`: words added to the
/// help, e.g. " of each integral"); each command registers --bins and --seed itself (their help differs).
void add_vegas_flags(CLI::App& sub, integrate_args& a, const std::string& each);
/// --devices LIST|all (common_args::devices): the CUDA devices that share each integral.
void add_devices_option(CLI::App& sub, common_args& c);
/// Registers --checkpoint, --resume, --checkpoint-every and --force on `sub` (`what`: "run" for
/// integrate, "scan" for scan: the help's words).
void add_checkpoint_options(CLI::App& sub, integrate_args& a, const std::string& what);

/// "f1, f2, ...": the names of the suite integrands.
std::string known_names();

/// The dimension of the run: --dim if given (checked against the integrand), else its default.
/// @throws invalid_input for a bad --dim.
int resolve_dim(const integrate_args& a, const suite::entry& e);

/// The options of the run: command-line values, the integrand's paper settings for the options
/// not given. Checks the command-line grammar (parse.hpp); mcubes::validate checks the rest, its
/// messages naming the command-line options. @throws invalid_input.
vegas_options resolve_options(const integrate_args& a, const suite::entry& e, int dim);

/// The integrand's parameter values, in the order of e.parameters: each --param NAME=VALUE given
/// (VALUE a finite real, parse.hpp), the paper's default for the others; checked for dimension dim
/// by the exact value's preconditions (suite::validate_params and the closed form's range).
/// @throws invalid_input for a malformed --param, an unknown or repeated name, a parameter for an
/// integrand without parameters, or values the integrand rejects (naming the parameter).
std::vector<double> resolve_params(const integrate_args& a, const suite::entry& e, int dim);

}  // namespace mcubes::cli

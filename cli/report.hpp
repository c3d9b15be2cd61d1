#pragma once
/// @file cli/report.hpp
/// Reports of `mcubes integrate`: the per-iteration table, the result lines and the JSON record.
/// No numerics here beyond the comparison with the exact value.

#include <cstdint>
#include <cstdio>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include <mcubes/backend/team.hpp>
#include <mcubes/plan.hpp>
#include <mcubes/result.hpp>
#include <mcubes/result_io.hpp>
#include <mcubes/suite.hpp>

namespace mcubes::cli {

/// An integrand given as text (--expr, --body) and what its compilation did (jit::compile_info).
struct user_integrand_report {
  std::string option;            ///< "--expr" or "--body" (empty for a suite integrand)
  std::string kind;              ///< "expression", "body", or "suite" (a suite integrand compiled at run time)
  std::string text;              ///< the user's text (the suite integrand's name)
  bool cache_hit = false;        ///< the object came from the cache
  double compile_seconds = 0;    ///< the compiler's wall time (0 on a cache hit)
  double total_seconds = 0;      ///< the whole compilation step (key, lookup or compiler, load)
  std::string compiler, compiler_version, object, key, backend, cuda_arch;
};

/// Everything reported about one run of a suite integrand (or of an integrand given as text).
struct run_report {
  const suite::entry* entry = nullptr;  ///< the integrand (name, description, region, exact value)
  int dim = 0;                          ///< dimension of the run
  std::vector<double> params;           ///< the integrand's parameter values (order of entry->parameters)
  result res;                           ///< what mcubes::vegas returned
  std::string backend_description;      ///< e.g. "cpu (auto: no CUDA backend in this build)"
  int threads = 0;                      ///< CPU worker threads actually used (options.threads resolved)
  vegas_plan plan;                      ///< the sub-cube grid and evaluations per iteration actually used
  /// Overrides the JSON "status" while the run is not finished ("running") or after a failure
  /// ("failed"); empty: res.status.
  std::string run_state;
  std::string failure;                  ///< the error message of a failed run ("failed")
  int signal = 0;                       ///< the signal that interrupted the run (SIGINT 2, SIGTERM 15), or 0
  std::vector<double> lower, upper;     ///< the region per axis when --region/--lower/--upper replaced the
                                        ///< integrand's (its exact value then does not apply); empty: entry's
  std::optional<user_integrand_report> user;  ///< --expr/--body (no exact value); empty for the suite
  /// A suite integrand compiled at run time (a dimension outside suite::precompiled_dims): what
  /// the compilation did (kind "suite"; the JSON's "compile"); empty otherwise.
  std::optional<user_integrand_report> compiled;
  /// `mcubes sample`: the weighted points written (the JSON's "sample"); empty for integrate.
  struct sample_report {
    std::uint64_t points = 0, seed = 0, n_cubes = 0;
    bool allocated = false;  ///< the VEGAS+ allocation set the counts (else the uniform design)
    std::string file;
  };
  std::optional<sample_report> sample;
  /// --json-map: the map the run ended with, d rows of n_bins + 1 unit edges (the JSON's "map").
  std::vector<std::vector<double>> map_edges;
  /// A run shared by a team (MPI ranks, --devices): who ("3 MPI ranks", "2 devices") and the time
  /// this process (rank 0, the first device) spent in the run's exchanges (the JSON's "exchange").
  struct exchange_report {
    std::string team;
    exchange_time time;
  };
  std::optional<exchange_report> exchange;
};

/// estimate(error) with the digits the error supports (the library's, mcubes/result_io.hpp); the
/// full-precision values are in the JSON.
using mcubes::format_with_error;

/// Comparison of a run with the integrand's exact value I (suite::entry::exact).
struct accuracy {
  double exact = 0;           ///< I
  double true_rel_error = 0;  ///< |estimate - I| / |I|; NaN if I = 0
  double pull = 0;            ///< (estimate - I) / error, in units of the reported sigma; NaN if error is 0 or infinite
};

/// Computes the accuracy of `r` against the exact value at the run's parameters (entry->exact_at).
accuracy compare_with_exact(const run_report& r);

/// Exit code of a finished run: 0 converged, 1 not converged or not resolved.
int exit_code(status s);

/// Prints the header line ("integrand f4 (...), d = 8, region [0, 1]^8, parameters a = 25, u = 0.5")
/// and the line of the evaluations per iteration and the options.
void print_header(std::FILE* out, const run_report& r);

/// Prints the line of the evaluations per iteration (the plan's sub-cube grid in d dimensions) and
/// the options, as in the headers of `mcubes integrate` and `mcubes scan`.
void print_plan_line(std::FILE* out, const vegas_plan& plan, int dim, const vegas_options& o);

/// Prints the column titles of the iteration table.
void print_table_header(std::FILE* out);

/// Prints one row of the iteration table: index, flags (a = the map was adapted with its samples,
/// * = accumulated in the weighted estimate, r = bin contributions rescaled, o = overflow bin levels
/// used, u = estimate below 2^-460: underflow, left out), estimate, error, weighted estimate,
/// weighted error, chi2/dof, Q, seconds. Weighted fields that do not exist yet (nothing
/// accumulated) print as "-".
void print_iteration_row(std::FILE* out, const iteration_record& it);

/// Prints the legend of the flags.
void print_table_legend(std::FILE* out);

/// The whole table: header, one row per iteration, legend.
void print_iteration_table(std::FILE* out, const result& res);

/// Prints the result lines: estimate +- error (estimate with 17 significant digits, so the printed
/// value is the exact double), status, iterations, evaluations and evaluations/s, seed, and the
/// exact value, true relative error and pull (the backend is in the header, once).
void print_result(std::FILE* out, const run_report& r);

/// Prints the single line of --quiet: "result: <value(error)> (<status>[; warning: ...])", e.g.
/// "result: 1.084653(69)e-02 (converged)" (format_with_error; the estimate alone, 17 digits, when
/// the error is 0 or not finite). The full-precision numbers are in --json.
void print_quiet_result(std::FILE* out, const run_report& r);

/// The JSON record of a run (with --expr/--body, or a region of its own, "exact", "true_rel_error"
/// and "pull" are null; "region" is [[lower, upper], ...] per axis; an integrand given as text adds
/// "source" {kind, text} and "compile" {backend, cache_hit, compile_seconds, total_seconds,
/// compiler, compiler_version, cuda_arch, object, key}). Keys: version, integrand {name, description, dim, any_dim, lower,
/// upper}, params (the integrand's parameter values by name, the defaults included; {} for fA and
/// fB), estimate, error, chi2_dof, q, dof, status ("converged", "not converged", "not
/// resolved"), n_eval, n_iterations, accumulated, iterations (one object per iteration with every
/// iteration_record field), seed, backend, backend_description, threads, options (every
/// vegas_options field; threads 0 = all cores), exact, true_rel_error, pull, seconds,
/// evals_per_second.
///
/// A failed run (run_state "failed": status "failed", status_detail the failure) has null
/// estimate, error, chi2_dof, q, result_text, true_rel_error and pull; its iterations are those
/// completed before the failure.
///
/// Doubles are written by nlohmann::json as the shortest decimal that parses back to the same
/// double (exact round trip). A non-finite double (error = inf when the status is "not
/// resolved", an undefined pull or relative error) is written as null, since JSON has no
/// infinity or NaN.
nlohmann::ordered_json to_json(const run_report& r);

/// A finite double as a JSON number, anything else as null.
nlohmann::ordered_json json_number(double x);

/// The names of the result's warnings (result.hpp: warning), in bit order: the "warnings" array of
/// the records of `mcubes integrate` and `mcubes scan`.
nlohmann::ordered_json warnings_json(const result& res);

/// The JSON object of the options of a run (every vegas_options field; threads 0 = all cores), the
/// "options" of the records of `mcubes integrate` and `mcubes scan`.
nlohmann::ordered_json options_json(const vegas_options& o);

/// The JSON object of one iteration (every iteration_record field), an element of "iterations" in
/// the records of `mcubes integrate` and `mcubes scan`.
nlohmann::ordered_json iteration_json(const iteration_record& it);

}  // namespace mcubes::cli

#pragma once
/// @file cli/user_integrand.hpp
/// `mcubes integrate --expr EXPR --dim D` and `--body BODY --dim D`: an integrand given as C++ text,
/// compiled at run time for the chosen backend (include/mcubes/jit.hpp: the system C++ compiler for
/// the CPU, nvcc for CUDA; cached) and run by the same m-Cubes loop as the suite's, with every
/// other option of `integrate`; its parameters p[0], p[1], ... are given as --param p0=V, p1=V, ...
/// (`mcubes scan --expr` scans them: scan_command.cpp). Also the region options of every
/// integrand: --region a1:b1,a2:b2,... and --lower A --upper B.

#include <cstddef>
#include <memory>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include <mcubes/execution.hpp>
#include <mcubes/result.hpp>
#include <mcubes/suite.hpp>

#include "integrand_dispatch.hpp"
#include "integrate_args.hpp"
#include "report.hpp"
#include "run_backend.hpp"
#include "scan_dispatch.hpp"

namespace mcubes::jit {
class compiled_integrand;
}

namespace mcubes::cli {

/// Whether the command line gives the integrand as text (--expr or --body).
bool is_user_integrand(const integrate_args& a);

/// The suite-like entry of the user's integrand, for the shared plan and reports: name "expr" or
/// "body" (or `name` when not empty), the text as its description and formula, any dimension
/// (1..jit::max_dim), region [lower, upper]^d, the library's default options as its "paper" settings,
/// parameters p0 .. p{n_params-1} (no defaults: each is given), no exact value (exact is null,
/// exact_at NaN). Lives as long as the program (one per program: a later call replaces it).
/// @throws invalid_input for --expr with --body, or with an integrand NAME.
const suite::entry& user_entry(const integrate_args& a, std::size_t n_params = 0, const std::string& name = "",
                               double lower = 0, double upper = 1);

/// The number P of parameters that the --param texts give to an --expr/--body integrand: each
/// NAME (before '=') must be p0, p1, ... (naming p[0], p[1], ... of the text), each once, without
/// a gap (p0 .. p{P-1}); and every p[k] the text reads with a literal k must have its --param pk
/// (jit::literal_parameter_uses). The values themselves are read by resolve_params (integrate) or
/// parse_scan_grid (scan). @throws invalid_input, one line naming the option: a malformed text,
/// a name that is not pJ, a repeated name, a gap, a p[k] read without its --param.
std::size_t user_parameter_count(const integrate_args& a, const std::vector<std::string>& texts, int dim);

/// --dim of a user integrand: required, an integer in 1..jit::max_dim. @throws invalid_input.
int resolve_user_dim(const integrate_args& a);

/// The region given by --region a1:b1,a2:b2,... (one pair per axis, or one pair for every axis) or
/// by --lower A --upper B (every axis), for dimension `dim`: finite bounds, a_i < b_i, a finite
/// positive volume. Empty vectors when neither is given or when the region is the integrand's own
/// [lower, upper]^dim (its exact value then still applies).
/// @throws invalid_input naming the option and the axis.
void resolve_region(const integrate_args& a, const suite::entry& e, int dim, std::vector<double>& lower,
                    std::vector<double>& upper);

/// The backend of a user integrand: cpu; cuda (a runtime failure when the CUDA driver reports no
/// device); auto: cuda when the driver reports a device and nvcc is found, else cpu with the
/// reason. The object is compiled for that backend whether or not this build of the command has
/// the CUDA backend.
backend_choice choose_user_backend(backend_kind requested);

/// Compiles the user's integrand with `n_params` parameters for method vegas (integrate) or
/// vegas_batch (scan) on `backend` (or takes it from the cache), under --compile-timeout; on a
/// terminal (`progress`) says so on stderr while the compiler runs; SIGINT and SIGTERM stop the
/// compiler (jit::compile_cancelled) once install_interrupt_handlers ran.
/// @throws jit::compile_error (bad input, the position in the user's text), jit::toolchain_error.
std::shared_ptr<const jit::compiled_integrand> compile_user_integrand(const integrate_args& a, int dim,
                                                                      std::size_t n_params, bool batch,
                                                                      const backend_choice& backend, bool progress);

/// What the reports say about the compilation.
user_integrand_report report_of(const integrate_args& a, const jit::compiled_integrand& f);

/// The JSON of the user's integrand in a record: {"source": {kind, text}, "compile": {backend,
/// cache_hit, compile_seconds, total_seconds, compiler, compiler_version, cuda_arch, object, key}}
/// (the keys of integrate's record, report.hpp).
nlohmann::ordered_json user_integrand_json(const user_integrand_report& u);

/// Prints "compiled: ..." (compiler, seconds, the object) or "compiled: cache hit ...".
void print_compile_line(std::FILE* out, const user_integrand_report& u);

/// Whether the command runs suite integrand `e` in dimension `dim` through the run-time compiler:
/// its dimensions outside suite::precompiled_dims (f1..f6 in 13..15 and 17..32), for which the
/// command carries no compiled runner.
bool suite_compiled_at_run_time(const suite::entry& e, int dim);

/// Compiles suite integrand `e` in dimension `dim` (jit::suite_integrand: its own functor, the
/// same bits as a compiled runner) for method vegas (integrate) or vegas_batch (scan) on `backend`
/// (or takes it from the cache), under the default compile time limit; on a terminal (`progress`)
/// says so on stderr. @throws jit::toolchain_error, jit::compile_cancelled.
std::shared_ptr<const jit::compiled_integrand> compile_suite_integrand(const suite::entry& e, int dim, bool batch,
                                                                       const backend_choice& backend, bool progress);

/// What the reports say about the run-time compilation of a suite integrand (kind "suite", its
/// name as the text).
user_integrand_report report_of(const suite::entry& e, const jit::compiled_integrand& f);

/// The runner of an integrand compiled at run time (--expr/--body, or a suite integrand outside
/// suite::precompiled_dims): rq.compiled over rq's region (rq.lower/upper, else the entry's
/// [lower, upper]^d) with rq.options, rq.params (p[0..P-1]; empty: the entry's defaults, the
/// paper's values of a suite integrand) and rq.on_iteration. @throws as
/// jit::compiled_integrand::vegas.
result run_user_integrand(const run_request& rq);

/// The scan runner of an integrand compiled at run time: rq.compiled (method vegas_batch) over rq's region with the
/// points as p[0..P-1], rq.options and rq.on_round, in one batch; result k has the bits of
/// `mcubes integrate --expr ... --param ... --seed batch_seed(seed, k)` on the same backend.
/// @throws as jit::compiled_integrand::vegas_batch.
std::vector<result> run_user_scan(const scan_request& rq);

}  // namespace mcubes::cli

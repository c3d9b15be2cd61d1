#pragma once
/// @file cli/user_integrand.hpp
/// `mcubes integrate --expr EXPR --dim D` and `--body BODY --dim D`: an integrand given as C++ text,
/// compiled at run time for the chosen backend (include/mcubes/jit.hpp: the system C++ compiler for
/// the CPU, nvcc for CUDA; cached) and run by the same m-Cubes loop as the suite's, with every
/// other option of `integrate`. Also the region options of every integrand: --region
/// a1:b1,a2:b2,... and --lower A --upper B.

#include <memory>
#include <string>
#include <vector>

#include <mcubes/execution.hpp>
#include <mcubes/result.hpp>
#include <mcubes/suite.hpp>

#include "integrand_dispatch.hpp"
#include "integrate_args.hpp"
#include "report.hpp"
#include "run_backend.hpp"

namespace mcubes::jit {
class compiled_integrand;
}

namespace mcubes::cli {

/// Whether the command line gives the integrand as text (--expr or --body).
bool is_user_integrand(const integrate_args& a);

/// The suite-like entry of the user's integrand, for the shared plan and reports: name "expr" or
/// "body", the text as its description, any dimension (1..jit::max_dim), region [0, 1]^d, the
/// library's default options as its "paper" settings, no exact value (exact is null). Lives as long
/// as the program. @throws invalid_input for --expr with --body, or with an integrand NAME.
const suite::entry& user_entry(const integrate_args& a);

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

/// Compiles the user's integrand for `backend` (or takes it from the cache), under
/// --compile-timeout; on a terminal (`progress`) says so on stderr while the compiler runs; SIGINT
/// and SIGTERM stop the compiler (jit::compile_cancelled) once install_interrupt_handlers ran.
/// @throws jit::compile_error (bad input, the position in the user's text), jit::toolchain_error.
std::shared_ptr<const jit::compiled_integrand> compile_user_integrand(const integrate_args& a, int dim,
                                                                      const backend_choice& backend, bool progress);

/// What the reports say about the compilation.
user_integrand_report report_of(const integrate_args& a, const jit::compiled_integrand& f);

/// Prints "compiled: ..." (compiler, seconds, the object) or "compiled: cache hit ...".
void print_compile_line(std::FILE* out, const user_integrand_report& u);

/// The runner of a user integrand: rq.compiled over rq's region (rq.lower/upper, else [0, 1]^d)
/// with rq.options and rq.on_iteration. @throws as jit::compiled_integrand::vegas.
result run_user_integrand(const run_request& rq);

}  // namespace mcubes::cli

#pragma once
/// @file cli/integrand_dispatch.hpp
/// Compile-time dispatch of `mcubes integrate`: from a suite integrand's name and a run-time
/// dimension to an instantiation vegas<D>(F{}, ...) of the integrand's functor type F.
///
/// Every (integrand, D) pair is a separate instantiation of the whole sampling loop (about 0.65 s
/// of g++ -O3 each). Instantiating the six any-dimension integrands for D = 1..32 in one file
/// takes minutes on a 2-core machine, so the runners are split over one translation unit per
/// integrand (cli/dispatch_<name>.cpp), which a parallel build compiles concurrently.

#include <cstdint>
#include <string>
#include <utility>

#include <mcubes/config.hpp>
#include <mcubes/error.hpp>
#include <mcubes/options.hpp>
#include <mcubes/region.hpp>
#include <mcubes/result.hpp>
#include <mcubes/suite.hpp>

#include "run_backend.hpp"

namespace mcubes::cli {

/// Largest dimension the command dispatches to for the any-dimension integrands (f1..f6):
/// dimensions 1..max_cli_dim are compiled in.
inline constexpr int max_cli_dim = 32;
static_assert(max_cli_dim <= max_tested_dim, "the command should not offer untested dimensions");

/// One integration requested on the command line, validated by the integrate command.
struct run_request {
  const suite::entry* entry = nullptr;  ///< the suite integrand (name, region [lower, upper]^dim)
  int dim = 0;                          ///< dimension d
  vegas_options options;                ///< options of the run (options.backend = the requested one)
  backend_choice backend;               ///< resolved backend (run_backend.hpp)
  iteration_callback on_iteration;      ///< called after every iteration (may stop the run); may be empty
};

/// Runs one suite integrand: dispatches on rq.dim and calls run_on_backend.
/// @throws invalid_input if rq.dim is not a dimension of the integrand; whatever the run throws.
using runner = result (*)(const run_request& rq);

/// Runners of the suite integrands, one per translation unit (cli/dispatch_<name>.cpp).
result run_f1(const run_request& rq);
result run_f2(const run_request& rq);
result run_f3(const run_request& rq);
result run_f4(const run_request& rq);
result run_f5(const run_request& rq);
result run_f6(const run_request& rq);
result run_fA(const run_request& rq);
result run_fB(const run_request& rq);

/// Runs a suite integrand on the CUDA backend (cli/integrate_cuda.cu; CUDA builds only).
/// @throws invalid_input if rq.dim is not compiled in (see cli_cuda_supports).
result run_suite_on_cuda(const run_request& rq);

/// The runner of the suite integrand `name` (as in suite::entry::name), or nullptr if the command
/// has none for it.
runner find_runner(const std::string& name);

namespace detail {

/// vegas<D> of F over [lower, upper]^D on the requested backend.
template <class F, int D>
result run_with_dim(const run_request& rq) {
  return run_on_backend<D>(F{}, region<D>::cube(rq.entry->lower, rq.entry->upper), rq.options, rq.backend,
                           rq.on_iteration);
}

/// Table of run_with_dim<F, 1..N>, indexed by D - 1.
template <class F, int... I>
result run_dim_table(const run_request& rq, std::integer_sequence<int, I...>) {
  static constexpr runner table[] = {&run_with_dim<F, I + 1>...};
  return table[rq.dim - 1](rq);
}

}  // namespace detail

/// Runner of an integrand defined in every dimension: d in [1, max_cli_dim].
/// @throws invalid_input for d outside that range.
template <class F>
result run_any_dim(const run_request& rq) {
  MCUBES_EXPECTS(rq.dim >= 1 && rq.dim <= max_cli_dim, "dimension of ", rq.entry->name, " must be in [1, ",
                 max_cli_dim, "], got ", rq.dim);
  return detail::run_dim_table<F>(rq, std::make_integer_sequence<int, max_cli_dim>{});
}

/// Runner of an integrand defined only in dimension D.
/// @throws invalid_input for any other d.
template <class F, int D>
result run_fixed_dim(const run_request& rq) {
  MCUBES_EXPECTS(rq.dim == D, "dimension of ", rq.entry->name, " is fixed at ", D, ", got ", rq.dim);
  return detail::run_with_dim<F, D>(rq);
}

}  // namespace mcubes::cli

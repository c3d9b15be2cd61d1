#pragma once
/// @file cli/dispatch_impl.hpp
/// The definition of run_integrand<Desc> (integrand_dispatch.hpp): every dimension of the
/// integrand in suite::precompiled_dims (suite::visit_precompiled_dimension) runs mcubes::vegas_with
/// over its region on the chosen backend (run_backend.hpp); the command compiles the others at run
/// time (user_integrand.hpp, suite_compiled_at_run_time). Each (integrand, D) pair is a separate
/// instantiation of its front end; the loops and the CPU backend's sampling passes depend only on D
/// and are compiled once (mcubes_cpu_engine, mcubes/precompiled.hpp). Included only by the files
/// cli/dispatch_<name>.cpp.

#include <array>
#include <type_traits>

#include <mcubes/core/batch.hpp>
#include <mcubes/suite.hpp>

#include <mcubes/precompiled.hpp>  // the engine, compiled once per dimension (mcubes_cpu_engine)
#include "integrand_dispatch.hpp"

namespace mcubes::cli {

/// The region of a run: rq.lower/rq.upper when given (--region, --lower/--upper), else the
/// integrand's [lower, upper]^D.
template <int D, class Desc>
region<D> region_of(const run_request& rq) {
  if (rq.lower.size() != static_cast<std::size_t>(D) || rq.upper.size() != static_cast<std::size_t>(D))
    return region<D>::cube(Desc::lower, Desc::upper);
  std::array<double, D> lo{}, hi{};
  for (int i = 0; i < D; ++i) lo[i] = rq.lower[static_cast<std::size_t>(i)], hi[i] = rq.upper[static_cast<std::size_t>(i)];
  return region<D>(lo, hi);
}

/// The integrand that `mcubes integrate` evaluates at the parameter values `values` (order of
/// Desc::parameters; empty: the paper's): for f1..f6 with_parameters<F, P>{F{}, p}, the very functor
/// that a parameter batch evaluates for the member with parameters p (core/batch.hpp), so that
/// integrate with a row's seed reproduces that row of `mcubes scan` bit for bit (the same type, the
/// same arithmetic); F{} for fA and fB, which have no parameters.
template <class Desc>
auto integrand_at(const std::vector<double>& values) {
  using F = typename Desc::functor;
  using P = typename Desc::params;
  if constexpr (Desc::parameters.size() == 0) {
    (void)values;
    return F{};
  } else {
    return with_parameters<F, P>{F{}, values.empty() ? P{} : suite::params_from<Desc>(values)};
  }
}

/// Calls run(f, region) with the integrand's functor at the run's parameters (rq.params; empty: the
/// paper's; integrand_at) and its region [lower, upper]^D for the run's dimension D: the dimensions
/// of Desc in suite::precompiled_dims are compiled in (suite::visit_precompiled_dimension; any
/// other d is invalid_input here: the command routes it to the run-time compiler before). Shared by the CPU runners and the CUDA ones
/// (integrate_cuda_impl.cuh). The parameters change only the functor, never the seed or the plan.
template <class Desc, class Run>
result run_in_dimension(const run_request& rq, Run&& run) {
  const auto f = integrand_at<Desc>(rq.params);
  return suite::visit_precompiled_dimension<Desc, result>(rq.dim, [&](auto dim) {
    constexpr int D = decltype(dim)::value;
    return run(f, region_of<D, Desc>(rq));
  });
}

template <class Desc>
result run_integrand(const run_request& rq) {
  return run_in_dimension<Desc>(rq, [&](const auto& f, const auto& reg) {
    constexpr int D = std::decay_t<decltype(reg)>::dim;
    return run_on_backend<D>(f, reg, rq.options, rq.backend, rq.on_iteration, rq.trained, rq.resume);
  });
}

}  // namespace mcubes::cli

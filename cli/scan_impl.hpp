#pragma once
/// @file cli/scan_impl.hpp
/// The definition of scan_integrand<Desc> (scan_dispatch.hpp): every dimension of the integrand in
/// suite::precompiled_dims (the others are compiled at run time: user_integrand.hpp) runs one
/// parameter batch on the CPU backend. Included only by the
/// files cli/dispatch_<name>.cpp with integrate's runner (one translation unit per integrand; the
/// batch's rounds and the CPU sampling passes are compiled once per D: mcubes_cpu_engine).

#include <type_traits>
#include <vector>

#include <mcubes/algorithm/vegas_batch.hpp>
#include <mcubes/backend/cpu.hpp>
#include <mcubes/suite/registry.hpp>

#include <mcubes/precompiled.hpp>  // the batch rounds and passes, compiled once per dimension (mcubes_cpu_engine)
#include "mpi_session.hpp"
#include "scan_dispatch.hpp"

namespace mcubes::cli {

/// The parameter structs of the points of rq (Desc::make_params of each; the values are checked
/// before, by check_scan_points).
template <class Desc>
std::vector<typename Desc::params> scan_params(const scan_request& rq) {
  std::vector<typename Desc::params> params;
  params.reserve(rq.points->size());
  for (const std::vector<double>& values : *rq.points) params.push_back(suite::params_from<Desc>(values));
  return params;
}

/// Calls run(dim) with std::integral_constant<int, D> for the scan's dimension D (the dimensions
/// of Desc in suite::precompiled_dims compiled in). Shared by the CPU runners and the CUDA ones (scan_cuda_impl.cuh).
template <class Desc, class Run>
std::vector<result> scan_in_dimension(const scan_request& rq, Run&& run) {
  return suite::visit_precompiled_dimension<Desc, std::vector<result>>(rq.dim, [&](auto dim) { return run(dim); });
}

template <class Desc>
std::vector<result> scan_integrand(const scan_request& rq) {
  static_assert(Desc::parameters.size() > 0, "a scan needs an integrand with parameters");
  const std::vector<typename Desc::params> params = scan_params<Desc>(rq);
  return scan_in_dimension<Desc>(rq, [&](auto dim) {
    constexpr int D = decltype(dim)::value;
    vegas_options o = rq.options;
    o.backend = backend_kind::cpu;
    cpu_backend backend(o.threads, o.stop, cli_team());  // under mpirun: the ranks share each round
    std::vector<result> rs = vegas_batch_with<D>(typename Desc::functor{}, {region<D>::cube(Desc::lower, Desc::upper)},
                                                 params, o, backend, rq.on_round, rq.failures,
                                                 rq.resume);
    for (result& r : rs) r.options.backend = rq.backend.requested;
    return rs;
  });
}

}  // namespace mcubes::cli

#pragma once
/// @file cli/integrate_cuda_impl.cuh
/// The definition of run_integrand_cuda<Desc> (integrand_dispatch.hpp): every dimension of the
/// integrand (suite::visit_dimension, the same dimensions as the CPU) runs mcubes::vegas with
/// backend cuda. Each (integrand, D) pair instantiates the V-Sample kernels (adapting and not, for
/// blocks of up to 256 and up to 1024 threads), several seconds of nvcc each, so the instantiations
/// are split over one translation unit per integrand (cli/integrate_cuda_<name>.cu) that a parallel
/// build compiles together.

#include <mcubes/cuda.cuh>
#include <mcubes/suite.hpp>

#include "integrand_dispatch.hpp"

namespace mcubes::cli {

template <class Desc>
result run_integrand_cuda(const run_request& rq) {
  return suite::visit_dimension<Desc, result>(rq.dim, [&](auto dim) {
    constexpr int D = decltype(dim)::value;
    vegas_options o = rq.options;
    o.backend = backend_kind::cuda;
    result r = mcubes::vegas<D>(typename Desc::functor{}, region<D>::cube(Desc::lower, Desc::upper), o, rq.on_iteration);
    r.options.backend = rq.backend.requested;
    return r;
  });
}

}  // namespace mcubes::cli

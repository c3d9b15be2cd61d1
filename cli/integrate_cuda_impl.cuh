#pragma once
/// @file cli/integrate_cuda_impl.cuh
/// The definition of run_integrand_cuda<Desc> (integrand_dispatch.hpp): every dimension of the
/// integrand (run_in_dimension, the same dimensions as the CPU) runs mcubes::vegas_with on a
/// cuda_backend made for the run: the library entered at the algorithm layer, as the CPU runners
/// do (run_backend.hpp), so that these units compile the CUDA engine alone (mcubes::vegas would
/// instantiate the CPU engine too). Each (integrand, D) pair instantiates the V-Sample kernels
/// (adapting and not, for blocks of up to 256 and up to 1024 threads), several seconds of nvcc
/// each, so the instantiations are split over one translation unit per integrand
/// (cli/integrate_cuda_<name>.cu) that a parallel build compiles together.

#include <mcubes/cuda.cuh>
#include <mcubes/suite.hpp>

#include "cuda_dims.hpp"
#include "dispatch_impl.hpp"

namespace mcubes::cli {

/// In a compile-check build (cuda_dims.hpp) the one dimension compile_check_dim<Desc>() alone.
/// @throws invalid_input for a dimension the runner lacks (choose_backend never asks for one).
template <class Desc>
result run_integrand_cuda(const run_request& rq) {
  auto run = [&](const auto& f, const auto& reg) {
    constexpr int D = std::decay_t<decltype(reg)>::dim;
    vegas_options o = rq.options;
    o.backend = backend_kind::cuda;
    result r = vegas_with<D>(f, reg, o, cuda_backend(launch_policy_of(o), o.device), rq.on_iteration, rq.trained,
                             rq.resume);
    r.options.backend = rq.backend.requested;
    return r;
  };
  if constexpr (cuda_compile_check) {
    constexpr int D = compile_check_dim<Desc>();
    MCUBES_EXPECTS(rq.dim == D, "this build's CUDA runner of ", Desc::name, " has d = ", D, " only, not d = ", rq.dim,
                   " (MCUBES_CUDA_COMPILE_CHECK)");
    return run(integrand_at<Desc>(rq.params), region_of<D, Desc>(rq));
  } else {
    return run_in_dimension<Desc>(rq, run);
  }
}

}  // namespace mcubes::cli

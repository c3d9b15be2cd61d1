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
#include "mpi_session.hpp"

namespace mcubes::cli {

/// In a compile-check build (cuda_dims.hpp) the one dimension compile_check_dim<Desc>() alone.
/// @throws invalid_input for a dimension the runner lacks (choose_backend never asks for one).
template <class Desc>
result run_integrand_cuda(const run_request& rq) {
  auto run = [&](const auto& f, const auto& reg) {
    constexpr int D = std::decay_t<decltype(reg)>::dim;
    vegas_options o = rq.options;
    o.backend = backend_kind::cuda;
    result r;
    if (o.devices.size() > 1) {  // --devices: one host thread and backend per device, the sub-cubes split
      o.team = cli_team();         // under mpirun: every rank's devices, one team
      r = run_on_devices(o, o.devices, rq.on_iteration,
                         [&](cuda_backend& backend, const vegas_options& mine, const iteration_callback& watch, int m,
                             const communicator& team) {
                           sampling_density spare;  // the density is gathered on every device, kept by the first
                           vegas_resumption resume = rq.resume;
                           if (rq.resume_of_member)
                             resume = rq.resume_of_member(m, team);
                           else if (m > 0)
                             resume.save = nullptr;
                           return vegas_with<D>(f, reg, mine, backend, watch,
                                                rq.trained == nullptr ? nullptr : m == 0 ? rq.trained : &spare, resume);
                         },
                         rq.exchange);
    } else {
      cuda_backend backend(launch_policy_of(o), one_device_of(o, "a run"));
      backend.team = cli_team();  // under mpirun: the ranks share the run, one GPU each (integrate_command)
      r = vegas_with<D>(f, reg, o, backend, rq.on_iteration, rq.trained, rq.resume);
    }
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

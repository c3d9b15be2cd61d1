#pragma once
/// @file cli/scan_cuda_impl.cuh
/// The definition of scan_integrand_cuda<Desc> (scan_dispatch.hpp): one parameter batch on a
/// cuda_backend made for the scan (vegas_batch_with: the CUDA engine alone) in the dimensions 1..scan_cuda_max_dim (scan_dispatch.hpp). Each (integrand, D)
/// pair instantiates the batch kernels (sampling, adapting, reductions), many seconds of nvcc each,
/// so the CUDA scan is compiled for the low dimensions only (a scan's integrals are usually small
/// ones) and split over one translation unit per integrand (cli/scan_cuda_<name>.cu).

#include <mcubes/cuda.cuh>
#include <mcubes/suite.hpp>

#include "cuda_dims.hpp"
#include "scan_impl.hpp"

namespace mcubes::cli {

template <class Desc>
std::vector<result> scan_integrand_cuda(const scan_request& rq) {
  static_assert(Desc::parameters.size() > 0, "a scan needs an integrand with parameters");
  constexpr int top = cuda_compile_check ? compile_check_dim<Desc>()
                      : Desc::max_dim < scan_cuda_max_dim ? Desc::max_dim : scan_cuda_max_dim;
  constexpr int bottom = cuda_compile_check ? compile_check_dim<Desc>() : Desc::min_dim;
  MCUBES_EXPECTS(rq.dim >= bottom && rq.dim <= top, "the command's CUDA scan is compiled for ", Desc::name,
                 " in d = ", bottom, "..", top, ", not d = ", rq.dim, " (use --backend cpu)");
  const std::vector<typename Desc::params> params = scan_params<Desc>(rq);
  auto run = [&](auto dim) {
    constexpr int D = decltype(dim)::value;
    vegas_options o = rq.options;
    o.backend = backend_kind::cuda;
    const std::vector<region<D>> regions = {region<D>::cube(Desc::lower, Desc::upper)};
    std::vector<result> rs;
    if (o.devices.size() > 1) {  // --devices: the integrals split over the devices
      rs = vegas_batch_on_devices<D>(typename Desc::functor{}, regions, params, o, o.devices, rq.on_round, rq.failures,
                                     rq.resume);
    } else {
      cuda_backend backend(launch_policy_of(o), one_device_of(o, "a scan"));
      rs = vegas_batch_with<D>(typename Desc::functor{}, regions, params, o, backend, rq.on_round, rq.failures,
                               rq.resume);
    }
    for (result& r : rs) r.options.backend = rq.backend.requested;
    return rs;
  };
  return suite::detail::visit_dimension_from<bottom, top, std::vector<result>>(rq.dim, run);
}

}  // namespace mcubes::cli

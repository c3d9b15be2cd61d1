/// @file cli/integrate_cuda.cu
/// The CUDA side of `mcubes integrate` (compiled only when CMake enables CUDA): device queries and
/// which integrands and dimensions the CUDA runners (integrate_cuda_<name>.cu; picked by
/// find_runner) have, from the suite registry: every integrand in the dimensions the CPU runners
/// have (suite::precompiled_dims; the command compiles the others at run time for either backend).
#include <mcubes/cuda.cuh>
#include <mcubes/suite.hpp>

#include "cuda_dims.hpp"
#include "integrand_dispatch.hpp"

namespace mcubes::cli {

int cli_cuda_device_count() { return cuda_device_count(); }

std::string cli_cuda_device_name() {
  cudaDeviceProp p;
  if (cudaGetDeviceProperties(&p, 0) != cudaSuccess) return "device 0";
  return p.name;
}

bool cli_cuda_supports(const std::string& name, int dim) {
  bool ok = false;
  suite::for_each_integrand([&](auto d) {
    using Desc = decltype(d);
    if (name == Desc::name) {
      if constexpr (cuda_compile_check)
        ok = dim == compile_check_dim<Desc>();
      else
        ok = dim >= Desc::min_dim && dim <= Desc::max_dim && suite::is_precompiled_dim(dim);
    }
  });
  return ok;
}

std::string cli_cuda_dims() {
  if constexpr (cuda_compile_check)
    return "one dimension per integrand (a build made to check that the CUDA code compiles, "
           "MCUBES_CUDA_COMPILE_CHECK)";
  return "the dimensions of the CPU backend (suite::precompiled_dims)";
}

}  // namespace mcubes::cli

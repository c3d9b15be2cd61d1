/// @file cli/scan_cuda.cu
/// The CUDA side of `mcubes scan` (compiled only when CMake enables CUDA): which dimensions the
/// CUDA scan has (its runners, scan_cuda_<name>.cu, are picked by find_scan_runner), from the
/// suite registry.
#include <mcubes/suite/registry.hpp>

#include "cuda_dims.hpp"
#include "scan_dispatch.hpp"

namespace mcubes::cli {

bool scan_cuda_supports(const std::string& name, int dim) {
  bool ok = false;
  suite::for_each_integrand([&](auto d) {
    using Desc = decltype(d);
    if constexpr (Desc::parameters.size() > 0)
      if (name == Desc::name) {
        if constexpr (cuda_compile_check)
          ok = dim == compile_check_dim<Desc>();
        else
          ok = dim >= Desc::min_dim && dim <= Desc::max_dim && dim <= scan_cuda_max_dim;
      }
  });
  return ok;
}

std::string scan_cuda_dims() {
  if constexpr (cuda_compile_check) return "one dimension per integrand (MCUBES_CUDA_COMPILE_CHECK)";
  return "1.." + std::to_string(scan_cuda_max_dim);
}

}  // namespace mcubes::cli

/// @file cli/scan_dispatch.cpp
/// Names to scan runners, from the suite registry (suite/registry.hpp): every integrand with
/// parameters has one.
#include "scan_dispatch.hpp"

#include <mcubes/suite/registry.hpp>

namespace mcubes::cli {

scan_runner find_scan_runner(const std::string& name, backend_kind used) {
  scan_runner r = nullptr;
  suite::for_each_integrand([&](auto d) {
    using Desc = decltype(d);
    if constexpr (Desc::parameters.size() > 0) {
      if (name != Desc::name) return;
#if defined(MCUBES_HAS_CUDA_BACKEND) && MCUBES_HAS_CUDA_BACKEND
      r = used == backend_kind::cuda ? &scan_integrand_cuda<Desc> : &scan_integrand<Desc>;
#else
      r = used == backend_kind::cuda ? nullptr : &scan_integrand<Desc>;
#endif
    }
  });
  return r;
}

}  // namespace mcubes::cli

#if !(defined(MCUBES_HAS_CUDA_BACKEND) && MCUBES_HAS_CUDA_BACKEND)
// A build without the CUDA backend: choose_backend never selects cuda.
namespace mcubes::cli {
bool scan_cuda_supports(const std::string&, int) { return false; }
std::string scan_cuda_dims() { return ""; }
}  // namespace mcubes::cli
#endif

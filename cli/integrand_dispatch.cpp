/// @file cli/integrand_dispatch.cpp
/// Names to runners, from the suite registry (suite/registry.hpp).
#include "integrand_dispatch.hpp"

#include <mcubes/suite/registry.hpp>

namespace mcubes::cli {

runner find_runner(const std::string& name, backend_kind used) {
  runner r = nullptr;
  suite::for_each_integrand([&](auto d) {
    using Desc = decltype(d);
    if (name != Desc::name) return;
#if defined(MCUBES_HAS_CUDA_BACKEND) && MCUBES_HAS_CUDA_BACKEND
    r = used == backend_kind::cuda ? &run_integrand_cuda<Desc> : &run_integrand<Desc>;
#else
    r = used == backend_kind::cuda ? nullptr : &run_integrand<Desc>;
#endif
  });
  return r;
}

}  // namespace mcubes::cli

#if !(defined(MCUBES_HAS_CUDA_BACKEND) && MCUBES_HAS_CUDA_BACKEND)
// A build without the CUDA backend: no device is ever reported, so choose_backend never selects cuda.
namespace mcubes::cli {
int cli_cuda_device_count() { return 0; }
std::string cli_cuda_device_name() { return ""; }
bool cli_cuda_supports(const std::string&, int) { return false; }
std::string cli_cuda_dims() { return "{}"; }
}  // namespace mcubes::cli
#endif

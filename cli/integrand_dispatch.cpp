/// @file cli/integrand_dispatch.cpp
/// Names to runners, from the suite registry (suite/registry.hpp).
#include "integrand_dispatch.hpp"

#include <mcubes/suite/registry.hpp>

namespace mcubes::cli {

runner find_runner(const std::string& name) {
  runner r = nullptr;
  suite::for_each_integrand([&](auto d) {
    if (name == decltype(d)::name) r = &run_integrand<decltype(d)>;
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
result run_suite_on_cuda(const run_request&) {
  throw error("backend cuda requested, but this build has no CUDA backend (use --backend cpu or auto)");
}
}  // namespace mcubes::cli
#endif

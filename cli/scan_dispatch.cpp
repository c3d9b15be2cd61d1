/// @file cli/scan_dispatch.cpp
/// Names to scan runners, from the suite registry (suite/registry.hpp): every integrand with
/// parameters has one.
#include "scan_dispatch.hpp"

#include <mcubes/suite/registry.hpp>

namespace mcubes::cli {

scan_runner find_scan_runner(const std::string& name) {
  scan_runner r = nullptr;
  suite::for_each_integrand([&](auto d) {
    using Desc = decltype(d);
    if constexpr (Desc::parameters.size() > 0)
      if (name == Desc::name) r = &scan_integrand<Desc>;
  });
  return r;
}

}  // namespace mcubes::cli

#if !(defined(MCUBES_HAS_CUDA_BACKEND) && MCUBES_HAS_CUDA_BACKEND)
// A build without the CUDA backend: choose_backend never selects cuda.
namespace mcubes::cli {
bool scan_cuda_supports(const std::string&, int) { return false; }
std::string scan_cuda_dims() { return ""; }
std::vector<result> run_scan_on_cuda(const scan_request&) {
  throw error("backend cuda requested, but this build has no CUDA backend (use --backend cpu or auto)");
}
}  // namespace mcubes::cli
#endif

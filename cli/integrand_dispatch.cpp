/// @file cli/integrand_dispatch.cpp
/// The table from suite integrand names to their runners (cli/dispatch_<name>.cpp).
#include "integrand_dispatch.hpp"

namespace mcubes::cli {

runner find_runner(const std::string& name) {
  static const struct {
    const char* name;
    runner run;
  } table[] = {{"f1", &run_f1}, {"f2", &run_f2}, {"f3", &run_f3}, {"f4", &run_f4},
               {"f5", &run_f5}, {"f6", &run_f6}, {"fA", &run_fA}, {"fB", &run_fB}};
  for (const auto& t : table)
    if (name == t.name) return t.run;
  return nullptr;
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

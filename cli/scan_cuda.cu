/// @file cli/scan_cuda.cu
/// The CUDA side of `mcubes scan` (compiled only when CMake enables CUDA): which dimensions the
/// CUDA scan has, and the dispatch from a suite integrand's name to its CUDA scan runner
/// (scan_cuda_<name>.cu), from the suite registry.
#include <mcubes/suite/registry.hpp>

#include "scan_dispatch.hpp"

namespace mcubes::cli {

bool scan_cuda_supports(const std::string& name, int dim) {
  bool ok = false;
  suite::for_each_integrand([&](auto d) {
    using Desc = decltype(d);
    if constexpr (Desc::parameters.size() > 0)
      if (name == Desc::name) ok = dim >= Desc::min_dim && dim <= Desc::max_dim && dim <= scan_cuda_max_dim;
  });
  return ok;
}

std::string scan_cuda_dims() { return "1.." + std::to_string(scan_cuda_max_dim); }

std::vector<result> run_scan_on_cuda(const scan_request& rq) {
  std::vector<result> out;
  bool found = false;
  suite::for_each_integrand([&](auto d) {
    using Desc = decltype(d);
    if constexpr (Desc::parameters.size() > 0)
      if (!found && rq.entry->name == Desc::name) {
        found = true;
        out = scan_integrand_cuda<Desc>(rq);
      }
  });
  MCUBES_EXPECTS(found, "integrand ", rq.entry->name, " has no CUDA scan runner");
  return out;
}

}  // namespace mcubes::cli

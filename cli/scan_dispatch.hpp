#pragma once
/// @file cli/scan_dispatch.hpp
/// Compile-time dispatch of `mcubes scan`: from a suite integrand's name and a run-time dimension
/// to one parameter batch, mcubes::vegas_batch_with<D>(F{}, region, params, ...) with F the
/// integrand's functor and params its parameter structs (Desc::make_params of each grid point).
///
/// Every (integrand, D) pair instantiates the batch loop and, on the GPU, the batch kernels, so the
/// runners are split over one translation unit per integrand (cli/dispatch_<name>.cpp, with integrate's runner,
/// cli/scan_cuda_<name>.cu) that a parallel build compiles together. Only integrands with
/// parameters (f1..f6) have scan runners.

#include <string>
#include <vector>

#include <mcubes/algorithm/vegas_batch.hpp>
#include <mcubes/options.hpp>
#include <mcubes/result.hpp>
#include <mcubes/suite.hpp>

#include "run_backend.hpp"

namespace mcubes::jit {
class compiled_integrand;
}

namespace mcubes::cli {

/// One scan requested on the command line, validated by the scan command.
struct scan_request {
  const suite::entry* entry = nullptr;        ///< the suite integrand (its region [lower, upper]^dim)
  int dim = 0;                                ///< dimension d
  const std::vector<std::vector<double>>* points = nullptr;  ///< K parameter vectors (order of entry->parameters)
  vegas_options options;                      ///< options of every integral; integral k's seed is batch_seed(seed, k)
  backend_choice backend;                     ///< resolved backend (run_backend.hpp)
  batch_callback on_round;                    ///< called after every round (may stop every integral); may be empty
  /// Where the failures of single integrals go (vegas_batch_with's failures: a failing integral
  /// leaves the batch, the others go on, unchanged); null: a failure ends the scan (batch_error)
  batch_failures* failures = nullptr;
  /// --checkpoint / --resume: the progresses to continue and the saver (vegas_batch_with's resume;
  /// also the run-time compiled object's, compiled_integrand::vegas_batch)
  batch_resumption resume;
  /// --expr/--body: the integrand compiled for method vegas_batch (user_integrand.hpp), null for the suite
  const jit::compiled_integrand* compiled = nullptr;
  std::vector<double> lower, upper;           ///< --expr/--body: the region (empty: [0, 1]^dim)
};

/// Runs the K integrals of a scan and returns their results in grid order (result k: point k).
/// @throws invalid_input if rq.dim is not a dimension of the integrand (or, on the GPU, the batch
///         does not fit in the free device memory); batch_error naming the failing integral.
using scan_runner = std::vector<result> (*)(const scan_request& rq);

/// The scan runner of the suite integrand with descriptor Desc on the CPU backend (cli/scan_impl.hpp,
/// instantiated in cli/dispatch_<name>.cpp).
template <class Desc>
std::vector<result> scan_integrand(const scan_request& rq);

/// The same on the CUDA backend (cli/scan_cuda_impl.cuh, instantiated in cli/scan_cuda_<name>.cu;
/// CUDA builds only).
template <class Desc>
std::vector<result> scan_integrand_cuda(const scan_request& rq);

/// The scan runner of the suite integrand `name` on the backend `used` (scan_integrand or
/// scan_integrand_cuda), or nullptr if it has none (no parameters, no such integrand, or `used` is
/// cuda in a build without the CUDA backend).
scan_runner find_scan_runner(const std::string& name, backend_kind used);

/// Highest dimension of the command's CUDA scan: each (integrand, D) pair instantiates the batch
/// kernels (many seconds of nvcc each), so the CUDA scan is compiled for d = 1..8 only; the CPU scan
/// has every dimension of the integrand. A scan in a higher dimension runs on the CPU (--backend
/// auto) or is refused (--backend cuda), or uses the library's vegas_batch.
inline constexpr int scan_cuda_max_dim = 8;

/// Whether the command's CUDA scan has an instantiation of integrand `name` in dimension d, and
/// the dimensions it has ("1..8"); false / "" in a build without CUDA.
bool scan_cuda_supports(const std::string& name, int dim);
std::string scan_cuda_dims();

}  // namespace mcubes::cli

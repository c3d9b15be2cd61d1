#pragma once
/// @file cli/integrand_dispatch.hpp
/// Compile-time dispatch of `mcubes integrate`: from a suite integrand's name and a run-time
/// dimension to an instantiation vegas<D>(F{}, ...) of the integrand's functor type F.
///
/// Every (integrand, D) pair is a separate instantiation of the front end (the loops and the CPU
/// sampling passes are compiled once per D: mcubes_cpu_engine, mcubes/precompiled.hpp), so the
/// runners are split over one translation unit per integrand (cli/dispatch_<name>.cpp, with the integrand's scan
/// runner), which a parallel build compiles concurrently.

#include <cstdint>
#include <functional>
#include <string>
#include <utility>
#include <vector>

#include <mcubes/backend/team.hpp>
#include <mcubes/config.hpp>
#include <mcubes/error.hpp>
#include <mcubes/options.hpp>
#include <mcubes/region.hpp>
#include <mcubes/result.hpp>
#include <mcubes/suite.hpp>
#include <mcubes/core/weighted_sample.hpp>

#include "run_backend.hpp"

namespace mcubes::jit {
class compiled_integrand;
}

namespace mcubes::cli {

/// One integration requested on the command line, validated by the integrate command.
struct run_request {
  const suite::entry* entry = nullptr;  ///< the suite integrand (name, region [lower, upper]^dim)
  int dim = 0;                          ///< dimension d
  std::vector<double> params;           ///< its parameter values (order of entry->parameters); empty: the paper's
  vegas_options options;                ///< options of the run (options.backend = the requested one)
  backend_choice backend;               ///< resolved backend (run_backend.hpp)
  iteration_callback on_iteration;      ///< called after every iteration (may stop the run); may be empty
  std::vector<double> lower, upper;     ///< the region per axis (--region, --lower/--upper); empty: the integrand's
  const jit::compiled_integrand* compiled = nullptr;  ///< --expr/--body: the compiled integrand (user_integrand.hpp)
  /// `mcubes sample`: where the run puts the sampling density it ended with (null: nowhere).
  sampling_density* trained = nullptr;
  /// --checkpoint / --resume: the run to continue and the saver of its progress (may be empty).
  vegas_resumption resume;
  /// --devices with several devices and --checkpoint: device m's resumption (from as `resume`,
  /// its own checkpoint saver joined to the devices' team `team`; the first device's writes);
  /// empty: `resume` on the first device, its `from` alone on the others.
  std::function<vegas_resumption(int member, const communicator& team)> resume_of_member;
  /// --devices with several devices: where the runner puts the first device's exchange time (may be null).
  exchange_time* exchange = nullptr;
};

/// Runs one suite integrand: dispatches on rq.dim and calls run_on_backend.
/// @throws invalid_input if rq.dim is not a dimension of the integrand; whatever the run throws.
using runner = result (*)(const run_request& rq);

/// The runner of the suite integrand with descriptor Desc (suite/registry.hpp) on the CPU backend:
/// every dimension of Desc compiled in. Defined in dispatch_impl.hpp and explicitly instantiated,
/// one integrand per translation unit (cli/dispatch_<name>.cpp), so that a parallel build compiles
/// them together.
template <class Desc>
result run_integrand(const run_request& rq);

/// The same on the CUDA backend (cli/integrate_cuda_impl.cuh, instantiated in
/// cli/integrate_cuda_<name>.cu; CUDA builds only).
template <class Desc>
result run_integrand_cuda(const run_request& rq);

/// The runner of the suite integrand `name` (as in suite::entry::name) on the backend `used` (the
/// one choose_backend picked: run_integrand or run_integrand_cuda), or nullptr if the suite has
/// none by that name, or `used` is cuda in a build without the CUDA backend (taken from the
/// registry). The one place where the command's suite runs pick their backend's runner.
runner find_runner(const std::string& name, backend_kind used);

}  // namespace mcubes::cli

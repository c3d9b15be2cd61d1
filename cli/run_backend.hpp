#pragma once
/// @file cli/run_backend.hpp
/// The one place where the `mcubes` command chooses who computes the samples.
///
/// choose_backend() turns the requested --backend (cpu, cuda, auto) into the backend that will
/// run and a line describing the choice, once per command; find_runner / find_scan_runner then
/// pick that backend's runner. Every runner enters the library at the algorithm layer
/// (vegas_with, vegas_batch_with) on a backend it makes: run_on_backend() for the CPU here, the
/// CUDA runners in cli/integrate_cuda_impl.cuh and cli/scan_cuda_impl.cuh (units compiled by nvcc).

#include <string>

#include <mcubes/backend/cpu.hpp>
#include <mcubes/error.hpp>
#include <mcubes/mcubes.hpp>

#include "mpi_session.hpp"
#include "parse.hpp"

namespace mcubes::cli {

/// The backend a run will use, resolved from the user's request.
struct backend_choice {
  backend_kind requested = backend_kind::cpu;  ///< what --backend asked for
  backend_kind used = backend_kind::cpu;       ///< what runs
  std::string description;                     ///< e.g. "cpu (auto: no CUDA device)"
};

/// Whether this build has the CUDA backend of the command (cli/integrate_cuda.cu).
inline constexpr bool cuda_backend_built =
#if defined(MCUBES_HAS_CUDA_BACKEND) && MCUBES_HAS_CUDA_BACKEND
    true;
#else
    false;
#endif

/// Defined in cli/integrate_cuda.cu (CUDA builds only): the number of CUDA devices, its name, and
/// whether the command's CUDA dispatch has an instantiation of integrand `name` in dimension d.
int cli_cuda_device_count();
std::string cli_cuda_device_name();
bool cli_cuda_supports(const std::string& name, int dim);
std::string cli_cuda_dims();

/// Resolves --backend for integrand `name` in dimension `dim`:
///  - cpu: the CPU backend;
///  - cuda: the CUDA backend; a runtime failure (mcubes::error, exit 3) when this build has none or
///    no device is present; bad input when the command's CUDA dispatch lacks that dimension;
///  - auto: CUDA when the build has it, a device is present and the dimension is compiled in;
///    otherwise the CPU, with the reason in the description.
inline backend_choice choose_backend(backend_kind requested, const std::string& name = "", int dim = 0) {
  backend_choice c;
  c.requested = requested;
  c.used = backend_kind::cpu;
  c.description = "cpu";
  if (requested == backend_kind::cpu) {
    c.description += ranks_note();  // under mpirun: the ranks share each run (mpi_session.hpp)
    return c;
  }
  std::string why;
  if (!cuda_backend_built) {
    why = "no CUDA backend in this build";
  } else if (cli_cuda_device_count() == 0) {
    why = "no CUDA device";
  } else if (!name.empty() && !cli_cuda_supports(name, dim)) {
    if (requested == backend_kind::cuda)
      throw invalid_input("the command's CUDA backend is compiled for " + name + " in d = " + cli_cuda_dims() +
                          ", not d = " + std::to_string(dim) + " (use --backend cpu, or the library)");
    why = "the CUDA backend is not compiled for d = " + std::to_string(dim);
  } else {
    c.used = backend_kind::cuda;
    c.description = "cuda (" + (cuda_backend_built ? cli_cuda_device_name() : std::string()) + ")" +
                    (requested == backend_kind::automatic ? " (auto: device found)" : "");
    if (cli_team() != nullptr)  // under mpirun: one GPU per rank (cli_rank_device), the ranks share each run
      c.description += ", one GPU per rank" + ranks_note();
    return c;
  }
  if (requested == backend_kind::cuda)
    throw error("backend cuda requested, but " + why + " (use --backend cpu or auto)");
  c.description = "cpu (auto: " + why + ")" + ranks_note();
  return c;
}

/// Under mpirun with the CUDA backend, this rank's GPU: its rank among the ranks of its host
/// modulo the devices present (one rank per GPU: `mpirun -np <GPUs per host x hosts>`); 0 for one
/// process.
inline int cli_rank_device() {
  const int n = cli_cuda_device_count();
  return cli_team() != nullptr && n > 0 ? cli_local_rank() % n : 0;
}

/// The CUDA devices of --devices (common_values): the ordinals given, or for `all` every device
/// present; empty when --devices was not given. @throws error (exit 3) for `all` where no CUDA
/// device is present.
inline std::vector<int> devices_of(const common_values& c) {
  if (!c.all_devices) return c.devices;
  const int n = cli_cuda_device_count();
  if (n == 0) throw error("--devices all: no CUDA device is present");
  std::vector<int> all;
  for (int d = 0; d < n; ++d) all.push_back(d);
  return all;
}

/// Checks --devices (devices_of) against the backend that runs: nothing to do when none was given;
/// otherwise the run must be on the CUDA backend and every ordinal present. The choice's
/// description then names the devices. Under mpirun the list is each rank's (every rank's devices
/// share the run: one rank per host with --devices all, or per socket with its GPUs).
/// @throws invalid_input naming --devices otherwise.
inline void check_devices(const std::vector<int>& devices, backend_choice& choice) {
  if (devices.empty()) return;
  MCUBES_EXPECTS(choice.used == backend_kind::cuda, "--devices needs the CUDA backend, but the run is on ",
                 choice.description);
  const int n = cli_cuda_device_count();
  std::string names;
  for (int d : devices) {
    MCUBES_EXPECTS(d < n, "--devices: there is no CUDA device ", d, " (this machine has ", n, ")");
    names += (names.empty() ? "" : ",") + std::to_string(d);
  }
  const std::size_t one_each = choice.description.find(", one GPU per rank");  // under mpirun: the list instead
  if (one_each != std::string::npos) choice.description.erase(one_each, std::string(", one GPU per rank").size());
  choice.description += (devices.size() == 1 ? " on device " : " on devices ") + names;
  if (cli_team() != nullptr) choice.description += " (each rank)";
}

/// Integrates f over `reg` with m-Cubes on the backend in `choice` (see choose_backend).
/// `opt.threads` (0 = all cores) sets the CPU worker threads; the result does not depend on it.
/// opt.backend is ignored: `choice.used` decides. The result's `options.backend` is set to the
/// requested backend, `result.backend` names the one that ran. With `trained`, the sampling density
/// the run ended with (vegas_with).
/// @throws whatever mcubes::vegas_with throws (invalid_input, non_finite_integrand, numerical_error).
template <int D, class F>
result run_on_backend(const F& f, const region<D>& reg, const vegas_options& opt, const backend_choice& choice,
                      const iteration_callback& on_iteration = {}, sampling_density* trained = nullptr,
                      const vegas_resumption& resume = {}) {
  vegas_options o = opt;
  o.backend = choice.used;
  result r;
  switch (choice.used) {
    case backend_kind::cpu:
      validate(o, D);
      r = vegas_with<D>(f, reg, o, cpu_backend(o.threads, o.stop, cli_team()), on_iteration, trained, resume);
      break;
    default:
      throw error(std::string("backend ") + to_string(choice.used) + " is not available in this build");
  }
  r.options.backend = choice.requested;
  return r;
}

}  // namespace mcubes::cli

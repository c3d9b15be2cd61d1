#pragma once
/// @file cli/run_backend.hpp
/// The one place where the `mcubes` command chooses who computes the samples.
///
/// choose_backend() turns the requested --backend (cpu, cuda, auto) into the backend that will
/// run and a line describing the choice; run_on_backend() runs mcubes::vegas_with on it. Adding
/// the CUDA backend means: a `cuda` case in both functions (run_on_backend then has to be
/// instantiated in translation units compiled by nvcc), nothing else in the command changes.

#include <string>

#include <mcubes/backend/cpu.hpp>
#include <mcubes/error.hpp>
#include <mcubes/mcubes.hpp>

namespace mcubes::cli {

/// The backend a run will use, resolved from the user's request.
struct backend_choice {
  backend_kind requested = backend_kind::cpu;  ///< what --backend asked for
  backend_kind used = backend_kind::cpu;       ///< what runs (cpu in this build)
  std::string description;                     ///< e.g. "cpu (auto: no CUDA backend in this build)"
};

/// Resolves --backend for this build (CPU only).
///  - cpu: the CPU backend;
///  - auto: the CPU backend, described as "cpu (auto: no CUDA backend in this build)";
///  - cuda: not available here.
/// @throws mcubes::error (a runtime failure, exit code 3, not bad input) for cuda.
inline backend_choice choose_backend(backend_kind requested) {
  backend_choice c;
  c.requested = requested;
  switch (requested) {
    case backend_kind::cpu:
      c.used = backend_kind::cpu;
      c.description = "cpu";
      return c;
    case backend_kind::automatic:
      c.used = backend_kind::cpu;
      c.description = "cpu (auto: no CUDA backend in this build)";
      return c;
    case backend_kind::cuda:
      break;
  }
  throw error("backend cuda requested, but this build has no CUDA backend (use --backend cpu or auto)");
}

/// Integrates f over `reg` with m-Cubes on the backend in `choice` (see choose_backend).
/// `opt.threads` (0 = all cores) sets the CPU worker threads; the result does not depend on it.
/// opt.backend is ignored: `choice.used` decides. The result's `options.backend` is set to the
/// requested backend, `result.backend` names the one that ran.
/// @throws whatever mcubes::vegas_with throws (invalid_input, non_finite_integrand, numerical_error).
template <int D, class F>
result run_on_backend(const F& f, const region<D>& reg, const vegas_options& opt, const backend_choice& choice) {
  vegas_options o = opt;
  o.backend = choice.used;
  result r;
  switch (choice.used) {
    case backend_kind::cpu:
      validate(o, D);
      r = vegas_with<D>(f, reg, o, cpu_backend(o.threads));
      break;
    default:
      throw error(std::string("backend ") + to_string(choice.used) + " is not available in this build");
  }
  r.options.backend = choice.requested;
  return r;
}

}  // namespace mcubes::cli

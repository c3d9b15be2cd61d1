#pragma once
/// @file cli/engine.hpp
/// The loops of the command's CPU runs, compiled once per dimension: every precompiled dimension D
/// (suite::precompiled_dims) of the one-run loop (detail::vegas_driver) and of the batch's rounds
/// (detail::batch_driver) on the CPU backend are declared here as explicit instantiations made
/// elsewhere (cli/engine.cpp), so that the units of the integrands (cli/dispatch_<name>.cpp) compile
/// only what depends on their functor: its sampling passes. The bits are those of the implicit
/// instantiations (the same code).

#include <array>

#include <mcubes/algorithm/vegas.hpp>
#include <mcubes/algorithm/vegas_batch.hpp>
#include <mcubes/backend/cpu.hpp>
#include <mcubes/suite/registry.hpp>

/// X(D) for every D of suite::precompiled_dims (checked below).
#define MCUBES_CLI_ENGINE_DIMS(X) X(1) X(2) X(3) X(4) X(5) X(6) X(7) X(8) X(9) X(10) X(11) X(12) X(16)

namespace mcubes::cli {
#define MCUBES_CLI_ENGINE_DIM_ENTRY(D) D,
/// The dimensions of MCUBES_CLI_ENGINE_DIMS.
inline constexpr std::array<int, suite::precompiled_dims.size()> engine_dims{{MCUBES_CLI_ENGINE_DIMS(MCUBES_CLI_ENGINE_DIM_ENTRY)}};
#undef MCUBES_CLI_ENGINE_DIM_ENTRY
constexpr bool engine_dims_are_precompiled() {
  for (std::size_t i = 0; i < engine_dims.size(); ++i)
    if (engine_dims[i] != suite::precompiled_dims[i]) return false;
  return true;
}
static_assert(engine_dims_are_precompiled(), "MCUBES_CLI_ENGINE_DIMS must list suite::precompiled_dims");
}  // namespace mcubes::cli

#ifndef MCUBES_CLI_ENGINE_DEFINITIONS
#define MCUBES_CLI_ENGINE_EXTERN(D)                                                                         \
  extern template struct mcubes::detail::vegas_driver<D, mcubes::cpu_backend, mcubes::adaptive_map<D>>; \
  extern template struct mcubes::detail::batch_driver<D, mcubes::cpu_backend>;
MCUBES_CLI_ENGINE_DIMS(MCUBES_CLI_ENGINE_EXTERN)
#undef MCUBES_CLI_ENGINE_EXTERN
#endif

/// @file cli/engine.cpp
/// The explicit instantiations that cli/engine.hpp declares: the CPU backend's one-run loop and
/// batch rounds in every precompiled dimension.
#define MCUBES_CLI_ENGINE_DEFINITIONS
#include "engine.hpp"

#define MCUBES_CLI_ENGINE_DEFINE(D)                                                                  \
  template struct mcubes::detail::vegas_driver<D, mcubes::cpu_backend, mcubes::adaptive_map<D>>; \
  template struct mcubes::detail::batch_driver<D, mcubes::cpu_backend>;
MCUBES_CLI_ENGINE_DIMS(MCUBES_CLI_ENGINE_DEFINE)

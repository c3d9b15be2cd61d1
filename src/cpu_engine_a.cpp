/// @file src/cpu_engine_a.cpp
/// The precompiled CPU engine (include/mcubes/precompiled.hpp) in dimensions 1, 2, 3, 4, 5: explicit
/// instantiation definitions. The three units src/cpu_engine_{a,b,c}.cpp hold every dimension of
/// MCUBES_PRECOMPILED_DIMS once (a missing one leaves the programs that link mcubes_cpu_engine
/// unresolved); split so that a parallel build compiles them together. This one also defines
/// mcubes::chi2_q for every unit that links the engine (MCUBES_PRECOMPILED_CHI2_Q_DEFINE).
#define MCUBES_PRECOMPILED_CPU_ENGINE_DEFINITIONS
#include <mcubes/precompiled.hpp>
#include <mcubes/suite/registry.hpp>

namespace {
#define MCUBES_ENGINE_DIM_ENTRY(D) D,
constexpr int engine_dims[] = {MCUBES_PRECOMPILED_DIMS(MCUBES_ENGINE_DIM_ENTRY)};
#undef MCUBES_ENGINE_DIM_ENTRY
constexpr bool engine_dims_are_precompiled() {
  if (sizeof(engine_dims) / sizeof(engine_dims[0]) != mcubes::suite::precompiled_dims.size()) return false;
  for (std::size_t i = 0; i < mcubes::suite::precompiled_dims.size(); ++i)
    if (engine_dims[i] != mcubes::suite::precompiled_dims[i]) return false;
  return true;
}
static_assert(engine_dims_are_precompiled(), "MCUBES_PRECOMPILED_DIMS must list suite::precompiled_dims");
}  // namespace

MCUBES_PRECOMPILED_CHI2_Q_DEFINE
MCUBES_PRECOMPILED_CPU_ENGINE_DEFINE(1)
MCUBES_PRECOMPILED_CPU_ENGINE_DEFINE(2)
MCUBES_PRECOMPILED_CPU_ENGINE_DEFINE(3)
MCUBES_PRECOMPILED_CPU_ENGINE_DEFINE(4)
MCUBES_PRECOMPILED_CPU_ENGINE_DEFINE(5)

/// @file src/cpu_engine_c.cpp
/// The precompiled CPU engine (include/mcubes/precompiled.hpp) in dimensions 10, 11, 12, 16: explicit
/// instantiation definitions. The three units src/cpu_engine_{a,b,c}.cpp hold every dimension of
/// MCUBES_PRECOMPILED_DIMS once (a missing one leaves the programs that link mcubes_cpu_engine
/// unresolved); split so that a parallel build compiles them together.
#define MCUBES_PRECOMPILED_CPU_ENGINE_DEFINITIONS
#include <mcubes/precompiled.hpp>

MCUBES_PRECOMPILED_CPU_ENGINE_DEFINE(10)
MCUBES_PRECOMPILED_CPU_ENGINE_DEFINE(11)
MCUBES_PRECOMPILED_CPU_ENGINE_DEFINE(12)
MCUBES_PRECOMPILED_CPU_ENGINE_DEFINE(16)

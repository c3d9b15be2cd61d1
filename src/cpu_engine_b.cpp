/// @file src/cpu_engine_b.cpp
/// The precompiled CPU engine (include/mcubes/precompiled.hpp) in dimensions 6, 7, 8, 9: explicit
/// instantiation definitions. The three units src/cpu_engine_{a,b,c}.cpp hold every dimension of
/// MCUBES_PRECOMPILED_DIMS once (a missing one leaves the programs that link mcubes_cpu_engine
/// unresolved); split so that a parallel build compiles them together.
#define MCUBES_PRECOMPILED_CPU_ENGINE_DEFINITIONS
#include <mcubes/precompiled.hpp>

MCUBES_PRECOMPILED_CPU_ENGINE_DEFINE(6)
MCUBES_PRECOMPILED_CPU_ENGINE_DEFINE(7)
MCUBES_PRECOMPILED_CPU_ENGINE_DEFINE(8)
MCUBES_PRECOMPILED_CPU_ENGINE_DEFINE(9)

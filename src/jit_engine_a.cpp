/// @file src/jit_engine_a.cpp
/// The program's run of run-time compiled integrands (include/mcubes/jit/object_run.hpp) in
/// dimensions 1 to 5: explicit instantiation definitions. The units src/jit_engine_{a,b,c}.cpp
/// hold every dimension of MCUBES_PRECOMPILED_DIMS once (CMake target mcubes_jit_engine).
#include <mcubes/jit/object_run_impl.hpp>
#include <mcubes/precompiled.hpp>

MCUBES_PRECOMPILED_JIT_DEFINE(1)
MCUBES_PRECOMPILED_JIT_DEFINE(2)
MCUBES_PRECOMPILED_JIT_DEFINE(3)
MCUBES_PRECOMPILED_JIT_DEFINE(4)
MCUBES_PRECOMPILED_JIT_DEFINE(5)

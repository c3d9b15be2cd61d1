/// @file src/jit_engine_b.cpp
/// The program's run of run-time compiled integrands (include/mcubes/jit/object_run.hpp) in
/// dimensions 6 to 9 (src/jit_engine_a.cpp).
#include <mcubes/jit/object_run_impl.hpp>
#include <mcubes/precompiled.hpp>

MCUBES_PRECOMPILED_JIT_DEFINE(6)
MCUBES_PRECOMPILED_JIT_DEFINE(7)
MCUBES_PRECOMPILED_JIT_DEFINE(8)
MCUBES_PRECOMPILED_JIT_DEFINE(9)

/// @file src/jit_engine_c.cpp
/// The program's run of run-time compiled integrands (include/mcubes/jit/object_run.hpp) in
/// dimensions 10, 11, 12 and 16 (src/jit_engine_a.cpp).
#include <mcubes/jit/object_run_impl.hpp>
#include <mcubes/precompiled.hpp>

MCUBES_PRECOMPILED_JIT_DEFINE(10)
MCUBES_PRECOMPILED_JIT_DEFINE(11)
MCUBES_PRECOMPILED_JIT_DEFINE(12)
MCUBES_PRECOMPILED_JIT_DEFINE(16)

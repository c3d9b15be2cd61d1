#pragma once
/// @file precompiled.hpp
/// The CPU engine compiled once per dimension. The parts of a Vegas run on the CPU backend that do
/// not depend on the integrand's type are templates of the dimension D alone: the one-run loop
/// (detail::vegas_driver), a batch's rounds (detail::batch_driver) and the sampling passes
/// (cpu_backend::sample_cpu_passes, which reach the integrand through cpu_detail::pass_integrand).
/// MCUBES_PRECOMPILED_DIMS lists the dimensions (those of suite::precompiled_dims: 1-12 and 16)
/// for which a program may compile them once, in one unit of its own:
///
///     #define MCUBES_PRECOMPILED_CPU_ENGINE_DEFINITIONS
///     #include <mcubes/precompiled.hpp>
///     MCUBES_PRECOMPILED_DIMS(MCUBES_PRECOMPILED_CPU_ENGINE_DEFINE)
///     MCUBES_PRECOMPILED_CHI2_Q_DEFINE
///
/// and every other unit compiled with MCUBES_PRECOMPILED_CPU_ENGINE defined sees them as explicit
/// instantiation declarations (`extern template`, emitted here at the end of methods.hpp) and
/// compiles only what depends on its integrands. The project's own programs and tests do so through
/// the CMake target mcubes_cpu_engine (src/cpu_engine_*.cpp). Any other dimension is instantiated
/// where it is used, as without this header. It changes no result: the same code, the same bits.
/// Such units also see only the declaration of chi2_q (core/running_average.hpp), which the engine's
/// unit defines once (MCUBES_PRECOMPILED_CHI2_Q_DEFINE, in exactly one unit of the program: a
/// missing one is an undefined reference to mcubes::chi2_q at link time), so that they do not
/// parse Boost.Math (about two seconds of g++'s time per unit; the same function, the same values).
/// Units compiled by nvcc see them too: their CPU runs use the g++-compiled passes (with the SSE2
/// and AVX2 paths that nvcc units leave out; the same bits, backend/cpu/fast_path.hpp).

#include <cstddef>
#include <vector>

#include "algorithm/vegas.hpp"
#include "algorithm/vegas_batch.hpp"
#include "backend/cpu.hpp"
#if defined(MCUBES_PRECOMPILED_CPU_ENGINE_DEFINITIONS)
#include "core/chi2_q.hpp"
#endif

/// X(D) for every dimension D that the precompiled CPU engine holds (suite::precompiled_dims,
/// checked by a static_assert in src/cpu_engine_a.cpp).
#define MCUBES_PRECOMPILED_DIMS(X) X(1) X(2) X(3) X(4) X(5) X(6) X(7) X(8) X(9) X(10) X(11) X(12) X(16)

/// The explicit instantiations of the CPU engine in dimension D, each preceded by `prefix`
/// (`template` or `extern template`).
#define MCUBES_PRECOMPILED_CPU_ENGINE_ITEMS(prefix, D)                                                       \
  prefix struct mcubes::detail::vegas_driver<D, mcubes::cpu_backend, mcubes::adaptive_map<D>>;              \
  prefix struct mcubes::detail::batch_driver<D, mcubes::cpu_backend>;                                       \
  prefix std::vector<mcubes::iteration_sums> mcubes::cpu_backend::sample_cpu_passes<D>(                     \
      const mcubes::cpu_pass<D>*, std::size_t, const mcubes::cpu_detail::pass_integrand<D>*) const;

/// The explicit instantiation definitions of dimension D (for the one unit that makes them).
#define MCUBES_PRECOMPILED_CPU_ENGINE_DEFINE(D) MCUBES_PRECOMPILED_CPU_ENGINE_ITEMS(template, D)
#define MCUBES_PRECOMPILED_CPU_ENGINE_EXTERN(D) MCUBES_PRECOMPILED_CPU_ENGINE_ITEMS(extern template, D)

/// The definition of chi2_q (core/running_average.hpp) for the units that link the engine: written
/// once, in one unit of the program that defines MCUBES_PRECOMPILED_CPU_ENGINE_DEFINITIONS.
#define MCUBES_PRECOMPILED_CHI2_Q_DEFINE \
  double mcubes::chi2_q(double chi2, int dof) { return ::mcubes::detail::chi2_q_boost(chi2, dof); }

#if defined(MCUBES_PRECOMPILED_CPU_ENGINE) && !defined(MCUBES_PRECOMPILED_CPU_ENGINE_DEFINITIONS)
MCUBES_PRECOMPILED_DIMS(MCUBES_PRECOMPILED_CPU_ENGINE_EXTERN)
#endif

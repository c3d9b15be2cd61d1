#pragma once
/// @file jit/object_run.hpp
/// The program's run of a points object (jit/abi.hpp mcubes_jit_method_points: an integrand
/// compiled at run time that holds the integrand only): the program runs the method with its own
/// CPU engine and calls the object for the values, n points at a time. Declarations only; the
/// definitions (jit/object_run_impl.hpp) are compiled once per dimension of the precompiled engine
/// (MCUBES_PRECOMPILED_DIMS) in the program's own unit:
///
///     #include <mcubes/jit/object_run_impl.hpp>
///     MCUBES_PRECOMPILED_DIMS(MCUBES_PRECOMPILED_JIT_DEFINE)
///
/// which the project's programs link as the CMake target mcubes_jit_engine (src/jit_engine_*.cpp,
/// MCUBES_PRECOMPILED_JIT_ENGINE defined for its users). A program without it (a header-only one)
/// compiles objects that run their method themselves (jit/entry.hpp), as for CUDA objects and
/// dimensions outside the list: the same bits either way.
///
/// Why: a points object compiles the user's text and nothing of the engine, about a twentieth of
/// the compiler's time of an object with its own run (the loop, the team, checkpoints, errors).
/// Determinism: run_points_object<D> is the computation of the object's own run_entry (the same
/// one-call method, options and callbacks through the same mcubes_jit_call), with the integrand's
/// values computed by the object: the same bits (tests/jit/test_jit.cpp).

#include <cstdint>

#include "abi.hpp"

namespace mcubes::jit::detail {

/// The entries of a loaded points object.
struct points_api {
  mcubes_jit_points_fn points = nullptr;
  mcubes_jit_index_at_fn index_at = nullptr;
  int n_params = 0;  ///< P of the object
};

/// mcubes_jit_run for a points object of dimension D: the call's method (vegas, plain_mc or
/// midpoint) run by the program's CPU engine, with the checks, callbacks and error fields of an
/// object's own run (jit/entry.hpp run_with). Never throws.
template <int D>
int run_points_object(const points_api& api, mcubes_jit_call* call) noexcept;

/// mcubes_jit_run_batch for a points object of dimension D (jit/entry.hpp run_batch_with). Never throws.
template <int D>
int run_points_object_batch(const points_api& api, mcubes_jit_batch_call* call) noexcept;

}  // namespace mcubes::jit::detail

/// The explicit instantiations of dimension D, each preceded by `prefix`.
#define MCUBES_PRECOMPILED_JIT_ITEMS(prefix, D)                                                                      \
  prefix int mcubes::jit::detail::run_points_object<D>(const mcubes::jit::detail::points_api&, mcubes_jit_call*) noexcept; \
  prefix int mcubes::jit::detail::run_points_object_batch<D>(const mcubes::jit::detail::points_api&,                        \
                                                               mcubes_jit_batch_call*) noexcept;
/// The explicit instantiation definitions of dimension D (jit/object_run_impl.hpp included first).
#define MCUBES_PRECOMPILED_JIT_DEFINE(D) MCUBES_PRECOMPILED_JIT_ITEMS(template, D)

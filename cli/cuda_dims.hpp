#pragma once
/// @file cli/cuda_dims.hpp
/// The dimensions in which the command's CUDA runners are compiled (integrate_cuda_impl.cuh,
/// scan_cuda_impl.cuh). A normal build has every dimension of the CPU runners
/// (suite::precompiled_dims; the CUDA scan d <= scan_cuda_max_dim). A build configured with
/// MCUBES_CUDA_COMPILE_CHECK=ON (scripts/test.sh where no GPU is visible: the CUDA code is compiled
/// to check that it compiles, nothing can run it) has one dimension per integrand,
/// compile_check_dim<Desc>(): the same templates, a few instead of a hundred instantiations. Such a
/// command says so when a run asks for CUDA in another dimension (cli_cuda_dims) and never runs a
/// CUDA integral in a dimension it lacks (choose_backend).

#include <mcubes/suite/registry.hpp>

namespace mcubes::cli {

/// Whether the CUDA runners have one dimension per integrand only (CMake MCUBES_CUDA_COMPILE_CHECK).
inline constexpr bool cuda_compile_check =
#if defined(MCUBES_CUDA_COMPILE_CHECK) && MCUBES_CUDA_COMPILE_CHECK
    true;
#else
    false;
#endif

/// The one dimension of Desc's CUDA runners in a compile-check build: its lowest dimension in
/// suite::precompiled_dims.
template <class Desc>
constexpr int compile_check_dim() {
  for (int d : suite::precompiled_dims)
    if (d >= Desc::min_dim && d <= Desc::max_dim) return d;
  return Desc::min_dim;
}

}  // namespace mcubes::cli

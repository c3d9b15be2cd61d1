#pragma once
/// @file cli/pi_cuda.hpp
/// The host-callable interface of the CUDA part of `mcubes pi` (cli/pi_cuda.cu, compiled into the
/// mcubes binary only when CMake's MCUBES_HAS_CUDA is ON, which then defines
/// MCUBES_HAS_CUDA_BACKEND=1 on the target). Plain C++: pi_command.cpp is compiled by g++.

#include <cstdint>
#include <string>

#include <mcubes/mcubes.hpp>
#include <mcubes/backend/launch_report.hpp>
#include <mcubes/result.hpp>

namespace mcubes::cli::pi_cuda {

/// Whether the binary contains the CUDA backend of `mcubes pi`.
#if defined(MCUBES_HAS_CUDA_BACKEND) && MCUBES_HAS_CUDA_BACKEND
inline constexpr bool compiled = true;
#else
inline constexpr bool compiled = false;
#endif

/// Outcome of looking for a CUDA device.
struct device_probe {
  bool available = false;  ///< a device is present and usable
  std::string description; ///< "NVIDIA H100 80GB HBM3 (132 SMs, compute capability 9.0)" or why none is usable
};

#if defined(MCUBES_HAS_CUDA_BACKEND) && MCUBES_HAS_CUDA_BACKEND
/// Looks for device 0 (never throws).
device_probe probe();

/// Monte Carlo pi on the GPU (pi_monte_carlo_with on a cuda_backend; `report`: its last launch).
/// @throws invalid_input for bad options; cuda_error (an mcubes::error) for CUDA failures.
pi_mc_result monte_carlo(const pi_options& opt, launch_report* report);

/// The midpoint rule for int_0^1 4/(1+x^2) dx with n points on the GPU (midpoint_with on a cuda_backend).
/// @throws invalid_input for bad sizes or block size; cuda_error for CUDA failures.
result midpoint(std::uint64_t n, int threads_per_block, launch_report* report);
#endif

}  // namespace mcubes::cli::pi_cuda

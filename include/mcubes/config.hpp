#pragma once
/// @file config.hpp
/// Build configuration shared by every mcubes header: the host/device qualifier macro and the
/// library version. This header includes no CUDA header, so a CPU-only build needs no CUDA at all.

#if defined(__CUDACC__)
/// Marks a function callable from host and device code when compiled by nvcc; empty otherwise.
#define MCUBES_HOST_DEVICE __host__ __device__
#else
#define MCUBES_HOST_DEVICE
#endif

#if defined(__CUDACC__)
/// Keeps a (rarely called) function out of line, on host and device.
#define MCUBES_NOINLINE __noinline__
#elif defined(__GNUC__) || defined(__clang__)
#define MCUBES_NOINLINE __attribute__((noinline))
#else
#define MCUBES_NOINLINE
#endif

#define MCUBES_VERSION_MAJOR 0
#define MCUBES_VERSION_MINOR 3
#define MCUBES_VERSION_PATCH 0
#define MCUBES_VERSION_STRING "0.3.0"

namespace mcubes {
/// Largest dimension the library is tested for (the template parameter D may go higher; every
/// index is 64-bit, but the sub-cube grid needs g >= 1 intervals per axis, i.e. calls >= 2).
inline constexpr int max_tested_dim = 32;
}  // namespace mcubes

/// Placed before a __host__ __device__ template that calls a user's functor (an integrand, a merge):
/// nvcc checks such calls per execution space and warns when a host-only functor is used from the
/// host instantiation; every instantiation that runs is valid, so the check is disabled there.
#if defined(__CUDACC__)
#define MCUBES_NV_EXEC_CHECK_DISABLE _Pragma("nv_exec_check_disable")
#else
#define MCUBES_NV_EXEC_CHECK_DISABLE
#endif

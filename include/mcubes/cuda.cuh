#pragma once
/// @file cuda.cuh
/// The one CUDA entry point of mcubes: every method of mcubes.hpp with the CUDA backend (the
/// options' backend = cuda, or automatic with a device present; result.backend says which ran),
/// plus the device containers (device_array, pinned_array), the device copy of tables (tables.hpp)
/// and the CUDA backend itself for code that drives it directly. Include it in translation units
/// compiled by nvcc.

#if !defined(__CUDACC__)
#error "mcubes/cuda.cuh needs a translation unit compiled by nvcc (use mcubes/mcubes.hpp for the CPU backend alone)"
#endif

#include "backend/cuda.cuh"
#include "backend/cuda/check.cuh"
#include "backend/cuda/device_array.cuh"
#include "backend/cuda/table_memory.cuh"
#include "mcubes.hpp"

#pragma once
/// @file tests/support/cuda.hpp
/// For the CUDA tests: skip (with a message) when no GPU is present; the bitwise comparisons of
/// bits.hpp and results.hpp.

#include <gtest/gtest.h>

#include <mcubes/backend/cuda/check.cuh>

#include "bits.hpp"
#include "results.hpp"

namespace mcubes_test {
/// True if the CUDA runtime reports at least one device.
inline bool has_device() { return mcubes::cuda_device_count() > 0; }
}  // namespace mcubes_test

/// Skips the test (GTEST_SKIP) when no CUDA device is present.
#define MCUBES_REQUIRE_DEVICE()                                                                            \
  do {                                                                                                     \
    if (!mcubes_test::has_device()) GTEST_SKIP() << "no CUDA device (cudaGetDeviceCount reports none): skipped"; \
  } while (0)

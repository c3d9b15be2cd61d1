#pragma once
// Shared by the CUDA tests: skip (with a message) when no GPU is present, and compare doubles bitwise.
#include <gtest/gtest.h>

#include <mcubes/backend/cuda/check.cuh>

#include <cstdint>
#include <cstring>

namespace mcubes_test {
inline bool has_device() { return mcubes::cuda_device_count() > 0; }
inline std::uint64_t bits(double x) {
  std::uint64_t b;
  std::memcpy(&b, &x, sizeof b);
  return b;
}
}  // namespace mcubes_test

#define MCUBES_REQUIRE_DEVICE()                                                                            \
  do {                                                                                                     \
    if (!mcubes_test::has_device()) GTEST_SKIP() << "no CUDA device (cudaGetDeviceCount reports none): skipped"; \
  } while (0)

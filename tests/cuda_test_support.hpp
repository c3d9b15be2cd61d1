#pragma once
// Shared by the CUDA tests: skip (with a message) when no GPU is present, and compare doubles and
// results bitwise.
#include <gtest/gtest.h>

#include <mcubes/backend/cuda/check.cuh>
#include <mcubes/result.hpp>

#include <cstdint>
#include <cstring>

namespace mcubes_test {
inline bool has_device() { return mcubes::cuda_device_count() > 0; }
inline std::uint64_t bits(double x) {
  std::uint64_t b;
  std::memcpy(&b, &x, sizeof b);
  return b;
}
/// Every number of two results, bit for bit: estimate, error, chi2/dof, evaluations, and each
/// iteration's estimate, error and count of non-zero samples.
inline void expect_bitwise_equal(const mcubes::result& a, const mcubes::result& b) {
  ASSERT_EQ(a.records.size(), b.records.size());
  EXPECT_EQ(bits(a.estimate), bits(b.estimate));
  EXPECT_EQ(bits(a.error), bits(b.error));
  EXPECT_EQ(bits(a.chi2_dof), bits(b.chi2_dof));
  EXPECT_EQ(a.n_eval, b.n_eval);
  for (std::size_t i = 0; i < a.records.size(); ++i) {
    EXPECT_EQ(bits(a.records[i].estimate), bits(b.records[i].estimate)) << "iteration " << i;
    EXPECT_EQ(bits(a.records[i].error), bits(b.records[i].error)) << "iteration " << i;
    EXPECT_EQ(a.records[i].n_nonzero, b.records[i].n_nonzero) << "iteration " << i;
  }
}
}  // namespace mcubes_test

#define MCUBES_REQUIRE_DEVICE()                                                                            \
  do {                                                                                                     \
    if (!mcubes_test::has_device()) GTEST_SKIP() << "no CUDA device (cudaGetDeviceCount reports none): skipped"; \
  } while (0)

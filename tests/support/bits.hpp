#pragma once
/// @file tests/support/bits.hpp
/// Bitwise equality of doubles and of merged moments, for the tests that check "the same bits"
/// (reproducibility across thread counts, block sizes, backends and call forms).

#include <cstdint>
#include <cstring>

#include <mcubes/core/tree_reduce.hpp>

namespace mcubes_test {

/// The 64 bits of x (EXPECT_EQ(bits(a), bits(b)) prints both on a mismatch).
inline std::uint64_t bits(double x) {
  std::uint64_t b;
  std::memcpy(&b, &x, sizeof b);
  return b;
}

/// True if a and b have the same bits: 0.0 and -0.0 differ, a NaN equals only a NaN of the same bits.
inline bool same_bits(double a, double b) { return bits(a) == bits(b); }

/// True if the counts are equal and the means and M2 have the same bits.
inline bool same_bits(const mcubes::moments& a, const mcubes::moments& b) {
  return a.n == b.n && same_bits(a.mean, b.mean) && same_bits(a.m2, b.m2);
}

}  // namespace mcubes_test

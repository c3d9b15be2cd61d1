#pragma once
/// @file core/tree_reduce.hpp
/// The two partial-sum types that plain Monte Carlo and the midpoint rule reduce over the fixed
/// pairwise tree (core/fixed_tree.hpp, fixed_tree_reduce):
///
///  - moments: (n, mean, M2) of a set of values, merged with the pairwise update of Chan, Golub
///    and LeVeque (1979): for A and B, delta = mean_B - mean_A,
///      mean = mean_A + delta n_B / n,   M2 = M2_A + M2_B + delta^2 n_A n_B / n,
///    which never forms the cancelling difference sum(f^2) - n mean^2 of the one-pass formula;
///  - dd_sum: an unevaluated sum hi + lo of two doubles (|lo| <= ulp(hi)/2), merged with the
///    error-free transformation TwoSum (Knuth; Ogita, Rump and Oishi 2005), so a tree of 2^20
///    chunk sums adds about one rounding in total instead of one per level.
///
/// Determinism contract: the tree is that of fixed_tree.hpp; a backend may merge aligned groups of
/// any power-of-two size and finish over the group results with the same bits.
/// This needs merge(x, identity) == x exactly and the same bits for a merge on host and device:
/// both merges below test for the identity explicitly, and use only +, - and / (dd_sum) or the
/// non-contractible products of portable::det_mul (moments), so that nvcc's FMA contraction cannot
/// make a node computed on the device differ from the same node computed on the host. (Host code
/// must not be compiled with FP contraction across statements: the default of GCC and Clang in
/// ISO C++ mode, e.g. -std=c++17.)

#include <cmath>
#include <cstdint>

#include "../config.hpp"
#include "fixed_tree.hpp"

namespace mcubes {


/// Count, mean and sum of squared deviations M2 = sum (f - mean)^2 of a set of values.
/// The identity (empty set) is n = 0.
struct moments {
  std::uint64_t n = 0;  ///< number of values
  double mean = 0;      ///< their mean
  double m2 = 0;        ///< sum of squared deviations from the mean (>= 0)

  /// Moments of n values given by their shifted sums s1 = sum (f - shift), s2 = sum (f - shift)^2
  /// (the shift, e.g. the first value, keeps s2 - s1^2/n free of cancellation when the values
  /// cluster near it). M2 is clamped at 0 against rounding.
  MCUBES_HOST_DEVICE static moments from_shifted_sums(std::uint64_t n, double shift, double s1, double s2) {
    moments m;
    if (n == 0) return m;
    const double dn = static_cast<double>(n);
    m.n = n;
    m.mean = shift + s1 / dn;
    const double m2 = s2 - s1 * (s1 / dn);
    m.m2 = m2 > 0 ? m2 : 0.0;
    return m;
  }
};

/// Merges the moments of two disjoint sets (Chan, Golub and LeVeque 1979, eq. 2.1b). Exact
/// identity for an empty side; same bits on host and device.
MCUBES_HOST_DEVICE inline moments merge(const moments& a, const moments& b) {
  if (b.n == 0) return a;
  if (a.n == 0) return b;
  moments r;
  r.n = a.n + b.n;
  const double na = static_cast<double>(a.n), nb = static_cast<double>(b.n), n = static_cast<double>(r.n);
  const double delta = b.mean - a.mean;
  r.mean = portable::det_add(a.mean, portable::det_mul(delta, nb / n));
  r.m2 = portable::det_add(portable::det_add(a.m2, b.m2), portable::det_mul(portable::det_mul(delta, delta), portable::det_mul(na, nb) / n));
  return r;
}

/// An unevaluated sum hi + lo of two doubles with |lo| <= ulp(hi)/2 (a "double-double"). The
/// identity is {0, 0}.
struct dd_sum {
  double hi = 0;
  double lo = 0;
  MCUBES_HOST_DEVICE double value() const { return hi + lo; }
};

/// TwoSum: s + e == a + b exactly, s = fl(a + b) (Knuth). Six additions, no branch.
MCUBES_HOST_DEVICE inline dd_sum two_sum(double a, double b) {
  const double s = a + b;
  const double bb = s - a;
  const double e = (a - (s - bb)) + (b - bb);
  return {s, e};
}

/// Sum of two double-doubles ("sloppy" addition: relative error O(eps^2) for same-sign inputs,
/// which is what sums of chunk partials are in practice). Exact identity for a zero side; same
/// bits on host and device (additions only).
MCUBES_HOST_DEVICE inline dd_sum merge(const dd_sum& a, const dd_sum& b) {
  if (b.hi == 0 && b.lo == 0) return a;
  if (a.hi == 0 && a.lo == 0) return b;
  const dd_sum s = two_sum(a.hi, b.hi);
  const double e = s.lo + (a.lo + b.lo);
  return two_sum(s.hi, e);
}

/// Neumaier's compensated summation (Neumaier 1974; "improved Kahan-Babuska"): the running sum
/// s and the running correction c, which collects the rounding error of every addition, also
/// when the addend is larger than the sum. The total is s + c, returned normalised as a dd_sum.
struct compensated_sum {
  double s = 0;
  double c = 0;
  MCUBES_HOST_DEVICE void add(double y) {
    const double t = s + y;
    c += (std::fabs(s) >= std::fabs(y)) ? ((s - t) + y) : ((y - t) + s);
    s = t;
  }
  MCUBES_HOST_DEVICE dd_sum result() const { return two_sum(s, c); }
};

}  // namespace mcubes

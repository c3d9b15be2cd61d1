#pragma once
/// @file point.hpp
/// mcubes::point<D>: the argument of every integrand, a trivially copyable array of D doubles
/// usable on host and device.

#include "config.hpp"

namespace mcubes {

/// A point x in the D-dimensional integration region, as passed to integrands:
/// `double operator()(const mcubes::point<D>& x) const`.
template <int D>
struct point {
  static_assert(D >= 1, "dimension must be at least 1");
  double x[D];
  MCUBES_HOST_DEVICE double& operator[](int i) { return x[i]; }
  MCUBES_HOST_DEVICE const double& operator[](int i) const { return x[i]; }
  MCUBES_HOST_DEVICE static constexpr int size() { return D; }
  MCUBES_HOST_DEVICE const double* data() const { return x; }
};

}  // namespace mcubes

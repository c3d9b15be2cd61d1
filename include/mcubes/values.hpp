#pragma once
/// @file values.hpp
/// mcubes::values<N>: what a vector-valued integrand returns (N components, 1 <= N <= 64), e.g.
///   struct moments { mcubes::values<3> operator()(const mcubes::point<2>& x) const {
///     const double w = exp(-x[0] * x[1]); return {{w, w * x[0], w * x[0] * x[0]}}; } };
/// All components are integrated from the same samples (vegas_vector, algorithm/vegas_vector.hpp).

#include "config.hpp"

namespace mcubes {

/// Largest number of components of a vector-valued integrand.
inline constexpr int max_components = 64;

/// N doubles, the components of a vector-valued integrand's value. Trivially copyable; an
/// aggregate: values<3>{{a, b, c}}.
template <int N>
struct values {
  static_assert(N >= 1 && N <= max_components, "mcubes::values<N>: N must be in [1, 64]");
  double v[N];
  MCUBES_HOST_DEVICE double& operator[](int i) { return v[i]; }
  MCUBES_HOST_DEVICE const double& operator[](int i) const { return v[i]; }
  static constexpr int size() { return N; }
};

}  // namespace mcubes

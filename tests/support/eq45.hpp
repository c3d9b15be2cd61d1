#pragma once
/// @file tests/support/eq45.hpp
/// Lepage's Eq. (45) (G. P. Lepage, J. Comput. Phys. 439 (2021) 110386, arXiv:2009.05112; vegas's
/// tutorial): three Gaussians exp(-100 |x - r_j|^2) centred on the diagonal of [0,1]^8 at r = 0.23,
/// 0.39, 0.74, each scaled by (100/pi)^4 / 3. The peaks sit off the product grid of the map's axes,
/// so a map alone (the uniform stratification) puts its samples in 3^8 boxes and misses one peak at
/// small budgets. Host and device code.

#include <cmath>

#include <mcubes/config.hpp>
#include <mcubes/point.hpp>

namespace mcubes_test {

/// Eq. (45) at x[0..8).
MCUBES_HOST_DEVICE inline double eq45_value(const double* x) {
  const double r[3] = {0.23, 0.39, 0.74};
  double s = 0;
  for (int j = 0; j < 3; ++j) {
    double d2 = 0;
    for (int i = 0; i < 8; ++i) d2 += (x[i] - r[j]) * (x[i] - r[j]);
    s += exp(-100 * d2);
  }
  return s * (100 / M_PI) * (100 / M_PI) * (100 / M_PI) * (100 / M_PI) / 3;
}

/// Eq. (45) as a functor of mcubes::point<8>.
struct lepage_eq45 {
  MCUBES_HOST_DEVICE double operator()(const mcubes::point<8>& x) const { return eq45_value(x.x); }
};

/// Its integral over [0,1]^8: (1/3) sum_j prod_axes (erf(10 (1 - r_j)) + erf(10 r_j)) / 2 (0.99816...,
/// not 1: the Gaussians of r = 0.23 and 0.74 are cut by the faces).
inline double exact_eq45() {
  double v = 0;
  for (const double r : {0.23, 0.39, 0.74}) v += std::pow((std::erf(10 * (1 - r)) + std::erf(10 * r)) / 2, 8);
  return v / 3;
}

}  // namespace mcubes_test

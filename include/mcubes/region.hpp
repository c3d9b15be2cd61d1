#pragma once
/// @file region.hpp
/// The integration region: a box [a_1,b_1] x ... x [a_D,b_D] with finite a_i < b_i.

#include <array>
#include <vector>
#include <cmath>

#include "error.hpp"

namespace mcubes {

/// A validated box region. The integral over the box is computed through the affine map
/// x_i = a_i + (b_i - a_i) u_i from the unit hypercube; volume() = prod (b_i - a_i).
/// @throws invalid_input if any bound is not finite, if a_i >= b_i, or if the volume is not a
///         finite positive double (overflow or underflow of the product).
template <int D>
class region {
 public:
  /// The dimension D.
  static constexpr int dim = D;
  region(const std::array<double, D>& lower, const std::array<double, D>& upper) : lower_(lower), upper_(upper) {
    volume_ = 1.0;
    for (int i = 0; i < D; ++i) {
      MCUBES_EXPECTS(std::isfinite(lower[i]) && std::isfinite(upper[i]), "region: bound of axis ", i,
                     " is not finite (lower = ", lower[i], ", upper = ", upper[i], ")");
      MCUBES_EXPECTS(lower[i] < upper[i], "region: lower bound must be below upper bound on axis ", i,
                     " (lower = ", lower[i], ", upper = ", upper[i], ")");
      const double w = upper[i] - lower[i];
      MCUBES_EXPECTS(std::isfinite(w), "region: width of axis ", i, " overflows");
      volume_ *= w;
    }
    MCUBES_EXPECTS(std::isfinite(volume_) && volume_ > 0, "region: volume ", volume_, " is not a finite positive number");
  }

  /// The unit hypercube [0,1]^D.
  static region unit() {
    std::array<double, D> lo{}, hi{};
    for (int i = 0; i < D; ++i) hi[i] = 1.0;
    return region(lo, hi);
  }
  /// The cube [a,b]^D.
  static region cube(double a, double b) {
    std::array<double, D> lo{}, hi{};
    for (int i = 0; i < D; ++i) lo[i] = a, hi[i] = b;
    return region(lo, hi);
  }

  const std::array<double, D>& lower() const noexcept { return lower_; }
  const std::array<double, D>& upper() const noexcept { return upper_; }
  double width(int i) const noexcept { return upper_[i] - lower_[i]; }
  double volume() const noexcept { return volume_; }

 private:
  std::array<double, D> lower_, upper_;
  double volume_;
};

/// The lower (`lower` true) or upper bounds of `r` as a vector of D numbers (checkpoints keep them so).
template <int D>
std::vector<double> bounds_of(const region<D>& r, bool lower) {
  const std::array<double, D>& b = lower ? r.lower() : r.upper();
  return std::vector<double>(b.begin(), b.end());
}

}  // namespace mcubes

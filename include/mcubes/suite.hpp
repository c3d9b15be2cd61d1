#pragma once
/// @file suite.hpp
/// The m-Cubes test suite (Sakiotis et al. 2022, eqs. 1-8): the six Genz-type integrands f1..f6 over the
/// unit hypercube, fA = sin(sum x_i) over (0,10)^6 and the narrow Gaussian fB over (-1,1)^9, their
/// exact integrals in closed form, and the paper's run settings (the reference m-Cubes code, table 1).
/// Shared by the tests, the benchmarks and the `mcubes` command.
///
/// The integrands are empty, trivially copyable functors whose call operators are usable on host
/// and device (MCUBES_HOST_DEVICE); they call only the C math functions exp, cos, sin, fabs, which
/// nvcc maps to device functions. Coordinates are 0-based in code: axis j carries the paper's
/// index i = j + 1. Everything else in this header (exact values, the table) is host code.

#include <cmath>
#include <complex>
#include <cstdint>
#include <string>
#include <vector>

#include "config.hpp"
#include "error.hpp"
#include "point.hpp"

namespace mcubes::suite {

namespace detail {
/// base^n for n >= 0 by repeated multiplication; constexpr so that normalisations are folded at
/// compile time.
MCUBES_HOST_DEVICE constexpr double ipow(double base, int n) {
  double r = 1.0;
  for (int i = 0; i < n; ++i) r *= base;
  return r;
}
}  // namespace detail

/// f1, eq. (1): oscillatory, f(x) = cos(sum_{i=1}^d i x_i) over [0,1]^d.
struct f1_oscillatory {
  template <int D>
  MCUBES_HOST_DEVICE double operator()(const point<D>& x) const {
    double s = 0;
    for (int j = 0; j < D; ++j) s += (j + 1) * x[j];
    return cos(s);
  }
};

/// f2, eq. (2): product peak, f(x) = prod_{i=1}^d (1/50^2 + (x_i - 1/2)^2)^-1 over [0,1]^d
/// (a Lorentzian of half-width 1/50 at the centre of every axis; peak value 2500^d).
struct f2_product_peak {
  static constexpr double a2 = 1.0 / (50.0 * 50.0);  ///< 1/50^2
  template <int D>
  MCUBES_HOST_DEVICE double operator()(const point<D>& x) const {
    double p = 1;
    for (int j = 0; j < D; ++j) {
      const double u = x[j] - 0.5;
      p *= 1.0 / (a2 + u * u);
    }
    return p;
  }
};

/// f3, eq. (3): corner peak, f(x) = (1 + sum_{i=1}^d i x_i)^(-d-1) over [0,1]^d (peak 1 at the
/// origin).
struct f3_corner_peak {
  template <int D>
  MCUBES_HOST_DEVICE double operator()(const point<D>& x) const {
    double s = 1;
    for (int j = 0; j < D; ++j) s += (j + 1) * x[j];
    const double inv = 1.0 / s;
    double r = inv;  // inv^(D+1) by multiplication: exact integer power, no pow() needed
    for (int j = 0; j < D; ++j) r *= inv;
    return r;
  }
};

/// f4, eq. (4): Gaussian, f(x) = exp(-625 sum_{i=1}^d (x_i - 1/2)^2) over [0,1]^d
/// (standard deviation 1/sqrt(1250) ~ 0.028 per axis).
struct f4_gaussian {
  template <int D>
  MCUBES_HOST_DEVICE double operator()(const point<D>& x) const {
    double s = 0;
    for (int j = 0; j < D; ++j) {
      const double u = x[j] - 0.5;
      s += u * u;
    }
    return exp(-625.0 * s);
  }
};

/// f5, eq. (5): C0 function, f(x) = exp(-10 sum_{i=1}^d |x_i - 1/2|) over [0,1]^d (a kink at the
/// centre of every axis).
struct f5_c0 {
  template <int D>
  MCUBES_HOST_DEVICE double operator()(const point<D>& x) const {
    double s = 0;
    for (int j = 0; j < D; ++j) s += fabs(x[j] - 0.5);
    return exp(-10.0 * s);
  }
};

/// f6, eq. (6): discontinuous, f(x) = exp(sum_{i=1}^d (i+4) x_i) if x_i < (3+i)/10 for every i,
/// else 0, over [0,1]^d. For i >= 7 the threshold (3+i)/10 >= 1 never cuts the unit interval.
struct f6_discontinuous {
  template <int D>
  MCUBES_HOST_DEVICE double operator()(const point<D>& x) const {
    double s = 0;
    for (int j = 0; j < D; ++j) {
      const int i = j + 1;
      if (!(x[j] < (3 + i) / 10.0)) return 0.0;
      s += (i + 4) * x[j];
    }
    return exp(s);
  }
};

/// fA, eq. (7): f(x) = sin(sum_i x_i), used with D = 6 over (0,10)^6 (the ZMCintegral comparison
/// of the paper, table 1). Defined for any D; only D = 6 has a tabulated exact value here.
struct fA_sin_sum {
  template <int D>
  MCUBES_HOST_DEVICE double operator()(const point<D>& x) const {
    double s = 0;
    for (int j = 0; j < D; ++j) s += x[j];
    return sin(s);
  }
};

/// fB, eq. (8): narrow Gaussian, used with D = 9 over (-1,1)^9: the normalised D-dimensional
/// Gaussian of standard deviation sigma = 0.01 centred at the origin,
///   f(x) = (2 pi sigma^2)^(-D/2) exp(-sum_i x_i^2 / (2 sigma^2)),
/// whose integral over R^D is 1 (over (-1,1)^9: erf(1/(sigma sqrt 2))^9 = 1 to double precision).
///
/// Typesetting issue in the paper: eq. (8) prints the normalisation as 1/(sqrt(2 pi .01))^9,
/// i.e. sigma^2 = 0.01 in the prefactor but sigma^2 = 0.01^2 in the exponent. Taken literally its
/// integral would be (0.01)^(9/2) = 1e-9, while the paper's table 1 quotes the true value 1.0
/// (and the reference m-Cubes code: "fB's normalisation makes its integral 1"). We use the consistent
/// normalisation (2 pi sigma^2)^(-9/2) ~ 2.6e14, which gives the quoted value.
struct fB_narrow_gaussian {
  static constexpr double sigma = 0.01;                        ///< standard deviation per axis
  static constexpr double inv_sqrt_2pi = 0.39894228040143267794;  ///< 1/sqrt(2 pi)
  static constexpr double inv_two_sigma2 = 1.0 / (2.0 * sigma * sigma);  ///< 1/(2 sigma^2) = 5000
  /// (2 pi sigma^2)^(-D/2) = (1/(sigma sqrt(2 pi)))^D, folded at compile time.
  template <int D>
  static constexpr double normalisation = detail::ipow(inv_sqrt_2pi / sigma, D);

  template <int D>
  MCUBES_HOST_DEVICE double operator()(const point<D>& x) const {
    double s = 0;
    for (int j = 0; j < D; ++j) s += x[j] * x[j];
    return normalisation<D> * exp(-inv_two_sigma2 * s);
  }
};

/// Largest dimension for which the any-dimension exact values below are claimed (and tested):
/// mcubes::max_tested_dim. All closed forms stay finite and well conditioned up to it (f6's value
/// is 3.4e238 at d = 32; its integrand would overflow beyond d = 33).
inline constexpr int max_suite_dim = max_tested_dim;

namespace detail {
inline void check_dim(const char* name, int d) {
  MCUBES_EXPECTS(d >= 1 && d <= max_suite_dim, "suite: exact value of ", name, " is available for dimensions 1..",
                 max_suite_dim, ", got ", d);
}
}  // namespace detail

/// Exact integral of f1 over [0,1]^d. Since cos(sum k x_k) = Re exp(i sum k x_k) and the
/// exponential factorises, I = Re prod_{k=1}^d int_0^1 e^{ikx} dx = Re prod_{k=1}^d (e^{ik}-1)/(ik)
/// with (e^{ik}-1)/(ik) = sin(k)/k + i (1 - cos k)/k. Computed in long double complex.
/// @throws invalid_input unless 1 <= d <= max_suite_dim.
inline double exact_f1(int d) {
  detail::check_dim("f1", d);
  std::complex<long double> p(1.0L, 0.0L);
  for (int k = 1; k <= d; ++k) {
    const long double kk = k;
    p *= std::complex<long double>(std::sin(kk) / kk, (1.0L - std::cos(kk)) / kk);
  }
  return static_cast<double>(p.real());
}

/// Exact integral of f2 over [0,1]^d. Per axis, with a = 1/50 and u = x - 1/2,
/// int_{-1/2}^{1/2} du / (a^2 + u^2) = (2/a) atan(1/(2a)) = 100 atan(25); so I = (100 atan 25)^d.
/// @throws invalid_input unless 1 <= d <= max_suite_dim.
inline double exact_f2(int d) {
  detail::check_dim("f2", d);
  return static_cast<double>(std::pow(100.0L * std::atan(25.0L), static_cast<long double>(d)));
}

/// Exact integral of f3 over [0,1]^d, with a_i = i. Integrating one axis at a time,
/// int_0^1 (c + a x)^(-n-1) dx = (c^-n - (c+a)^-n) / (n a), gives by induction (inclusion-exclusion)
///   I = 1/(d! prod_i a_i) sum_{S subset {1..d}} (-1)^|S| / (1 + sum_{i in S} a_i),
/// and with a_i = i, prod_i a_i = d!. Subsets are grouped by their sum s: the signed count
/// c_s = sum_{S: sum S = s} (-1)^|S| is the coefficient of t^s in prod_{i=1}^d (1 - t^i), computed
/// exactly in 64-bit integers (|c_s| <= 2^d), so I = (d!)^-2 sum_s c_s / (1 + s) (which also equals
/// (d!)^-2 int_0^1 prod_i (1 - t^i) dt). The signed sum is evaluated in long double; its
/// cancellation factor sum_s |c_s|/(1+s) / |sum_s c_s/(1+s)| is at most 66 for d <= 32, so the
/// result keeps about 17 significant digits, more than double precision.
/// @throws invalid_input unless 1 <= d <= max_suite_dim.
inline double exact_f3(int d) {
  detail::check_dim("f3", d);
  const int degree = d * (d + 1) / 2;
  std::vector<std::int64_t> c(static_cast<std::size_t>(degree) + 1, 0);
  c[0] = 1;
  int deg = 0;
  for (int i = 1; i <= d; ++i) {  // multiply by (1 - t^i), from the top so that c is updated in place
    for (int s = deg; s >= 0; --s) c[static_cast<std::size_t>(s + i)] -= c[static_cast<std::size_t>(s)];
    deg += i;
  }
  long double sum = 0;
  for (int s = 0; s <= degree; ++s) sum += static_cast<long double>(c[static_cast<std::size_t>(s)]) / (1.0L + s);
  long double factorial = 1;
  for (int i = 2; i <= d; ++i) factorial *= i;
  return static_cast<double>(sum / (factorial * factorial));
}

/// Exact integral of f4 over [0,1]^d. Per axis,
/// int_0^1 exp(-625 (x-1/2)^2) dx = int_{-1/2}^{1/2} e^{-(25u)^2} du = (sqrt(pi)/25) erf(25/2);
/// so I = ((sqrt(pi)/25) erf(12.5))^d (erf(12.5) = 1 - 1e-70).
/// @throws invalid_input unless 1 <= d <= max_suite_dim.
inline double exact_f4(int d) {
  detail::check_dim("f4", d);
  const long double pi = 3.141592653589793238462643383279502884L;
  return static_cast<double>(std::pow(std::sqrt(pi) / 25.0L * std::erf(12.5L), static_cast<long double>(d)));
}

/// Exact integral of f5 over [0,1]^d. Per axis,
/// int_0^1 exp(-10 |x - 1/2|) dx = 2 int_0^{1/2} e^{-10u} du = (1 - e^{-5})/5; so I = ((1-e^-5)/5)^d.
/// @throws invalid_input unless 1 <= d <= max_suite_dim.
inline double exact_f5(int d) {
  detail::check_dim("f5", d);
  return static_cast<double>(std::pow(-std::expm1(-5.0L) / 5.0L, static_cast<long double>(d)));
}

/// Exact integral of f6 over [0,1]^d. The integrand is a product of one-axis factors
/// exp((i+4) x_i) 1[x_i < b_i] with b_i = min(1, (3+i)/10), so
///   I = prod_{i=1}^d int_0^{b_i} e^{(i+4)x} dx = prod_{i=1}^d (exp((i+4) b_i) - 1)/(i+4).
/// (For i <= 6, b_i = (3+i)/10; for i >= 7 the threshold lies beyond the unit interval: b_i = 1.)
/// @throws invalid_input unless 1 <= d <= max_suite_dim.
inline double exact_f6(int d) {
  detail::check_dim("f6", d);
  long double p = 1;
  for (int i = 1; i <= d; ++i) {
    const long double b = i >= 7 ? 1.0L : (3 + i) / 10.0L;
    p *= std::expm1((i + 4) * b) / (i + 4);
  }
  return static_cast<double>(p);
}

/// Exact integral of fA = sin(x_1 + ... + x_6) over (0,10)^6. With z = int_0^10 e^{ix} dx =
/// (e^{10i} - 1)/i = sin 10 + i (1 - cos 10), sin(sum x) = Im exp(i sum x) factorises:
/// I = Im z^6 = -49.165073816... (the paper's table 1 quotes -49.165073).
inline double exact_fA() {
  const std::complex<long double> z(std::sin(10.0L), 1.0L - std::cos(10.0L));
  return static_cast<double>((z * z * z * z * z * z).imag());
}

/// Exact integral of fB (normalised, see fB_narrow_gaussian) over (-1,1)^9:
/// prod_{i=1}^9 int_{-1}^{1} N(x; 0, sigma^2) dx = erf(1/(sigma sqrt 2))^9 = erf(70.7...)^9, which is
/// 1 to double precision (1 - erf(70.7) ~ 1e-2173).
inline double exact_fB() {
  const long double sigma = fB_narrow_gaussian::sigma;
  return static_cast<double>(std::pow(std::erf(1.0L / (sigma * std::sqrt(2.0L))), 9.0L));
}

}  // namespace mcubes::suite

#include "suite/registry.hpp"  // the compile-time registry and the run-time table made from it

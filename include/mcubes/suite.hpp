#pragma once
/// @file suite.hpp
/// The m-Cubes test suite (Sakiotis et al. 2022, eqs. 1-8): the six Genz-type integrands f1..f6 over the
/// unit hypercube, fA = sin(sum x_i) over (0,10)^6 and the narrow Gaussian fB over (-1,1)^9, their
/// exact integrals in closed form, and the paper's run settings (the reference m-Cubes code, table 1).
/// Shared by the tests, the benchmarks and the `mcubes` command.
///
/// The integrands are trivially copyable functors whose call operators are usable on host and device
/// (MCUBES_HOST_DEVICE); they call only the C math functions exp, cos, sin, fabs, which nvcc maps to
/// device functions. Coordinates are 0-based in code: axis j carries the paper's index i = j + 1.
/// Everything else in this header (validation, exact values, the table) is host code.
///
/// Parameters (Genz 1984, "Testing multidimensional integration routines", the source of eqs. 1-6):
/// f1..f6 take Genz's difficulty a and shift u, the same on every axis, in a trivially copyable
/// struct fN_params whose default values are the paper's (f3, the corner peak, has no shift):
///
///   f1  cos(2 pi u + a sum i x_i)                        a = 1,  u = 0
///   f2  prod (a^-2 + (x_i - u)^2)^-1                     a = 50, u = 1/2
///   f3  (1 + a sum i x_i)^(-d-1)                         a = 1
///   f4  exp(-a^2 sum (x_i - u)^2)                        a = 25, u = 1/2
///   f5  exp(-a sum |x_i - u|)                            a = 10, u = 1/2
///   f6  exp(a sum (i+4) x_i) if every x_i < u + (i-1)/10, else 0      a = 1, u = 0.4
///
/// Where the paper's coefficients differ per axis (i in f1 and f3, i + 4 in f6) a multiplies them;
/// where they are the same on every axis (f2, f4, f5) a is Genz's coefficient itself. f6's thresholds
/// (3+i)/10 become u + (i-1)/10: u shifts them all. Each functor holds its parameters (member
/// `params`, default-constructed: the paper's) and offers two calls: f(x) at its own parameters, and
/// f(x, p) at the parameters p (the form a parameter batch calls, core/batch.hpp). At the default
/// parameters every functor performs the paper-form operations in the same order, so its values are
/// bitwise those of the paper's integrands (tests/suite/test_suite_params.cpp checks it).
/// validate_params(d, p) checks parameters; exact_fN(d, p) gives the exact value as a function of
/// (a, u, d).

#include <algorithm>
#include <cmath>
#include <complex>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <limits>
#include <string>
#include <type_traits>
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

/// Parameters of f1 (Genz's oscillatory family), f(x) = cos(2 pi u + a sum_{i=1}^d i x_i). The
/// paper's f1 is a = 1, u = 0 (the defaults).
struct f1_params {
  double a = 1.0;  ///< difficulty: multiplies the paper's frequency i of axis i (a > 0)
  double u = 0.0;  ///< shift: the phase is 2 pi u (0 <= u <= 1)
};

/// f1, eq. (1): oscillatory, f(x) = cos(2 pi u + sum_{i=1}^d a i x_i) over [0,1]^d; the paper's
/// cos(sum_{i=1}^d i x_i) at the default parameters (a = 1, u = 0).
///
/// Arithmetic: the paper form's sum s = sum i x_i (i = 1..d in order), then cos(2pi u + a s) with
/// 2pi rounded to double: one multiplication by a per call, and for a = 1, u = 0 bitwise the paper
/// form (1 s = s and 0 + s = s exactly).
struct f1_oscillatory {
  using params_type = f1_params;
  static constexpr double two_pi = 6.283185307179586;  ///< 2 pi rounded to double
  f1_params params;  ///< the parameters of f(x); default: the paper's
  /// f(x) at the parameters p (the form a parameter batch calls; `params` is not used).
  template <int D>
  MCUBES_HOST_DEVICE double operator()(const point<D>& x, const f1_params& p) const {
    double s = 0;
    for (int j = 0; j < D; ++j) s += (j + 1) * x[j];
    return cos(two_pi * p.u + p.a * s);
  }
  /// f(x) at the functor's own parameters.
  template <int D>
  MCUBES_HOST_DEVICE double operator()(const point<D>& x) const {
    return (*this)(x, params);
  }
};

/// Parameters of f2 (Genz's product-peak family), f(x) = prod_i (a^-2 + (x_i - u)^2)^-1. The
/// paper's f2 is a = 50, u = 1/2 (the defaults).
struct f2_params {
  double a = 50.0;  ///< difficulty: the peak's inverse half-width (a > 0); peak value a^(2d)
  double u = 0.5;   ///< shift: the peak's position on every axis (0 <= u <= 1)
};

/// f2, eq. (2): product peak, f(x) = prod_{i=1}^d (a^-2 + (x_i - u)^2)^-1 over [0,1]^d (a Lorentzian
/// of half-width 1/a at u on every axis; peak value a^(2d)); the paper's
/// prod (1/50^2 + (x_i - 1/2)^2)^-1 at the default parameters (a = 50, u = 1/2).
///
/// Arithmetic: c = 1/(a a), then p *= 1/(c + t t) with t = x_i - u for i = 1..d in order; for
/// a = 50, c is the paper form's constant 1/50^2 bit for bit.
struct f2_product_peak {
  using params_type = f2_params;
  f2_params params;  ///< the parameters of f(x); default: the paper's
  /// f(x) at the parameters p (the form a parameter batch calls; `params` is not used).
  template <int D>
  MCUBES_HOST_DEVICE double operator()(const point<D>& x, const f2_params& p) const {
    const double c = 1.0 / (p.a * p.a);
    double prod = 1;
    for (int j = 0; j < D; ++j) {
      const double t = x[j] - p.u;
      prod *= 1.0 / (c + t * t);
    }
    return prod;
  }
  /// f(x) at the functor's own parameters.
  template <int D>
  MCUBES_HOST_DEVICE double operator()(const point<D>& x) const {
    return (*this)(x, params);
  }
};

/// Parameters of f3 (Genz's corner-peak family), f(x) = (1 + a sum_i i x_i)^(-d-1). The family has
/// no shift: its peak is the corner x = 0. The paper's f3 is a = 1 (the default).
struct f3_params {
  double a = 1.0;  ///< difficulty: multiplies the paper's coefficient i of axis i (a > 0)
};

/// f3, eq. (3): corner peak, f(x) = (1 + sum_{i=1}^d a i x_i)^(-d-1) over [0,1]^d (peak 1 at the
/// origin); the paper's (1 + sum i x_i)^(-d-1) at the default a = 1.
///
/// Arithmetic: s = 1, s += (a i) x_i for i = 1..d in order, then (1/s)^(d+1) by d multiplications;
/// for a = 1 bitwise the paper-form operations.
struct f3_corner_peak {
  using params_type = f3_params;
  f3_params params;  ///< the parameters of f(x); default: the paper's
  /// f(x) at the parameters p (the form a parameter batch calls; `params` is not used).
  template <int D>
  MCUBES_HOST_DEVICE double operator()(const point<D>& x, const f3_params& p) const {
    double s = 1;
    for (int j = 0; j < D; ++j) s += (p.a * (j + 1)) * x[j];
    const double inv = 1.0 / s;
    double r = inv;  // inv^(D+1) by multiplication: exact integer power, no pow() needed
    for (int j = 0; j < D; ++j) r *= inv;
    return r;
  }
  /// f(x) at the functor's own parameters.
  template <int D>
  MCUBES_HOST_DEVICE double operator()(const point<D>& x) const {
    return (*this)(x, params);
  }
};

/// Parameters of f4 (Genz's Gaussian family), f(x) = exp(-a^2 sum_i (x_i - u)^2). The paper's f4
/// is a = 25, u = 1/2 (the defaults).
struct f4_params {
  double a = 25.0;  ///< difficulty: the inverse width (a > 0); standard deviation 1/(a sqrt 2) per axis
  double u = 0.5;   ///< shift: the centre on every axis (0 <= u <= 1)
};

/// f4, eq. (4): Gaussian, f(x) = exp(-a^2 sum_{i=1}^d (x_i - u)^2) over [0,1]^d; the paper's
/// exp(-625 sum (x_i - 1/2)^2) at the default parameters (a = 25, u = 1/2; standard deviation
/// 1/sqrt(1250) ~ 0.028 per axis).
///
/// Arithmetic: s = sum of t t with t = x_i - u in order, then exp((-(a a)) s); for a = 25,
/// -(a a) is the paper form's constant -625 exactly.
struct f4_gaussian {
  using params_type = f4_params;
  f4_params params;  ///< the parameters of f(x); default: the paper's
  /// f(x) at the parameters p (the form a parameter batch calls; `params` is not used).
  template <int D>
  MCUBES_HOST_DEVICE double operator()(const point<D>& x, const f4_params& p) const {
    double s = 0;
    for (int j = 0; j < D; ++j) {
      const double t = x[j] - p.u;
      s += t * t;
    }
    return exp(-(p.a * p.a) * s);
  }
  /// f(x) at the functor's own parameters.
  template <int D>
  MCUBES_HOST_DEVICE double operator()(const point<D>& x) const {
    return (*this)(x, params);
  }
};

/// Parameters of f5 (Genz's C0 family), f(x) = exp(-a sum_i |x_i - u|). The paper's f5 is a = 10,
/// u = 1/2 (the defaults).
struct f5_params {
  double a = 10.0;  ///< difficulty: the decay rate (a > 0)
  double u = 0.5;   ///< shift: the position of the kink on every axis (0 <= u <= 1)
};

/// f5, eq. (5): C0 function, f(x) = exp(-a sum_{i=1}^d |x_i - u|) over [0,1]^d (a kink at u on every
/// axis); the paper's exp(-10 sum |x_i - 1/2|) at the default parameters (a = 10, u = 1/2).
///
/// Arithmetic: s = sum of |x_i - u| in order, then exp((-a) s): bitwise the paper form for the
/// defaults.
struct f5_c0 {
  using params_type = f5_params;
  f5_params params;  ///< the parameters of f(x); default: the paper's
  /// f(x) at the parameters p (the form a parameter batch calls; `params` is not used).
  template <int D>
  MCUBES_HOST_DEVICE double operator()(const point<D>& x, const f5_params& p) const {
    double s = 0;
    for (int j = 0; j < D; ++j) s += fabs(x[j] - p.u);
    return exp(-p.a * s);
  }
  /// f(x) at the functor's own parameters.
  template <int D>
  MCUBES_HOST_DEVICE double operator()(const point<D>& x) const {
    return (*this)(x, params);
  }
};

/// Parameters of f6 (Genz's discontinuous family), f(x) = exp(a sum_i (i+4) x_i) where every
/// x_i < t_i = u + (i-1)/10, else 0. The paper's f6 is a = 1, u = 0.4 (the defaults: t_i = (3+i)/10).
struct f6_params {
  double a = 1.0;  ///< difficulty: multiplies the paper's exponent i + 4 of axis i (a > 0)
  double u = 0.4;  ///< shift: the threshold of axis 1; axis i's is u + (i-1)/10 (0 < u <= 1)
};

/// f6, eq. (6): discontinuous, f(x) = exp(sum_{i=1}^d a (i+4) x_i) if x_i < t_i for every i, else 0,
/// over [0,1]^d, with thresholds t_i = u + (i-1)/10 (a threshold >= 1 never cuts the unit
/// interval); the paper's exp(sum (i+4) x_i) if x_i < (3+i)/10 at the default parameters
/// (a = 1, u = 0.4; for i >= 7 the threshold (3+i)/10 >= 1).
///
/// Arithmetic: the threshold of axis i is the paper's (3+i)/10 moved by the shift's change,
/// threshold(p, i-1) = (u - 0.4) + (3+i)/10 in double: one subtraction per call and one addition per
/// axis (the quotients are constants), and for u = 0.4 the paper form's (3+i)/10 bit for bit
/// (0 + t = t); then the paper form's sum s = sum (i+4) x_i in order and exp(a s): bitwise the
/// paper form for the defaults (1 s = s).
struct f6_discontinuous {
  using params_type = f6_params;
  static constexpr double paper_u = 0.4;  ///< the paper's threshold of axis 1
  f6_params params;  ///< the parameters of f(x); default: the paper's
  /// The threshold of axis j + 1 (0-based j) as the integrand compares with it:
  /// (u - paper_u) + (4 + j)/10 in double (the same operations as the call operator).
  MCUBES_HOST_DEVICE static double threshold(const f6_params& p, int j) { return (p.u - paper_u) + (4 + j) / 10.0; }
  /// f(x) at the parameters p (the form a parameter batch calls; `params` is not used).
  template <int D>
  MCUBES_HOST_DEVICE double operator()(const point<D>& x, const f6_params& p) const {
    const double shift = p.u - paper_u;
    double s = 0;
    for (int j = 0; j < D; ++j) {
      const int i = j + 1;
      if (!(x[j] < shift + (4 + j) / 10.0)) return 0.0;
      s += (i + 4) * x[j];
    }
    return exp(p.a * s);
  }
  /// f(x) at the functor's own parameters.
  template <int D>
  MCUBES_HOST_DEVICE double operator()(const point<D>& x) const {
    return (*this)(x, params);
  }
};

/// The parameters of fA and fB, which have none.
struct no_params {};

static_assert(std::is_trivially_copyable_v<f1_params> && std::is_trivially_copyable_v<f2_params> &&
                  std::is_trivially_copyable_v<f3_params> && std::is_trivially_copyable_v<f4_params> &&
                  std::is_trivially_copyable_v<f5_params> && std::is_trivially_copyable_v<f6_params>,
              "suite parameters are copied to the device by value");

/// fA, eq. (7): f(x) = sin(sum_i x_i), used with D = 6 over (0,10)^6 (the ZMCintegral comparison
/// of the paper, table 1). Defined for any D; only D = 6 has a tabulated exact value here.
struct fA_sin_sum {
  using params_type = no_params;
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
  using params_type = no_params;
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
/// mcubes::max_tested_dim. At the default parameters all closed forms stay finite and well
/// conditioned up to it (f6's value is 3.4e238 at d = 32; its integrand would overflow beyond d = 33).
inline constexpr int max_suite_dim = max_tested_dim;

/// Largest integral a Vegas run can estimate: sqrt(DBL_MAX) = 1.34e154. Vegas sums (f J)^2 over the
/// samples (J: the map's jacobian) for its variance, and once the map has adapted to a separable
/// integrand f J is about the integral I at every sample, so (f J)^2 overflows when I^2 does. Only f2
/// and f6 can exceed it (|I| <= 1 for f1, f3, f4, f5); validate_params refuses them there.
inline const double max_integrable_value = std::sqrt(std::numeric_limits<double>::max());

/// Largest dimension in which f6 at the paper's parameters (a = 1, u = 0.4) can be integrated: its
/// integral is 6.8e148 at d = 25 and 2.4e160 at d = 26, beyond max_integrable_value (a run at d = 26
/// adapts its map until (f J)^2 overflows). validate_params(d, f6_params{}) refuses d > 25.
inline constexpr int f6_paper_max_dim = 25;

/// Largest cancellation factor sum |terms| / |sum| accepted in f3's inclusion-exclusion sum
/// (exact_f3): with it the exact value keeps a relative accuracy of about 1e-15 (a bound of
/// 3e-13: 529 terms, long double). It is at most 66 for a >= 1 and d <= 32; it grows like a^-d
/// for small a (f3 with a = 0.1 reaches it at d = 20).
inline constexpr double f3_max_cancellation = 1e4;

namespace detail {
inline void check_dim(const char* name, int d) {
  MCUBES_EXPECTS(d >= 1 && d <= max_suite_dim, "suite: exact value of ", name, " is available for dimensions 1..",
                 max_suite_dim, ", got ", d);
}

/// "0.1", "50", "1e-07": the shortest %g text that reads back as x, without an exponent for
/// 1e-5 <= |x| < 1e16 (messages and reports).
inline std::string number_text(double x) {
  char buf[40];
  const bool plain = std::fabs(x) >= 1e-5 && std::fabs(x) < 1e16;
  for (int digits = 1; digits <= 17; ++digits) {
    std::snprintf(buf, sizeof buf, "%.*g", digits, x);
    if (std::strtod(buf, nullptr) == x && !(plain && std::string(buf).find('e') != std::string::npos)) break;
  }
  return buf;
}

/// x with 3 significant digits ("6.55e+04"): bounds and factors in messages.
inline std::string short_text(double x) {
  char buf[40];
  std::snprintf(buf, sizeof buf, "%.3g", x);
  return buf;
}

/// @throws invalid_input "parameter NAME of FN must be REQUIREMENT, got VALUE" unless ok.
inline void check_param(bool ok, const char* fn, const char* name, double value, const std::string& requirement) {
  if (!ok)
    throw invalid_input(std::string("parameter ") + name + " of " + fn + " must be " + requirement + ", got " +
                        number_text(value));
}
inline void check_a_positive(const char* fn, double a) {
  check_param(std::isfinite(a) && a > 0, fn, "a", a, "finite and > 0");
}
inline void check_u_unit(const char* fn, double u) {
  check_param(std::isfinite(u) && u >= 0 && u <= 1, fn, "u", u, "in [0, 1]");
}

/// The exact value v as a double. @throws invalid_input when v is not finite or is a non-zero value
/// below the smallest normal double (overflow or underflow), naming the integrand, d and parameters.
inline double representable(long double v, const char* fn, int d, const std::string& params) {
  const bool finite = std::isfinite(static_cast<double>(v));
  MCUBES_EXPECTS(finite && (v == 0 || std::fabs(v) >= std::numeric_limits<double>::min()), "suite: the exact value of ",
                 fn, " in d = ", d, " at ", params, " is ", finite ? "below" : "beyond", " the double range (", v, ")");
  return static_cast<double>(v);
}

inline constexpr long double pi_ld = 3.141592653589793238462643383279502884L;

/// @throws invalid_input unless the integral exp(log_integral) is below max_integrable_value,
/// naming the integrand, d, the parameters and the limit.
inline void check_integrable(const char* fn, int d, const std::string& params, long double log_integral) {
  MCUBES_EXPECTS(log_integral < std::log(static_cast<long double>(max_integrable_value)), "parameters of ", fn,
                 " in d = ", d, " at ", params, ": the integral ", short_text(static_cast<double>(std::exp(log_integral))),
                 " exceeds ", short_text(max_integrable_value),
                 " = sqrt(largest double), beyond which Vegas's variance sum (f J)^2 overflows once the map adapts",
                 std::string(fn) == "f6" ? " (the paper's f6, a = 1, u = 0.4, runs up to d = " +
                                               std::to_string(f6_paper_max_dim) + "; use a smaller a or u)"
                                         : " (use a smaller a)");
}
}  // namespace detail

/// "a = 2, u = 0.25": the parameters as text (messages, reports), shortest round-trip numbers.
inline std::string params_text(const f1_params& p) {
  return "a = " + detail::number_text(p.a) + ", u = " + detail::number_text(p.u);
}
inline std::string params_text(const f2_params& p) {
  return "a = " + detail::number_text(p.a) + ", u = " + detail::number_text(p.u);
}
inline std::string params_text(const f3_params& p) { return "a = " + detail::number_text(p.a); }
inline std::string params_text(const f4_params& p) {
  return "a = " + detail::number_text(p.a) + ", u = " + detail::number_text(p.u);
}
inline std::string params_text(const f5_params& p) {
  return "a = " + detail::number_text(p.a) + ", u = " + detail::number_text(p.u);
}
inline std::string params_text(const f6_params& p) {
  return "a = " + detail::number_text(p.a) + ", u = " + detail::number_text(p.u);
}
inline std::string params_text(const no_params&) { return ""; }

/// Checks the parameters of f1 in dimension d: a finite and > 0, u in [0, 1] (the phase 2 pi u
/// covers a period). |f1| <= 1 for every such value.
/// @throws invalid_input naming the parameter and its value.
inline void validate_params(int d, const f1_params& p) {
  (void)d;
  detail::check_a_positive("f1", p.a);
  detail::check_u_unit("f1", p.u);
}

namespace detail {
/// The checks of validate_params(d, f2_params) but the integrability limit (those exact_f2 needs).
inline void check_f2_domain(int d, const f2_params& p) {
  check_a_positive("f2", p.a);
  check_u_unit("f2", p.u);
  check_param(std::isfinite(1.0 / (p.a * p.a)), "f2", "a", p.a, "at least 1.5e-154 (1/a^2 must be finite)");
  const double log_max = std::log(std::numeric_limits<double>::max());
  const double a_max = std::exp(log_max / (2.0 * d));
  check_param(2.0L * d * std::log(static_cast<long double>(p.a)) < log_max, "f2", "a", p.a,
              "below " + short_text(a_max) + " in d = " + std::to_string(d) +
                  " (the peak value a^(2d) must be a finite double)");
}
/// The integral of f2 along one axis, a (atan(a (1 - u)) + atan(a u)) (exact_f2).
inline long double f2_axis_integral(const f2_params& p) {
  const long double a = p.a, u = p.u;
  return a * (std::atan(a * (1 - u)) + std::atan(a * u));
}
}  // namespace detail

/// Checks the parameters of f2 in dimension d: a finite and > 0, u in [0, 1], the integrand's
/// values representable (1/a^2 finite, a >= ~1.5e-154, and its peak a^(2d) finite), and its
/// integral below max_integrable_value (a Vegas run could not estimate a larger one).
/// @throws invalid_input naming the parameter and its value, or the integral and the limit.
inline void validate_params(int d, const f2_params& p) {
  detail::check_f2_domain(d, p);
  detail::check_integrable("f2", d, params_text(p), d * std::log(detail::f2_axis_integral(p)));
}

/// Checks the parameter of f3: a finite and > 0 (0 < f3 <= 1 for every such value).
/// @throws invalid_input naming the parameter and its value.
inline void validate_params(int d, const f3_params& p) {
  (void)d;
  detail::check_a_positive("f3", p.a);
}

/// Checks the parameters of f4: a finite and > 0 with a^2 finite (a <= ~1.3e154), u in [0, 1].
/// @throws invalid_input naming the parameter and its value.
inline void validate_params(int d, const f4_params& p) {
  (void)d;
  detail::check_a_positive("f4", p.a);
  detail::check_param(std::isfinite(p.a * p.a), "f4", "a", p.a, "at most 1.3e154 (a^2 must be finite)");
  detail::check_u_unit("f4", p.u);
}

/// Checks the parameters of f5: a finite and > 0, u in [0, 1] (0 < f5 <= 1).
/// @throws invalid_input naming the parameter and its value.
inline void validate_params(int d, const f5_params& p) {
  (void)d;
  detail::check_a_positive("f5", p.a);
  detail::check_u_unit("f5", p.u);
}

namespace detail {
/// The checks of validate_params(d, f6_params) but the integrability limit (those exact_f6 needs).
inline void check_f6_domain(int d, const f6_params& p) {
  check_a_positive("f6", p.a);
  check_param(std::isfinite(p.u) && p.u > 0 && p.u <= 1, "f6", "u", p.u, "in (0, 1]");
  long double top = 0;
  for (int j = 0; j < d; ++j)
    top += static_cast<long double>(p.a) * (j + 5) *
           std::min(1.0L, static_cast<long double>(f6_discontinuous::threshold(p, j)));
  MCUBES_EXPECTS(top < std::log(std::numeric_limits<double>::max()), "parameters of f6 in d = ", d, " at ",
                 params_text(p), ": the integrand's largest value exp(sum_i a (i+4) min(1, t_i)) = exp(",
                 static_cast<double>(top), ") overflows double (use a smaller a or u)");
}
/// The factors expm1(c_i b_i) / c_i of f6's integral, i = 1..d (exact_f6).
inline std::vector<long double> f6_axis_integrals(int d, const f6_params& p) {
  const long double a = p.a;
  const long double shift = p.u - f6_discontinuous::paper_u;  // in double, as the integrand computes it
  std::vector<long double> out;
  for (int i = 1; i <= d; ++i) {
    const long double b = std::min(1.0L, shift + (3 + i) / 10.0L);
    const long double c = a * (i + 4);
    out.push_back(std::expm1(c * b) / c);
  }
  return out;
}
}  // namespace detail

/// Checks the parameters of f6 in dimension d: a finite and > 0, u in (0, 1] (u <= 0 would cut
/// all of axis 1: a zero integral), the integrand's largest value exp(sum_i a (i+4) min(1, t_i))
/// finite (t_i as in f6_discontinuous), and its integral below max_integrable_value (a Vegas run
/// could not estimate a larger one: at the paper's parameters d <= f6_paper_max_dim = 25).
/// @throws invalid_input naming the parameters and their values, or the integral and the limit.
inline void validate_params(int d, const f6_params& p) {
  detail::check_f6_domain(d, p);
  long double log_integral = 0;
  for (const long double factor : detail::f6_axis_integrals(d, p)) log_integral += std::log(factor);
  detail::check_integrable("f6", d, params_text(p), log_integral);
}

/// Parameters of fA and fB: none, nothing to check.
inline void validate_params(int, const no_params&) {}

/// Exact integral of f1 = cos(2 pi u + a sum_k k x_k) over [0,1]^d. The exponential factorises and
/// int_0^1 e^{icx} dx = (e^{ic} - 1)/(ic) = e^{ic/2} sin(c/2)/(c/2), so with c_k = a k,
///   I = Re e^{2 pi i u} prod_{k=1}^d e^{i a k/2} sin(a k/2)/(a k/2)
///     = cos(2 pi u + a d(d+1)/4) prod_{k=1}^d sin(a k/2)/(a k/2).
/// Computed in long double: the product has no cancellation (relative error ~1e-18 per factor
/// plus the conditioning of sin near its zeros a k/2 = m pi); the phase carries an absolute error of
/// about 1e-19 (1 + |phase|), so |I| is accurate to about that times the product where cos(phase)
/// nears 0 (I itself near 0). At a = 1, u = 0 this is the paper's value, the same double as the
/// complex product Re prod (e^{ik} - 1)/(ik) for d = 1..32.
/// @throws invalid_input unless 1 <= d <= max_suite_dim; for parameters that validate_params
/// rejects; when the value is outside the double range.
inline double exact_f1(int d, const f1_params& p = {}) {
  detail::check_dim("f1", d);
  validate_params(d, p);
  const long double a = p.a, u = p.u;
  long double prod = 1;
  for (int k = 1; k <= d; ++k) {
    const long double h = a * k / 2;
    prod *= std::sin(h) / h;
  }
  const long double phase = 2 * detail::pi_ld * u + a * (d * (d + 1)) / 4;
  return detail::representable(std::cos(phase) * prod, "f1", d, params_text(p));
}

/// Exact integral of f2 = prod_i (a^-2 + (x_i - u)^2)^-1 over [0,1]^d. Per axis,
///   int_0^1 dx / (a^-2 + (x - u)^2) = a (atan(a (1 - u)) + atan(a u)),
/// both terms >= 0 for 0 <= u <= 1 (no cancellation); I = (a (atan(a(1-u)) + atan(a u)))^d, in long
/// double. At a = 50, u = 1/2: (100 atan 25)^d, the paper's value.
/// @throws invalid_input unless 1 <= d <= max_suite_dim; for parameters that validate_params
/// rejects, but for its limit max_integrable_value (the exact value is given beyond it); when the
/// value is outside the double range.
inline double exact_f2(int d, const f2_params& p = {}) {
  detail::check_dim("f2", d);
  detail::check_f2_domain(d, p);
  const long double axis = detail::f2_axis_integral(p);
  return detail::representable(std::pow(axis, static_cast<long double>(d)), "f2", d, params_text(p));
}

/// Exact integral of f3 = (1 + sum_i a i x_i)^(-d-1) over [0,1]^d. Integrating one axis at a time,
/// int_0^1 (c + b x)^(-n-1) dx = (c^-n - (c+b)^-n) / (n b), gives by induction (inclusion-exclusion),
/// with b_i = a i and prod_i b_i = a^d d!,
///   I = 1/(d! a^d d!) sum_{S subset {1..d}} (-1)^|S| / (1 + a sum_{i in S} i).
/// Subsets are grouped by their sum s: the signed count c_s = sum_{S: sum S = s} (-1)^|S| is the
/// coefficient of t^s in prod_{i=1}^d (1 - t^i), computed exactly in 64-bit integers (|c_s| <= 2^d),
/// so I = (d!^2 a^d)^-1 sum_s c_s / (1 + a s) (which also equals
/// (d!^2 a^d)^-1 a^-1 int_0^1 t^(1/a - 1) prod_i (1 - t^i) dt). The signed sum is evaluated in long
/// double with its cancellation factor K = sum_s |c_s|/(1 + a s) / |sum_s c_s/(1 + a s)|: the
/// relative error is about K times 1e-19 (K <= 66 for a >= 1, d <= 32). At a = 1: the paper's value.
/// @throws invalid_input unless 1 <= d <= max_suite_dim; for parameters that validate_params
/// rejects; when K > f3_max_cancellation (small a: the closed form would lose accuracy); when the
/// value is outside the double range.
inline double exact_f3(int d, const f3_params& p = {}) {
  detail::check_dim("f3", d);
  validate_params(d, p);
  const long double a = p.a;
  const int degree = d * (d + 1) / 2;
  std::vector<std::int64_t> c(static_cast<std::size_t>(degree) + 1, 0);
  c[0] = 1;
  int deg = 0;
  for (int i = 1; i <= d; ++i) {  // multiply by (1 - t^i), from the top so that c is updated in place
    for (int s = deg; s >= 0; --s) c[static_cast<std::size_t>(s + i)] -= c[static_cast<std::size_t>(s)];
    deg += i;
  }
  long double sum = 0, magnitude = 0;
  for (int s = 0; s <= degree; ++s) {
    const long double term = static_cast<long double>(c[static_cast<std::size_t>(s)]) / (1.0L + a * s);
    sum += term;
    magnitude += std::fabs(term);
  }
  const long double cancellation = magnitude / std::fabs(sum);
  MCUBES_EXPECTS(cancellation <= f3_max_cancellation, "suite: the exact value of f3 in d = ", d, " at ", params_text(p),
                 " would lose accuracy: its inclusion-exclusion sum cancels by a factor ",
                 detail::short_text(static_cast<double>(cancellation)), " (at most ",
                 detail::short_text(f3_max_cancellation), " accepted; a larger a cancels less)");
  long double factorial = 1;
  for (int i = 2; i <= d; ++i) factorial *= i;
  long double a_d = 1;
  for (int i = 0; i < d; ++i) a_d *= a;
  return detail::representable(sum / (factorial * factorial * a_d), "f3", d, params_text(p));
}

/// Exact integral of f4 = exp(-a^2 sum_i (x_i - u)^2) over [0,1]^d. Per axis,
///   int_0^1 e^{-a^2 (x-u)^2} dx = (sqrt(pi) / (2a)) (erf(a (1 - u)) + erf(a u)),
/// both terms >= 0 for 0 <= u <= 1 (no cancellation); I = that^d, in long double. At a = 25,
/// u = 1/2: ((sqrt(pi)/25) erf(12.5))^d, the paper's value (erf(12.5) = 1 - 1e-70).
/// @throws invalid_input unless 1 <= d <= max_suite_dim; for parameters that validate_params
/// rejects; when the value is outside the double range.
inline double exact_f4(int d, const f4_params& p = {}) {
  detail::check_dim("f4", d);
  validate_params(d, p);
  const long double a = p.a, u = p.u;
  const long double axis = std::sqrt(detail::pi_ld) / (2 * a) * (std::erf(a * (1 - u)) + std::erf(a * u));
  return detail::representable(std::pow(axis, static_cast<long double>(d)), "f4", d, params_text(p));
}

/// Exact integral of f5 = exp(-a sum_i |x_i - u|) over [0,1]^d. Per axis,
///   int_0^1 e^{-a |x - u|} dx = ((1 - e^{-a u}) + (1 - e^{-a (1-u)})) / a
///                             = -(expm1(-a u) + expm1(-a (1-u))) / a,
/// both terms >= 0 for 0 <= u <= 1; I = that^d, in long double. At a = 10, u = 1/2:
/// ((1 - e^-5)/5)^d, the paper's value.
/// @throws invalid_input unless 1 <= d <= max_suite_dim; for parameters that validate_params
/// rejects; when the value is outside the double range.
inline double exact_f5(int d, const f5_params& p = {}) {
  detail::check_dim("f5", d);
  validate_params(d, p);
  const long double a = p.a, u = p.u;
  const long double axis = -(std::expm1(-a * u) + std::expm1(-a * (1 - u))) / a;
  return detail::representable(std::pow(axis, static_cast<long double>(d)), "f5", d, params_text(p));
}

/// Exact integral of f6 over [0,1]^d. The integrand is a product of one-axis factors
/// exp(c_i x_i) 1[x_i < t_i], c_i = a (i+4), so with b_i = min(1, t_i)
///   I = prod_{i=1}^d int_0^{b_i} e^{c_i x} dx = prod_{i=1}^d expm1(c_i b_i) / c_i,
/// in long double. The threshold is t_i = (u - 0.4) + (3+i)/10 with u - 0.4 rounded to double as
/// the integrand computes it (f6_discontinuous::threshold) and the rest not rounded: the difference
/// from the integrand's double threshold changes I by less than 1e-15 relative. At a = 1, u = 0.4:
/// b_i = (3+i)/10 for i <= 6 and 1 beyond, the paper's value.
/// @throws invalid_input unless 1 <= d <= max_suite_dim; for parameters that validate_params
/// rejects, but for its limit max_integrable_value (the exact value is given beyond it, up to
/// 3.4e238 at d = 32); when the value is outside the double range.
inline double exact_f6(int d, const f6_params& p = {}) {
  detail::check_dim("f6", d);
  detail::check_f6_domain(d, p);
  long double prod = 1;
  for (const long double factor : detail::f6_axis_integrals(d, p)) prod *= factor;
  return detail::representable(prod, "f6", d, params_text(p));
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

#pragma once
/// @file running_average.hpp
/// Inverse-variance weighted average of iteration estimates with chi2/dof and Q (Lepage 1978,
/// eqs. 5-6; as RAvg in Lepage's vegas):
///   I = sum(I_k / s_k^2) / sum(1 / s_k^2),   s = (sum 1/s_k^2)^(-1/2),
///   chi2 = sum (I_k - I)^2 / s_k^2,  dof = n - 1,  Q = P(chi2_dof > chi2) (upper tail of chi-square).

#include <cfloat>
#include <cmath>
#include <vector>

// Boost.Math in the host compilation only: nvcc's device pass would otherwise parse it as device
// code (and warn about its long double); chi2_q is host code. MCUBES_CHI2_Q_EXTERNAL: chi2_q is
// only declared here and the program defines it (the integrands compiled at run time, jit/entry.hpp,
// forward it to their host program's: Boost.Math would double their compile time).
#if !defined(__CUDA_ARCH__) && !defined(MCUBES_CHI2_Q_EXTERNAL)
#include <boost/math/special_functions/gamma.hpp>
#endif

namespace mcubes {

#if !defined(__CUDA_ARCH__) && !defined(MCUBES_CHI2_Q_EXTERNAL)
/// Boost.Math's policy for chi2_q: no exception and no errno; a result that underflows is 0; the
/// evaluation in double precision (promote_double<false>; Boost's default promotes to long double,
/// which is 15x slower, 0.46 against 0.03 us per call on x86-64, for a relative difference below
/// 1e-14: a batch of K integrals computes K values of Q per iteration).
using chi2_q_policy = boost::math::policies::policy<boost::math::policies::domain_error<boost::math::policies::ignore_error>,
                                                    boost::math::policies::overflow_error<boost::math::policies::ignore_error>,
                                                    boost::math::policies::underflow_error<boost::math::policies::ignore_error>,
                                                    boost::math::policies::evaluation_error<boost::math::policies::ignore_error>,
                                                    boost::math::policies::promote_double<false>>;

/// Upper tail Q(chi2, dof) = P(X >= chi2) of the chi-square distribution with dof degrees of
/// freedom: the regularised upper incomplete gamma function Q(dof/2, chi2/2), from Boost.Math
/// (boost::math::gamma_q; Debian libboost-math-dev, header-only) in double precision, relative error
/// below 1e-14.
/// Edge cases: 1 for dof <= 0 (no degree of freedom: nothing to test) or chi2 <= 0 or NaN chi2
/// (an undefined statistic is never reported as a failed test); 0 for chi2 = +Inf. Host only.
inline double chi2_q(double chi2, int dof) {
  if (dof <= 0 || !(chi2 > 0)) return 1.0;
  if (std::isinf(chi2)) return 0.0;
  return boost::math::gamma_q(0.5 * dof, 0.5 * chi2, chi2_q_policy());
}
#else
/// Host only (declared for the device pass of nvcc, never defined there; or, under
/// MCUBES_CHI2_Q_EXTERNAL, defined by the program).
double chi2_q(double chi2, int dof);
#endif

/// Running inverse-variance weighted average of independent estimates.
/// Weights are normalised by the largest one (w_k = v_min / v_k, sdev = sqrt(v_min / sum w_k)),
/// so that tiny variances cannot overflow the sum of weights (a sum of 1/v_k overflows to infinity
/// for v_k near DBL_MIN and would report 0 +- 0).
class running_average {
 public:
  /// Adds an estimate with variance `variance` (a zero or negative variance is floored at
  /// (4 eps |estimate|)^2, and at DBL_MIN, so every weight is finite).
  /// The smallest variance an estimate is given: (4 eps |estimate|)^2 (its rounding level), at
  /// least DBL_MIN. Finite for |estimate| < 2^562; the integrator rejects estimates from 2^560 on.
  static double variance_floor(double estimate) {
    return std::fmax(16 * DBL_EPSILON * DBL_EPSILON * estimate * estimate, DBL_MIN);
  }

  void add(double estimate, double variance) {
    const double floor_var = variance_floor(estimate);
    if (!(variance > floor_var)) variance = floor_var;
    estimates_.push_back(estimate);
    variances_.push_back(variance);
    v_min_ = count() == 1 ? variance : std::fmin(v_min_, variance);
    sum_w_ = sum_wx_ = 0;
    for (std::size_t k = 0; k < estimates_.size(); ++k) {
      const double w = v_min_ / variances_[k];  // in (0, 1]
      sum_w_ += w;
      sum_wx_ += w * estimates_[k];
    }
  }
  int count() const noexcept { return static_cast<int>(estimates_.size()); }
  double mean() const { return count() ? sum_wx_ / sum_w_ : 0.0; }
  double sdev() const { return count() ? std::sqrt(v_min_ / sum_w_) : 0.0; }
  double chi2() const {
    const double m = mean();
    double c = 0;
    for (std::size_t k = 0; k < estimates_.size(); ++k) {
      const double dx = estimates_[k] - m;
      c += dx * dx / variances_[k];
    }
    return c;
  }
  int dof() const noexcept { return count() > 1 ? count() - 1 : 0; }
  double chi2_dof() const { return dof() > 0 ? chi2() / dof() : 0.0; }
  double q() const { return chi2_q(chi2(), dof()); }

 private:
  std::vector<double> estimates_, variances_;
  double v_min_ = 0, sum_w_ = 0, sum_wx_ = 0;
};

}  // namespace mcubes

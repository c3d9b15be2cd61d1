#pragma once
/// @file running_average.hpp
/// Weighted average of iteration estimates with chi2/dof and Q (running_average below: predictable
/// weights for the integrator, Lepage 1978 eqs. 5-6's inverse-variance weights beside them):
///   I = sum(w_k I_k) / sum(w_k),  chi2 = sum (I_k - I)^2 / s_k^2,  dof = n - 1,
///   Q = P(chi2_dof > chi2) (upper tail of chi-square).

#include <cfloat>
#include <cmath>
#include <vector>

// Boost.Math (core/chi2_q.hpp) in the host compilation only: nvcc's device pass would otherwise
// parse it as device code (and warn about its long double); chi2_q is host code. chi2_q is only
// declared here, and defined elsewhere, under
//  - MCUBES_CHI2_Q_EXTERNAL: the integrands compiled at run time (jit/entry.hpp) forward it to their
//    host program's (Boost.Math would double their compile time);
//  - MCUBES_PRECOMPILED_CPU_ENGINE or MCUBES_PRECOMPILED_CPU_ENGINE_DEFINITIONS (precompiled.hpp):
//    the program's engine unit defines it once (MCUBES_PRECOMPILED_CHI2_Q_DEFINE), so that its
//    other units do not parse Boost.Math (about two seconds of g++'s time each).
#if !defined(__CUDA_ARCH__) && !defined(MCUBES_CHI2_Q_EXTERNAL) && !defined(MCUBES_PRECOMPILED_CPU_ENGINE) && \
    !defined(MCUBES_PRECOMPILED_CPU_ENGINE_DEFINITIONS)
#define MCUBES_CHI2_Q_INLINE 1
#include "chi2_q.hpp"
#else
#define MCUBES_CHI2_Q_INLINE 0
#endif

namespace mcubes {

/// Upper tail Q(chi2, dof) = P(X >= chi2) of the chi-square distribution with dof degrees of
/// freedom: the regularised upper incomplete gamma function Q(dof/2, chi2/2), from Boost.Math
/// (boost::math::gamma_q in double precision, relative error below 1e-14; core/chi2_q.hpp).
/// Edge cases: 1 for dof <= 0 (no degree of freedom: nothing to test) or chi2 <= 0 or NaN chi2
/// (an undefined statistic is never reported as a failed test); 0 for chi2 = +Inf. Host only
/// (declared for the device pass of nvcc, never defined there).
#if MCUBES_CHI2_Q_INLINE
inline double chi2_q(double chi2, int dof) { return detail::chi2_q_boost(chi2, dof); }
#else
double chi2_q(double chi2, int dof);
#endif

/// Running weighted average of iteration estimates I_k with variances v_k = s_k^2, and weights
/// w_k = 1 / u_k fixed by a *weight variance* u_k that the caller chooses:
///   I = sum(w_k I_k) / W,   s = sqrt(sum(w_k^2 v_k)) / W,   W = sum w_k,
///   chi2 = sum (I_k - I)^2 / v_k,   dof = n - 1,   Q = P(chi2_dof > chi2)  (chi2_q).
/// s is the exact standard deviation of I for independent I_k of variances v_k and fixed weights.
///
/// With u_k = v_k (add(estimate, variance)) this is the inverse-variance weighted average of
/// Lepage 1978 (eqs. 5-6; RAvg in Lepage's vegas): s = W^(-1/2). That average is biased when an
/// estimate's error falls with its value (few non-zero samples, indicator functions, integrable
/// singularities: the iterations that miss the rare large values have both lower estimates and
/// lower errors and get the larger weights); 20 seeds of a 3-D ball indicator at 1e4 calls gave a
/// mean 7 of its errors low. Vegas (Integrator with adapt=False) then uses equal weights. The
/// integrator (algorithm/vegas.hpp) uses *predictable* weights instead: u_k is the variance of the
/// previous accumulated iteration, known before iteration k is sampled, so w_k is independent of
/// I_k's own fluctuation and the weighted sum is unbiased (E[I_k | the past] = I); the weights still
/// follow the errors' decrease while the adaptive map improves, so the efficiency is that of the
/// inverse-variance average on smooth integrands (equal weights would need 2x the iterations of f3
/// with skip 0).
///
/// The inverse-variance average of the same estimates (w_k = 1/v_k) is kept beside it
/// (inverse_variance_mean, inverse_variance_sdev) for comparison with vegas and the m-Cubes paper.
///
/// Weights are normalised by the largest one (w_k = u_min / u_k in (0, 1]), so that tiny variances
/// cannot overflow the sum of weights (a sum of 1/v_k overflows to infinity for v_k near DBL_MIN
/// and would report 0 +- 0).
class running_average {
 public:
  /// The smallest variance an estimate is given: (4 eps |estimate|)^2 (its rounding level), at
  /// least DBL_MIN. Finite for |estimate| < 2^562; the integrator rejects estimates from 2^560 on.
  static double variance_floor(double estimate) {
    return std::fmax(16 * DBL_EPSILON * DBL_EPSILON * estimate * estimate, DBL_MIN);
  }

  /// Adds an estimate with variance `variance` and weight 1 / `weight_variance`. A variance (or a
  /// weight variance) at or below variance_floor(estimate) is raised to it, so every weight is finite
  /// and positive; a NaN weight variance is replaced by the (floored) variance.
  void add(double estimate, double variance, double weight_variance) {
    const double floor_var = variance_floor(estimate);
    if (!(variance > floor_var)) variance = floor_var;
    if (std::isnan(weight_variance)) weight_variance = variance;
    if (!(weight_variance > floor_var)) weight_variance = floor_var;
    estimates_.push_back(estimate);
    variances_.push_back(variance);
    weight_variances_.push_back(weight_variance);
    const bool first = count() == 1;
    u_min_ = first ? weight_variance : std::fmin(u_min_, weight_variance);
    v_min_ = first ? variance : std::fmin(v_min_, variance);
    sum_w_ = sum_wx_ = sum_w2v_ = sum_iw_ = sum_iwx_ = 0;
    for (std::size_t k = 0; k < estimates_.size(); ++k) {
      const double w = u_min_ / weight_variances_[k];  // in (0, 1]
      sum_w_ += w;
      sum_wx_ += w * estimates_[k];
      const double iw = v_min_ / variances_[k];  // inverse-variance weight, in (0, 1]
      sum_iw_ += iw;
      sum_iwx_ += iw * estimates_[k];
    }
    for (std::size_t k = 0; k < estimates_.size(); ++k) {
      const double wn = (u_min_ / weight_variances_[k]) / sum_w_;  // normalised weight, in (0, 1]
      sum_w2v_ += wn * wn * variances_[k];
    }
  }
  /// Adds an estimate with inverse-variance weight (weight_variance = variance): Lepage's average.
  void add(double estimate, double variance) { add(estimate, variance, variance); }

  int count() const noexcept { return static_cast<int>(estimates_.size()); }
  double mean() const { return count() ? sum_wx_ / sum_w_ : 0.0; }
  double sdev() const { return count() ? std::sqrt(sum_w2v_) : 0.0; }
  /// The normalised weight w_k / W of estimate k (0 <= k < count()).
  double weight(int k) const { return (u_min_ / weight_variances_[static_cast<std::size_t>(k)]) / sum_w_; }
  /// The inverse-variance weighted average of the same estimates (Lepage 1978 eqs. 5-6) and its
  /// standard deviation W'^(-1/2), W' = sum 1/v_k.
  double inverse_variance_mean() const { return count() ? sum_iwx_ / sum_iw_ : 0.0; }
  double inverse_variance_sdev() const { return count() ? std::sqrt(v_min_ / sum_iw_) : 0.0; }
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
  std::vector<double> estimates_, variances_, weight_variances_;
  double u_min_ = 0, v_min_ = 0, sum_w_ = 0, sum_wx_ = 0, sum_w2v_ = 0, sum_iw_ = 0, sum_iwx_ = 0;
};

}  // namespace mcubes

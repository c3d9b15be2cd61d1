#pragma once
/// @file core/chi2_q.hpp
/// The chi-square upper tail Q(chi2, dof) from Boost.Math, host only: the body of chi2_q
/// (core/running_average.hpp). Kept apart because Boost.Math's special functions take about two
/// seconds of g++'s time to parse in every unit that includes them: running_average.hpp includes
/// this header only where chi2_q is defined inline (a header-only program); units that link a
/// precompiled CPU engine (precompiled.hpp: MCUBES_PRECOMPILED_CPU_ENGINE) and the integrands
/// compiled at run time (MCUBES_CHI2_Q_EXTERNAL, jit/entry.hpp) see only its declaration, and the
/// engine's unit defines it once (MCUBES_PRECOMPILED_CHI2_Q_DEFINE). The same function either way:
/// the same values, bit for bit.

#include <cmath>

#include <boost/math/special_functions/gamma.hpp>

namespace mcubes::detail {

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
/// below 1e-14. Edge cases: 1 for dof <= 0 or chi2 <= 0 or NaN chi2; 0 for chi2 = +Inf. Host only.
inline double chi2_q_boost(double chi2, int dof) {
  if (dof <= 0 || !(chi2 > 0)) return 1.0;
  if (std::isinf(chi2)) return 0.0;
  return boost::math::gamma_q(0.5 * dof, 0.5 * chi2, chi2_q_policy());
}

}  // namespace mcubes::detail

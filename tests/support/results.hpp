#pragma once
/// @file tests/support/results.hpp
/// Bitwise equality of two integration results (mcubes::result, mcubes::vector_result) as GoogleTest
/// expectations: every number a run reports, not only the estimate.

#include <gtest/gtest.h>

#include <cstddef>

#include <mcubes/algorithm/vegas_vector.hpp>
#include <mcubes/result.hpp>

#include "bits.hpp"

namespace mcubes_test {

/// Expects two results to be the same run, bit for bit: estimate, error, inverse-variance estimate
/// and error, chi2/dof, Q, dof, warnings, status, iterations, accumulated iterations, evaluations,
/// and every iteration record (index, estimate, error, adapted, accumulated, underflow, weighted
/// estimate and error, chi2/dof, Q, evaluations, non-zero evaluations, rescaled, top bin level).
/// Wall times, the seed, the backend's name and the options are not compared (callers check the
/// seed where it must agree).
inline void expect_same_result(const mcubes::result& a, const mcubes::result& b) {
  const auto expect_bits = [](const char* field, double x, double y) {
    EXPECT_EQ(bits(x), bits(y)) << field << ": " << x << " vs " << y;
  };
  expect_bits("estimate", a.estimate, b.estimate);
  expect_bits("error", a.error, b.error);
  expect_bits("inverse_variance_estimate", a.inverse_variance_estimate, b.inverse_variance_estimate);
  expect_bits("inverse_variance_error", a.inverse_variance_error, b.inverse_variance_error);
  expect_bits("chi2_dof", a.chi2_dof, b.chi2_dof);
  expect_bits("q", a.q, b.q);
  EXPECT_EQ(a.dof, b.dof);
  EXPECT_EQ(a.warnings, b.warnings);
  EXPECT_EQ(a.status, b.status);
  EXPECT_EQ(a.iterations, b.iterations);
  EXPECT_EQ(a.accumulated, b.accumulated);
  EXPECT_EQ(a.n_eval, b.n_eval);
  ASSERT_EQ(a.records.size(), b.records.size());
  for (std::size_t i = 0; i < a.records.size(); ++i) {
    SCOPED_TRACE(testing::Message() << "iteration " << i);
    const mcubes::iteration_record& x = a.records[i];
    const mcubes::iteration_record& y = b.records[i];
    EXPECT_EQ(x.index, y.index);
    expect_bits("estimate", x.estimate, y.estimate);
    expect_bits("error", x.error, y.error);
    EXPECT_EQ(x.adapted, y.adapted);
    EXPECT_EQ(x.accumulated, y.accumulated);
    EXPECT_EQ(x.underflow, y.underflow);
    expect_bits("weighted_estimate", x.weighted_estimate, y.weighted_estimate);
    expect_bits("weighted_error", x.weighted_error, y.weighted_error);
    expect_bits("chi2_dof", x.chi2_dof, y.chi2_dof);
    expect_bits("q", x.q, y.q);
    EXPECT_EQ(x.n_eval, y.n_eval);
    EXPECT_EQ(x.n_nonzero, y.n_nonzero);
    EXPECT_EQ(x.rescaled, y.rescaled);
    EXPECT_EQ(x.top_bin_level, y.top_bin_level);
  }
}

/// Expects two vector results to be the same run, bit for bit: every component's estimate, error
/// and chi2/dof, the covariance, the vector's chi2/dof, dof and Q, every iteration's estimates and
/// covariance, and the run (expect_same_result).
inline void expect_same(const mcubes::vector_result& a, const mcubes::vector_result& b) {
  ASSERT_EQ(a.components, b.components);
  ASSERT_EQ(a.estimate.size(), b.estimate.size());
  ASSERT_EQ(a.error.size(), b.error.size());
  ASSERT_EQ(a.chi2_dof.size(), b.chi2_dof.size());
  ASSERT_EQ(a.covariance.size(), b.covariance.size());
  for (std::size_t i = 0; i < a.estimate.size(); ++i) {
    EXPECT_EQ(bits(a.estimate[i]), bits(b.estimate[i])) << "estimate " << i << ": " << a.estimate[i] << " vs " << b.estimate[i];
    EXPECT_EQ(bits(a.error[i]), bits(b.error[i])) << "error " << i;
    EXPECT_EQ(bits(a.chi2_dof[i]), bits(b.chi2_dof[i])) << "chi2_dof " << i;
  }
  for (std::size_t t = 0; t < a.covariance.size(); ++t)
    EXPECT_EQ(bits(a.covariance[t]), bits(b.covariance[t])) << "covariance entry " << t;
  EXPECT_EQ(bits(a.chi2_dof_vector), bits(b.chi2_dof_vector)) << a.chi2_dof_vector << " vs " << b.chi2_dof_vector;
  EXPECT_EQ(a.dof_vector, b.dof_vector);
  EXPECT_EQ(bits(a.q_vector), bits(b.q_vector)) << a.q_vector << " vs " << b.q_vector;
  ASSERT_EQ(a.iterations.size(), b.iterations.size());
  for (std::size_t k = 0; k < a.iterations.size(); ++k) {
    const mcubes::vector_iteration& x = a.iterations[k];
    const mcubes::vector_iteration& y = b.iterations[k];
    EXPECT_EQ(x.index, y.index) << "iteration " << k;
    EXPECT_EQ(x.accumulated, y.accumulated) << "iteration " << k;
    ASSERT_EQ(x.estimate.size(), y.estimate.size()) << "iteration " << k;
    ASSERT_EQ(x.covariance.size(), y.covariance.size()) << "iteration " << k;
    for (std::size_t i = 0; i < x.estimate.size(); ++i)
      EXPECT_EQ(bits(x.estimate[i]), bits(y.estimate[i])) << "iteration " << k << ", estimate " << i;
    for (std::size_t t = 0; t < x.covariance.size(); ++t)
      EXPECT_EQ(bits(x.covariance[t]), bits(y.covariance[t])) << "iteration " << k << ", covariance entry " << t;
  }
  SCOPED_TRACE("the run");
  expect_same_result(a.run, b.run);
}

}  // namespace mcubes_test

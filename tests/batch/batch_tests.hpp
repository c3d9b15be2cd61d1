#pragma once
// Test bodies of parameter batches (algorithm/vegas_batch.hpp), written once and run on each
// backend (test_batch_cpu.cpp; test_batch_cuda.cu on a GPU). The determinism contract is checked
// bit for bit against single runs with the derived seeds; accuracy in units of the reported sigma.

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <exception>
#include <string>
#include <vector>

#include "mcubes/mcubes.hpp"
#include "support/results.hpp"

namespace batch_tests {

/// Pulls |estimate - exact| / error beyond this fail (fixed seeds: the test is repeatable).
inline constexpr double max_pull = 4.0;

/// The parameters of one member: the centre of a Gaussian on every axis and its width parameter.
struct gauss_params {
  double centre[4];
  double a;  // exp(-a^2 |x - c|^2)
};

/// exp(-a^2 |x - c|^2) in 4-D: the batch integrand f(x, p).
struct gauss4 {
  MCUBES_HOST_DEVICE double operator()(const mcubes::point<4>& x, const gauss_params& p) const {
    double r2 = 0;
    for (int i = 0; i < 4; ++i) r2 += (x[i] - p.centre[i]) * (x[i] - p.centre[i]);
    return exp(-p.a * p.a * r2);
  }
};

/// Its integral over [0,1]^4: prod_i sqrt(pi)/(2a) (erf(a (1 - c_i)) + erf(a c_i)).
inline double gauss4_exact(const gauss_params& p) {
  double v = 1;
  for (int i = 0; i < 4; ++i)
    v *= std::sqrt(M_PI) / (2 * p.a) * (std::erf(p.a * (1 - p.centre[i])) + std::erf(p.a * p.centre[i]));
  return v;
}

/// K members with centres spread over the cube and widths from easy to narrow, so that they
/// converge after different numbers of iterations.
inline std::vector<gauss_params> members(int K) {
  std::vector<gauss_params> ps(K);
  for (int k = 0; k < K; ++k) {
    for (int i = 0; i < 4; ++i) ps[k].centre[i] = 0.2 + 0.6 * std::fmod(0.137 * (k + 1) * (i + 1), 1.0);
    ps[k].a = 2.0 + 3.0 * (k % 5);
  }
  return ps;
}

inline mcubes::vegas_options batch_options(const mcubes::execution& ex) {
  mcubes::vegas_options o;
  static_cast<mcubes::execution&>(o) = ex;
  o.calls_per_iteration = 20000;
  o.max_iterations = 15;
  o.adapt_iterations = 8;
  o.skip = 2;
  o.rel_tol = 4e-4;
  o.n_bins = 64;
  o.seed = 77;
  return o;
}

using mcubes_test::same_bits;

/// Every number of two results and of their iteration records, bit for bit, and the same seed.
inline void expect_identical(const mcubes::result& a, const mcubes::result& b, const std::string& label) {
  SCOPED_TRACE(label);
  EXPECT_EQ(a.seed, b.seed);
  mcubes_test::expect_same_result(a, b);
}

/// Result k of a batch is the single run of with_parameters{f, p_k} with seed batch_seed(seed, k),
/// bit for bit; `solo_ex` runs the single runs (another thread count or block size).
inline void contract_holds(const mcubes::execution& ex, const mcubes::execution& solo_ex,
                           mcubes::stratification_mode mode = mcubes::stratification_mode::adaptive) {
  const int K = 7;
  const auto ps = members(K);
  mcubes::vegas_options o = batch_options(ex);
  o.stratification = mode;
  const auto reg = mcubes::region<4>::unit();
  const std::vector<mcubes::result> rs = mcubes::vegas_batch<4>(gauss4{}, reg, ps, o);
  ASSERT_EQ(rs.size(), static_cast<std::size_t>(K));
  int min_it = 1000, max_it = 0;
  for (int k = 0; k < K; ++k) {
    mcubes::vegas_options solo = batch_options(solo_ex);
    solo.seed = mcubes::batch_seed(o.seed, k);
    solo.stratification = mode;
    const mcubes::result r = mcubes::vegas<4>(mcubes::with_parameters<gauss4, gauss_params>{gauss4{}, ps[k]}, reg, solo);
    expect_identical(rs[k], r, "integral " + std::to_string(k));
    EXPECT_EQ(rs[k].seed, mcubes::batch_seed(o.seed, k));
    min_it = std::min(min_it, rs[k].iterations);
    max_it = std::max(max_it, rs[k].iterations);
  }
  // the members end after different numbers of iterations: converged ones left the later rounds
  EXPECT_LT(min_it, max_it);
}

/// Members whose V-Sample terms reach the overflow bin levels (a narrow peak that the bin-scale
/// probe misses: the first full pass has terms far above the probe's largest) are still their
/// single runs bit for bit, beside members that never reach them (the CUDA batch allocates an
/// integral's levels when a pass first needs them and runs that pass again).
inline void overflow_levels_are_single_runs(const mcubes::execution& ex, const mcubes::execution& solo_ex) {
  std::vector<gauss_params> ps = members(4);
  for (int k : {1, 3}) {
    ps[k].a = 120.0;
    for (int i = 0; i < 4; ++i) ps[k].centre[i] = 0.4 + 0.05 * i + 0.01 * k;
  }
  mcubes::vegas_options o = batch_options(ex);
  o.rel_tol = 1e-14;  // every member runs every iteration
  o.max_iterations = 8;
  o.adapt_iterations = 8;
  const auto reg = mcubes::region<4>::unit();
  const std::vector<mcubes::result> rs = mcubes::vegas_batch<4>(gauss4{}, reg, ps, o);
  int reached = 0;
  for (std::size_t k = 0; k < ps.size(); ++k) {
    mcubes::vegas_options solo = batch_options(solo_ex);
    solo.rel_tol = o.rel_tol;
    solo.max_iterations = o.max_iterations;
    solo.adapt_iterations = o.adapt_iterations;
    solo.seed = mcubes::batch_seed(o.seed, k);
    const mcubes::result r = mcubes::vegas<4>(mcubes::with_parameters<gauss4, gauss_params>{gauss4{}, ps[k]}, reg, solo);
    expect_identical(rs[k], r, "integral " + std::to_string(k));
    for (const auto& rec : r.records) reached += rec.top_bin_level > 0 ? 1 : 0;
  }
  EXPECT_GT(reached, 0) << "no member reached the overflow bin levels: the test does not test them";
}

/// Result k depends on (p_k, k) only: another batch holding p_k at index k gives the same bits.
inline void independent_of_other_members(const mcubes::execution& ex) {
  const auto ps = members(6);
  const mcubes::vegas_options o = batch_options(ex);
  const auto reg = mcubes::region<4>::unit();
  const auto all = mcubes::vegas_batch<4>(gauss4{}, reg, ps, o);
  // members 0 and 2 replaced by others, and fewer members: index 1 keeps p_1
  std::vector<gauss_params> other = {ps[5], ps[1], ps[4]};
  const auto some = mcubes::vegas_batch<4>(gauss4{}, reg, other, o);
  expect_identical(some[1], all[1], "p_1 at index 1 in another batch");
  // one member alone at index 0
  const auto one = mcubes::vegas_batch<4>(gauss4{}, reg, std::vector<gauss_params>{ps[0]}, o);
  expect_identical(one[0], all[0], "p_0 alone");
}

/// Every member within max_pull sigma of its exact value; one region per member.
inline void accurate_with_regions(const mcubes::execution& ex) {
  const int K = 12;
  auto ps = members(K);
  mcubes::vegas_options o = batch_options(ex);
  o.calls_per_iteration = 100000;
  o.max_iterations = 20;
  o.rel_tol = 1e-3;
  std::vector<mcubes::region<4>> regs;
  for (int k = 0; k < K; ++k) regs.push_back(mcubes::region<4>::unit());
  const auto rs = mcubes::vegas_batch<4>(gauss4{}, regs, ps, o);
  for (int k = 0; k < K; ++k) {
    const double pull = (rs[k].estimate - gauss4_exact(ps[k])) / rs[k].error;
    EXPECT_LT(std::fabs(pull), max_pull) << "integral " << k << ": " << rs[k].estimate << " +- " << rs[k].error
                                         << ", exact " << gauss4_exact(ps[k]);
    EXPECT_EQ(rs[k].status, mcubes::status::converged) << "integral " << k;
  }
}

/// A member whose integrand is NaN somewhere: batch_error naming it, with the failure nested.
struct nan_for_negative_a {
  MCUBES_HOST_DEVICE double operator()(const mcubes::point<4>& x, const gauss_params& p) const {
    return p.a < 0 && x[0] > 0.5 ? NAN : x[0] * x[1];
  }
};

/// A batch of nan_for_negative_a whose member k alone has a < 0: batch_error naming k, with the
/// non_finite_integrand (its NaN and its point) nested.
inline void expect_nan_failure_of(const std::vector<gauss_params>& ps, std::size_t k, const mcubes::vegas_options& o) {
  try {
    (void)mcubes::vegas_batch<4>(nan_for_negative_a{}, mcubes::region<4>::unit(), ps, o);
    ADD_FAILURE() << "no exception";
  } catch (const mcubes::batch_error& e) {
    EXPECT_EQ(e.integral(), k);
    EXPECT_EQ(std::string(e.what()).rfind("integral " + std::to_string(k) + ": ", 0), 0u) << e.what();
    try {
      std::rethrow_if_nested(e);
      ADD_FAILURE() << "nothing nested";
    } catch (const mcubes::non_finite_integrand& inner) {
      EXPECT_GT(inner.point()[0], 0.5);
      EXPECT_TRUE(std::isnan(inner.value()));
    }
  }
}

inline void failure_names_the_integral(const mcubes::execution& ex) {
  auto ps = members(4);
  ps[2].a = -1;
  expect_nan_failure_of(ps, 2, batch_options(ex));
}

/// With `failures`, the members of nan_for_negative_a with a < 0 (`failing`) leave the batch:
/// failures[k] holds their non_finite_integrand (the NaN and its point), their results the
/// completed iterations (status interrupted, their seeds); every other member is its single run,
/// bit for bit, and has no failure.
inline void failures_leave_the_batch(const mcubes::vegas_options& o, int K, const std::vector<int>& failing) {
  auto ps = members(K);
  for (int k : failing) ps[k].a = -1;
  const auto reg = mcubes::region<4>::unit();
  mcubes::batch_failures failures;
  const auto rs = mcubes::vegas_batch<4>(nan_for_negative_a{}, reg, ps, o, {}, &failures);
  ASSERT_EQ(rs.size(), static_cast<std::size_t>(K));
  ASSERT_EQ(failures.size(), static_cast<std::size_t>(K));
  for (int k = 0; k < K; ++k) {
    const bool fails = std::find(failing.begin(), failing.end(), k) != failing.end();
    SCOPED_TRACE("integral " + std::to_string(k));
    EXPECT_EQ(rs[k].seed, mcubes::batch_seed(o.seed, k));
    if (fails) {
      ASSERT_TRUE(failures[k]);
      try {
        std::rethrow_exception(failures[k]);
      } catch (const mcubes::non_finite_integrand& e) {
        EXPECT_GT(e.point()[0], 0.5);
        EXPECT_TRUE(std::isnan(e.value()));
      } catch (...) {
        ADD_FAILURE() << "another exception";
      }
      EXPECT_EQ(rs[k].status, mcubes::status::interrupted);
      continue;
    }
    EXPECT_FALSE(failures[k]);
    if (k % 37 != 0 && K > 8) continue;  // a sample of a large batch
    mcubes::vegas_options solo = o;
    solo.seed = mcubes::batch_seed(o.seed, k);
    expect_identical(rs[k],
                     mcubes::vegas<4>(mcubes::with_parameters<nan_for_negative_a, gauss_params>{nan_for_negative_a{}, ps[k]},
                                      reg, solo),
                     "integral " + std::to_string(k));
  }
}

inline void failures_leave_the_batch(const mcubes::execution& ex) {
  failures_leave_the_batch(batch_options(ex), 4, {2});
  failures_leave_the_batch(batch_options(ex), 1, {0});  // the single-run path
  failures_leave_the_batch(batch_options(ex), 1, {});
  mcubes::vegas_options o = batch_options(ex);  // a large batch (host pool; two lanes on CUDA)
  o.calls_per_iteration = 400;
  o.n_bins = 16;
  failures_leave_the_batch(o, static_cast<int>(mcubes::batch_pipeline_min) + 44, {0, 5, 150, 299});
}

/// A callback that stops after two rounds: every member interrupted, its completed iterations kept.
inline void stop_interrupts_every_member(const mcubes::execution& ex) {
  const auto ps = members(3);
  mcubes::vegas_options o = batch_options(ex);
  o.rel_tol = 1e-9;  // none converges
  int calls = 0;
  const auto rs = mcubes::vegas_batch<4>(gauss4{}, mcubes::region<4>::unit(), ps, o, [&](const mcubes::batch_progress& p) {
    ++calls;
    EXPECT_EQ(p.integrals, 3u);
    EXPECT_EQ(p.round, calls);
    return calls == 3 ? mcubes::run_control::stop : mcubes::run_control::proceed;
  });
  EXPECT_EQ(calls, 3);
  for (const auto& r : rs) {
    EXPECT_EQ(r.status, mcubes::status::interrupted);
    EXPECT_GE(r.iterations, 1);
    EXPECT_LE(r.iterations, 3);
  }
}

/// A batch large enough for the host pool that takes the results (K >= 256): members across the
/// range are still their single runs, bit for bit.
inline void many_members(const mcubes::execution& ex) {
  const int K = 300;
  const auto ps = members(K);
  mcubes::vegas_options o = batch_options(ex);
  o.calls_per_iteration = 400;
  o.n_bins = 16;
  const auto reg = mcubes::region<4>::unit();
  const auto rs = mcubes::vegas_batch<4>(gauss4{}, reg, ps, o);
  ASSERT_EQ(rs.size(), static_cast<std::size_t>(K));
  for (int k : {0, 1, 149, 150, 298, 299}) {
    mcubes::vegas_options solo = o;
    solo.seed = mcubes::batch_seed(o.seed, k);
    expect_identical(rs[k], mcubes::vegas<4>(mcubes::with_parameters<gauss4, gauss_params>{gauss4{}, ps[k]}, reg, solo),
                     "integral " + std::to_string(k));
  }
}

/// A large batch (K >= batch_pipeline_min: two pipelined lanes on the CUDA backend): a failing
/// member of the second lane is named, with its failure nested; a stop after three rounds
/// interrupts every member of both lanes, whose completed iterations are those of its single run
/// with as many iterations, bit for bit (the passes already started when the stop came are
/// discarded).
inline void large_batch_failure_and_stop(const mcubes::execution& ex) {
  const int K = static_cast<int>(mcubes::batch_pipeline_min) + 44;
  auto ps = members(K);
  mcubes::vegas_options o = batch_options(ex);
  o.calls_per_iteration = 400;
  o.n_bins = 16;
  o.rel_tol = 1e-9;  // none converges
  o.skip = 0;
  o.min_iterations = 1;  // so that the single runs may have as few iterations
  const auto reg = mcubes::region<4>::unit();
  int calls = 0;
  const auto rs = mcubes::vegas_batch<4>(gauss4{}, reg, ps, o, [&](const mcubes::batch_progress& p) {
    ++calls;
    EXPECT_EQ(p.integrals, static_cast<std::size_t>(K));
    EXPECT_EQ(p.round, calls);
    return calls == 3 ? mcubes::run_control::stop : mcubes::run_control::proceed;
  });
  EXPECT_EQ(calls, 3);
  ASSERT_EQ(rs.size(), static_cast<std::size_t>(K));
  for (int k = 0; k < K; ++k) {
    EXPECT_EQ(rs[k].status, mcubes::status::interrupted) << "integral " << k;
    EXPECT_GE(rs[k].iterations, 1) << "integral " << k;
    EXPECT_LE(rs[k].iterations, 3) << "integral " << k;
  }
  for (int k : {0, K / 2 - 1, K / 2, K - 1}) {
    mcubes::vegas_options solo = o;
    solo.seed = mcubes::batch_seed(o.seed, k);
    solo.max_iterations = rs[k].iterations;
    const auto r = mcubes::vegas<4>(mcubes::with_parameters<gauss4, gauss_params>{gauss4{}, ps[k]}, reg, solo);
    SCOPED_TRACE("integral " + std::to_string(k));
    EXPECT_TRUE(same_bits(rs[k].estimate, r.estimate)) << rs[k].estimate << " vs " << r.estimate;
    EXPECT_TRUE(same_bits(rs[k].error, r.error)) << rs[k].error << " vs " << r.error;
    EXPECT_EQ(rs[k].n_eval, r.n_eval);
  }

  ps[K - 3].a = -1;
  expect_nan_failure_of(ps, static_cast<std::size_t>(K - 3), o);
}

inline void bad_sizes(const mcubes::execution& ex) {
  const mcubes::vegas_options o = batch_options(ex);
  EXPECT_THROW((void)mcubes::vegas_batch<4>(gauss4{}, mcubes::region<4>::unit(), std::vector<gauss_params>{}, o),
               mcubes::invalid_input);
  std::vector<mcubes::region<4>> two(2, mcubes::region<4>::unit());
  EXPECT_THROW((void)mcubes::vegas_batch<4>(gauss4{}, two, members(3), o), mcubes::invalid_input);
}

}  // namespace batch_tests

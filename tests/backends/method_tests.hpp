#pragma once
// The tests of every method and of the integrator, written once over the backend: each function
// takes the backend_kind and two execution settings that must give the same bits (CPU thread counts
// or CUDA block sizes), and is instantiated by test_methods_cpu.cpp (backend cpu) and
// test_methods_cuda.cu (backend cuda, skipped without a device). Tolerances are in units of the
// reported error (sigma), seeds are fixed.
#include <gtest/gtest.h>

#include <mcubes/map_io.hpp>
#include <mcubes/suite.hpp>

#include <cmath>
#include <cstdint>
#include <cstdio>
#include <string>
#include <type_traits>
#include <vector>

#include "support/eq45.hpp"
#include "support/results.hpp"

namespace mcubes_methods {

/// Largest |estimate - exact| / error accepted for a single seeded run (4 sigma).
inline constexpr double max_pull = 4.0;

using mcubes_test::bits;

/// Two execution settings of one backend that must give identical bits.
struct settings {
  mcubes::backend_kind kind;
  int threads_a, threads_b;  // CPU threads
  int block_a, block_b;      // CUDA threads per block
  template <class O>
  O with(O o, int threads, int block) const {
    o.backend = kind;
    o.threads = threads;
    o.cuda_threads_per_block = block;
    return o;
  }
  template <class O>
  O first(O o) const { return with(o, threads_a, block_a); }
  template <class O>
  O second(O o) const { return with(o, threads_b, block_b); }
};

/// The two results are the same run, bit for bit (mcubes_test::expect_same_result), labelled `what`.
inline void expect_same_result(const mcubes::result& a, const mcubes::result& b, const std::string& what) {
  SCOPED_TRACE(what);
  mcubes_test::expect_same_result(a, b);
}

inline mcubes::vegas_options small_vegas(std::uint64_t calls = 200000) {
  mcubes::vegas_options o;
  o.calls_per_iteration = calls;
  o.max_iterations = 20;
  o.adapt_iterations = 8;
  o.skip = 4;
  o.min_iterations = 5;
  o.rel_tol = 1e-3;
  o.seed = 77;
  return o;
}

// ---- Vegas (one call), dimensions 1 and 32 of the suite

inline void vegas_f4_dimensions(const settings& s) {
  {
    const mcubes::vegas_options o = s.first(small_vegas());
    const mcubes::result r = mcubes::vegas<1>(mcubes::suite::f4_gaussian{}, mcubes::region<1>::unit(), o);
    EXPECT_EQ(r.backend, mcubes::to_string(s.kind));
    EXPECT_LE(std::fabs(r.estimate - mcubes::suite::exact_f4(1)) / r.error, max_pull) << "f4 d = 1";
    expect_same_result(r, mcubes::vegas<1>(mcubes::suite::f4_gaussian{}, mcubes::region<1>::unit(), s.second(small_vegas())),
                       "f4 d = 1");
  }
  {
    mcubes::vegas_options o = s.first(small_vegas(100000));
    o.max_iterations = 10;
    o.adapt_iterations = 5;
    o.skip = 2;
    const mcubes::result r = mcubes::vegas<32>(mcubes::suite::f4_gaussian{}, mcubes::region<32>::unit(), o);
    // a 1.6e-37 peak in 32 dimensions: any status, but an honest one
    if (r.accumulated > 0 && std::isfinite(r.error) && r.status == mcubes::status::converged) {
      EXPECT_LE(std::fabs(r.estimate - mcubes::suite::exact_f4(32)) / r.error, max_pull) << "f4 d = 32";
    }
    mcubes::vegas_options o2 = s.second(small_vegas(100000));
    o2.max_iterations = 10;
    o2.adapt_iterations = 5;
    o2.skip = 2;
    expect_same_result(r, mcubes::vegas<32>(mcubes::suite::f4_gaussian{}, mcubes::region<32>::unit(), o2), "f4 d = 32");
  }
}

// ---- the integrator

/// Train with the map adapting, then measure with it frozen: bitwise one vegas() call that adapts
/// for the training iterations and skips them.
inline void integrator_train_then_measure_is_vegas(const settings& s) {
  const auto reg = mcubes::region<4>::unit();
  const mcubes::suite::f2_product_peak f{};
  mcubes::vegas_options all = s.first(small_vegas());
  all.max_iterations = 16;
  all.adapt_iterations = 6;
  all.skip = 6;
  all.min_iterations = 10;  // no convergence before the end
  all.rel_tol = 1e-12;
  const mcubes::result one = mcubes::vegas<4>(f, reg, all);

  mcubes::integrator<4> integ(reg, all);
  mcubes::vegas_options train = all;
  train.max_iterations = 6;
  train.min_iterations = 1;
  train.skip = 0;
  train.adapt_iterations = 6;
  integ.integrate(f, train);
  EXPECT_EQ(integ.state().next_iteration, 6);
  mcubes::vegas_options measure = all;
  measure.max_iterations = 10;
  measure.adapt_iterations = 0;
  measure.skip = 0;
  const mcubes::result two = integ.integrate(f, measure);
  EXPECT_EQ(bits(two.estimate), bits(one.estimate));
  EXPECT_EQ(bits(two.error), bits(one.error));
  EXPECT_EQ(bits(two.chi2_dof), bits(one.chi2_dof));
  ASSERT_EQ(two.records.size(), 10u);
  for (std::size_t k = 0; k < 10; ++k) {
    EXPECT_EQ(two.records[k].index, one.records[6 + k].index);
    EXPECT_EQ(bits(two.records[k].estimate), bits(one.records[6 + k].estimate)) << "iteration " << 6 + k;
  }
  // reset: a uniform map at iteration 0 again, the one-call result again
  integ.reset();
  expect_same_result(integ.integrate(f, all), one, "after reset");
}

/// Save / load round-trips the map and the state bitwise, and the loaded integrator continues with
/// the bits of the saved one; a map of another dimension or bin count is refused.
inline void integrator_map_save_load(const settings& s, const std::string& dir) {
  const auto reg = mcubes::region<3>::unit();
  const mcubes::suite::f3_corner_peak f{};
  mcubes::vegas_options o = s.first(small_vegas());
  o.max_iterations = 5;
  o.adapt_iterations = 5;
  o.skip = 0;
  o.min_iterations = 5;
  o.rel_tol = 1e-12;
  // A saved map holds the map and the iteration index, not VEGAS+'s per-sub-cube shares: the
  // bitwise continuation is the uniform stratification's (VEGAS+ restarts its allocation, below).
  o.stratification = mcubes::stratification_mode::uniform;
  mcubes::integrator<3> a(reg, o);
  a.integrate(f);
  const std::string path = dir + "/mcubes_map_test.json";
  mcubes::save_map(a, path);
  EXPECT_THROW(mcubes::save_map(a, dir + "/no such directory/map.json"), mcubes::error);  // and nothing half-written

  mcubes::integrator<3> b(reg, o);
  mcubes::load_map(b, path);
  const std::vector<double> ea = a.edges(), eb = b.edges();
  ASSERT_EQ(ea.size(), eb.size());
  for (std::size_t i = 0; i < ea.size(); ++i) ASSERT_EQ(bits(ea[i]), bits(eb[i])) << "edge " << i;
  EXPECT_EQ(b.state().next_iteration, a.state().next_iteration);
  EXPECT_EQ(bits(b.state().reference), bits(a.state().reference));
  expect_same_result(b.integrate(f), a.integrate(f), "continued after load");

  {  // VEGAS+: the loaded map continues validly, its allocation afresh (uniform counts first)
    mcubes::vegas_options plus = o;
    plus.stratification = mcubes::stratification_mode::adaptive;
    mcubes::integrator<3> p(reg, plus);
    mcubes::load_map(p, path);
    const mcubes::result r = p.integrate(f);
    EXPECT_EQ(r.records.front().index, a.state().next_iteration - 5);  // a ran 5 more since the save
    EXPECT_LE(std::fabs(r.estimate - mcubes::suite::exact_f3(3)) / r.error, max_pull);
  }

  mcubes::vegas_options other = o;
  other.n_bins = 100;
  mcubes::integrator<3> c(reg, other);
  EXPECT_THROW(mcubes::load_map(c, path), mcubes::invalid_input);
  mcubes::integrator<2> d(mcubes::region<2>::unit(), o);
  EXPECT_THROW(mcubes::load_map(d, path), mcubes::invalid_input);
  std::vector<double> bad = ea;
  bad[5] = bad[4];  // not strictly increasing
  EXPECT_THROW(b.set_edges(bad), mcubes::invalid_input);
  std::remove(path.c_str());
}

// ---- VEGAS+ (the default stratification) and the uniform m-Cubes grid

using mcubes_test::exact_eq45;  // Lepage's Eq. (45): tests/support/eq45.hpp
using mcubes_test::lepage_eq45;

/// VEGAS+ finds the three peaks of Eq. (45) at 2.5e5 calls per iteration (within 5 sigma of the
/// exact value, 1e-2 relative error at most after 30 iterations), where the uniform grid reports a
/// value near 2/3 (a peak missed); the two settings give the same bits.
inline void vegas_plus_finds_the_peaks_off_the_grid(const settings& s) {
  mcubes::vegas_options o;
  o.calls_per_iteration = 250000;
  o.max_iterations = 30;
  o.rel_tol = 2e-3;
  o.seed = 3;
  const mcubes::result r = mcubes::vegas<8>(lepage_eq45{}, mcubes::region<8>::unit(), s.first(o));
  EXPECT_EQ(r.options.stratification, mcubes::stratification_mode::adaptive);
  EXPECT_LE(std::fabs(r.estimate - exact_eq45()) / r.error, 5.0) << r.estimate << " +- " << r.error;
  EXPECT_LE(r.error, 1e-2);
  for (const mcubes::iteration_record& it : r.records) EXPECT_LE(it.n_eval, o.calls_per_iteration);
  expect_same_result(r, mcubes::vegas<8>(lepage_eq45{}, mcubes::region<8>::unit(), s.second(o)), "Eq. 45");
  mcubes::vegas_options u = o;
  u.stratification = mcubes::stratification_mode::uniform;
  u.max_iterations = 12;
  const mcubes::result ru = mcubes::vegas<8>(lepage_eq45{}, mcubes::region<8>::unit(), s.first(u));
  EXPECT_EQ(ru.options.stratification, mcubes::stratification_mode::uniform);
  EXPECT_LT(ru.estimate, 0.8) << "the uniform grid found the third peak: the test no longer shows the difference";
}

/// The map's damping follows the stratification unless given (options.hpp, alpha_for): alpha
/// auto (the default) is 1.0 under VEGAS+ and the paper's 1.5 under the uniform stratification,
/// bit for bit the runs given those values, and the result records the value used; the other
/// strategy's value gives another run.
inline void default_alpha_follows_the_stratification(const settings& s) {
  for (const auto mode : {mcubes::stratification_mode::adaptive, mcubes::stratification_mode::uniform}) {
    SCOPED_TRACE(mcubes::to_string(mode));
    mcubes::vegas_options o = small_vegas(100000);
    o.max_iterations = 10;
    o.rel_tol = 1e-9;  // every run makes its 10 iterations
    o.stratification = mode;
    ASSERT_EQ(o.alpha, mcubes::auto_alpha);
    const double used = mode == mcubes::stratification_mode::adaptive ? 1.0 : 1.5;
    const mcubes::result r = mcubes::vegas<4>(mcubes::suite::f4_gaussian{}, mcubes::region<4>::unit(), s.first(o));
    EXPECT_EQ(r.options.alpha, used);
    EXPECT_EQ(mcubes::alpha_for(o), used);
    o.alpha = used;
    expect_same_result(r, mcubes::vegas<4>(mcubes::suite::f4_gaussian{}, mcubes::region<4>::unit(), s.second(o)),
                       "alpha given");
    o.alpha = 2.5 - used;  // the other strategy's default
    const mcubes::result other = mcubes::vegas<4>(mcubes::suite::f4_gaussian{}, mcubes::region<4>::unit(), s.first(o));
    EXPECT_NE(other.estimate, r.estimate);
  }
}

/// VEGAS+ on the suite's f4 (6-D) and f2 (4-D): within 4 sigma, the allocation moves samples (the
/// iterations' evaluations differ from the first's), bitwise for both settings; beta = 0 spreads
/// them uniformly (every iteration the same count); the uniform stratification is m-Cubes (m p
/// evaluations an iteration, the paper's grid).
inline void vegas_plus_within_and_bitwise(const settings& s) {
  mcubes::vegas_options o = small_vegas(300000);
  const mcubes::result r = mcubes::vegas<6>(mcubes::suite::f4_gaussian{}, mcubes::region<6>::unit(), s.first(o));
  EXPECT_LE(std::fabs(r.estimate - mcubes::suite::exact_f4(6)) / r.error, max_pull);
  bool moved = false;
  for (const mcubes::iteration_record& it : r.records) {
    EXPECT_LE(it.n_eval, o.calls_per_iteration);
    moved = moved || it.n_eval != r.records.front().n_eval;
  }
  EXPECT_TRUE(moved) << "the counts never changed";
  expect_same_result(r, mcubes::vegas<6>(mcubes::suite::f4_gaussian{}, mcubes::region<6>::unit(), s.second(o)), "f4 6-D");

  mcubes::vegas_options flat = o;
  flat.beta = 0;
  const mcubes::result rf = mcubes::vegas<4>(mcubes::suite::f2_product_peak{}, mcubes::region<4>::unit(), s.first(flat));
  EXPECT_LE(std::fabs(rf.estimate - mcubes::suite::exact_f2(4)) / rf.error, max_pull);
  for (const mcubes::iteration_record& it : rf.records) EXPECT_EQ(it.n_eval, rf.records.front().n_eval);

  mcubes::vegas_options u = o;
  u.stratification = mcubes::stratification_mode::uniform;
  const mcubes::result ru = mcubes::vegas<4>(mcubes::suite::f2_product_peak{}, mcubes::region<4>::unit(), s.first(u));
  const mcubes::stratification g = mcubes::make_stratification(4, u.calls_per_iteration);
  for (const mcubes::iteration_record& it : ru.records) EXPECT_EQ(it.n_eval, g.n_eval());
  EXPECT_LE(std::fabs(ru.estimate - mcubes::suite::exact_f2(4)) / ru.error, max_pull);
  expect_same_result(ru, mcubes::vegas<4>(mcubes::suite::f2_product_peak{}, mcubes::region<4>::unit(), s.second(u)),
                     "uniform f2 4-D");
}

/// A small budget (1000 calls per iteration, vegas's usual): the map's bins are sized to it (100)
/// and no converged run of f4 4-D (a = 10) is beyond 4 sigma over seeds 1-30, with either
/// stratification.
inline void small_budget_honest(const settings& s) {
  for (const auto mode : {mcubes::stratification_mode::adaptive, mcubes::stratification_mode::uniform}) {
    int converged = 0;
    for (std::uint64_t seed = 1; seed <= 30; ++seed) {
      mcubes::vegas_options o;
      o.calls_per_iteration = 1000;
      o.rel_tol = 3e-3;
      o.seed = seed;
      o.stratification = mode;
      mcubes::suite::f4_params p;
      p.a = 10;
      const mcubes::result r = mcubes::vegas<4>(mcubes::suite::f4_gaussian{p}, mcubes::region<4>::unit(), s.first(o));
      EXPECT_EQ(r.options.n_bins, 100);
      if (r.status != mcubes::status::converged) continue;
      ++converged;
      EXPECT_LE(std::fabs(r.estimate - mcubes::suite::exact_f4(4, p)) / r.error, max_pull)
          << mcubes::to_string(mode) << " seed " << seed;
    }
    EXPECT_GT(converged, 15) << mcubes::to_string(mode);
  }
}

// ---- plain Monte Carlo, the midpoint rule, pi

inline void plain_mc_within_and_bitwise(const settings& s) {
  mcubes::plain_mc_options o;
  o.samples = 3000017;
  o.seed = 5;
  const auto reg = mcubes::region<3>::unit();
  const mcubes::result a = mcubes::plain_mc<3>(mcubes::suite::f3_corner_peak{}, reg, s.first(o));
  EXPECT_EQ(a.backend, mcubes::to_string(s.kind));
  EXPECT_LE(std::fabs(a.estimate - mcubes::suite::exact_f3(3)) / a.error, max_pull);
  expect_same_result(a, mcubes::plain_mc<3>(mcubes::suite::f3_corner_peak{}, reg, s.second(o)), "plain_mc");
}

/// The suite integrands f1..f6 (in the dimensions below) within 4 sigma of their exact values with
/// n samples, for two seeds.
inline void plain_mc_suite_within(const settings& s, std::uint64_t n) {
  auto check = [&](auto f, auto dim, double exact, const char* name) {
    constexpr int D = decltype(dim)::value;
    for (std::uint64_t seed : {11u, 12u}) {
      mcubes::plain_mc_options o;
      o.samples = n;
      o.seed = seed;
      const mcubes::result r = mcubes::plain_mc<D>(f, mcubes::region<D>::unit(), s.first(o));
      EXPECT_EQ(r.backend, mcubes::to_string(s.kind));
      EXPECT_LE(std::fabs(r.estimate - exact), max_pull * r.error) << name << " seed " << seed << ": " << r.estimate
                                                                    << " +- " << r.error;
    }
  };
  using mcubes::suite::exact_f1;
  check(mcubes::suite::f1_oscillatory{}, std::integral_constant<int, 5>{}, exact_f1(5), "f1");
  check(mcubes::suite::f2_product_peak{}, std::integral_constant<int, 3>{}, mcubes::suite::exact_f2(3), "f2");
  check(mcubes::suite::f3_corner_peak{}, std::integral_constant<int, 3>{}, mcubes::suite::exact_f3(3), "f3");
  check(mcubes::suite::f4_gaussian{}, std::integral_constant<int, 2>{}, mcubes::suite::exact_f4(2), "f4");
  check(mcubes::suite::f5_c0{}, std::integral_constant<int, 4>{}, mcubes::suite::exact_f5(4), "f5");
  check(mcubes::suite::f6_discontinuous{}, std::integral_constant<int, 3>{}, mcubes::suite::exact_f6(3), "f6");
}

struct cubic {
  MCUBES_HOST_DEVICE double operator()(const mcubes::point<2>& x) const { return x[0] * x[0] + 3 * x[0] * x[1] + 1.0; }
};

inline void midpoint_within_and_bitwise(const settings& s) {
  mcubes::midpoint_options o;
  o.rel_tol = 1e-6;
  const auto reg = mcubes::region<2>::unit();
  // exact: 1/3 + 3/4 + 1; the rule's error for x^2 is -1/(12 n^2) per axis
  const mcubes::result a = mcubes::midpoint<2>(cubic{}, reg, 999, s.first(o));
  const double exact = 1.0 / 3 + 0.75 + 1.0;
  EXPECT_NEAR(a.estimate, exact - 1.0 / (12.0 * 999 * 999), 1e-13);
  EXPECT_LE(std::fabs(a.estimate - exact), a.error);
  expect_same_result(a, mcubes::midpoint<2>(cubic{}, reg, 999, s.second(o)), "midpoint");
}

inline void pi_same_hits(const settings& s) {
  mcubes::pi_options o;
  o.samples = 20000001;
  o.seed = 3;
  const mcubes::pi_mc_result a = mcubes::pi_monte_carlo(s.first(o));
  mcubes::pi_options cpu = o;
  cpu.backend = mcubes::backend_kind::cpu;
  EXPECT_EQ(a.hits, mcubes::pi_monte_carlo(cpu).hits);  // every backend counts the same hits
  EXPECT_EQ(a.hits, mcubes::pi_monte_carlo(s.second(o)).hits);
  EXPECT_LE(std::fabs(a.estimate - 3.14159265358979323846) / a.error, max_pull);
}

}  // namespace mcubes_methods

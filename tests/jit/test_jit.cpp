/// @file tests/jit/test_jit.cpp
/// Integrands compiled at run time (include/mcubes/jit.hpp), with the system C++ compiler and, where
/// nvcc is installed, nvcc (a device runs it where one is present; without one the object is
/// compiled and loaded, and its run fails cleanly). Expressions and bodies with known integrals
/// within max_pull standard deviations; the same bits as the functor compiled ahead of time; every
/// error case; the cache (hit, checks, folders). Each test program uses a fresh cache folder.
#include <gtest/gtest.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <functional>
#include <complex>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include <sys/stat.h>
#include <unistd.h>

#include <mcubes/jit.hpp>
#include <mcubes/mcubes.hpp>

#include "support/results.hpp"

namespace {

namespace jit = mcubes::jit;

/// A result within this many of its reported standard deviations of the exact value passes.
constexpr double max_pull = 4;

std::string fresh_folder(const std::string& name) {
  std::string templ = ::testing::TempDir() + name + ".XXXXXX";
  std::vector<char> buf(templ.begin(), templ.end());
  buf.push_back('\0');
  EXPECT_NE(::mkdtemp(buf.data()), nullptr);
  return buf.data();
}

/// The cache folder of this test program: fresh for each run, shared by its tests.
const std::string& test_cache() {
  static const std::string dir = fresh_folder("jit_test_cache") + "/mcubes";
  return dir;
}

jit::compile_options copts() {
  jit::compile_options o;
  o.cache_dir = test_cache();
  return o;
}

mcubes::vegas_options small_vegas(std::uint64_t seed = 5) {
  mcubes::vegas_options o;
  o.calls_per_iteration = 100000;
  o.threads = 2;
  o.seed = seed;
  o.backend = mcubes::backend_kind::cpu;
  return o;
}

using mcubes_test::same_bits;

// ---------------------------------------------------------------------------------------------
// Known integrals.

struct known_case {
  const char* name;
  jit::integrand_source src;
  jit::box region;
  double exact;
};

double f4_exact(int d) { return std::pow(std::sqrt(M_PI) / 25 * std::erf(12.5), d); }

double sin_sum_exact(int d) {  // int over [0,1]^d of sin(x_1 + ... + x_d) = Im z^d, z = int_0^1 e^{ix} dx
  const std::complex<double> z(std::sin(1.0), 1.0 - std::cos(1.0));
  return std::pow(z, d).imag();
}

std::vector<known_case> known_cases() {
  return {
      {"gaussian_expression_2d", jit::expression("exp(-625*((x[0]-0.5)*(x[0]-0.5) + (x[1]-0.5)*(x[1]-0.5)))", 2),
       jit::box::unit(2), f4_exact(2)},
      {"product_3d", jit::expression("x[0] * x[1] * x[2]", 3), jit::box::unit(3), 0.125},
      {"cmath_overloads", jit::expression("abs(x[0] - 0.5) + pow(x[1], 2)", 2), jit::box::unit(2), 0.25 + 1.0 / 3},
      {"sin_sum_body_6d", jit::body("double s = 0; for (int i = 0; i < D; ++i) s += x[i]; return sin(s);", 6),
       jit::box::unit(6), sin_sum_exact(6)},
      {"quarter_disc_body", jit::body("const double r2 = x[0] * x[0] + x[1] * x[1];\nif (r2 < 1) return 1.0;\nreturn 0.0;", 2),
       jit::box::unit(2), M_PI / 4},
      {"box_per_axis", jit::expression("x[0] + x[1]", 2), jit::box{{0, 0}, {1, 2}}, 3.0},
      {"uses_D_on_a_cube", jit::expression("D * x[0] * x[0]", 2), jit::box::cube(2, 1, 3), 104.0 / 3},
      {"integer_constant", jit::expression("1", 2), jit::box::cube(2, 0, 2), 4.0},  // an int: converted to double
  };
}

void PrintTo(const known_case& c, std::ostream* os) { *os << c.name << ": " << c.src.text; }

class KnownIntegral : public ::testing::TestWithParam<known_case> {};

TEST_P(KnownIntegral, WithinMaxPullOfTheExactValue) {
  const known_case& c = GetParam();
  jit::compile_info info;
  const mcubes::result r = jit::vegas(c.src, c.region, small_vegas(), {}, copts(), &info);
  EXPECT_EQ(info.backend, "cpu");
  EXPECT_EQ(r.backend, "cpu");
  EXPECT_EQ(r.status, mcubes::status::converged) << mcubes::to_string(r.status);
  EXPECT_EQ(r.records.size(), static_cast<std::size_t>(r.iterations));
  EXPECT_LE(std::fabs(r.estimate - c.exact), max_pull * r.error)
      << c.name << ": " << r.estimate << " +- " << r.error << ", exact " << c.exact;
}

INSTANTIATE_TEST_SUITE_P(Jit, KnownIntegral, ::testing::ValuesIn(known_cases()),
                         [](const ::testing::TestParamInfo<known_case>& i) { return std::string(i.param.name); });

TEST(Jit, ParametersAreSetAtEachRunWithoutRecompiling) {
  const jit::compiled_integrand f =
      jit::compile(jit::expression("p[0] * x[0] + p[1]", 1, 2), jit::method::vegas, mcubes::backend_kind::cpu, copts());
  const mcubes::result a = f.vegas(jit::box::unit(1), small_vegas(), {}, {3.0, 1.0});
  const mcubes::result b = f.vegas(jit::box::unit(1), small_vegas(), {}, {1.0, 0.0});
  EXPECT_LE(std::fabs(a.estimate - 2.5), max_pull * a.error);
  EXPECT_LE(std::fabs(b.estimate - 0.5), max_pull * b.error);
  EXPECT_THROW(f.vegas(jit::box::unit(1), small_vegas(), {}, {1.0}), mcubes::invalid_input);
  EXPECT_THROW(f.plain_mc(jit::box::unit(1), {}, {1.0, 0.0}), mcubes::invalid_input);  // compiled for vegas
}

// A parameter batch (method vegas_batch): integral k has the bits of a single run (method vegas)
// with params[k] and the seed batch_seed(seed, k), and lies within max_pull of its exact value.
TEST(Jit, ABatchGivesTheBitsOfSingleRunsWithTheBatchSeeds) {
  const jit::integrand_source src = jit::expression("exp(-p[0] * x[0]) * (1 + p[1] * x[1])", 2, 2);
  const jit::compiled_integrand batch = jit::compile(src, jit::method::vegas_batch, mcubes::backend_kind::cpu, copts());
  const jit::compiled_integrand single = jit::compile(src, jit::method::vegas, mcubes::backend_kind::cpu, copts());
  EXPECT_EQ(batch.method(), jit::method::vegas_batch);
  const std::vector<std::vector<double>> params = {{1, 0}, {2, 0.5}, {4, 1}, {0.5, 2}};
  const jit::box region = jit::box::cube(2, 0, 2);
  int rounds = 0;
  const std::vector<mcubes::result> rs = batch.vegas_batch(region, params, small_vegas(7), [&](const mcubes::batch_progress& p) {
    ++rounds;
    EXPECT_EQ(p.integrals, params.size());
    return mcubes::run_control::proceed;
  });
  ASSERT_EQ(rs.size(), params.size());
  EXPECT_GT(rounds, 0);
  for (std::size_t k = 0; k < params.size(); ++k) {
    const double a = params[k][0], b = params[k][1];
    const double exact = (1 - std::exp(-2 * a)) / a * (2 + 2 * b);  // int_0^2 e^{-a x} dx * int_0^2 (1 + b y) dy
    mcubes::vegas_options o = small_vegas(7);
    o.seed = mcubes::batch_seed(7, k);
    const mcubes::result r = single.vegas(region, o, {}, params[k]);
    EXPECT_EQ(rs[k].seed, o.seed);
    EXPECT_EQ(rs[k].options.seed, o.seed);
    EXPECT_EQ(rs[k].backend, "cpu");
    EXPECT_EQ(rs[k].status, mcubes::status::converged) << k;
    EXPECT_TRUE(same_bits(rs[k].estimate, r.estimate)) << k << ": " << rs[k].estimate << " vs " << r.estimate;
    EXPECT_TRUE(same_bits(rs[k].error, r.error)) << k;
    EXPECT_EQ(rs[k].iterations, r.iterations) << k;
    ASSERT_EQ(rs[k].records.size(), r.records.size()) << k;
    for (std::size_t i = 0; i < r.records.size(); ++i) EXPECT_TRUE(same_bits(rs[k].records[i].estimate, r.records[i].estimate));
    EXPECT_LE(std::fabs(rs[k].estimate - exact), max_pull * rs[k].error)
        << k << ": " << rs[k].estimate << " +- " << rs[k].error << ", exact " << exact;
  }
  // Stopping at the first round boundary ends every integral, interrupted, with what it had done.
  const std::vector<mcubes::result> stopped =
      batch.vegas_batch(region, params, small_vegas(7), [](const mcubes::batch_progress&) { return mcubes::run_control::stop; });
  ASSERT_EQ(stopped.size(), params.size());
  for (std::size_t k = 0; k < params.size(); ++k) {
    EXPECT_EQ(stopped[k].status, mcubes::status::interrupted);
    EXPECT_LE(stopped[k].iterations, 1);
    EXPECT_LT(stopped[k].iterations, rs[k].iterations);
    EXPECT_EQ(stopped[k].records.size(), static_cast<std::size_t>(stopped[k].iterations));
  }
  // Bad calls: the other method's object, a parameter vector of another size, no integrals; a batch
  // needs parameters.
  EXPECT_THROW(single.vegas_batch(region, params, small_vegas()), mcubes::invalid_input);
  EXPECT_THROW(batch.vegas(region, small_vegas(), {}, params[0]), mcubes::invalid_input);
  EXPECT_THROW(batch.vegas_batch(region, {{1, 0}, {1}}, small_vegas()), mcubes::invalid_input);
  EXPECT_THROW(batch.vegas_batch(region, {}, small_vegas()), mcubes::invalid_input);
  EXPECT_THROW(jit::compile(jit::expression("x[0]", 1), jit::method::vegas_batch, mcubes::backend_kind::cpu, copts()),
               mcubes::invalid_input);
}

// A batch's checkpoints through the object (batch_resumption; the progresses cross the interface
// as encode_progresses bytes): stopped after its second round, the progresses the saver took
// continue to the bits of the batch never stopped, on another thread count; a `from` of another
// size is refused.
TEST(Jit, ABatchContinuesFromItsProgressesWithTheSameBits) {
  const jit::compiled_integrand batch =
      jit::compile(jit::expression("exp(-p[0] * x[0]) * (1 + p[1] * x[1])", 2, 2), jit::method::vegas_batch,
                   mcubes::backend_kind::cpu, copts());
  const std::vector<std::vector<double>> params = {{1, 0}, {2, 0.5}, {4, 1}};
  const jit::box region = jit::box::cube(2, 0, 2);
  mcubes::vegas_options o = small_vegas(9);
  o.rel_tol = 1e-14;
  o.skip = 1;
  o.min_iterations = 2;
  o.max_iterations = 7;
  int whole_rounds = 0, resumed_rounds = 0;
  const std::vector<mcubes::result> whole = batch.vegas_batch(region, params, o, [&](const mcubes::batch_progress&) {
    ++whole_rounds;
    return mcubes::run_control::proceed;
  });
  std::vector<mcubes::vegas_progress> saved;
  int saves = 0, rounds = 0;
  mcubes::batch_resumption first;
  first.save = [&](const std::function<std::vector<mcubes::vegas_progress>()>& progress, bool) {
    ++saves;
    saved = progress();
  };
  const std::vector<mcubes::result> part = batch.vegas_batch(region, params, o, [&](const mcubes::batch_progress&) {
    return ++rounds >= 2 ? mcubes::run_control::stop : mcubes::run_control::proceed;
  }, nullptr, first);
  EXPECT_GE(saves, 2);
  ASSERT_EQ(saved.size(), params.size());
  for (std::size_t k = 0; k < params.size(); ++k) {
    EXPECT_EQ(part[k].status, mcubes::status::interrupted);
    EXPECT_EQ(saved[k].records.size(), part[k].records.size());
  }
  mcubes::batch_resumption rest;
  rest.from = &saved;
  mcubes::vegas_options o3 = o;
  o3.threads = 3;
  const std::vector<mcubes::result> resumed = batch.vegas_batch(region, params, o3, [&](const mcubes::batch_progress&) {
    ++resumed_rounds;
    return mcubes::run_control::proceed;
  }, nullptr, rest);
  EXPECT_LT(resumed_rounds, whole_rounds) << "continued, not run again";
  ASSERT_EQ(resumed.size(), whole.size());
  for (std::size_t k = 0; k < whole.size(); ++k) {
    EXPECT_TRUE(same_bits(resumed[k].estimate, whole[k].estimate)) << k;
    EXPECT_TRUE(same_bits(resumed[k].error, whole[k].error)) << k;
    ASSERT_EQ(resumed[k].records.size(), whole[k].records.size()) << k;
    for (std::size_t i = 0; i < whole[k].records.size(); ++i)
      EXPECT_TRUE(same_bits(resumed[k].records[i].estimate, whole[k].records[i].estimate)) << k << " " << i;
  }
  std::vector<mcubes::vegas_progress> two(saved.begin(), saved.begin() + 2);
  rest.from = &two;
  EXPECT_THROW(batch.vegas_batch(region, params, o, {}, nullptr, rest), mcubes::invalid_input);
}

// A failing integral of a batch is a batch_error naming it, with the single run's exception nested.
TEST(Jit, AFailingIntegralOfABatchIsNamedWithItsFailureNested) {
  const jit::compiled_integrand batch = jit::compile(jit::expression("x[(int)(x[0] * p[0])]", 2, 1),
                                                     jit::method::vegas_batch, mcubes::backend_kind::cpu, copts());
  try {
    batch.vegas_batch(jit::box::unit(2), {{1.0}, {1.5}, {3.0}, {3.0}}, small_vegas());  // p[0] = 3 reads x[2]
    FAIL() << "no exception";
  } catch (const mcubes::batch_error& e) {
    EXPECT_EQ(e.integral(), 2u);
    EXPECT_EQ(std::string(e.what()).rfind("integral 2: x[2] read outside x[0] .. x[1] (D = 2)", 0), 0u) << e.what();
    try {
      std::rethrow_if_nested(e);
      FAIL() << "nothing nested";
    } catch (const jit::index_out_of_range& n) {
      EXPECT_EQ(n.index(), 2);
      ASSERT_EQ(n.point().size(), 2u);
      EXPECT_GE(n.point()[0], 2.0 / 3);
    }
  }
  // with `failures`: integrals 2 and 3 leave the batch with their typed failures, 0 and 1 are complete
  mcubes::batch_failures failures;
  const std::vector<mcubes::result> rs =
      batch.vegas_batch(jit::box::unit(2), {{1.0}, {1.5}, {3.0}, {3.0}}, small_vegas(), {}, &failures);
  ASSERT_EQ(rs.size(), 4u);
  ASSERT_EQ(failures.size(), 4u);
  EXPECT_FALSE(failures[0]);
  EXPECT_FALSE(failures[1]);
  const std::vector<mcubes::result> alone = batch.vegas_batch(jit::box::unit(2), {{1.0}, {1.5}}, small_vegas());
  for (std::size_t k : {0u, 1u}) {
    EXPECT_TRUE(same_bits(rs[k].estimate, alone[k].estimate)) << k;
    EXPECT_EQ(rs[k].iterations, alone[k].iterations) << k;
  }
  for (std::size_t k : {2u, 3u}) {
    ASSERT_TRUE(failures[k]) << k;
    EXPECT_EQ(rs[k].status, mcubes::status::interrupted) << k;
    EXPECT_EQ(rs[k].seed, mcubes::batch_seed(small_vegas().seed, k)) << k;
    try {
      std::rethrow_exception(failures[k]);
    } catch (const jit::index_out_of_range& n) {
      EXPECT_EQ(n.index(), 2);
      ASSERT_EQ(n.point().size(), 2u);
      EXPECT_GE(n.point()[0], 2.0 / 3);
    } catch (const std::exception& e) {
      ADD_FAILURE() << k << ": another exception: " << e.what();
    }
  }
}

TEST(Jit, PlainMonteCarloAndTheMidpointRule) {
  const jit::integrand_source src = jit::expression("x[0] * x[1]", 2);
  mcubes::plain_mc_options pm;
  pm.samples = 1000000;
  pm.threads = 2;
  const mcubes::result p = jit::plain_mc(src, jit::box::unit(2), pm, copts());
  EXPECT_LE(std::fabs(p.estimate - 0.25), max_pull * p.error) << p.estimate << " +- " << p.error;
  const mcubes::result m = jit::midpoint(src, jit::box::unit(2), 300, {}, copts());
  EXPECT_NEAR(m.estimate, 0.25, 1e-12);  // the rule is exact for a bilinear integrand
  // ... and bitwise what the same functor compiled ahead of time gives
  struct xy {
    double operator()(const mcubes::point<2>& x) const { return x[0] * x[1]; }
  };
  const mcubes::result pa = mcubes::plain_mc(xy{}, mcubes::region<2>::unit(), pm);
  EXPECT_TRUE(same_bits(p.estimate, pa.estimate) && same_bits(p.error, pa.error)) << p.estimate << " " << pa.estimate;
  const mcubes::result ma = mcubes::midpoint(xy{}, mcubes::region<2>::unit(), 300);
  EXPECT_TRUE(same_bits(m.estimate, ma.estimate) && same_bits(m.error, ma.error));
}

// ---------------------------------------------------------------------------------------------
// Determinism: the same bits as the functor compiled ahead of time (same text, same seed).

#define MCUBES_TEST_STR2(...) #__VA_ARGS__
#define MCUBES_TEST_STR(...) MCUBES_TEST_STR2(__VA_ARGS__)
#define F4_EXPR                                                                                                  \
  exp(-625 * ((x[0] - 0.5) * (x[0] - 0.5) + (x[1] - 0.5) * (x[1] - 0.5) + (x[2] - 0.5) * (x[2] - 0.5) +        \
              (x[3] - 0.5) * (x[3] - 0.5) + (x[4] - 0.5) * (x[4] - 0.5) + (x[5] - 0.5) * (x[5] - 0.5) +        \
              (x[6] - 0.5) * (x[6] - 0.5) + (x[7] - 0.5) * (x[7] - 0.5)))
#define F4_BODY                        \
  double s = 0;                        \
  for (int i = 0; i < D; ++i) {        \
    const double u = x[i] - 0.5;       \
    s += u * u;                        \
  }                                    \
  return exp(-625.0 * s);

struct f4_expression_aot {
  double operator()(const mcubes::point<8>& x) const {
    using std::exp;
    return F4_EXPR;
  }
};
struct f4_body_aot {
  double operator()(const mcubes::point<8>& x) const {
    using std::exp;
    constexpr int D = 8;
    F4_BODY
  }
};

using mcubes_test::expect_same_result;

/// The JitDeterminism tests compile with the default flags (-O3) whatever the environment says
/// (CTest gives every test MCUBES_JIT_CXXFLAGS=-O1, tests/CMakeLists.txt): the bits of a run-time
/// compiled integrand at -O3 against the test's functor compiled at the test build's level.
void default_flags_only() { ::unsetenv("MCUBES_JIT_CXXFLAGS"); }

TEST(JitDeterminism, F4ExpressionGivesTheBitsOfTheFunctorCompiledAheadOfTime) {
  default_flags_only();
  mcubes::vegas_options o = small_vegas(11);
  o.calls_per_iteration = 200000;
  o.max_iterations = 12;
  const mcubes::result aot = mcubes::vegas(f4_expression_aot{}, mcubes::region<8>::unit(), o);
  const mcubes::result j = jit::vegas(jit::expression(MCUBES_TEST_STR(F4_EXPR), 8), jit::box::unit(8), o, {}, copts());
  expect_same_result(j, aot);
  o.threads = 1;  // and for any number of threads (a cache hit)
  expect_same_result(jit::vegas(jit::expression(MCUBES_TEST_STR(F4_EXPR), 8), jit::box::unit(8), o, {}, copts()), aot);
}

TEST(JitDeterminism, F4BodyGivesTheBitsOfTheFunctorCompiledAheadOfTime) {
  default_flags_only();
  mcubes::vegas_options o = small_vegas(12);
  o.calls_per_iteration = 200000;
  o.max_iterations = 12;
  const mcubes::result aot = mcubes::vegas(f4_body_aot{}, mcubes::region<8>::unit(), o);
  const mcubes::result j = jit::vegas(jit::body(MCUBES_TEST_STR(F4_BODY), 8), jit::box::unit(8), o, {}, copts());
  expect_same_result(j, aot);
}

// A suite integrand compiled at run time (jit::suite_integrand, what the command does outside
// suite::precompiled_dims) gives the bits of its functor compiled ahead of time, as the command's
// runners evaluate it (with_parameters<F, P>{F{}, p}), in dimensions the command does not
// compile: f6 (branches) at the paper's parameters, and a batch of f4 (each member bitwise a
// single run by the batch's contract).
TEST(JitDeterminism, ASuiteIntegrandGivesTheBitsOfItsFunctorCompiledAheadOfTime) {
  default_flags_only();
  namespace suite = mcubes::suite;
  mcubes::vegas_options o = small_vegas(13);
  o.calls_per_iteration = 50000;
  o.max_iterations = 12;
  {
    using F = suite::f6_discontinuous;
    const mcubes::result aot = mcubes::vegas(mcubes::with_parameters<F, F::params_type>{F{}, F::params_type{}},
                                             mcubes::region<15>::unit(), o);
    const suite::entry& e = *suite::find("f6");
    const mcubes::result j =
        jit::vegas(jit::suite_integrand("f6", 15, 2), jit::box::unit(15), o, {}, copts(), nullptr, e.default_values());
    expect_same_result(j, aot);
  }
  {  // a batch: member k is bitwise the single run with batch_seed(seed, k)
    using F = suite::f4_gaussian;
    const std::vector<F::params_type> ps{{5.0, 0.4}, {6.0, 0.5}};
    const std::vector<mcubes::result> aot = mcubes::vegas_batch(F{}, mcubes::region<13>::unit(), ps, o);
    const jit::compiled_integrand b =
        jit::compile(jit::suite_integrand("f4", 13, 2), jit::method::vegas_batch, mcubes::backend_kind::cpu, copts());
    const std::vector<mcubes::result> j = b.vegas_batch(jit::box::unit(13), {{5.0, 0.4}, {6.0, 0.5}}, o);
    ASSERT_EQ(j.size(), 2u);
    for (std::size_t k = 0; k < 2; ++k) expect_same_result(j[k], aot[k]);
  }
}

TEST(JitDeterminism, TheIterationCallbackSeesEveryIterationAndMayStop) {
  const jit::integrand_source src = jit::expression("x[0] * x[1] * x[2]", 3);
  int calls = 0;
  const mcubes::result r = jit::vegas(src, jit::box::unit(3), small_vegas(), [&](const mcubes::iteration_record& rec,
                                                                                 const mcubes::result& so_far) {
    EXPECT_EQ(rec.index, calls);
    EXPECT_EQ(so_far.records.size(), static_cast<std::size_t>(calls + 1));
    return ++calls == 3 ? mcubes::run_control::stop : mcubes::run_control::proceed;
  }, copts());
  EXPECT_EQ(calls, 3);
  EXPECT_EQ(r.status, mcubes::status::interrupted);
  EXPECT_EQ(r.records.size(), 3u);
  // An exception thrown by the callback comes out of the run as it was thrown.
  struct stop_here {};
  EXPECT_THROW(jit::vegas(src, jit::box::unit(3), small_vegas(),
                          [](const mcubes::iteration_record&, const mcubes::result&) -> mcubes::run_control {
                            throw stop_here{};
                          },
                          copts()),
               stop_here);
}

// ---------------------------------------------------------------------------------------------
// Errors.

/// The compile_error of compiling `src` (the test fails if there is none).
jit::compile_error compile_failure(const jit::integrand_source& src) {
  try {
    jit::compile(src, jit::method::vegas, mcubes::backend_kind::cpu, copts());
  } catch (const jit::compile_error& e) {
    return e;
  }
  ADD_FAILURE() << "'" << src.text << "' compiled";
  return jit::compile_error("none", {});
}

TEST(JitErrors, SyntaxAndTypeErrorsAreReportedAgainstTheUserText) {
  {
    jit::integrand_source s = jit::expression("exp(-foo * x[0])", 1);
    s.label = "--expr";
    const jit::compile_error e = compile_failure(s);
    ASSERT_FALSE(e.diagnostics().empty());
    EXPECT_EQ(e.diagnostics()[0].line, 1);
    EXPECT_EQ(e.diagnostics()[0].column, 6);
    EXPECT_EQ(std::string(e.what()), "--expr:1:6: error: 'foo' was not declared in this scope");
    EXPECT_FALSE(e.compiler_output().empty());
    EXPECT_TRUE(dynamic_cast<const mcubes::invalid_input*>(&e) != nullptr);  // bad input: exit 2 in the command
  }
  {
    const jit::compile_error e = compile_failure(jit::body("double s = x[0];\nreturn s + bar;", 1));
    ASSERT_FALSE(e.diagnostics().empty());
    EXPECT_EQ(e.diagnostics()[0].line, 2);
    EXPECT_EQ(e.diagnostics()[0].column, 12);
    EXPECT_NE(std::string(e.what()).find("'bar' was not declared"), std::string::npos) << e.what();
  }
  {
    const jit::compile_error e = compile_failure(jit::expression("x", 2));  // the point itself is not a number
    EXPECT_NE(std::string(e.what()).find("cannot convert"), std::string::npos) << e.what();
    EXPECT_EQ(e.diagnostics().at(0).line, 1);
  }
  {
    const jit::compile_error e = compile_failure(jit::expression("x[0.5]", 2));  // no silent truncation
    EXPECT_EQ(e.diagnostics().at(0).line, 1);
  }
  {
    const jit::compile_error e = compile_failure(jit::body("if (x[0] < 0.5) return 1.0;", 1));
    EXPECT_NE(std::string(e.what()).find("the body can end without returning a value"), std::string::npos) << e.what();
  }
  {
    const jit::compile_error e = compile_failure(jit::body("double g(double);\nreturn g(x[0]);", 1));
    EXPECT_NE(std::string(e.what()).find("undefined reference to"), std::string::npos) << e.what();
  }
}

TEST(JitErrors, ConstantIndexOutOfRangeIsACompileError) {
  {
    const jit::compile_error e = compile_failure(jit::expression("x[0] + x[D]", 3));  // not a literal: the compiler
    ASSERT_FALSE(e.diagnostics().empty());
    EXPECT_EQ(e.diagnostics()[0].line, 1);
    EXPECT_GE(e.diagnostics()[0].column, 8);
    EXPECT_NE(std::string(e.what()).find("constant index i outside 0 .. D-1 (D = 3)"), std::string::npos) << e.what();
  }
  {
    const jit::compile_error e = compile_failure(jit::expression("x[3]", 3));  // a literal: before compiling
    EXPECT_TRUE(e.compiler_output().empty());
    EXPECT_NE(std::string(e.what()).find("x[3] is out of range"), std::string::npos);
  }
}

TEST(JitErrors, IndexOutOfRangeAtRunTimeNamesTheIndexAndThePoint) {
  try {
    jit::vegas(jit::expression("x[(int)(x[0] * 3)]", 2), jit::box::unit(2), small_vegas(), {}, copts());
    FAIL() << "no exception";
  } catch (const jit::index_out_of_range& e) {
    EXPECT_EQ(e.index(), 2);
    ASSERT_EQ(e.point().size(), 2u);
    EXPECT_GE(e.point()[0], 2.0 / 3);  // x[0] * 3 >= 2 there
    EXPECT_TRUE(std::isnan(e.value()));
    EXPECT_NE(std::string(e.what()).find("x[2] read outside x[0] .. x[1] (D = 2)"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find(mcubes::point_text(e.point())), std::string::npos) << e.what();
  }
}

TEST(JitErrors, NonFiniteValuesAreTheLibrarysException) {
  try {
    jit::vegas(jit::expression("log(x[0] - 0.5)", 1), jit::box::unit(1), small_vegas(), {}, copts());
    FAIL() << "no exception";
  } catch (const jit::index_out_of_range& e) {
    FAIL() << "not an index error: " << e.what();
  } catch (const mcubes::non_finite_integrand& e) {
    ASSERT_EQ(e.point().size(), 1u);
    EXPECT_LE(e.point()[0], 0.5);
    EXPECT_FALSE(std::isfinite(e.value()));
    EXPECT_NE(std::string(e.what()).find(mcubes::point_text(e.point())), std::string::npos) << e.what();
  }
  try {  // an overflow of f J: overflow_error with its sample
    jit::vegas(jit::expression("1e300", 1), jit::box::cube(1, 0, 1e10), small_vegas(), {}, copts());
    FAIL() << "no exception";
  } catch (const mcubes::overflow_error& e) {
    EXPECT_EQ(e.point().size(), 1u);
    EXPECT_EQ(e.value(), 1e300);
  } catch (const mcubes::numerical_error&) {  // or the estimate's own overflow, whichever is met first
  }
  EXPECT_THROW(jit::vegas(jit::expression("x[0]", 1), jit::box{{1}, {0}}, small_vegas(), {}, copts()),
               mcubes::invalid_input);
}

/// A stand-in for a compiler that hangs: answers --version, then sleeps with a child of its own.
std::string hanging_compiler(const std::string& dir) {
  const std::string path = dir + "/hanging-c++";
  std::ofstream(path) << "#!/bin/sh\n"
                         "if [ \"$1\" = --version ]; then echo 'g++ (hanging) 1.0'; exit 0; fi\n"
                         "sleep 30 &\n"
                         "echo $! > '"
                      << dir << "/child.pid'\nwait\n";
  ::chmod(path.c_str(), 0755);
  return path;
}

TEST(JitErrors, AHangingCompilerIsStoppedByTheTimeLimit) {
  const std::string dir = fresh_folder("jit_hang");
  jit::compile_options o = copts();
  o.cxx = hanging_compiler(dir);
  o.timeout_seconds = 1;
  const auto t0 = std::chrono::steady_clock::now();
  try {
    jit::compile(jit::expression("x[0]", 1), jit::method::vegas, mcubes::backend_kind::cpu, o);
    FAIL() << "no exception";
  } catch (const jit::toolchain_error& e) {
    EXPECT_NE(std::string(e.what()).find("did not finish within 1 s and was stopped"), std::string::npos) << e.what();
  }
  EXPECT_LT(std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count(), 15.0);
  o.timeout_seconds = 60;  // cancelled instead
  o.cancelled = [] { return true; };
  EXPECT_THROW(jit::compile(jit::expression("x[0]", 1), jit::method::vegas, mcubes::backend_kind::cpu, o),
               jit::compile_cancelled);
}

TEST(JitErrors, AMissingCompilerIsAToolchainError) {
  jit::compile_options o = copts();
  o.cxx = "/nonexistent/c++";
  try {
    jit::compile(jit::expression("x[0]", 1), jit::method::vegas, mcubes::backend_kind::cpu, o);
    FAIL() << "no exception";
  } catch (const jit::toolchain_error& e) {
    EXPECT_NE(std::string(e.what()).find("'/nonexistent/c++' was not found"), std::string::npos) << e.what();
  }
}

// ---------------------------------------------------------------------------------------------
// The cache.

TEST(JitCache, ASecondCompilationIsACheckedCacheHit) {
  const jit::integrand_source src = jit::expression("x[0] * x[0] * x[1] + 0.25", 2);
  const jit::compiled_integrand first = jit::compile(src, jit::method::vegas, mcubes::backend_kind::cpu, copts());
  EXPECT_FALSE(first.info().cache_hit);
  EXPECT_GT(first.info().compile_seconds, 0);
  EXPECT_EQ(first.info().object.rfind(test_cache() + "/jit/" + first.info().key + ".so", 0), 0u) << first.info().object;
  // the extra flags of the environment ($MCUBES_JIT_CXXFLAGS) come after the defaults, in order
  {
    const std::vector<std::string>& cmd = first.info().command;
    auto at = std::find(cmd.begin(), cmd.end(), "-O3");
    ASSERT_NE(at, cmd.end());
    for (const std::string& w : jit::env_extra_flags(false)) {
      at = std::find(at, cmd.end(), w);
      EXPECT_NE(at, cmd.end()) << w;
    }
  }
  const jit::compiled_integrand second = jit::compile(src, jit::method::vegas, mcubes::backend_kind::cpu, copts());
  EXPECT_TRUE(second.info().cache_hit);
  EXPECT_EQ(second.info().compile_seconds, 0);
  EXPECT_LT(second.info().total_seconds, 0.5);  // the benchmark has the figure (well under 50 ms)
  EXPECT_EQ(second.info().key, first.info().key);
  expect_same_result(second.vegas(jit::box::unit(2), small_vegas()), first.vegas(jit::box::unit(2), small_vegas()));
  // another dimension or text is another key (a CPU object of a precompiled dimension holds the
  // integrand only and serves every method: JitPoints below)
  EXPECT_NE(jit::compile(jit::expression(src.text, 3), jit::method::vegas, mcubes::backend_kind::cpu, copts()).info().key,
            first.info().key);

  // A changed object is not loaded: the lookup misses and the integrand is compiled again.
  {
    std::ofstream(first.info().object, std::ios::app | std::ios::binary) << "tampered";
  }
  const jit::compiled_integrand third = jit::compile(src, jit::method::vegas, mcubes::backend_kind::cpu, copts());
  EXPECT_FALSE(third.info().cache_hit);
  EXPECT_TRUE(jit::compile(src, jit::method::vegas, mcubes::backend_kind::cpu, copts()).info().cache_hit);
}

TEST(JitCache, XdgCacheHomeIsUsedWithPrivateFoldersAndUseCacheFalseKeepsNothing) {
  const std::string xdg = fresh_folder("jit_xdg");
  const char* old = std::getenv("XDG_CACHE_HOME");
  const std::string saved = old != nullptr ? old : "";
  ::setenv("XDG_CACHE_HOME", xdg.c_str(), 1);
  const jit::integrand_source src = jit::expression("x[0] + 2", 1);
  const jit::compiled_integrand f = jit::compile(src, jit::method::vegas, mcubes::backend_kind::cpu);
  if (old != nullptr) ::setenv("XDG_CACHE_HOME", saved.c_str(), 1);
  else ::unsetenv("XDG_CACHE_HOME");
  EXPECT_EQ(f.info().object.rfind(xdg + "/mcubes/jit/", 0), 0u) << f.info().object;
  for (const std::string& d : {xdg + "/mcubes", xdg + "/mcubes/jit"}) {
    struct stat st;
    ASSERT_EQ(::stat(d.c_str(), &st), 0) << d;
    EXPECT_EQ(st.st_mode & 0777, 0700u) << d;
  }
  const mcubes::result r = f.vegas(jit::box::unit(1), small_vegas());
  EXPECT_LE(std::fabs(r.estimate - 2.5), max_pull * r.error);

  jit::compile_options o = copts();
  o.use_cache = false;
  o.cache_dir = fresh_folder("jit_unused") + "/mcubes";
  const jit::compiled_integrand g = jit::compile(src, jit::method::vegas, mcubes::backend_kind::cpu, o);
  EXPECT_FALSE(g.info().cache_hit);
  struct stat st;
  EXPECT_NE(::stat(o.cache_dir.c_str(), &st), 0) << "use_cache = false made a cache folder";
  EXPECT_NE(::stat(g.info().object.c_str(), &st), 0) << "use_cache = false kept the object";
  expect_same_result(g.vegas(jit::box::unit(1), small_vegas()), r);
}

// ---------------------------------------------------------------------------------------------
// Points objects (jit/object_run.hpp): in this program (it links mcubes_jit_engine) a CPU object of
// a precompiled dimension holds the integrand only; the program runs every method with it.

TEST(JitPoints, OneObjectServesEveryMethod) {
  const jit::integrand_source src = jit::expression("x[0] * x[1] + x[2]", 3);
  const jit::compiled_integrand v = jit::compile(src, jit::method::vegas, mcubes::backend_kind::cpu, copts());
  const jit::compiled_integrand m = jit::compile(src, jit::method::plain_mc, mcubes::backend_kind::cpu, copts());
  const jit::compiled_integrand q = jit::compile(src, jit::method::midpoint, mcubes::backend_kind::cpu, copts());
  EXPECT_TRUE(m.info().cache_hit);
  EXPECT_TRUE(q.info().cache_hit);
  EXPECT_EQ(m.info().key, v.info().key);
  EXPECT_EQ(q.info().key, v.info().key);
  const double exact = 0.75;
  const mcubes::result rv = v.vegas(jit::box::unit(3), small_vegas());
  EXPECT_LE(std::fabs(rv.estimate - exact), max_pull * rv.error) << rv.estimate << " +- " << rv.error;
  mcubes::plain_mc_options po;
  po.samples = 200000;
  po.backend = mcubes::backend_kind::cpu;
  const mcubes::result rm = m.plain_mc(jit::box::unit(3), po);
  EXPECT_LE(std::fabs(rm.estimate - exact), max_pull * rm.error) << rm.estimate << " +- " << rm.error;
  mcubes::midpoint_options mo;
  mo.backend = mcubes::backend_kind::cpu;
  const mcubes::result rq = q.midpoint(jit::box::unit(3), 20, mo);
  EXPECT_NEAR(rq.estimate, exact, 1e-12);  // the midpoint rule is exact for this polynomial
  EXPECT_THROW(v.plain_mc(jit::box::unit(3), po), mcubes::invalid_input);  // the compiled_integrand keeps its method
}

TEST(JitPoints, WhatTheIntegrandThrowsIsTheLibrarysError) {
  const jit::integrand_source src = jit::body("if (x[0] > 0.9) throw 1;\nreturn x[0];", 2);
  try {
    jit::vegas(src, jit::box::unit(2), small_vegas(), {}, copts());
    ADD_FAILURE() << "the exception of the integrand was lost";
  } catch (const mcubes::error& e) {
    EXPECT_NE(std::string(e.what()).find("unknown exception in the compiled integrand"), std::string::npos) << e.what();
  }
}

// ---------------------------------------------------------------------------------------------
// CUDA: the generated unit compiled by nvcc (needs nvcc only); run where a device is present.

/// Whether nvcc is there: $CUDACXX, nvcc on PATH or /usr/local/cuda/bin/nvcc.
bool nvcc_found() {
  const char* cudacxx = std::getenv("CUDACXX");
  return (cudacxx != nullptr && !jit::find_program(cudacxx).empty()) || !jit::find_program("nvcc").empty() ||
         !jit::find_program("/usr/local/cuda/bin/nvcc").empty();
}

TEST(JitCuda, TheGeneratedUnitCompilesWithNvccAndRunsWhereADeviceIsPresent) {
  if (!nvcc_found()) GTEST_SKIP() << "no nvcc: the CUDA path of the run-time compilation is not testable here";
  const jit::cuda_device dev = jit::query_cuda_device(0);
  jit::compile_options o = copts();
  if (dev.count == 0) o.cuda_arch = "sm_90";  // compile (and load) for a device that is not here
  const jit::integrand_source src = jit::expression("exp(-625*((x[0]-0.5)*(x[0]-0.5) + (x[1]-0.5)*(x[1]-0.5)))", 2);
  const jit::compiled_integrand f = jit::compile(src, jit::method::vegas, mcubes::backend_kind::cuda, o);
  EXPECT_EQ(f.info().backend, "cuda");
  EXPECT_EQ(f.backend(), mcubes::backend_kind::cuda);
  // nvcc's steps run side by side (jit/nvcc_steps.hpp): the key names the schedule
  {
    std::ifstream key(f.info().object.substr(0, f.info().object.size() - 3) + ".key");
    std::stringstream text;
    text << key.rdbuf();
    EXPECT_NE(text.str().find(std::string("\nnvcc-steps ") + jit::nvcc_steps_recipe + "\n"), std::string::npos)
        << text.str();
  }
  mcubes::vegas_options v = small_vegas();
  v.backend = mcubes::backend_kind::cuda;
  if (dev.count == 0) {
    EXPECT_THROW(f.vegas(jit::box::unit(2), v), mcubes::error);  // no device: a clean failure, no crash
    GTEST_SKIP() << "compiled and loaded the CUDA object; no CUDA device to run it (" << dev.why << ")";
  }
  const mcubes::result r = f.vegas(jit::box::unit(2), v);
  EXPECT_EQ(r.backend, "cuda");
  EXPECT_EQ(r.status, mcubes::status::converged);
  EXPECT_LE(std::fabs(r.estimate - f4_exact(2)), max_pull * r.error) << r.estimate << " +- " << r.error;
  EXPECT_TRUE(jit::compile(src, jit::method::vegas, mcubes::backend_kind::cuda, o).info().cache_hit);
}

// A text that does not compile gets nvcc's own diagnostics (the plain nvcc command runs after
// nvcc's side-by-side steps fail, jit/nvcc_steps.hpp; the key of a good text names the steps'
// schedule: the test above).
TEST(JitCuda, ErrorsAreNvccsOwn) {
  if (!nvcc_found()) GTEST_SKIP() << "no nvcc: the CUDA path of the run-time compilation is not testable here";
  jit::compile_options o = copts();
  if (jit::query_cuda_device(0).count == 0) o.cuda_arch = "sm_90";
  jit::integrand_source bad = jit::body("double s = x[0];\nreturn s + bar;", 2);
  bad.label = "--body";
  try {
    jit::compile(bad, jit::method::vegas, mcubes::backend_kind::cuda, o);
    ADD_FAILURE() << "an undefined name compiled";
  } catch (const jit::compile_error& e) {
    ASSERT_FALSE(e.diagnostics().empty()) << e.compiler_output();
    EXPECT_EQ(e.diagnostics()[0].line, 2);
    EXPECT_NE(std::string(e.what()).find("\"bar\" is undefined"), std::string::npos) << e.what();
  }
}

// The batch entry (method vegas_batch, mcubes scan --expr) compiled by nvcc; where a device is
// present, integral k has the bits of the single CUDA run with its parameters and batch seed.
TEST(JitCuda, TheBatchEntryCompilesWithNvccAndMatchesSingleRunsWhereADeviceIsPresent) {
  if (!nvcc_found()) GTEST_SKIP() << "no nvcc: the CUDA path of the run-time compilation is not testable here";
  const jit::cuda_device dev = jit::query_cuda_device(0);
  jit::compile_options o = copts();
  if (dev.count == 0) o.cuda_arch = "sm_90";
  const jit::integrand_source src = jit::expression("exp(-p[0]*((x[0]-p[1])*(x[0]-p[1]) + (x[1]-0.5)*(x[1]-0.5)))", 2, 2);
  const jit::compiled_integrand batch = jit::compile(src, jit::method::vegas_batch, mcubes::backend_kind::cuda, o);
  EXPECT_EQ(batch.info().backend, "cuda");
  mcubes::vegas_options v = small_vegas();
  v.backend = mcubes::backend_kind::cuda;
  const std::vector<std::vector<double>> params = {{25, 0.5}, {100, 0.4}, {400, 0.6}};
  if (dev.count == 0) {
    EXPECT_THROW(batch.vegas_batch(jit::box::unit(2), params, v), mcubes::error);
    GTEST_SKIP() << "compiled and loaded the CUDA batch object; no CUDA device to run it (" << dev.why << ")";
  }
  const jit::compiled_integrand single = jit::compile(src, jit::method::vegas, mcubes::backend_kind::cuda, o);
  const std::vector<mcubes::result> rs = batch.vegas_batch(jit::box::unit(2), params, v);
  for (std::size_t k = 0; k < params.size(); ++k) {
    mcubes::vegas_options vk = v;
    vk.seed = mcubes::batch_seed(v.seed, k);
    const mcubes::result r = single.vegas(jit::box::unit(2), vk, {}, params[k]);
    EXPECT_EQ(rs[k].backend, "cuda");
    EXPECT_TRUE(same_bits(rs[k].estimate, r.estimate)) << k << ": " << rs[k].estimate << " vs " << r.estimate;
    EXPECT_TRUE(same_bits(rs[k].error, r.error)) << k;
    const double a = params[k][0], c = params[k][1], h = std::sqrt(M_PI / a) / 2;  // 1-D: int_0^1 e^{-a (x-c)^2}
    const double exact = h * (std::erf(std::sqrt(a) * (1 - c)) + std::erf(std::sqrt(a) * c)) * h *
                         2 * std::erf(std::sqrt(a) * 0.5);
    EXPECT_LE(std::fabs(rs[k].estimate - exact), max_pull * rs[k].error) << k << ": " << rs[k].estimate << " +- "
                                                                          << rs[k].error << ", exact " << exact;
  }
}

}  // namespace

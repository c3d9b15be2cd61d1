#pragma once
/// @file suite/registry.hpp
/// The compile-time registry of the suite: one descriptor type per integrand (its name, functor
/// type, dimensions, region, exact value and the paper's run settings), listed once in `all`. The
/// command, the benchmarks and the tests take their lists from here: for_each_integrand visits
/// every descriptor, visit_integrand finds one by name, visit_dimension turns a run-time dimension
/// into a compile-time one. Only what a caller visits is instantiated. The run-time table entries()
/// (for `mcubes list`, reports and messages) is generated from the same list.
///
/// Parameters: each descriptor lists its integrand's real parameters (`parameters`: name, the
/// paper's value, role; none for fA and fB), converts their values, in that order, to the functor's
/// parameter struct (make_params) and gives the exact value at any parameters (exact_with). At run
/// time the values travel as a std::vector<double> in the order of `parameters` (entry::exact_at,
/// functor_at).
///
/// Adding an integrand: its functor and exact value in suite.hpp, one descriptor here and its name
/// in `all`; the command needs one line of explicit instantiation (cli/dispatch_*.cpp and
/// cli/integrate_cuda_*.cu), or the link fails naming the missing runner.

#include <array>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

#include "../error.hpp"
#include "../suite.hpp"

namespace mcubes::suite {

/// Settings of one run as in the paper's reference code (the reference m-Cubes code, table 1).
struct run_settings {
  std::uint64_t calls;   ///< ncall: integrand evaluations per iteration (vegas_options::calls_per_iteration)
  int max_iterations;    ///< titer (vegas_options::max_iterations)
  int adapt_iterations;  ///< ita (vegas_options::adapt_iterations)
  int skip;              ///< leading iterations left out of the weighted estimate (vegas_options::skip)
};

/// One real parameter of a suite integrand: its name (`mcubes integrate NAME --param name=VALUE`),
/// its default (the paper's value) and its role in the formula, in words.
struct parameter {
  const char* name;      ///< "a" (difficulty) or "u" (shift)
  double default_value;  ///< the paper's value
  const char* role;      ///< e.g. "difficulty, multiplies the frequencies i (> 0)"
};

/// The common part of a descriptor: the functor type F (a template call operator over point<D>),
/// its parameter struct (F::params_type) and the dimensions MinDim..MaxDim it is offered in. Each
/// descriptor adds: name, description, formula (with the parameters), default_dim (the command's
/// default), study_dim (the dimension of the paper's accuracy study and of the benchmarks),
/// in_reference_table (a row of the reference code's table 1), lower/upper (the same bounds on
/// every axis), paper (table 1's settings), parameters, make_params(values), exact(d) (at the
/// paper's parameters) and exact_with(d, params).
template <class F, int MinDim, int MaxDim>
struct descriptor_base {
  using functor = F;
  using params = typename F::params_type;
  static constexpr int min_dim = MinDim;
  static constexpr int max_dim = MaxDim;
  static constexpr bool any_dim = MinDim != MaxDim;
};

namespace detail {
inline double exact_fA_dim(int d) {
  MCUBES_EXPECTS(d == 6, "suite: the exact value of fA is tabulated for d = 6 only, got ", d);
  return exact_fA();
}
inline double exact_fB_dim(int d) {
  MCUBES_EXPECTS(d == 9, "suite: the exact value of fB is tabulated for d = 9 only, got ", d);
  return exact_fB();
}
/// The roles of a and u, shared by the descriptors whose a is Genz's coefficient itself.
inline constexpr const char* shift_role = "shift, position on every axis (in [0, 1])";
}  // namespace detail

// Settings from the reference m-Cubes code, table 1 (ncall, titer, ita, skip). f1 is not in that
// table; our choice is (1e6, 100, 20, 5), the settings of f4 and f5: f1 is smooth, so the map gains
// little and the error comes down through stratification. At d = 5 (value 0.0202, small against
// |f| <= 1) a run converges to rel_tol 1e-3 in about 50 iterations (4e7 evaluations).

struct f1_desc : descriptor_base<f1_oscillatory, 1, max_suite_dim> {
  static constexpr const char* name = "f1";
  static constexpr const char* description = "oscillatory cos(sum i*x_i)";
  static constexpr int default_dim = 5;
  static constexpr int study_dim = 3;
  static constexpr bool in_reference_table = false;
  static constexpr double lower = 0.0, upper = 1.0;
  static constexpr run_settings paper{1000000, 100, 20, 5};
  static constexpr const char* formula = "cos(2 pi u + a sum i*x_i)";
  static constexpr std::array<parameter, 2> parameters{{
      {"a", 1.0, "difficulty, multiplies the frequencies i (> 0)"},
      {"u", 0.0, "shift, phase 2 pi u (in [0, 1])"}}};
  static params make_params(const double* v) { return {v[0], v[1]}; }
  static double exact(int d) { return exact_f1(d); }
  static double exact_with(int d, const params& p) { return exact_f1(d, p); }
};
struct f2_desc : descriptor_base<f2_product_peak, 1, max_suite_dim> {
  static constexpr const char* name = "f2";
  static constexpr const char* description = "product peak prod (1/50^2 + (x_i-1/2)^2)^-1";
  static constexpr int default_dim = 6;
  static constexpr int study_dim = 6;
  static constexpr bool in_reference_table = true;
  static constexpr double lower = 0.0, upper = 1.0;
  static constexpr run_settings paper{10000000, 100, 40, 10};
  static constexpr const char* formula = "prod (a^-2 + (x_i-u)^2)^-1";
  static constexpr std::array<parameter, 2> parameters{{
      {"a", 50.0, "difficulty, inverse half-width of the peak (> 0)"},
      {"u", 0.5, detail::shift_role}}};
  static params make_params(const double* v) { return {v[0], v[1]}; }
  static double exact(int d) { return exact_f2(d); }
  static double exact_with(int d, const params& p) { return exact_f2(d, p); }
};
struct f3_desc : descriptor_base<f3_corner_peak, 1, max_suite_dim> {
  static constexpr const char* name = "f3";
  static constexpr const char* description = "corner peak (1 + sum i*x_i)^(-d-1)";
  static constexpr int default_dim = 3;
  static constexpr int study_dim = 3;
  static constexpr bool in_reference_table = true;
  static constexpr double lower = 0.0, upper = 1.0;
  static constexpr run_settings paper{10000000, 100, 20, 0};
  static constexpr const char* formula = "(1 + a sum i*x_i)^(-d-1)";
  static constexpr std::array<parameter, 1> parameters{{{"a", 1.0, "difficulty, multiplies the coefficients i (> 0)"}}};
  static params make_params(const double* v) { return {v[0]}; }
  static double exact(int d) { return exact_f3(d); }
  static double exact_with(int d, const params& p) { return exact_f3(d, p); }
};
struct f4_desc : descriptor_base<f4_gaussian, 1, max_suite_dim> {
  static constexpr const char* name = "f4";
  static constexpr const char* description = "Gaussian exp(-625 sum (x_i-1/2)^2)";
  static constexpr int default_dim = 8;
  static constexpr int study_dim = 8;
  static constexpr bool in_reference_table = true;
  static constexpr double lower = 0.0, upper = 1.0;
  static constexpr run_settings paper{1000000, 100, 20, 5};
  static constexpr const char* formula = "exp(-a^2 sum (x_i-u)^2)";
  static constexpr std::array<parameter, 2> parameters{{
      {"a", 25.0, "difficulty, inverse width (> 0)"},
      {"u", 0.5, detail::shift_role}}};
  static params make_params(const double* v) { return {v[0], v[1]}; }
  static double exact(int d) { return exact_f4(d); }
  static double exact_with(int d, const params& p) { return exact_f4(d, p); }
};
struct f5_desc : descriptor_base<f5_c0, 1, max_suite_dim> {
  static constexpr const char* name = "f5";
  static constexpr const char* description = "C0 exp(-10 sum |x_i-1/2|)";
  static constexpr int default_dim = 8;
  static constexpr int study_dim = 8;
  static constexpr bool in_reference_table = true;
  static constexpr double lower = 0.0, upper = 1.0;
  static constexpr run_settings paper{1000000, 100, 20, 5};
  static constexpr const char* formula = "exp(-a sum |x_i-u|)";
  static constexpr std::array<parameter, 2> parameters{{
      {"a", 10.0, "difficulty, decay rate (> 0)"},
      {"u", 0.5, detail::shift_role}}};
  static params make_params(const double* v) { return {v[0], v[1]}; }
  static double exact(int d) { return exact_f5(d); }
  static double exact_with(int d, const params& p) { return exact_f5(d, p); }
};
struct f6_desc : descriptor_base<f6_discontinuous, 1, max_suite_dim> {
  static constexpr const char* name = "f6";
  static constexpr const char* description = "discontinuous exp(sum (i+4) x_i) if all x_i < (3+i)/10, else 0";
  static constexpr int default_dim = 6;
  static constexpr int study_dim = 6;
  static constexpr bool in_reference_table = true;
  static constexpr double lower = 0.0, upper = 1.0;
  static constexpr run_settings paper{10000000, 100, 20, 5};
  static constexpr const char* formula = "exp(a sum (i+4) x_i) if all x_i < u + (i-1)/10, else 0";
  static constexpr std::array<parameter, 2> parameters{{
      {"a", 1.0, "difficulty, multiplies the exponents i+4 (> 0)"},
      {"u", 0.4, "shift, threshold of axis 1; axis i: u + (i-1)/10 (in (0, 1])"}}};
  static params make_params(const double* v) { return {v[0], v[1]}; }
  static double exact(int d) { return exact_f6(d); }
  static double exact_with(int d, const params& p) { return exact_f6(d, p); }
};
struct fA_desc : descriptor_base<fA_sin_sum, 6, 6> {
  static constexpr const char* name = "fA";
  static constexpr const char* description = "sin(sum x_i) over (0,10)^6";
  static constexpr int default_dim = 6;
  static constexpr int study_dim = 6;
  static constexpr bool in_reference_table = true;
  static constexpr double lower = 0.0, upper = 10.0;
  static constexpr run_settings paper{2000000000, 10, 0, 0};
  static constexpr const char* formula = description;
  static constexpr std::array<parameter, 0> parameters{};
  static params make_params(const double*) { return {}; }
  static double exact(int d) { return detail::exact_fA_dim(d); }
  static double exact_with(int d, const params&) { return detail::exact_fA_dim(d); }
};
struct fB_desc : descriptor_base<fB_narrow_gaussian, 9, 9> {
  static constexpr const char* name = "fB";
  static constexpr const char* description =
      "narrow Gaussian (2 pi 0.01^2)^(-9/2) exp(-sum x_i^2 / (2 0.01^2)) over (-1,1)^9";
  static constexpr int default_dim = 9;
  static constexpr int study_dim = 9;
  static constexpr bool in_reference_table = true;
  static constexpr double lower = -1.0, upper = 1.0;
  static constexpr run_settings paper{100000000, 15, 10, 10};
  static constexpr const char* formula = description;
  static constexpr std::array<parameter, 0> parameters{};
  static params make_params(const double*) { return {}; }
  static double exact(int d) { return detail::exact_fB_dim(d); }
  static double exact_with(int d, const params&) { return detail::exact_fB_dim(d); }
};

/// A list of descriptor types.
template <class... Ds>
struct descriptor_list {};

/// The suite, in the order f1..f6, fA, fB: the one list of the project.
using all = descriptor_list<f1_desc, f2_desc, f3_desc, f4_desc, f5_desc, f6_desc, fA_desc, fB_desc>;

namespace detail {
template <class Fn, class... Ds>
void for_each(descriptor_list<Ds...>, Fn&& fn) {
  (fn(Ds{}), ...);
}
}  // namespace detail

/// Calls fn(Desc{}) for every descriptor of the suite, in order.
template <class Fn>
void for_each_integrand(Fn&& fn) {
  detail::for_each(all{}, std::forward<Fn>(fn));
}

/// Calls fn(Desc{}) for the descriptor named `name` and returns its result.
/// @throws invalid_input for an unknown name (listing the known ones).
template <class R, class Fn>
R visit_integrand(const std::string& name, Fn&& fn) {
  bool found = false;
  R out{};
  for_each_integrand([&](auto d) {
    if (!found && name == decltype(d)::name) {
      found = true;
      out = fn(d);
    }
  });
  if (!found) {
    std::string known;
    for_each_integrand([&](auto d) { known += std::string(known.empty() ? "" : ", ") + decltype(d)::name; });
    throw invalid_input("unknown integrand '" + name + "' (known: " + known + ")");
  }
  return out;
}

namespace detail {
template <int D, int Max, class R, class Fn>
R visit_dimension_from(int d, Fn& fn) {
  if constexpr (D == Max) {
    return fn(std::integral_constant<int, D>{});
  } else {
    if (d == D) return fn(std::integral_constant<int, D>{});
    return visit_dimension_from<D + 1, Max, R>(d, fn);
  }
}
}  // namespace detail

/// Calls fn(std::integral_constant<int, D>{}) for D = d, d in [Desc::min_dim, Desc::max_dim],
/// instantiating fn for every dimension of the integrand. @throws invalid_input naming the
/// integrand and its dimensions for any other d.
template <class Desc, class R, class Fn>
R visit_dimension(int d, Fn&& fn) {
  if (Desc::any_dim)
    MCUBES_EXPECTS(d >= Desc::min_dim && d <= Desc::max_dim, "dimension of ", Desc::name, " must be in [",
                   Desc::min_dim, ", ", Desc::max_dim, "], got ", d);
  else
    MCUBES_EXPECTS(d == Desc::min_dim, "dimension of ", Desc::name, " is fixed at ", Desc::min_dim, ", got ", d);
  return detail::visit_dimension_from<Desc::min_dim, Desc::max_dim, R>(d, fn);
}

/// The dimensions in which the `mcubes` command (and mcubes_bench) compiles the suite's integrands
/// ahead of time: d = 1..12 and 16 (fA's 6 and fB's 9 among them). Every (integrand, d) pair is a
/// whole instantiation of the sampling engine per backend (seconds of compiler time each), so the
/// command carries these and compiles any other d of f1..f6 (13..15, 17..32) at run time
/// (jit::suite_integrand, cached): the same functor, the same arithmetic, the same bits.
inline constexpr std::array<int, 13> precompiled_dims{{1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 16}};

/// Whether d is one of precompiled_dims.
constexpr bool is_precompiled_dim(int d) {
  for (int p : precompiled_dims)
    if (p == d) return true;
  return false;
}

namespace detail {
template <class Desc, std::size_t I, class R, class Fn>
R visit_precompiled_from(int d, Fn& fn) {
  if constexpr (I == precompiled_dims.size()) {
    throw invalid_input(std::string("the dimension ") + std::to_string(d) + " of " + Desc::name +
                        " is not compiled ahead of time (suite::precompiled_dims); compile it at run time");
  } else {
    constexpr int D = precompiled_dims[I];
    if constexpr (D >= Desc::min_dim && D <= Desc::max_dim) {
      if (d == D) return fn(std::integral_constant<int, D>{});
    }
    return visit_precompiled_from<Desc, I + 1, R>(d, fn);
  }
}
}  // namespace detail

/// As visit_dimension, instantiating fn only for the dimensions of Desc in precompiled_dims.
/// @throws invalid_input as visit_dimension for a d outside the integrand's dimensions, and for a
///         dimension of the integrand that is not precompiled (the caller routes those to the
///         run-time compiler first).
template <class Desc, class R, class Fn>
R visit_precompiled_dimension(int d, Fn&& fn) {
  if (Desc::any_dim)
    MCUBES_EXPECTS(d >= Desc::min_dim && d <= Desc::max_dim, "dimension of ", Desc::name, " must be in [",
                   Desc::min_dim, ", ", Desc::max_dim, "], got ", d);
  else
    MCUBES_EXPECTS(d == Desc::min_dim, "dimension of ", Desc::name, " is fixed at ", Desc::min_dim, ", got ", d);
  return detail::visit_precompiled_from<Desc, 0, R>(d, fn);
}

/// The parameters of Desc from their values in the order of Desc::parameters.
/// @throws invalid_input unless there is one value per parameter.
template <class Desc>
typename Desc::params params_from(const std::vector<double>& values) {
  MCUBES_EXPECTS(values.size() == Desc::parameters.size(), "suite: ", Desc::name, " takes ", Desc::parameters.size(),
                 " parameter values, got ", values.size());
  return Desc::make_params(values.data());
}

/// The functor of Desc holding the parameters p (fA, fB: the empty functor).
template <class Desc>
typename Desc::functor functor_with(const typename Desc::params& p) {
  if constexpr (Desc::parameters.size() == 0) {
    (void)p;
    return typename Desc::functor{};
  } else {
    return typename Desc::functor{p};
  }
}

/// The functor of Desc at the parameter values `values` (in the order of Desc::parameters; empty:
/// the paper's). Does not validate them (validate_params, exact_with do).
/// @throws invalid_input for a wrong number of values.
template <class Desc>
typename Desc::functor functor_at(const std::vector<double>& values) {
  if (values.empty()) return typename Desc::functor{};
  return functor_with<Desc>(params_from<Desc>(values));
}

namespace detail {
template <class Desc>
double exact_at(int d, const std::vector<double>& values) {
  const typename Desc::params p = params_from<Desc>(values);
  const double exact = Desc::exact_with(d, p);
  validate_params(d, p);  // all of it: exact_with leaves out the limit of a Vegas run (max_integrable_value)
  return exact;
}
template <class Desc>
std::vector<parameter> parameter_list() {
  return std::vector<parameter>(Desc::parameters.begin(), Desc::parameters.end());
}
}  // namespace detail

/// One integrand of the suite at run time (generated from the registry).
struct entry {
  std::string name;          ///< "f1".."f6", "fA", "fB"
  std::string description;   ///< the formula in words
  int default_dim;           ///< the paper's dimension (f1: 5, our choice; f1 is not in the paper's table)
  bool any_dim;              ///< true for f1..f6 (any d in 1..max_dim); false for fA (6-D) and fB (9-D)
  double lower, upper;       ///< the same bounds on every axis
  run_settings paper;        ///< the reference m-Cubes code table 1 (f1: our choice)
  double (*exact)(int d);    ///< exact value in dimension d (@throws invalid_input outside 1..max_dim,
                             ///< or d != default_dim when !any_dim)
  int max_dim;               ///< largest dimension with a claimed exact value (default_dim if !any_dim)
  std::string formula;       ///< the formula with its parameters a, u (fA, fB: the description)
  std::vector<parameter> parameters;  ///< its parameters, in order (empty for fA, fB)
  /// Exact value in dimension d at the parameter values `values` (in the order of `parameters`),
  /// the check of a run's integrand (the command calls it before running).
  /// @throws invalid_input as exact does, for a wrong number of values, and for values that
  /// suite::validate_params rejects (an integral beyond max_integrable_value included, e.g. the
  /// paper's f6 in d > 25) or where the closed form is unavailable (suite.hpp).
  double (*exact_at)(int d, const std::vector<double>& values);

  /// The default values of the parameters (the paper's), in order.
  std::vector<double> default_values() const {
    std::vector<double> v;
    for (const parameter& p : parameters) v.push_back(p.default_value);
    return v;
  }
};

/// The suite in the order of `all`, as data.
inline const std::vector<entry>& entries() {
  static const std::vector<entry> table = [] {
    std::vector<entry> t;
    for_each_integrand([&](auto d) {
      using D = decltype(d);
      t.push_back(entry{D::name, D::description, D::default_dim, D::any_dim, D::lower, D::upper, D::paper, &D::exact,
                        D::max_dim, D::formula, detail::parameter_list<D>(), &detail::exact_at<D>});
    });
    return t;
  }();
  return table;
}

/// The entry named `name` ("f1".."f6", "fA", "fB"; exact match), or nullptr if there is none.
inline const entry* find(const std::string& name) {
  for (const entry& e : entries())
    if (e.name == name) return &e;
  return nullptr;
}

/// "a = 2, u = 0.25": parameter values (in the order of e.parameters) as text, the shortest decimal
/// that reads back as each value; "" for an integrand without parameters.
inline std::string params_text(const entry& e, const std::vector<double>& values) {
  std::string s;
  for (std::size_t k = 0; k < e.parameters.size() && k < values.size(); ++k)
    s += (k ? ", " : "") + std::string(e.parameters[k].name) + " = " + detail::number_text(values[k]);
  return s;
}

}  // namespace mcubes::suite

#pragma once
/// @file suite/registry.hpp
/// The compile-time registry of the suite: one descriptor type per integrand (its name, functor
/// type, dimensions, region, exact value and the paper's run settings), listed once in `all`. The
/// command, the benchmarks and the tests take their lists from here: for_each_integrand visits
/// every descriptor, visit_integrand finds one by name, visit_dimension turns a run-time dimension
/// into a compile-time one. Only what a caller visits is instantiated. The run-time table entries()
/// (for `mcubes list`, reports and messages) is generated from the same list.
///
/// Adding an integrand: its functor and exact value in suite.hpp, one descriptor here and its name
/// in `all`; the command needs one line of explicit instantiation (cli/dispatch_*.cpp and
/// cli/integrate_cuda_*.cu), or the link fails naming the missing runner.

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

/// The common part of a descriptor: the functor type F (a template call operator over point<D>)
/// and the dimensions MinDim..MaxDim it is offered in. Each descriptor adds: name, description,
/// default_dim (the command's default), study_dim (the dimension of the paper's accuracy study and
/// of the benchmarks), in_reference_table (a row of the reference code's table 1), lower/upper (the
/// same bounds on every axis), paper (table 1's settings) and exact(d).
template <class F, int MinDim, int MaxDim>
struct descriptor_base {
  using functor = F;
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
  static double exact(int d) { return exact_f1(d); }
};
struct f2_desc : descriptor_base<f2_product_peak, 1, max_suite_dim> {
  static constexpr const char* name = "f2";
  static constexpr const char* description = "product peak prod (1/50^2 + (x_i-1/2)^2)^-1";
  static constexpr int default_dim = 6;
  static constexpr int study_dim = 6;
  static constexpr bool in_reference_table = true;
  static constexpr double lower = 0.0, upper = 1.0;
  static constexpr run_settings paper{10000000, 100, 40, 10};
  static double exact(int d) { return exact_f2(d); }
};
struct f3_desc : descriptor_base<f3_corner_peak, 1, max_suite_dim> {
  static constexpr const char* name = "f3";
  static constexpr const char* description = "corner peak (1 + sum i*x_i)^(-d-1)";
  static constexpr int default_dim = 3;
  static constexpr int study_dim = 3;
  static constexpr bool in_reference_table = true;
  static constexpr double lower = 0.0, upper = 1.0;
  static constexpr run_settings paper{10000000, 100, 20, 0};
  static double exact(int d) { return exact_f3(d); }
};
struct f4_desc : descriptor_base<f4_gaussian, 1, max_suite_dim> {
  static constexpr const char* name = "f4";
  static constexpr const char* description = "Gaussian exp(-625 sum (x_i-1/2)^2)";
  static constexpr int default_dim = 8;
  static constexpr int study_dim = 8;
  static constexpr bool in_reference_table = true;
  static constexpr double lower = 0.0, upper = 1.0;
  static constexpr run_settings paper{1000000, 100, 20, 5};
  static double exact(int d) { return exact_f4(d); }
};
struct f5_desc : descriptor_base<f5_c0, 1, max_suite_dim> {
  static constexpr const char* name = "f5";
  static constexpr const char* description = "C0 exp(-10 sum |x_i-1/2|)";
  static constexpr int default_dim = 8;
  static constexpr int study_dim = 8;
  static constexpr bool in_reference_table = true;
  static constexpr double lower = 0.0, upper = 1.0;
  static constexpr run_settings paper{1000000, 100, 20, 5};
  static double exact(int d) { return exact_f5(d); }
};
struct f6_desc : descriptor_base<f6_discontinuous, 1, max_suite_dim> {
  static constexpr const char* name = "f6";
  static constexpr const char* description = "discontinuous exp(sum (i+4) x_i) if all x_i < (3+i)/10, else 0";
  static constexpr int default_dim = 6;
  static constexpr int study_dim = 6;
  static constexpr bool in_reference_table = true;
  static constexpr double lower = 0.0, upper = 1.0;
  static constexpr run_settings paper{10000000, 100, 20, 5};
  static double exact(int d) { return exact_f6(d); }
};
struct fA_desc : descriptor_base<fA_sin_sum, 6, 6> {
  static constexpr const char* name = "fA";
  static constexpr const char* description = "sin(sum x_i) over (0,10)^6";
  static constexpr int default_dim = 6;
  static constexpr int study_dim = 6;
  static constexpr bool in_reference_table = true;
  static constexpr double lower = 0.0, upper = 10.0;
  static constexpr run_settings paper{2000000000, 10, 0, 0};
  static double exact(int d) { return detail::exact_fA_dim(d); }
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
  static double exact(int d) { return detail::exact_fB_dim(d); }
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
};

/// The suite in the order of `all`, as data.
inline const std::vector<entry>& entries() {
  static const std::vector<entry> table = [] {
    std::vector<entry> t;
    for_each_integrand([&](auto d) {
      using D = decltype(d);
      t.push_back(entry{D::name, D::description, D::default_dim, D::any_dim, D::lower, D::upper, D::paper, &D::exact,
                        D::max_dim});
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

}  // namespace mcubes::suite

// The native part of the Python module, `mcubes._mcubes`: the library's methods for NumPy
// callables (array integrands, dims_impl.hpp), for expressions compiled at run time
// (include/mcubes/jit.hpp, when the library has it), the integrator object, the suite's exact
// values and the C++ reference runs. The Python-level API (keyword options, the result object,
// summary()) is python/mcubes/__init__.py; this file takes and returns plain values and dicts.
//
// Errors: mcubes::invalid_input -> ValueError (the C++ message); non_finite_integrand (and its
// table_out_of_range, index_out_of_range) -> mcubes.NonFiniteIntegrand with .point (NumPy array),
// .value, .iteration, .sample_index; numerical_error -> mcubes.NumericalError (overflow_error with
// .point, .value, .jacobian); any other mcubes::error (a CUDA failure, a toolchain failure) ->
// RuntimeError; the callable's own exceptions propagate unchanged. Ctrl-C: the iteration callback
// checks for signals with the GIL (PyErr_CheckSignals) and raises KeyboardInterrupt, which ends the
// run at that iteration boundary. Options: one table per options struct (option_table), each value
// converted by its field's C++ type: TypeError or ValueError naming the option, the value and what
// is accepted. A callable's complex (or other non-real) values: TypeError. mcubes.Integrator: one
// call at a time, RuntimeError for a call while another is in progress (py_integrator).

#include <algorithm>
#include <atomic>
#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <limits>
#include <memory>
#include <optional>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

#include <pybind11/numpy.h>
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include "bindings.hpp"
#include "mcubes/result_io.hpp"
#include "mcubes/suite/registry.hpp"

#if defined(__GLIBC__)
#include <malloc.h>
#endif

#if __has_include("mcubes/jit.hpp")
#include "mcubes/jit.hpp"
#define MCUBES_PYTHON_HAS_JIT 1
#else
#define MCUBES_PYTHON_HAS_JIT 0
#endif

namespace mcubes::python {

void py_callable::operator()(const double* x, std::size_t n, double* values) const {
  py::gil_scoped_acquire gil;
  const auto rows = static_cast<py::ssize_t>(n), cols = static_cast<py::ssize_t>(dim);
  // a pooled array of this shape that nobody else holds, else a new one (pooled: at most 16)
  py::object held;
  std::vector<py::object>& arrays = pool->arrays;
  std::size_t spare = arrays.size();
  for (std::size_t i = 0; i < arrays.size() && !held; ++i) {
    if (Py_REFCNT(arrays[i].ptr()) != 1) continue;  // in use by another thread, or kept by the callable
    if (py::detail::array_proxy(arrays[i].ptr())->dimensions[0] == rows) held = arrays[i];
    else spare = i;
  }
  if (!held) {
    py::array_t<double> a({rows, cols});
    py::detail::array_proxy(a.ptr())->flags &= ~py::detail::npy_api::NPY_ARRAY_WRITEABLE_;  // read-only
    held = a;
    if (arrays.size() < 16) arrays.push_back(held);
    else if (spare < arrays.size()) arrays[spare] = held;
  }
  py::array points = py::reinterpret_borrow<py::array>(held);
  if (n != 0)
    std::memcpy(py::detail::array_proxy(points.ptr())->data, x, n * static_cast<std::size_t>(dim) * sizeof(double));
  py::object r;
  try {
    r = py::reinterpret_borrow<py::object>(fn)(points);
  } catch (py::error_already_set& e) {
    if (watch == nullptr || !e.matches(PyExc_KeyboardInterrupt)) throw;
    watch->keyboard = true;  // Ctrl-C inside the callable: the run stops with its completed iterations
    watch->stop.request();
    throw pass_abandoned();
  }
  // real values only: a complex array would be cast to its real part, a string array parsed
  const py::array any = py::array::ensure(r);
  const char kind = any ? any.dtype().kind() : 'O';
  if (any && kind != 'b' && kind != 'i' && kind != 'u' && kind != 'f' && kind != 'O')
    throw py::type_error(std::string("the integrand must return real values (float64), got ") +
                         (kind == 'c' ? "complex values: " : "") + std::string(py::str(py::type::of(r).attr("__name__"))) +
                         " of dtype " + std::string(py::str(any.dtype())) +
                         (kind == 'c' ? " (take .real or abs() of them explicitly)" : ""));
  auto v = py::array_t<double, py::array::c_style | py::array::forcecast>::ensure(any ? py::object(any) : r);
  if (!v)
    throw py::type_error("the integrand must return float64 values: an array of shape (n,) for x of shape (n, d), got " +
                         std::string(py::str(py::type::of(r))));
  const int m = components > 0 ? components : 1;
  const bool shape_ok = components == 0 ? v.ndim() == 1 && v.shape(0) == rows
                                        : v.shape(0) == rows && ((v.ndim() == 2 && v.shape(1) == m) || (v.ndim() == 1 && m == 1));
  if (!shape_ok)
    throw py::value_error("the integrand must return an array of shape (" + std::to_string(n) +
                          (components > 0 ? ", " + std::to_string(components) : std::string(",")) + ") for x of shape (" +
                          std::to_string(n) + ", " + std::to_string(dim) + "), got shape " +
                          std::string(py::str(py::getattr(v, "shape"))));
  const int stride = width > m ? width : m;
  if (n == 0) return;
  if (stride == m) {
    std::memcpy(values, v.data(), n * static_cast<std::size_t>(m) * sizeof(double));
    return;
  }
  for (std::size_t i = 0; i < n; ++i) {  // a wider instantiation: the padding columns are 0
    std::memcpy(values + i * static_cast<std::size_t>(stride), v.data() + i * static_cast<std::size_t>(m), m * sizeof(double));
    std::fill(values + i * static_cast<std::size_t>(stride) + m, values + (i + 1) * static_cast<std::size_t>(stride), 0.0);
  }
}

namespace {

PyObject* non_finite_type = nullptr;
PyObject* numerical_type = nullptr;

dim_entry dims[max_dim + 1];
vector_entry vector_dims[max_dim + 1][max_components + 1];

box make_box(const std::vector<double>& lower, const std::vector<double>& upper) {
  MCUBES_EXPECTS(lower.size() == upper.size(), "region: ", lower.size(), " lower and ", upper.size(),
                 " upper bounds (one (lower, upper) pair per axis)");
  MCUBES_EXPECTS(!lower.empty(), "region: at least one axis is needed");
  return box{lower, upper};
}

const dim_entry& entry_for(int d) {
  MCUBES_EXPECTS(d >= 1 && d <= max_dim, "a Python callable integrand takes 1 to ", max_dim,
                 " dimensions in this build, got ", d, " (an expression string takes more)");
  return dims[d];
}

backend_kind backend_of(const std::string& s) {
  if (s == "cpu") return backend_kind::cpu;
  if (s == "cuda") return backend_kind::cuda;
  if (s == "auto" || s == "automatic") return backend_kind::automatic;
  MCUBES_EXPECTS(false, "backend must be 'cpu', 'cuda' or 'auto', got '", s, "'");
  return backend_kind::cpu;
}

// ---- Conversion of option values and integer arguments -----------------------------------------
// One mechanism for every keyword: the table of each method's options (option_table) names each
// field once; the field's C++ type picks the conversion (to_value), which accepts exactly the
// Python values that the type represents and otherwise raises TypeError (a value of another type)
// or ValueError (outside the type's range), naming the option, what it got and what is accepted.
// The library's own checks (options.hpp, validate) then give the ranges of the method.

/// "str '1e5'": a value in a message, its Python type then its repr (at most 80 characters).
std::string typed_text(py::handle v) {
  std::string r = py::repr(v);
  if (r.size() > 80) r = r.substr(0, 77) + "...";
  return std::string(py::str(py::type::of(v).attr("__name__"))) + " " + r;
}

std::string value_text(py::handle v) {
  std::string r = py::repr(v);
  return r.size() > 80 ? r.substr(0, 77) + "..." : r;
}

bool is_instance(py::handle v, const char* module, const char* name) {
  const py::object type = py::module_::import(module).attr(name);
  const int r = PyObject_IsInstance(v.ptr(), type.ptr());
  if (r < 0) throw py::error_already_set();
  return r == 1;
}

bool is_bool(py::handle v) { return PyBool_Check(v.ptr()) || is_instance(v, "numpy", "bool_"); }

/// An integer bound as text: 2^64 - 1, -2^31, 2^31 - 1, or the number itself.
template <class T>
std::string bound_text(T x) {
  if constexpr (std::is_unsigned_v<T> && sizeof(T) == 8) {
    if (x == std::numeric_limits<T>::max()) return "2^64 - 1";
  } else if constexpr (std::is_signed_v<T> && sizeof(T) == 4) {
    if (x == std::numeric_limits<T>::max()) return "2^31 - 1";
    if (x == std::numeric_limits<T>::min()) return "-2^31";
  }
  return std::to_string(x);
}

/// `v` as an integer of type T in [lo, hi]: a Python or NumPy integer, or a real number with an
/// integral value (1e5, 2.0). @throws py::type_error for another type (bool included: True is no
/// count), py::value_error for a fraction, an infinity, NaN or a value outside [lo, hi].
template <class T>
T integer_value(const char* name, py::handle v, T lo = std::numeric_limits<T>::min(), T hi = std::numeric_limits<T>::max()) {
  const std::string range = std::string(name) + " must be an integer in [" + bound_text(lo) + ", " + bound_text(hi) + "]";
  if (is_bool(v) || !is_instance(v, "numbers", "Real"))
    throw py::type_error(std::string(name) + " must be an integer, got " + typed_text(v));
  py::object i;
  if (is_instance(v, "numbers", "Integral")) {
    i = py::reinterpret_steal<py::object>(PyNumber_Index(v.ptr()));
    if (!i) throw py::error_already_set();
  } else {
    const double x = PyFloat_AsDouble(v.ptr());
    if (x == -1.0 && PyErr_Occurred()) throw py::error_already_set();
    if (!std::isfinite(x) || x != std::floor(x))
      throw py::value_error(std::string(name) + " must be an integer, got " + value_text(v));
    i = py::reinterpret_steal<py::object>(PyLong_FromDouble(x));
    if (!i) throw py::error_already_set();
  }
  // compare as Python integers: no overflow whatever the value's size
  const auto lt = [](const py::object& a, const py::object& b) {
    const int r = PyObject_RichCompareBool(a.ptr(), b.ptr(), Py_LT);
    if (r < 0) throw py::error_already_set();
    return r == 1;
  };
  if (lt(i, py::int_(lo)) || lt(py::int_(hi), i)) throw py::value_error(range + ", got " + value_text(v));
  return py::cast<T>(i);
}

/// `v` as a double: a Python or NumPy real number (bool excepted). @throws py::type_error for
/// another type (a string, a complex number), py::value_error for an integer beyond the double
/// range.
double real_value(const char* name, py::handle v) {
  if (is_bool(v) || !is_instance(v, "numbers", "Real"))
    throw py::type_error(std::string(name) + " must be a real number (int or float), got " + typed_text(v));
  const double x = PyFloat_AsDouble(v.ptr());
  if (x == -1.0 && PyErr_Occurred()) {
    PyErr_Clear();
    throw py::value_error(std::string(name) + " must be a real number within the double range, got " + value_text(v));
  }
  return x;
}

void to_value(const char* name, py::handle v, bool& out) {
  if (!is_bool(v)) throw py::type_error(std::string(name) + " must be a bool (True or False), got " + typed_text(v));
  out = PyObject_IsTrue(v.ptr()) == 1;
}
template <class T, std::enable_if_t<std::is_integral_v<T> && !std::is_same_v<T, bool>, int> = 0>
void to_value(const char* name, py::handle v, T& out) {
  out = integer_value<T>(name, v);
}
void to_value(const char* name, py::handle v, double& out) { out = real_value(name, v); }
void to_value(const char* name, py::handle v, backend_kind& out) {
  if (!py::isinstance<py::str>(v))
    throw py::type_error(std::string(name) + " must be a str ('cpu', 'cuda' or 'auto'), got " + typed_text(v));
  out = backend_of(py::cast<std::string>(v));
}

void to_value(const char* name, py::handle v, stratification_mode& out) {
  if (!py::isinstance<py::str>(v))
    throw py::type_error(std::string(name) + " must be a str ('adaptive' (VEGAS+) or 'uniform' (m-Cubes)), got " +
                         typed_text(v));
  const std::string text = py::cast<std::string>(v);
  if (text == "adaptive")
    out = stratification_mode::adaptive;
  else if (text == "uniform")
    out = stratification_mode::uniform;
  else
    throw py::value_error(std::string(name) + " must be 'adaptive' (VEGAS+) or 'uniform' (m-Cubes), got '" + text + "'");
}

void to_value(const char* name, py::handle v, std::vector<int>& out) {
  if (py::isinstance<py::str>(v) || !(py::isinstance<py::list>(v) || py::isinstance<py::tuple>(v)))
    throw py::type_error(std::string(name) + " must be a list of CUDA device ordinals (e.g. [0, 1]), got " +
                         typed_text(v));
  std::vector<int> devices;
  for (py::handle d : v) devices.push_back(integer_value<int>(name, d, 0, 1023));
  MCUBES_EXPECTS(devices.size() <= 64, name, " lists ", devices.size(), " devices, at most 64");
  out = std::move(devices);
}

py::object to_python(bool x) { return py::bool_(x); }
py::object to_python(stratification_mode m) { return py::str(to_string(m)); }
template <class T, std::enable_if_t<std::is_integral_v<T> && !std::is_same_v<T, bool>, int> = 0>
py::object to_python(T x) {
  return py::int_(x);
}
py::object to_python(double x) { return py::float_(x); }
py::object to_python(const std::vector<int>& v) {
  py::list l;
  for (int d : v) l.append(py::int_(d));
  return l;
}
py::object to_python(backend_kind b) {
  return py::str(b == backend_kind::cuda ? "cuda" : b == backend_kind::automatic ? "auto" : "cpu");
}

/// One option of an options struct O: its name, the conversion of a Python value into the field
/// and the field's value as a Python value.
template <class O>
struct option_field {
  const char* name;
  std::function<void(O&, py::handle)> set;
  std::function<py::object(const O&)> get;
};

#define MCUBES_PY_OPTION(O, field)                                        \
  option_field<O> {                                                       \
    #field, [](O& o, py::handle v) { to_value(#field, v, o.field); },     \
        [](const O& o) { return to_python(o.field); }                     \
  }

template <class O>
std::vector<option_field<O>> execution_fields() {
  return {MCUBES_PY_OPTION(O, backend), MCUBES_PY_OPTION(O, threads), MCUBES_PY_OPTION(O, cuda_threads_per_block),
          MCUBES_PY_OPTION(O, device), MCUBES_PY_OPTION(O, devices), MCUBES_PY_OPTION(O, cuda_array_points)};
}

template <class O>
const std::vector<option_field<O>>& option_table();

template <>
const std::vector<option_field<vegas_options>>& option_table<vegas_options>() {
  using O = vegas_options;
  static const std::vector<option_field<O>> table = [] {
    std::vector<option_field<O>> t;  // the options table (options.hpp), then the execution options
    for_each_vegas_option([&](const option_info& info, auto field) {
      const char* name = info.name;
      t.push_back(option_field<O>{name, [name, field](O& o, py::handle v) { to_value(name, v, o.*field); },
                                  [field](const O& o) { return to_python(o.*field); }});
    });
    for (auto& f : execution_fields<O>()) t.push_back(f);
    return t;
  }();
  return table;
}

template <>
const std::vector<option_field<plain_mc_options>>& option_table<plain_mc_options>() {
  using O = plain_mc_options;
  static const std::vector<option_field<O>> table = [] {
    std::vector<option_field<O>> t = {MCUBES_PY_OPTION(O, samples), MCUBES_PY_OPTION(O, seed),
                                      MCUBES_PY_OPTION(O, rel_tol), MCUBES_PY_OPTION(O, abs_tol)};
    for (auto& f : execution_fields<O>()) t.push_back(f);
    return t;
  }();
  return table;
}

template <>
const std::vector<option_field<midpoint_options>>& option_table<midpoint_options>() {
  using O = midpoint_options;
  static const std::vector<option_field<O>> table = [] {
    std::vector<option_field<O>> t = {MCUBES_PY_OPTION(O, rel_tol), MCUBES_PY_OPTION(O, abs_tol)};
    for (auto& f : execution_fields<O>()) t.push_back(f);
    return t;
  }();
  return table;
}
#undef MCUBES_PY_OPTION

template <class O>
const char* method_name();
template <>
const char* method_name<vegas_options>() { return "vegas"; }
template <>
const char* method_name<plain_mc_options>() { return "plain_mc"; }
template <>
const char* method_name<midpoint_options>() { return "midpoint"; }

/// The options of a dict: each key through its field's conversion (option_table).
/// @throws py::type_error for an unknown key or a value of another type, py::value_error for a
/// value outside the field type's range (both naming the option).
template <class O>
O options_of(const py::dict& d) {
  O o;
  const auto& table = option_table<O>();
  for (const auto& [key, v] : d) {
    if (!py::isinstance<py::str>(key))
      throw py::type_error(std::string(method_name<O>()) + "() option names are strings, got " + typed_text(key));
    const std::string k = py::cast<std::string>(key);
    const option_field<O>* f = nullptr;
    for (const auto& e : table)
      if (k == e.name) f = &e;
    if (f == nullptr) throw py::type_error(std::string(method_name<O>()) + "() got an unexpected keyword argument '" + k + "'");
    f->set(o, v);
  }
  return o;
}

vegas_options vegas_options_of(const py::dict& d) { return options_of<vegas_options>(d); }
plain_mc_options plain_mc_options_of(const py::dict& d) { return options_of<plain_mc_options>(d); }
midpoint_options midpoint_options_of(const py::dict& d) { return options_of<midpoint_options>(d); }

/// The options of a dict converted (options_of) and back: the same keys with plain Python values
/// (int, float, bool, str; backend 'automatic' as 'auto'). What the Python layer uses before a run.
/// The execution fields are checked too (execution.hpp, validate; they hold whatever the other
/// options are), so that one left out of a run (cuda_array_points on the CPU) is still checked.
/// @throws as options_of; invalid_input (ValueError) from validate.
template <class O>
py::dict normalized(const py::dict& d) {
  const O o = options_of<O>(d);
  validate(static_cast<const execution&>(o));
  py::dict out;
  for (const auto& [key, v] : d) {
    (void)v;
    const std::string k = py::cast<std::string>(key);
    for (const auto& e : option_table<O>())
      if (k == e.name) out[key] = e.get(o);
  }
  return out;
}

template <class T, class Get>
py::array column(const std::vector<iteration_record>& recs, Get get) {
  py::array_t<T> a(static_cast<py::ssize_t>(recs.size()));
  T* p = a.mutable_data();
  for (std::size_t i = 0; i < recs.size(); ++i) p[i] = static_cast<T>(get(recs[i]));
  return std::move(a);
}

/// The result as a dict of plain values; "records": a dict of NumPy arrays, one entry per
/// iteration (result.hpp, iteration_record).
py::dict to_dict(const result& r) {
  py::dict d;
  d["estimate"] = r.estimate;
  d["error"] = r.error;
  d["chi2_dof"] = r.chi2_dof;
  d["q"] = r.q;
  d["dof"] = r.dof;
  d["status"] = std::string(to_string(r.status));
  d["status_text"] = std::string(describe(r.status));
  d["inverse_variance_estimate"] = r.inverse_variance_estimate;
  d["inverse_variance_error"] = r.inverse_variance_error;
  py::list warnings;
  for (const warning w : all_warnings)
    if (r.has_warning(w)) warnings.append(std::string(to_string(w)));
  d["warnings"] = warnings;
  d["iterations"] = r.iterations;
  d["accumulated"] = r.accumulated;
  d["n_eval"] = r.n_eval;
  d["seed"] = r.seed;
  d["seconds"] = r.seconds;
  d["backend"] = r.backend;
  // Vegas: the stratification that ran ('adaptive' or 'uniform', as asked: every callable samples either)
  d["stratification"] = r.records.empty() ? py::object(py::none()) : py::object(py::str(to_string(r.options.stratification)));
  const auto& rs = r.records;
  py::dict rec;
  rec["index"] = column<std::int32_t>(rs, [](const iteration_record& x) { return x.index; });
  rec["estimate"] = column<double>(rs, [](const iteration_record& x) { return x.estimate; });
  rec["error"] = column<double>(rs, [](const iteration_record& x) { return x.error; });
  rec["weighted_estimate"] = column<double>(rs, [](const iteration_record& x) { return x.weighted_estimate; });
  rec["weighted_error"] = column<double>(rs, [](const iteration_record& x) { return x.weighted_error; });
  rec["chi2_dof"] = column<double>(rs, [](const iteration_record& x) { return x.chi2_dof; });
  rec["q"] = column<double>(rs, [](const iteration_record& x) { return x.q; });
  rec["adapted"] = column<bool>(rs, [](const iteration_record& x) { return x.adapted; });
  rec["accumulated"] = column<bool>(rs, [](const iteration_record& x) { return x.accumulated; });
  rec["underflow"] = column<bool>(rs, [](const iteration_record& x) { return x.underflow; });
  rec["rescaled"] = column<bool>(rs, [](const iteration_record& x) { return x.rescaled; });
  rec["n_eval"] = column<std::uint64_t>(rs, [](const iteration_record& x) { return x.n_eval; });
  rec["n_nonzero"] = column<std::uint64_t>(rs, [](const iteration_record& x) { return x.n_nonzero; });
  rec["top_bin_level"] = column<std::int32_t>(rs, [](const iteration_record& x) { return x.top_bin_level; });
  rec["seconds"] = column<double>(rs, [](const iteration_record& x) { return x.seconds; });
  d["records"] = rec;
  return d;
}

/// Result.summary(): the C++ tables (result_io.hpp, mcubes::summary: one implementation for C++,
/// the command and Python) of a Python Result `py_r`, rebuilt from its attributes (those of
/// to_dict; a VectorResult's component 0) when asked, so that a run never formats a table nobody
/// reads.
std::string summary_of(const py::object& py_r, bool extended) {
  result r;
  // a number, or (VectorResult) one per component: the table is component 0's run
  const auto first = [&](const char* name) {
    const auto a = py::array_t<double, py::array::forcecast>(py_r.attr(name));
    MCUBES_EXPECTS(a.size() >= 1, "summary: the result's ", name, " is empty");
    return *a.data();
  };
  r.estimate = first("estimate");
  r.error = first("error");
  r.chi2_dof = first("chi2_dof");
  r.q = first("q");
  r.iterations = py::cast<int>(py_r.attr("iterations"));
  r.n_eval = py::cast<std::uint64_t>(py_r.attr("n_eval"));
  const std::string st = py::cast<std::string>(py_r.attr("status"));
  for (status s : {status::converged, status::not_converged, status::not_resolved, status::underflow, status::interrupted})
    if (st == to_string(s)) r.status = s;
  for (const py::handle w : py::list(py_r.attr("warnings")))
    for (const warning known : all_warnings)
      if (py::cast<std::string>(w) == to_string(known)) r.warnings |= known;
  const py::object rec = py_r.attr("records");
  const auto col = [&](const char* name) { return py::array_t<double, py::array::forcecast>(rec.attr(name)); };
  const auto flag = [&](const char* name) { return py::array_t<bool, py::array::forcecast>(rec.attr(name)); };
  const auto index = py::array_t<std::int32_t, py::array::forcecast>(rec.attr("index"));
  const auto top = py::array_t<std::int32_t, py::array::forcecast>(rec.attr("top_bin_level"));
  const auto est = col("estimate"), err = col("error"), west = col("weighted_estimate"), werr = col("weighted_error"),
             chi2 = col("chi2_dof"), q = col("q"), sec = col("seconds");
  const auto adapted = flag("adapted"), accumulated = flag("accumulated"), underflow = flag("underflow"),
             rescaled = flag("rescaled");
  for (py::ssize_t i = 0; i < index.size(); ++i) {
    iteration_record x;
    x.index = index.at(i);
    x.estimate = est.at(i);
    x.error = err.at(i);
    x.weighted_estimate = west.at(i);
    x.weighted_error = werr.at(i);
    x.chi2_dof = chi2.at(i);
    x.q = q.at(i);
    x.seconds = sec.at(i);
    x.adapted = adapted.at(i);
    x.accumulated = accumulated.at(i);
    x.underflow = underflow.at(i);
    x.rescaled = rescaled.at(i);
    x.top_bin_level = top.at(i);
    r.records.push_back(x);
  }
  return summary(r, extended);
}

/// The iteration callback of a run: checks for signals with the GIL (Ctrl-C raises
/// KeyboardInterrupt through the library, which stops the run at this boundary), then calls the
/// user's callback, if any, with the iteration's index, estimate and error and the weighted
/// estimate so far; a true return value stops the run (status interrupted).
///
/// With `watch` (non-null), a KeyboardInterrupt stops the run instead (interrupt_watch): the
/// completed iterations are kept and the caller reports watch->keyboard.
iteration_callback make_callback(py::object user, interrupt_watch* watch = nullptr) {
  return [user = std::move(user), watch](const iteration_record& rec, const result& so_far) {
    py::gil_scoped_acquire gil;
    if (watch != nullptr && watch->keyboard) return run_control::stop;
    if (PyErr_CheckSignals() != 0) {
      py::error_already_set e;
      if (watch == nullptr || !e.matches(PyExc_KeyboardInterrupt)) throw e;
      watch->keyboard = true;
      watch->stop.request();
      return run_control::stop;
    }
    if (!user.is_none()) {
      py::dict info;
      info["index"] = rec.index;
      info["estimate"] = rec.estimate;
      info["error"] = rec.error;
      info["weighted_estimate"] = so_far.estimate;
      info["weighted_error"] = so_far.error;
      info["chi2_dof"] = so_far.chi2_dof;
      info["iterations"] = so_far.iterations;
      if (py::cast<bool>(py::bool_(user(info)))) return run_control::stop;
    }
    return run_control::proceed;
  };
}

py::array_t<double> point_array(const std::vector<double>& x) {
  py::array_t<double> a(static_cast<py::ssize_t>(x.size()));
  if (!x.empty()) std::memcpy(a.mutable_data(), x.data(), x.size() * sizeof(double));
  return a;
}

void raise_with(PyObject* type, const char* message, const py::dict& attrs) {
  py::object exc = py::reinterpret_borrow<py::object>(type)(message);
  for (const auto& [k, v] : attrs) py::setattr(exc, k, v);
  PyErr_SetObject(type, exc.ptr());
}

void translate(std::exception_ptr p) {
  try {
    if (p) std::rethrow_exception(p);
  } catch (const non_finite_integrand& e) {
    py::dict a;
    a["point"] = point_array(e.point());
    a["value"] = e.value();
    a["iteration"] = e.iteration();
    a["sample_index"] = e.sample_index();
    raise_with(non_finite_type, e.what(), a);
  } catch (const overflow_error& e) {
    py::dict a;
    a["point"] = point_array(e.point());
    a["value"] = e.value();
    a["jacobian"] = e.jacobian();
    a["iteration"] = e.iteration();
    a["sample_index"] = e.sample_index();
    raise_with(numerical_type, e.what(), a);
  } catch (const numerical_error& e) {
    PyErr_SetString(numerical_type, e.what());
  } catch (const invalid_input& e) {
    PyErr_SetString(PyExc_ValueError, e.what());
  } catch (const error& e) {  // CUDA, toolchain, I/O: a runtime failure
    PyErr_SetString(PyExc_RuntimeError, e.what());
  }
}

/// The result dict with "keyboard_interrupt": whether Ctrl-C stopped the run (interrupt_watch;
/// mcubes/__init__.py raises mcubes.Interrupted carrying the result).
py::dict with_interrupt(py::dict d, const interrupt_watch& watch) {
  d["keyboard_interrupt"] = watch.keyboard;
  return d;
}

/// A team (backend/team.hpp) over a Python communicator with mpi4py's interface: Get_rank(),
/// Get_size() and allgather(obj) -> list (mpi4py.MPI.Comm, or any object that gathers alike, such
/// as the tests' thread communicator). The exchanges are made by the run's thread, which takes the
/// GIL for each (the CPU workers have finished the pass by then); each rank's bytes travel as a
/// Python bytes object. Errors of the communicator propagate as mcubes::error with its message.
class py_team final : public communicator {
 public:
  explicit py_team(py::object comm) : comm_(std::move(comm)) {
    rank_ = comm_.attr("Get_rank")().cast<int>();
    size_ = comm_.attr("Get_size")().cast<int>();
    MCUBES_EXPECTS(size_ >= 1 && rank_ >= 0 && rank_ < size_, "comm: rank ", rank_, " of ", size_, " ranks is not a rank");
  }
  int rank() const override { return rank_; }
  int size() const override { return size_; }
  void all_gather(const std::vector<unsigned char>& mine, std::vector<std::vector<unsigned char>>& all) const override {
    py::gil_scoped_acquire gil;
    try {
      const py::bytes b(reinterpret_cast<const char*>(mine.data()), mine.size());
      const py::list got = comm_.attr("allgather")(b);
      MCUBES_EXPECTS(static_cast<int>(got.size()) == size_, "comm.allgather returned ", got.size(), " items for ", size_,
                     " ranks");
      all.assign(got.size(), {});
      for (std::size_t r = 0; r < got.size(); ++r) {
        const std::string bytes = got[r].cast<std::string>();
        all[r].assign(bytes.begin(), bytes.end());
      }
    } catch (py::error_already_set& e) {
      throw error(std::string("comm.allgather failed: ") + e.what());
    }
  }

 private:
  py::object comm_;
  int rank_ = 0, size_ = 1;
};

/// The team of a call's `comm` argument (None: none).
std::unique_ptr<py_team> team_of_comm(const py::object& comm) {
  if (comm.is_none()) return nullptr;
  return std::make_unique<py_team>(comm);
}

py::dict run_vegas(py::object f, const std::vector<double>& lower, const std::vector<double>& upper,
                   const py::dict& options, py::object callback, py::object comm) {
  const box b = make_box(lower, upper);
  vegas_options opt = vegas_options_of(options);
  const dim_entry& e = entry_for(b.dim());
  const std::unique_ptr<py_team> team = team_of_comm(comm);
  opt.team = team.get();
  interrupt_watch watch;
  opt.stop = &watch.stop;
  py_callable fn{f.ptr(), b.dim()};
  fn.watch = &watch;
  const iteration_callback cb = make_callback(std::move(callback), &watch);
  result r;
  {
    py::gil_scoped_release release;
    r = e.vegas(fn, b, opt, cb);
  }
  return with_interrupt(to_dict(r), watch);
}

/// numbers (N) or an N x N row-major matrix as a NumPy array
py::array_t<double> vector_array(const std::vector<double>& v, py::ssize_t rows, py::ssize_t cols = 0) {
  py::array_t<double> a = cols > 0 ? py::array_t<double>({rows, cols}) : py::array_t<double>(rows);
  if (!v.empty()) std::memcpy(a.mutable_data(), v.data(), v.size() * sizeof(double));
  return a;
}

/// The checkpoints of one call of the module's functions without an integrator object
/// (call_checkpoints for `problem`): `path` ("" none) is written at the call's boundaries,
/// `every_seconds` apart at least; `resume_data` (a checkpoint's bytes, or None; `resume_what`
/// names them) is the call to continue. `stopped()`: whether the call was stopped (its end is then
/// written durably). @throws invalid_input for damaged bytes or a checkpoint of another problem.
struct py_call_checkpoints {
  py_call_checkpoints(const std::string& path, const py::object& resume_data, const std::string& resume_what,
                      double every_seconds, checkpoint problem, std::function<bool()> stopped) {
    checkpointing cp;
    cp.path = path;
    cp.integrand = problem.integrand;
    cp.schedule.every_seconds = every_seconds;
    if (!resume_data.is_none()) {
      from = decode_checkpoint(std::string(py::cast<py::bytes>(resume_data)), resume_what);
      cp.from = &*from;
    }
    calls.emplace(cp, std::move(problem), std::move(stopped), resume_what);
  }
  std::optional<checkpoint> from;
  std::optional<call_checkpoints> calls;
};

/// A vector-valued callable's run (mcubes.vegas_vector). With `checkpoint` (a path, "" none) the
/// run writes its checkpoints there (`checkpoint_every` seconds apart at least), with `resume_data`
/// (bytes, None none) it continues that run bitwise; `tag`: the fingerprint.
py::dict run_vegas_vector(py::object f, const std::vector<double>& lower, const std::vector<double>& upper,
                          int components, const py::dict& options, py::object callback, const std::string& checkpoint_path,
                          py::object resume_data, const std::string& resume_what, double checkpoint_every,
                          const std::string& tag) {
  const box b = make_box(lower, upper);
  vegas_options opt = vegas_options_of(options);
  interrupt_watch watch;
  opt.stop = &watch.stop;
  (void)entry_for(b.dim());  // the dimension's range
  MCUBES_EXPECTS(components >= 1 && components <= max_components, "a vector-valued Python callable has 1 to ",
                 max_components, " components in this build, got ", components);
  py_callable fn{f.ptr(), b.dim()};
  fn.components = components;
  fn.width = vector_width_for(components);
  fn.watch = &watch;
  bool stopped = false;
  const iteration_callback cb = watching_stops(make_callback(std::move(callback), &watch), &stopped);
  std::optional<py_call_checkpoints> cps;
  if (!checkpoint_path.empty() || !resume_data.is_none())
    cps.emplace(checkpoint_path, resume_data, resume_what, checkpoint_every,
                checkpoint{tag, b.dim(), b.lower, b.upper, opt, {}, {}, {}, components, {}},
                [&] { return stopped || watch.stop.requested(); });
  const vector_resumption resume = cps ? cps->calls->vector() : vector_resumption{};
  vector_result r;
  {
    py::gil_scoped_release release;
    r = vector_dims[b.dim()][fn.width](fn, b, opt, cb, components, resume);
  }
  const auto n = static_cast<py::ssize_t>(components);
  py::dict d = to_dict(r.run);  // status, iterations, n_eval, seed, ..., component 0's records
  d["components"] = components;
  d["estimate"] = vector_array(r.estimate, n);
  d["error"] = vector_array(r.error, n);
  d["covariance"] = vector_array(r.covariance, n, n);
  d["chi2_dof"] = vector_array(r.chi2_dof, n);
  d["chi2_dof_vector"] = r.chi2_dof_vector;
  d["dof_vector"] = r.dof_vector;
  d["q_vector"] = r.q_vector;
  const auto k = static_cast<py::ssize_t>(r.iterations.size());
  py::array_t<double> est({k, n}), cov({k, n, n});
  for (std::size_t i = 0; i < r.iterations.size(); ++i) {
    std::memcpy(est.mutable_data(static_cast<py::ssize_t>(i)), r.iterations[i].estimate.data(), n * sizeof(double));
    std::memcpy(cov.mutable_data(static_cast<py::ssize_t>(i)), r.iterations[i].covariance.data(), n * n * sizeof(double));
  }
  d["iteration_estimates"] = est;
  d["iteration_covariances"] = cov;
  return with_interrupt(d, watch);
}

py::dict run_plain_mc(py::object f, const std::vector<double>& lower, const std::vector<double>& upper,
                      const py::dict& options, py::object comm) {
  const box b = make_box(lower, upper);
  plain_mc_options opt = plain_mc_options_of(options);
  const std::unique_ptr<py_team> team = team_of_comm(comm);
  opt.team = team.get();
  const dim_entry& e = entry_for(b.dim());
  const py_callable fn{f.ptr(), b.dim()};
  result r;
  {
    py::gil_scoped_release release;
    r = e.plain_mc(fn, b, opt);
  }
  return to_dict(r);
}

py::dict run_midpoint(py::object f, const std::vector<double>& lower, const std::vector<double>& upper,
                      std::uint64_t n_per_axis, const py::dict& options, py::object comm) {
  const box b = make_box(lower, upper);
  midpoint_options opt = midpoint_options_of(options);
  const std::unique_ptr<py_team> team = team_of_comm(comm);
  opt.team = team.get();
  const dim_entry& e = entry_for(b.dim());
  const py_callable fn{f.ptr(), b.dim()};
  result r;
  {
    py::gil_scoped_release release;
    r = e.midpoint(fn, b, n_per_axis, opt);
  }
  return to_dict(r);
}

#if MCUBES_PYTHON_HAS_CUDA
device_vegas_entry device_dims[max_device_dim + 1];

/// The refusal of a GPU callable in a dimension without an entry (device_call.hpp cuda_compile_check).
std::string compile_check_refusal(int d) {
  return "a GPU callable in d = " + std::to_string(d) + " is not compiled in this build (made with " +
         "MCUBES_CUDA_COMPILE_CHECK=ON to check that the CUDA code compiles: d = " +
         std::to_string(compile_check_device_dim) + " only)";
}
device_integrator_factory device_integrators[max_device_dim + 1];

/// device_callback's evaluate for a Python adapter (mcubes/__init__.py, _device_adapter):
/// adapter(address, n) -> (result object, address of its n float64 values on the device).
const double* py_device_evaluate(void* ctx, const double* x, std::size_t n, void** keep) {
  py::gil_scoped_acquire gil;
  py::handle adapter(static_cast<PyObject*>(ctx));
  py::tuple t = adapter(reinterpret_cast<std::uintptr_t>(x), n);
  if (t.size() != 2) throw py::value_error("the GPU adapter must return (values, address)");
  const auto address = py::cast<std::uintptr_t>(t[1]);
  py::object values = t[0];
  *keep = values.release().ptr();
  return reinterpret_cast<const double*>(address);
}

void py_device_release(void* keep) noexcept {
  if (keep == nullptr) return;
  py::gil_scoped_acquire gil;
  Py_DECREF(static_cast<PyObject*>(keep));
}

/// Vegas of a GPU callable behind `adapter` (mcubes/__init__.py) on the CUDA backend.
py::dict run_vegas_device(py::object adapter, const std::vector<double>& lower, const std::vector<double>& upper,
                          const py::dict& options, py::object callback) {
  const box b = make_box(lower, upper);
  const vegas_options opt = vegas_options_of(options);
  MCUBES_EXPECTS(b.dim() >= 1 && b.dim() <= max_device_dim, "a GPU callable takes 1 to ", max_device_dim,
                 " dimensions in this build, got ", b.dim(), " (an expression string takes more)");
  if (device_dims[b.dim()] == nullptr) throw invalid_input(compile_check_refusal(b.dim()));
  const device_callback cb{adapter.ptr(), &py_device_evaluate, &py_device_release};
  const iteration_callback on_it = make_callback(std::move(callback));
  result r;
  {
    py::gil_scoped_release release;
    r = device_dims[b.dim()](cb, b, opt, on_it);
  }
  return to_dict(r);
}
#endif

/// The checkpoint of mcubes.vegas_batch, which runs its integrals one after the other, each in an
/// Integrator (mcubes/__init__.py): one file in the format of a C++ batch's (checkpoint.hpp: the
/// fingerprint, region, options with the batch's seed, every integral's parameter values and
/// progress), written by a checkpoint_saver in batch mode. Integral k's call hands its progress
/// through integrator::checkpoint_with (attach); its end progress is kept, so a continued batch
/// ends a finished integral at once with its result and continues the one under way bitwise.
class py_batch_checkpoints {
 public:
  /// `path` ("" none) written at least `every_seconds` apart; `resume_data` (bytes or None,
  /// `resume_what` names them): the batch to continue. @throws invalid_input for damaged bytes or a
  /// checkpoint of another batch (naming the difference).
  py_batch_checkpoints(const std::string& path, const std::string& tag, const std::vector<double>& lower,
                       const std::vector<double>& upper, const py::dict& options,
                       const std::vector<std::vector<double>>& parameters, const py::object& resume_data,
                       const std::string& resume_what, double every_seconds) {
    const box b = make_box(lower, upper);
    problem_ = checkpoint{tag, b.dim(), b.lower, b.upper, vegas_options_of(options), {}, parameters, {}, 0, {}};
    MCUBES_EXPECTS(!parameters.empty(), "a parameter batch needs at least one parameter value");
    members_.assign(parameters.size(), vegas_progress{});
    if (!resume_data.is_none()) {
      const checkpoint c = decode_checkpoint(std::string(py::cast<py::bytes>(resume_data)), resume_what);
      // the options that only move the end may change (as a single run's resume from Python)
      const std::string diff = checkpoint_difference(c, tag, b.dim(), b.lower, b.upper, problem_.options, true, &parameters);
      MCUBES_EXPECTS(diff.empty(), resume_what, ": cannot continue this call: ", diff);
      members_ = c.members;
    }
    if (!path.empty()) {
      checkpoint_schedule schedule;
      schedule.every_seconds = every_seconds;
      saver_.emplace(
          problem_, [path](const std::string& bytes, bool durable) { write_file_atomically(path, bytes, durable); },
          schedule, [this] { return stopped_; });
    }
  }
  /// Integral k's checkpoint as one run's (its seed batch_seed(seed, k)), or None when it was not begun.
  py::object member(std::size_t k) const {
    MCUBES_EXPECTS(k < members_.size(), "integral ", k, " of a batch of ", members_.size());
    if (members_[k].edges.empty()) return py::none();
    checkpoint c{problem_.integrand, problem_.dim, problem_.lower, problem_.upper, problem_.options,
                 members_[k], {}, {}, 0, {}};
    c.options.seed = batch_seed(problem_.options.seed, k);
    return py::bytes(encode_checkpoint(c));
  }
  /// The save function of integral k's call: the batch's file with its progress (its end kept).
  std::function<void(const std::function<vegas_progress()>&, bool)> save_of(std::size_t k) {
    MCUBES_EXPECTS(k < members_.size(), "integral ", k, " of a batch of ", members_.size());
    return [this, k](const std::function<vegas_progress()>& progress, bool ended) {
      if (ended) members_[k] = progress();  // the next integral's writes hold it
      if (saver_)
        saver_->batch(
            [&] {
              if (!ended) members_[k] = progress();
              return members_;
            },
            false);
    };
  }
  /// The batch's end (every integral done, or `stopped` by Ctrl-C): written as a run's end is
  /// (checkpoint_saver: durably when stopped).
  void finish(bool stopped) {
    stopped_ = stopped;
    if (saver_) saver_->batch([&] { return members_; }, true);
  }

 private:
  checkpoint problem_;
  std::vector<vegas_progress> members_;
  std::optional<checkpoint_saver> saver_;
  bool stopped_ = false;
};


/// mcubes.Integrator's native part: an integrator<D> for the box's dimension.
///
/// One call at a time: the integrator's map and iteration index are the state of a run, and a run
/// releases the GIL, so two threads could otherwise update them at once. A call made while another
/// is in progress (from another thread, or from the integrand or callback of the run) raises
/// RuntimeError "... in use by another thread ..." at once rather than waiting: a wait would
/// serialise the runs without a word (and deadlock a call from the running integrand). Use one
/// Integrator per thread.
class py_integrator {
  /// Marks the integrator busy for its lifetime. @throws mcubes::error (RuntimeError) when a call
  /// is in progress.
  class one_call {
   public:
    one_call(std::atomic<bool>& busy, const char* what) : busy_(busy) {
      bool idle = false;
      if (!busy_.compare_exchange_strong(idle, true))
        throw error(std::string("mcubes.Integrator.") + what +
                    ": the integrator is in use by another thread (a call on it is in progress; one Integrator runs "
                    "one call at a time: use one Integrator per thread)");
    }
    ~one_call() { busy_.store(false); }
    one_call(const one_call&) = delete;
    one_call& operator=(const one_call&) = delete;

   private:
    std::atomic<bool>& busy_;
  };

 public:
  /// On the CUDA backend (options' backend 'cuda') for GPU callables, else on the CPU for NumPy ones.
  py_integrator(const std::vector<double>& lower, const std::vector<double>& upper, const py::dict& options)
      : box_(make_box(lower, upper)), options_(vegas_options_of(options)) {
    if (options_.backend == backend_kind::cuda) {
#if MCUBES_PYTHON_HAS_CUDA
      MCUBES_EXPECTS(box_.dim() <= max_device_dim, "a GPU callable takes 1 to ", max_device_dim,
                     " dimensions in this build, got ", box_.dim());
      if (device_integrators[box_.dim()] == nullptr) throw invalid_input(compile_check_refusal(box_.dim()));
      integ_ = device_integrators[box_.dim()](box_, options_);
      return;
#else
      throw error("this build of mcubes has no CUDA backend (built without nvcc)");
#endif
    }
    integ_ = entry_for(box_.dim()).make_integrator(box_, options_);
  }
#if MCUBES_PYTHON_HAS_CUDA
  /// A GPU callable behind `adapter` (mcubes/__init__.py), from the current map.
  py::dict integrate_device(py::object adapter, const py::dict& options, py::object callback) {
    const one_call guard(busy_, "integrate");
    const vegas_options opt = vegas_options_of(options);
    check_call(opt);
    const device_callback fn{adapter.ptr(), &py_device_evaluate, &py_device_release};
    interrupt_watch watch;
    const iteration_callback cb = make_callback(std::move(callback), &watch);
    result r;
    {
      py::gil_scoped_release release;
      r = integ_->integrate_device(fn, opt, cb);
    }
    return with_interrupt(to_dict(r), watch);
  }
#endif
  py::dict integrate(py::object f, const py::dict& options, py::object callback) {
    const one_call guard(busy_, "integrate");
    vegas_options opt = vegas_options_of(options);
    check_call(opt);
    interrupt_watch watch;
    opt.stop = &watch.stop;
    py_callable fn{f.ptr(), box_.dim()};
    fn.watch = &watch;
    const iteration_callback cb = make_callback(std::move(callback), &watch);
    result r;
    {
      py::gil_scoped_release release;
      r = integ_->integrate(fn, opt, cb);
    }
    return with_interrupt(to_dict(r), watch);
  }
  /// The bytes of the integrator's checkpoint (integrator<D>::checkpoint_of, encode_checkpoint).
  py::bytes checkpoint_bytes(const std::string& integrand) {
    const one_call guard(busy_, "checkpoint");
    return py::bytes(encode_checkpoint(integ_->checkpoint_of(integrand)));
  }
  /// Writes the checkpoint to `path` atomically and durably.
  void save(const std::string& path, const std::string& integrand) {
    const one_call guard(busy_, "save");
    const checkpoint c = integ_->checkpoint_of(integrand);
    py::gil_scoped_release release;
    save_checkpoint(path, c);
  }
  /// Continues from the checkpoint in `bytes` (a file's content or checkpoint_bytes()), compared
  /// with `integrand` (integrator<D>::resume). `what` names the bytes in messages.
  void resume(const py::bytes& bytes, const std::string& integrand, const std::string& what) {
    const one_call guard(busy_, "resume");
    integ_->resume(decode_checkpoint(std::string(bytes), what), integrand);
  }
  /// Every later integrate() hands its progress to integral k of `batch` (integrator::checkpoint_with);
  /// `batch` None: to nothing.
  void checkpoint_with(py::object batch, std::size_t k) {
    const one_call guard(busy_, "checkpoint_with");
    if (batch.is_none()) return integ_->checkpoint_with(nullptr);
    integ_->checkpoint_with(batch.cast<py_batch_checkpoints&>().save_of(k));
  }
  /// Every later integrate() writes its checkpoint to `path` ("" stops) at least every_seconds apart.
  void checkpoint_to(const std::string& path, const std::string& integrand, double every_seconds) {
    const one_call guard(busy_, "checkpoint_to");
    checkpoint_schedule s;
    s.every_seconds = every_seconds;
    integ_->checkpoint_to(path, integrand, s);
  }
  py::array_t<double> edges() {
    const one_call guard(busy_, "edges");
    const std::vector<double> e = integ_->edges();
    const auto d = static_cast<py::ssize_t>(box_.dim());
    py::array_t<double> a({d, static_cast<py::ssize_t>(e.size()) / d});
    std::memcpy(a.mutable_data(), e.data(), e.size() * sizeof(double));
    return a;
  }
  void set_edges(const py::array_t<double, py::array::c_style | py::array::forcecast>& e) {
    const one_call guard(busy_, "set_edges");
    MCUBES_EXPECTS(e.ndim() == 2 && e.shape(0) == box_.dim(), "set_edges: an array of shape (d, n_bins + 1) = (",
                   box_.dim(), ", ", map_bins_for(options_) + 1, ") is needed");
    integ_->set_edges(std::vector<double>(e.data(), e.data() + e.size()));
  }
  void reset() {
    const one_call guard(busy_, "reset");
    integ_->reset();
  }
  /// The sampler of n weighted points with `seed` from the current map and VEGAS+ allocation (a
  /// copy: later training does not change it).
  weighted_sampler sampler(py::handle n, py::handle seed) {
    const one_call guard(busy_, "sampler");
    const auto count = integer_value<std::uint64_t>("n", n);
    const auto s = integer_value<std::uint64_t>("seed", seed);
    return weighted_sampler(integ_->density(), count, s);
  }
  int next_iteration() {
    const one_call guard(busy_, "next_iteration");
    return integ_->state().next_iteration;
  }
  int dim() const { return box_.dim(); }

 private:
  /// The options of a call checked as vegas() checks its own (options.hpp, validate), then each
  /// field fixed at construction by name. @throws invalid_input (ValueError) naming the option.
  void check_call(const vegas_options& opt) const {
    validate(opt, box_.dim());
    const auto fixed = [](const char* name, const auto& given, const auto& made) {
      MCUBES_EXPECTS(given == made, name, " is fixed when the Integrator is made (", made, "), got ", given);
    };
    fixed("backend", std::string(to_string(opt.backend)), std::string(to_string(options_.backend)));
    fixed("threads", opt.threads, options_.threads);
    fixed("device", opt.device, options_.device);
    MCUBES_EXPECTS(opt.devices == options_.devices, "devices is fixed when the Integrator is made (",
                   options_.devices.size(), " listed), got a list of ", opt.devices.size());
    fixed("cuda_threads_per_block", opt.cuda_threads_per_block, options_.cuda_threads_per_block);
    fixed("cuda_array_points", opt.cuda_array_points, options_.cuda_array_points);
    if (opt.n_bins != 0) fixed("n_bins", opt.n_bins, map_bins_for(options_));
  }

  box box_;
  vegas_options options_;
  std::unique_ptr<integrator_base> integ_;
  std::atomic<bool> busy_{false};
};


#if MCUBES_PYTHON_HAS_JIT
/// An expression compiled at run time (include/mcubes/jit.hpp) and run by `method` ("vegas",
/// "plain_mc", "midpoint") with the options of a dict; include_dir: where the mcubes headers are
/// (empty: the library's own search).
/// An expression string's run (mcubes.vegas / plain_mc / midpoint of a str). For vegas, with
/// `checkpoint` (a path, "" none) the run writes its checkpoints there (checkpoint_saver's
/// schedule, `checkpoint_every` seconds apart at least) and with `resume_data` (a checkpoint's
/// bytes, None none; `resume_what` names them) it continues that run, bitwise. The fingerprint
/// is "expr TEXT", the command's for `--expr TEXT` without parameters. With either, Ctrl-C stops
/// the run at the next boundary and the dict says so ("keyboard_interrupt"): the end is written.
/// @throws invalid_input for a checkpoint of another problem (one sentence naming the difference).
py::dict run_expression(const std::string& text, const std::string& method, const std::vector<double>& lower,
                        const std::vector<double>& upper, const py::dict& options, std::uint64_t n_per_axis,
                        const std::string& include_dir, py::object callback, const std::string& checkpoint_path,
                        py::object resume_data, const std::string& resume_what, double checkpoint_every) {
  const box b = make_box(lower, upper);
  jit::box jb{b.lower, b.upper};
  jit::compile_options copt;
  copt.include_dir = include_dir;
  const jit::method m = method == "vegas" ? jit::method::vegas : method == "plain_mc" ? jit::method::plain_mc : jit::method::midpoint;
  result r;
  if (m == jit::method::vegas) {
    const vegas_options opt = vegas_options_of(options);
    const bool checkpoints = !checkpoint_path.empty() || !resume_data.is_none();
    interrupt_watch watch;
    bool stopped = false;
    const iteration_callback cb =
        watching_stops(make_callback(std::move(callback), checkpoints ? &watch : nullptr), &stopped);
    std::optional<py_call_checkpoints> cps;
    if (checkpoints)
      cps.emplace(checkpoint_path, resume_data, resume_what, checkpoint_every,
                  checkpoint{"expr " + text, b.dim(), b.lower, b.upper, opt, {}, {}, {}, 0, {}}, [&] { return stopped; });
    const vegas_resumption resume = cps ? cps->calls->single() : vegas_resumption{};
    {
      py::gil_scoped_release release;
      r = jit::compile(jit::expression(text, b.dim()), m, opt.backend, copt, opt.device).vegas(jb, opt, cb, {}, nullptr, resume);
    }
    return checkpoints ? with_interrupt(to_dict(r), watch) : to_dict(r);
  } else if (m == jit::method::plain_mc) {
    const plain_mc_options opt = plain_mc_options_of(options);
    py::gil_scoped_release release;
    r = jit::compile(jit::expression(text, b.dim()), m, opt.backend, copt, opt.device).plain_mc(jb, opt);
  } else {
    const midpoint_options opt = midpoint_options_of(options);
    py::gil_scoped_release release;
    r = jit::compile(jit::expression(text, b.dim()), m, opt.backend, copt, opt.device).midpoint(jb, n_per_axis, opt);
  }
  return to_dict(r);
}
#endif

/// What a checkpoint holds besides the progress (mcubes.read_checkpoint): the integrand's
/// fingerprint, the region, the options (non-execution fields), the completed iterations of a call
/// under way and the next iteration's index. @throws invalid_input as decode_checkpoint.
py::dict read_checkpoint_dict(const py::bytes& data, const std::string& what) {
  const checkpoint c = decode_checkpoint(std::string(data), what);
  py::dict d;
  d["integrand"] = c.integrand;
  d["lower"] = c.lower;
  d["upper"] = c.upper;
  py::dict o;
  const auto execution_names = execution_fields<vegas_options>();
  for (const auto& e : option_table<vegas_options>()) {
    bool is_execution = false;
    for (const auto& x : execution_names) is_execution = is_execution || std::string(x.name) == e.name;
    if (!is_execution) o[py::str(e.name)] = e.get(c.options);
  }
  d["options"] = o;
  d["completed_iterations"] = c.progress.records.size();
  d["next_iteration"] = c.progress.state.next_iteration;
  d["components"] = c.components;  // 0: a scalar integrand
  d["integrals"] = c.members.size();  // 0: one run
  py::list done;  // a batch's: each integral's completed iterations
  for (const vegas_progress& p : c.members) done.append(p.records.size());
  d["integrals_completed_iterations"] = done;
  return d;
}

py::list suite_entries() {
  py::list out;
  for (const suite::entry& e : suite::entries()) {
    py::dict d;
    d["name"] = e.name;
    d["description"] = e.description;
    d["default_dim"] = e.default_dim;
    d["any_dim"] = e.any_dim;
    d["max_dim"] = e.max_dim;
    d["lower"] = e.lower;
    d["upper"] = e.upper;
    py::dict paper;
    paper["calls_per_iteration"] = e.paper.calls;
    paper["max_iterations"] = e.paper.max_iterations;
    paper["adapt_iterations"] = e.paper.adapt_iterations;
    paper["skip"] = e.paper.skip;
    d["paper"] = paper;
    out.append(d);
  }
  return out;
}

double suite_exact(const std::string& name, int d) {
  const suite::entry* e = suite::find(name);
  MCUBES_EXPECTS(e != nullptr, "no suite integrand named '", name, "' (f1..f6, fA, fB)");
  return e->exact(d);
}

}  // namespace
}  // namespace mcubes::python

PYBIND11_MODULE(_mcubes, m) {
  namespace py = pybind11;
  using namespace mcubes::python;
  m.doc() = "Native part of the mcubes Python module (m-Cubes Vegas, plain Monte Carlo, midpoint rule)";
#if defined(__GLIBC__)
  // A NumPy integrand allocates temporaries of megabytes at every call (a slice of 32768 points);
  // glibc's default trimming returns them to the kernel after each call and faults them back in at
  // the next (measured: 1.8 s of system time in 8.6 s for f4 8-D on one thread, none with these
  // settings). Keep up to 256 MiB of freed memory and 64 MiB of padding, unless the user set them
  // (MALLOC_TRIM_THRESHOLD_, MALLOC_TOP_PAD_). Process-wide: documented in docs/guide.md.
  if (std::getenv("MALLOC_TRIM_THRESHOLD_") == nullptr) mallopt(M_TRIM_THRESHOLD, 256 << 20);
  if (std::getenv("MALLOC_TOP_PAD_") == nullptr) mallopt(M_TOP_PAD, 64 << 20);
#endif
  register_dims_a(dims);
  register_dims_b(dims);
  register_dims_c(dims);
  register_dims_d(dims);
  register_vector_dims_a(vector_dims);
  register_vector_dims_b(vector_dims);
  register_vector_dims_c(vector_dims);
  register_vector_dims_d(vector_dims);
#if MCUBES_PYTHON_HAS_CUDA
  register_device_dims_a(device_dims, device_integrators);
  register_device_dims_b(device_dims, device_integrators);
  register_device_dims_c(device_dims, device_integrators);
  register_device_dims_d(device_dims, device_integrators);
#endif

  non_finite_type = PyErr_NewExceptionWithDoc(
      "mcubes.NonFiniteIntegrand",
      "The integrand returned NaN or an infinity: the first such sample in sample order. Attributes: point (the "
      "point x, a NumPy array), value, iteration, sample_index.",
      PyExc_ArithmeticError, nullptr);
  numerical_type = PyErr_NewExceptionWithDoc(
      "mcubes.NumericalError",
      "A quantity of the algorithm is not representable in double precision (an overflow of f times the map's "
      "jacobian: attributes point, value, jacobian, iteration, sample_index; or of a sum or the weighted average).",
      PyExc_ArithmeticError, nullptr);
  m.attr("NonFiniteIntegrand") = py::handle(non_finite_type);
  m.attr("NumericalError") = py::handle(numerical_type);
  py::register_exception_translator(&translate);

  m.attr("max_dim") = max_dim;
  m.attr("version") = MCUBES_VERSION_STRING;
  m.attr("has_jit") = static_cast<bool>(MCUBES_PYTHON_HAS_JIT);
#if MCUBES_PYTHON_HAS_CUDA
  m.attr("has_cuda_callables") = true;
  m.attr("max_device_dim") = max_device_dim;
  m.def("vegas_device", &run_vegas_device, py::arg("adapter"), py::arg("lower"), py::arg("upper"), py::arg("options"),
        py::arg("callback") = py::none());
#else
  m.attr("has_cuda_callables") = false;
  m.attr("max_device_dim") = 0;
#endif

  m.def("summary", &summary_of, py::arg("result"), py::arg("extended") = false);
  m.def("format_with_error", [](double estimate, double error) { return mcubes::format_with_error(estimate, error); },
        py::arg("estimate"), py::arg("error"));
  m.def("vegas", &run_vegas, py::arg("f"), py::arg("lower"), py::arg("upper"), py::arg("options"),
        py::arg("callback") = py::none(), py::arg("comm") = py::none());
  m.attr("max_components") = max_components;
  m.def("vegas_vector", &run_vegas_vector, py::arg("f"), py::arg("lower"), py::arg("upper"), py::arg("components"),
        py::arg("options"), py::arg("callback") = py::none(), py::arg("checkpoint") = std::string(),
        py::arg("resume") = py::none(), py::arg("resume_what") = std::string(), py::arg("checkpoint_every") = 0.0,
        py::arg("tag") = std::string());
  m.def("plain_mc", &run_plain_mc, py::arg("f"), py::arg("lower"), py::arg("upper"), py::arg("options"),
        py::arg("comm") = py::none());
  m.def("midpoint", &run_midpoint, py::arg("f"), py::arg("lower"), py::arg("upper"), py::arg("n_per_axis"),
        py::arg("options"), py::arg("comm") = py::none());
#if MCUBES_PYTHON_HAS_JIT
  m.def("expression", &run_expression, py::arg("text"), py::arg("method"), py::arg("lower"), py::arg("upper"),
        py::arg("options"), py::arg("n_per_axis"), py::arg("include_dir"), py::arg("callback") = py::none(),
        py::arg("checkpoint") = std::string(), py::arg("resume") = py::none(), py::arg("resume_what") = std::string(),
        py::arg("checkpoint_every") = 0.0);
#endif
  py::class_<py_batch_checkpoints>(m, "BatchCheckpoints")
      .def(py::init<const std::string&, const std::string&, const std::vector<double>&, const std::vector<double>&,
                    const py::dict&, const std::vector<std::vector<double>>&, const py::object&, const std::string&,
                    double>(),
           py::arg("path"), py::arg("tag"), py::arg("lower"), py::arg("upper"), py::arg("options"),
           py::arg("parameters"), py::arg("resume"), py::arg("resume_what"), py::arg("every_seconds"))
      .def("member", &py_batch_checkpoints::member, py::arg("k"))
      .def("finish", &py_batch_checkpoints::finish, py::arg("stopped"));
  py::class_<py_integrator>(m, "Integrator")
      .def(py::init<const std::vector<double>&, const std::vector<double>&, const py::dict&>())
      .def("integrate", &py_integrator::integrate, py::arg("f"), py::arg("options"), py::arg("callback") = py::none())
#if MCUBES_PYTHON_HAS_CUDA
      .def("integrate_device", &py_integrator::integrate_device, py::arg("adapter"), py::arg("options"),
           py::arg("callback") = py::none())
#endif
      .def("edges", &py_integrator::edges)
      .def("set_edges", &py_integrator::set_edges)
      .def("reset", &py_integrator::reset)
      .def("sampler", &py_integrator::sampler, py::arg("n"), py::arg("seed"))
      .def("checkpoint_bytes", &py_integrator::checkpoint_bytes, py::arg("integrand"))
      .def("save", &py_integrator::save, py::arg("path"), py::arg("integrand"))
      .def("resume", &py_integrator::resume, py::arg("data"), py::arg("integrand"), py::arg("what"))
      .def("checkpoint_to", &py_integrator::checkpoint_to, py::arg("path"), py::arg("integrand"),
           py::arg("every_seconds"))
      .def("checkpoint_with", &py_integrator::checkpoint_with, py::arg("batch"), py::arg("k"))
      .def_property_readonly("next_iteration", &py_integrator::next_iteration)
      .def_property_readonly("dim", &py_integrator::dim);
  // Weighted points of a trained integrator (core/weighted_sample.hpp): points(first, count) gives
  // the arrays x (count, d) and w (count,) of points first .. first + count - 1, the GIL released.
  using mcubes::weighted_sampler;
  py::class_<weighted_sampler>(m, "WeightedSampler")
      .def_property_readonly("dim", &weighted_sampler::dim)
      .def_property_readonly("size", &weighted_sampler::size)
      .def_property_readonly("n_cubes", &weighted_sampler::n_cubes)
      .def_property_readonly("allocated", &weighted_sampler::allocated)
      .def(
          "points",
          [](const weighted_sampler& s, py::handle first_h, py::handle count_h) {
            const auto first = integer_value<std::uint64_t>("first", first_h);
            const auto count = integer_value<std::uint64_t>("count", count_h);
            MCUBES_EXPECTS(first <= s.size() && count <= s.size() - first, "points ", first, " .. ", first + count,
                           " are not within the sample's ", s.size());
            py::array_t<double> x({static_cast<py::ssize_t>(count), static_cast<py::ssize_t>(s.dim())});
            py::array_t<double> w(static_cast<py::ssize_t>(count));
            double* xp = x.mutable_data();
            double* wp = w.mutable_data();
            {
              py::gil_scoped_release release;
              s.fill(first, count, xp, wp);
            }
            return py::make_tuple(x, w);
          },
          py::arg("first"), py::arg("count"));
  m.def(
      "batch_seed",
      [](py::handle seed, py::handle k) {
        return mcubes::batch_seed(integer_value<std::uint64_t>("seed", seed), integer_value<std::uint64_t>("k", k));
      },
      py::arg("seed"), py::arg("k"), "The seed of integral k of a parameter batch run with `seed` (mcubes::batch_seed).");
  m.def(
      "normalized_options",
      [](const std::string& method, const py::dict& options) {
        if (method == "plain_mc") return normalized<mcubes::plain_mc_options>(options);
        if (method == "midpoint") return normalized<mcubes::midpoint_options>(options);
        return normalized<mcubes::vegas_options>(options);
      },
      py::arg("method"), py::arg("options"),
      "The options of `method` ('vegas', 'plain_mc', 'midpoint') converted to their C++ types and back "
      "(TypeError or ValueError naming a bad one).");
  m.def(
      "integer",
      [](const char* name, py::handle v, std::uint64_t lo, std::uint64_t hi) {
        return integer_value<std::uint64_t>(name, v, lo, hi);
      },
      py::arg("name"), py::arg("value"), py::arg("lo"), py::arg("hi"),
      "value as an integer in [lo, hi], as an option is converted (TypeError or ValueError naming `name`).");
  m.def("reference_batch", [](const std::vector<double>& lower, const std::vector<double>& upper,
                              const std::vector<double>& constants, const py::dict& options) {
    const box b = make_box(lower, upper);
    const mcubes::vegas_options opt = vegas_options_of(options);
    std::vector<mcubes::result> rs;
    {
      py::gil_scoped_release release;
      rs = reference_batch(b, constants, opt);
    }
    py::list out;
    for (const mcubes::result& r : rs) out.append(to_dict(r));
    return out;
  });
  m.def("read_checkpoint", &read_checkpoint_dict, py::arg("data"), py::arg("what"));
  m.def("suite_entries", &suite_entries);
  m.def("vegas_option_docs", [] {  // the options table's names and docs, in its order (mcubes.VEGAS_OPTIONS)
    py::list l;
    mcubes::for_each_vegas_option(
        [&](const mcubes::option_info& info, auto) { l.append(py::make_tuple(info.name, info.doc)); });
    return l;
  });
  m.def("suite_exact", &suite_exact);
  m.def("reference", [](const std::string& method, const std::string& name, const std::vector<double>& lower,
                        const std::vector<double>& upper, const py::dict& options, std::uint64_t n_per_axis) {
    const box b = make_box(lower, upper);
    mcubes::result r;
    if (method == "vegas") {
      const mcubes::vegas_options opt = vegas_options_of(options);
      py::gil_scoped_release release;
      r = reference_vegas(name, b, opt);
    } else if (method == "plain_mc") {
      const mcubes::plain_mc_options opt = plain_mc_options_of(options);
      py::gil_scoped_release release;
      r = reference_plain_mc(name, b, opt);
    } else {
      const mcubes::midpoint_options opt = midpoint_options_of(options);
      py::gil_scoped_release release;
      r = reference_midpoint(name, b, n_per_axis, opt);
    }
    return to_dict(r);
  });
}

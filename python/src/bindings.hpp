#pragma once
/// @file python/src/bindings.hpp
/// What the translation units of the Python module (`mcubes._mcubes`) share: the Python callable
/// as an array integrand (integrand.hpp), the table of per-dimension entries (one instantiation of
/// each method per dimension D = 1..max_dim, spread over dims_*.cpp so that they compile in
/// parallel) and the type-erased integrator.
///
/// GIL: every entry is called with the GIL released (module.cpp); py_callable takes it for each
/// array call only, so point generation and accumulation run on the CPU backend's threads without
/// it, and NumPy's own loops (which release it) overlap across threads. Results never depend on the
/// number of threads (backend/cpu/array_path.hpp).

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include <pybind11/pybind11.h>

#include "device_call.hpp"
#include "mcubes/mcubes.hpp"

namespace mcubes::python {

namespace py = pybind11;

/// Largest dimension of a Python callable (one instantiation of every method per D = 1..max_dim).
inline constexpr int max_dim = 16;

/// Ctrl-C during a run (module.cpp): the KeyboardInterrupt seen by the iteration callback or
/// raised inside the callable on the main thread is kept here and turned into a stop request, so
/// that the run ends with status interrupted and its completed iterations (the pass under way is
/// discarded whole); the Python layer then raises mcubes.Interrupted carrying that result.
struct interrupt_watch {
  stop_request stop;
  bool keyboard = false;  ///< a KeyboardInterrupt was seen (set with the GIL held)
};

/// A Python callable f(x) -> values with x a read-only float64 NumPy array of shape (n, dim) (a
/// copy of the library's points: valid after the call) and values anything NumPy turns into a
/// float64 array of shape (n,). Called with the GIL released; takes it for the call. Errors: the
/// callable's exception propagates (py::error_already_set); a result of another shape is a
/// ValueError, one that is not numeric a TypeError. The callable is borrowed: the caller keeps it
/// alive for the run.
struct py_callable {
  /// Arrays handed to the callable, reused when it kept no reference to them (refcount 1): no
  /// allocation and no first-touch page faults per call. Touched with the GIL only; the last copy of
  /// the py_callable (the one its entry made, destroyed with the GIL held) releases them.
  struct array_pool {
    std::vector<py::object> arrays;
  };
  PyObject* fn = nullptr;
  int dim = 0;
  /// 0: a scalar integrand (values of shape (n,)); N >= 1: a vector-valued one, values of shape
  /// (n, N) written row-major (for N = 1, (n,) is taken too).
  int components = 0;
  /// Values per point in the output (vector: the instantiation's width >= components, the
  /// columns beyond `components` written as 0); 0: components.
  int width = 0;
  std::shared_ptr<array_pool> pool = std::make_shared<array_pool>();
  /// Where a KeyboardInterrupt raised by the callable is kept (then pass_abandoned is thrown: the
  /// run stops at this pass), or null: it propagates as the callable's other exceptions do.
  interrupt_watch* watch = nullptr;
  void operator()(const double* x, std::size_t n, double* values) const;
};

/// The entries of one dimension D (dims_impl.hpp).
struct dim_entry {
  result (*vegas)(const py_callable&, const box&, const vegas_options&, const iteration_callback&) = nullptr;
  result (*plain_mc)(const py_callable&, const box&, const plain_mc_options&) = nullptr;
  result (*midpoint)(const py_callable&, const box&, std::uint64_t, const midpoint_options&) = nullptr;
  std::unique_ptr<integrator_base> (*make_integrator)(const box&, const vegas_options&) = nullptr;
};

/// Largest number of components of a vector-valued Python callable (as C++'s vegas_vector).
inline constexpr int max_components = 64;

/// The widths N of the vector instantiations (vector_array_function<D, N, py_callable>): every
/// count up to 8, then 16, 32 and 64; a callable of n components runs in the smallest width N >= n,
/// its values padded with zeros (vegas_vector_with's `components`).
inline constexpr int vector_widths[] = {1, 2, 3, 4, 5, 6, 7, 8, 16, 32, 64};
/// The width a callable of n components runs in (n in 1..max_components).
constexpr int vector_width_for(int n) {
  for (int w : vector_widths)
    if (w >= n) return w;
  return max_components;
}

/// mcubes::vegas_vector_with for a callable of `components` = n values in the width-N
/// instantiation (table[D][N], N = vector_width_for(n)).
using vector_entry = vector_result (*)(const py_callable&, const box&, const vegas_options&, const iteration_callback&,
                                       int components, const vector_resumption& resume);

/// Fill table[D][N] for the dimensions of each translation unit (vector_dims_*.cpp).
void register_vector_dims_a(vector_entry (*table)[max_components + 1]);
void register_vector_dims_b(vector_entry (*table)[max_components + 1]);
void register_vector_dims_c(vector_entry (*table)[max_components + 1]);
void register_vector_dims_d(vector_entry (*table)[max_components + 1]);

/// Fill table[D] for the dimensions of each translation unit (table has max_dim + 1 entries).
void register_dims_a(dim_entry* table);
void register_dims_b(dim_entry* table);
void register_dims_c(dim_entry* table);
void register_dims_d(dim_entry* table);

/// The C++ reference runs of the tests and the benchmark (reference.cpp): `name` "poly" (the
/// polynomial of python/tests, d in {1, 3, 8}) or "f4" (the paper's Gaussian, d = 8), as one-point
/// functors on the CPU backend. @throws invalid_input for another name or dimension.
result reference_vegas(const std::string& name, const box& b, const vegas_options& opt);
result reference_plain_mc(const std::string& name, const box& b, const plain_mc_options& opt);
result reference_midpoint(const std::string& name, const box& b, std::uint64_t n, const midpoint_options& opt);
/// mcubes::vegas_batch over [lower, upper]^3 of poly with its constant 0.01 replaced by each of
/// `constants` (the parameter scan's reference). @throws invalid_input for another dimension.
std::vector<result> reference_batch(const box& b, const std::vector<double>& constants, const vegas_options& opt);

}  // namespace mcubes::python

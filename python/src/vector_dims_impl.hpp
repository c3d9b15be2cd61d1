#pragma once
/// @file python/src/vector_dims_impl.hpp
/// The entries of vector-valued Python callables (bindings.hpp, vector_entry): mcubes::vegas_vector
/// for vector_array_function<D, N, py_callable> (the CPU backend calls the callable per group of
/// chunks of up to 32768 points, backend/cpu/vector_pass.hpp), N in vector_widths. Included by
/// vector_dims_a.cpp .. vector_dims_d.cpp, each instantiating a few D.

#include <iterator>
#include <utility>

#include "bindings.hpp"

namespace mcubes::python {

template <int D, int N>
vector_result vector_vegas(const py_callable& f, const box& b, const vegas_options& opt, const iteration_callback& cb,
                           int components, const vector_resumption& resume) {
  validate(opt, D);
  (void)uses_cuda(opt);  // backend cuda: invalid_input (NumPy callables run on the CPU)
  (void)one_device_of(opt, "a vector integrand");  // several devices: invalid_input
  cpu_backend backend(opt.threads, opt.stop);
  return mcubes::vegas_vector_with<D, N>(vector_array_function<D, N, py_callable>{f}, b.to_region<D>(), opt, backend, cb,
                                         components, resume);
}

template <int D, int... I>
void register_vector_dim(vector_entry (*table)[max_components + 1], std::integer_sequence<int, I...>) {
  ((table[D][vector_widths[I]] = &vector_vegas<D, vector_widths[I]>), ...);
}

template <int D>
void register_vector_dim(vector_entry (*table)[max_components + 1]) {
  register_vector_dim<D>(table, std::make_integer_sequence<int, static_cast<int>(std::size(vector_widths))>{});
}

}  // namespace mcubes::python

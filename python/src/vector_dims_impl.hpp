#pragma once
/// @file python/src/vector_dims_impl.hpp
/// The entries of vector-valued Python callables (bindings.hpp, vector_entry): mcubes::vegas_vector
/// for vector_array_function<D, N, py_callable> (the CPU backend calls the callable per group of
/// chunks of up to 32768 points, backend/cpu/vector_pass.hpp), N = 1..max_components. Included by
/// vector_dims_a.cpp .. vector_dims_d.cpp, each instantiating a few D.

#include <utility>

#include "bindings.hpp"

namespace mcubes::python {

template <int D, int N>
vector_result vector_vegas(const py_callable& f, const box& b, const vegas_options& opt, const iteration_callback& cb) {
  return mcubes::vegas_vector<D>(vector_array_function<D, N, py_callable>{f}, b.to_region<D>(), opt, cb);
}

template <int D, int... N>
void register_vector_dim(vector_entry (*table)[max_components + 1], std::integer_sequence<int, N...>) {
  ((table[D][N + 1] = &vector_vegas<D, N + 1>), ...);
}

template <int D>
void register_vector_dim(vector_entry (*table)[max_components + 1]) {
  register_vector_dim<D>(table, std::make_integer_sequence<int, max_components>{});
}

}  // namespace mcubes::python

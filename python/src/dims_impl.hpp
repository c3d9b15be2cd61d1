#pragma once
/// @file python/src/dims_impl.hpp
/// The per-dimension entries of the Python module (bindings.hpp, dim_entry): each method of the
/// library instantiated for array_function<D, py_callable> (an array integrand: the CPU backend
/// evaluates the callable on slices of up to 32768 points, backend/cpu/array_path.hpp). Included
/// by dims_a.cpp .. dims_d.cpp, each instantiating a few D.

#include <memory>

#include "bindings.hpp"

namespace mcubes::python {

template <int D>
using py_integrand = array_function<D, py_callable>;

template <int D>
class integrator_of final : public integrator_holder<D> {
 public:
  using integrator_holder<D>::integrator_holder;
  result integrate(const py_callable& f, const vegas_options& opt, const iteration_callback& cb) override {
    return this->integ_.integrate(py_integrand<D>{f}, opt, cb);
  }
  result integrate_device(const device_callback&, const vegas_options&, const iteration_callback&) override {
    throw invalid_input("this integrator runs NumPy callables on the CPU backend; for a GPU callable make it with "
                        "backend='cuda'");
  }
};

template <int D>
void register_dim(dim_entry* table) {
  dim_entry& e = table[D];
  e.vegas = [](const py_callable& f, const box& b, const vegas_options& opt, const iteration_callback& cb) {
    return mcubes::vegas(py_integrand<D>{f}, b.to_region<D>(), opt, cb);
  };
  e.plain_mc = [](const py_callable& f, const box& b, const plain_mc_options& opt) {
    return mcubes::plain_mc(py_integrand<D>{f}, b.to_region<D>(), opt);
  };
  e.midpoint = [](const py_callable& f, const box& b, std::uint64_t n, const midpoint_options& opt) {
    return mcubes::midpoint(py_integrand<D>{f}, b.to_region<D>(), n, opt);
  };
  e.make_integrator = [](const box& b, const vegas_options& opt) -> std::unique_ptr<integrator_base> {
    return std::make_unique<integrator_of<D>>(b, opt);
  };
}

}  // namespace mcubes::python

#pragma once
/// @file python/src/device_dims_impl.cuh
/// The per-dimension entries of GPU callables (device_call.hpp): mcubes::vegas on the CUDA backend
/// for device_array_function<D, python_device_call>, whose array call hands the points to the
/// Python side (a PyTorch or CuPy function, module.cpp) and copies its values into the backend's
/// buffer. Included by device_dims_a.cu .. device_dims_d.cu, each instantiating a few D.

#include <mcubes/cuda.cuh>

#include "device_call.hpp"

namespace mcubes::python {

/// The array call of a GPU callable: the Python side evaluates (on whatever stream its framework
/// uses), the device is synchronised (every stream: the framework's kernels are done), the values
/// are copied into `values` on the backend's stream, and the result object is released.
/// @throws cuda_error if a CUDA call fails; the callable's exception.
struct python_device_call {
  device_callback cb;
  void operator()(const double* x, std::size_t n, double* values, cudaStream_t stream) const {
    void* keep = nullptr;
    const double* r = cb.evaluate(cb.ctx, x, n, &keep);
    struct release {
      const device_callback& cb;
      void* keep;
      ~release() { cb.release(keep); }
    } guard{cb, keep};
    MCUBES_CUDA_CHECK(cudaDeviceSynchronize());
    if (n != 0) MCUBES_CUDA_CHECK(cudaMemcpyAsync(values, r, n * sizeof(double), cudaMemcpyDeviceToDevice, stream));
    MCUBES_CUDA_CHECK(cudaStreamSynchronize(stream));
  }
};

template <int D>
using device_integrand = device_array_function<D, python_device_call>;

/// The CUDA integrator<D> of GPU callables (integrator_base).
template <int D>
class device_integrator final : public integrator_holder<D> {
 public:
  device_integrator(const box& b, const vegas_options& opt) : integrator_holder<D>(b, opt) {
    MCUBES_EXPECTS(opt.backend == backend_kind::cuda, "a GPU callable runs on backend 'cuda'");
  }
  result integrate(const py_callable&, const vegas_options&, const iteration_callback&) override {
    throw invalid_input("this integrator runs GPU callables on the CUDA backend; for a NumPy callable make it with "
                        "backend='cpu'");
  }
  result integrate_device(const device_callback& f, const vegas_options& opt, const iteration_callback& cb) override {
    return this->integ_.integrate(device_integrand<D>{python_device_call{f}}, opt, cb);
  }
};

template <int D>
void register_device_dim(device_vegas_entry* table, device_integrator_factory* integrators) {
  if constexpr (!cuda_compile_check || D == compile_check_device_dim) {  // device_call.hpp
    table[D] = [](const device_callback& cb, const box& b, const vegas_options& opt, const iteration_callback& on_it) {
      MCUBES_EXPECTS(opt.backend == backend_kind::cuda, "a GPU callable runs on backend 'cuda'");
      return mcubes::vegas(device_integrand<D>{python_device_call{cb}}, b.to_region<D>(), opt, on_it);
    };
    integrators[D] = [](const box& b, const vegas_options& opt) -> std::unique_ptr<integrator_base> {
      return std::make_unique<device_integrator<D>>(b, opt);
    };
  }
}

}  // namespace mcubes::python

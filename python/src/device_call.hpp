#pragma once
/// @file python/src/device_call.hpp
/// What the Python module's CUDA translation units (cuda_dims_*.cu) share with the rest of it,
/// free of pybind11 (the .cu files are compiled by nvcc, the Python side by the C++ compiler):
/// the integration box and the entries for GPU callables (a PyTorch or CuPy function evaluated on
/// the device: a device array integrand, include/mcubes/backend/cuda/array_path.cuh).

#include <array>
#include <cstddef>
#include <functional>
#include <memory>
#include <vector>

#include "mcubes/mcubes.hpp"

namespace mcubes::python {

/// An integration box of run-time dimension (lower.size() == upper.size() == d).
struct box {
  std::vector<double> lower, upper;
  int dim() const { return static_cast<int>(lower.size()); }
  /// region<D> of the box. @throws invalid_input as region<D> does.
  template <int D>
  region<D> to_region() const {
    std::array<double, D> lo{}, hi{};
    for (int j = 0; j < D; ++j) lo[j] = lower[static_cast<std::size_t>(j)], hi[j] = upper[static_cast<std::size_t>(j)];
    return region<D>(lo, hi);
  }
};

/// The Python side of a GPU callable (module.cpp): evaluate(ctx, x, n, &keep) calls the user's
/// function on the n points at device address x (row-major (n, d) float64) and returns the device
/// address of its n float64 values, which stay valid until release(keep) (keep holds the result
/// object); it takes the GIL itself and throws the callable's exception (pybind11's
/// error_already_set) on failure. release(keep) never throws.
struct device_callback {
  void* ctx = nullptr;
  const double* (*evaluate)(void* ctx, const double* x, std::size_t n, void** keep) = nullptr;
  void (*release)(void* keep) noexcept = nullptr;
};

struct py_callable;  // bindings.hpp: a NumPy callable (CPU backend)

/// An m-Cubes integrator of run-time dimension (mcubes::integrator<D> behind a virtual interface):
/// on the CPU backend for NumPy callables (dims_impl.hpp), or on the CUDA backend for GPU callables
/// (device_dims_impl.cuh). The other kind of callable is refused with invalid_input.
class integrator_base {
 public:
  virtual ~integrator_base() = default;
  virtual result integrate(const py_callable& f, const vegas_options& opt, const iteration_callback& cb) = 0;
  virtual result integrate_device(const device_callback& f, const vegas_options& opt, const iteration_callback& cb) = 0;
  virtual std::vector<double> edges() const = 0;
  virtual void set_edges(const std::vector<double>& edges) = 0;
  virtual void reset() = 0;
  virtual vegas_state state() const = 0;
  virtual void set_state(const vegas_state& s) = 0;
  /// integrator<D>::density(): the learnt map and VEGAS+ shares (weighted samples).
  virtual sampling_density density() const = 0;
  /// integrator<D>'s checkpoints (checkpoint_of, resume, checkpoint_to).
  virtual checkpoint checkpoint_of(const std::string& integrand) const = 0;
  virtual void resume(const checkpoint& c, const std::string& integrand) = 0;
  virtual void checkpoint_to(const std::string& path, const std::string& integrand, const checkpoint_schedule& s) = 0;
  virtual void checkpoint_with(std::function<void(const std::function<vegas_progress()>&, bool)> save) = 0;
};

// integrator<D> is a different class in a translation unit compiled by nvcc (methods.hpp's inline
// namespaces), so the holder of one is too: without its own inline namespace per kind of unit, the
// CPU units' inline members (edges() reading the host map) could be linked into the CUDA
// integrators (a crash at Integrator(backend='cuda').edges()).
#if defined(__CUDACC__)
inline namespace nvcc_units {
#else
inline namespace host_units {
#endif
/// The part of integrator_base that both kinds share: the map and the state of an integrator<D>.
template <int D>
class integrator_holder : public integrator_base {
 public:
  integrator_holder(const box& b, const vegas_options& opt) : integ_(b.to_region<D>(), opt) {}
  std::vector<double> edges() const override { return integ_.edges(); }
  void set_edges(const std::vector<double>& e) override { integ_.set_edges(e); }
  void reset() override { integ_.reset(); }
  vegas_state state() const override { return integ_.state(); }
  void set_state(const vegas_state& s) override { integ_.set_state(s); }
  sampling_density density() const override { return integ_.density(); }
  checkpoint checkpoint_of(const std::string& integrand) const override { return integ_.checkpoint_of(integrand); }
  void resume(const checkpoint& c, const std::string& integrand) override { integ_.resume(c, integrand); }
  void checkpoint_to(const std::string& path, const std::string& integrand, const checkpoint_schedule& s) override {
    integ_.checkpoint_to(path, integrand, s);
  }
  void checkpoint_with(std::function<void(const std::function<vegas_progress()>&, bool)> save) override {
    integ_.checkpoint_with(std::move(save));
  }

 protected:
  integrator<D> integ_;
};
}  // inline namespace

/// Vegas of a GPU callable on the CUDA backend (opt.backend must be cuda) in dimension b.dim():
/// bitwise the C++ run of a one-point functor computing the same values (array_path.cuh).
/// @throws invalid_input for a dimension outside 1..max_device_dim or bad options; as mcubes::vegas.
using device_vegas_entry = result (*)(const device_callback&, const box&, const vegas_options&, const iteration_callback&);

/// Largest dimension of a GPU callable (one CUDA instantiation per dimension).
inline constexpr int max_device_dim = 16;

/// Whether the GPU callables' entries exist for d = compile_check_device_dim alone: a build
/// configured with MCUBES_CUDA_COMPILE_CHECK=ON (scripts/test.sh where no GPU is visible: the CUDA
/// code is compiled to check that it compiles, nothing can run it); other dimensions are refused
/// with a message naming the build option.
inline constexpr bool cuda_compile_check =
#if defined(MCUBES_CUDA_COMPILE_CHECK) && MCUBES_CUDA_COMPILE_CHECK
    true;
#else
    false;
#endif
inline constexpr int compile_check_device_dim = 2;

/// A CUDA integrator of dimension b.dim() for GPU callables (opt.backend cuda).
using device_integrator_factory = std::unique_ptr<integrator_base> (*)(const box&, const vegas_options&);

/// Fill table[D] (and integrators[D]) for the dimensions of each CUDA translation unit (table has max_device_dim + 1
/// entries); defined only when the module is built with CUDA (MCUBES_PYTHON_HAS_CUDA).
void register_device_dims_a(device_vegas_entry* table, device_integrator_factory* integrators);
void register_device_dims_b(device_vegas_entry* table, device_integrator_factory* integrators);
void register_device_dims_c(device_vegas_entry* table, device_integrator_factory* integrators);
void register_device_dims_d(device_vegas_entry* table, device_integrator_factory* integrators);

}  // namespace mcubes::python

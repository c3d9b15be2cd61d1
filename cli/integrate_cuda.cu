/// @file cli/integrate_cuda.cu
/// The CUDA side of `mcubes integrate` (compiled only when CMake enables CUDA): runs a suite
/// integrand with mcubes::vegas_with on a cuda_backend.
///
/// Each (integrand, dimension) pair instantiates the V-Sample kernels (adapting and not, for block
/// sizes up to 256 and up to 1024), several seconds of nvcc each, so the command compiles the CUDA
/// path for the dimensions in kCudaDims only: f1..f6 in d = 2..10 (the suite's dimensions are
/// 3, 5, 6 and 8), fA in 6 and fB in 9. Other dimensions run on the CPU (--backend auto says
/// so; --backend cuda is bad input) or through the library in the user's own .cu file.
#include <mcubes/cuda.cuh>
#include <mcubes/suite.hpp>

#include <utility>

#include "integrand_dispatch.hpp"

namespace mcubes::cli {
namespace {

constexpr int kMinDim = 2, kMaxDim = 10;

template <class F, int D>
result run_cuda_dim(const run_request& rq) {
  vegas_options o = rq.options;
  o.backend = backend_kind::cuda;
  validate(o, D);
  result r = mcubes::vegas<D>(F{}, region<D>::cube(rq.entry->lower, rq.entry->upper), o, rq.on_iteration);
  r.options.backend = rq.backend.requested;
  return r;
}

template <class F, int... I>
result run_cuda_table(const run_request& rq, std::integer_sequence<int, I...>) {
  using fn = result (*)(const run_request&);
  static constexpr fn table[] = {&run_cuda_dim<F, I + kMinDim>...};
  return table[rq.dim - kMinDim](rq);
}

template <class F>
result run_cuda_any(const run_request& rq) {
  MCUBES_EXPECTS(rq.dim >= kMinDim && rq.dim <= kMaxDim, "the command's CUDA backend is compiled for d in [", kMinDim,
                 ", ", kMaxDim, "], got ", rq.dim);
  return run_cuda_table<F>(rq, std::make_integer_sequence<int, kMaxDim - kMinDim + 1>{});
}

}  // namespace

int cli_cuda_device_count() { return cuda_device_count(); }

std::string cli_cuda_device_name() {
  cudaDeviceProp p;
  if (cudaGetDeviceProperties(&p, 0) != cudaSuccess) return "device 0";
  return p.name;
}

bool cli_cuda_supports(const std::string& name, int dim) {
  if (name == "fA") return dim == 6;
  if (name == "fB") return dim == 9;
  return dim >= kMinDim && dim <= kMaxDim;
}

std::string cli_cuda_dims() { return "[" + std::to_string(kMinDim) + ", " + std::to_string(kMaxDim) + "] (fA: 6, fB: 9)"; }

result run_suite_on_cuda(const run_request& rq) {
  const std::string& n = rq.entry->name;
  if (n == "f1") return run_cuda_any<suite::f1_oscillatory>(rq);
  if (n == "f2") return run_cuda_any<suite::f2_product_peak>(rq);
  if (n == "f3") return run_cuda_any<suite::f3_corner_peak>(rq);
  if (n == "f4") return run_cuda_any<suite::f4_gaussian>(rq);
  if (n == "f5") return run_cuda_any<suite::f5_c0>(rq);
  if (n == "f6") return run_cuda_any<suite::f6_discontinuous>(rq);
  if (n == "fA") {
    MCUBES_EXPECTS(rq.dim == 6, "dimension of fA is fixed at 6, got ", rq.dim);
    return run_cuda_dim<suite::fA_sin_sum, 6>(rq);
  }
  if (n == "fB") {
    MCUBES_EXPECTS(rq.dim == 9, "dimension of fB is fixed at 9, got ", rq.dim);
    return run_cuda_dim<suite::fB_narrow_gaussian, 9>(rq);
  }
  throw invalid_input("unknown integrand '" + n + "'");
}

}  // namespace mcubes::cli

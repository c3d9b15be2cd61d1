/// @file cli/pi_cuda.cu
/// The CUDA part of `mcubes pi` (see pi_cuda.hpp): compiled by nvcc into the mcubes binary only
/// when CMake's MCUBES_HAS_CUDA is ON.
#include "pi_cuda.hpp"

#include <cuda_runtime.h>

#include <mcubes/cuda.cuh>
#include <mcubes/backend/cuda/check.cuh>

namespace mcubes::cli::pi_cuda {

device_probe probe() {
  device_probe p;
  int n = 0;
  const cudaError_t e = cudaGetDeviceCount(&n);
  if (e != cudaSuccess) {
    (void)cudaGetLastError();
    p.description = std::string("no usable CUDA device (") + cudaGetErrorName(e) + ": " + cudaGetErrorString(e) + ")";
    return p;
  }
  if (n < 1) {
    p.description = "no CUDA device";
    return p;
  }
  cudaDeviceProp props{};
  const cudaError_t e2 = cudaGetDeviceProperties(&props, 0);
  if (e2 != cudaSuccess) {
    (void)cudaGetLastError();
    p.description = std::string("CUDA device 0 unusable (") + cudaGetErrorName(e2) + ")";
    return p;
  }
  p.available = true;
  p.description = std::string(props.name) + " (" + std::to_string(props.multiProcessorCount) +
                  " SMs, compute capability " + std::to_string(props.major) + "." + std::to_string(props.minor) + ")";
  return p;
}

pi_mc_result monte_carlo(const pi_options& opt, launch_report* report) {
  validate(opt);
  cuda_launch_policy policy;
  policy.threads_per_block = opt.cuda_threads_per_block;
  cuda_backend backend(policy, opt.device);
  const pi_mc_result r = pi_monte_carlo_with(opt, backend);
  if (report) *report = backend.last_launch();
  return r;
}

result midpoint(std::uint64_t n, int threads_per_block, launch_report* report) {
  const region<1> reg = midpoint_interval(0.0, 1.0, n);
  midpoint_options opt;
  opt.backend = backend_kind::cuda;
  opt.cuda_threads_per_block = threads_per_block;
  validate(opt);
  cuda_launch_policy policy;
  policy.threads_per_block = threads_per_block;
  cuda_backend backend(policy, opt.device);
  const result r = midpoint_with<1>(mcubes::detail::as_point_integrand(pi_integrand{}), reg, n, opt, backend);
  if (report) *report = backend.last_launch();
  return r;
}

}  // namespace mcubes::cli::pi_cuda

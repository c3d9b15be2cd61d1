#pragma once
/// @file cuda.cuh
/// Entry point with the CUDA backend (include in a translation unit compiled by nvcc):
/// mcubes::integrate runs m-Cubes on the backend named in the options: cpu, cuda, or automatic
/// (CUDA when a device is present, else the CPU; result.backend says which ran).

#include "backend/cuda.cuh"
#include "mcubes.hpp"

namespace mcubes {

/// Integrates f over `reg` with m-Cubes on the backend chosen by opt.backend (see vegas_with for
/// the algorithm, determinism and exceptions; backend/cuda.cuh for the CUDA contract).
/// @throws cuda_error for backend cuda without a device, or when a CUDA call fails.
template <int D, class F>
result integrate(const F& f, const region<D>& reg, const vegas_options& opt = {}) {
  validate(opt, D);
  const bool use_cuda = opt.backend == backend_kind::cuda ||
                        (opt.backend == backend_kind::automatic && cuda_device_count() > 0);
  if (use_cuda) {
    cuda_launch_policy policy;
    policy.threads_per_block = opt.cuda_threads_per_block;
    return vegas_with<D>(f, reg, opt, cuda_backend(policy));
  }
  return vegas_with<D>(f, reg, opt, cpu_backend(opt.threads));
}

}  // namespace mcubes

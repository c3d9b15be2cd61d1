#pragma once
/// @file cuda.cuh
/// Entry point with the CUDA backend (include in a translation unit compiled by nvcc):
/// mcubes::integrate runs m-Cubes on the backend named in the options: cpu, cuda, or automatic
/// (CUDA when a device is present, else the CPU; result.backend says which ran).

#include <memory>

#include "backend/cuda.cuh"
#include "mcubes.hpp"

namespace mcubes {

/// The launch policy (less threads_per_block, which comes from vegas_options) of the backends that
/// cached_cuda_backend makes: a tuning hook for benchmarks (mcubes-bench --adapt-tiles). Set it
/// before the first integration of a thread. No field of the policy changes a result.
inline cuda_launch_policy& cuda_launch_defaults() {
  static cuda_launch_policy defaults;
  return defaults;
}

/// The calling host thread's cuda_backend for device 0 and `threads_per_block`, created on first use
/// and kept (with its stream, device buffers and pinned host buffers, which cost far more to
/// allocate than a small integration takes) until the thread ends or the block size changes.
inline const cuda_backend& cached_cuda_backend(int threads_per_block) {
  thread_local std::unique_ptr<cuda_backend> backend;
  cuda_launch_policy policy = cuda_launch_defaults();
  policy.threads_per_block = threads_per_block;
  if (!backend || backend->policy().threads_per_block != threads_per_block ||
      backend->policy().max_blocks != policy.max_blocks ||
      backend->policy().adapt_tiles_per_block != policy.adapt_tiles_per_block) {
    backend.reset();
    backend = std::make_unique<cuda_backend>(policy);
  }
  return *backend;
}

/// Integrates f over `reg` with m-Cubes on the backend chosen by opt.backend (see vegas_with for
/// the algorithm, determinism and exceptions; backend/cuda.cuh for the CUDA contract).
/// @throws cuda_error for backend cuda without a device, or when a CUDA call fails.
/// `on_iteration`, if given, is called after every iteration and may stop the run (result.hpp).
template <int D, class F>
result integrate(const F& f, const region<D>& reg, const vegas_options& opt = {},
                 const iteration_callback& on_iteration = {}) {
  validate(opt, D);
  const bool use_cuda = opt.backend == backend_kind::cuda ||
                        (opt.backend == backend_kind::automatic && cuda_device_count() > 0);
  if (use_cuda) return vegas_with<D>(f, reg, opt, cached_cuda_backend(opt.cuda_threads_per_block), on_iteration);
  return vegas_with<D>(f, reg, opt, cpu_backend(opt.threads), on_iteration);
}

}  // namespace mcubes

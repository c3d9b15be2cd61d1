#pragma once
/// @file backend/cuda/plain_mc.cuh
/// Plain Monte Carlo on a CUDA device: one thread per problem-defined chunk of samples
/// (algorithm/plain_mc.hpp), block-level and host-side merges over the fixed tree
/// (launch.cuh, reduce_chunks). Usually reached through algorithm/plain_mc.hpp in a .cu file.
///
/// Determinism contract: bitwise identical for any threads-per-block in {32, ..., 1024}, any grid,
/// on every run; equal to the CPU result to rounding (nvcc's FMA contraction in f and in the chunk
/// loop), not bitwise.

#include <chrono>
#include <cstdint>

// check.cuh first: the front end of algorithm/plain_mc.hpp (reached from here when this header is
// included first) calls cuda_device_count.
#include "check.cuh"
#include "launch.cuh"
#include "../../algorithm/plain_mc.hpp"

namespace mcubes::cuda {

namespace plain_mc_detail {
/// Device functor computing one chunk's partial.
template <int D, class F>
struct chunk_fn {
  F f;
  plain_mc_params<D> p;
  __device__ mc_partial operator()(std::uint64_t chunk) const { return plain_mc_chunk<D>(f, p, chunk); }
};
}  // namespace plain_mc_detail

/// Plain Monte Carlo of f over `reg` on the current CUDA device (formula, error and determinism:
/// algorithm/plain_mc.hpp). f must be trivially copyable with a __host__ __device__ (or
/// __device__) call operator. result.seconds: wall time after device initialisation; `report`
/// (optional): launch geometry and kernel time. opt.backend and opt.threads are ignored; status
/// against opt.rel_tol / opt.abs_tol as on the CPU (algorithm/plain_mc.hpp).
/// @throws invalid_input for bad options; cuda_error if no device is present or a CUDA call fails;
///         non_finite_integrand (first sample in index order; its point recomputed on the host),
///         numerical_error on overflow (the first overflowing sample, found on the device).
template <int D, class F>
result plain_mc(const F& f, const region<D>& reg, const plain_mc_options& opt, launch_report* report) {
  static_assert(D >= 1, "dimension must be at least 1");
  validate(opt);
  require_device();
  const auto t0 = std::chrono::steady_clock::now();
  const plain_mc_params<D> p = mcubes::detail::make_plain_mc_params<D>(reg, opt);
  const mc_partial total = reduce_chunks<mc_partial>(plain_mc_detail::chunk_fn<D, F>{f, p}, p.n_chunks,
                                                     opt.cuda_threads_per_block, report);
  const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  return mcubes::detail::plain_mc_finish<D>(total, p, reg, opt, "cuda", seconds);
}

}  // namespace mcubes::cuda

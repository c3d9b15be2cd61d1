#pragma once
/// @file backend/cuda/midpoint.cuh
/// The composite midpoint rule on a CUDA device: one thread per problem-defined chunk of points
/// (algorithm/midpoint.hpp: blocks of 8 values summed pairwise, Neumaier-compensated chunk sums,
/// double-double merges), block-level and host-side merges over the fixed tree (launch.cuh,
/// reduce_chunks). The device computes every field of midpoint_partial, as the CPU does: the sum,
/// the embedded coarse rule's sum, the sum of |f| and the non-zero count, so the error estimate
/// and the status are those of the CPU (to rounding). Usually reached through
/// algorithm/midpoint.hpp in a .cu file.
///
/// Determinism contract: bitwise identical for any threads-per-block in {32, ..., 1024}, any grid,
/// on every run; equal to the CPU result to rounding (FMA contraction), not bitwise.

#include <chrono>
#include <cstdint>

// check.cuh first: the front end of algorithm/midpoint.hpp (reached from here when this header is
// included first) calls cuda_device_count.
#include "check.cuh"
#include "launch.cuh"
#include "../../algorithm/midpoint.hpp"

namespace mcubes::cuda {

namespace midpoint_detail {
/// Device functor summing one chunk.
template <int D, class F>
struct chunk_fn {
  F f;
  midpoint_params<D> p;
  __device__ midpoint_partial operator()(std::uint64_t chunk) const { return midpoint_chunk<D>(f, p, chunk); }
};
}  // namespace midpoint_detail

/// Tensor-product midpoint rule with n_per_axis points per axis over `reg` on the current CUDA
/// device (formula, rounding and determinism: algorithm/midpoint.hpp). f: trivially copyable,
/// __host__ __device__ call operator taking point<D>. result.seconds: wall time after device
/// initialisation; `report` (optional): launch geometry and kernel time. opt.backend and
/// opt.threads are ignored; error estimate and status as on the CPU (algorithm/midpoint.hpp).
/// @throws invalid_input for bad options or sizes; cuda_error if no device is present or a CUDA
///         call fails; non_finite_integrand (first point in index order), numerical_error on overflow.
template <int D, class F>
result midpoint(const F& f, const region<D>& reg, std::uint64_t n_per_axis, const midpoint_options& opt,
                launch_report* report) {
  static_assert(D >= 1, "dimension must be at least 1");
  validate(opt);
  const midpoint_params<D> p = mcubes::detail::make_midpoint_params<D>(reg, n_per_axis);
  require_device();
  const auto t0 = std::chrono::steady_clock::now();
  const midpoint_partial total = reduce_chunks<midpoint_partial>(midpoint_detail::chunk_fn<D, F>{f, p}, p.n_chunks,
                                                                 opt.cuda_threads_per_block, report);
  const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  return mcubes::detail::midpoint_finish<D>(total, p, reg, opt, "cuda", seconds);
}

}  // namespace mcubes::cuda

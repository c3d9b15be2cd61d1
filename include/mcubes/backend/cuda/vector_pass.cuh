#pragma once
/// @file backend/cuda/vector_pass.cuh
/// The pass of a vector-valued integrand on the CUDA backend (cuda_backend::sample_passes of a vector integrand): the
/// choice of kernel and block size (backend/cuda/vector_kernels.cuh), the launch over the tiles
/// (launch_grid), the fixed tree over the tile values and the sums as vector_pass_sums.

#include <cuda_runtime.h>

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <limits>
#include <string>

#include "../../core/reduction.hpp"
#include "../../core/sampler.hpp"
#include "../../core/stratification.hpp"
#include "../../core/vector_pass_sums.hpp"
#include "../../core/vector_sampler.hpp"
#include "../../error.hpp"
#include "check.cuh"
#include "occupancy.cuh"
#include "pass_buffers.cuh"
#include "vector_kernels.cuh"
#include "vegas_pass.cuh"

namespace mcubes {
namespace cuda_detail {

/// Largest number of components of a vector integrand on the CUDA backend (as on the CPU).
inline constexpr int max_vector_components = 64;

/// One pass of a vector-valued integrand (values<N>, N <= max_vector_components) over `map`: see
/// cuda_backend::sample_passes of a vector integrand. Synchronises once.
/// @throws invalid_input if N > max_vector_components; cuda_error if a CUDA call fails.
template <int D, int N, class F>
vector_pass_sums sample_vector_pass(pass_context& cx, const F& f, const sampling_params<D>& sp, const stratification& st,
                                    const map_view<D>& map, bool adapt, std::uint64_t stride) {
  MCUBES_EXPECTS(N <= max_vector_components, "the CUDA backend integrates vector integrands of up to ",
                 max_vector_components, " components, got ", N);
  constexpr int M = vector_partial_size<N>;
  cx.device.use();
  pass_buffers& buf = cx.buffers;
  const cudaStream_t stream = cx.stream();
  const std::uint64_t n_sel = (st.n_chunks + stride - 1) / stride;
  const std::uint64_t width = next_pow2(n_sel);
  const std::size_t n_bin_values = static_cast<std::size_t>(D) * map.n_bins;
  if (buf.vector_out.size() < static_cast<std::size_t>(M) + 4) {
    buf.vector_out = device_array<double>(M + 4);
    buf.host_vector_out = pinned_array<double>(M + 4);
  }
  if (adapt) buf.begin_adapting_pass(n_bin_values, stream);
  const philox_schedule rng = philox_schedule::make(sp.seed, stream_id::vegas, sp.iteration);
  int B = cx.policy.threads_per_block;
  std::uint64_t n_tiles = 0;
  // Launches `kernel` with B threads and smem bytes over the n_tiles tiles (launch_grid: the
  // resident blocks, at most one per tile).
  const auto launch_vector = [&](auto kernel, std::size_t smem, const char* name) {
    const int per_sm = cx.occupancy.blocks_per_sm(kernel, B, smem);
    if (per_sm < 1)
      throw cuda_error(std::string(name) + " cannot run with " + std::to_string(B) + " threads per block and " +
                       std::to_string(smem) + " bytes of shared memory");
    const std::uint64_t grid = policy_grid(cx.policy, per_sm, cx.device.multiprocessors(), n_tiles);
    kernel<<<static_cast<unsigned>(grid), B, smem, stream>>>(f, sp, map, stride, n_sel, n_tiles, buf.vector_tiles.data(),
                                                             buf.bins.data(), buf.over.data(), buf.flags.data(), rng);
    MCUBES_CUDA_CHECK_LAUNCH(name);
  };
  const auto ensure_tiles = [&] {
    n_tiles = (n_sel + B - 1) / B;
    if (buf.vector_tiles.size() < n_tiles * M) buf.vector_tiles = device_array<double>(n_tiles * M);
  };
  if constexpr (vector_tile_fits(N, 32)) {
    constexpr std::size_t smem32 = vector_tile_smem_bytes(M, 32);
    B = 32;
    if constexpr (vector_tile_fits(N, 64)) {
      constexpr std::size_t smem64 = vector_tile_smem_bytes(M, 64);
      if (cx.policy.threads_per_block >= 64) {
        kernel_occupancy& occ = cx.occupancy;
        const int r32 = 32 * (adapt ? occ.blocks_per_sm(v_sample_vector_tile_kernel<D, N, F, true, 32>, 32, smem32)
                                    : occ.blocks_per_sm(v_sample_vector_tile_kernel<D, N, F, false, 32>, 32, smem32));
        const int r64 = 64 * (adapt ? occ.blocks_per_sm(v_sample_vector_tile_kernel<D, N, F, true, 64>, 64, smem64)
                                    : occ.blocks_per_sm(v_sample_vector_tile_kernel<D, N, F, false, 64>, 64, smem64));
        if (r64 >= r32) B = 64;
      }
      if (B == 64) {
        ensure_tiles();
        if (adapt)
          launch_vector(v_sample_vector_tile_kernel<D, N, F, true, 64>, smem64, "v_sample_vector_tile_kernel");
        else
          launch_vector(v_sample_vector_tile_kernel<D, N, F, false, 64>, smem64, "v_sample_vector_tile_kernel");
      }
    }
    if (B == 32) {
      ensure_tiles();
      if (adapt)
        launch_vector(v_sample_vector_tile_kernel<D, N, F, true, 32>, smem32, "v_sample_vector_tile_kernel");
      else
        launch_vector(v_sample_vector_tile_kernel<D, N, F, false, 32>, smem32, "v_sample_vector_tile_kernel");
    }
  } else {
    ensure_tiles();
    if (adapt) {
      if (B <= 256)
        launch_vector(v_sample_vector_kernel<D, N, F, true, 256>, 0, "v_sample_vector_kernel");
      else
        launch_vector(v_sample_vector_kernel<D, N, F, true, 1024>, 0, "v_sample_vector_kernel");
    } else {
      if (B <= 256)
        launch_vector(v_sample_vector_kernel<D, N, F, false, 256>, 0, "v_sample_vector_kernel");
      else
        launch_vector(v_sample_vector_kernel<D, N, F, false, 1024>, 0, "v_sample_vector_kernel");
    }
  }
  // the tiles are aligned groups of B chunks: the tree over them has width / min(B, width) leaves
  const std::uint64_t tile = std::min<std::uint64_t>(B, width);
  auto* out_flags = reinterpret_cast<device_flags*>(buf.vector_out.data() + M);
  vector_tree_reduce_kernel<M><<<static_cast<unsigned>((M + 1) / 2), 1024, 0, stream>>>(
      buf.vector_tiles.data(), n_tiles, width / tile, buf.vector_out.data(), buf.flags.data(), out_flags);
  MCUBES_CUDA_CHECK_LAUNCH("vector_tree_reduce_kernel");
  MCUBES_CUDA_CHECK(cudaMemcpyAsync(buf.host_vector_out.data(), buf.vector_out.data(), (M + 4) * sizeof(double),
                                    cudaMemcpyDeviceToHost, stream));
  MCUBES_CUDA_CHECK(cudaStreamSynchronize(stream));
  vector_pass_sums out;
  out.sums.assign(buf.host_vector_out.data(), buf.host_vector_out.data() + M);
  device_flags fl;
  std::memcpy(&fl, buf.host_vector_out.data() + M, sizeof fl);
  iteration_sums& o = out.scalar;
  o = pass_sums(out.sums[0], out.sums[N], fl, adapt, sp.bin_scale);
  if (fl.first_non_finite != ~0ull) o.flags.non_finite_value = std::numeric_limits<double>::quiet_NaN();
  if (adapt) buf.end_adapting_pass(o.top_level, n_bin_values);
  return out;
}

}  // namespace cuda_detail
}  // namespace mcubes

#pragma once
/// @file backend/cuda/pi.cuh
/// The CUDA Monte Carlo pi: a dedicated hit-test kernel (the quarter-circle test of
/// algorithm/pi.hpp, float coordinates from 32-bit Philox words, as the 570 G samples/s limit
/// kernel of shared/tools/limits/limits.cu) with exact 64-bit hit counts.
///
/// Kernel (B threads per block, B in {32, ..., 1024}): thread t of the grid takes the pairs
/// j = t, t + G, t + 2G, ... of the 64-bit pair range [0, N/2) (G = grid x B threads; grid-stride),
/// one Philox4x32-10 call per pair (samples 2j and 2j + 1), and counts its hits in a 32-bit
/// register, flushed into a 64-bit count at least every 2^30 pairs; the lone last sample of an odd
/// N is done by thread 0. The block sums the counts with cub::BlockReduce (every thread takes part)
/// and thread 0 adds the block's sum to the global 64-bit count with an integer atomicAdd.
///
/// Determinism contract: the hits are an exact integer sum over a fixed set of samples, so the count
/// is bitwise identical for any threads-per-block, any grid, on every run, and equal to the CPU's
/// (algorithm/pi.hpp). Usually included through algorithm/pi.hpp (in a .cu file).

#include <cuda_runtime.h>

#include <chrono>
#include <cstdint>

#include <cub/block/block_reduce.cuh>

#include "../../algorithm/pi.hpp"
#include "check.cuh"
#include "device_array.cuh"
#include "launch.cuh"

namespace mcubes::cuda {

namespace pi_detail {

/// Adds the hits of the pairs [0, n_pairs) (grid-stride) and, when `odd`, of sample 2 n_pairs to
/// *hits. See the file comment.
template <int B>
__global__ void __launch_bounds__(B) pi_hits_kernel(std::uint64_t n_pairs, unsigned odd, philox_round_keys rk,
                                                     unsigned long long* hits) {
  // Thread t walks the chunks t, t + grid, ... of pi_chunk_pairs pairs; inside a chunk the counter
  // varies in its first word only (algorithm/pi.hpp): the limit kernel's inner loop.
  const std::uint64_t stride = static_cast<std::uint64_t>(gridDim.x) * B;
  const std::uint64_t n_chunks = (n_pairs + pi_chunk_pairs - 1) / pi_chunk_pairs;
  unsigned long long total = 0;
  for (std::uint64_t c = static_cast<std::uint64_t>(blockIdx.x) * B + threadIdx.x; c < n_chunks; c += stride) {
    const std::uint64_t first = c * pi_chunk_pairs;
    const std::uint32_t count_k =
        n_pairs - first < pi_chunk_pairs ? static_cast<std::uint32_t>(n_pairs - first) : static_cast<std::uint32_t>(pi_chunk_pairs);
    const std::uint32_t c_lo = static_cast<std::uint32_t>(c), c_hi = static_cast<std::uint32_t>(c >> 32);
    std::uint32_t count = 0;  // at most 2 * 2^12
    for (std::uint32_t k = 0; k < count_k; ++k) {
      const philox_words w = philox4x32_10(philox_words{{k, 0u, c_lo, c_hi}}, rk);
      count += pi_hit(w.v[0], w.v[1]) + pi_hit(w.v[2], w.v[3]);
    }
    total += count;
  }
  if (odd && blockIdx.x == 0 && threadIdx.x == 0) {
    const philox_words w = pi_pair_words(n_pairs, rk);
    total += pi_hit(w.v[0], w.v[1]);
  }
  using block_reduce = cub::BlockReduce<unsigned long long, B>;
  __shared__ typename block_reduce::TempStorage temp;
  const unsigned long long block_hits = block_reduce(temp).Sum(total);
  if (threadIdx.x == 0 && block_hits != 0) atomicAdd(hits, block_hits);
}

}  // namespace pi_detail

/// Monte Carlo pi with N = opt.samples on the current CUDA device, opt.cuda_threads_per_block
/// threads per block and the occupancy grid (launch.cuh). result.seconds is the wall time after
/// device initialisation (kernel, copy back, all checks); `report` (optional) gets the geometry and
/// the kernel's device time (CUDA events). opt.backend and opt.threads are ignored.
/// @throws invalid_input for bad options; cuda_error if no device is present or a CUDA call fails.
inline pi_mc_result pi_monte_carlo(const pi_options& opt, launch_report* report) {
  validate(opt);
  require_device();
  const auto t0 = std::chrono::steady_clock::now();
  const philox_round_keys rk = make_philox_round_keys(opt.seed, stream_id::pi);
  const std::uint64_t n_pairs = opt.samples / 2;
  const unsigned odd = static_cast<unsigned>(opt.samples % 2);
  device_array<unsigned long long> d_hits(1);
  event_timer timer;
  with_block_size(opt.cuda_threads_per_block, [&](auto block) {
    constexpr int B = decltype(block)::value;
    auto kernel = pi_detail::pi_hits_kernel<B>;
    const std::uint64_t useful = ((n_pairs + pi_chunk_pairs - 1) / pi_chunk_pairs + B - 1) / B;
    const unsigned grid = occupancy_grid(kernel, B, 0, useful, report);
    timer.start();
    MCUBES_CUDA_CHECK(cudaMemsetAsync(d_hits.data(), 0, sizeof(unsigned long long)));
    kernel<<<grid, B>>>(n_pairs, odd, rk, d_hits.data());
    MCUBES_CUDA_CHECK_LAUNCH("pi_hits_kernel");
    timer.stop();
  });
  const double kernel_ms = timer.elapsed_ms();
  unsigned long long hits = 0;
  MCUBES_CUDA_CHECK(cudaMemcpy(&hits, d_hits.data(), sizeof hits, cudaMemcpyDeviceToHost));
  pi_mc_result r;
  r.samples = opt.samples;
  r.hits = hits;
  r.seed = opt.seed;
  r.backend = "cuda";
  finish_pi_result(r);
  r.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  if (report) report->kernel_ms = kernel_ms;
  return r;
}

}  // namespace mcubes::cuda

#pragma once
/// @file backend/cuda/pass_flags.cuh
/// The order-independent flags of a pass on the device (n_nonzero: sum; first non-finite sample
/// index: min; largest contribution: max on the IEEE bit pattern of a non-negative double), the
/// pass's result record, and their reductions: per warp in shared memory (warp_flags,
/// fold_warp_flags, add_block_flags) or per thread in registers (thread_flags), then integer
/// atomics. Integer reductions in any order: the same values for any grid and block size.

#include <cstdint>

#include "../../core/reduction.hpp"
#include "../../core/sampler.hpp"

namespace mcubes {
namespace cuda_detail {

/// Order-independent flags of one pass, in device memory.
struct device_flags {
  unsigned long long n_nonzero;
  unsigned long long first_non_finite;
  unsigned long long max_contribution_bits;  ///< bit pattern of a non-negative double (ordered like the value)
};

/// The flags before a pass: no non-zero sample, no non-finite sample, largest contribution 0.
MCUBES_HOST_DEVICE constexpr device_flags initial_flags() { return device_flags{0ull, ~0ull, 0ull}; }

/// What one sampling pass leaves on the device for the host: the fixed-tree sums over all sub-cubes
/// of I_c and var_c (unscaled, as iteration_sums) and the pass's flags. Written by
/// tree_reduce_kernel (into the host's page-locked buffer too where the device reaches it, else
/// copied there), so that the host reads one small struct per pass.
struct pass_result {
  double estimate;
  double variance;
  device_flags flags;
};

/// Per-warp flags of a V-Sample block in shared memory: slot w is read and written only by lane 0
/// of warp w until the block's final barrier.
struct warp_flags {
  unsigned long long n_nonzero;
  unsigned long long first_non_finite;
  unsigned long long max_contribution_bits;
};

/// Order-independent flags of a thread's chunk partials (sum, min, max), kept in registers (while
/// a batch's block stays on one pass, or over a balanced thread's chunks), then added to the pass's
/// device_flags (add_to).
struct thread_flags {
  unsigned long long n_nonzero = 0, first_non_finite = ~0ull, max_contribution_bits = 0;
  __device__ __forceinline__ void merge(const chunk_partial& p) {
    n_nonzero += p.n_nonzero;
    if (p.first_non_finite < first_non_finite) first_non_finite = p.first_non_finite;
    const auto mx = static_cast<unsigned long long>(__double_as_longlong(p.max_contribution));
    if (mx > max_contribution_bits) max_contribution_bits = mx;
  }
  /// Folds the warp's flags (shuffles) and adds them with one integer atomic each (where not
  /// neutral) into `flags`; resets this thread's. The whole warp calls it.
  __device__ __forceinline__ void add_to(device_flags* flags) {
    constexpr unsigned full = 0xffffffffu;
    unsigned long long nz = n_nonzero, first = first_non_finite, mx = max_contribution_bits;
#pragma unroll
    for (int s = 16; s >= 1; s >>= 1) {
      nz += __shfl_xor_sync(full, nz, s);
      const unsigned long long of = __shfl_xor_sync(full, first, s);
      first = of < first ? of : first;
      const unsigned long long om = __shfl_xor_sync(full, mx, s);
      mx = om > mx ? om : mx;
    }
    if ((threadIdx.x & 31u) == 0) {
      if (nz) atomicAdd(&flags->n_nonzero, nz);
      if (first != ~0ull) atomicMin(&flags->first_non_finite, first);
      if (mx) atomicMax(&flags->max_contribution_bits, mx);
    }
    *this = thread_flags{};
  }
};

/// Folds the flags of the warp's chunk partials into its shared slot (order-independent integer
/// sum, min and max over the lanes; max on the bit patterns of non-negative doubles). Done once per
/// tile, so that no per-thread flag accumulators stay live across sample_chunk (registers).
template <bool Adapt>
__device__ __forceinline__ void fold_warp_flags(const chunk_partial& part, warp_flags& slot) {
  constexpr unsigned full = 0xffffffffu;
  unsigned long long nz = part.n_nonzero;
#pragma unroll
  for (int s = 16; s >= 1; s >>= 1) nz += __shfl_xor_sync(full, nz, s);
  unsigned long long first = part.first_non_finite;
  if (__any_sync(full, first != ~0ull)) {  // rare: only with a non-finite integrand value
#pragma unroll
    for (int s = 16; s >= 1; s >>= 1) {
      const unsigned long long o = __shfl_xor_sync(full, first, s);
      first = o < first ? o : first;
    }
  }
  unsigned long long mx = 0;
  if constexpr (Adapt) {  // No-Adjust never sets max_contribution
    mx = static_cast<unsigned long long>(__double_as_longlong(part.max_contribution));
#pragma unroll
    for (int s = 16; s >= 1; s >>= 1) {
      const unsigned long long o = __shfl_xor_sync(full, mx, s);
      mx = o > mx ? o : mx;
    }
  }
  if ((threadIdx.x & 31u) == 0) {
    slot.n_nonzero += nz;
    if (first < slot.first_non_finite) slot.first_non_finite = first;
    if (mx > slot.max_contribution_bits) slot.max_contribution_bits = mx;
  }
}

/// Step 4 of the heavy sub-cubes (backend/cuda/heavy_cubes.cuh) for sub-cube c whose segments
/// are [s_begin, s_end): s1, s2 = serial sums of their sums in order (sample_cubes' segment rule),
/// then finish_cube (I_c, var_c, the share).
__device__ __forceinline__ cube_estimate finish_heavy_cube(const cube_counts& counts, std::uint64_t c, std::uint64_t s_begin,
                                                           std::uint64_t s_end, const double* seg_s1, const double* seg_s2) {
  double s1 = 0, s2 = 0;
  for (std::uint64_t s = s_begin; s < s_end; ++s) {
    s1 += seg_s1[s];
    s2 += seg_s2[s];
  }
  return finish_cube(s1, s2, static_cast<double>(counts.count(c)), counts, c);
}

/// The heavy sub-cubes of a pass as V-Sample's sample_cubes takes them (precomputed-cubes policy,
/// core/sampler.hpp). Trivially copyable. above = ~0: none (every sub-cube is sampled there).
/// means, vars null with seg_s1 set: their segments' sums are not finished yet, and the spread
/// V-Sample finishes them (finish_heavy_cube; cuda_launch_policy::heavy_sums_in_v_sample).
struct heavy_cube_sums {
  static constexpr bool enabled = true;
  const unsigned long long* chunk_first = nullptr;  ///< first heavy index of each chunk
  const double* means = nullptr;
  const double* vars = nullptr;
  const unsigned long long* seg_first = nullptr;  ///< first segment of each heavy sub-cube (n_heavy + 1)
  const double* seg_s1 = nullptr;                 ///< the segments' sums (step 3)
  const double* seg_s2 = nullptr;
  std::uint64_t chunk_cubes = 1;
  std::uint64_t above = ~std::uint64_t(0);  ///< T (heavy_above): a sub-cube of more samples is heavy
  MCUBES_HOST_DEVICE std::uint64_t first(std::uint64_t begin) const {
    return chunk_first != nullptr ? chunk_first[begin / chunk_cubes] : 0;
  }
  MCUBES_HOST_DEVICE bool precomputed(std::uint64_t n) const { return n > above; }
  MCUBES_HOST_DEVICE double mean(std::uint64_t h) const { return means[h]; }
  MCUBES_HOST_DEVICE double var(std::uint64_t h) const { return vars[h]; }
};

/// Adds the per-warp flags of a block (n_warps slots) to the pass's flags: one global atomic per
/// flag and block (order-independent). Called by one thread after the block's last fold.
__device__ __forceinline__ void add_block_flags(const warp_flags* s_flags, unsigned n_warps, device_flags* flags) {
  warp_flags t{0ull, ~0ull, 0ull};
  for (unsigned w = 0; w < n_warps; ++w) {
    t.n_nonzero += s_flags[w].n_nonzero;
    if (s_flags[w].first_non_finite < t.first_non_finite) t.first_non_finite = s_flags[w].first_non_finite;
    if (s_flags[w].max_contribution_bits > t.max_contribution_bits) t.max_contribution_bits = s_flags[w].max_contribution_bits;
  }
  if (t.n_nonzero) atomicAdd(&flags->n_nonzero, t.n_nonzero);
  if (t.first_non_finite != ~0ull) atomicMin(&flags->first_non_finite, t.first_non_finite);
  if (t.max_contribution_bits) atomicMax(&flags->max_contribution_bits, t.max_contribution_bits);
}

}  // namespace cuda_detail
}  // namespace mcubes

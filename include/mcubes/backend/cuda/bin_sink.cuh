#pragma once
/// @file backend/cuda/bin_sink.cuh
/// The bin sums of a V-Sample pass on the device: exact 128-bit integer bins (bin_accumulator,
/// core/reduction.hpp) added to with integer atomics, from a block's low words in shared memory or
/// straight into global memory (shared_bin_sink), and a block's shared words flushed into the
/// global bins with carry (flush_shared_bins). Integer additions: any order, the same bits. Used by
/// every V-Sample kernel (vegas_kernels.cuh, batch_kernels.cuh, vector_kernels.cuh, the heavy
/// sub-cubes' kernels).

#include <cstddef>
#include <cstdint>

#include "../../config.hpp"
#include "../../core/reduction.hpp"

namespace mcubes {
namespace cuda_detail {

/// Adds q to a 128-bit accumulator with integer atomics (global memory): the low word with
/// atomicAdd, and 1 to the high word when that addition wrapped around (old + q < old).
__device__ __forceinline__ void atomic_add_128(bin_accumulator* a, unsigned long long q) {
  auto* lo = reinterpret_cast<unsigned long long*>(&a->lo);
  auto* hi = reinterpret_cast<unsigned long long*>(&a->hi);
  const unsigned long long old = atomicAdd(lo, q);
  if (old + q < old) atomicAdd(hi, 1ull);  // carry out of the low word
}

/// Bin sink of V-Sample. With `shared` (the block's bins in shared memory): the low 64-bit word of
/// bin i lives in shared memory (lo[i]); a carry out of it is added at once to the high word of the
/// GLOBAL bin i, and at the block's end flush_shared_bins adds lo[i] into the global 128-bit bin
/// with carry. Without `shared` (the bins do not fit in shared memory): atomic_add_128 straight into
/// the global bin. One sink type for both, so that sample_chunk is instantiated once per kernel.
///
/// Sm_90 has no native 64-bit shared-memory atomic add: atomicAdd on a 64-bit shared word compiles
/// to a compare-and-swap loop (ATOMS.CAST.SPIN.64), which spins under contention (a version with
/// it ran f3 3-D 6x slower, f4 8-D 1.4x slower). So the 64-bit word is updated
/// as two 32-bit halves with the native 32-bit shared atomicAdd: q_lo = q mod 2^32 goes to the low
/// half; its carry c1 (that addition wrapped: old + q_lo < old, as 32-bit integers) and
/// q_hi = q >> 32 (< 2^31, since q < 2^63, so q_hi + c1 does not wrap) go to the high half; a carry
/// c2 out of the high half is a carry out of the 64-bit word and goes to the global high word.
/// Exactness: over all the block's additions to bin i, low half = sum q_lo - 2^32 sum c1 and high
/// half = sum (q_hi + c1) - 2^32 sum c2 (the wrapped values, exactly), so the 64-bit word is
/// sum q - 2^64 sum c2, and the global bin receives 2^64 sum c2 (carries) + the word (flush) =
/// sum q, exactly. Integer additions in any order: the bits are those of one serial 128-bit
/// accumulation.
///
/// Terms of the overflow levels (bin_level >= 1; rare: only while the largest term grows past the
/// scale's headroom) go with atomic_add_128 straight into the global level arrays `over` (level L
/// at (L - 1) * n_values, D * n_bins bins each).
struct shared_bin_sink {
  static constexpr bool enabled = true;
  unsigned long long* lo;    ///< shared memory, D * n_bins words (when shared)
  bin_accumulator* global;   ///< the global 128-bit bins
  bin_accumulator* over;     ///< the global overflow levels 1..max_bin_level (null: none; a batch's
                             ///< integral until a pass of it reaches them, then it is run again)
  unsigned n_values;         ///< D * n_bins
  int n_bins;
  bool shared;               ///< the block's bins are in shared memory
  MCUBES_HOST_DEVICE void add_level(int level, int axis, int bin, std::uint64_t q) {
#if defined(__CUDA_ARCH__)
    if (over == nullptr) return;  // the pass's top level (from its flags) tells the host to run it again with levels
    atomic_add_128(over + static_cast<std::size_t>(level - 1) * n_values + axis * n_bins + bin, q);
#else
    (void)level, (void)axis, (void)bin, (void)q;
#endif
  }
  MCUBES_HOST_DEVICE void add(int axis, int bin, std::uint64_t q) {
#if defined(__CUDA_ARCH__)
    const int i = axis * n_bins + bin;
    if (!shared) {
      atomic_add_128(global + i, q);
      return;
    }
    unsigned* w = reinterpret_cast<unsigned*>(lo + i);  // w[0]: low half, w[1]: high half (little endian)
    const unsigned q_lo = static_cast<unsigned>(q);
    const unsigned old_lo = atomicAdd(w, q_lo);
    unsigned q_hi;  // q >> 32 plus the carry of old_lo + q_lo (add with carry out, then add the carry in)
    asm("{\n\t.reg .u32 t;\n\tadd.cc.u32 t, %1, %2;\n\taddc.u32 %0, %3, 0;\n\t}"
        : "=r"(q_hi)
        : "r"(old_lo), "r"(q_lo), "r"(static_cast<unsigned>(q >> 32)));
    if (q_hi != 0) {
      const unsigned old_hi = atomicAdd(w + 1, q_hi);
      if (old_hi + q_hi < old_hi) atomicAdd(reinterpret_cast<unsigned long long*>(&global[i].hi), 1ull);
    }
#else
    (void)axis, (void)bin, (void)q;
#endif
  }
};

/// Adds the block's shared low words lo[0..n) into the global 128-bit bins with carry (the end of
/// shared_bin_sink's accumulation). Four independent atomics in flight per thread, and each block
/// starts at a different bin (rotated by blockIdx.x * blockDim.x) so that blocks finishing
/// together do not all hit the same addresses at once. Integer additions: any order, same bits.
__device__ __forceinline__ void flush_shared_bins(const unsigned long long* lo, bin_accumulator* global, int n) {
  const unsigned B = blockDim.x;
  const unsigned start = static_cast<unsigned>((static_cast<unsigned long long>(blockIdx.x) * B) % static_cast<unsigned>(n));
  for (unsigned k0 = threadIdx.x; k0 < static_cast<unsigned>(n); k0 += 4 * B) {
    unsigned idx[4];
    unsigned long long q[4], old[4];
#pragma unroll
    for (int u = 0; u < 4; ++u) {
      const unsigned k = k0 + u * B;
      unsigned i = k + start;
      if (i >= static_cast<unsigned>(n)) i -= n;
      idx[u] = i;
      q[u] = k < static_cast<unsigned>(n) ? lo[i] : 0ull;
    }
#pragma unroll
    for (int u = 0; u < 4; ++u)
      old[u] = q[u] ? atomicAdd(reinterpret_cast<unsigned long long*>(&global[idx[u]].lo), q[u]) : 0ull;
#pragma unroll
    for (int u = 0; u < 4; ++u)
      if (old[u] + q[u] < old[u]) atomicAdd(reinterpret_cast<unsigned long long*>(&global[idx[u]].hi), 1ull);
  }
}

}  // namespace cuda_detail
}  // namespace mcubes

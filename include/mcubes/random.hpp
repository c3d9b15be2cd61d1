#pragma once
/// @file random.hpp
/// The random stream contract of mcubes: Philox4x32-10 from Random123 (counter-based, stateless,
/// identical on host and device; Salmon et al., SC'11).
///
/// A uniform draw is a pure function of (seed, stream, iteration, sample index, draw number):
///   key     = { seed mod 2^32, (seed >> 32) xor (stream << 24) }
///   counter = { index mod 2^32, index >> 32, iteration, block }
/// where `block` numbers the successive Philox calls a sample needs: call b gives coordinates
/// 4b .. 4b+3, one per 32-bit word, as the double r123::u01<double>(w) = (w + 1/2) 2^-32, exact
/// and in the open interval (0,1) (never 0 or 1). 32 random bits per coordinate put the points on a
/// lattice of spacing 2^-32 per axis (before the sub-cube and map transforms): far below any Monte
/// Carlo error mcubes can reach, and half the Philox work of 53-bit doubles (the throughput limit
/// on the GPU). `index` is the sample's global index, e.g. for Vegas sub-cube index *
/// samples-per-sub-cube + sample, so a sample is the same point whichever thread, block or device
/// computes it. `stream` separates the methods (Vegas, plain MC, pi) so that they never share
/// numbers for one seed.

#include <Random123/philox.h>
#include <Random123/uniform.hpp>

#include <cstdint>

#include "config.hpp"

namespace mcubes {

/// Stream identifiers (at most 255): part of the Philox key.
/// weighted_sample: the points of core/weighted_sample.hpp (never those of a run).
enum class stream_id : std::uint32_t { vegas = 1, plain_mc = 2, pi = 3, probe = 4, batch_seed = 5, weighted_sample = 6 };

/// Generates the uniform doubles of one sample: draws(k) for k = 0, 1, ... are the sample's
/// coordinates in (0,1). Cheap to construct; holds the key and the counter.
class sample_stream {
 public:
  using philox = r123::Philox4x32;
  MCUBES_HOST_DEVICE sample_stream(std::uint64_t seed, stream_id stream, std::uint32_t iteration,
                                   std::uint64_t index) {
    key_.v[0] = static_cast<std::uint32_t>(seed);
    key_.v[1] = static_cast<std::uint32_t>(seed >> 32) ^ (static_cast<std::uint32_t>(stream) << 24);
    ctr_.v[0] = static_cast<std::uint32_t>(index);
    ctr_.v[1] = static_cast<std::uint32_t>(index >> 32);
    ctr_.v[2] = iteration;
    ctr_.v[3] = 0;
  }
  /// Fills u[0..N) with the sample's first N uniform doubles in (0,1).
  template <int N>
  MCUBES_HOST_DEVICE void fill(double (&u)[N]) {
    for (int k = 0; k < N; k += 4) {
      ctr_.v[3] = static_cast<std::uint32_t>(k / 4);
      const philox::ctr_type r = philox()(ctr_, key_);
      for (int i = 0; i < 4 && k + i < N; ++i) u[k + i] = to_double(r.v[i]);
    }
  }
  /// The raw 4 words of block b (for kernels that want 32-bit draws, e.g. the pi hit test).
  MCUBES_HOST_DEVICE philox::ctr_type block(std::uint32_t b) {
    ctr_.v[3] = b;
    return philox()(ctr_, key_);
  }
  /// Maps a 32-bit word w to the double (w + 1/2) 2^-32 in (0,1) (r123::u01; exact).
  MCUBES_HOST_DEVICE static double to_double(std::uint32_t w) { return r123::u01<double>(w); }

 private:
  philox::key_type key_;
  philox::ctr_type ctr_;
};

/// 32 x 32 -> 64-bit product of a and b: returns the low word, sets hi to the high word. On the
/// device one mul.wide.u32 (a single IMAD.WIDE.U32: the 64-bit product form of Random123's
/// mulhilo32 compiles to it plus an extra add of zero to the high word).
MCUBES_HOST_DEVICE inline std::uint32_t philox_mulhilo(std::uint32_t a, std::uint32_t b, std::uint32_t& hi) {
#if defined(__CUDA_ARCH__)
  std::uint32_t lo;
  asm("{\n\t.reg .b64 p;\n\tmul.wide.u32 p, %2, %3;\n\tmov.b64 {%0, %1}, p;\n\t}" : "=r"(lo), "=r"(hi) : "r"(a), "r"(b));
  return lo;
#else
  const std::uint64_t p = static_cast<std::uint64_t>(a) * b;
  hi = static_cast<std::uint32_t>(p >> 32);
  return static_cast<std::uint32_t>(p);
#endif
}

/// The 10 round keys of Philox4x32-10 for the key that sample_stream assigns to (seed, stream),
/// precomputed (Random123's key schedule: round r uses key + r * (PHILOX_W32_0, PHILOX_W32_1)).
/// Trivially copyable: kernels take it by value and read the keys from the constant bank instead of
/// recomputing them per sample. The one key schedule of the project: the CPU fast path
/// (backend/cpu.hpp), the pi kernels (algorithm/pi.hpp) and philox_schedule use it.
struct philox_round_keys {
  std::uint32_t k0[10];  ///< round keys, word 0
  std::uint32_t k1[10];  ///< round keys, word 1
};

/// Round keys of the key that sample_stream assigns to (seed, stream).
MCUBES_HOST_DEVICE inline philox_round_keys make_philox_round_keys(std::uint64_t seed, stream_id stream) {
  philox_round_keys rk{};
  std::uint32_t a = static_cast<std::uint32_t>(seed);
  std::uint32_t b = static_cast<std::uint32_t>(seed >> 32) ^ (static_cast<std::uint32_t>(stream) << 24);
  for (int r = 0; r < 10; ++r) {
    rk.k0[r] = a;
    rk.k1[r] = b;
    a += 0x9E3779B9u;  // PHILOX_W32_0
    b += 0xBB67AE85u;  // PHILOX_W32_1
  }
  return rk;
}

/// The Philox4x32 multipliers (Random123's PHILOX_M4x32_0 and PHILOX_M4x32_1).
inline constexpr std::uint32_t philox_m0 = 0xD2511F53u, philox_m1 = 0xCD9E8D57u;

/// Four 32-bit words (a Philox counter or output).
struct philox_words {
  std::uint32_t v[4];
};

/// One round of Philox4x32 with round key (k0, k1) (Salmon et al., SC'11, section 4.1; Random123's
/// _philox4x32round): with (hi0, lo0) = M0 x0 and (hi1, lo1) = M1 x2 (32 x 32 -> 64-bit products),
///   x <- {hi1 ^ x1 ^ k0, lo1, hi0 ^ x3 ^ k1, lo0}.
/// The one round function of the project: philox4x32_10, philox_schedule (the Vegas sampler on
/// every backend) and the scalar CPU path use it; the SSE2/AVX2 forms of the CPU fast path
/// (backend/cpu.hpp) are tested bitwise against it (tests/unit/test_random.cpp).
MCUBES_HOST_DEVICE inline void philox_round(std::uint32_t (&x)[4], std::uint32_t k0, std::uint32_t k1) {
  std::uint32_t hi0, hi1;
  const std::uint32_t lo0 = philox_mulhilo(philox_m0, x[0], hi0);
  const std::uint32_t lo1 = philox_mulhilo(philox_m1, x[2], hi1);
  x[0] = hi1 ^ x[1] ^ k0;
  x[1] = lo1;
  x[2] = hi0 ^ x[3] ^ k1;
  x[3] = lo0;
}

/// Philox4x32-10 of counter c with precomputed round keys: bitwise r123::Philox4x32 of the key
/// they were made from (tested), written with philox_round so that device code reads constant
/// round keys.
MCUBES_HOST_DEVICE inline philox_words philox4x32_10(philox_words c, const philox_round_keys& rk) {
  std::uint32_t x[4] = {c.v[0], c.v[1], c.v[2], c.v[3]};
#if defined(__CUDA_ARCH__)
#pragma unroll
#endif
  for (int r = 0; r < 10; ++r) philox_round(x, rk.k0[r], rk.k1[r]);
  return philox_words{{x[0], x[1], x[2], x[3]}};
}

/// The numbers of sample_stream(seed, stream, iteration, index) for a fixed (seed, stream,
/// iteration), with the Philox4x32-10 key schedule precomputed: round r (0..9) uses the key
/// {k0 + r W0, k1 + r W1} (Random123's bumpkey), held here, so that a kernel given this struct as a
/// parameter reads the round keys as constant operands instead of recomputing them per sample.
/// Round 0 has two counter words fixed by the iteration and the block: {index lo, index hi,
/// iteration, b}; its product M1 * iteration is precomputed (it_lo, it_hi_k0 = its high word xor
/// the round-0 key k0). Exact integer arithmetic throughout: the same words as Random123's
/// r123::Philox4x32 (tests/unit/test_random.cpp checks them against sample_stream). Trivially
/// copyable.
struct philox_schedule {
  static constexpr std::uint32_t M0 = philox_m0, M1 = philox_m1;  ///< PHILOX_M4x32_0, _1
  philox_round_keys key;   ///< the round keys
  std::uint32_t it_lo;     ///< low word of M1 * iteration
  std::uint32_t it_hi_k0;  ///< high word of M1 * iteration, xor key.k0[0]

  static philox_schedule make(std::uint64_t seed, stream_id stream, std::uint32_t iteration) {
    philox_schedule s{};
    s.key = make_philox_round_keys(seed, stream);
    std::uint32_t hi = 0;
    s.it_lo = philox_mulhilo(M1, iteration, hi);
    s.it_hi_k0 = hi ^ s.key.k0[0];
    return s;
  }

  /// Fills u[0..N) with the first N uniform doubles of sample `index` (sample_stream::fill).
  /// Round 0 and most of round 1 do not depend on the block: written once, shared by all blocks.
  template <int N>
  MCUBES_HOST_DEVICE void fill(std::uint64_t index, double (&u)[N]) const {
    std::uint32_t h0;
    const std::uint32_t l0 = philox_mulhilo(M0, static_cast<std::uint32_t>(index), h0);  // round 0, word 0
    const std::uint32_t x0 = static_cast<std::uint32_t>(index >> 32) ^ it_hi_k0;         // after round 0
#if defined(__CUDA_ARCH__)
#pragma unroll
#endif
    for (int k = 0; k < N; k += 4) {
      std::uint32_t x[4] = {x0, it_lo, h0 ^ static_cast<std::uint32_t>(k / 4) ^ key.k1[0], l0};
#if defined(__CUDA_ARCH__)
#pragma unroll
#endif
      for (int r = 1; r < 10; ++r) philox_round(x, key.k0[r], key.k1[r]);
      for (int i = 0; i < 4 && k + i < N; ++i) u[k + i] = sample_stream::to_double(x[i]);
    }
  }
};

/// The numbers of philox_schedule (so of sample_stream) for a fixed (seed, stream, iteration),
/// holding only the round-0 key words and the iteration's product (4 words instead of 22): round r
/// uses the key {k0 + r W0, k1 + r W1} (mod 2^32), computed as it goes (Random123's bumpkey). For
/// kernels whose per-pass data is not a kernel parameter (the parameter batch reads it from memory):
/// two integer additions per round replace two loads. Bitwise the same words as philox_schedule
/// (tests/unit/test_random.cpp). Trivially copyable.
struct philox_compact_schedule {
  std::uint32_t k0;        ///< round-0 key, word 0
  std::uint32_t k1;        ///< round-0 key, word 1
  std::uint32_t it_lo;     ///< low word of M1 * iteration
  std::uint32_t it_hi_k0;  ///< high word of M1 * iteration, xor k0

  static philox_compact_schedule make(std::uint64_t seed, stream_id stream, std::uint32_t iteration) {
    const philox_schedule s = philox_schedule::make(seed, stream, iteration);
    return philox_compact_schedule{s.key.k0[0], s.key.k1[0], s.it_lo, s.it_hi_k0};
  }

  /// Fills u[0..N) with the first N uniform doubles of sample `index` (philox_schedule::fill).
  template <int N>
  MCUBES_HOST_DEVICE void fill(std::uint64_t index, double (&u)[N]) const {
    std::uint32_t h0;
    const std::uint32_t l0 = philox_mulhilo(philox_m0, static_cast<std::uint32_t>(index), h0);  // round 0, word 0
    const std::uint32_t x0 = static_cast<std::uint32_t>(index >> 32) ^ it_hi_k0;              // after round 0
#if defined(__CUDA_ARCH__)
#pragma unroll
#endif
    for (int k = 0; k < N; k += 4) {
      std::uint32_t x[4] = {x0, it_lo, h0 ^ static_cast<std::uint32_t>(k / 4) ^ k1, l0};
#if defined(__CUDA_ARCH__)
#pragma unroll
#endif
      for (int r = 1; r < 10; ++r)
        philox_round(x, k0 + static_cast<std::uint32_t>(r) * 0x9E3779B9u, k1 + static_cast<std::uint32_t>(r) * 0xBB67AE85u);
      for (int i = 0; i < 4 && k + i < N; ++i) u[k + i] = sample_stream::to_double(x[i]);
    }
  }
};

}  // namespace mcubes

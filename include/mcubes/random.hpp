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
enum class stream_id : std::uint32_t { vegas = 1, plain_mc = 2, pi = 3, probe = 4 };

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

}  // namespace mcubes

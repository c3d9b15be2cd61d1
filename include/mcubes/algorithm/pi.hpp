#pragma once
/// @file algorithm/pi.hpp
/// Estimating pi (seeds/000) done right: Monte Carlo on the quarter circle with 64-bit hit counts
/// and counter-based random numbers, and the composite midpoint rule for
/// pi = int_0^1 4 / (1 + x^2) dx (algorithm/midpoint.hpp) with compensated, fixed-tree sums.
///
/// Monte Carlo: sample k is the point (x, y) in (0,1)^2 made from two 32-bit Philox words; it is a
/// hit when x^2 + y^2 <= 1. estimate = 4 H / N (H hits out of N), with the plain Monte Carlo
/// standard error 4 sqrt(p (1 - p) / (N - 1)), p = H / N.
///
/// Random stream (random.hpp, stream_id::pi): pairs of samples come in fixed chunks of
/// pi_chunk_pairs = 2^12 pairs; pair j = 2^12 c + k (chunk c, offset k) is the Philox call with
/// counter {k, 0, c mod 2^32, c >> 32} and the pi key, giving samples 2j (words 0, 1) and 2j + 1
/// (words 2, 3): the words of sample_stream(seed, stream_id::pi, c mod 2^32, k).block(c >> 32).
/// This layout lets a GPU thread walk a chunk with a 32-bit counter in the first word only (the
/// inner loop of the throughput-limit kernel, shared/tools/limits); it depends on the pair index
/// alone, never on the launch. A word w becomes the coordinate
/// ((w >> 8) | 1) 2^-24 = (floor(w / 2^9) + 1/2) 2^-23: the centre of one of 2^23 equal cells,
/// never 0 or 1, an exact float. The hit test is done in single precision on the integers
/// m = (w >> 8) | 1 (the power-of-two scale commutes with rounding): fl(fl(m_x^2) + fl(m_y^2))
/// <= 2^48, with every operation rounded separately (no FMA) so that the CPU and the GPU count
/// exactly the same hits. The float rounding misclassifies only points within about 2^-24 of the
/// circle, a bias far below the statistical error of any feasible N (1e-6 relative at N = 1e11).
///
/// Determinism contract: the hit count is an exact 64-bit integer sum, so it is the same for any
/// number of CPU threads, any CUDA grid and threads-per-block, on the CPU and the GPU.

#include <chrono>
#include <cmath>
#include <cstdint>
#include <string>

#include "../config.hpp"
#include "../error.hpp"
#include "../options.hpp"
#include "../random.hpp"
#include "midpoint.hpp"

namespace mcubes {

/// Largest sample count of Monte Carlo pi (2^62).
inline constexpr std::uint64_t pi_max_samples = std::uint64_t(1) << 62;

// philox_words and philox4x32_10: random.hpp (the one Philox round function).

/// Pairs of samples per chunk of the pi stream (file comment).
inline constexpr std::uint64_t pi_chunk_pairs = std::uint64_t(1) << 12;

/// The Philox output for offset k of chunk c of the pi stream.
MCUBES_HOST_DEVICE inline philox_words pi_chunk_words(std::uint64_t c, std::uint32_t k, const philox_round_keys& rk) {
  return philox4x32_10(philox_words{{k, 0u, static_cast<std::uint32_t>(c), static_cast<std::uint32_t>(c >> 32)}}, rk);
}

/// The Philox output for pair j of the pi stream (samples 2j and 2j + 1).
MCUBES_HOST_DEVICE inline philox_words pi_pair_words(std::uint64_t j, const philox_round_keys& rk) {
  return pi_chunk_words(j / pi_chunk_pairs, static_cast<std::uint32_t>(j % pi_chunk_pairs), rk);
}

/// 1 if the sample made of words (wx, wy) lies in the quarter disc, else 0 (see the file comment).
MCUBES_HOST_DEVICE inline unsigned pi_hit(std::uint32_t wx, std::uint32_t wy) {
  const float mx = static_cast<float>((wx >> 8) | 1u);  // exact: < 2^24
  const float my = static_cast<float>((wy >> 8) | 1u);
  constexpr float r2 = 281474976710656.0f;  // 2^48 = (2^24)^2: the unit circle in these units
#if defined(__CUDA_ARCH__)
  return __fadd_rn(__fmul_rn(mx, mx), __fmul_rn(my, my)) <= r2 ? 1u : 0u;
#else
  const float sx = mx * mx;
  const float sy = my * my;
  return sx + sy <= r2 ? 1u : 0u;
#endif
}

/// The coordinate of word w, ((w >> 8) | 1) 2^-24, in (0,1) (for reports and tests).
MCUBES_HOST_DEVICE inline float pi_coordinate(std::uint32_t w) {
  return static_cast<float>((w >> 8) | 1u) * 5.9604644775390625e-08f;
}

/// Options of Monte Carlo pi.
struct pi_options : execution {
  std::uint64_t samples = 1000000000;        ///< N, 2 <= N <= 2^62
  std::uint64_t seed = default_seed;         ///< key of the Philox stream
};

/// @throws invalid_input naming the first offending option.
inline void validate(const pi_options& o) {
  MCUBES_EXPECTS(o.samples >= 2, "Monte Carlo pi needs at least 2 samples (the standard error divides by N - 1), got ",
                 o.samples);
  MCUBES_EXPECTS(o.samples <= pi_max_samples, "Monte Carlo pi takes at most 2^62 samples, got ", o.samples);
  validate(static_cast<const execution&>(o));
}

/// Result of Monte Carlo pi.
struct pi_mc_result {
  std::uint64_t samples = 0;  ///< N
  std::uint64_t hits = 0;     ///< H: samples with x^2 + y^2 <= 1 (exact)
  double estimate = 0;        ///< 4 H / N
  double error = 0;           ///< standard error 4 sqrt(p (1 - p) / (N - 1)), p = H / N
  std::uint64_t seed = 0;
  double seconds = 0;         ///< wall time of the run (device initialisation excluded)
  std::string backend;        ///< "cpu" or "cuda"
};

/// Fills estimate and error of r from samples and hits.
inline void finish_pi_result(pi_mc_result& r) {
  const double n = static_cast<double>(r.samples);
  const double p = static_cast<double>(r.hits) / n;
  r.estimate = 4.0 * p;
  r.error = 4.0 * std::sqrt(p * (1.0 - p) / (n - 1.0));
}

/// Hits among the samples 2j, 2j + 1 of the pairs j in [begin, end) of the pi stream. Host and device.
MCUBES_HOST_DEVICE inline std::uint64_t pi_hits_range(std::uint64_t begin, std::uint64_t end, const philox_round_keys& rk) {
  std::uint64_t h = 0;
  for (std::uint64_t j = begin; j < end; ++j) {
    const philox_words w = pi_pair_words(j, rk);
    h += pi_hit(w.v[0], w.v[1]) + pi_hit(w.v[2], w.v[3]);
  }
  return h;
}

/// Chunks of Monte Carlo pi for N samples: ceil((N / 2) / pi_chunk_pairs), chunk c holding the
/// pairs [c 2^12, min(N/2, (c+1) 2^12)) (2^49 chunks for N = 2^62; no backend's memory grows with
/// it: cpu_tree_reduce_max_partials, and a grid-stride loop on CUDA).
inline std::uint64_t pi_chunks(std::uint64_t samples) {
  const std::uint64_t n_pairs = samples / 2;
  return (n_pairs + pi_chunk_pairs - 1) / pi_chunk_pairs;
}

/// The chunk operation of Monte Carlo pi: the hits of chunk c (at most 2^13), its counter varying
/// in the first word only (file comment), as the throughput-limit kernel's inner loop. Host and
/// device; trivially copyable.
struct pi_chunk_fn {
  philox_round_keys rk;
  std::uint64_t n_pairs;
  MCUBES_HOST_DEVICE std::uint32_t operator()(std::uint64_t c) const {
    const std::uint64_t first = c * pi_chunk_pairs;
    const std::uint32_t count_k = n_pairs - first < pi_chunk_pairs ? static_cast<std::uint32_t>(n_pairs - first)
                                                                   : static_cast<std::uint32_t>(pi_chunk_pairs);
    const std::uint32_t c_lo = static_cast<std::uint32_t>(c), c_hi = static_cast<std::uint32_t>(c >> 32);
    std::uint32_t count = 0;
    for (std::uint32_t k = 0; k < count_k; ++k) {
      const philox_words w = philox4x32_10(philox_words{{k, 0u, c_lo, c_hi}}, rk);
      count += pi_hit(w.v[0], w.v[1]) + pi_hit(w.v[2], w.v[3]);
    }
    return count;
  }
};

/// Monte Carlo pi with N = opt.samples on `backend` (any backend of backend/backend.hpp: its exact
/// count over problem-defined chunks): the same hits on every backend, thread count and block size.
/// Memory independent of N. result.seconds: wall time on the backend.
/// @throws invalid_input for bad options; cuda_error if a CUDA call fails.
template <class Backend>
pi_mc_result pi_monte_carlo_with(const pi_options& opt, Backend& backend) {
  validate(opt);
  const auto t0 = std::chrono::steady_clock::now();
  const philox_round_keys rk = make_philox_round_keys(opt.seed, stream_id::pi);
  const std::uint64_t n_pairs = opt.samples / 2;
  std::uint64_t hits = backend.count(pi_chunks(opt.samples), pi_chunk_fn{rk, n_pairs});
  if (opt.samples % 2) {  // the lone last sample: words 0, 1 of pair N/2
    const philox_words w = pi_pair_words(n_pairs, rk);
    hits += pi_hit(w.v[0], w.v[1]);
  }
  pi_mc_result r;
  r.samples = opt.samples;
  r.hits = hits;
  r.seed = opt.seed;
  r.backend = backend.name();
  finish_pi_result(r);
  r.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  return r;
}

/// The integrand of the midpoint pi: 4 / (1 + x^2).
struct pi_integrand {
  MCUBES_HOST_DEVICE double operator()(double x) const { return 4.0 / (1.0 + x * x); }
};

}  // namespace mcubes

#pragma once
/// @file stratification.hpp
/// The sub-cube grid of m-Cubes (Sakiotis et al. 2022, Algorithm 2 lines 3-8) and the fixed, problem-defined
/// chunking of sub-cubes that makes every backend's sums deterministic.
///
/// In the unit hypercube each axis is cut into g = floor((maxcalls/2)^(1/d)) equal intervals,
/// giving m = g^d sub-cubes with p = max(2, floor(maxcalls/m)) samples each (n_eval = m*p <= maxcalls).
/// Sub-cube c has coordinates c_j = floor(c / g^j) mod g (axis 0 varies fastest).
/// Chunks: consecutive runs of `chunk_cubes` sub-cubes, chunk_cubes = ceil(m / max_chunks), or for
/// a problem that asks for at least S samples per chunk (vector-valued integrands,
/// core/vector_sampler.hpp: vector_chunk_samples) max(ceil(m / max_chunks), ceil(S / p)) capped at m;
/// the chunking depends only on (d, maxcalls, S), never on threads, blocks or devices.

#include <cmath>
#include <cstdint>

#include "../error.hpp"

namespace mcubes {

/// Upper bound on the number of chunks (2^20): enough independent work to fill a GPU with one
/// thread per chunk, few enough that per-chunk partial sums stay small.
inline constexpr std::uint64_t max_chunks = std::uint64_t(1) << 20;

/// The sub-cube grid and chunking of one problem. Trivially copyable.
struct stratification {
  int dim = 0;
  std::uint64_t g = 0;                  ///< intervals per axis
  std::uint64_t n_cubes = 0;            ///< m = g^d
  std::uint64_t samples_per_cube = 0;   ///< p (VEGAS+: the index stride, the most samples of a sub-cube)
  std::uint64_t chunk_cubes = 0;        ///< sub-cubes per chunk
  std::uint64_t n_chunks = 0;           ///< ceil(m / chunk_cubes)
  /// VEGAS+ (core/cube_counts.hpp: make_adaptive_stratification): the fewest samples of a sub-cube
  /// n_min; 0 for the uniform m-Cubes grid (p samples in every sub-cube).
  std::uint64_t min_samples_per_cube = 0;
  std::uint64_t calls = 0;              ///< VEGAS+: the calls per iteration N the counts share out
  /// VEGAS+: the samples of a segment of a sub-cube's sums (core/cube_counts.hpp); 0 for uniform.
  std::uint64_t segment_samples = 0;
  bool adaptive() const noexcept { return min_samples_per_cube != 0; }
  /// Evaluations of a uniform pass, m p (VEGAS+: of the first iteration, m floor(N/m)).
  std::uint64_t n_eval() const noexcept {
    return adaptive() ? n_cubes * (calls / n_cubes) : n_cubes * samples_per_cube;
  }
};

namespace detail {
/// base^exp, saturating at 2^63 (enough to compare against maxcalls/2 <= 2^49).
inline std::uint64_t saturating_pow(std::uint64_t base, int exp) {
  const std::uint64_t cap = std::uint64_t(1) << 63;
  std::uint64_t r = 1;
  for (int i = 0; i < exp; ++i) {
    if (base != 0 && r > cap / base) return cap;
    r *= base;
  }
  return r;
}
}  // namespace detail

/// Builds the grid for a d-dimensional problem with maxcalls evaluations per iteration, with chunks
/// of at least min_chunk_samples samples where the sub-cubes allow (0: the scalar chunking).
/// g is computed in floating point and then corrected with exact integer powers, so it is the
/// exact floor((maxcalls/2)^(1/d)) on every platform.
/// @throws invalid_input if d < 1 or maxcalls < 2 (no sub-cube of two samples fits).
inline stratification make_stratification(int dim, std::uint64_t maxcalls, std::uint64_t min_chunk_samples = 0) {
  MCUBES_EXPECTS(dim >= 1, "dimension must be at least 1 (got ", dim, ")");
  MCUBES_EXPECTS(maxcalls >= 2, "calls per iteration (", maxcalls, ") too few for one sub-cube of 2 samples");
  const std::uint64_t half = maxcalls / 2;
  auto g = static_cast<std::uint64_t>(std::floor(std::pow(static_cast<double>(half), 1.0 / dim)));
  if (g < 1) g = 1;
  while (detail::saturating_pow(g + 1, dim) <= half) ++g;
  while (g > 1 && detail::saturating_pow(g, dim) > half) --g;
  stratification s;
  s.dim = dim;
  s.g = g;
  s.n_cubes = detail::saturating_pow(g, dim);
  const std::uint64_t p = maxcalls / s.n_cubes;
  s.samples_per_cube = p < 2 ? 2 : p;
  s.chunk_cubes = (s.n_cubes + max_chunks - 1) / max_chunks;
  const std::uint64_t for_samples = (min_chunk_samples + s.samples_per_cube - 1) / s.samples_per_cube;
  if (for_samples > s.chunk_cubes) s.chunk_cubes = for_samples < s.n_cubes ? for_samples : s.n_cubes;
  s.n_chunks = (s.n_cubes + s.chunk_cubes - 1) / s.chunk_cubes;
  return s;
}

}  // namespace mcubes

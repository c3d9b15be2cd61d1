#pragma once
/// @file plan.hpp
/// What a Vegas run will do and need, before it runs: the sub-cube grid (g, m, p), the evaluations
/// per iteration and the memory of the bins and the adaptive map, so that a caller can refuse a
/// request beyond the machine (or show it, `mcubes integrate --dry-run`).
///
/// Memory (bytes), with d axes, n = n_bins, T CPU threads (1 for the CUDA backend's host side):
///   bins, level 0:     16 d n per thread, plus 16 d n for the merged sums (bin_accumulator: 128 bits);
///   overflow levels:   up to 16 more such arrays per thread and merged (only if some bin term
///                      reaches 2^63 units of the pass's scale; allocated when first needed);
///   adaptive map:      8 d (n + 1) edges, plus 8 d n contributions and 8 n + 16 n scratch.
/// `typical_bytes` counts level 0 only, `worst_bytes` every overflow level. The CUDA backend needs
/// about `device_bytes` = 17 * 16 d n + 8 d (n + 1) + 16 * tiles of device memory.

#include <cstdint>

#include "core/cube_counts.hpp"
#include "core/reduction.hpp"
#include "core/stratification.hpp"
#include "options.hpp"

namespace mcubes {

/// The plan of a Vegas run (see the file comment).
struct vegas_plan {
  stratification grid;             ///< g, m = g^d, p, chunks (core/stratification.hpp)
  std::uint64_t n_eval = 0;        ///< evaluations per iteration actually used: m p <= calls_per_iteration
  double typical_bytes = 0;        ///< host memory of bins (level 0) and map
  double worst_bytes = 0;          ///< the same with every overflow bin level allocated
  double device_bytes = 0;         ///< device memory of the CUDA backend (bins with levels, map, tiles)
};

/// The plan of vegas over a `dim`-dimensional region with options `o` on `threads` CPU threads
/// (resolved: >= 1). Pure arithmetic, no allocation. @throws invalid_input as validate(o, dim).
inline vegas_plan plan_vegas(int dim, const vegas_options& o, int threads) {
  validate(o, dim);
  MCUBES_EXPECTS(threads >= 1, "plan_vegas: threads must be at least 1, got ", threads);
  vegas_plan p;
  const bool vegas_plus = o.stratification == stratification_mode::adaptive;
  p.grid = vegas_plus ? make_adaptive_stratification(dim, o.calls_per_iteration) : make_stratification(dim, o.calls_per_iteration);
  p.n_eval = vegas_plus ? o.calls_per_iteration : p.grid.n_eval();  // VEGAS+: at most the calls
  const double d = dim, n = map_bins_for(o), level = 16.0 * d * n;  // one array of bin_accumulator
  const double map = 8.0 * d * (n + 1) + 8.0 * d * n + 24.0 * n;
  const double shares = vegas_plus ? 16.0 * static_cast<double>(p.grid.n_cubes) : 0;  // two doubles per sub-cube
  p.typical_bytes = level * (threads + 1) + map + shares;
  p.worst_bytes = level * (max_bin_level + 1) * (threads + 1) + map + shares;
  const double tiles = static_cast<double>(p.grid.n_chunks) / 32 + 1;  // tile sums (at least 32 chunks per tile)
  p.device_bytes = level * (max_bin_level + 1) + 8.0 * d * (n + 1) + 16.0 * tiles + shares;
  return p;
}

}  // namespace mcubes

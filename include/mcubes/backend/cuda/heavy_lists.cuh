#pragma once
/// @file backend/cuda/heavy_lists.cuh
/// Which sub-cubes of a VEGAS+ pass are "heavy" (sampled before V-Sample by segments:
/// heavy_cubes.cuh) and their lists: the threshold T (heavy_above), the per-chunk bodies of the
/// listing (steps 1 and 2 of heavy_cubes.cuh: count_heavy_cubes, list_heavy_cubes_of), shared by
/// the scalar passes' kernels (heavy_cubes.cuh), a batched round's (batch_heavy_cubes.cuh) and the
/// allocation that lists them for the next pass (allocate.cuh), and what a list was made for
/// (heavy_listing_key). Exact integer arithmetic only: every kernel that lists gives the same
/// entries.

#include <algorithm>
#include <cstdint>
#include <cstring>

#include "../../core/cube_counts.hpp"
#include "../../core/stratification.hpp"

namespace mcubes {
namespace cuda_detail {

/// T, the samples above which a sub-cube is sampled before V-Sample, by segments (a "heavy"
/// sub-cube): min(L, max(8, floor(a floor(N/m)))), a = `average_factor`
/// (cuda_launch_policy::heavy_above_average for a single integral's passes, 2 by default;
/// batch_heavy_above_average for a batched round's, 4 by default; at least 1). The segment rule alone
/// fixes the bits (a sub-cube of at most L samples is one segment, whichever kernel samples it),
/// so T is the backend's choice for balance only: a V-Sample thread then meets sub-cubes of at
/// most a times the average count, and at most N / (T + 1) <= m / a sub-cubes are heavy (the
/// lists stay O(m)).
inline std::uint64_t heavy_above(const cube_counts& counts, std::uint64_t calls, std::uint64_t n_cubes,
                                 double average_factor) {
  const std::uint64_t avg = n_cubes != 0 ? calls / n_cubes : 0;
  const auto scaled = static_cast<std::uint64_t>(average_factor * static_cast<double>(avg));
  const std::uint64_t t = std::max<std::uint64_t>(8, scaled);
  return counts.segment != 0 && counts.segment < t ? counts.segment : t;
}

/// The work of a chunk for balanced V-Sample (balanced_sample.cuh), in samples: those of its light
/// sub-cubes (at most T each) plus chunk_work_per_cube per sub-cube and chunk_work_base (the
/// per-sub-cube and per-chunk costs: coordinates, sums, the share). Never changes a result.
inline constexpr unsigned long long chunk_work_per_cube = 2, chunk_work_base = 8;

/// The listing's bodies, shared by the scalar passes' kernels (heavy_cubes.cuh), a batched
/// round's (batch_heavy_cubes.cuh) and the allocation's listing (allocate.cuh).
///
/// Step 1 for the sub-cubes [begin, end) of a chunk: nh heavy sub-cubes (more than `above`
/// samples), ns segments of theirs (ceil(n_c / L) each), `light` the samples of the others.
__device__ __forceinline__ void count_heavy_cubes(const cube_counts& counts, std::uint64_t above, std::uint64_t begin,
                                                  std::uint64_t end, unsigned long long& nh, unsigned long long& ns,
                                                  unsigned long long& light) {
  const std::uint64_t L = counts.segment;
  for (std::uint64_t c = begin; c < end; ++c) {
    const std::uint64_t n = counts.count(c);
    if (n > above)
      ++nh, ns += (n + L - 1) / L;
    else
      light += n;
  }
}

/// Step 2 for the sub-cubes [begin, end) of a chunk whose first heavy index is h and first segment
/// s: cube[h] and seg_first[h] of each heavy one (index order), also(h) called for each; on return
/// h and s are past the chunk's.
/// With `capacity`: only the entries h < capacity are written (the counting goes on: h and s are
/// the totals' parts whatever the capacity; the caller compares them with it).
template <class Also>
__device__ __forceinline__ void list_heavy_cubes_of(const cube_counts& counts, std::uint64_t above, std::uint64_t begin,
                                                    std::uint64_t end, unsigned long long& h, unsigned long long& s,
                                                    unsigned long long* cube, unsigned long long* seg_first, const Also& also,
                                                    std::uint64_t capacity = ~std::uint64_t(0)) {
  const std::uint64_t L = counts.segment;
  for (std::uint64_t c = begin; c < end; ++c) {
    const std::uint64_t n = counts.count(c);
    if (n > above) {
      if (h < capacity) {
        cube[h] = c;
        seg_first[h] = s;
        also(h);
      }
      ++h;
      s += (n + L - 1) / L;
    }
  }
}

/// What a heavy sub-cubes' list in heavy_buffers was made for: the counts (every field that
/// count(c) reads), the threshold T and the chunking, over every chunk. The allocation's listing
/// (allocate.cuh) records it, and the next scalar pass takes the lists as its own where its
/// counts, T and chunking are these (sample_heavy_cubes); every scalar pass clears it first, so a
/// list is used at most once, by the pass that follows the allocation, before anything can write
/// the shares it read (cuda_backend clears it too where it makes or writes share arrays).
struct heavy_listing_key {
  bool valid = false;
  const double* share_in = nullptr;
  double scale = 0;
  std::uint64_t n_base = 0, n_extra_max = 0, segment = 0, above = 0;
  std::uint64_t n_cubes = 0, chunk_cubes = 0, n_chunks = 0;
  static heavy_listing_key of(const cube_counts& c, std::uint64_t above, const stratification& st) {
    heavy_listing_key k;
    k.valid = true;
    k.share_in = c.share_in;
    k.scale = c.scale;
    k.n_base = c.n_base;
    k.n_extra_max = c.n_extra_max;
    k.segment = c.segment;
    k.above = above;
    k.n_cubes = st.n_cubes;
    k.chunk_cubes = st.chunk_cubes;
    k.n_chunks = st.n_chunks;
    return k;
  }
  /// Whether the lists are those of `c` with threshold `above` over the chunks [begin, end) of `st`
  /// (the scale compared bit for bit).
  bool lists(const cube_counts& c, std::uint64_t above_, const stratification& st, std::uint64_t begin,
             std::uint64_t end) const {
    const heavy_listing_key o = of(c, above_, st);
    return valid && begin == 0 && end == st.n_chunks && share_in == o.share_in &&
           std::memcmp(&scale, &o.scale, sizeof scale) == 0 && n_base == o.n_base && n_extra_max == o.n_extra_max &&
           segment == o.segment && above == o.above && n_cubes == o.n_cubes && chunk_cubes == o.chunk_cubes &&
           n_chunks == o.n_chunks;
  }
};

}  // namespace cuda_detail
}  // namespace mcubes

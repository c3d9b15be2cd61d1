#pragma once
/// @file backend/cuda/adapt_kernels.cuh
/// Map adaptation on the device (the CUDA backend keeps the adaptive map in device memory between
/// iterations; only a few scalars come back to the host per iteration).
///
/// adapt_map_kernel runs adaptive_map::adapt_axis (core/adaptive_map.hpp) for one axis per block,
/// with one thread per bin and the element functions of map_adaptation, so the new edges are the
/// CPU backend's, bit for bit:
///  - contributions: the exact 128-bit bin sums (integers) converted to double, as on the host;
///  - S = sum of the smoothed contributions over the fixed pairwise tree: each thread reduces an
///    aligned group with pairwise_sum, the block finishes the same tree (reduction.hpp);
///  - r_max (a maximum), the total of the integer weights (the defensive floor's Q) and their
///    prefix sums are exact in any order (cub::BlockReduce, cub::BlockScan);
///  - each new edge from its own target; the prefix maximum that keeps the edges sorted is exact.
/// The kernel also zeroes the bins it read, ready for the next adapting pass.

#include <cub/block/block_reduce.cuh>
#include <cub/block/block_scan.cuh>

#include <cstdint>

#include "../../core/adaptive_map.hpp"
#include "../../core/reduction.hpp"
#include "block_tree.cuh"
#include "pass_flags.cuh"

namespace mcubes {
namespace cuda_detail {

/// Threads per block of adapt_map_kernel.
inline constexpr int adapt_threads = 512;

/// Doubles of scratch per block of adapt_map_kernel for n bins: contributions, smoothed
/// contributions / weights, integer weights, their prefix sums, old edges.
MCUBES_HOST_DEVICE inline std::size_t adapt_scratch_doubles(int n) { return 5 * static_cast<std::size_t>(n) + 1; }

struct max_of {
  __device__ __forceinline__ double operator()(double a, double b) const { return a > b ? a : b; }
};

/// The rows that block `axis` of adapt_map_kernel writes (all of them for m-Cubes1D) copied from
/// `edges` to `out` where they differ: an axis that keeps its edges.
__device__ __forceinline__ void keep_edges(const double* edges, double* out, int n, int n_axes, bool symmetric, int axis) {
  if (out == edges) return;
  const int rows = symmetric ? n_axes : 1;
  const std::size_t first = static_cast<std::size_t>(axis) * (n + 1), count = static_cast<std::size_t>(rows) * (n + 1);
  for (std::size_t i = threadIdx.x; i < count; i += blockDim.x) out[first + i] = edges[first + i];
}

/// Adapts the map `edges` (n_axes rows of n + 1 edges, axis-major) to `bins` (n_axes rows of n
/// exact sums) and, for top_level >= 1, the overflow levels 1..top_level (`over`, level L at
/// (L - 1) * n_axes * n), folded per bin as adaptive_map::adapt does: block j adapts axis j; with
/// `symmetric` (m-Cubes1D, one block) the rows of all axes are summed exactly into one, level by
/// level, and every axis gets its edges. alpha = 0 only zeroes the bins; floor: the defensive floor
/// (adaptive_map::adapt_axis; 0: none).
/// The new edges go to `out`: `edges` itself, or another buffer of the same layout, which then gets
/// the old edges of every axis that keeps them. Every level read is left zero.
/// Scratch: adapt_scratch_doubles(n) doubles per block, in dynamic shared memory when
/// `global_scratch` is null, else at global_scratch + blockIdx.x * adapt_scratch_doubles(n).
/// The body of adapt_map_kernel for axis `axis` (the block's), shared with adapt_map_batch_kernel.
template <int T>
__device__ __forceinline__ void adapt_map_body(const double* edges, double* out, bin_accumulator* bins,
                                               bin_accumulator* over, int top_level, int n, int n_axes, bool symmetric,
                                               double alpha, double floor, double* global_scratch, int axis) {
  extern __shared__ double adapt_smem[];
  using scan_u64 = cub::BlockScan<unsigned long long, T>;
  using scan_f64 = cub::BlockScan<double, T>;
  using reduce_f64 = cub::BlockReduce<double, T>;
  using reduce_u64 = cub::BlockReduce<unsigned long long, T>;
  __shared__ union {
    typename scan_u64::TempStorage scan_q;
    typename scan_f64::TempStorage scan_e;
    typename reduce_f64::TempStorage reduce;
    typename reduce_u64::TempStorage reduce_q;
  } tmp;
  __shared__ double tree_warps[32];
  __shared__ double s_r_max;
  __shared__ double s_total;
  __shared__ unsigned long long s_q_total;

  const int tid = threadIdx.x;
  double* scratch = global_scratch ? global_scratch + axis * adapt_scratch_doubles(n) : adapt_smem;
  double* c = scratch;
  double* d = c + n;
  auto* q = reinterpret_cast<unsigned long long*>(d + n);
  auto* p = q + n;
  double* e_old = reinterpret_cast<double*>(p + n);
  const std::size_t row = static_cast<std::size_t>(axis) * n;

  // 1. contributions, folded from the top bin level down (combine_bin_level), and the bins of
  //    every level read zeroed for the next adapting pass (each thread its own entries)
  const std::size_t n_values = static_cast<std::size_t>(n_axes) * n;
  for (int k = tid; k < n; k += T) {
    double ck = 0;
    for (int level = top_level; level >= 0; --level) {
      bin_accumulator* lv = level == 0 ? bins : over + static_cast<std::size_t>(level - 1) * n_values;
      bin_accumulator a = lv[row + k];
      lv[row + k] = bin_accumulator{};
      if (symmetric)
        for (int j = 1; j < n_axes; ++j) {
          a.add(lv[static_cast<std::size_t>(j) * n + k]);
          lv[static_cast<std::size_t>(j) * n + k] = bin_accumulator{};
        }
      ck = combine_bin_level(ck, a, level == top_level);
    }
    c[k] = ck;
  }
  if (alpha == 0) {  // frozen map (uniform over the block)
    keep_edges(edges, out, n, n_axes, symmetric, axis);
    return;
  }
  __syncthreads();

  // 2. smoothing; 3. S over the fixed pairwise tree
  for (int k = tid; k < n; k += T) d[k] = map_adaptation::smoothed(c, k, n);
  __syncthreads();
  const std::uint64_t width = next_pow2(static_cast<std::uint64_t>(n));
  const unsigned W = width < T ? static_cast<unsigned>(width) : T;  // leaves of the in-block tree
  const std::uint64_t G = width / W;                                // values per leaf
  double v = 0.0;
  if (static_cast<unsigned>(tid) < W) {
    const std::uint64_t first = tid * G;
    const std::uint64_t count = first < static_cast<std::uint64_t>(n) ? (n - first < G ? n - first : G) : 0;
    v = pairwise_sum(d + first, count, G);
  }
  // the block form of the tree over all T threads (block_tree_add: block_tree_merge's nodes by
  // warp shuffles): the leaves past W are 0.0 and S >= 0, so the levels above W add +0.0 to S,
  // which leaves it unchanged
  const double r = cuda_detail::block_tree_add<T>(v, tree_warps);
  if (tid == 0) s_total = r;
  __syncthreads();
  const double S = s_total;
  if (!map_adaptation::usable_total(S)) {  // nothing to learn: the axis keeps its edges
    keep_edges(edges, out, n, n_axes, symmetric, axis);
    return;
  }

  // 4. damped weights and their maximum
  double local_max = 0.0;
  for (int k = tid; k < n; k += T) {
    d[k] = map_adaptation::damped_weight(d[k], S, alpha);
    local_max = d[k] > local_max ? d[k] : local_max;
  }
  const double r_max = reduce_f64(tmp.reduce).Reduce(local_max, max_of{});
  if (tid == 0) s_r_max = r_max;
  __syncthreads();
  if (!map_adaptation::usable_total(s_r_max)) {  // every weight underflowed: the axis keeps its edges (as on the host)
    keep_edges(edges, out, n, n_axes, symmetric, axis);
    return;
  }

  // 5. integer weights (with the defensive floor: the starved ones plus floor_weight of the old
  //    bin's width, from their exact total) and their inclusive prefix sums (exact)
  const double* old_row = edges + static_cast<std::size_t>(axis) * (n + 1);
  for (int i = tid; i <= n; i += T) e_old[i] = old_row[i];
  const int shift = map_adaptation::weight_shift(n, floor > 0);
  unsigned long long q_local = 0;
  for (int k = tid; k < n; k += T) {
    q[k] = map_adaptation::quantized_weight(d[k], s_r_max, shift);
    q_local += q[k];
  }
  __syncthreads();  // e_old complete; tmp free (r_max was read from s_r_max)
  if (floor > 0) {
    const unsigned long long q_total = reduce_u64(tmp.reduce_q).Sum(q_local);
    if (tid == 0) s_q_total = q_total;
    __syncthreads();
    const double cf = map_adaptation::floor_factor(floor);
    const unsigned long long below = map_adaptation::starved_below(s_q_total, n);
    for (int k = tid; k < n; k += T)
      q[k] += map_adaptation::starved_floor_weight(q[k], below, s_q_total, e_old[k + 1] - e_old[k], cf);
    __syncthreads();
  }
  unsigned long long carry = 0;
  for (int base = 0; base < n; base += T) {
    const int k = base + tid;
    const unsigned long long w = k < n ? q[k] : 0ull;
    unsigned long long incl, total;
    scan_u64(tmp.scan_q).InclusiveSum(w, incl, total);
    if (k < n) p[k] = carry + incl;
    carry += total;
    __syncthreads();
  }

  // 6. new edges 1..n-1, made monotone by the prefix maximum, written to this axis (all axes if symmetric)
  const int rows = symmetric ? n_axes : 1;
  double running = 0.0;
  for (int base = 1; base < n; base += T) {
    const int i = base + tid;
    const double x = i < n ? map_adaptation::new_edge(i, n, reinterpret_cast<const std::uint64_t*>(p),
                                                      reinterpret_cast<const std::uint64_t*>(q), e_old)
                           : 0.0;
    double m, tile_max;
    scan_f64(tmp.scan_e).InclusiveScan(x, m, max_of{}, tile_max);
    m = m > running ? m : running;
    if (i < n)
      for (int r = 0; r < rows; ++r) out[static_cast<std::size_t>(axis + r) * (n + 1) + i] = m;
    running = tile_max > running ? tile_max : running;
    __syncthreads();
  }
  if (tid == 0)
    for (int r = 0; r < rows; ++r) {
      out[static_cast<std::size_t>(axis + r) * (n + 1)] = 0.0;
      out[static_cast<std::size_t>(axis + r) * (n + 1) + n] = 1.0;
    }
}

/// adapt_map_body for the axis of each block into `out` (see there). With `top_from` (non-null)
/// the top level is the pass's own, read on the device: top_bin_level of the largest contribution
/// in those flags with `bin_scale`, the level the host's pass_sums gives; else `top_level`.
template <int T>
__global__ void __launch_bounds__(T) adapt_map_kernel(const double* edges, double* out, bin_accumulator* bins,
                                                      bin_accumulator* over, int top_level, const device_flags* top_from,
                                                      double bin_scale, int n, int n_axes, bool symmetric, double alpha,
                                                      double floor, double* global_scratch) {
  if (top_from != nullptr) {
    const unsigned long long bits = top_from->max_contribution_bits;
    double max_c;
    memcpy(&max_c, &bits, sizeof max_c);
    top_level = top_bin_level(max_c, bin_scale);
  }
  adapt_map_body<T>(edges, out, bins, over, top_level, n, n_axes, symmetric, alpha, floor, global_scratch, blockIdx.x);
}

/// One map of a batch to adapt (adapt_map_batch_kernel): its edges, bins, overflow levels and the
/// top level of its last V-Sample pass.
struct adapt_item {
  double* edges;
  bin_accumulator* bins;
  bin_accumulator* over;
  int top_level;
};

/// adapt_map_kernel for several maps in one launch: block (i, j) adapts axis j of items[i] (the
/// same arithmetic, so the same edges bit for bit; the items on the x axis of the grid, so that a
/// batch may have up to 2^31 - 1 of them). Scratch per block: in dynamic shared memory when
/// `global_scratch` is null, else at global_scratch + (i * gridDim.y + j) * adapt_scratch_doubles(n).
template <int T>
__global__ void __launch_bounds__(T) adapt_map_batch_kernel(const adapt_item* items, int n, int n_axes, bool symmetric,
                                                            double alpha, double floor, double* global_scratch) {
  const adapt_item it = items[blockIdx.x];
  double* scratch = global_scratch
                        ? global_scratch + static_cast<std::size_t>(blockIdx.x) * gridDim.y * adapt_scratch_doubles(n)
                        : nullptr;
  adapt_map_body<T>(it.edges, it.edges, it.bins, it.over, it.top_level, n, n_axes, symmetric, alpha, floor, scratch,
                    blockIdx.y);
}

}  // namespace cuda_detail
}  // namespace mcubes

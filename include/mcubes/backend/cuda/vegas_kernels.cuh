#pragma once
/// @file backend/cuda/vegas_kernels.cuh
/// The __global__ functions of the CUDA Vegas backend (V-Sample, V-Sample-No-Adjust, the final
/// fixed-tree reduction, and the replay of one sample). Launched only by backend/cuda/vegas_pass.cuh.
///
/// Work decomposition (determinism contract: run-to-run and launch-configuration invariant):
///  - thread t of tile k computes chunk (k*B + t)*stride serially (core/sampler.hpp); B is the
///    block size, a power of two in [32, 1024], so a tile is an aligned group of B chunk partials,
///    i.e. a node of the fixed pairwise tree (core/reduction.hpp). The block reduces it level by
///    level (adjacent pairs first) and writes one value per tile; blocks loop over tiles
///    (grid-stride), so the grid size changes nothing. The first 5 levels run inside each warp with
///    register shuffles, the remaining log2(B/32) levels over the warp sums in warp 0: the same
///    additions, of the same operands, in the same order as a shared-memory tree
///    (warp_tree_sum, block_tree_sum: block_tree.cuh), with one __syncthreads per tile.
///  - tree_reduce_kernel finishes the same tree over the tile values and hands the pass's result
///    and flags to the host in one pass_result.
///  - bin contributions: exact 128-bit integer sums (bin_accumulator in global memory). With
///    shared bins, a block keeps the low 64-bit word of every bin in shared memory (8 bytes a bin)
///    and adds each carry out of it directly to the global bin's high word; at its end it adds its
///    low words into the global 128-bit bins with carry (shared_bin_sink, flush_shared_bins:
///    bin_sink.cuh).
///    Integer addition is associative and commutative, so the bits do not depend on the order of
///    the atomics.
///  - the map edges are read from shared memory when the launch gives room for them (the same
///    values, so the same bits).
///  - n_nonzero (sum), first non-finite index (min) and largest contribution (max on the IEEE bit
///    pattern of a non-negative double) are order-independent integer reductions and atomics.
///
/// Checked on an H100 with a stand-alone harness (not in the repository): f2-f6, fA and fB, block
/// sizes 32, 256 and 1024, shared and global bins, m-Cubes1D, give the same bits as the previous
/// kernels (estimate, error and n_nonzero of every iteration; the 128-bit bins, also with bin
/// scales that make the low words wrap many times); tests/cuda pass.

#include <cuda_pipeline.h>

#include <cstddef>
#include <cstdint>
#include <type_traits>

#include "../../core/adaptive_map.hpp"
#include "../../core/reduction.hpp"
#include "../../core/sampler.hpp"
#include "bin_sink.cuh"
#include "block_tree.cuh"
#include "pass_flags.cuh"

namespace mcubes {
namespace cuda_detail {

/// Bytes of dynamic shared memory of a v_sample_kernel launch: the bins' low words when the bins
/// are kept in shared memory (shared_bins: Adapt only), then the n_edges = D * (n_bins + 1) map
/// edges when they are to be read from shared memory (shared_edges). The kernel finds out which
/// from the size it was given (%dynamic_smem_size), so any size works: smaller than the edges
/// leaves them in global memory. The kernel also has < 2 KB of static shared memory
/// (v_sample_static_smem_bytes); a launch needs dynamic + static <= sharedMemPerBlockOptin.
inline constexpr std::size_t v_sample_dynamic_smem_bytes(std::size_t n_bin_values, bool shared_bins,
                                                         std::size_t n_edges = 0, bool shared_edges = false) {
  return (shared_bins ? n_bin_values * sizeof(unsigned long long) : 0) + (shared_edges ? n_edges * sizeof(double) : 0);
}

/// Static shared memory of v_sample_kernel (warp sums of a tile, double buffered, and the per-warp
/// flags), 1792 bytes. A launch needs dynamic + static <= sharedMemPerBlockOptin, and the
/// cudaFuncAttributeMaxDynamicSharedMemorySize opt-in as soon as dynamic + static > 48 KB.
inline constexpr std::size_t v_sample_static_smem_bytes = 2 * 2 * 32 * sizeof(double) + 32 * 3 * sizeof(unsigned long long);

/// Minimum resident blocks per multiprocessor that v_sample_kernel is compiled for: the register
/// budget per thread is 65536 / (MinBlocks * MaxThreads), rounded down to a multiple of 8. Blocks
/// of up to 256 threads: 3 for both kernels (80 registers; 768 threads = 37.5% occupancy per SM).
/// Measured on the H100 (suite integrands f2, f3, f4, fA, fB): V-Sample with 4 blocks (64
/// registers, up to 360 bytes of spills) ran 2-20% slower than with 3, with 5 blocks (48
/// registers) 1-35% slower; No-Adjust with 4 blocks ran as fast or up to 8% slower than with 3
/// (fA 6-D: 50-52 vs 54 G evaluations/s), with 5 blocks 4-10% slower. The kernels are issue-bound
/// at this occupancy (70% of issue slots busy, "not selected" the top stall), so more resident
/// warps do not pay for the spills. 1024-thread blocks get 64 registers (1 block).
/// An integrand may ask for another budget with `static constexpr int cuda_min_blocks = k;` (k in
/// [1, 3]; integrand.hpp), e.g. 2 (128 registers) for one that gathers from several tables.
template <class F, class = void>
struct integrand_min_blocks {
  static constexpr int value = 3;
};
template <class F>
struct integrand_min_blocks<F, std::void_t<decltype(F::cuda_min_blocks)>> {
  static_assert(F::cuda_min_blocks >= 1 && F::cuda_min_blocks <= 3, "cuda_min_blocks: 1, 2 or 3");
  static constexpr int value = F::cuda_min_blocks;
};
template <bool Adapt, int MaxThreads, class F = void>
inline constexpr int v_sample_min_blocks = MaxThreads <= 256 ? integrand_min_blocks<F>::value : 1;

/// Copies n doubles from global `src` to shared `dst`, thread t taking elements t, t + blockDim.x,
/// ..., with asynchronous copies (cp.async, CUDA's __pipeline_memcpy_async) that are all in flight
/// at once, then waits for this thread's. A plain load-and-store loop waits one L2 round trip per
/// element: at 4008 edges (f4 8-D, 500 bins) and blocks of 256, that wait was 15 % of a V-Sample
/// launch at 1e6 calls (ncu source view, bench/results/2026-12-02-small-launches.md). The same
/// values, so the same bits. The caller synchronises the block before reading dst.
__device__ __forceinline__ void copy_to_shared(double* dst, const double* src, unsigned n) {
  for (unsigned i = threadIdx.x; i < n; i += blockDim.x) __pipeline_memcpy_async(dst + i, src + i, sizeof(double));
  __pipeline_commit();
  __pipeline_wait_prior(0);
}

/// The dynamic shared memory of a V-Sample launch (v_sample_kernel, balanced_sample_kernel):
/// with bins_in_smem, the D n_bins bin low words first, zeroed here; then the map's D (n_bins + 1)
/// edges, copied here, when the launch gave room for them (the kernel reads the size it got, see
/// v_sample_dynamic_smem_bytes). Returns whether the edges are in shared memory, at `s_edges`.
/// The caller synchronises the block before reading either.
template <int D>
__device__ __forceinline__ bool fill_dynamic_smem(unsigned long long* dyn, const map_view<D>& map, bool bins_in_smem,
                                                  double*& s_edges) {
  const unsigned B = blockDim.x, tid = threadIdx.x;
  const int n_bin_values = D * map.n_bins;
  const unsigned n_edges = static_cast<unsigned>(D) * static_cast<unsigned>(map.n_bins + 1);
  unsigned dyn_bytes;  // the dynamic shared memory this launch was given
  asm("mov.u32 %0, %%dynamic_smem_size;" : "=r"(dyn_bytes));
  s_edges = reinterpret_cast<double*>(dyn + (bins_in_smem ? n_bin_values : 0));
  const bool edges_in_smem =
      dyn_bytes >= (bins_in_smem ? static_cast<unsigned long long>(n_bin_values) * 8 : 0ull) + n_edges * 8ull;
  if (bins_in_smem)
    for (int i = tid; i < n_bin_values; i += B) dyn[i] = 0ull;
  if (edges_in_smem) copy_to_shared(s_edges, map.edges, n_edges);
  return edges_in_smem;
}

/// The tile loop of v_sample_kernel: block b handles tiles first + b, first + b + gridDim.x, ...
/// below n_tiles; in tile k thread t samples chunk (k*B + t)*stride (sample_chunk, core/sampler.hpp) and the block sums the B chunk
/// partials over the fixed pairwise tree (block_tree_sum) into tile_est[k], tile_var[k].
template <int D, class F, bool Adapt, class Counts = any_counts>
__device__ __forceinline__ void v_sample_tiles(const F& f, const sampling_params<D>& sp, const map_view<D>& map,
                                               std::uint64_t stride, std::uint64_t n_sel, std::uint64_t first,
                                               std::uint64_t n_tiles, double* tile_est, double* tile_var, shared_bin_sink& sink,
                                               double (*red)[2][32], warp_flags& flags, const philox_schedule& rng,
                                               const heavy_cube_sums& heavy) {
  const unsigned B = blockDim.x, tid = threadIdx.x;
  no_bins none;
  // k counts this block's tiles (32 bits: n_tiles <= 2^20); the tile index is recomputed from it
  // after sampling, so that only k stays live across sample_chunk.
  for (unsigned k = 0;; ++k) {
    std::uint64_t tile = first + blockIdx.x + static_cast<std::uint64_t>(k) * gridDim.x;
    if (tile >= n_tiles) break;
    chunk_partial part;
    {
      const std::uint64_t sel = tile * B + tid;
      if (sel < n_sel) {
        if constexpr (Adapt)
          part = sample_chunk<D>(f, sp, map, sel * stride, sink, rng, no_poll{}, heavy, Counts{});
        else
          part = sample_chunk<D>(f, sp, map, sel * stride, none, rng, no_poll{}, heavy, Counts{});
      }
    }
    fold_warp_flags<Adapt>(part, flags);
    double e = part.estimate, v = part.variance;
    block_tree_sum(e, v, red[k & 1u]);
    if (tid == 0) {
      tile = first + blockIdx.x + static_cast<std::uint64_t>(k) * gridDim.x;
      tile_est[tile] = e;
      tile_var[tile] = v;
    }
  }
}

/// The tile loop of v_sample_kernel for VEGAS+ passes of one sub-cube per chunk (Spread: sp.counts
/// per cube, sp.chunk_cubes == 1, stride 1; launch_v_sample decides): thread t of tile k still
/// owns chunk k*B + t, i.e. sub-cube c = k*B + t, and its partial, but a warp samples the light
/// sub-cubes of its 32 lanes as one list (their samples in lane order, then index order) 32 at a
/// time, a sample per lane: the owner of list position i is the last lane whose exclusive sum of
/// counts is at most i (five shuffles), its sub-cube's coordinates from `coords` (this warp's
/// D x 32 16-bit values in shared memory, written by each lane for its own sub-cube) and its count
/// by shuffle, the values f J and (f J)^2 go through `win` (this warp's 2 x 32 doubles), and
/// each owner adds its samples' values in index order (the segment rule of sample_cubes, at
/// segments of sp.counts.segment). So the per-sub-cube sums, I_c, var_c and the share, the chunk
/// partials and the tile tree are those of sample_chunk, bit for bit; the bin terms and flags of a
/// sample are added by the lane that computed it (exact integers, order-independent). A warp then
/// costs about its samples / 32 steps, not 32 threads' loops of their own counts (a warp of the
/// chunk-per-thread loop waits, sub-cube by sub-cube, for its largest count). A warp whose counts
/// are close to even (32 x its largest count at most `spread_above` x its samples) has each lane
/// sample its own sub-cube instead, as sample_cubes does: the same sums either way. Heavy
/// sub-cubes (`heavy`) are taken as precomputed, as in sample_cubes, or where their segments'
/// sums are not finished (heavy.means null) finished by their lane (finish_heavy_cube, the same
/// serial sums as heavy_finish_kernel's).
/// Deferred (`cube_mean` not null): the heavy sub-cubes are being sampled beside this launch
/// (vegas_pass.cuh), so none of their sums is read: each light sub-cube's I_c, var_c go to
/// cube_mean[c], cube_var[c] and the tiles are summed afterwards (sorted_sample.cuh,
/// sorted_tiles_kernel: the same partials over the same tree); nothing is written to tile_est.
template <int D, class F, bool Adapt>
__device__ __forceinline__ void v_sample_tiles_spread(const F& f, const sampling_params<D>& sp, const map_view<D>& map,
                                                      std::uint64_t n_sel, std::uint64_t first, std::uint64_t n_tiles,
                                                      double* tile_est, double* tile_var, shared_bin_sink& sink,
                                                      double (*red)[2][32], warp_flags& flags, const philox_schedule& rng,
                                                      const heavy_cube_sums& heavy, double (*win)[32],
                                                      unsigned short (*coords)[32], double spread_above, double* cube_mean,
                                                      double* cube_var) {
  constexpr unsigned full = 0xffffffffu;
  const unsigned B = blockDim.x, tid = threadIdx.x, lane = tid & 31u;
  // list positions in 32 bits: a sub-cube has at most sp.p < 2^26 samples (launch_v_sample)
  const unsigned seg_len = sp.counts.segment != 0 && sp.counts.segment < sp.p ? static_cast<unsigned>(sp.counts.segment)
                                                                               : static_cast<unsigned>(sp.p);
  no_bins none;
  for (unsigned k = 0;; ++k) {
    const std::uint64_t tile = first + blockIdx.x + static_cast<std::uint64_t>(k) * gridDim.x;
    if (tile >= n_tiles) break;
    const std::uint64_t warp_first = tile * B + (tid & ~31u);  // sub-cube of this warp's lane 0
    chunk_partial part;
    double s1 = 0, s2 = 0;
    unsigned mine = 0, P = 0, S = 0;  // samples sampled here (0: heavy or none), their list offset, the warp's
    {
      const std::uint64_t c = warp_first + lane;  // this lane's sub-cube (= chunk)
      std::uint64_t n = 0;
      if (c < n_sel) {
        n = sp.counts.count(c);
        if (!heavy.precomputed(n)) mine = static_cast<unsigned>(n);
        if constexpr (D >= 2) {  // its coordinates, for the lanes that sample it
          cube_coord_t<D> coord[D];
          cube_start<D>(c, sp.g, coord);
#pragma unroll
          for (int j = 0; j < D; ++j) coords[j][lane] = static_cast<unsigned short>(coord[j]);
        }
      }
      __syncwarp();
      unsigned incl = mine;
#pragma unroll
      for (unsigned s = 1; s < 32; s <<= 1) {
        const unsigned o = __shfl_up_sync(full, incl, s);
        if (lane >= s) incl += o;
      }
      P = incl - mine;
      S = __shfl_sync(full, incl, 31);
    }
    unsigned mx = mine;  // the warp's largest count: the steps of a thread-per-sub-cube loop
#pragma unroll
    for (unsigned s = 16; s >= 1; s >>= 1) {
      const unsigned o = __shfl_xor_sync(full, mx, s);
      mx = o > mx ? o : mx;
    }
    double t1 = 0, t2 = 0;
    unsigned left = seg_len;  // samples of the lane's current segment not yet added (the windows below)
    if (!(32.0 * mx > spread_above * static_cast<double>(S))) {
      // counts close to even: each lane samples its own sub-cube (sample_cubes' loop over segments)
      if (mine > 0) {
        const std::uint64_t c = warp_first + lane;
        double cd[D];
        if constexpr (D >= 2) {
#pragma unroll
          for (int j = 0; j < D; ++j) cd[j] = static_cast<double>(coords[j][lane]);
        } else {
          cd[0] = static_cast<double>(c);
        }
        const double ts = sp.bin_scale / static_cast<double>(mine);
        const std::uint64_t cube_first = c * sp.p, last = cube_first + mine;
        for (std::uint64_t s0 = cube_first; s0 != last;) {
          const std::uint64_t s_end = last - s0 > seg_len ? s0 + seg_len : last;
          t1 = t2 = 0;
          if constexpr (Adapt)
            sample_segment<D>(f, sp, map, rng, cd, s0, s_end, cube_first, ts, sink, part, t1, t2, no_poll{});
          else
            sample_segment<D>(f, sp, map, rng, cd, s0, s_end, cube_first, ts, none, part, t1, t2, no_poll{});
          s1 += t1;
          s2 += t2;
          s0 = s_end;
        }
      }
      S = 0;  // no window below
    }
    for (unsigned w0 = 0; w0 < S; w0 += 32) {
      const unsigned i = w0 + lane;
      unsigned owner = 0;  // the last lane with P <= i (its count is then > 0 where i < S)
#pragma unroll
      for (unsigned step = 16; step >= 1; step >>= 1)
        if (__shfl_sync(full, P, owner + step) <= i) owner += step;
      const unsigned p_owner = __shfl_sync(full, P, owner);
      const unsigned n_owner = __shfl_sync(full, mine, owner);
      double fj = 0, fj2 = 0;
      if (i < S) {
        const std::uint64_t cube = warp_first + owner;
        double cd[D];
        if constexpr (D >= 2) {
#pragma unroll
          for (int j = 0; j < D; ++j) cd[j] = static_cast<double>(coords[j][owner]);
        } else {
          cd[0] = static_cast<double>(cube);  // D = 1: the coordinate is the index (exact below 2^53)
        }
        const double ts = sp.bin_scale / static_cast<double>(n_owner);  // as sample_cubes (per-cube counts)
        const std::uint64_t index = cube * sp.p + (i - p_owner);
        const auto keep = [&](double a, double b) {
          fj = a;
          fj2 = b;
        };
        if constexpr (Adapt)
          sample_term<D>(f, sp, map, rng, cd, index, ts, sink, part, keep);
        else
          sample_term<D>(f, sp, map, rng, cd, index, ts, none, part, keep);
      }
      win[0][lane] = fj;
      win[1][lane] = fj2;
      __syncwarp();
      // this lane's samples in the window, in index order (list positions [a, e))
      const unsigned a = P > w0 ? P : w0;
      const unsigned e = P + mine < w0 + 32 ? P + mine : w0 + 32;
      const unsigned end_of_cube = P + mine;  // one past this lane's last list position
      for (unsigned j = a; j < e; ++j) {
        t1 += win[0][j - w0];
        t2 += win[1][j - w0];
        // a segment's end (seg_len samples of it added: a countdown, not a division per sample) or
        // the sub-cube's last sample: the segment's sums into the sub-cube's
        if (--left == 0 || j + 1 == end_of_cube) {
          s1 += t1;
          s2 += t2;
          t1 = t2 = 0;
          left = seg_len;
        }
      }
      __syncwarp();
    }
    {
      const std::uint64_t c = warp_first + lane;
      if (c < n_sel) {
        const std::uint64_t n = sp.counts.count(c);  // again: no register held across the windows
        cube_estimate ce;
        if (heavy.precomputed(n)) {
          if (cube_mean == nullptr) {
            const std::uint64_t h = heavy.first(c);
            if (heavy.means != nullptr) {
              ce.mean = heavy.mean(h);
              ce.var = heavy.var(h);
            } else {  // its segments' sums not finished: this lane adds them (heavy_sums_in_v_sample)
              ce = finish_heavy_cube(sp.counts, c, heavy.seg_first[h], heavy.seg_first[h + 1], heavy.seg_s1, heavy.seg_s2);
            }
          }
        } else {
          ce = finish_cube(s1, s2, static_cast<double>(n), sp.counts, c);
          if (cube_mean != nullptr) {
            cube_mean[c] = ce.mean;
            cube_var[c] = ce.var;
          }
        }
        part.estimate += ce.mean;
        part.variance += ce.var;
      }
    }
    fold_warp_flags<Adapt>(part, flags);
    if (cube_mean != nullptr) continue;  // deferred: the tiles are summed afterwards
    double ev = part.estimate, vv = part.variance;
    block_tree_sum(ev, vv, red[k & 1u]);
    if (tid == 0) {
      tile_est[tile] = ev;
      tile_var[tile] = vv;
    }
  }
}

/// The block of a V-Sample kernel around its tile loop: the warps' flag slots and the dynamic shared
/// memory (fill_dynamic_smem: bins, map edges), then tiles(map, sink, s_red, this warp's flag slot),
/// then the block's flags (add_block_flags) and shared bins (flush_shared_bins). tiles is called
/// at two sites, with the edges in shared memory or not, so that the compiler makes two copies of
/// the tile loop and the shared-memory one reads the edges with LDS and 32-bit addresses (one
/// loop through a generic pointer measured 5-8% slower).
template <int D, bool Adapt, class Tiles>
__device__ __forceinline__ void v_sample_block(const map_view<D>& map, bin_accumulator* bins, bin_accumulator* over,
                                               bool shared_bins, device_flags* flags, const Tiles& tiles) {
  extern __shared__ unsigned long long v_sample_dyn[];  // [D * n_bins bin low words] [D * (n_bins + 1) edges]
  __shared__ double s_red[2][2][32];                    // warp sums of a tile, double buffered
  __shared__ warp_flags s_flags[32];
  const unsigned B = blockDim.x;
  const unsigned tid = threadIdx.x;
  const unsigned warp = tid >> 5;
  const int n_bin_values = D * map.n_bins;
  const bool bins_in_smem = Adapt && shared_bins;
  if ((tid & 31u) == 0) s_flags[warp] = warp_flags{0ull, ~0ull, 0ull};
  double* s_edges;
  const bool edges_in_smem = fill_dynamic_smem<D>(v_sample_dyn, map, bins_in_smem, s_edges);
  __syncthreads();

  shared_bin_sink sink{v_sample_dyn, bins, over, static_cast<unsigned>(n_bin_values), map.n_bins, shared_bins};
  if (edges_in_smem)
    tiles(map_view<D>{s_edges, map.n_bins}, sink, s_red, s_flags[warp]);
  else
    tiles(map, sink, s_red, s_flags[warp]);
  __syncthreads();  // every shared bin atomic and flag fold of the block is done
  if (tid == 0) add_block_flags(s_flags, B >> 5, flags);
  if (bins_in_smem) flush_shared_bins(v_sample_dyn, bins, n_bin_values);
}

/// The block of a V-Sample kernel whose threads keep their flags in registers (balanced and sorted
/// V-Sample: balanced_sample.cuh, sorted_sample.cuh): the dynamic shared memory
/// (fill_dynamic_smem: bins, map edges), then body(map, sink, flags) at two sites (the edges in
/// shared memory or not, as v_sample_block), then the warps' flags (thread_flags::add_to) and the
/// block's shared bins (flush_shared_bins).
template <int D, bool Adapt, class Body>
__device__ __forceinline__ void thread_flags_block(const map_view<D>& map, bin_accumulator* bins, bin_accumulator* over,
                                                   bool shared_bins, device_flags* flags, const Body& body) {
  extern __shared__ unsigned long long v_sample_dyn[];  // [D * n_bins bin low words] [D * (n_bins + 1) edges]
  const int n_bin_values = D * map.n_bins;
  const bool bins_in_smem = Adapt && shared_bins;
  double* s_edges;
  const bool edges_in_smem = fill_dynamic_smem<D>(v_sample_dyn, map, bins_in_smem, s_edges);
  __syncthreads();
  shared_bin_sink sink{v_sample_dyn, bins, over, static_cast<unsigned>(n_bin_values), map.n_bins, bins_in_smem};
  thread_flags fl;
  if (edges_in_smem)
    body(map_view<D>{s_edges, map.n_bins}, sink, fl);
  else
    body(map, sink, fl);
  fl.add_to(flags);
  if (bins_in_smem) {
    __syncthreads();
    flush_shared_bins(v_sample_dyn, bins, n_bin_values);
  }
}

/// V-Sample (Adapt = true) or V-Sample-No-Adjust over tiles [tile_first, n_tiles) of blockDim.x
/// chunks (v_sample_tiles; tile_first > 0 only for the array path's slices, array_path.cuh). The
/// heavy sub-cubes of a VEGAS+ pass (`heavy`, backend/cuda/heavy_cubes.cuh) were sampled before:
/// their I_c, var_c are read, in sample_cubes' order (a default heavy_cube_sums: none).
/// Flags: per warp in shared memory (fold_warp_flags), then one global atomic per flag and block.
/// Bins (Adapt): in shared memory when shared_bins (the low words, first in the dynamic shared
/// memory; zeroed here, flushed once per block with flush_shared_bins), else straight into the
/// global 128-bit bins (shared_bin_sink either way). Map edges: copied into the dynamic shared
/// memory after the bins when the launch gave room for them (the kernel reads the size it was
/// given; see v_sample_dynamic_smem_bytes), else read from global memory.
///
/// Preconditions: `bins` and the overflow levels `over` (max_bin_level * D * n_bins) are zero
/// before the pass (the kernel adds into them); `flags` holds
/// initial_flags() (tree_reduce_kernel resets it after each pass); blockDim.x is a power of two in
/// [32, MaxThreads]. MaxThreads (256 or 1024) bounds blockDim.x, so that the compiler keeps the
/// registers within what such a block can have (v_sample_min_blocks). Counts: any_counts, or
/// uniform_counts for passes with sp.counts.none() (the uniform strategy, core/sampler.hpp: a loop
/// without per-cube branches, the same bits; a kernel of its own, so that neither form's registers
/// weigh on the other's).
template <int D, class F, bool Adapt, int MaxThreads, class Counts = any_counts>
__global__ void __launch_bounds__(MaxThreads, v_sample_min_blocks<Adapt, MaxThreads, F>)
    v_sample_kernel(F f, sampling_params<D> sp, map_view<D> map, std::uint64_t stride, std::uint64_t n_sel,
                    std::uint64_t tile_first, std::uint64_t n_tiles, double* tile_est, double* tile_var, bin_accumulator* bins,
                    bin_accumulator* over, bool shared_bins, device_flags* flags, philox_schedule rng,
                    heavy_cube_sums heavy) {
  v_sample_block<D, Adapt>(map, bins, over, shared_bins, flags,
                           [&](const map_view<D>& m, shared_bin_sink& sink, double (*red)[2][32], warp_flags& slot) {
                             v_sample_tiles<D, F, Adapt, Counts>(f, sp, m, stride, n_sel, tile_first, n_tiles, tile_est,
                                                                 tile_var, sink, red, slot, rng, heavy);
                           });
}

/// Whether v_sample_spread_kernel exists for dimension D: its static shared memory, beyond
/// v_sample_kernel's, holds per warp of a block of at most 256 threads 2 x 32 doubles (the value
/// windows) and D x 32 16-bit sub-cube coordinates (D >= 2): 4 KiB + D / 2 KiB per block.
template <int D>
inline constexpr bool v_sample_spread_available = D <= 64;

/// v_sample_kernel with the tile loop of v_sample_tiles_spread (VEGAS+ passes of one sub-cube per
/// chunk, stride 1, g < 2^16): the same preconditions, shared memory and results (bit for bit),
/// the samples of a warp's light sub-cubes spread over its lanes where its counts are uneven
/// (`spread_above`). Blocks of at most 256 threads. `cube_mean`, `cube_var`: null, or the deferred
/// form's per-sub-cube outputs (v_sample_tiles_spread).
template <int D, class F, bool Adapt>
__global__ void __launch_bounds__(256, v_sample_min_blocks<Adapt, 256, F>)
    v_sample_spread_kernel(F f, sampling_params<D> sp, map_view<D> map, std::uint64_t n_sel, std::uint64_t tile_first,
                           std::uint64_t n_tiles, double* tile_est, double* tile_var, bin_accumulator* bins,
                           bin_accumulator* over, bool shared_bins, device_flags* flags, philox_schedule rng,
                           heavy_cube_sums heavy, double spread_above, double* cube_mean, double* cube_var) {
  __shared__ double s_win[8][2][32];  // a warp's values f J, (f J)^2 of one window
  __shared__ unsigned short s_coord[8][D >= 2 ? D : 1][32];  // its lanes' sub-cube coordinates
  const unsigned warp = threadIdx.x >> 5;
  v_sample_block<D, Adapt>(map, bins, over, shared_bins, flags,
                           [&](const map_view<D>& m, shared_bin_sink& sink, double (*red)[2][32], warp_flags& slot) {
                             v_sample_tiles_spread<D, F, Adapt>(f, sp, m, n_sel, tile_first, n_tiles, tile_est, tile_var, sink,
                                                                red, slot, rng, heavy, s_win[warp], s_coord[warp], spread_above,
                                                                cube_mean, cube_var);
                           });
}

/// Finishes the fixed pairwise tree over n tile values of a and b (padded width `width`, a power
/// of two) and hands the pass's flags over: out->estimate / out->variance get the sums, and thread
/// 0 copies *flags (complete: this kernel is the next launch after V-Sample in the stream) into
/// out->flags and resets *flags to initial_flags() for the next pass; with `host_out` (non-null:
/// page-locked host memory, which the device reaches under unified addressing) the same result
/// there too, so that the host needs no copy. One block; blockDim.x a
/// power of two in [32, 1024]; no dynamic shared memory needed (any given is unused). Thread t
/// loads its G = width / min(width, blockDim.x) tile values with independent loads (G <= 8), not
/// through the recursion of pairwise_sum: 4.5 us instead of 10 us for 1526 tile values.
/// (A template, so that the kernel has vague linkage: a program may include this header in several
/// translation units.)
template <int MaxThreads = 1024>
__global__ void __launch_bounds__(MaxThreads) tree_reduce_kernel(const double* a, const double* b, std::uint64_t n,
                                                           std::uint64_t width, pass_result* out, device_flags* flags,
                                                           pass_result* host_out = nullptr) {
  double sa, sb;
  tree_reduce_body(a, b, n, width, sa, sb);
  if (threadIdx.x == 0) {
    const pass_result r{sa, sb, *flags};
    *out = r;
    if (host_out != nullptr) *host_out = r;
    *flags = initial_flags();
  }
}

/// Recomputes sample `index` and the integrand's value there (used to name a non-finite value).
template <int D, class F>
__global__ void replay_sample_kernel(F f, sampling_params<D> sp, map_view<D> map, std::uint64_t index, double* out) {
  std::uint64_t coord[D];
  cube_coordinates<D>(index / sp.p, sp.g, coord);
  point<D> x;
  int bin[D];
  make_sample<D>(sp, map, coord, index, x, bin);
  out[0] = f(x);
}

}  // namespace cuda_detail
}  // namespace mcubes

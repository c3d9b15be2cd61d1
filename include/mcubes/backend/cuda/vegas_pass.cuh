#pragma once
/// @file backend/cuda/vegas_pass.cuh
/// The scalar Vegas pass of the CUDA backend (cuda_backend::sample_passes of a scalar integrand): the V-Sample / No-Adjust
/// launch (backend/cuda/vegas_kernels.cuh) with its shared-memory choice (bins, map edges), the
/// array path's slices (backend/cuda/array_path.cuh), the fixed tree over the tile values and the
/// replay of a failing sample. pass_context: the pieces of a backend a pass dispatch uses.

#include <cuda_runtime.h>

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <exception>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

#include "../../core/array_rows.hpp"
#include "../../core/reduction.hpp"
#include "../../core/sampler.hpp"
#include "../../core/stratification.hpp"
#include "../../error.hpp"
#include "../../integrand.hpp"
#include "../team.hpp"
#include "adapt.cuh"
#include "array_path.cuh"
#include "balanced_sample.cuh"
#include "check.cuh"
#include "counts_allocator.cuh"
#include "device.cuh"
#include "device_map.cuh"
#include "heavy_cubes.cuh"
#include "occupancy.cuh"
#include "pass_buffers.cuh"
#include "sorted_sample.cuh"
#include "vegas_kernels.cuh"

namespace mcubes {
namespace cuda_detail {

/// What the last sampling launch of a backend chose (for reports).
struct launch_choice {
  int grid = 0;              ///< blocks of the last V-Sample launch
  bool shared_bins = false;  ///< whether the last adapting launch kept its bins in shared memory
  std::uint64_t heavy_cubes = 0;  ///< heavy sub-cubes of the scalar passes so far (heavy_cubes.cuh)
  std::uint64_t heavy_prelisted = 0;  ///< scalar passes whose heavy lists came with the allocation
  std::uint64_t sorted_passes = 0;    ///< scalar passes with their light sub-cubes sorted by count
  /// scalar passes of one sub-cube per chunk whose light sub-cubes ran beside their heavy ones
  std::uint64_t beside_passes = 0;
};

/// The pieces of one backend that a pass dispatch uses (references, valid for one call).
struct pass_context {
  const device_stream& device;
  const cuda_launch_policy& policy;
  kernel_occupancy& occupancy;
  pass_buffers& buffers;
  launch_choice& last;
  /// VEGAS+: the allocation a scalar pass queues behind itself where asked (counts_allocator.cuh)
  counts_allocator& allocator;
  /// The adaptation an adapting scalar pass queues behind itself where asked (`adapt_after`,
  /// non-null; adapt.cuh), into the spare edges of `maps`
  map_adapter& adapter;
  device_map_storage& maps;
  const adapt_request* adapt_after;
  cudaStream_t stream() const noexcept { return device.stream(); }
};

/// Whether a pass runs v_sample_spread_kernel (launch_v_sample): VEGAS+ counts per sub-cube, one
/// sub-cube per chunk, stride 1, blocks of at most 256 threads, g < 2^16, at most 2^26 samples
/// per sub-cube, not a device array integrand's, cuda_launch_policy::spread_light_above at most 32
/// and its shared memory fits.
template <int D, class F, bool Adapt>
bool spread_serves(pass_context& cx, const sampling_params<D>& sp, std::uint64_t stride, std::size_t smem_plain) {
  if constexpr (v_sample_spread_available<D> && !detail::sample_indexed<F>::value) {
    const std::size_t optin = static_cast<std::size_t>(cx.device.properties().sharedMemPerBlockOptin);
    return cx.policy.spread_light_above <= 32 && sp.counts.per_cube() && sp.chunk_cubes == 1 && stride == 1 &&
           cx.policy.threads_per_block <= 256 && sp.g < 65536 && sp.p < (std::uint64_t(1) << 26) &&
           smem_plain + cx.occupancy.static_smem(v_sample_spread_kernel<D, F, Adapt>) <= optin;
  } else {
    (void)cx, (void)sp, (void)stride, (void)smem_plain;
    return false;
  }
}

/// The grid and dynamic shared memory of a v_sample_spread_kernel launch over tiles
/// [tile_first, n_tiles) (spread_serves). @throws cuda_error if the kernel cannot run.
template <int D, class F, bool Adapt>
std::pair<std::uint64_t, std::size_t> spread_launch(pass_context& cx, std::uint64_t tile_first, std::uint64_t n_tiles,
                                                    std::size_t smem_plain, std::size_t smem_edges) {
  const auto [per_sm, smem] = cx.occupancy.sampling_smem(v_sample_spread_kernel<D, F, Adapt>, cx.policy.threads_per_block,
                                                         smem_plain, smem_edges, "V-Sample kernel");
  return {policy_grid(cx.policy, per_sm, cx.device.multiprocessors(), n_tiles - tile_first, Adapt), smem};
}

/// Launches v_sample_spread_kernel (spread_serves) in `stream`: the tile values, or with
/// `cube_mean` not null the deferred form (the light sub-cubes' I_c, var_c; vegas_kernels.cuh).
/// Returns the grid size. @throws cuda_error if the launch fails.
template <int D, class F, bool Adapt>
int launch_spread(pass_context& cx, const F& f, const sampling_params<D>& sp, const map_view<D>& dmap, std::uint64_t n_sel,
                  std::uint64_t tile_first, std::uint64_t n_tiles, bool shared_bins, std::size_t smem_plain,
                  std::size_t smem_edges, const heavy_cube_sums& heavy, double* cube_mean, double* cube_var,
                  cudaStream_t stream) {
  if constexpr (v_sample_spread_available<D> && !detail::sample_indexed<F>::value) {
    const int B = cx.policy.threads_per_block;
    pass_buffers& buf = cx.buffers;
    auto kernel = v_sample_spread_kernel<D, F, Adapt>;
    const auto [grid, smem] = spread_launch<D, F, Adapt>(cx, tile_first, n_tiles, smem_plain, smem_edges);
    kernel<<<static_cast<unsigned>(grid), B, smem, stream>>>(f, sp, dmap, n_sel, tile_first, n_tiles, buf.tile_est.data(),
                                                           buf.tile_var.data(), buf.bins.data(), buf.over.data(), shared_bins,
                                                           buf.flags.data(),
                                                           philox_schedule::make(sp.seed, stream_id::vegas, sp.iteration),
                                                           heavy, cx.policy.spread_light_above, cube_mean, cube_var);
    MCUBES_CUDA_CHECK_LAUNCH("v_sample_spread_kernel");
    return static_cast<int>(grid);
  } else {
    (void)cx, (void)f, (void)sp, (void)dmap, (void)n_sel, (void)tile_first, (void)n_tiles, (void)shared_bins;
    (void)smem_plain, (void)smem_edges, (void)heavy, (void)cube_mean, (void)cube_var, (void)stream;
    throw cuda_error("v_sample_spread_kernel is not available for this integrand");
  }
}

/// Launches V-Sample / No-Adjust with `smem_edges` bytes of dynamic shared memory (bins and map
/// edges) unless `smem_plain` (bins only, edges read from global memory) allows more resident
/// blocks; the kernel reads which from the size it gets. Returns the grid size (launch_grid over
/// the tiles, with the policy's adapt_tiles_per_block for V-Sample).
/// Tiles [tile_first, n_tiles) only (the array path's slices; 0 otherwise).
/// VEGAS+ passes that spread_serves run v_sample_spread_kernel: the same bits.
template <int D, class F, bool Adapt>
int launch_v_sample(pass_context& cx, const F& f, const sampling_params<D>& sp, const map_view<D>& dmap, std::uint64_t stride,
                    std::uint64_t n_sel, std::uint64_t tile_first, std::uint64_t n_tiles, bool shared_bins,
                    std::size_t smem_plain, std::size_t smem_edges, const heavy_cube_sums& heavy = heavy_cube_sums{}) {
  const int B = cx.policy.threads_per_block;
  pass_buffers& buf = cx.buffers;
  const auto rng = philox_schedule::make(sp.seed, stream_id::vegas, sp.iteration);
  if (spread_serves<D, F, Adapt>(cx, sp, stride, smem_plain))
    return launch_spread<D, F, Adapt>(cx, f, sp, dmap, n_sel, tile_first, n_tiles, shared_bins, smem_plain, smem_edges, heavy,
                                      nullptr, nullptr, cx.stream());
  const bool uniform = sp.counts.none();  // the uniform strategy: the kernel without per-cube branches
  auto kernel = B <= 256 ? (uniform ? v_sample_kernel<D, F, Adapt, 256, uniform_counts> : v_sample_kernel<D, F, Adapt, 256>)
                         : (uniform ? v_sample_kernel<D, F, Adapt, 1024, uniform_counts> : v_sample_kernel<D, F, Adapt, 1024>);
  const auto [per_sm, smem] = cx.occupancy.sampling_smem(kernel, B, smem_plain, smem_edges, "V-Sample kernel");
  const std::uint64_t grid = policy_grid(cx.policy, per_sm, cx.device.multiprocessors(), n_tiles - tile_first, Adapt);
  kernel<<<static_cast<unsigned>(grid), B, smem, cx.stream()>>>(f, sp, dmap, stride, n_sel, tile_first, n_tiles,
                                                               buf.tile_est.data(), buf.tile_var.data(), buf.bins.data(),
                                                               buf.over.data(), shared_bins, buf.flags.data(), rng, heavy);
  MCUBES_CUDA_CHECK_LAUNCH("v_sample_kernel");
  return static_cast<int>(grid);
}

/// Whether a pass samples its heavy sub-cubes by segments before V-Sample (heavy_cubes.cuh): VEGAS+
/// counts read from shares (only they exceed a segment), segments defined, every chunk (stride 1).
template <int D>
bool heavy_cubes_first(const sampling_params<D>& sp, std::uint64_t stride) {
  return sp.counts.per_cube() && sp.counts.share_in != nullptr && sp.counts.segment != 0 && stride == 1;
}

/// The heavy sub-cubes of a VEGAS+ pass over every chunk (backend/cuda/heavy_cubes.cuh, steps 1-4):
/// lists them, samples their segments (V-Sample's bins and flags too) and finishes their sums.
/// Returns the view V-Sample reads them through (none when no sub-cube has more than L samples).
/// Only the chunks [chunk_begin, chunk_end) (a team rank's: backend/team.hpp; an array path's
/// slice). `listed`: the lists of the last call stand (the same chunks and counts: the array path's
/// second launch over a slice), step 1 and 2 are not run again. `work`: the chunks' work for
/// balanced V-Sample is listed too (list_heavy_cubes). `prelisted`: what the lists in the buffers
/// were made for by the allocation before this pass (allocate.cuh; sample_pass takes it out of
/// the buffers): where it is this pass's counts, threshold and chunks, steps 1 and 2 are not run.
/// `sort_segments` (a sorted pass, sorted_sample.cuh): where a thread takes each segment, the
/// segments are sorted by length first (bucket_sort.cuh, segment_length_bucket).
template <int D, class F, bool Adapt>
heavy_cube_sums sample_heavy_cubes(pass_context& cx, const F& f, const sampling_params<D>& sp, const stratification& st,
                                   const map_view<D>& dmap, bool shared_bins, std::uint64_t chunk_begin,
                                   std::uint64_t chunk_end, bool listed = false, bool work = false,
                                   const heavy_listing_key& prelisted = heavy_listing_key{}, bool sort_segments = false,
                                   bool finish = true) {
  heavy_buffers& hb = cx.buffers.heavy;
  const cudaStream_t stream = cx.stream();
  std::uint64_t n_heavy = hb.n_heavy, n_segments = hb.n_segments;
  if (!listed) {
    const std::uint64_t above = heavy_above(sp.counts, st.calls, st.n_cubes, cx.policy.heavy_above_average);
    if (!work && prelisted.lists(sp.counts, above, st, chunk_begin, chunk_end)) {
      ++cx.last.heavy_prelisted;  // the allocation's lists: n_heavy, n_segments as in the buffers
    } else {
      list_heavy_cubes(hb, sp.counts, st, stream, cx.device.multiprocessors(), n_heavy, n_segments, chunk_begin, chunk_end,
                       work, cx.policy.heavy_above_average);
    }
    cx.last.heavy_cubes += n_heavy;
  }
  if (n_heavy == 0) return heavy_cube_sums{};
  grow(hb.seg_s1, n_segments);
  grow(hb.seg_s2, n_segments);
  grow(hb.means, n_heavy);
  grow(hb.vars, n_heavy);
  pass_buffers& buf = cx.buffers;
  const int B = std::min(cx.policy.threads_per_block, 256);  // no result depends on it
  const int sms = cx.device.multiprocessors();
  const std::size_t n_bin_values = static_cast<std::size_t>(D) * dmap.n_bins;
  const auto rng = philox_schedule::make(sp.seed, stream_id::vegas, sp.iteration);
  // a segment per thread where the segments fill the device (cuda_launch_policy::spread_heavy_below),
  // else a warp per segment (heavy_cubes.cuh, step 3): the same bits, a choice of speed only
  const std::size_t smem_seg = Adapt && shared_bins ? n_bin_values * sizeof(unsigned long long) : 0;
  const int per_sm_seg = cx.occupancy.blocks_per_sm(heavy_segment_kernel<D, F, Adapt>, B, smem_seg);
  if (per_sm_seg < 1)
    throw cuda_error("heavy sub-cube kernel cannot run with " + std::to_string(B) + " threads per block and " +
                     std::to_string(smem_seg) + " bytes of shared memory");
  const double resident = static_cast<double>(per_sm_seg) * B * sms;
  if (static_cast<double>(n_segments) >= cx.policy.spread_heavy_below * resident) {
    const std::uint64_t grid = policy_grid(cx.policy, per_sm_seg, sms, (n_segments + B - 1) / B, Adapt);
    // sorted by length where asked (a sorted pass: sort_light_min_cubes), so that a warp's threads
    // loop over as many samples each (segments of L and the sub-cubes' shorter last ones)
    const unsigned* order = nullptr;
    if (sort_segments && sp.counts.segment <= bucket_sort_max && n_segments < (std::uint64_t(1) << 32)) {
      bucket_sort(hb.segment_sort, segment_length_bucket{sp.counts, hb.cube.data(), hb.seg_first.data(), n_heavy}, n_segments,
                  static_cast<unsigned>(sp.counts.segment), sms, stream);
      order = hb.segment_sort.list.data();
    }
    heavy_segment_kernel<D, F, Adapt><<<static_cast<unsigned>(grid), B, smem_seg, stream>>>(
        f, sp, dmap, hb.cube.data(), hb.seg_first.data(), n_heavy, n_segments, hb.seg_s1.data(), hb.seg_s2.data(),
        buf.bins.data(), buf.over.data(), Adapt && shared_bins, buf.flags.data(), rng, order);
    MCUBES_CUDA_CHECK_LAUNCH("heavy_segment_kernel");
  } else {
    // the bins in shared memory where V-Sample has them there and the step's values fit beside them
    const std::size_t optin = static_cast<std::size_t>(cx.device.properties().sharedMemPerBlockOptin);
    const bool bins_in_smem = Adapt && shared_bins &&
                              heavy_sample_dynamic_smem_bytes<D>(n_bin_values, true, B) + v_sample_static_smem_bytes <= optin;
    const std::size_t smem = heavy_sample_dynamic_smem_bytes<D>(n_bin_values, bins_in_smem, B);
    const int per_sm = cx.occupancy.blocks_per_sm(heavy_sample_kernel<D, F, Adapt>, B, smem);
    if (per_sm < 1)
      throw cuda_error("heavy sub-cube kernel cannot run with " + std::to_string(B) + " threads per block and " +
                       std::to_string(smem) + " bytes of shared memory");
    const std::uint64_t warps = static_cast<std::uint64_t>(B) / 32;  // a warp per segment
    const std::uint64_t grid = policy_grid(cx.policy, per_sm, sms, (n_segments + warps - 1) / warps, Adapt);
    heavy_sample_kernel<D, F, Adapt><<<static_cast<unsigned>(grid), B, smem, stream>>>(
        f, sp, dmap, hb.cube.data(), hb.seg_first.data(), n_heavy, n_segments, hb.seg_s1.data(), hb.seg_s2.data(),
        buf.bins.data(), buf.over.data(), bins_in_smem, buf.flags.data(), rng);
    MCUBES_CUDA_CHECK_LAUNCH("heavy_sample_kernel");
  }
  heavy_cube_sums view;
  view.chunk_first = hb.chunk_heavy_first.data();
  view.chunk_cubes = st.chunk_cubes;
  view.above = hb.above;
  if (!finish) {  // the spread V-Sample adds the segments' sums (cuda_launch_policy::heavy_sums_in_v_sample)
    view.seg_first = hb.seg_first.data();
    view.seg_s1 = hb.seg_s1.data();
    view.seg_s2 = hb.seg_s2.data();
    return view;
  }
  const unsigned T = 256;  // a warp per heavy sub-cube
  const auto finish_grid =
      static_cast<unsigned>(std::min<std::uint64_t>((n_heavy + T / 32 - 1) / (T / 32), 32ull * cx.device.multiprocessors()));
  heavy_finish_kernel<><<<finish_grid, T, 0, stream>>>(sp.counts, hb.cube.data(), hb.seg_first.data(), n_heavy, hb.seg_s1.data(),
                                                     hb.seg_s2.data(), hb.means.data(), hb.vars.data());
  MCUBES_CUDA_CHECK_LAUNCH("heavy_finish_kernel");
  view.means = hb.means.data();
  view.vars = hb.vars.data();
  return view;
}

/// The array path of a pass (cuda/array_path.cuh): per slice of whole tiles, the points
/// (point_writer), one call of f, the sums (value_reader). With VEGAS+ counts the rows come from
/// the sub-cubes' exclusive sums (make_array_rows), a slice holds whole tiles of at most
/// array_call_points rows (at least one tile), and the heavy sub-cubes of a slice (a pass that
/// reads shares, stride 1) are sampled segment by segment before each of its two V-Sample
/// launches (sample_heavy_cubes, listed once per slice), as in the one-point pass: the same bits,
/// and no thread walks a sub-cube of tens of thousands of samples alone. Returns the last grid size.
template <int D, class F>
int sample_array_slices(pass_context& cx, const F& f, const sampling_params<D>& sp, const stratification& st,
                        const map_view<D>& dmap, std::uint64_t stride, std::uint64_t n_sel, std::uint64_t n_tiles, bool adapt,
                        bool shared_bins, std::size_t smem_plain, std::size_t smem_alt) {
  using writer = detail::point_writer<D>;
  using reader = detail::value_reader<D>;
  pass_buffers& buf = cx.buffers;
  const std::uint64_t B = static_cast<std::uint64_t>(cx.policy.threads_per_block);
  const bool counts = sp.counts.per_cube();
  const bool heavy_first = heavy_cubes_first(sp, stride);
  detail::array_rows rows;
  rows.stride = stride;
  rows.chunk_samples = sp.chunk_cubes * sp.p;
  const std::uint64_t tile_samples = B * rows.chunk_samples;
  const std::uint64_t slice_tiles = counts ? 0 : std::max<std::uint64_t>(1, cx.policy.array_call_points / tile_samples);
  const std::vector<std::uint64_t>& tile_row = buf.array_rows.host_tile_rows;
  if (counts) {
    make_array_rows<D>(buf.array_rows, sp, stride, n_sel, B, n_tiles, cx.stream(), cx.device.multiprocessors());
    rows.cube_row = buf.array_rows.first_row.data();
    rows.sel_base = 0;
    rows.p = sp.p;
    rows.chunk_cubes = sp.chunk_cubes;
  }
  sampling_params<D> sp_points = sp;  // step 1 writes no shares (step 3 does)
  sp_points.counts.share_out = nullptr;
  int grid = 0;
  for (std::uint64_t t0 = 0, t1 = 0; t0 < n_tiles; t0 = t1) {
    std::uint64_t n = 0;
    if (counts) {  // whole tiles of at most array_call_points rows, at least one
      t1 = t0 + 1;
      while (t1 < n_tiles && tile_row[t1 + 1] - tile_row[t0] <= cx.policy.array_call_points) ++t1;
      n = tile_row[t1] - tile_row[t0];
      rows.first_row = tile_row[t0];
    } else {
      t1 = std::min(n_tiles, t0 + slice_tiles);
    }
    rows.sel0 = t0 * B;
    rows.sel1 = std::min(n_sel, t1 * B);
    rows.first_sample = rows.sel0 * stride * rows.chunk_samples;
    if (!counts) n = detail::array_row_count(sp, rows);
    const std::size_t need = counts ? static_cast<std::size_t>(n) : static_cast<std::size_t>(std::min(n_tiles, slice_tiles) * tile_samples);
    if (buf.array_x.size() < need * D) buf.array_x = device_array<double>(std::max<std::size_t>(need * D, D + 1));
    if (buf.array_values.size() < need) buf.array_values = device_array<double>(std::max<std::size_t>(need, 1));
    const writer w{buf.array_x.data(), rows};
    const heavy_cube_sums hw = heavy_first ? sample_heavy_cubes<D, writer, false>(cx, w, sp_points, st, dmap, false, rows.sel0, rows.sel1)
                                           : heavy_cube_sums{};
    launch_v_sample<D, writer, false>(cx, w, sp_points, dmap, stride, n_sel, t0, t1, false, smem_plain, smem_alt, hw);
    cx.device.synchronize();  // the points are complete
    f(buf.array_x.data(), static_cast<std::size_t>(n), buf.array_values.data(), static_cast<void*>(cx.stream()));
    const reader r{buf.array_values.data(), rows};
    if (adapt) {
      const heavy_cube_sums hr =
          heavy_first ? sample_heavy_cubes<D, reader, true>(cx, r, sp, st, dmap, shared_bins, rows.sel0, rows.sel1, true)
                      : heavy_cube_sums{};
      grid = launch_v_sample<D, reader, true>(cx, r, sp, dmap, stride, n_sel, t0, t1, shared_bins, smem_plain, smem_alt, hr);
    } else {
      const heavy_cube_sums hr =
          heavy_first ? sample_heavy_cubes<D, reader, false>(cx, r, sp, st, dmap, false, rows.sel0, rows.sel1, true)
                      : heavy_cube_sums{};
      grid = launch_v_sample<D, reader, false>(cx, r, sp, dmap, stride, n_sel, t0, t1, false, smem_plain, smem_alt, hr);
    }
  }
  return grid;
}

/// The team form of a pass's end (backend/team.hpp): this rank's tiles [t0, t1) of B chunks are on
/// the device, its flags in `mine`; the parts' sums, the flags and the integer bins (adapting
/// passes) are exchanged and the device bins replaced by the team's sums (levels 0..top_level),
/// so that adapt_map adapts every rank's map alike. `failure`: what this rank's pass threw (then
/// every rank throws). Synchronous.
inline iteration_sums finish_team_pass(pass_context& cx, const communicator& team, const team_split& split, std::uint64_t B,
                                       std::uint64_t t0, std::uint64_t t1, std::uint64_t n_all_tiles, iteration_sums mine,
                                       bool adapt, double bin_scale, std::size_t n_bin_values, std::exception_ptr failure) {
  pass_buffers& buf = cx.buffers;
  const cudaStream_t stream = cx.stream();
  std::vector<unsigned char> payload;
  const std::uint64_t tiles_per_part = split.part_chunks >= B ? split.part_chunks / B : 1;
  if (!failure) {
    try {
      std::vector<double> est(t1 - t0), var(t1 - t0);
      if (t1 > t0) {
        MCUBES_CUDA_CHECK(cudaMemcpyAsync(est.data(), buf.tile_est.data() + t0, (t1 - t0) * sizeof(double), cudaMemcpyDeviceToHost,
                                          stream));
        MCUBES_CUDA_CHECK(cudaMemcpyAsync(var.data(), buf.tile_var.data() + t0, (t1 - t0) * sizeof(double), cudaMemcpyDeviceToHost,
                                          stream));
        MCUBES_CUDA_CHECK(cudaStreamSynchronize(stream));
      }
      put_team_pass(payload, mine.flags, split, [&](std::uint64_t p, double& e, double& v) {
        const std::uint64_t first = p * tiles_per_part;
        const std::uint64_t nt = std::min(tiles_per_part, n_all_tiles - first);
        e = pairwise_sum(est.data() + (first - t0), nt, tiles_per_part);
        v = pairwise_sum(var.data() + (first - t0), nt, tiles_per_part);
      });
    } catch (...) {
      failure = std::current_exception();
    }
  }
  const auto all = team_exchange(team, failure, false, payload);
  std::vector<std::size_t> at(all.size(), 0);
  iteration_sums out = take_team_pass(team, all, at, split);
  if (adapt) {  // the team's integer bins, in place of this rank's
    out.top_level = top_bin_level(out.flags.max_contribution, bin_scale);
    const std::size_t n_levels = static_cast<std::size_t>(out.top_level) + 1;
    std::vector<bin_accumulator> bins(n_levels * n_bin_values);
    MCUBES_CUDA_CHECK(cudaMemcpyAsync(bins.data(), buf.bins.data(), n_bin_values * sizeof(bin_accumulator), cudaMemcpyDeviceToHost,
                                      stream));
    if (n_levels > 1)
      MCUBES_CUDA_CHECK(cudaMemcpyAsync(bins.data() + n_bin_values, buf.over.data(),
                                        (n_levels - 1) * n_bin_values * sizeof(bin_accumulator), cudaMemcpyDeviceToHost, stream));
    MCUBES_CUDA_CHECK(cudaStreamSynchronize(stream));
    team_sum_bins(team, bins);
    buf.upload_bins(bins, out.top_level, stream);
  }
  return out;
}

/// One scalar pass over `map` (cuda_backend::sample_passes: the contract of cpu_backend::sample_passes, the bins
/// staying on the device). Synchronises the stream once (a device array integrand: once per slice
/// too). Under a team (`team` splits: backend/team.hpp) the pass samples this rank's chunks and
/// ends with the team's exchange (finish_team_pass): the sums, flags and device bins of the whole
/// pass, bitwise one process's. @throws cuda_error if a CUDA call fails; whatever a device array
/// integrand throws; invalid_input for a device array integrand under a team (not split yet).
template <int D, class F>
iteration_sums sample_pass(pass_context& cx, const F& f, const sampling_params<D>& sp, const stratification& st,
                           const device_map<D>& map, bool adapt, std::uint64_t stride, const communicator* team = nullptr,
                           const team_layout* layout = nullptr) {
  cx.device.use();
  pass_buffers& buf = cx.buffers;
  const cudaStream_t stream = cx.stream();
  const int B = cx.policy.threads_per_block;
  const std::uint64_t n_sel = (st.n_chunks + stride - 1) / stride;
  const std::uint64_t width = next_pow2(n_sel);
  const std::uint64_t tile = std::min<std::uint64_t>(B, width);  // tile = B leaves (padded)
  const std::uint64_t n_tiles = (n_sel + B - 1) / B;
  const int nb = map.n_bins;
  const std::size_t n_bin_values = static_cast<std::size_t>(D) * nb;
  // a team's rank: the tiles [t_first, t_end) of its parts (whole tiles: parts hold 1024 chunks or
  // all of them); alone: every tile
  const team_split split = split_chunks(n_sel, team, layout);
  const bool in_team = splits(team);
  std::uint64_t t_first = 0, t_end = n_tiles;
  if (in_team) {
    MCUBES_EXPECTS(stride == 1 || sp.counts.share_in == nullptr,
                   "cuda_backend: a strided pass that reads VEGAS+ shares cannot be split over a team");
    MCUBES_EXPECTS(!is_device_array_integrand_v<F>, "device array integrands do not run across a team yet");
    const bool any = split.part_end > split.part_begin;
    t_first = any ? split.chunk_begin() / static_cast<std::uint64_t>(B) : 0;
    t_end = any ? (split.chunk_end() + B - 1) / static_cast<std::uint64_t>(B) : 0;
  }
  std::exception_ptr team_failure_here;  // under a team: handed to the exchange instead of thrown
  bool queued_adapt = false;             // the map's adaptation queued behind the pass (it zeroes the bins)
  // the heavy sub-cubes' lists of the allocation before this pass, if any: for this pass only
  const heavy_listing_key prelisted = buf.heavy.prelisted;
  buf.heavy.prelisted = heavy_listing_key{};

  buf.ensure_tiles(n_tiles);
  if (adapt) buf.begin_adapting_pass(n_bin_values, stream);

  const map_view<D> dmap = map.view();
  const std::size_t optin = static_cast<std::size_t>(cx.device.properties().sharedMemPerBlockOptin);
  const std::size_t n_edges = static_cast<std::size_t>(D) * (nb + 1);
  bool shared_bins = false;
  if (adapt) shared_bins = v_sample_dynamic_smem_bytes(n_bin_values, true) + v_sample_static_smem_bytes <= optin;
  // the map's edges go to shared memory too when they fit (launch_v_sample keeps them only if that
  // does not cost resident blocks)
  const std::size_t smem_plain = v_sample_dynamic_smem_bytes(n_bin_values, shared_bins);
  const std::size_t smem_edges = v_sample_dynamic_smem_bytes(n_bin_values, shared_bins, n_edges, true);
  const std::size_t smem_alt = smem_edges + v_sample_static_smem_bytes <= optin ? smem_edges : smem_plain;
  int grid = 0;
  try {
  if constexpr (is_device_array_integrand_v<F>) {
    grid = sample_array_slices<D>(cx, f, sp, st, dmap, stride, n_sel, n_tiles, adapt, shared_bins, smem_plain, smem_alt);
  } else if (t_end > t_first) {
    // VEGAS+ over every chunk (of this rank's): the sub-cubes of more than one segment first, one segment per thread
    const bool heavy_first = heavy_cubes_first(sp, stride);
    const std::uint64_t c0 = in_team ? split.chunk_begin() : 0, c1 = in_team ? split.chunk_end() : st.n_chunks;
    const std::uint64_t above = heavy_first ? heavy_above(sp.counts, st.calls, st.n_cubes, cx.policy.heavy_above_average) : 0;
    if (heavy_first && !in_team && cx.policy.sort_light_min_cubes > 0 && st.n_cubes >= cx.policy.sort_light_min_cubes &&
        sorted_serves(sp.counts, above, st.n_cubes)) {  // the light sub-cubes sorted by count (sorted_sample.cuh)
      // the light sub-cubes on the side stream beside the heavy ones on the stream (neither reads
      // the other's sums; bins and flags are integer atomics), the tiles after both
      const auto sorted = [&](auto adapt_tag) {
        constexpr bool A = decltype(adapt_tag)::value;
        const int sms = cx.device.multiprocessors();
        const bool beside = cx.policy.light_beside_heavy;
        if (beside) cx.device.fork_side();
        heavy_cube_sums heavy;
        int g = 0;
        try {  // the heavy sub-cubes launched first: their blocks go first where both fill the device
          heavy = sample_heavy_cubes<D, F, A>(cx, f, sp, st, dmap, A && shared_bins, 0, st.n_chunks, false, false, prelisted, true);
          g = launch_sorted_light<D, F, A>(f, sp, dmap, above, buf.sorted, buf.bins.data(), buf.over.data(), A && shared_bins,
                                           buf.flags.data(), cx.occupancy, sms, beside ? cx.device.side() : stream);
        } catch (...) {
          if (beside) cx.device.join_side();  // nothing of this pass left running beside the stream
          throw;
        }
        if (beside) cx.device.join_side();
        launch_sorted_tiles<D>(sp, st.n_chunks, n_tiles, B, buf.sorted, buf.tile_est.data(), buf.tile_var.data(), heavy, sms, stream);
        return g;
      };
      grid = adapt ? sorted(std::true_type{}) : sorted(std::false_type{});
      ++cx.last.sorted_passes;
    } else if (heavy_first && !in_team && cx.policy.balance_above > 0) {  // balanced by samples where asked (balanced_sample.cuh)
      const auto balanced = [&](auto adapt_tag) {
        constexpr bool A = decltype(adapt_tag)::value;
        const heavy_cube_sums heavy = sample_heavy_cubes<D, F, A>(cx, f, sp, st, dmap, A && shared_bins, 0, st.n_chunks, false, true);
        if (!balanced_pays(buf.heavy, cx.policy.balance_above))
          return launch_v_sample<D, F, A>(cx, f, sp, dmap, stride, n_sel, t_first, t_end, A && shared_bins, smem_plain, smem_alt,
                                          heavy);
        return launch_balanced_sample<D, F, A>(f, sp, dmap, st.n_chunks, n_tiles, B, buf.heavy, buf.tile_est.data(),
                                               buf.tile_var.data(), buf.bins.data(), buf.over.data(), A && shared_bins,
                                               buf.flags.data(), heavy, cx.occupancy, cx.device.multiprocessors(), stream);
      };
      grid = adapt ? balanced(std::true_type{}) : balanced(std::false_type{});
    } else if (heavy_first && !in_team && cx.policy.spread_beside_heavy &&
               (adapt ? spread_serves<D, F, true>(cx, sp, stride, smem_plain) &&
                            spread_launch<D, F, true>(cx, 0, n_tiles, smem_plain, smem_alt).first < n_tiles
                      : spread_serves<D, F, false>(cx, sp, stride, smem_plain) &&
                            spread_launch<D, F, false>(cx, 0, n_tiles, smem_plain, smem_alt).first < n_tiles)) {
      // one sub-cube per chunk (passes below sort_light_min_cubes) of more tiles than V-Sample's
      // blocks (cuda_launch_policy::spread_beside_heavy): the light sub-cubes spread over the
      // warps' lanes on the side stream beside the heavy ones, their I_c, var_c kept for the tiles,
      // summed after both (sorted_tiles_kernel); with no heavy sub-cube, as always
      const auto beside = [&](auto adapt_tag) {
        constexpr bool A = decltype(adapt_tag)::value;
        cx.device.fork_side();
        heavy_cube_sums heavy;
        int g = 0;
        try {
          heavy = sample_heavy_cubes<D, F, A>(cx, f, sp, st, dmap, A && shared_bins, 0, st.n_chunks, false, false, prelisted);
          if (heavy.chunk_first == nullptr)  // no heavy sub-cube
            return launch_spread<D, F, A>(cx, f, sp, dmap, n_sel, 0, n_tiles, A && shared_bins, smem_plain, smem_alt, heavy,
                                          nullptr, nullptr, stream);
          grow(buf.sorted.cube_mean, st.n_cubes);
          grow(buf.sorted.cube_var, st.n_cubes);
          g = launch_spread<D, F, A>(cx, f, sp, dmap, n_sel, 0, n_tiles, A && shared_bins, smem_plain, smem_alt, heavy,
                                     buf.sorted.cube_mean.data(), buf.sorted.cube_var.data(), cx.device.side());
        } catch (...) {
          cx.device.join_side();  // nothing of this pass left running beside the stream
          throw;
        }
        cx.device.join_side();
        launch_sorted_tiles<D>(sp, st.n_chunks, n_tiles, B, buf.sorted, buf.tile_est.data(), buf.tile_var.data(), heavy,
                               cx.device.multiprocessors(), stream);
        ++cx.last.beside_passes;
        return g;
      };
      grid = adapt ? beside(std::true_type{}) : beside(std::false_type{});
    } else if (adapt) {
      // the spread V-Sample adds the heavy sub-cubes' segment sums itself where asked
      const bool finish = !(cx.policy.heavy_sums_in_v_sample && spread_serves<D, F, true>(cx, sp, stride, smem_plain));
      const heavy_cube_sums heavy =
          heavy_first ? sample_heavy_cubes<D, F, true>(cx, f, sp, st, dmap, shared_bins, c0, c1, false, false, prelisted, false,
                                                       finish)
                      : heavy_cube_sums{};
      grid = launch_v_sample<D, F, true>(cx, f, sp, dmap, stride, n_sel, t_first, t_end, shared_bins, smem_plain, smem_alt, heavy);
    } else {
      const bool finish = !(cx.policy.heavy_sums_in_v_sample && spread_serves<D, F, false>(cx, sp, stride, smem_plain));
      const heavy_cube_sums heavy =
          heavy_first ? sample_heavy_cubes<D, F, false>(cx, f, sp, st, dmap, false, c0, c1, false, false, prelisted, false, finish)
                      : heavy_cube_sums{};
      grid = launch_v_sample<D, F, false>(cx, f, sp, dmap, stride, n_sel, t_first, t_end, false, smem_plain, smem_alt, heavy);
    }
  }
  cx.last.grid = grid;
  if (adapt) cx.last.shared_bins = shared_bins;

  // the asked allocation (it reads the shares this pass wrote): beside the stream from here on
  // (allocate() waits for it), or in the stream after the result (waited for below)
  if (!in_team && cx.policy.allocate_beside) cx.allocator.launch_asked(cx.policy, buf.heavy, cx.device);
  // finish the fixed tree over the tile values (padded width: width / tile); snapshot and reset the
  // flags (a team's rank: over its own tiles, whose sums finish_team_pass takes instead)
  const unsigned T = 1024;
  const std::uint64_t tree_width = in_team ? next_pow2(t_end - t_first) : width / tile;
  // the result straight to the page-locked host buffer where the device reaches it (unified
  // addressing: every 64-bit platform CUDA supports), else by a copy
  const bool direct = cx.device.properties().unifiedAddressing != 0;
  tree_reduce_kernel<><<<1, T, 0, stream>>>(buf.tile_est.data() + t_first, buf.tile_var.data() + t_first, t_end - t_first,
                                            tree_width, buf.result.data(), buf.flags.data(),
                                            direct ? buf.host_result.data() : nullptr);
  MCUBES_CUDA_CHECK_LAUNCH("tree_reduce_kernel");
  if (!direct)
    MCUBES_CUDA_CHECK(cudaMemcpyAsync(buf.host_result.data(), buf.result.data(), sizeof(pass_result), cudaMemcpyDeviceToHost,
                                      stream));
  if (!in_team && !cx.policy.allocate_beside) cx.allocator.launch_asked(cx.policy, buf.heavy, cx.device);
  // the adaptation asked for behind the pass (adapt.cuh): after the result, which the host waits for
  // alone; not beside a VEGAS+ allocation (its cooperative launch would wait for the adaptation's
  // blocks, and the host waits for that allocation before the next pass: a loss, measured)
  if (adapt && !in_team && cx.adapt_after != nullptr && !cx.allocator.running_beside()) {
    buf.result_ready.record(stream);
    queued_adapt = cx.adapter.launch_asked(map, *cx.adapt_after, buf, sp.bin_scale, cx.maps, stream);
    buf.result_ready.wait();
  } else {
    MCUBES_CUDA_CHECK(cudaStreamSynchronize(stream));
  }
  cx.allocator.landed();
  } catch (...) {
    if (!in_team) throw;
    team_failure_here = std::current_exception();
  }

  const pass_result r = *buf.host_result.data();
  iteration_sums out = pass_sums(r.estimate, r.variance, r.flags, adapt, sp.bin_scale);
  if (in_team)  // the team's sums, flags and bins (throws on every rank if one failed)
    out = finish_team_pass(cx, *team, split, static_cast<std::uint64_t>(B), t_first, t_end, n_tiles, out, adapt, sp.bin_scale,
                           n_bin_values, team_failure_here);
  if (adapt) buf.end_adapting_pass(out.top_level, n_bin_values);
  if (queued_adapt) buf.bins_adapted();
  if (out.flags.first_non_finite != ~0ull) {  // replay that one sample to report its value (any rank can)
    if constexpr (is_device_array_integrand_v<F>) {  // its point, then the integrand on one row
      if (buf.array_x.size() < static_cast<std::size_t>(D) + 1) buf.array_x = device_array<double>(D + 1);
      sample_point_kernel<D><<<1, 1, 0, stream>>>(sp, dmap, out.flags.first_non_finite, buf.array_x.data());
      MCUBES_CUDA_CHECK_LAUNCH("sample_point_kernel");
      MCUBES_CUDA_CHECK(cudaStreamSynchronize(stream));
      f(buf.array_x.data(), 1, buf.replay.data(), static_cast<void*>(stream));
    } else {
      replay_sample_kernel<D, F><<<1, 1, 0, stream>>>(f, sp, dmap, out.flags.first_non_finite, buf.replay.data());
      MCUBES_CUDA_CHECK_LAUNCH("replay_sample_kernel");
    }
    out.flags.non_finite_value = buf.replayed_value(stream);
  }
  return out;
}

}  // namespace cuda_detail
}  // namespace mcubes

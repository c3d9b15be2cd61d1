#pragma once
/// @file backend/cuda/batch_pass.cuh
/// The passes of a parameter batch on the CUDA backend (cuda_backend::make_batch, start_batch,
/// finish_batch): the batch's device state made and checked against free memory, the pass
/// descriptors of a round, the heavy sub-cubes of its VEGAS+ passes (batch_heavy_cubes.cuh), one
/// V-Sample and one No-Adjust launch over all their tiles
/// (backend/cuda/batch_kernels.cuh; launch_grid over the units), one reduction for all, and the
/// sums taken back (with the replays of failing samples and the reruns of passes that reached
/// overflow levels their integral did not have yet).

#include <cuda_runtime.h>

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "../../core/batch.hpp"
#include "../../core/reduction.hpp"
#include "../../core/sampler.hpp"
#include "../../core/stratification.hpp"
#include "../../error.hpp"
#include "../../integrand.hpp"
#include "batch_heavy_cubes.cuh"
#include "batch_kernels.cuh"
#include "check.cuh"
#include "device_array.cuh"
#include "device_map.cuh"
#include "occupancy.cuh"
#include "pass_buffers.cuh"
#include "vegas_kernels.cuh"
#include "vegas_pass.cuh"

namespace mcubes {
namespace cuda_detail {

/// Checks that a batch of n integrals fits in the device memory that is free now (batch_bytes).
/// @throws invalid_input naming the figures if it does not; cuda_error if the query fails.
template <int D, class P>
void check_batch_memory(std::size_t n, int n_bins) {
  std::size_t free_bytes = 0, total_bytes = 0;
  MCUBES_CUDA_CHECK(cudaMemGetInfo(&free_bytes, &total_bytes));
  const std::size_t need = batch_bytes<D, P>(n, n_bins);
  if (need > free_bytes)
    throw invalid_input("a batch of " + std::to_string(n) + " integrals in d = " + std::to_string(D) + " with " +
                        std::to_string(n_bins) + " bins per axis needs " + std::to_string(need >> 20) +
                        " MiB of device memory, " + std::to_string(free_bytes >> 20) +
                        " MiB are free: integrate fewer integrals per call or use fewer bins (n_bins)");
}

/// Uniform maps and zero bins for n integrals with parameters params[0..n) (see
/// cuda_backend::make_batch, which checks the memory first). Synchronous.
/// @throws cuda_error if an allocation or copy fails.
template <int D, class P>
batch_state<D, P> make_batch_state(const P* params, std::size_t n, int n_bins, cudaStream_t stream) {
  batch_state<D, P> b;
  b.n = n;
  b.n_bins = n_bins;
  b.host_params = params;
  b.maps = device_batch_maps<D>(n, n_bins);
  b.bins = device_array<bin_accumulator>(n * b.bin_values());
  b.over.resize(n);
  b.flags = device_array<device_flags>(n);
  MCUBES_CUDA_CHECK(cudaMemsetAsync(b.bins.data(), 0, b.bins.size() * sizeof(bin_accumulator), stream));
  b.maps.fill_uniform_async(b.flags.data(), stream);
  b.items = device_array<batch_item<D, P>>(n);
  b.host_items = pinned_array<batch_item<D, P>>(n);
  b.results = device_array<pass_result>(n);
  b.host_results = pinned_array<pass_result>(n);
  b.adapt_items = device_array<adapt_item>(n);
  b.host_adapt_items = pinned_array<adapt_item>(n);
  b.clean.assign(n, 1);
  b.over_dirty.assign(n, 0);
  b.top_level.assign(n, 0);
  b.adapt_copied = cuda_event::create();
  b.done = cuda_event::create();
  MCUBES_CUDA_CHECK(cudaStreamSynchronize(stream));
  return b;
}

/// Chunks per thread in a unit of a batched pass (batch_kernels.cuh): the smallest power of two
/// G with G x (samples per chunk) >= 64, so that the per-unit work (the block's tree, the flag
/// fold) is spread over enough samples; at most 2^(levels - 1) with levels x B x 16 bytes of
/// shared memory <= 32 KiB (and <= 64), and B G <= the padded width (the unit is a node of the
/// pass's tree), else 1. Never changes a result.
inline std::uint64_t batch_group(const stratification& st, std::uint64_t width, int B) {
  // VEGAS+: samples_per_cube is the index stride (the most a sub-cube gets); the average counts here
  const std::uint64_t per_cube = st.adaptive() ? std::max<std::uint64_t>(1, st.calls / st.n_cubes) : st.samples_per_cube;
  const std::uint64_t per_chunk = st.chunk_cubes * per_cube;
  int max_levels = 1;
  while (max_levels < batch_group_levels && batch_group_smem_bytes(max_levels + 1, B) <= batch_group_smem_limit)
    ++max_levels;
  std::uint64_t g = 1;
  while (g * per_chunk < 64 && 2 * g <= (std::uint64_t(1) << (max_levels - 1)) && 2 * g * B <= width) g *= 2;
  return g;
}

/// Launches v_sample_batch_kernel over units [unit_begin, unit_end) of the n_items passes at
/// `items` (their flags at `flags`; groups of at most 2^(levels - 1) chunks). V-Sample passes keep
/// a block's bins in shared memory when the bin words fit next to the group trees in at most
/// 96 KiB (two blocks per multiprocessor still fit), and the map's edges go there too when they
/// fit as well. Grid: launch_grid over the units. Never changes a result.
template <int D, class F, class P, bool Adapt>
void launch_batch(pass_context& cx, const F& f, const batch_item<D, P>* items, unsigned n_items, std::uint64_t unit_begin,
                  std::uint64_t unit_end, batch_state<D, P>& b, device_flags* flags, int levels) {
  if (unit_end <= unit_begin) return;
  const int B = cx.policy.threads_per_block;
  // every pass of the uniform strategy: the kernel without per-cube branches (uniform_counts)
  const batch_item<D, P>* host = b.host_items.data() + (items - b.items.data());
  bool uniform = true;
  for (unsigned i = 0; i < n_items; ++i) uniform = uniform && host[i].sp.counts.none();
  auto kernel = B <= 256 ? (uniform ? v_sample_batch_kernel<D, F, P, Adapt, 256, uniform_counts> : v_sample_batch_kernel<D, F, P, Adapt, 256>)
                         : (uniform ? v_sample_batch_kernel<D, F, P, Adapt, 1024, uniform_counts>
                                    : v_sample_batch_kernel<D, F, P, Adapt, 1024>);
  const std::size_t smem_bins = batch_group_smem_bytes(levels, B, b.bin_values());
  const bool shared_bins = Adapt && smem_bins <= batch_smem_limit;
  const std::size_t smem_base = batch_group_smem_bytes(levels, B, shared_bins ? b.bin_values() : 0);
  const std::size_t smem_edges = smem_base + b.map_doubles() * sizeof(double);
  const bool shared_edges = smem_edges <= batch_smem_limit;
  const std::size_t smem = shared_edges ? smem_edges : smem_base;
  const int per_sm = cx.occupancy.blocks_per_sm(kernel, B, smem);
  if (per_sm < 1) throw cuda_error("V-Sample batch kernel cannot run with " + std::to_string(B) + " threads per block");
  const std::uint64_t grid = policy_grid(cx.policy, per_sm, cx.device.multiprocessors(), unit_end - unit_begin);
  kernel<<<static_cast<unsigned>(grid), B, smem, cx.stream()>>>(f, items, n_items, unit_begin, unit_end, b.tile_est.data(),
                                                               b.tile_var.data(), flags, levels, shared_bins, shared_edges);
  if (Adapt) cx.last.shared_bins = shared_bins;
  MCUBES_CUDA_CHECK_LAUNCH("v_sample_batch_kernel");
  cx.last.grid = static_cast<int>(grid);
}

/// Starts the passes on the stream and returns without waiting (see cuda_backend::start_batch).
/// @throws invalid_input if b's last passes were not finished; cuda_error if a CUDA call fails.
template <int D, class F, class P>
void start_batch_passes(pass_context& cx, const F& f, batch_state<D, P>& b, const std::vector<batch_pass<D>>& passes) {
  MCUBES_EXPECTS(!b.started, "start_batch: the batch's last passes were not finished (finish_batch)");
  cx.device.use();
  const cudaStream_t stream = cx.stream();
  const int B = cx.policy.threads_per_block;
  const std::size_t n = passes.size();
  // the adapting passes first, then the others: two launches over contiguous items
  std::vector<std::size_t>& order = b.order;
  order.clear();
  order.reserve(n);
  for (std::size_t i = 0; i < n; ++i)
    if (passes[i].adapt) order.push_back(i);
  const std::size_t n_adapt = order.size();
  for (std::size_t i = 0; i < n; ++i)
    if (!passes[i].adapt) order.push_back(i);

  // no wait: b's previous passes were finished (their results, copied after these items, arrived)
  std::uint64_t units = 0, units_adapt = 0;
  int levels = 1;
  bool any_zero = false;
  std::uint32_t max_over = 0;
  std::uint64_t heavy_chunks = 0, max_heavy = 0, max_segments = 0;  // batch_heavy_cubes.cuh
  for (std::size_t j = 0; j < n; ++j) {
    const batch_pass<D>& ps = passes[order[j]];
    const std::size_t k = ps.integral;
    batch_item<D, P>& it = b.host_items.data()[j];
    it.sp = ps.sp;
    it.rng = philox_compact_schedule::make(ps.sp.seed, stream_id::vegas, ps.sp.iteration);
    it.edges = b.maps.edges(k);
    it.n_bins = b.n_bins;
    it.stride = ps.stride;
    it.n_sel = (ps.st.n_chunks + ps.stride - 1) / ps.stride;
    const std::uint64_t width = next_pow2(it.n_sel);
    it.group = batch_group(ps.st, width, B);
    const std::uint64_t unit = it.group * static_cast<std::uint64_t>(B);
    it.n_tiles = (it.n_sel + unit - 1) / unit;
    it.tree_width = width / std::min<std::uint64_t>(unit, width);
    levels = std::max(levels, 1 + static_cast<int>(std::log2(static_cast<double>(it.group))));
    it.first_unit = units;
    units += it.n_tiles;
    if (j + 1 == n_adapt) units_adapt = units;
    it.bins = b.bins_of(k);
    it.over = b.over[k].data();  // null until a pass of k reaches the overflow levels
    it.params = b.host_params[k];
    it.zero_bins = 0;
    it.zero_over = 0;
    it.heavy = heavy_cube_sums{};
    it.heavy_chunk_first = heavy_chunks;
    it.heavy_chunks = heavy_cubes_first(ps.sp, ps.stride) ? ps.st.n_chunks : 0;
    if (it.heavy_chunks != 0) {  // a heavy sub-cube has more than T samples and at most n / L + 1 segments
      const std::uint64_t L = ps.sp.counts.segment;
      it.heavy.above = heavy_above(ps.sp.counts, ps.st.calls, ps.st.n_cubes, cx.policy.batch_heavy_above_average);
      heavy_chunks += it.heavy_chunks;
      max_heavy += ps.st.calls / (it.heavy.above + 1);
      max_segments += ps.st.calls / (it.heavy.above + 1) + ps.st.calls / L + 1;
    }
    if (ps.adapt) {  // bins of a pass that was not adapted to (the probe, a rescaled pass) are zeroed first
      it.zero_bins = b.clean[k] ? 0u : 1u;
      it.zero_over = static_cast<std::uint32_t>(b.over_dirty[k]);
      max_over = std::max(max_over, it.zero_over);
      any_zero = any_zero || it.zero_bins != 0 || it.zero_over != 0;
      b.clean[k] = 0;
      b.over_dirty[k] = 0;
    }
  }
  if (b.tile_est.size() < units) {
    b.tile_est = device_array<double>(units);
    b.tile_var = device_array<double>(units);
  }
  if (heavy_chunks != 0) prepare_batch_heavy(b.heavy, b.host_items.data(), n, heavy_chunks, max_heavy, max_segments);
  MCUBES_CUDA_CHECK(cudaMemcpyAsync(b.items.data(), b.host_items.data(), n * sizeof(batch_item<D, P>), cudaMemcpyHostToDevice,
                                    stream));
  if (any_zero) {  // one launch zeroes the bins of every adapting pass that needs it (the adapting items come first)
    const std::uint64_t per_item = b.bin_values() * std::max<std::uint64_t>(1, max_over);
    const unsigned y = static_cast<unsigned>(std::min<std::uint64_t>((per_item + 255) / 256, 64));
    zero_batch_bins_kernel<D, P><<<dim3(static_cast<unsigned>(n_adapt), y), 256, 0, stream>>>(
        b.items.data(), static_cast<unsigned>(n_adapt), b.bin_values());
    MCUBES_CUDA_CHECK_LAUNCH("zero_batch_bins_kernel");
  }
  if (heavy_chunks != 0)  // every pass's heavy sub-cubes, by segments, before the passes that read their sums
    sample_batch_heavy_cubes<D>(b.heavy, f, b.items.data(), static_cast<unsigned>(n), static_cast<unsigned>(n_adapt), b.n_bins,
                                heavy_chunks, b.flags.data(), cx.occupancy, cx.device.multiprocessors(), stream);
  if (n_adapt > 0)
    launch_batch<D, F, P, true>(cx, f, b.items.data(), static_cast<unsigned>(n_adapt), 0, units_adapt, b, b.flags.data(), levels);
  if (n_adapt < n)
    launch_batch<D, F, P, false>(cx, f, b.items.data() + n_adapt, static_cast<unsigned>(n - n_adapt), units_adapt, units, b,
                                 b.flags.data() + n_adapt, levels);
  batch_tree_reduce_kernel<D, P><<<static_cast<unsigned>(n), 1024, 0, stream>>>(b.items.data(), b.tile_est.data(),
                                                                                b.tile_var.data(), b.results.data(),
                                                                                b.flags.data());
  MCUBES_CUDA_CHECK_LAUNCH("batch_tree_reduce_kernel");
  MCUBES_CUDA_CHECK(cudaMemcpyAsync(b.host_results.data(), b.results.data(), n * sizeof(pass_result), cudaMemcpyDeviceToHost,
                                    stream));
  b.done.record(stream);
  b.started = true;
}

/// Waits for the passes that start_batch_passes started on b (the same `passes`) and returns
/// their sums in the order of `passes` (see cuda_backend::finish_batch).
/// @throws invalid_input if b has no started passes or `passes` is not theirs; cuda_error if a
///         CUDA call fails.
template <int D, class F, class P>
std::vector<iteration_sums> finish_batch_passes(pass_context& cx, const F& f, batch_state<D, P>& b,
                                                const std::vector<batch_pass<D>>& passes) {
  MCUBES_EXPECTS(b.started && b.order.size() == passes.size(), "finish_batch: ", passes.size(),
                 " passes, but the batch has ", b.started ? b.order.size() : 0, " started");
  cx.device.use();
  const cudaStream_t stream = cx.stream();
  b.done.wait();
  b.started = false;
  if (b.heavy.listed) cx.last.heavy_cubes += b.heavy.host_heavy.data()[0];
  b.heavy.listed = false;
  const std::vector<std::size_t> order = std::move(b.order);
  const std::size_t n = passes.size();

  std::vector<iteration_sums> out(n);
  std::vector<std::size_t> again;  // V-Sample passes that reached overflow levels their integral did not have
  for (std::size_t j = 0; j < n; ++j) {
    const std::size_t i = order[j];
    const batch_pass<D>& ps = passes[i];
    const std::size_t k = ps.integral;
    const pass_result r = b.host_results.data()[j];
    iteration_sums& o = out[i];
    o = pass_sums(r.estimate, r.variance, r.flags, ps.adapt, ps.sp.bin_scale);
    if (ps.adapt) {
      b.top_level[k] = o.top_level;
      b.over_dirty[k] = o.top_level;
      if (o.top_level > 0 && b.over[k].size() == 0) {
        b.over[k] = device_array<bin_accumulator>(b.bin_values() * max_bin_level);
        MCUBES_CUDA_CHECK(cudaMemsetAsync(b.over[k].data(), 0, b.over[k].size() * sizeof(bin_accumulator), stream));
        b.over_dirty[k] = 0;
        again.push_back(i);
        continue;
      }
    }
    if (r.flags.first_non_finite != ~0ull) {  // replay that one sample to report its value
      const with_parameters<F, P> g{f, b.host_params[k]};
      replay_sample_kernel<D, with_parameters<F, P>><<<1, 1, 0, stream>>>(g, ps.sp, b.maps.view(k), r.flags.first_non_finite,
                                                                           cx.buffers.replay.data());
      MCUBES_CUDA_CHECK_LAUNCH("replay_sample_kernel");
      o.flags.non_finite_value = cx.buffers.replayed_value(stream);
    }
  }
  if (!again.empty()) {  // their level-0 bins hold a partial pass: zeroed and run again (clean[k] is 0)
    std::vector<batch_pass<D>> redo;
    redo.reserve(again.size());
    for (const std::size_t i : again) redo.push_back(passes[i]);
    start_batch_passes(cx, f, b, redo);
    std::vector<iteration_sums> sums = finish_batch_passes(cx, f, b, redo);
    for (std::size_t r = 0; r < again.size(); ++r) out[again[r]] = std::move(sums[r]);
  }
  return out;
}

}  // namespace cuda_detail
}  // namespace mcubes

#pragma once
/// @file backend/cuda.cuh
/// CUDA backend of the m-Cubes loop: owns the stream, the device buffers and the launch policy;
/// launches V-Sample / V-Sample-No-Adjust (backend/cuda/vegas_kernels.cuh), checks every call.
/// The adaptive map lives in device memory for the whole run (device_map) and is adapted there
/// (backend/cuda/adapt_kernels.cuh), from bin sums that never leave the device: per iteration one
/// copy of 40 bytes comes back (estimate, variance, 3 flags) and the host synchronises once.
/// Memory use is independent of calls per iteration (at most 2^20 / blockDim tile values).
///
/// Determinism contract: bitwise identical results on every run and for any threads_per_block
/// (a power of two in [32, 1024]) and any grid size (see vegas_kernels.cuh). Compared with the CPU
/// backend the sample points and the reduction tree are the same; the estimates agree to
/// floating-point rounding (nvcc contracts a*b+c into FMA by default and CUDA's exp/sin/... may
/// differ from glibc's in the last bit), bitwise where the integrand uses only +, -, *, /, sqrt
/// and the code is built with --fmad=false.

#include <cuda_runtime.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <map>
#include <utility>
#include <string>
#include <vector>

#include "../core/batch.hpp"
#include "../integrand.hpp"
#include "../core/sampler.hpp"
#include "../options.hpp"
#include "../core/stratification.hpp"
#include "../core/adaptive_map.hpp"
#include "cuda/adapt_kernels.cuh"
#include "cuda/array_path.cuh"
#include "cuda/batch_kernels.cuh"
#include "cuda/vector_kernels.cuh"
#include "cpu/vector_pass.hpp"
#include "cuda/check.cuh"
#include "cuda/device_array.cuh"
#include "cuda/launch.cuh"
#include "cuda/vegas_kernels.cuh"

namespace mcubes {

/// Launch policy of the Vegas kernels.
struct cuda_launch_policy {
  int threads_per_block = 256;  ///< power of two in [32, 1024]; never changes the result
  int max_blocks = 0;           ///< 0: enough resident blocks to fill every multiprocessor (occupancy)
  /// V-Sample passes: at most ceil(n_tiles / adapt_tiles_per_block) blocks (but at least one per
  /// multiprocessor), so that each block's flush of its d x n_bins shared-memory bins to global
  /// memory is shared by enough samples on small problems. 1: no limit. Never changes the result.
  int adapt_tiles_per_block = 1;
  /// Device array integrands (cuda/array_path.cuh): points per call of the integrand at most
  /// (whole tiles; at least one tile). Memory: (D + 1) x 8 bytes per point. Never changes the result.
  std::uint64_t array_call_points = std::uint64_t(1) << 22;
};

/// The launch policy of the execution options `ex` (block size, array_call_points).
inline cuda_launch_policy launch_policy_of(const execution& ex) {
  cuda_launch_policy p;
  p.threads_per_block = ex.cuda_threads_per_block;
  if (ex.cuda_array_points > 0) p.array_call_points = ex.cuda_array_points;
  return p;
}

/// The adaptive map of a run on the CUDA backend: D rows of n_bins + 1 edges in device memory
/// (layout of adaptive_map), held by the backend. Made by cuda_backend::make_map, adapted by
/// cuda_backend::adapt_map; valid until the backend's next make_map (one run at a time).
template <int D>
struct device_map {
  device_span<double> edges;
  int n_bins = 0;
  map_view<D> view() const noexcept { return map_view<D>{edges.data(), n_bins}; }
};

namespace cuda_detail {
/// The sums of a pass as the loop takes them (iteration_sums: no bins, they stay on the device),
/// from the device's fixed-tree sums and flags; with `adapt`, top_level from the largest term and
/// the pass's bin scale.
inline iteration_sums pass_sums(double estimate, double variance, const device_flags& fl, bool adapt, double bin_scale) {
  iteration_sums o;
  o.estimate = estimate;
  o.variance = variance;
  o.flags.n_nonzero = fl.n_nonzero;
  o.flags.first_non_finite = fl.first_non_finite;
  double maxc;
  std::memcpy(&maxc, &fl.max_contribution_bits, sizeof maxc);
  o.flags.max_contribution = maxc;
  if (adapt) o.top_level = top_bin_level(maxc, bin_scale);  // the highest level any term of the pass reached
  return o;
}
}  // namespace cuda_detail

/// CUDA backend: one device, one non-blocking stream, the launch policy and the device and pinned
/// buffers of its passes (kept between calls; no global or thread-local state). Not thread-safe:
/// one host thread at a time per backend; backends on different streams (of one device or several)
/// run concurrently and give their solo bits. Not copyable: owns device memory.
class cuda_backend {
 public:
  /// @throws invalid_input for a bad block size; cuda_error if there is no device or a call fails.
  explicit cuda_backend(cuda_launch_policy policy = {}, int device = 0) : policy_(policy), device_(device) {
    validate_block_size(policy_.threads_per_block, "threads_per_block");
    MCUBES_EXPECTS(policy_.max_blocks >= 0, "max_blocks must be non-negative, got ", policy_.max_blocks);
    MCUBES_EXPECTS(policy_.adapt_tiles_per_block >= 1, "adapt_tiles_per_block must be at least 1, got ",
                   policy_.adapt_tiles_per_block);
    MCUBES_EXPECTS(policy_.array_call_points >= 1, "array_call_points must be at least 1, got ",
                   policy_.array_call_points);
    if (cuda_device_count() <= device_) throw cuda_error("no CUDA device available (device " + std::to_string(device_) + " requested)");
    MCUBES_CUDA_CHECK(cudaSetDevice(device_));
    MCUBES_CUDA_CHECK(cudaGetDeviceProperties(&props_, device_));
    MCUBES_CUDA_CHECK(cudaStreamCreateWithFlags(&stream_, cudaStreamNonBlocking));
    flags_ = device_array<cuda_detail::device_flags>(1);
    result_ = device_array<cuda_detail::pass_result>(1);
    replay_ = device_array<double>(1);
    host_result_ = pinned_array<cuda_detail::pass_result>(1);
    host_replay_ = pinned_array<double>(1);
    const cuda_detail::device_flags init{0ull, ~0ull, 0ull};
    // reset after each pass by tree_reduce_kernel; in the backend's stream, so that its kernels see it
    MCUBES_CUDA_CHECK(cudaMemcpyAsync(flags_.data(), &init, sizeof init, cudaMemcpyHostToDevice, stream_));
    MCUBES_CUDA_CHECK(cudaStreamSynchronize(stream_));
  }
  cuda_backend(const cuda_backend&) = delete;
  cuda_backend& operator=(const cuda_backend&) = delete;
  ~cuda_backend() {
    if (stream_) cudaStreamDestroy(stream_);
  }

  static std::string name() { return "cuda"; }
  const cudaDeviceProp& properties() const noexcept { return props_; }
  const cuda_launch_policy& policy() const noexcept { return policy_; }
  /// Number of blocks of the last V-Sample launch (for reports).
  int last_grid() const noexcept { return last_grid_; }
  /// Whether the last adapting launch kept its bins in shared memory.
  bool last_shared_bins() const noexcept { return last_shared_bins_; }

  // The map interface of a backend (algorithm/vegas.hpp).

  /// A uniform map of n_bins bins per axis in device memory (the edges of adaptive_map<D>(n_bins),
  /// copied), in storage the backend keeps between runs (no allocation for a run of the same size);
  /// invalidates the map of the previous call. @throws invalid_input if n_bins < 2; cuda_error if
  /// the allocation or copy fails.
  template <int D>
  device_map<D> make_map(int n_bins) {
    use_device();
    const adaptive_map<D> uniform(n_bins);
    const std::size_t n = uniform.edges().size();
    if (map_storage_.size() < n) map_storage_ = device_array<double>(n);
    if (host_edges_.size() < n) host_edges_ = pinned_array<double>(n);
    MCUBES_CUDA_CHECK(cudaStreamSynchronize(stream_));  // no copy from host_edges_ still pending
    std::memcpy(host_edges_.data(), uniform.edges().data(), n * sizeof(double));
    MCUBES_CUDA_CHECK(cudaMemcpyAsync(map_storage_.data(), host_edges_.data(), n * sizeof(double), cudaMemcpyHostToDevice, stream_));
    device_map<D> m;
    m.edges = device_span<double>{map_storage_.data(), n};
    m.n_bins = n_bins;
    return m;
  }

  /// Replaces the map's edges (D * (n_bins + 1), axis-major; checked by check_map_edges), copied
  /// to the device in the backend's stream (synchronous).
  /// @throws invalid_input if `edges` is not a valid map; cuda_error if the copy fails.
  template <int D>
  void set_map_edges(device_map<D>& map, const std::vector<double>& edges) {
    check_map_edges(edges, D, map.n_bins);
    use_device();
    MCUBES_CUDA_CHECK(cudaStreamSynchronize(stream_));
    std::memcpy(host_edges_.data(), edges.data(), edges.size() * sizeof(double));
    MCUBES_CUDA_CHECK(cudaMemcpyAsync(map.edges.data(), host_edges_.data(), edges.size() * sizeof(double),
                                      cudaMemcpyHostToDevice, stream_));
    MCUBES_CUDA_CHECK(cudaStreamSynchronize(stream_));
  }

  // The chunk operations of a backend (backend/backend.hpp), in the backend's stream.

  /// Merges chunk(c) for c in [0, n_chunks) over the fixed tree (launch.cuh reduce_chunks): bitwise
  /// the same for any block size and grid, and as the CPU backend for the same chunk partials.
  /// ChunkFn and Merge: trivially copyable, callable on the device. Synchronises once.
  /// @throws cuda_error if a CUDA call fails.
  template <class T, class ChunkFn, class Merge>
  T reduce(std::uint64_t n_chunks, const ChunkFn& chunk, const Merge& merge) {
    use_device();
    return cuda::reduce_chunks<T>(chunk, merge, n_chunks, policy_.threads_per_block, stream_, &last_launch_);
  }
  /// The exact sum of the integer counts chunk(c), c in [0, n_chunks) (launch.cuh count_chunks).
  /// @throws cuda_error if a CUDA call fails.
  template <class ChunkFn>
  std::uint64_t count(std::uint64_t n_chunks, const ChunkFn& chunk) {
    use_device();
    return cuda::count_chunks(chunk, n_chunks, policy_.threads_per_block, stream_, &last_launch_);
  }
  /// Geometry and kernel time of the last reduce or count (for reports).
  const launch_report& last_launch() const noexcept { return last_launch_; }
  /// The device ordinal and the stream the backend's work runs in.
  int device() const noexcept { return device_; }
  cudaStream_t stream() const noexcept { return stream_; }

  /// The map's edges, copied to the host (synchronous; for reports and error messages).
  template <int D>
  std::vector<double> map_edges(const device_map<D>& map) {
    use_device();
    std::vector<double> out(map.edges.size());
    MCUBES_CUDA_CHECK(cudaMemcpyAsync(out.data(), map.edges.data(), out.size() * sizeof(double), cudaMemcpyDeviceToHost, stream_));
    MCUBES_CUDA_CHECK(cudaStreamSynchronize(stream_));
    return out;
  }

  /// Adapts `map` on the device to the bins of the last V-Sample pass (which stay on the device;
  /// sums.bins is empty here; sums.top_level says how many overflow levels it filled): the edges
  /// of adaptive_map::adapt, bit for bit. Asynchronous (the next pass in the stream sees the new
  /// map); zeroes the bins. @throws invalid_input if sums is not the last pass's.
  template <int D>
  void adapt_map(device_map<D>& map, const iteration_sums& sums, double alpha, bool symmetric) {
    use_device();
    const int n = map.n_bins;
    ensure_bins(static_cast<std::size_t>(D) * n);
    const std::size_t scratch = cuda_detail::adapt_scratch_doubles(n) * sizeof(double);
    const unsigned blocks = symmetric ? 1u : static_cast<unsigned>(D);
    double* global_scratch = nullptr;
    std::size_t smem = scratch;
    if (adapt_static_smem_ < 0) {  // the kernel's static shared memory (CUB temporaries, the tree)
      cudaFuncAttributes attr{};
      MCUBES_CUDA_CHECK(cudaFuncGetAttributes(&attr, cuda_detail::adapt_map_kernel<cuda_detail::adapt_threads>));
      adapt_static_smem_ = static_cast<long>(attr.sharedSizeBytes);
    }
    if (scratch + static_cast<std::size_t>(adapt_static_smem_) > adapt_smem_limit) {  // large n_bins: scratch in global memory
      if (adapt_scratch_.size() < blocks * cuda_detail::adapt_scratch_doubles(n))
        adapt_scratch_ = device_array<double>(blocks * cuda_detail::adapt_scratch_doubles(n));
      global_scratch = adapt_scratch_.data();
      smem = 0;
    }
    MCUBES_EXPECTS(sums.top_level == last_top_, "adapt_map: the sums' top bin level ", sums.top_level,
                   " is not that of the last adapting pass (", last_top_, ")");
    cuda_detail::adapt_map_kernel<cuda_detail::adapt_threads><<<blocks, cuda_detail::adapt_threads, smem, stream_>>>(
        map.edges.data(), bins_.data(), over_.data(), sums.top_level, n, D, symmetric, alpha, global_scratch);
    MCUBES_CUDA_CHECK_LAUNCH("adapt_map_kernel");
    bins_clean_ = true;
    over_dirty_ = 0;  // the kernel zeroed the levels it read, the only ones the last pass wrote
  }

  /// Test hook: copies `bins` (levels 0..top_level of n_values = bins.size() / (top_level + 1)
  /// exact sums each, level-major: iteration_sums::bins) to the device bins that adapt_map reads;
  /// pass top_level in the sums given to adapt_map.
  void upload_bins(const std::vector<bin_accumulator>& bins, int top_level = 0) {
    MCUBES_EXPECTS(top_level >= 0 && top_level <= max_bin_level && bins.size() % (top_level + 1) == 0,
                   "upload_bins: bad top level ", top_level, " for ", bins.size(), " sums");
    const std::size_t n_values = bins.size() / (top_level + 1);
    ensure_bins(n_values);
    // in the backend's (non-blocking) stream: a plain cudaMemcpy from pageable memory may return
    // before its DMA is done, and the adapt kernel would not wait for it
    MCUBES_CUDA_CHECK(cudaMemcpyAsync(bins_.data(), bins.data(), n_values * sizeof(bin_accumulator), cudaMemcpyHostToDevice,
                                      stream_));
    if (top_level > 0)
      MCUBES_CUDA_CHECK(cudaMemcpyAsync(over_.data(), bins.data() + n_values, top_level * n_values * sizeof(bin_accumulator),
                                        cudaMemcpyHostToDevice, stream_));
    MCUBES_CUDA_CHECK(cudaStreamSynchronize(stream_));
    bins_clean_ = false;
    over_dirty_ = top_level * n_values;
    last_top_ = top_level;
  }

  /// One sampling pass over the device map (same contract as cpu_backend::sample, except that the
  /// bin sums stay on the device for adapt_map: the returned sums.bins is empty). Synchronises
  /// the stream once (a device array integrand: once per slice too, cuda/array_path.cuh).
  /// @throws cuda_error if a CUDA call fails; whatever a device array integrand throws.
  template <int D, class F>
  iteration_sums sample(const F& f, const sampling_params<D>& sp, const stratification& st, const device_map<D>& map,
                        bool adapt, std::uint64_t stride = 1) {
    use_device();
    const int B = policy_.threads_per_block;
    const std::uint64_t n_sel = (st.n_chunks + stride - 1) / stride;
    const std::uint64_t width = next_pow2(n_sel);
    const std::uint64_t tile = std::min<std::uint64_t>(B, width);  // tile = B leaves (padded)
    const std::uint64_t n_tiles = (n_sel + B - 1) / B;
    const int nb = map.n_bins;
    const std::size_t n_bin_values = static_cast<std::size_t>(D) * nb;

    if (tile_est_.size() < n_tiles) {
      tile_est_ = device_array<double>(n_tiles);
      tile_var_ = device_array<double>(n_tiles);
    }
    if (adapt) {
      ensure_bins(n_bin_values);
      if (!bins_clean_)
        MCUBES_CUDA_CHECK(cudaMemsetAsync(bins_.data(), 0, n_bin_values * sizeof(bin_accumulator), stream_));
      if (over_dirty_ > 0)  // overflow levels of a pass that was not adapted to (the probe, a rescaled pass)
        MCUBES_CUDA_CHECK(cudaMemsetAsync(over_.data(), 0, over_dirty_ * sizeof(bin_accumulator), stream_));
      bins_clean_ = false;
      over_dirty_ = 0;
    }

    const map_view<D> dmap = map.view();
    const std::size_t optin = static_cast<std::size_t>(props_.sharedMemPerBlockOptin);
    const std::size_t n_edges = static_cast<std::size_t>(D) * (nb + 1);
    bool shared_bins = false;
    if (adapt)
      shared_bins = cuda_detail::v_sample_dynamic_smem_bytes(n_bin_values, true) + cuda_detail::v_sample_static_smem_bytes <= optin;
    // the map's edges go to shared memory too when they fit (launch() keeps them only if that does
    // not cost resident blocks)
    const std::size_t smem_plain = cuda_detail::v_sample_dynamic_smem_bytes(n_bin_values, shared_bins);
    const std::size_t smem_edges = cuda_detail::v_sample_dynamic_smem_bytes(n_bin_values, shared_bins, n_edges, true);
    const std::size_t smem_alt = smem_edges + cuda_detail::v_sample_static_smem_bytes <= optin ? smem_edges : smem_plain;
    int grid = 0;
    if constexpr (is_device_array_integrand_v<F>) {
      grid = sample_array_slices<D>(f, sp, dmap, stride, n_sel, n_tiles, adapt, shared_bins, smem_plain, smem_alt);
    } else {
      grid = adapt ? launch<D, F, true>(f, sp, dmap, stride, n_sel, 0, n_tiles, shared_bins, smem_plain, smem_alt)
                   : launch<D, F, false>(f, sp, dmap, stride, n_sel, 0, n_tiles, false, smem_plain, smem_alt);
    }
    last_grid_ = grid;
    if (adapt) last_shared_bins_ = shared_bins;

    // finish the fixed tree over the tile values (padded width: width / tile); snapshot and reset the flags
    const unsigned T = 1024;
    cuda_detail::tree_reduce_kernel<><<<1, T, 0, stream_>>>(tile_est_.data(), tile_var_.data(), n_tiles,
                                                                              width / tile, result_.data(), flags_.data());
    MCUBES_CUDA_CHECK_LAUNCH("tree_reduce_kernel");
    MCUBES_CUDA_CHECK(cudaMemcpyAsync(host_result_.data(), result_.data(), sizeof(cuda_detail::pass_result),
                                      cudaMemcpyDeviceToHost, stream_));
    MCUBES_CUDA_CHECK(cudaStreamSynchronize(stream_));

    const cuda_detail::pass_result r = *host_result_.data();
    iteration_sums out = cuda_detail::pass_sums(r.estimate, r.variance, r.flags, adapt, sp.bin_scale);
    if (adapt) {
      last_top_ = out.top_level;
      over_dirty_ = static_cast<std::size_t>(out.top_level) * n_bin_values;
    }
    if (r.flags.first_non_finite != ~0ull) {  // replay that one sample to report its value
      if constexpr (is_device_array_integrand_v<F>) {  // its point, then the integrand on one row
        if (array_x_.size() < static_cast<std::size_t>(D) + 1) array_x_ = device_array<double>(D + 1);
        cuda_detail::sample_point_kernel<D><<<1, 1, 0, stream_>>>(sp, dmap, r.flags.first_non_finite, array_x_.data());
        MCUBES_CUDA_CHECK_LAUNCH("sample_point_kernel");
        MCUBES_CUDA_CHECK(cudaStreamSynchronize(stream_));
        f(array_x_.data(), 1, replay_.data(), static_cast<void*>(stream_));
      } else {
        cuda_detail::replay_sample_kernel<D, F><<<1, 1, 0, stream_>>>(f, sp, dmap, r.flags.first_non_finite, replay_.data());
        MCUBES_CUDA_CHECK_LAUNCH("replay_sample_kernel");
      }
      MCUBES_CUDA_CHECK(cudaMemcpyAsync(host_replay_.data(), replay_.data(), sizeof(double), cudaMemcpyDeviceToHost, stream_));
      MCUBES_CUDA_CHECK(cudaStreamSynchronize(stream_));
      out.flags.non_finite_value = *host_replay_.data();
    }
    return out;
  }

  /// Largest number of components of a vector integrand on the CUDA backend (as on the CPU).
  static constexpr int max_vector_components = 64;

  /// One pass of a vector-valued integrand (values<N>, N <= max_vector_components) over the map
  /// `map` (backend/cuda/vector_kernels.cuh): the same contract as the CPU's sample_vector (the
  /// bins stay on the device for adapt_map, as sample()). Synchronises once.
  ///
  /// Kernel and block size: where the tile kernel fits (vector_tile_fits: N > 1 and the partials
  /// of 32 chunks fit in 96 KiB of shared memory, N <= 25) it runs with B = 64 threads per block if
  /// the policy allows at least 64, those fit too (N <= 18) and a multiprocessor then holds at least
  /// as many threads as with B = 32, else with B = 32; otherwise v_sample_vector_kernel with the
  /// policy's threads_per_block. None of this changes a bit of the result.
  /// @throws invalid_input if N > max_vector_components; cuda_error if a CUDA call fails.
  template <int D, int N, class F>
  vector_pass_sums sample_vector(const F& f, const sampling_params<D>& sp, const stratification& st, const map_view<D>& map,
                                 bool adapt, std::uint64_t stride = 1) {
    MCUBES_EXPECTS(N <= max_vector_components, "the CUDA backend integrates vector integrands of up to ",
                   max_vector_components, " components, got ", N);
    constexpr int M = vector_partial_size<N>;
    use_device();
    const std::uint64_t n_sel = (st.n_chunks + stride - 1) / stride;
    const std::uint64_t width = next_pow2(n_sel);
    const std::size_t n_bin_values = static_cast<std::size_t>(D) * map.n_bins;
    if (vector_out_.size() < static_cast<std::size_t>(M) + 4) {
      vector_out_ = device_array<double>(M + 4);
      host_vector_out_ = pinned_array<double>(M + 4);
    }
    if (adapt) {
      ensure_bins(n_bin_values);
      if (!bins_clean_)
        MCUBES_CUDA_CHECK(cudaMemsetAsync(bins_.data(), 0, n_bin_values * sizeof(bin_accumulator), stream_));
      if (over_dirty_ > 0)
        MCUBES_CUDA_CHECK(cudaMemsetAsync(over_.data(), 0, over_dirty_ * sizeof(bin_accumulator), stream_));
      bins_clean_ = false;
      over_dirty_ = 0;
    }
    const philox_schedule rng = philox_schedule::make(sp.seed, stream_id::vegas, sp.iteration);
    int B = policy_.threads_per_block;
    std::uint64_t n_tiles = 0;
    // Launches `kernel` with B threads and smem bytes over the n_tiles tiles (grid: the resident
    // blocks, at most one per tile).
    const auto launch_vector = [&](auto kernel, std::size_t smem, const char* name) {
      const int per_sm = blocks_per_sm(kernel, B, smem);
      if (per_sm < 1)
        throw cuda_error(std::string(name) + " cannot run with " + std::to_string(B) + " threads per block and " +
                         std::to_string(smem) + " bytes of shared memory");
      std::uint64_t grid = static_cast<std::uint64_t>(per_sm) * props_.multiProcessorCount;
      if (policy_.max_blocks > 0) grid = std::min<std::uint64_t>(grid, policy_.max_blocks);
      grid = std::max<std::uint64_t>(1, std::min<std::uint64_t>(grid, n_tiles));
      kernel<<<static_cast<unsigned>(grid), B, smem, stream_>>>(f, sp, map, stride, n_sel, n_tiles, vector_tiles_.data(),
                                                                bins_.data(), over_.data(), flags_.data(), rng);
      MCUBES_CUDA_CHECK_LAUNCH(name);
    };
    const auto ensure_tiles = [&] {
      n_tiles = (n_sel + B - 1) / B;
      if (vector_tiles_.size() < n_tiles * M) vector_tiles_ = device_array<double>(n_tiles * M);
    };
    if constexpr (cuda_detail::vector_tile_fits(N, 32)) {
      constexpr std::size_t smem32 = cuda_detail::vector_tile_smem_bytes(M, 32);
      B = 32;
      if constexpr (cuda_detail::vector_tile_fits(N, 64)) {
        constexpr std::size_t smem64 = cuda_detail::vector_tile_smem_bytes(M, 64);
        if (policy_.threads_per_block >= 64) {
          const int r32 = 32 * (adapt ? blocks_per_sm(cuda_detail::v_sample_vector_tile_kernel<D, N, F, true, 32>, 32, smem32)
                                      : blocks_per_sm(cuda_detail::v_sample_vector_tile_kernel<D, N, F, false, 32>, 32, smem32));
          const int r64 = 64 * (adapt ? blocks_per_sm(cuda_detail::v_sample_vector_tile_kernel<D, N, F, true, 64>, 64, smem64)
                                      : blocks_per_sm(cuda_detail::v_sample_vector_tile_kernel<D, N, F, false, 64>, 64, smem64));
          if (r64 >= r32) B = 64;
        }
        if (B == 64) {
          ensure_tiles();
          if (adapt)
            launch_vector(cuda_detail::v_sample_vector_tile_kernel<D, N, F, true, 64>, smem64, "v_sample_vector_tile_kernel");
          else
            launch_vector(cuda_detail::v_sample_vector_tile_kernel<D, N, F, false, 64>, smem64, "v_sample_vector_tile_kernel");
        }
      }
      if (B == 32) {
        ensure_tiles();
        if (adapt)
          launch_vector(cuda_detail::v_sample_vector_tile_kernel<D, N, F, true, 32>, smem32, "v_sample_vector_tile_kernel");
        else
          launch_vector(cuda_detail::v_sample_vector_tile_kernel<D, N, F, false, 32>, smem32, "v_sample_vector_tile_kernel");
      }
    } else {
      ensure_tiles();
      if (adapt) {
        if (B <= 256)
          launch_vector(cuda_detail::v_sample_vector_kernel<D, N, F, true, 256>, 0, "v_sample_vector_kernel");
        else
          launch_vector(cuda_detail::v_sample_vector_kernel<D, N, F, true, 1024>, 0, "v_sample_vector_kernel");
      } else {
        if (B <= 256)
          launch_vector(cuda_detail::v_sample_vector_kernel<D, N, F, false, 256>, 0, "v_sample_vector_kernel");
        else
          launch_vector(cuda_detail::v_sample_vector_kernel<D, N, F, false, 1024>, 0, "v_sample_vector_kernel");
      }
    }
    // the tiles are aligned groups of B chunks: the tree over them has width / min(B, width) leaves
    const std::uint64_t tile = std::min<std::uint64_t>(B, width);
    auto* out_flags = reinterpret_cast<cuda_detail::device_flags*>(vector_out_.data() + M);
    cuda_detail::vector_tree_reduce_kernel<M><<<static_cast<unsigned>((M + 1) / 2), 1024, 0, stream_>>>(
        vector_tiles_.data(), n_tiles, width / tile, vector_out_.data(), flags_.data(), out_flags);
    MCUBES_CUDA_CHECK_LAUNCH("vector_tree_reduce_kernel");
    MCUBES_CUDA_CHECK(cudaMemcpyAsync(host_vector_out_.data(), vector_out_.data(), (M + 4) * sizeof(double),
                                      cudaMemcpyDeviceToHost, stream_));
    MCUBES_CUDA_CHECK(cudaStreamSynchronize(stream_));
    vector_pass_sums out;
    out.sums.assign(host_vector_out_.data(), host_vector_out_.data() + M);
    cuda_detail::device_flags fl;
    std::memcpy(&fl, host_vector_out_.data() + M, sizeof fl);
    iteration_sums& o = out.scalar;
    o = cuda_detail::pass_sums(out.sums[0], out.sums[N], fl, adapt, sp.bin_scale);
    if (fl.first_non_finite != ~0ull) o.flags.non_finite_value = std::numeric_limits<double>::quiet_NaN();
    if (adapt) {
      last_top_ = o.top_level;
      over_dirty_ = static_cast<std::size_t>(o.top_level) * n_bin_values;
    }
    return out;
  }

  // The batch interface of a backend (algorithm/vegas_batch.hpp).

  /// The device state of a parameter batch of n integrals: their maps (one buffer), parameters,
  /// bins and overflow levels (one buffer each), and per integral the bookkeeping of which bins
  /// are dirty. Owning; made by make_batch, used by one backend. Device memory:
  /// cuda_batch_bytes(D, n_bins, n, sizeof(P)).
  template <int D, class P>
  struct batch_state {
    std::size_t n = 0;
    int n_bins = 0;
    const P* host_params = nullptr;  ///< the caller's parameters (host; for replays of failures)
    device_array<double> edges;      ///< n maps of D * (n_bins + 1) edges
    device_array<bin_accumulator> bins;
    std::vector<device_array<bin_accumulator>> over;  ///< integral k's overflow levels (empty until a pass reaches them)
    device_array<cuda_detail::batch_item<D, P>> items;
    pinned_array<cuda_detail::batch_item<D, P>> host_items;
    device_array<cuda_detail::device_flags> flags;
    device_array<cuda_detail::pass_result> results;
    pinned_array<cuda_detail::pass_result> host_results;
    device_array<double> tile_est, tile_var;
    device_array<cuda_detail::adapt_item> adapt_items;
    pinned_array<cuda_detail::adapt_item> host_adapt_items;
    device_array<double> adapt_scratch;
    std::vector<unsigned char> clean;  ///< level-0 bins of integral k all zero
    std::vector<int> over_dirty;       ///< overflow levels of integral k that may be non-zero
    std::vector<int> top_level;        ///< top level of integral k's last V-Sample pass
    cuda_event adapt_copied;           ///< after the last copy of host_adapt_items
    cuda_event done;                   ///< after the started passes' results reached host_results (their
                                       ///< items were read before: the host may rewrite them then)
    std::vector<std::size_t> order;    ///< the started passes in launch order (adapting first)
    bool started = false;              ///< passes started and not yet finished
    std::size_t map_doubles() const { return static_cast<std::size_t>(D) * (n_bins + 1); }
    std::size_t bin_values() const { return static_cast<std::size_t>(D) * n_bins; }
  };

  /// Device memory of a batch of n integrals in D dimensions with n_bins bins per axis and
  /// parameters of param_bytes bytes: per integral D (n_bins + 1) 8-byte edges, D n_bins 16-byte
  /// bin sums, its pass descriptor and flags:
  ///   n * (8 D (n_bins + 1) + 16 D n_bins + sizeof(batch_item) + 64) bytes,
  /// plus the tile values of a round (16 bytes per tile of B chunks), plus, for each integral one
  /// of whose V-Sample passes reaches the overflow bin levels (a term 2^31 times the largest of the
  /// pass its bin scale came from: rare), its max_bin_level = 16 levels, 256 D n_bins bytes,
  /// allocated then (sample_batch).
  template <int D, class P>
  static std::size_t batch_bytes(std::size_t n, int n_bins) {
    const std::size_t per = 8 * static_cast<std::size_t>(D) * (n_bins + 1) + 16 * static_cast<std::size_t>(D) * n_bins +
                            sizeof(cuda_detail::batch_item<D, P>) + sizeof(cuda_detail::adapt_item) + 64;
    return n * per;
  }

  /// Checks that a batch of n integrals fits in the device memory that is free now (batch_bytes;
  /// vegas_batch checks the whole batch before it makes the states of its lanes).
  /// @throws invalid_input naming the figures if it does not; cuda_error if the query fails.
  template <int D, class P>
  void check_batch_memory(std::size_t n, int n_bins) {
    use_device();
    std::size_t free_bytes = 0, total_bytes = 0;
    MCUBES_CUDA_CHECK(cudaMemGetInfo(&free_bytes, &total_bytes));
    const std::size_t need = batch_bytes<D, P>(n, n_bins);
    if (need > free_bytes)
      throw invalid_input("a batch of " + std::to_string(n) + " integrals in d = " + std::to_string(D) + " with " +
                          std::to_string(n_bins) + " bins per axis needs " + std::to_string(need >> 20) +
                          " MiB of device memory, " + std::to_string(free_bytes >> 20) +
                          " MiB are free: integrate fewer integrals per call or use fewer bins (n_bins)");
  }

  /// Uniform maps (the edges of adaptive_map<D>(n_bins), computed on the device) and zero bins for
  /// n integrals; the parameters params[0..n) are copied with each round's pass descriptors.
  /// @throws invalid_input if the batch needs more device memory than is free (naming the figures);
  ///         cuda_error if an allocation or copy fails.
  template <int D, class P>
  batch_state<D, P> make_batch(const P* params, std::size_t n, int n_bins) {
    check_batch_memory<D, P>(n, n_bins);
    batch_state<D, P> b;
    b.n = n;
    b.n_bins = n_bins;
    b.host_params = params;
    b.edges = device_array<double>(n * b.map_doubles());
    b.bins = device_array<bin_accumulator>(n * b.bin_values());
    b.over.resize(n);
    b.flags = device_array<cuda_detail::device_flags>(n);
    MCUBES_CUDA_CHECK(cudaMemsetAsync(b.bins.data(), 0, b.bins.size() * sizeof(bin_accumulator), stream_));
    cuda_detail::init_batch_kernel<><<<static_cast<unsigned>(std::min<std::size_t>(4096, (b.edges.size() + 255) / 256)), 256, 0,
                                     stream_>>>(b.edges.data(), b.edges.size(), n_bins, b.flags.data(), n);
    MCUBES_CUDA_CHECK_LAUNCH("init_batch_kernel");
    b.items = device_array<cuda_detail::batch_item<D, P>>(n);
    b.host_items = pinned_array<cuda_detail::batch_item<D, P>>(n);
    b.results = device_array<cuda_detail::pass_result>(n);
    b.host_results = pinned_array<cuda_detail::pass_result>(n);
    b.adapt_items = device_array<cuda_detail::adapt_item>(n);
    b.host_adapt_items = pinned_array<cuda_detail::adapt_item>(n);
    b.clean.assign(n, 1);
    b.over_dirty.assign(n, 0);
    b.top_level.assign(n, 0);
    b.adapt_copied = cuda_event::create();
    b.done = cuda_event::create();
    MCUBES_CUDA_CHECK(cudaStreamSynchronize(stream_));
    return b;
  }

  /// Whether this backend can start a batch's passes and finish them later (start_batch,
  /// finish_batch), so that vegas_batch pipelines two parts of a large batch: the host takes one
  /// part's sums while the device samples the other's.
  static constexpr bool batch_pipeline = true;

  /// Runs the passes (of distinct integrals) in one launch per kind (V-Sample, No-Adjust) over all
  /// their tiles and one reduction for all (backend/cuda/batch_kernels.cuh); pass i's sums are
  /// bitwise those of sample() for it alone: start_batch then finish_batch. Synchronises once
  /// (and once more per pass with a failing sample, to replay it). A V-Sample pass whose terms
  /// reach the overflow bin levels of an integral that has none yet is run again, once they are
  /// allocated (the same samples and bits; the bins of the first run are discarded).
  /// @throws cuda_error if a CUDA call fails (an allocation included).
  template <int D, class F, class P>
  std::vector<iteration_sums> sample_batch(const F& f, batch_state<D, P>& b, const std::vector<batch_pass<D>>& passes) {
    start_batch(f, b, passes);
    return finish_batch(f, b, passes);
  }

  /// Starts the passes of sample_batch on the backend's stream and returns without waiting for
  /// them.
  /// Another batch's passes may be started meanwhile; b's must be finished (finish_batch, with the
  /// same `passes`) before b is used again.
  /// @throws invalid_input if b's last passes were not finished; cuda_error if a CUDA call fails.
  template <int D, class F, class P>
  void start_batch(const F& f, batch_state<D, P>& b, const std::vector<batch_pass<D>>& passes) {
    MCUBES_EXPECTS(!b.started, "start_batch: the batch's last passes were not finished (finish_batch)");
    use_device();
    const int B = policy_.threads_per_block;
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
    for (std::size_t j = 0; j < n; ++j) {
      const batch_pass<D>& ps = passes[order[j]];
      const std::size_t k = ps.integral;
      cuda_detail::batch_item<D, P>& it = b.host_items.data()[j];
      it.sp = ps.sp;
      it.rng = philox_compact_schedule::make(ps.sp.seed, stream_id::vegas, ps.sp.iteration);
      it.edges = b.edges.data() + k * b.map_doubles();
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
      it.bins = b.bins.data() + k * b.bin_values();
      it.over = b.over[k].data();  // null until a pass of k reaches the overflow levels
      it.params = b.host_params[k];
      it.zero_bins = 0;
      it.zero_over = 0;
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
    MCUBES_CUDA_CHECK(cudaMemcpyAsync(b.items.data(), b.host_items.data(), n * sizeof(cuda_detail::batch_item<D, P>),
                                      cudaMemcpyHostToDevice, stream_));
    if (any_zero) {  // one launch zeroes the bins of every adapting pass that needs it (the adapting items come first)
      const std::uint64_t per_item = b.bin_values() * std::max<std::uint64_t>(1, max_over);
      const unsigned y = static_cast<unsigned>(std::min<std::uint64_t>((per_item + 255) / 256, 64));
      cuda_detail::zero_batch_bins_kernel<D, P><<<dim3(static_cast<unsigned>(n_adapt), y), 256, 0, stream_>>>(
          b.items.data(), static_cast<unsigned>(n_adapt), b.bin_values());
      MCUBES_CUDA_CHECK_LAUNCH("zero_batch_bins_kernel");
    }
    if (n_adapt > 0)
      launch_batch<D, F, P, true>(f, b.items.data(), static_cast<unsigned>(n_adapt), 0, units_adapt, b, b.flags.data(), levels);
    if (n_adapt < n)
      launch_batch<D, F, P, false>(f, b.items.data() + n_adapt, static_cast<unsigned>(n - n_adapt), units_adapt, units, b,
                                   b.flags.data() + n_adapt, levels);
    cuda_detail::batch_tree_reduce_kernel<D, P><<<static_cast<unsigned>(n), 1024, 0, stream_>>>(
        b.items.data(), b.tile_est.data(), b.tile_var.data(), b.results.data(), b.flags.data());
    MCUBES_CUDA_CHECK_LAUNCH("batch_tree_reduce_kernel");
    MCUBES_CUDA_CHECK(cudaMemcpyAsync(b.host_results.data(), b.results.data(), n * sizeof(cuda_detail::pass_result),
                                      cudaMemcpyDeviceToHost, stream_));
    b.done.record(stream_);
    b.started = true;
  }

  /// Waits for the passes that start_batch started on b (the same `passes`) and returns their sums,
  /// in the order of `passes` (see sample_batch).
  /// @throws invalid_input if b has no started passes or `passes` is not theirs; cuda_error if a
  ///         CUDA call fails.
  template <int D, class F, class P>
  std::vector<iteration_sums> finish_batch(const F& f, batch_state<D, P>& b, const std::vector<batch_pass<D>>& passes) {
    MCUBES_EXPECTS(b.started && b.order.size() == passes.size(), "finish_batch: ", passes.size(),
                   " passes, but the batch has ", b.started ? b.order.size() : 0, " started");
    use_device();
    b.done.wait();
    b.started = false;
    const std::vector<std::size_t> order = std::move(b.order);
    const std::size_t n = passes.size();

    std::vector<iteration_sums> out(n);
    std::vector<std::size_t> again;  // V-Sample passes that reached overflow levels their integral did not have
    for (std::size_t j = 0; j < n; ++j) {
      const std::size_t i = order[j];
      const batch_pass<D>& ps = passes[i];
      const std::size_t k = ps.integral;
      const cuda_detail::pass_result r = b.host_results.data()[j];
      iteration_sums& o = out[i];
      o = cuda_detail::pass_sums(r.estimate, r.variance, r.flags, ps.adapt, ps.sp.bin_scale);
      if (ps.adapt) {
        b.top_level[k] = o.top_level;
        b.over_dirty[k] = o.top_level;
        if (o.top_level > 0 && b.over[k].size() == 0) {
          b.over[k] = device_array<bin_accumulator>(b.bin_values() * max_bin_level);
          MCUBES_CUDA_CHECK(cudaMemsetAsync(b.over[k].data(), 0, b.over[k].size() * sizeof(bin_accumulator), stream_));
          b.over_dirty[k] = 0;
          again.push_back(i);
          continue;
        }
      }
      if (r.flags.first_non_finite != ~0ull) {  // replay that one sample to report its value
        const with_parameters<F, P> g{f, b.host_params[k]};
        cuda_detail::replay_sample_kernel<D, with_parameters<F, P>><<<1, 1, 0, stream_>>>(
            g, ps.sp, map_view<D>{b.edges.data() + k * b.map_doubles(), b.n_bins}, r.flags.first_non_finite,
            replay_.data());
        MCUBES_CUDA_CHECK_LAUNCH("replay_sample_kernel");
        MCUBES_CUDA_CHECK(cudaMemcpyAsync(host_replay_.data(), replay_.data(), sizeof(double), cudaMemcpyDeviceToHost, stream_));
        MCUBES_CUDA_CHECK(cudaStreamSynchronize(stream_));
        o.flags.non_finite_value = *host_replay_.data();
      }
    }
    if (!again.empty()) {  // their level-0 bins hold a partial pass: zeroed and run again (clean[k] is 0)
      std::vector<batch_pass<D>> redo;
      redo.reserve(again.size());
      for (const std::size_t i : again) redo.push_back(passes[i]);
      std::vector<iteration_sums> sums = sample_batch(f, b, redo);
      for (std::size_t r = 0; r < again.size(); ++r) out[again[r]] = std::move(sums[r]);
    }
    return out;
  }

  /// Adapts map k to the bins of its last V-Sample pass for each (k, sums) in `items`, in one
  /// launch (adapt_map_batch_kernel; the edges of adaptive_map::adapt, bit for bit); zeroes the
  /// bins it reads. Asynchronous. @throws invalid_input if a sums' top level is not its last
  /// pass's; cuda_error if a CUDA call fails.
  template <int D, class P>
  void adapt_batch(batch_state<D, P>& b, const std::vector<std::pair<std::size_t, const iteration_sums*>>& items,
                   double alpha, bool symmetric) {
    if (items.empty()) return;
    use_device();
    const int n = b.n_bins;
    const unsigned per_item = symmetric ? 1u : static_cast<unsigned>(D);
    const std::size_t scratch = cuda_detail::adapt_scratch_doubles(n) * sizeof(double);
    if (adapt_static_smem_ < 0) {
      cudaFuncAttributes attr{};
      MCUBES_CUDA_CHECK(cudaFuncGetAttributes(&attr, cuda_detail::adapt_map_kernel<cuda_detail::adapt_threads>));
      adapt_static_smem_ = static_cast<long>(attr.sharedSizeBytes);
    }
    double* global_scratch = nullptr;
    std::size_t smem = scratch;
    if (scratch + static_cast<std::size_t>(adapt_static_smem_) > adapt_smem_limit) {
      const std::size_t need = items.size() * per_item * cuda_detail::adapt_scratch_doubles(n);
      if (b.adapt_scratch.size() < need) b.adapt_scratch = device_array<double>(need);
      global_scratch = b.adapt_scratch.data();
      smem = 0;
    }
    b.adapt_copied.wait();  // the device has read the pinned adapt items of the last call
    for (std::size_t j = 0; j < items.size(); ++j) {
      const std::size_t k = items[j].first;
      MCUBES_EXPECTS(items[j].second->top_level == b.top_level[k], "adapt_batch: the sums' top bin level ",
                     items[j].second->top_level, " is not that of integral ", k, "'s last adapting pass (", b.top_level[k], ")");
      b.host_adapt_items.data()[j] = cuda_detail::adapt_item{b.edges.data() + k * b.map_doubles(),
                                                             b.bins.data() + k * b.bin_values(),
                                                             b.over[k].data(),
                                                             b.top_level[k]};
      b.clean[k] = 1;
      b.over_dirty[k] = 0;
    }
    MCUBES_CUDA_CHECK(cudaMemcpyAsync(b.adapt_items.data(), b.host_adapt_items.data(),
                                      items.size() * sizeof(cuda_detail::adapt_item), cudaMemcpyHostToDevice, stream_));
    b.adapt_copied.record(stream_);
    const dim3 grid(static_cast<unsigned>(items.size()), per_item);
    cuda_detail::adapt_map_batch_kernel<cuda_detail::adapt_threads><<<grid, cuda_detail::adapt_threads, smem, stream_>>>(
        b.adapt_items.data(), n, D, symmetric, alpha, global_scratch);
    MCUBES_CUDA_CHECK_LAUNCH("adapt_map_batch_kernel");
  }

  /// The edges of integral k's map, copied to the host (synchronous).
  template <int D, class P>
  std::vector<double> batch_map_edges(const batch_state<D, P>& b, std::size_t k) {
    use_device();
    std::vector<double> out(b.map_doubles());
    MCUBES_CUDA_CHECK(cudaMemcpyAsync(out.data(), b.edges.data() + k * b.map_doubles(), out.size() * sizeof(double),
                                      cudaMemcpyDeviceToHost, stream_));
    MCUBES_CUDA_CHECK(cudaStreamSynchronize(stream_));
    return out;
  }

 private:
  /// Chunks per thread in a unit of a batched pass (batch_kernels.cuh): the smallest power of two
  /// G with G x (samples per chunk) >= 64, so that the per-unit work (the block's tree, the flag
  /// fold) is spread over enough samples; at most 2^(levels - 1) with levels x B x 16 bytes of
  /// shared memory <= 32 KiB (and <= 64), and B G <= the padded width (the unit is a node of the
  /// pass's tree), else 1. Never changes a result.
  static std::uint64_t batch_group(const stratification& st, std::uint64_t width, int B) {
    const std::uint64_t per_chunk = st.chunk_cubes * st.samples_per_cube;
    int max_levels = 1;
    while (max_levels < cuda_detail::batch_group_levels &&
           cuda_detail::batch_group_smem_bytes(max_levels + 1, B) <= 32 * 1024)
      ++max_levels;
    std::uint64_t g = 1;
    while (g * per_chunk < 64 && 2 * g <= (std::uint64_t(1) << (max_levels - 1)) && 2 * g * B <= width) g *= 2;
    return g;
  }

  /// Launches v_sample_batch_kernel over units [unit_begin, unit_end) of the n_items passes at
  /// `items` (their flags at `flags`; groups of at most 2^(levels - 1) chunks). V-Sample passes keep
  /// a block's bins in shared memory when the bin words fit next to the group trees in at most
  /// 96 KiB (two blocks per multiprocessor still fit), and the map's edges go there too when they
  /// fit as well. Grid: resident blocks to fill every
  /// multiprocessor, at most one per unit. Never changes a result.
  template <int D, class F, class P, bool Adapt>
  void launch_batch(const F& f, const cuda_detail::batch_item<D, P>* items, unsigned n_items, std::uint64_t unit_begin,
                    std::uint64_t unit_end, batch_state<D, P>& b, cuda_detail::device_flags* flags, int levels) {
    if (unit_end <= unit_begin) return;
    const int B = policy_.threads_per_block;
    auto kernel = B <= 256 ? cuda_detail::v_sample_batch_kernel<D, F, P, Adapt, 256>
                           : cuda_detail::v_sample_batch_kernel<D, F, P, Adapt, 1024>;
    const std::size_t smem_bins = cuda_detail::batch_group_smem_bytes(levels, B, b.bin_values());
    const bool shared_bins = Adapt && smem_bins <= 96 * 1024;
    const std::size_t smem_base = cuda_detail::batch_group_smem_bytes(levels, B, shared_bins ? b.bin_values() : 0);
    const std::size_t smem_edges = smem_base + b.map_doubles() * sizeof(double);
    const bool shared_edges = smem_edges <= 96 * 1024;
    const std::size_t smem = shared_edges ? smem_edges : smem_base;
    const int per_sm = blocks_per_sm(kernel, B, smem);
    if (per_sm < 1) throw cuda_error("V-Sample batch kernel cannot run with " + std::to_string(B) + " threads per block");
    std::uint64_t grid = static_cast<std::uint64_t>(per_sm) * props_.multiProcessorCount;
    if (policy_.max_blocks > 0) grid = std::min<std::uint64_t>(grid, policy_.max_blocks);
    grid = std::max<std::uint64_t>(1, std::min<std::uint64_t>(grid, unit_end - unit_begin));
    kernel<<<static_cast<unsigned>(grid), B, smem, stream_>>>(f, items, n_items, unit_begin, unit_end, b.tile_est.data(),
                                                           b.tile_var.data(), flags, levels, shared_bins, shared_edges);
    if (Adapt) last_shared_bins_ = shared_bins;
    MCUBES_CUDA_CHECK_LAUNCH("v_sample_batch_kernel");
    last_grid_ = static_cast<int>(grid);
  }

 private:
  /// Makes the backend's device current for the calling host thread (cheap when it already is), so
  /// that backends of different devices can be used from one thread.
  void use_device() const { MCUBES_CUDA_CHECK(cudaSetDevice(device_)); }

  /// Resident blocks per multiprocessor of `kernel` with B threads and `smem` bytes of dynamic shared
  /// memory (queried once per kernel and size). The kernel's dynamic limit is raised once to all the
  /// opt-in shared memory the static part leaves.
  template <class K>
  int blocks_per_sm(K kernel, int B, std::size_t smem) {
    int& per_sm = occupancy_[{reinterpret_cast<const void*>(kernel), smem}];
    if (per_sm == 0) {
      const int max_dynamic = props_.sharedMemPerBlockOptin - static_cast<int>(cuda_detail::v_sample_static_smem_bytes);
      MCUBES_CUDA_CHECK(cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, max_dynamic));
      MCUBES_CUDA_CHECK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, kernel, B, smem));
    }
    return per_sm;
  }

  /// The array path of sample() (cuda/array_path.cuh): per slice of whole tiles, the points
  /// (point_writer), one call of f, the sums (value_reader). Returns the last grid size.
  template <int D, class F>
  int sample_array_slices(const F& f, const sampling_params<D>& sp, const map_view<D>& dmap,
                          std::uint64_t stride, std::uint64_t n_sel, std::uint64_t n_tiles, bool adapt, bool shared_bins,
                          std::size_t smem_plain, std::size_t smem_alt) {
    const std::uint64_t B = static_cast<std::uint64_t>(policy_.threads_per_block);
    detail::array_rows rows;
    rows.stride = stride;
    rows.chunk_samples = sp.chunk_cubes * sp.p;
    const std::uint64_t tile_samples = B * rows.chunk_samples;
    const std::uint64_t slice_tiles = std::max<std::uint64_t>(1, policy_.array_call_points / tile_samples);
    int grid = 0;
    for (std::uint64_t t0 = 0; t0 < n_tiles; t0 += slice_tiles) {
      const std::uint64_t t1 = std::min(n_tiles, t0 + slice_tiles);
      rows.sel0 = t0 * B;
      rows.sel1 = std::min(n_sel, t1 * B);
      rows.first_sample = rows.sel0 * stride * rows.chunk_samples;
      const std::uint64_t n = detail::array_row_count(sp, rows);
      const std::size_t need = static_cast<std::size_t>(std::min(n_tiles, slice_tiles) * tile_samples);
      if (array_x_.size() < need * D) array_x_ = device_array<double>(std::max<std::size_t>(need * D, D + 1));
      if (array_values_.size() < need) array_values_ = device_array<double>(need);
      launch<D, detail::point_writer<D>, false>(detail::point_writer<D>{array_x_.data(), rows}, sp, dmap, stride,
                                                     n_sel, t0, t1, false, smem_plain, smem_alt);
      MCUBES_CUDA_CHECK(cudaStreamSynchronize(stream_));  // the points are complete
      f(array_x_.data(), static_cast<std::size_t>(n), array_values_.data(), static_cast<void*>(stream_));
      const detail::value_reader<D> reader{array_values_.data(), rows};
      grid = adapt ? launch<D, detail::value_reader<D>, true>(reader, sp, dmap, stride, n_sel, t0, t1, shared_bins,
                                                                 smem_plain, smem_alt)
                   : launch<D, detail::value_reader<D>, false>(reader, sp, dmap, stride, n_sel, t0, t1, false,
                                                                  smem_plain, smem_alt);
    }
    return grid;
  }

  /// Launches V-Sample / No-Adjust with `smem_edges` bytes of dynamic shared memory (bins and map
  /// edges) unless `smem_plain` (bins only, edges read from global memory) allows more resident
  /// blocks; the kernel reads which from the size it gets. Returns the grid size.
  /// Tiles [tile_first, n_tiles) only (the array path's slices; 0 otherwise).
  template <int D, class F, bool Adapt>
  int launch(const F& f, const sampling_params<D>& sp, const map_view<D>& dmap, std::uint64_t stride, std::uint64_t n_sel,
             std::uint64_t tile_first, std::uint64_t n_tiles, bool shared_bins, std::size_t smem_plain,
             std::size_t smem_edges) {
    const int B = policy_.threads_per_block;
    auto kernel = B <= 256 ? cuda_detail::v_sample_kernel<D, F, Adapt, 256> : cuda_detail::v_sample_kernel<D, F, Adapt, 1024>;
    std::size_t smem = smem_edges;
    int per_sm = blocks_per_sm(kernel, B, smem_edges);
    if (smem_edges != smem_plain) {
      const int plain = blocks_per_sm(kernel, B, smem_plain);
      if (plain > per_sm) {
        per_sm = plain;
        smem = smem_plain;
      }
    }
    if (per_sm < 1)
      throw cuda_error("V-Sample kernel cannot run with " + std::to_string(B) + " threads per block and " +
                       std::to_string(smem) + " bytes of shared memory");
    std::uint64_t grid = static_cast<std::uint64_t>(per_sm) * props_.multiProcessorCount;
    if (Adapt && policy_.adapt_tiles_per_block > 1) {
      const std::uint64_t per = static_cast<std::uint64_t>(policy_.adapt_tiles_per_block);
      grid = std::min<std::uint64_t>(grid, std::max<std::uint64_t>(props_.multiProcessorCount,
                                                                   (n_tiles - tile_first + per - 1) / per));
    }
    if (policy_.max_blocks > 0) grid = std::min<std::uint64_t>(grid, policy_.max_blocks);
    grid = std::max<std::uint64_t>(1, std::min<std::uint64_t>(grid, n_tiles - tile_first));
    kernel<<<static_cast<unsigned>(grid), B, smem, stream_>>>(f, sp, dmap, stride, n_sel, tile_first, n_tiles, tile_est_.data(),
                                                              tile_var_.data(), bins_.data(), over_.data(), shared_bins,
                                                              flags_.data(),
                                                              philox_schedule::make(sp.seed, stream_id::vegas, sp.iteration));
    MCUBES_CUDA_CHECK_LAUNCH("v_sample_kernel");
    return static_cast<int>(grid);
  }

  /// Device bins for n values: level 0 (bins_) and the max_bin_level overflow levels (over_,
  /// 256 bytes per bin in all, zeroed once here; only levels a pass reached are zeroed again).
  void ensure_bins(std::size_t n) {
    if (bins_.size() < n) {
      bins_ = device_array<bin_accumulator>(n);
      over_ = device_array<bin_accumulator>(static_cast<std::size_t>(max_bin_level) * n);
      MCUBES_CUDA_CHECK(cudaMemsetAsync(bins_.data(), 0, n * sizeof(bin_accumulator), stream_));
      MCUBES_CUDA_CHECK(cudaMemsetAsync(over_.data(), 0, over_.size() * sizeof(bin_accumulator), stream_));
      bins_clean_ = true;
      over_dirty_ = 0;
    }
  }

  /// Largest shared memory (static + dynamic scratch) of adapt_map_kernel without an opt-in: the
  /// scratch is in shared memory up to n_bins ~ 1100, else in global memory.
  static constexpr std::size_t adapt_smem_limit = 48 * 1024;
  long adapt_static_smem_ = -1;  ///< static shared memory of adapt_map_kernel (queried once)

  cuda_launch_policy policy_;
  int device_ = 0;
  cudaDeviceProp props_{};
  cudaStream_t stream_ = nullptr;
  device_array<double> tile_est_, tile_var_, replay_, adapt_scratch_, map_storage_;
  pinned_array<double> host_edges_;
  device_array<cuda_detail::pass_result> result_;
  device_array<bin_accumulator> bins_, over_;
  bool bins_clean_ = false;  ///< bins_ all zero (after adapt_map_kernel or allocation)
  std::size_t over_dirty_ = 0;  ///< over_ is zero beyond its first over_dirty_ accumulators
  int last_top_ = 0;            ///< top bin level of the last adapting pass
  device_array<cuda_detail::device_flags> flags_;
  device_array<double> array_x_, array_values_;  ///< the array path's points and values of a slice
  device_array<double> vector_tiles_, vector_out_;  ///< vector passes: tile values (element-major), sums and flags
  pinned_array<double> host_vector_out_;
  pinned_array<cuda_detail::pass_result> host_result_;
  pinned_array<double> host_replay_;
  std::map<std::pair<const void*, std::size_t>, int> occupancy_;
  int last_grid_ = 0;
  launch_report last_launch_;
  bool last_shared_bins_ = false;
};

}  // namespace mcubes

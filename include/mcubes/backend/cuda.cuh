#pragma once
/// @file backend/cuda.cuh
/// CUDA backend of the m-Cubes loop (cuda_backend): the header users include. The class composes
/// the pieces of backend/cuda/ and dispatches the passes to them:
///   device.cuh       the device ordinal, its properties and the backend's stream (RAII);
///   occupancy.cuh    the launch policy, kernel occupancy and the one launch-grid rule;
///   pass_buffers.cuh the device and pinned buffers of the passes and their bookkeeping (bins,
///                    overflow levels), and a batch's state;
///   device_map.cuh   the maps in device memory (one run's, a batch's K) and device_map, the
///                    trivially copyable reference to one;
///   vegas_pass.cuh, vector_pass.cuh, batch_pass.cuh  the scalar, vector and batch passes;
///   heavy_cubes.cuh, batch_heavy_cubes.cuh  VEGAS+: the sub-cubes of many samples by segments
///                    (a scalar pass's; a batched round's), heavy_lists.cuh which sub-cubes they
///                    are and their lists, balanced_sample.cuh the passes with the threads
///                    balanced by samples (cuda_launch_policy::balance_above);
///   allocate.cuh     VEGAS+: the per-sub-cube counts of the next pass (and its heavy sub-cubes'
///                    lists, in the same launch); counts_allocator.cuh their owner, which also
///                    queues the next allocation behind a pass;
///   pass_flags.cuh   a pass's order-independent flags, its result record and their reductions;
///   adapt.cuh        the adaptation of the maps on the device;
///   *_kernels.cuh    the kernels (V-Sample / No-Adjust, vector, batch, adapt).
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
#include <cstddef>
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "../core/adaptive_map.hpp"
#include "../core/batch.hpp"
#include "../core/sampler.hpp"
#include "../core/sampling_pass.hpp"
#include "../core/stratification.hpp"
#include "../core/vector_pass_sums.hpp"
#include "../integrand.hpp"
#include "../options.hpp"
#include "cuda/adapt.cuh"
#include "cuda/allocate.cuh"
#include "cuda/batch_pass.cuh"
#include "cuda/check.cuh"
#include "cuda/device.cuh"
#include "cuda/device_array.cuh"
#include "cuda/device_map.cuh"
#include "cuda/launch.cuh"
#include "cuda/occupancy.cuh"
#include "cuda/pass_buffers.cuh"
#include "cuda/vector_pass.cuh"
#include "cuda/vegas_pass.cuh"
#include "team.hpp"
#include "worker_pool.hpp"

namespace mcubes {

/// CUDA backend: one device, one non-blocking stream, the launch policy and the device and pinned
/// buffers of its passes (kept between calls; no global or thread-local state). Not thread-safe:
/// one host thread at a time per backend; backends on different streams (of one device or several)
/// run concurrently and give their solo bits. Not copyable: owns device memory.
class cuda_backend {
 public:
  /// @throws invalid_input for a bad block size; cuda_error if there is no device or a call fails.
  explicit cuda_backend(cuda_launch_policy policy = {}, int device = 0)
      : policy_(cuda_detail::checked_policy(policy)),
        device_(device),
        occupancy_(device_.properties()),
        buffers_(device_.stream()) {}
  cuda_backend(const cuda_backend&) = delete;
  cuda_backend& operator=(const cuda_backend&) = delete;

  static std::string name() { return "cuda"; }
  /// The team (backend/team.hpp) whose ranks share every scalar pass and reduction, or null. With
  /// more than one rank each rank (a process of its own, or a thread of one process per device:
  /// vegas_on_devices) samples the chunks of its parts and the ranks exchange the parts' sums,
  /// flags and integer bins: every rank gets the bits of one device. Not owned. Vector integrands,
  /// batches and device array integrands throw invalid_input under a team (not split yet).
  const communicator* team = nullptr;
  /// The team's assignment of parts to ranks where it is not the even one (balance_team,
  /// algorithm/vegas.hpp: a VEGAS+ run's); the passes, reductions and counts of its chunking follow
  /// it. Never changes a result's bits.
  team_layout layout;
  const cudaDeviceProp& properties() const noexcept { return device_.properties(); }
  const cuda_launch_policy& policy() const noexcept { return policy_; }
  /// Number of blocks of the last V-Sample launch (for reports).
  int last_grid() const noexcept { return last_.grid; }
  /// Whether the last adapting launch kept its bins in shared memory.
  bool last_shared_bins() const noexcept { return last_.shared_bins; }
  /// VEGAS+: the sub-cubes sampled one segment per thread (their count above the segment length;
  /// backend/cuda/heavy_cubes.cuh, batch_heavy_cubes.cuh) by this backend's scalar passes and
  /// batched rounds so far, summed over them.
  std::uint64_t heavy_cubes_sampled() const noexcept { return last_.heavy_cubes; }
  /// VEGAS+: the scalar passes so far whose heavy sub-cubes were listed by the allocation before
  /// them (cuda_launch_policy::list_heavy_with_allocation), not by the pass.
  std::uint64_t heavy_lists_with_allocation() const noexcept { return last_.heavy_prelisted; }
  /// VEGAS+: the scalar passes so far that sampled their light sub-cubes sorted by count
  /// (cuda_launch_policy::sort_light_min_cubes; backend/cuda/sorted_sample.cuh).
  std::uint64_t sorted_passes() const noexcept { return last_.sorted_passes; }
  /// VEGAS+: the scalar passes so far of one sub-cube per chunk, with heavy sub-cubes, that sampled
  /// their light sub-cubes beside the heavy ones (cuda_launch_policy::spread_beside_heavy).
  std::uint64_t beside_passes() const noexcept { return last_.beside_passes; }
  /// VEGAS+: the allocations so far whose heavy sub-cubes did not fit the room kept for their lists
  /// (the next pass then listed them itself).
  std::uint64_t heavy_lists_over_capacity() const noexcept { return allocator_.lists_over_capacity(); }
  /// The host workers of a batch's host work (algorithm/vegas_batch.hpp): at most 8 threads
  /// (hardware threads), started on first use (backend/worker_pool.hpp).
  worker_pool& host_workers() noexcept { return host_pool_; }

  // The map interface of a backend (algorithm/vegas.hpp).

  /// A uniform map of n_bins bins per axis in device memory (the edges of adaptive_map<D>(n_bins),
  /// copied), in storage the backend keeps between runs (no allocation for a run of the same size);
  /// invalidates the map of the previous call. @throws invalid_input if n_bins < 2; cuda_error if
  /// the allocation or copy fails.
  template <int D>
  device_map<D> make_map(int n_bins) {
    device_.use();
    adapter_.drop_queued();
    return map_storage_.make_uniform_async<D>(n_bins, device_.stream());
  }

  /// n doubles in device memory, uninitialised (VEGAS+'s per-sub-cube shares, algorithm/vegas.hpp
  /// cube_shares). @throws cuda_error if the allocation fails.
  device_array<double> make_cube_values(std::uint64_t n) {
    device_.use();
    buffers_.heavy.prelisted = {};  // lists read from shares of an address that may be reused
    allocator_.drop();              // and so is an allocation queued behind a pass
    return device_array<double>(static_cast<std::size_t>(n));
  }

  /// Replaces the map's edges (D * (n_bins + 1), axis-major; checked by check_map_edges), copied
  /// to the device in the backend's stream (synchronous).
  /// @throws invalid_input if `edges` is not a valid map; cuda_error if the copy fails.
  template <int D>
  void set_map_edges(device_map<D>& map, const std::vector<double>& edges) {
    check_map_edges(edges, D, map.n_bins);
    device_.use();
    adapter_.drop_queued();
    map_storage_.set_edges(map, edges, device_.stream());
  }

  // The chunk operations of a backend (backend/backend.hpp), in the backend's stream.

  /// Merges chunk(c) for c in [0, n_chunks) over the fixed tree (launch.cuh reduce_chunks): bitwise
  /// the same for any block size and grid, and as the CPU backend for the same chunk partials.
  /// ChunkFn and Merge: trivially copyable, callable on the device. Synchronises once.
  /// @throws cuda_error if a CUDA call fails.
  template <class T, class ChunkFn, class Merge>
  T reduce(std::uint64_t n_chunks, const ChunkFn& chunk, const Merge& merge) {
    device_.use();
    if (splits(team))  // this rank's parts (backend/team.hpp) in one launch, each over the tree of its chunks
      return team_reduce_parts<T>(*team, n_chunks, [&](const team_split& s) {
        return cuda_detail::reduce_parts<T>(chunk, merge, n_chunks, s.part_chunks, s.part_begin, s.part_end,
                                            policy_.threads_per_block, device_.stream(), &last_launch_, &scratch_);
      }, merge, &layout);
    return cuda_detail::reduce_chunks<T>(chunk, merge, n_chunks, policy_.threads_per_block, device_.stream(), &last_launch_,
                                         &scratch_);
  }
  /// The exact sum of the integer counts chunk(c), c in [0, n_chunks) (launch.cuh count_chunks).
  /// Under a team, `parts` (may be null) gets every part's count in part order.
  /// @throws cuda_error if a CUDA call fails.
  template <class ChunkFn>
  std::uint64_t count(std::uint64_t n_chunks, const ChunkFn& chunk, std::vector<std::uint64_t>* parts = nullptr) {
    device_.use();
    if (splits(team))  // exact integers: each rank's parts (one launch), added
      return team_reduce_parts<std::uint64_t>(*team, n_chunks, [&](const team_split& s) {
        return cuda_detail::reduce_parts<std::uint64_t>(cuda_detail::count_of<ChunkFn>{chunk}, plus_merge{}, n_chunks,
                                                        s.part_chunks, s.part_begin, s.part_end, policy_.threads_per_block,
                                                        device_.stream(), &last_launch_, &scratch_);
      }, plus_merge{}, &layout, parts);
    return cuda_detail::count_chunks(chunk, n_chunks, policy_.threads_per_block, device_.stream(), &last_launch_, &scratch_);
  }
  /// VEGAS+: the sum of the shares (with_total; else the first scale is s0) and the search of the
  /// counts' scale in one cooperative launch and one round trip (cuda/allocate.cuh): the total
  /// reduce(n_chunks, shares, plus_merge{}) gives and the scale and count that algorithm/vegas.hpp's
  /// search over count() finds, bit for bit. Not under a team that splits (each rank counts its
  /// own parts: reduce and count).
  /// @throws invalid_input if st.n_chunks > max_chunks; cuda_error if a CUDA call fails.
  cuda_detail::counts_allocation allocate_counts(const share_sum_chunk& shares, const count_sum_chunk& counts,
                                                 const stratification& st, bool with_total, double s0,
                                                 std::uint64_t base, std::uint64_t target) {
    device_.use();
    counts_request q;
    q.shares = shares;
    q.counts = counts;
    q.st = st;
    q.with_total = with_total ? 1 : 0;
    q.s0 = s0;
    q.base = base;
    q.target = target;
    return allocator_.allocate(q, policy_, buffers_.heavy, device_.multiprocessors(), device_.stream());
  }
  /// VEGAS+: the allocation (allocate_counts' arguments in a counts_request) that the run expects to
  /// ask for after the next scalar pass, queued behind that pass so that one wait of the host
  /// serves both (cuda_launch_policy::allocate_after_pass; cuda/counts_allocator.cuh). allocate_counts
  /// hands it back if it is then asked for as it was queued and nothing wrote the shares since;
  /// nothing else changes: the same counts, lists and bits. Ignored under a team that splits, with
  /// the policy off, and by any operation but a single scalar pass.
  void allocate_counts_after_pass(const counts_request& q) {
    if (!policy_.allocate_after_pass || splits(team)) return;
    allocator_.ask_after_next_pass(q);
  }
  /// VEGAS+: the allocations so far that allocate_counts_after_pass queued and allocate_counts used.
  std::uint64_t allocations_after_pass() const noexcept { return allocator_.used_after_pass(); }
  /// VEGAS+: allocate_counts for many integrals (a batch's members: algorithm/vegas.hpp,
  /// allocate_counts_of) in one launch and one round trip (cuda/allocate.cuh): result i is
  /// allocate_counts(requests[i]...)'s, bit for bit. Not under a team that splits.
  /// @throws invalid_input if a request has more than max_chunks chunks; cuda_error if a CUDA call fails.
  std::vector<cuda_detail::counts_allocation> allocate_counts_batch(const std::vector<counts_request>& requests) {
    device_.use();
    return cuda_detail::allocate_counts_batch(requests, allocation_requests_, allocation_results_, device_.stream());
  }
  /// Copies n values of `array` (make_cube_values) from `begin` to host memory `out` (balance_team's
  /// moves; synchronous). @throws cuda_error if the copy fails.
  void read_cube_values(const double* array, std::uint64_t begin, std::uint64_t n, double* out) {
    device_.use();
    MCUBES_CUDA_CHECK(cudaMemcpyAsync(out, array + begin, n * sizeof(double), cudaMemcpyDeviceToHost, device_.stream()));
    MCUBES_CUDA_CHECK(cudaStreamSynchronize(device_.stream()));
  }
  /// Copies n values from host memory `in` to `array` at `begin` (synchronous).
  /// @throws cuda_error if the copy fails.
  void write_cube_values(double* array, std::uint64_t begin, std::uint64_t n, const double* in) {
    device_.use();
    buffers_.heavy.prelisted = {};  // the shares a list was made from may change
    allocator_.drop();              // and those an allocation queued behind a pass read
    MCUBES_CUDA_CHECK(cudaMemcpyAsync(array + begin, in, n * sizeof(double), cudaMemcpyHostToDevice, device_.stream()));
    MCUBES_CUDA_CHECK(cudaStreamSynchronize(device_.stream()));
  }
  /// Geometry and kernel time of the last reduce or count (for reports).
  const launch_report& last_launch() const noexcept { return last_launch_; }
  /// The device ordinal and the stream the backend's work runs in.
  int device() const noexcept { return device_.ordinal(); }
  cudaStream_t stream() const noexcept { return device_.stream(); }

  /// The map's edges, copied to the host (synchronous; for reports and error messages).
  template <int D>
  std::vector<double> map_edges(const device_map<D>& map) {
    device_.use();
    return copy_map_edges(map, device_.stream());
  }

  /// Adapts `map` on the device to the bins of the last V-Sample pass (which stay on the device;
  /// sums.bins is empty here; sums.top_level says how many overflow levels it filled): the edges
  /// of adaptive_map::adapt, bit for bit. Asynchronous (the next pass in the stream sees the new
  /// map); zeroes the bins. @throws invalid_input if sums is not the last pass's.
  template <int D>
  void adapt_map(device_map<D>& map, const iteration_sums& sums, double alpha, double floor, bool symmetric) {
    device_.use();
    adapter_.adapt(map, buffers_, sums, alpha, floor, symmetric, map_storage_, device_.stream());
  }
  /// The adaptation (adapt_map's alpha, floor, symmetric) that the run will ask for after the next
  /// pass, an adapting one, queued behind that pass so that it runs while the host takes the pass's
  /// sums (cuda_launch_policy::adapt_after_pass; cuda/adapt.cuh); adapt_map then takes its edges.
  /// The same edges, bit for bit; where the run does not adapt to that pass (a rescaled or failed
  /// iteration) the map keeps its own. Ignored under a team that splits, with the policy off, by
  /// any operation but a single scalar pass over the map of the last make_map, and behind a pass
  /// with a VEGAS+ allocation beside it (cuda_launch_policy::allocate_beside).
  void adapt_map_after_pass(double alpha, double floor, bool symmetric) {
    if (!policy_.adapt_after_pass || splits(team)) return;
    adapter_.ask_after_next_pass(cuda_detail::adapt_request{alpha, floor, symmetric});
  }
  /// The adaptations so far that adapt_map took from behind their pass (adapt_map_after_pass).
  std::uint64_t adaptations_after_pass() const noexcept { return adapter_.used_after_pass(); }

  /// Test hook: copies `bins` (levels 0..top_level of n_values = bins.size() / (top_level + 1)
  /// exact sums each, level-major: iteration_sums::bins) to the device bins that adapt_map reads;
  /// pass top_level in the sums given to adapt_map.
  void upload_bins(const std::vector<bin_accumulator>& bins, int top_level = 0) {
    adapter_.drop_queued();
    buffers_.upload_bins(bins, top_level, device_.stream());
  }

  /// Largest number of components of a vector integrand on the CUDA backend (as on the CPU).
  static constexpr int max_vector_components = cuda_detail::max_vector_components;

  /// The backend's one sampling operation (backend/backend.hpp; the same contract as
  /// cpu_backend::sample_passes, except that a V-Sample pass's bin sums stay on the device for
  /// adapt_map: the returned sums' bins are empty): K = passes.size() passes of an integrand whose
  /// value per point is Values (double, or values<N>: core/sampling_pass.hpp) over the device map
  /// `map` (every pass's `integral` must be 0), one after the other in the stream, each
  /// synchronising once (a device array integrand: once per slice too, cuda/array_path.cuh).
  /// Policies: a scalar integrand, the V-Sample kernels (cuda/vegas_pass.cuh); values<N> (N <=
  /// max_vector_components), the vector kernels (cuda/vector_pass.cuh, vector_kernels.cuh): where
  /// the tile kernel fits (vector_tile_fits: N > 1 and the partials of 32 chunks fit in 96 KiB of
  /// shared memory, N <= 25) it runs with B = 64 threads per block if the policy allows at least
  /// 64, those fit too (N <= 18) and a multiprocessor then holds at least as many threads as with
  /// B = 32, else with B = 32; otherwise v_sample_vector_kernel with the policy's
  /// threads_per_block. None of this changes a bit of the result.
  /// @throws invalid_input for a pass whose `integral` is not 0, N > max_vector_components, and a
  ///         vector integrand under a team that splits; cuda_error if a CUDA call fails; whatever a
  ///         device array integrand throws.
  template <class Values = double, int D, class F>
  std::vector<pass_sums_t<Values>> sample_passes(const F& f, const device_map<D>& map,
                                                 const std::vector<sampling_pass<D>>& passes) {
    for (const sampling_pass<D>& p : passes)
      MCUBES_EXPECTS(p.integral == 0, "sample_passes: pass of integral ", p.integral, " over the map of one integral");
    constexpr int N = pass_form<Values>::components;
    if constexpr (N > 0) {
      MCUBES_EXPECTS(!splits(team), "vector integrands do not run across a team yet: run them on one device");
    }
    cuda_detail::pass_context cx = context();
    allocator_.drop_landed();  // a pass may write the shares it read; the one asked for runs behind a single scalar pass
    if (N != 0 || passes.size() != 1) allocator_.drop();
    adapter_.drop_queued();  // an adaptation queued behind an earlier pass and not taken (the bins change now)
    cuda_detail::adapt_request asked;  // so does the one asked for behind this pass
    if (adapter_.take_asked(asked) && N == 0 && passes.size() == 1) cx.adapt_after = &asked;
    std::vector<pass_sums_t<Values>> out;
    out.reserve(passes.size());
    for (const sampling_pass<D>& p : passes) {
      if constexpr (N == 0) {
        out.push_back(cuda_detail::sample_pass(cx, f, p.sp, p.st, map, p.adapt, p.stride, team, &layout));
      } else {
        buffers_.heavy.prelisted = {};  // the allocation's heavy lists are a scalar pass's only
        out.push_back(cuda_detail::sample_vector_pass<D, N>(cx, f, p.sp, p.st, map.view(), p.adapt, p.stride));
      }
    }
    return out;
  }

  // The batch interface of a backend (algorithm/vegas_batch.hpp).

  /// The device state of a parameter batch of n integrals: their maps (one buffer), parameters,
  /// bins and overflow levels (one buffer each), and per integral the bookkeeping of which bins
  /// are dirty (backend/cuda/pass_buffers.cuh). Owning; made by make_batch, used by one backend.
  /// Device memory: batch_bytes(n, n_bins).
  template <int D, class P>
  using batch_state = cuda_detail::batch_state<D, P>;

  /// Device memory of a batch of n integrals in D dimensions with n_bins bins per axis and
  /// parameters of param_bytes bytes: per integral D (n_bins + 1) 8-byte edges, D n_bins 16-byte
  /// bin sums, its pass descriptor and flags:
  ///   n * (8 D (n_bins + 1) + 16 D n_bins + sizeof(batch_item) + 64) bytes,
  /// plus the tile values of a round (16 bytes per tile of B chunks), plus, for each integral one
  /// of whose V-Sample passes reaches the overflow bin levels (a term 2^31 times the largest of the
  /// pass its bin scale came from: rare), its max_bin_level = 16 levels, 256 D n_bins bytes,
  /// allocated then (sample_passes).
  template <int D, class P>
  static std::size_t batch_bytes(std::size_t n, int n_bins) {
    return cuda_detail::batch_bytes<D, P>(n, n_bins);
  }

  /// Checks that a batch of n integrals fits in the device memory that is free now (batch_bytes;
  /// vegas_batch checks the whole batch before it makes the states of its lanes).
  /// @throws invalid_input naming the figures if it does not; cuda_error if the query fails.
  template <int D, class P>
  void check_batch_memory(std::size_t n, int n_bins) {
    device_.use();
    cuda_detail::check_batch_memory<D, P>(n, n_bins);
  }

  /// Uniform maps (the edges of adaptive_map<D>(n_bins), computed on the device) and zero bins for
  /// n integrals; the parameters params[0..n) are copied with each round's pass descriptors.
  /// @throws invalid_input if the batch needs more device memory than is free (naming the figures);
  ///         cuda_error if an allocation or copy fails.
  template <int D, class P>
  batch_state<D, P> make_batch(const P* params, std::size_t n, int n_bins) {
    check_batch_memory<D, P>(n, n_bins);
    return cuda_detail::make_batch_state<D, P>(params, n, n_bins, device_.stream());
  }

  /// Whether this backend can start a batch's passes and finish them later (start_batch,
  /// finish_batch), so that vegas_batch pipelines two parts of a large batch: the host takes one
  /// part's sums while the device samples the other's.
  static constexpr bool batch_pipeline = true;

  /// sample_passes over a batch's maps (pass i through map k = its `integral`, with parameters
  /// params[k]): the passes in one launch per kind (V-Sample, No-Adjust) over all their tiles and
  /// one reduction for all (backend/cuda/batch_pass.cuh, batch_kernels.cuh); pass i's sums are
  /// bitwise those of its integral's pass alone: start_batch then finish_batch. Synchronises once
  /// (and once more per pass with a failing sample, to replay it). A V-Sample pass whose terms
  /// reach the overflow bin levels of an integral that has none yet is run again, once they are
  /// allocated (the same samples and bits; the bins of the first run are discarded). Scalar
  /// integrands only.
  /// @throws cuda_error if a CUDA call fails (an allocation included).
  template <class Values = double, int D, class F, class P>
  std::vector<pass_sums_t<Values>> sample_passes(const F& f, batch_state<D, P>& b,
                                                 const std::vector<sampling_pass<D>>& passes) {
    static_assert(pass_form<Values>::components == 0,
                  "a batch of vector-valued integrands is not a pass form of the CUDA backend yet");
    start_batch(f, b, passes);
    return finish_batch(f, b, passes);
  }

  /// Starts the passes of a batch's sample_passes on the backend's stream and returns without waiting for
  /// them.
  /// Another batch's passes may be started meanwhile; b's must be finished (finish_batch, with the
  /// same `passes`) before b is used again.
  /// @throws invalid_input if b's last passes were not finished; cuda_error if a CUDA call fails.
  template <int D, class F, class P>
  void start_batch(const F& f, batch_state<D, P>& b, const std::vector<batch_pass<D>>& passes) {
    MCUBES_EXPECTS(!splits(team), "batches do not run across a team on the CUDA backend yet: run them on one device");
    buffers_.heavy.prelisted = {};  // the allocation's heavy lists are the next scalar pass's only
    allocator_.drop();
    cuda_detail::pass_context cx = context();
    cuda_detail::start_batch_passes(cx, f, b, passes);
  }

  /// Waits for the passes that start_batch started on b (the same `passes`) and returns their sums,
  /// in the order of `passes` (see sample_passes).
  /// @throws invalid_input if b has no started passes or `passes` is not theirs; cuda_error if a
  ///         CUDA call fails.
  template <int D, class F, class P>
  std::vector<iteration_sums> finish_batch(const F& f, batch_state<D, P>& b, const std::vector<batch_pass<D>>& passes) {
    cuda_detail::pass_context cx = context();
    return cuda_detail::finish_batch_passes(cx, f, b, passes);
  }

  /// Adapts map k to the bins of its last V-Sample pass for each (k, sums) in `items`, in one
  /// launch (adapt_map_batch_kernel; the edges of adaptive_map::adapt, bit for bit); zeroes the
  /// bins it reads. Asynchronous. @throws invalid_input if a sums' top level is not its last
  /// pass's; cuda_error if a CUDA call fails.
  template <int D, class P>
  void adapt_batch(batch_state<D, P>& b, const std::vector<std::pair<std::size_t, const iteration_sums*>>& items,
                   double alpha, double floor, bool symmetric) {
    if (items.empty()) return;
    device_.use();
    adapter_.adapt_batch(b, items, alpha, floor, symmetric, device_.stream());
  }

  /// The edges of integral k's map, copied to the host (synchronous).
  template <int D, class P>
  std::vector<double> batch_map_edges(const batch_state<D, P>& b, std::size_t k) {
    device_.use();
    return b.maps.copy_to_host(k, device_.stream());
  }
  /// Replaces integral k's map (a resumed batch: algorithm/vegas_batch.hpp), copied to the device
  /// in the backend's stream (synchronous). @throws invalid_input if `edges` is not a valid map of
  /// the batch's size (check_map_edges); cuda_error if the copy fails.
  template <int D, class P>
  void batch_set_map_edges(batch_state<D, P>& b, std::size_t k, const std::vector<double>& edges) {
    check_map_edges(edges, D, b.n_bins);
    device_.use();
    b.maps.copy_from_host(k, edges, device_.stream());
  }

 private:
  cuda_detail::pass_context context() noexcept {
    return {device_, policy_, occupancy_, buffers_, last_, allocator_, adapter_, map_storage_, nullptr};
  }

  cuda_launch_policy policy_;             ///< checked before anything else is made
  cuda_detail::device_stream device_;     ///< the device, its properties and the stream
  cuda_detail::kernel_occupancy occupancy_;
  cuda_detail::pass_buffers buffers_;     ///< the single passes' buffers (after the stream: made in it)
  cuda_detail::device_map_storage map_storage_;
  cuda_detail::map_adapter adapter_;
  cuda_detail::launch_choice last_;       ///< the last V-Sample launch (for reports)
  launch_report last_launch_;             ///< the last reduce or count (for reports)
  worker_pool host_pool_{host_worker_threads()};  ///< a batch's host work
  device_array<unsigned char> scratch_;           ///< the reductions' and counts' device values (kept)
  cuda_detail::counts_allocator allocator_;                    ///< allocate_counts (and behind a pass)
  device_array<counts_request> allocation_requests_;           ///< allocate_counts_batch's requests (kept)
  device_array<cuda_detail::counts_allocation> allocation_results_;  ///< and its results
};

}  // namespace mcubes

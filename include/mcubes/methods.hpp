#pragma once
/// @file methods.hpp
/// The one-call entry of every method and the integrator object, on the backend that the options'
/// execution fields (execution.hpp) name. One function name runs a method on either backend:
///
///   mcubes::vegas(f, region, vegas_options)            m-Cubes (algorithm/vegas.hpp)
///   mcubes::integrator<D>(region, vegas_options)       m-Cubes keeping its adaptive map (below)
///   mcubes::plain_mc(f, region, plain_mc_options)      plain Monte Carlo (algorithm/plain_mc.hpp)
///   mcubes::midpoint(f, region, n, midpoint_options)   the midpoint rule (algorithm/midpoint.hpp)
///   mcubes::pi_monte_carlo(pi_options), pi_midpoint    pi (algorithm/pi.hpp)
///
/// Backends: `cpu` always; `cuda` in translation units compiled by nvcc (include <mcubes/cuda.cuh>
/// there), on device opt.device; `automatic`: CUDA when compiled by nvcc and a device is present,
/// else the CPU. result.backend says which ran. This file is the only place that asks whether the
/// translation unit has the CUDA backend: its two versions live in different inline namespaces, so
/// that a program mixing both kinds of translation units (e.g. the mcubes command) has no two
/// different definitions of one function.
///
/// Each one-call entry makes its backend for the call (the CUDA backend: a stream and its buffers,
/// about a millisecond); to integrate many times on the GPU, keep an integrator.

#include <atomic>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <type_traits>
#include <utility>
#include <vector>

#include "algorithm/midpoint.hpp"
#include "algorithm/pi.hpp"
#include "algorithm/plain_mc.hpp"
#include "algorithm/vegas.hpp"
#include "algorithm/vegas_batch.hpp"
#include "algorithm/vegas_vector.hpp"
#include "backend/backend.hpp"
#include "backend/cpu.hpp"
#include "checkpoint.hpp"
#include "error.hpp"
#include "execution.hpp"
#include "integrand.hpp"
#include "options.hpp"
#include "region.hpp"
#include "result.hpp"

#if defined(__CUDACC__)
#include "algorithm/devices.hpp"
#include "backend/cuda.cuh"
#endif

namespace mcubes {
#if defined(__CUDACC__)
inline namespace nvcc_front_end {
/// Whether this translation unit reaches the CUDA backend (compiled by nvcc).
inline constexpr bool has_cuda_backend = true;
#else
inline namespace host_front_end {
/// Whether this translation unit reaches the CUDA backend (compiled by nvcc).
inline constexpr bool has_cuda_backend = false;
#endif

/// Whether `ex` selects the CUDA backend here: backend cuda, or automatic with a CUDA device
/// present in a translation unit compiled by nvcc.
/// @throws invalid_input for bad execution options, or backend cuda in a translation unit not
///         compiled by nvcc.
inline bool uses_cuda(const execution& ex) {
  validate(ex);
#if defined(__CUDACC__)
  return ex.backend == backend_kind::cuda || (ex.backend == backend_kind::automatic && cuda_device_count() > 0);
#else
  MCUBES_EXPECTS(ex.backend != backend_kind::cuda,
                 "backend cuda requested, but this translation unit was not compiled by nvcc (include "
                 "<mcubes/cuda.cuh> in a .cu file to reach the CUDA backend)");
  return false;
#endif
}

/// Calls fn(backend) with a backend made for the call from `ex` (uses_cuda): a cuda_backend on
/// ex.device with ex.cuda_threads_per_block, or a cpu_backend with ex.threads. Returns what fn
/// returns. @throws as uses_cuda; cuda_error if CUDA is selected and the device cannot be used.
template <class Fn>
decltype(auto) on_backend(const execution& ex, Fn&& fn) {
  const int device = one_device_of(ex, "this method");
#if defined(__CUDACC__)
  if (uses_cuda(ex)) {
    cuda_backend backend(launch_policy_of(ex), device);
    backend.team = ex.team;
    return fn(backend);
  }
#else
  (void)uses_cuda(ex);
  (void)device;
#endif
  cpu_backend backend(ex.threads, ex.stop, ex.team);
  return fn(backend);
}

/// Plain Monte Carlo of f over `reg` on the backend of opt (algorithm/plain_mc.hpp: formula,
/// status, determinism). @throws as plain_mc_with and on_backend.
template <int D, class F>
result plain_mc(const F& f, const region<D>& reg, const plain_mc_options& opt = {}) {
  static_assert(!is_device_array_integrand_v<F>, "mcubes: plain_mc takes no device array integrand (vegas does)");
  if constexpr (check_integrand_here<D, F>()) {
    validate(opt);
    return on_backend(opt, [&](auto& backend) { return plain_mc_with<D>(f, reg, opt, backend); });
  } else {
    return {};
  }
}

/// The tensor-product midpoint rule with n_per_axis points per axis over `reg` on the backend of
/// opt (algorithm/midpoint.hpp). @throws as midpoint_with and on_backend.
template <int D, class F>
result midpoint(const F& f, const region<D>& reg, std::uint64_t n_per_axis, const midpoint_options& opt = {}) {
  static_assert(!is_device_array_integrand_v<F>, "mcubes: midpoint takes no device array integrand (vegas does)");
  if constexpr (check_integrand_here<D, F>()) {
    validate(opt);
    return on_backend(opt, [&](auto& backend) { return midpoint_with<D>(f, reg, n_per_axis, opt, backend); });
  } else {
    return {};
  }
}

/// The 1-D composite midpoint rule with N points on [a, b]:
///   estimate = ((b - a) / N) sum_{i=0}^{N-1} f(a + (i + 1/2) (b - a) / N),
/// for 1 <= N <= 2^52; f is callable with a double or with a point<1>. Error estimate and status as
/// the tensor-product rule: with N divisible by 3, error = |M_N - M_{N/3}| / 8 + 4 eps (b - a) mean|f|.
/// @throws invalid_input if a or b is not finite, a >= b, N = 0 or N > 2^52, or for bad options;
///         otherwise as midpoint<D>.
template <class F>
result midpoint(const F& f, double a, double b, std::uint64_t n, const midpoint_options& opt = {}) {
  const region<1> reg = midpoint_interval(a, b, n);
  return midpoint<1>(detail::as_point_integrand(f), reg, n, opt);
}

/// Monte Carlo pi with N = opt.samples on the backend of opt (algorithm/pi.hpp): the same hits on
/// every backend. @throws as pi_monte_carlo_with and on_backend.
inline pi_mc_result pi_monte_carlo(const pi_options& opt = {}) {
  validate(opt);
  return on_backend(opt, [&](auto& backend) { return pi_monte_carlo_with(opt, backend); });
}

/// pi by the composite midpoint rule for int_0^1 4 / (1 + x^2) dx with N points: result.error is
/// the rule's error estimate plus the rounding level 4 eps pi = 2.8e-15 (+Inf, status
/// not_converged, when N is not divisible by 3, 5 or 7). @throws as mcubes::midpoint.
inline result pi_midpoint(std::uint64_t n, const midpoint_options& opt = {}) {
  return midpoint(pi_integrand{}, 0.0, 1.0, n, opt);
}

/// An m-Cubes integrator that owns its adaptive map and its backend (Lepage's vegas.Integrator;
/// an owning object whose kernels get a trivially copyable view of the map). Made for a region
/// and options; the backend (the CPU threads, or a CUDA device with its stream and buffers) is made
/// once and kept. Each integrate() continues from the current map and iteration index:
///
///   mcubes::integrator<4> integ(region, opt);
///   integ.integrate(f, train);   // e.g. train.adapt_iterations = train.max_iterations = 10, skip 10
///   integ.integrate(f, measure); // adapt_iterations = 0, skip = 0: the map is frozen
///
/// gives bitwise what one vegas() call with max_iterations 10 + measure.max_iterations,
/// adapt_iterations 10 and skip 10 gives (same samples, same map, same weighted average), as long
/// as that call did not stop within the training iterations. A map can be read (edges()), set
/// (set_edges(): warm-start a similar integrand), saved and loaded (map_io.hpp, JSON, bitwise).
///
/// Determinism: as vegas (no execution field changes a result). Thread safety: one host thread at
/// a time per integrator; integrators are independent (on the GPU each has its own stream and
/// gives its solo bits when several run concurrently).
template <int D>
class integrator {
 public:
  /// Makes the backend of `opt` (execution fields) and a uniform map of map_bins_for(opt) bins per
  /// axis (opt.n_bins, or sized to opt.calls_per_iteration when 0).
  /// @throws invalid_input for bad options; cuda_error if CUDA is selected and cannot be used.
  explicit integrator(const mcubes::region<D>& reg, const vegas_options& opt = {})
      : region_(reg), options_(with_resolved_defaults(opt)) {
    validate(opt, D);
    const int device = one_device_of(opt, "the integrator class");
#if defined(__CUDACC__)
    if (uses_cuda(opt)) {
      cuda_ = std::make_unique<cuda_backend>(launch_policy_of(opt), device);
      cuda_map_ = cuda_->template make_map<D>(map_bins_for(opt));
      return;
    }
#else
    (void)uses_cuda(opt);
    (void)device;
#endif
    cpu_ = std::make_unique<cpu_backend>(opt.threads);
    cpu_map_ = std::make_unique<adaptive_map<D>>(map_bins_for(opt));
  }

#if defined(__CUDACC__)
  /// As above on the CUDA backend with a tuned launch policy (benchmarks; no field of the policy
  /// changes a result). @throws as above.
  integrator(const mcubes::region<D>& reg, const vegas_options& opt, const cuda_launch_policy& policy)
      : region_(reg), options_(with_resolved_defaults(opt)) {
    validate(opt, D);
    MCUBES_EXPECTS(uses_cuda(opt), "a CUDA launch policy needs backend cuda (or automatic with a device)");
    cuda_launch_policy p = policy;
    p.threads_per_block = opt.cuda_threads_per_block;
    cuda_ = std::make_unique<cuda_backend>(p, one_device_of(opt, "the integrator class"));
    cuda_map_ = cuda_->template make_map<D>(map_bins_for(opt));
  }
#endif

  /// Runs the options given at construction from the current map (vegas_continue).
  /// @throws as vegas_continue.
  template <class F>
  result integrate(const F& f, const iteration_callback& on_iteration = {}) {
    return integrate(f, options_, on_iteration);
  }

  /// Runs `opt` from the current map and iteration index (vegas_continue). opt's execution fields
  /// must be the integrator's, and opt.n_bins its map's (or 0: the map's, whatever the calls). @throws invalid_input if they differ or opt is invalid;
  /// otherwise as vegas_continue.
  /// Under a team (opt.team, execution::team): every rank makes the call; the integrator keeps that
  /// team for what reads every rank's VEGAS+ shares afterwards (checkpoint_of, checkpoint writes,
  /// sample, sampler: collectives), so the communicator must outlive those calls too.
  template <class F>
  result integrate(const F& f, const vegas_options& opt, const iteration_callback& on_iteration = {}) {
    if constexpr (check_integrand_here<D, F>())
      return run(f, opt, on_iteration);
    else
      return {};
  }
 private:
  template <class F>
  result run(const F& f, const vegas_options& options, const iteration_callback& on_iteration) {
    vegas_options opt = options;
    if (opt.n_bins == 0) opt.n_bins = n_bins();
    MCUBES_EXPECTS(opt.backend == options_.backend && opt.device == options_.device && opt.devices == options_.devices &&
                       opt.cuda_threads_per_block == options_.cuda_threads_per_block && opt.threads == options_.threads &&
                       opt.cuda_array_points == options_.cuda_array_points,
                   "an integrator's backend is fixed at construction: the options' backend, device(s), "
                   "cuda_threads_per_block, cuda_array_points and threads must be those it was made with");
    MCUBES_EXPECTS(opt.n_bins == n_bins(), "the integrator's map has ", n_bins(), " bins per axis, the options ask for ",
                   opt.n_bins);
    if constexpr (is_device_array_integrand_v<F>) {
      MCUBES_EXPECTS(!cpu_, "a device array integrand (its values computed by device code, e.g. a PyTorch or CuPy "
                     "function) runs on the CUDA backend only; this integrator's backend is ", backend_name());
    }
    // A resumed call: the checkpoint's options must be this call's (those that move the end aside).
    if (pending_ && !pending_->progress.records.empty()) {
      const std::string diff = checkpoint_difference(*pending_, pending_->integrand, D, region_lower(), region_upper(), opt, true);
      MCUBES_EXPECTS(diff.empty(), "the resumed checkpoint holds a call under way that this call cannot continue: ", diff);
    }
    const std::optional<checkpoint> from = std::move(pending_);
    pending_.reset();
    last_options_ = opt;
    vegas_resumption resumption;
    if (from) resumption.from = &from->progress;
    // Checkpoints of this call (checkpoint_to): written at its boundaries by the schedule, and at
    // its end when it was stopped (opt.stop, or on_iteration returned stop) or none was written.
    bool stopped = false;
    const iteration_callback watched = watching_stops(on_iteration, &stopped);
    std::optional<checkpoint_saver> saver;
    if (!checkpoint_path_.empty()) {
      checkpoint problem{checkpoint_integrand_, D, region_lower(), region_upper(), opt, {}, {}, {}, 0, {}};
      const std::string path = checkpoint_path_;
      saver.emplace(
          std::move(problem), [path](const std::string& bytes, bool durable) { write_file_atomically(path, bytes, durable); },
          checkpoint_schedule_, [&] { return stopped || (opt.stop != nullptr && opt.stop->requested()); });
      saver->set_team(opt.team);  // under a team: rank 0 writes (checkpoint_saver::set_team)
      resumption.save = saver->save();
    } else if (progress_hook_) {
      resumption.save = progress_hook_;  // checkpoint_with
    }
#if defined(__CUDACC__)
    if (cuda_) {
      cuda_->team = opt.team;  // this call's team (execution::team)
      return vegas_continue<D>(f, region_, opt, *cuda_, cuda_map_, state_, cuda_shares_, watched, resumption);
    }
#endif
    cpu_->stop = opt.stop;  // this call's stop request (execution::stop)
    cpu_->team = opt.team;  // and its team (execution::team)
    if constexpr (!is_device_array_integrand_v<F>)
      return vegas_continue<D>(f, region_, opt, *cpu_, *cpu_map_, state_, cpu_shares_, watched, resumption);
    return {};
  }

  std::vector<double> region_lower() const { return bounds_of(region_, true); }
  std::vector<double> region_upper() const { return bounds_of(region_, false); }

 public:
  /// Back to a uniform map at iteration 0, keeping the backend's resources (a resumed
  /// checkpoint not yet continued is dropped).
  void reset() {
    set_edges(adaptive_map<D>(n_bins()).edges());
    state_ = vegas_state{};
    pending_.reset();
  }

  /// The integrator's checkpoint (checkpoint.hpp) with `integrand` as the integrand's fingerprint
  /// (any text naming it and its parameters; a resume compares it as is): between calls, its map,
  /// state and VEGAS+ shares with no iteration of a call under way (the next integrate() continues
  /// from it, as from this integrator); after resume() of a checkpoint written during a call and
  /// before the next integrate(), that checkpoint's progress. Options: those of the last call
  /// (the construction's before any). Host data only: it resumes on any backend. After a call under
  /// a team (execution::team), a collective: every rank calls it, and gets every rank's shares.
  checkpoint checkpoint_of(const std::string& integrand) const {
    if (pending_) {
      checkpoint c = *pending_;
      c.integrand = integrand;
      return c;
    }
    checkpoint c{integrand, D, region_lower(), region_upper(), last_options_, {}, {}, {}, 0, {}};
    c.progress.state = state_;
    c.progress.edges = edges();
#if defined(__CUDACC__)
    if (cuda_) c.progress.shares = host_shares_of(*cuda_, cuda_shares_, state_);  // under a team: every rank's
#endif
    if (cpu_) c.progress.shares = host_shares_of(*cpu_, cpu_shares_, state_);
    return c;
  }

  /// Writes checkpoint_of(integrand) to `path` atomically and durably (save_checkpoint).
  /// @throws as write_file_atomically.
  void save_checkpoint(const std::string& path, const std::string& integrand) const {
    mcubes::save_checkpoint(path, checkpoint_of(integrand));
  }

  /// Continues from the checkpoint `c` (of this integrand: `integrand` is compared with its
  /// fingerprint): its map and state replace the integrator's at once; its VEGAS+ shares and, for
  /// a checkpoint written during a call (by checkpoint_to or the command's --checkpoint), that
  /// call's completed iterations are taken by the next integrate(), which then continues that
  /// call and ends with the bits of the call that was never stopped, on any backend, thread count
  /// or block size. That integrate() must be given the call's options, except max_iterations,
  /// min_iterations, rel_tol, abs_tol and max_chi2_dof (checkpoint_difference with force).
  /// @throws invalid_input naming the difference when c is of another integrand, dimension or
  ///         region, or of a map of another size; the integrate() throws invalid_input when its
  ///         options cannot continue the call.
  void resume(const checkpoint& c, const std::string& integrand) {
    const std::string diff =
        checkpoint_difference(c, integrand, D, region_lower(), region_upper(), c.options, false);
    MCUBES_EXPECTS(diff.empty(), "cannot resume this integrator from the checkpoint: ", diff);
    MCUBES_EXPECTS(c.progress.edges.size() == static_cast<std::size_t>(D) * (static_cast<std::size_t>(n_bins()) + 1),
                   "cannot resume this integrator from the checkpoint: its map has ",
                   c.progress.edges.size() / static_cast<std::size_t>(D) - 1, " bins per axis, not ", n_bins());
    set_edges(c.progress.edges);
    state_ = c.progress.state;
    pending_ = c;
    last_options_ = c.options;
  }
  /// resume() from the checkpoint file at `path` (load_checkpoint). @throws as load_checkpoint
  /// (unreadable, truncated, damaged or newer file) and as resume().
  void resume(const std::string& path, const std::string& integrand) { resume(load_checkpoint(path), integrand); }

  /// Every later integrate() writes its checkpoint to `path` (`integrand`: the fingerprint text)
  /// at its iteration boundaries by `schedule` (checkpoint_saver: at most 2 % of the run's time by
  /// default; the writes run on a thread beside the call) and at its end when it was stopped
  /// (execution::stop, or on_iteration returned stop) or nothing was written yet (unless the
  /// call was short and its checkpoint large: checkpoint_schedule::free_seconds); atomically
  /// (fsync first, except a finished call's end), so that the file holds the last written
  /// boundary, never a torn one. An empty path stops writing. A failing write ends the call with
  /// its exception (mcubes::error naming the path, at the next boundary); the previous checkpoint
  /// stays.
  /// @throws invalid_input for a bad schedule.
  void checkpoint_to(const std::string& path, const std::string& integrand, const checkpoint_schedule& schedule = {}) {
    MCUBES_EXPECTS(schedule.every_seconds >= 0 && schedule.duration_factor >= 0 && schedule.first_rate > 0 &&
                       schedule.free_seconds >= 0,
                   "a checkpoint schedule needs every_seconds >= 0, duration_factor >= 0, first_rate > 0 and "
                   "free_seconds >= 0");
    checkpoint_path_ = path;
    checkpoint_integrand_ = integrand;
    checkpoint_schedule_ = schedule;
  }

  /// Every later integrate() made while no checkpoint_to path is set hands its progress to `save`
  /// (vegas_resumption::save: at each iteration boundary and at the call's end, with a function
  /// that takes the progress, to be called only when needed) instead of writing a file of its own:
  /// how a larger checkpoint holds this call's progress, e.g. one integral's of a parameter batch
  /// run one integral after the other (the Python module's vegas_batch). Empty: none. Changes no
  /// number of the calls.
  void checkpoint_with(std::function<void(const std::function<vegas_progress()>&, bool)> save) {
    progress_hook_ = std::move(save);
  }

  /// The map's edges: D rows of n_bins + 1 unit coordinates, axis-major (adaptive_map's layout).
  std::vector<double> edges() const {
#if defined(__CUDACC__)
    if (cuda_) return cuda_->map_edges(cuda_map_);
#endif
    return cpu_map_->edges();
  }

  /// Replaces the map's edges (warm start). @throws invalid_input if they are not a valid map of
  /// n_bins bins per axis (check_map_edges).
  void set_edges(const std::vector<double>& edges) {
    pending_.reset();
#if defined(__CUDACC__)
    if (cuda_) return cuda_->set_map_edges(cuda_map_, edges);
#endif
    cpu_->set_map_edges(*cpu_map_, edges);
  }

  /// Where the run stands (the next iteration's index, the bin-scale reference, the VEGAS+
  /// allocation); set_state makes a loaded map continue exactly (map_io.hpp) under the uniform
  /// stratification. VEGAS+'s per-sub-cube shares are not part of a saved map: after set_state the
  /// allocation starts afresh (uniform counts in the next iteration).
  const vegas_state& state() const noexcept { return state_; }
  /// @throws invalid_input for a negative iteration index.
  void set_state(const vegas_state& s) {
    MCUBES_EXPECTS(s.next_iteration >= 0, "the next iteration index must be non-negative, got ", s.next_iteration);
    pending_.reset();
    state_ = s;
    state_.cubes = vegas_state::allocation{};
  }

  /// The sampling density the integrator has learnt (core/weighted_sample.hpp): the region, the
  /// map's edges and, after a VEGAS+ adapting iteration, its sub-cubes' shares (copied from the
  /// device on the CUDA backend). The same bits on every backend for the same training.
  sampling_density density() const {
    if (pending_) return density_from<D>(region_, pending_->progress.edges, n_bins(), state_, pending_->progress.shares);
#if defined(__CUDACC__)
    if (cuda_) return density_of<D>(region_, *cuda_, cuda_map_, state_, cuda_shares_);
#endif
    return density_of<D>(region_, *cpu_, *cpu_map_, state_, cpu_shares_);
  }

  /// Weighted samples (vegas's random_batch): n points of the region and weights such that
  /// sum_i w_i f(x_i) estimates the integral of f, drawn from the learnt map and VEGAS+
  /// allocation (core/weighted_sample.hpp: the design, the weights w = V J / (m n_c)). Train first
  /// (integrate() with adapting iterations); from an untrained integrator they are plain
  /// stratified Monte Carlo points. Computed on the host; the same bits for the same training,
  /// seed and n on every backend, and point i is the same in any range asked of sampler(n, seed).
  /// Needs n * (d + 1) doubles; for more points than fit, use sampler(n, seed).fill in ranges.
  /// @throws invalid_input if n is 0.
  weighted_points sample(std::uint64_t n, std::uint64_t seed) const { return sampler(n, seed).points(); }
  /// The sampler of sample(n, seed), to draw its points in ranges (weighted_sampler::fill).
  /// @throws invalid_input if n is 0.
  weighted_sampler sampler(std::uint64_t n, std::uint64_t seed) const { return weighted_sampler(density(), n, seed); }

  int n_bins() const noexcept { return options_.n_bins; }
  const mcubes::region<D>& region() const noexcept { return region_; }
  const vegas_options& options() const noexcept { return options_; }
  /// "cpu" or "cuda".
  std::string backend_name() const { return cpu_ ? cpu_backend::name() : std::string("cuda"); }

 private:
  mcubes::region<D> region_;
  vegas_options options_;
  vegas_options last_options_ = options_;  // the last call's (checkpoint_of)
  vegas_state state_;
  std::optional<checkpoint> pending_;       // resume(): taken by the next integrate()
  std::string checkpoint_path_, checkpoint_integrand_;
  checkpoint_schedule checkpoint_schedule_;
  std::function<void(const std::function<vegas_progress()>&, bool)> progress_hook_;  // checkpoint_with
  std::unique_ptr<cpu_backend> cpu_;
  std::unique_ptr<adaptive_map<D>> cpu_map_;
  cube_shares<cpu_backend> cpu_shares_;  // VEGAS+: the allocation's arrays, kept with state_
#if defined(__CUDACC__)
  std::unique_ptr<cuda_backend> cuda_;
  device_map<D> cuda_map_;
  cube_shares<cuda_backend> cuda_shares_;
#endif
};

/// Integrates f (`double operator()(const mcubes::point<D>&) const`; trivially copyable with a
/// __host__ __device__ operator for CUDA) over `reg` with m-Cubes on the backend of opt: one
/// integrator's integrate() from a uniform map (see vegas_continue for the algorithm, the statuses,
/// determinism and exceptions). `on_iteration`, if
/// given, is called after every iteration and may stop the run (result.hpp).
/// @throws as vegas_continue and on_backend.
template <int D, class F>
result vegas(const F& f, const region<D>& reg, const vegas_options& opt = {}, const iteration_callback& on_iteration = {}) {
  if constexpr (check_integrand_here<D, F>()) {
#if defined(__CUDACC__)
    if constexpr (!is_device_array_integrand_v<F>)
      if (opt.devices.size() > 1 && uses_cuda(opt)) return vegas_on_devices<D>(f, reg, opt, opt.devices, on_iteration);
#endif
    expect_devices_on_cuda(opt);
    integrator<D> integ(reg, opt);  // a uniform map at iteration 0 on the backend of opt
    return integ.integrate(f, on_iteration);
  } else {
    return {};
  }
}

/// A parameter batch (algorithm/vegas_batch.hpp): integrates f(x, params[k]) over regions[k] (one
/// region: the same for all) for k = 0..K-1 with m-Cubes on the backend of opt, in rounds that
/// cover every active integral at once. f: `double operator()(const mcubes::point<D>&, const P&)
/// const`, P trivially copyable (for CUDA, f trivially copyable with a __host__ __device__ operator).
/// Result k is bitwise vegas(with_parameters<F, P>{f, params[k]}, region_k, opt with
/// seed = batch_seed(opt.seed, k)), whatever K, the other members, the threads or the block size.
/// With `failures` (non-null), a failing integral leaves the batch instead of ending it
/// (vegas_batch_with: (*failures)[k] its exception, the others unchanged).
/// `checkpoints` (checkpointing): the batch writes its checkpoint (every integral's progress,
/// checkpoint.hpp) to checkpoints.path at its round boundaries, and continues the batch of
/// checkpoints.from, whose parameters (each P's bytes as doubles, detail::parameter_values, then
/// for one region per integral its lower and upper bounds) and problem must be this call's. A
/// continued batch ends with the bits of the batch never stopped, on any backend, thread count,
/// block size or device count.
/// @throws invalid_input for bad options or sizes, or a checkpoint of another problem (naming the
///         difference); batch_error (failure nested) if an integral fails and `failures` is null;
///         as on_backend; whatever a checkpoint write throws.
template <int D, class F, class P>
std::vector<result> vegas_batch(const F& f, const std::vector<mcubes::region<D>>& regions, const std::vector<P>& params,
                                const vegas_options& opt = {}, const batch_callback& on_round = {},
                                batch_failures* failures = nullptr, const checkpointing& checkpoints = {}) {
  static_assert(std::is_trivially_copyable_v<P>, "mcubes: the parameters of a batch must be trivially copyable");
  if constexpr (check_integrand_here<D, with_parameters<F, P>>()) {
    validate(opt, D);
    validate_batch(params.size(), regions.size());
    bool stopped = false;  // by on_round (the end is then written durably)
    const batch_callback watched = watching_stops(on_round, &stopped);
    std::optional<call_checkpoints> cps;
    if (checkpoints.active()) {
      checkpoint problem{checkpoints.integrand, D, bounds_of(regions[0], true), bounds_of(regions[0], false), opt,
                         {}, {}, {}, 0, {}};
      for (std::size_t k = 0; k < params.size(); ++k) {
        std::vector<double> v = detail::parameter_values(params[k]);
        if (regions.size() > 1)
          for (const bool lower : {true, false})
            for (double b : bounds_of(regions[k], lower)) v.push_back(b);
        problem.parameters.push_back(std::move(v));
      }
      cps.emplace(checkpoints, std::move(problem),
                  [&] { return stopped || (opt.stop != nullptr && opt.stop->requested()); });
      if (cps->saver() != nullptr) cps->saver()->set_team(opt.team);
    }
    const batch_resumption resume = cps ? cps->batch() : batch_resumption{};
#if defined(__CUDACC__)
    if (opt.devices.size() > 1 && uses_cuda(opt))
      return vegas_batch_on_devices<D>(f, regions, params, opt, opt.devices, watched, failures, resume);
#endif
    expect_devices_on_cuda(opt);
    return on_backend(opt, [&](auto& backend) {
      return vegas_batch_with<D>(f, regions, params, opt, backend, watched, failures, resume);
    });
  } else {
    return {};
  }
}

/// vegas_batch with one region for every integral.
template <int D, class F, class P>
std::vector<result> vegas_batch(const F& f, const mcubes::region<D>& reg, const std::vector<P>& params,
                                const vegas_options& opt = {}, const batch_callback& on_round = {},
                                batch_failures* failures = nullptr, const checkpointing& checkpoints = {}) {
  return vegas_batch<D>(f, std::vector<mcubes::region<D>>{reg}, params, opt, on_round, failures, checkpoints);
}

/// Integrates the vector-valued f (`mcubes::values<N> operator()(const mcubes::point<D>&) const`,
/// 1 <= N <= 64) over `reg` with m-Cubes: every component from the same samples, with the N x N
/// covariance of the estimates and the correlated chi2 (algorithm/vegas_vector.hpp: formulas,
/// stopping rule, determinism) on the backend of opt.
/// `checkpoints` (checkpointing): the run writes its checkpoint (component 0's run and every
/// iteration's estimates and covariance, checkpoint.hpp) to checkpoints.path at its iteration
/// boundaries, and continues the vector run of checkpoints.from (of N components and this
/// problem); a continued run ends with the bits of the run never stopped, on either backend and
/// any thread count or block size.
/// @throws invalid_input for bad options, backend cuda outside nvcc translation units, or a
///         checkpoint of another problem (naming the difference); as vegas_vector_with and
///         on_backend; whatever a checkpoint write throws. `on_iteration` as vegas's.
template <int D, class F>
auto vegas_vector(const F& f, const mcubes::region<D>& reg, const vegas_options& opt = {},
                  const iteration_callback& on_iteration = {}, const checkpointing& checkpoints = {}) {
  using value_type = std::decay_t<decltype(f(std::declval<const point<D>&>()))>;
  constexpr int N = value_type::size();
  static_assert(std::is_same_v<value_type, values<N>>, "mcubes: a vector integrand returns mcubes::values<N>");
  validate(opt, D);
  const int device = one_device_of(opt, "a vector integrand");
  bool stopped = false;  // by on_iteration (the end is then written durably)
  const iteration_callback watched = watching_stops(on_iteration, &stopped);
  std::optional<call_checkpoints> cps;
  if (checkpoints.active()) {
    cps.emplace(checkpoints,
                checkpoint{checkpoints.integrand, D, bounds_of(reg, true), bounds_of(reg, false), opt, {}, {}, {}, N, {}},
                [&] { return stopped || (opt.stop != nullptr && opt.stop->requested()); });
    if (cps->saver() != nullptr) cps->saver()->set_team(opt.team);
  }
  const vector_resumption resume = cps ? cps->vector() : vector_resumption{};
#if defined(__CUDACC__)
  if (uses_cuda(opt)) {
    cuda_backend backend(launch_policy_of(opt), device);
    return vegas_vector_with<D, N>(f, reg, opt, backend, watched, N, resume);
  }
#else
  (void)uses_cuda(opt);  // backend cuda outside nvcc: invalid_input
  (void)device;
#endif
  cpu_backend backend(opt.threads, opt.stop, opt.team);
  return vegas_vector_with<D, N>(f, reg, opt, backend, watched, N, resume);
}

/// The same as vegas (the name the library used first for the entry with the CUDA backend).
template <int D, class F>
result integrate(const F& f, const region<D>& reg, const vegas_options& opt = {},
                 const iteration_callback& on_iteration = {}) {
  return vegas<D>(f, reg, opt, on_iteration);
}

}  // inline namespace
}  // namespace mcubes

// The CPU engine's explicit instantiation declarations where the program links it (precompiled.hpp).
#include "precompiled.hpp"

#pragma once
/// @file algorithm/vegas.hpp
/// The m-Cubes iteration loop (Sakiotis et al. 2022, Algorithm 2), shared by every backend:
///   plan sub-cubes -> backend samples chunks (V-Sample or V-Sample-No-Adjust) -> merge ->
///   weighted average (predictable weights, core/running_average.hpp) -> adapt the map (first adapt_iterations) -> stop test.
/// The backend only decides who computes which chunk (backend/cpu.hpp, backend/cuda.cuh).

#include <chrono>
#include <limits>
#include <memory>
#include <string>
#include <cmath>
#include <cstdio>
#include <cstdint>
#include <functional>
#include <type_traits>
#include <utility>
#include <vector>

#include "../backend/team.hpp"
#include "../core/adaptive_map.hpp"
#include "../core/cube_counts.hpp"
#include "../core/reduction.hpp"
#include "../core/running_average.hpp"
#include "../core/sample_diagnosis.hpp"
#include "../core/sampler.hpp"
#include "../core/sampling_pass.hpp"
#include "../core/stratification.hpp"
#include "../core/weighted_sample.hpp"
#include "../error.hpp"
#include "../integrand.hpp"
#include "../options.hpp"
#include "../region.hpp"
#include "../result.hpp"

namespace mcubes {

/// Iteration estimates below this magnitude (2^-460, about 3.4e-139) are in the underflow regime:
/// their squares are within 2^100 of the smallest normal double, so no variance can be trusted.
inline constexpr double underflow_estimate = 3.3589380537835444e-139;

/// Iteration estimates at or above this magnitude (2^560, about 3.8e168) have no representable
/// error: the smallest error the weighted average admits, 4 eps |I| (running_average), squared,
/// would exceed the double range near 2^562. Such an iteration throws numerical_error.
inline constexpr double overflow_estimate = 0x1p560;

namespace detail {
/// Whether a backend's array of cube values lives in device memory (has to_host(): cuda's device_array).
template <class V, class = void>
struct has_to_host : std::false_type {};
template <class V>
struct has_to_host<V, std::void_t<decltype(std::declval<const V&>().to_host())>> : std::true_type {};


/// x with 6 significant digits (for messages).
inline std::string format_double(double x) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.6g", x);
  return buf;
}

/// Number of chunks the bin-scale probe visits (1 in `stride` chunks).
inline std::uint64_t probe_stride(const stratification& st) {
  const std::uint64_t target = 1024;
  return st.n_chunks > target ? st.n_chunks / target : 1;
}

/// Throws for the first failing sample of an iteration (flags.first_non_finite): non_finite_integrand
/// (or table_out_of_range, core/sample_diagnosis.hpp) if f returned NaN or +-Inf there, overflow_error if f was finite but f J or (f J)^2 overflowed.
/// The point and the jacobian are recomputed on the host from the sample index (the same point on
/// every backend, random.hpp).
template <int D, class F>
[[noreturn]] void throw_sample_failure(const F& f, const sampling_params<D>& sp, const std::vector<double>& edges, int n_bins,
                                       int iteration, std::uint64_t index, double value) {
  const map_view<D> map{edges.data(), n_bins};
  std::uint64_t coord[D];
  cube_coordinates<D>(index / sp.p, sp.g, coord);
  point<D> x;
  int bin[D];
  const double jac = make_sample<D>(sp, map, coord, index, x, bin);
  if (std::isfinite(value)) throw overflow_error(iteration, index, std::vector<double>(x.x, x.x + D), value, jac);
  throw_non_finite<D>(f, iteration, index, x, value);
}

}  // namespace detail

/// Where a Vegas run stands between calls (integrator.hpp keeps one per adaptive map): the index of
/// the next iteration, which keys its random numbers (random.hpp), and the bin-scale reference of
/// the last adapting pass (the largest bin-contribution term; < 0 before the first). A run that
/// continues from a state draws exactly the samples that one longer run would have drawn.
struct vegas_state {
  int next_iteration = 0;
  double reference = -1;
  /// VEGAS+ (core/cube_counts.hpp): the allocation the next iteration samples with, for the grid
  /// of `n_cubes` sub-cubes and `calls` calls (a run of another grid or beta starts afresh). The
  /// shares themselves stay in the caller's two arrays (vegas_run::use_cube_shares), in the order
  /// `second_in` says (true: the second array holds the shares the counts read).
  struct allocation {
    std::uint64_t n_cubes = 0, calls = 0;
    std::uint32_t beta16 = 0;
    std::uint64_t n_base = 0, n_extra_max = 0;
    double scale = 0;
    bool has_shares = false;     ///< the counts read the shares (else n_base each)
    bool second_in = false;
    bool pending_total = false;  ///< an adapting iteration wrote shares not yet summed
    bool pending_count = false;  ///< new counts not yet counted
    std::uint64_t evaluations = 0;  ///< of the counts
  } cubes;
};

/// Where a run stands at an iteration boundary, with everything vegas_continue needs to continue it
/// bit for bit (checkpoint.hpp writes it to a file): the state (next iteration index, bin-scale
/// reference, VEGAS+ allocation), the map's edges, the VEGAS+ shares the next counts read, and the
/// iterations completed so far with their raw variances (the weighted average is rebuilt from them
/// by the arithmetic of the run itself). Host data, with no trace of the backend or its
/// parallelism: a run resumed on another backend, thread count or block size ends with the same bits.
struct vegas_progress {
  vegas_state state;                      ///< at the boundary: next_iteration is the next iteration's index
  std::vector<double> edges;              ///< the map: D rows of n_bins + 1 unit edges
  std::vector<double> shares;             ///< VEGAS+: the n_cubes shares of the next counts (empty: none)
  std::vector<iteration_record> records;  ///< the completed iterations of the run, in order
  std::vector<double> variances;          ///< each one's variance before the floor (records' error is floored)
  double seconds = 0;                     ///< wall time of the completed iterations
};

/// Largest iteration index (the random stream's counter word is 32 bits; iteration counts are int).
inline constexpr int max_iteration_index = 2147483647;

/// Bins per axis of a backend's map (adaptive_map or the CUDA device_map).
template <class Map>
int map_bins(const Map& map) {
  if constexpr (std::is_member_function_pointer_v<decltype(&Map::n_bins)>)
    return map.n_bins();
  else
    return map.n_bins;
}

/// One m-Cubes run as a sequence of sampling passes: the one owner of the iteration loop's
/// arithmetic (plan, weighted average, stopping rule, statuses), whoever runs the passes.
/// vegas_continue drives one run on a backend; the parameter batch (algorithm/vegas_batch.hpp)
/// drives many at once, each run seeing exactly the pass sums it would see alone, so that both give
/// the same bits.
///
/// Protocol: while !done(), run the pass described by params() / adapt() / stride() / strat()
/// (together: pass()) on the run's map (backend.sample_passes(f, map, {pass()})) and hand its sums
/// to take().
/// An iteration is one or more passes: the bin-scale probe (first adapting iteration only: a sparse
/// V-Sample whose largest term sets the fixed-point scale of the bins), the pass itself, and a
/// re-accumulation of the same samples with a new scale when a term outgrew it (rescale). take()
/// calls `fail(sp, iteration, index, value)` (which must throw) for a pass with a failing sample,
/// and `adapt(sums)` when the map must be adapted to the sums before the next pass. finish() gives
/// the result. The run keeps its place in the caller's vegas_state (next iteration index, bin-scale
/// reference), left where the run ended.
template <int D>
class vegas_run {
 public:
  /// min_chunk_samples: chunks of at least that many samples (make_stratification; 0, the scalar
  /// chunking, except for vector-valued integrands).
  /// @throws invalid_input for bad options (validate()), a state beyond the iteration index range.
  ///
  /// VEGAS+ (opt.stratification adaptive, core/cube_counts.hpp): the run needs two arrays of
  /// n_cubes() doubles in the backend's memory, given once by use_cube_shares() before the first
  /// pass, and before every pass the backend's reductions that needs_counts() asks for
  /// (allocate_counts() does both; vegas_continue and vegas_batch call it).
  ///
  /// `resume` (may be null): the completed iterations of a run that this one continues (its
  /// records and variances; the caller has restored the state, the map and the shares of the same
  /// vegas_progress): they are accumulated as they were, and the run goes on with the next.
  ///
  /// `converged_too` (may be empty): set_iteration_hooks' `converged`, given before the replay of
  /// `resume` so that a resumed run that had not converged in every component does not end.
  vegas_run(const region<D>& reg, const vegas_options& opt, vegas_state& state, std::string backend_name,
            int map_n_bins, std::uint64_t min_chunk_samples = 0, const vegas_progress* resume = nullptr,
            std::function<bool()> converged_too = {})
      : opt_(with_resolved_defaults(opt)), state_(state), run_start_(std::chrono::steady_clock::now()),
        st_(opt.stratification == stratification_mode::adaptive
                ? make_adaptive_stratification(D, opt.calls_per_iteration, min_chunk_samples)
                : make_stratification(D, opt.calls_per_iteration, min_chunk_samples)) {
    static_assert(D >= 1, "dimension must be at least 1");
    validate(opt, D);
    MCUBES_EXPECTS(map_n_bins == opt_.n_bins, "the adaptive map has ", map_n_bins,
                   " bins per axis, but the options ask for n_bins = ", opt_.n_bins);
    MCUBES_EXPECTS(state.next_iteration <= max_iteration_index - opt.max_iterations,
                   "iteration indices beyond 2^31 - 1: reset the integrator");
    for (int j = 0; j < D; ++j) {
      sp_.lower[j] = reg.lower()[j];
      sp_.width[j] = reg.width(j);
    }
    sp_.g = st_.g;
    sp_.inv_g = 1.0 / static_cast<double>(st_.g);
    sp_.n_cubes = st_.n_cubes;
    sp_.set_samples_per_cube(st_.samples_per_cube);
    sp_.chunk_cubes = st_.chunk_cubes;
    sp_.seed = opt.seed;
    sp_.bin_axes = opt.symmetric_map ? 1 : D;  // m-Cubes1D: axis 0's histogram adapts the one map
    if (st_.adaptive()) {
      vegas_state::allocation& a = state_.cubes;
      const auto beta16 = static_cast<std::uint32_t>(opt.beta * beta_steps);
      if (a.n_cubes != st_.n_cubes || a.calls != st_.calls || a.beta16 != beta16) {  // afresh: floor(N/m) each
        a = vegas_state::allocation{};
        a.n_cubes = st_.n_cubes;
        a.calls = st_.calls;
        a.beta16 = beta16;
        a.n_base = st_.calls / st_.n_cubes;
        a.evaluations = st_.n_eval();
      }
      sp_.counts.beta16 = beta16;
      sp_.counts.segment = st_.segment_samples;
      sync_counts();
    }
    cube_weight_ = reg.volume() / static_cast<double>(st_.n_cubes);  // V/m
    res_.seed = opt.seed;
    res_.options = opt_;
    res_.backend = std::move(backend_name);
    also_converged_ = std::move(converged_too);
    if (resume != nullptr) replay(*resume);
    if (phase_ != phase::done) start_iteration();
  }

  /// True when the run has ended (converged, max_iterations reached, or stopped).
  bool done() const noexcept { return phase_ == phase::done; }
  /// Iterations completed (their records are final).
  std::size_t completed() const noexcept { return res_.records.size(); }
  /// The run at its last iteration boundary (vegas_progress), with the map's `edges` and the VEGAS+
  /// `shares` the caller read from its backend (between passes: an iteration under way has drawn
  /// nothing yet when this is called from vegas_continue).
  vegas_progress progress(std::vector<double> edges, std::vector<double> shares) const {
    vegas_progress p;
    p.state = state_;
    if (phase_ != phase::done) p.state.next_iteration = it_;  // the iteration started is not part of it
    p.edges = std::move(edges);
    p.shares = std::move(shares);
    p.records = res_.records;
    p.variances = variances_;
    p.seconds = seconds_before_ + std::chrono::duration<double>(std::chrono::steady_clock::now() - run_start_).count();
    return p;
  }
  /// The next pass: its sampling parameters, whether it is a V-Sample (bins accumulated), and the
  /// chunk stride (> 1 only for the probe).
  const sampling_params<D>& params() const noexcept { return sp_; }
  bool adapt() const noexcept { return adapt_; }
  std::uint64_t stride() const noexcept { return stride_; }
  const stratification& strat() const noexcept { return st_; }
  /// The next pass as the backends take it (core/sampling_pass.hpp): params(), adapt(), stride()
  /// and strat(), through map 0 of the maps given with it (`integral`: the caller's to set).
  sampling_pass<D> pass(std::size_t integral = 0) const { return sampling_pass<D>{integral, sp_, adapt_, stride_, st_}; }
  /// The run's options (seed included).
  const vegas_options& options() const noexcept { return opt_; }
  /// Evaluations of the iterations completed so far.
  std::uint64_t evaluations() const noexcept { return res_.n_eval; }
  /// The region's volume over the number of sub-cubes, V / m: the factor of a pass's unscaled sums.
  double cube_weight() const noexcept { return cube_weight_; }
  /// Whether the run samples with VEGAS+ counts (then use_cube_shares() is needed).
  bool per_cube() const noexcept { return st_.adaptive(); }
  /// Sub-cubes of the grid, m.
  std::uint64_t n_cubes() const noexcept { return st_.n_cubes; }

  /// VEGAS+: the run's two arrays of n_cubes() doubles in the backend's memory (the passes read
  /// one and write the other; they swap after each adapting iteration). They must outlive the run.
  void use_cube_shares(double* a, double* b) {
    shares_in_ = state_.cubes.second_in ? b : a;
    shares_out_ = state_.cubes.second_in ? a : b;
    sync_counts();
    set_share_out();
  }
  /// VEGAS+: what the backend must compute before the next pass: 1, the sum of the shares that the
  /// last adapting iteration wrote (reduce(n_chunks, share_sum(), plus_merge{}), then
  /// set_share_total); 2, the scale of the new counts and their evaluations (count(n_chunks,
  /// count_sum(scale)) for the scales allocate_counts tries, then set_counts). 0: nothing.
  int needs_counts() const noexcept {
    if (!st_.adaptive()) return 0;
    return state_.cubes.pending_total ? 1 : (state_.cubes.pending_count ? 2 : 0);
  }
  /// VEGAS+: the array (the backend's memory) of the shares the next counts read; null before
  /// use_cube_shares().
  double* shares_in() const noexcept { return shares_in_; }
  share_sum_chunk share_sum() const noexcept { return {shares_in_, st_.n_cubes, st_.chunk_cubes}; }
  count_sum_chunk count_sum(double scale) const noexcept {
    count_sum_chunk c{sp_.counts, st_.n_cubes, st_.chunk_cubes};
    c.counts.scale = scale;
    return c;
  }
  /// VEGAS+: count_sum's functor for the counts that a usable sum of the shares gives (set_share_total:
  /// n_base = n_min, n_extra_max = n_cap - n_min, the shares the last adapting iteration wrote), at
  /// scale 0 (each try of the scale sets its own); what a backend that sums the shares and searches
  /// the scale in one step counts (allocate_counts).
  count_sum_chunk count_sum_after_total() const noexcept { return count_sum_after_total(shares_in_); }
  /// VEGAS+: whether the pass described by pass() ends an adapting iteration that is not the
  /// run's last, after which the run asks for the allocation allocation_after_pass(), and the
  /// stopping rule is unlikely to end the run there (may_end_after_pass): where it ends, an
  /// allocation computed behind the pass is not used. A choice of speed only.
  bool allocates_after_pass() const noexcept {
    return st_.adaptive() && adapt_ && sp_.counts.share_out != nullptr && (phase_ == phase::main || phase_ == phase::rescale) &&
           k_ + 1 < opt_.max_iterations && !may_end_after_pass();
  }
  /// Whether the run adapts its map to the next pass's bins unless that pass fails or must be
  /// re-accumulated (finish_iteration: an adapting main or rescaled pass). A backend may queue the
  /// adaptation behind the pass (cuda_backend::adapt_map_after_pass); nothing depends on it but the time.
  bool adapts_after_pass() const noexcept { return adapt_ && (phase_ == phase::main || phase_ == phase::rescale); }
  /// Whether the stopping rule may end the run at the iteration under way: it enters the average
  /// (k >= skip), the average then has min_iterations, and the last iteration's error is within
  /// 16 times the tolerance (an iteration's error seldom falls more than that from one iteration
  /// to the next). A guess for allocates_after_pass only; the rule itself is finish_iteration's.
  bool may_end_after_pass() const noexcept {
    if (k_ < opt_.skip || avg_.count() + 1 < opt_.min_iterations) return false;
    if (avg_.count() == 0 || res_.records.empty()) return true;
    const double tol = std::fmax(opt_.abs_tol, opt_.rel_tol * std::fabs(avg_.mean()));
    return !(res_.records.back().error > 16 * tol);
  }
  /// VEGAS+: the one-step allocation (counts_request: the sum of the shares and the search of the
  /// counts' scale) that the run will ask for after that pass: from the shares the pass writes
  /// (detail::counts_request_of once the iteration has ended). A backend may compute it behind the
  /// pass (cuda_backend::allocate_counts_after_pass); nothing depends on it but the time.
  counts_request allocation_after_pass() const noexcept {
    counts_request q;
    q.with_total = 1;
    q.shares = share_sum_chunk{shares_out_, st_.n_cubes, st_.chunk_cubes};
    q.counts = count_sum_after_total(shares_out_);
    q.st = st_;
    q.s0 = sp_.counts.scale;
    q.base = st_.n_cubes * q.counts.counts.n_base;
    q.target = st_.calls;
    return q;
  }
  /// The scale set_share_total chose, A / sum d_h (allocate_counts starts from it).
  double scale() const noexcept { return sp_.counts.scale; }
  /// The counts of the next iterations from the sum of the shares (core/cube_counts.hpp): n_h =
  /// n_min + min(n_cap - n_min, floor(d_h (N - m n_min) / total)); uniform floor(N/m) when the
  /// total is 0 (no sub-cube varied) or not finite.
  void set_share_total(double total) {
    vegas_state::allocation& a = state_.cubes;
    MCUBES_EXPECTS(a.pending_total, "vegas_run::set_share_total: no adapting iteration to allocate from");
    a.pending_total = false;
    const std::uint64_t m = st_.n_cubes;
    if (usable_share_total(total)) {
      with_shares(a, total);
    } else {
      a.n_base = st_.calls / m;
      a.n_extra_max = 0;
      a.scale = 0;
      a.has_shares = false;
      a.evaluations = m * a.n_base;
    }
    sync_counts();
  }
  /// The scale of the counts (allocate_counts: the largest that fits the calls) and their
  /// evaluations (sum of count(c) at that scale).
  void set_counts(double scale, std::uint64_t n) {
    MCUBES_EXPECTS(state_.cubes.pending_count, "vegas_run::set_counts: no new counts to count");
    state_.cubes.pending_count = false;
    state_.cubes.scale = scale;
    state_.cubes.evaluations = n;
    sync_counts();
  }

  /// Optional, for runs that integrate more than the scalar (vector-valued integrands,
  /// algorithm/vegas_vector.hpp): `done(rec)` is called when an iteration is complete, before the
  /// stopping test (rec.accumulated says whether it entered the average), and the run converges
  /// only where `converged()` also holds. Neither changes the scalar arithmetic.
  void set_iteration_hooks(std::function<void(const iteration_record&)> done, std::function<bool()> converged) {
    iteration_done_ = std::move(done);
    also_converged_ = std::move(converged);
  }

  /// Whether take(sums) will adapt the map (call its adapt_map): a V-Sample pass of an iteration
  /// (not the probe) with no failing sample (take hands one to `fail`, which throws) whose terms
  /// need no rescaling. Lets a batch start the adaptation of its maps before it takes the sums
  /// (algorithm/vegas_batch.hpp checks that take agrees).
  bool adapts_on(const iteration_sums& sums) const {
    if (!adapt_ || sums.flags.first_non_finite != ~std::uint64_t(0)) return false;
    if (phase_ == phase::rescale) return true;
    return phase_ == phase::main && !needs_rescale(sums.flags.max_contribution, sp_.bin_scale);
  }

  /// Takes the sums of the pass described by params(), adapt(), stride().
  /// @throws whatever `fail` throws for a failing sample; numerical_error as vegas_continue;
  ///         whatever on_iteration throws.
  template <class Fail, class Adapt>
  void take(iteration_sums& sums, Fail&& fail, Adapt&& adapt_map, const iteration_callback& on_iteration) {
    switch (phase_) {
      case phase::probe:
        reference() = sums.flags.max_contribution;
        sp_.bin_scale = scale_for(reference());
        phase_ = phase::main;
        stride_ = 1;
        set_share_out();
        return;
      case phase::main: {
        const chunk_partial& fl = sums.flags;
        if (fl.first_non_finite != ~std::uint64_t(0))
          fail(sp_, it_, fl.first_non_finite, fl.non_finite_value);
        if (adapt_ && needs_rescale(fl.max_contribution, sp_.bin_scale)) {
          sp_.bin_scale = scale_for(fl.max_contribution);  // same samples, exact re-accumulation
          rec_.rescaled = true;
          phase_ = phase::rescale;
          return;
        }
        finish_iteration(sums, adapt_map, on_iteration);
        return;
      }
      case phase::rescale:
        finish_iteration(sums, adapt_map, on_iteration);
        return;
      default:
        MCUBES_EXPECTS(false, "vegas_run::take: the run has ended");
    }
  }

  /// Ends the run where it stands (an external stop: status interrupted unless already ended). The
  /// iteration under way, if any, is dropped, and the state's next iteration index is set back to
  /// it, so that a later run continues as this one would have.
  void stop() {
    if (phase_ == phase::done) return;
    state_.next_iteration = it_;
    stopped_ = true;
    phase_ = phase::done;
  }

  /// The result (status, summary, records), and the final callback of a converged run.
  result finish(const iteration_callback& on_iteration = {}) {
    summarise();
    if (res_.status != status::converged) {
      bool any_nonzero = false, any_underflow = false;
      for (const iteration_record& r : res_.records) {
        any_nonzero = any_nonzero || r.n_nonzero > 0;
        any_underflow = any_underflow || r.underflow;
      }
      if (stopped_)
        res_.status = status::interrupted;
      else if (avg_.count() > 0)
        res_.status = status::not_converged;
      else if (!any_nonzero)
        res_.status = status::not_resolved;
      else if (any_underflow)
        res_.status = status::underflow;
      else
        res_.status = status::not_converged;  // non-zero samples only in skipped iterations
    }
    if (res_.status == status::converged && on_iteration) on_iteration(res_.records.back(), res_);
    res_.seconds = seconds_before_ + std::chrono::duration<double>(std::chrono::steady_clock::now() - run_start_).count();
    return std::move(res_);
  }

 private:
  enum class phase { probe, main, rescale, done };
  double& reference() { return state_.reference; }  // largest bin-contribution term of the last adapting pass (< 0: unknown)

  void start_iteration() {
    if (k_ >= opt_.max_iterations) {
      phase_ = phase::done;
      return;
    }
    it_ = state_.next_iteration++;  // the iteration's index in the random stream
    t0_ = std::chrono::steady_clock::now();
    adapt_ = k_ < opt_.adapt_iterations;
    sp_.iteration = static_cast<std::uint32_t>(it_);
    rec_ = iteration_record{};
    rec_.index = it_;
    rec_.adapted = adapt_;
    if (adapt_ && reference() < 0) {  // first adapting iteration: probe a sparse subset for the scale
      sp_.bin_scale = 1.0;
      stride_ = detail::probe_stride(st_);
      phase_ = phase::probe;
    } else {
      sp_.bin_scale = scale_for(reference());
      stride_ = 1;
      phase_ = phase::main;
    }
    set_share_out();
  }

  // VEGAS+: the pass writes its shares in an adapting iteration's full passes only (not the probe's).
  void set_share_out() {
    if (!st_.adaptive()) return;
    sp_.counts.share_out = adapt_ && phase_ != phase::probe ? shares_out_ : nullptr;
  }

  // VEGAS+: after an adapting iteration, its shares become the next counts' (set_share_total).
  void reallocate() {
    MCUBES_EXPECTS(shares_out_ != nullptr, "vegas_run: a VEGAS+ run needs use_cube_shares() before its first pass");
    std::swap(shares_in_, shares_out_);
    state_.cubes.second_in = !state_.cubes.second_in;
    state_.cubes.pending_total = true;
    sync_counts();
  }

  // VEGAS+: count_sum_after_total for the shares in `shares`.
  count_sum_chunk count_sum_after_total(const double* shares) const noexcept {
    vegas_state::allocation a = state_.cubes;
    with_shares(a, 1.0);
    count_sum_chunk c{sp_.counts, st_.n_cubes, st_.chunk_cubes};
    c.counts.n_base = a.n_base;
    c.counts.n_extra_max = a.n_extra_max;
    c.counts.share_in = shares;
    c.counts.scale = 0;
    return c;
  }

  // VEGAS+: the allocation from a usable sum of the shares (set_share_total).
  void with_shares(vegas_state::allocation& a, double total) const {
    a.n_base = st_.min_samples_per_cube;
    a.n_extra_max = st_.samples_per_cube - st_.min_samples_per_cube;
    a.scale = first_count_scale(st_, total);
    a.has_shares = true;
    a.pending_count = true;
  }

  // VEGAS+: the pass's counts from the state and the arrays.
  void sync_counts() {
    const vegas_state::allocation& a = state_.cubes;
    sp_.counts.n_base = a.n_base;
    sp_.counts.n_extra_max = a.n_extra_max;
    sp_.counts.scale = a.scale;
    sp_.counts.share_in = a.has_shares ? shares_in_ : nullptr;
  }

  void summarise() {
    constexpr double nan = std::numeric_limits<double>::quiet_NaN();
    const bool any = avg_.count() > 0;
    res_.estimate = avg_.mean();
    res_.error = any ? avg_.sdev() : std::numeric_limits<double>::infinity();
    res_.inverse_variance_estimate = any ? avg_.inverse_variance_mean() : nan;
    res_.inverse_variance_error = any ? avg_.inverse_variance_sdev() : nan;
    res_.warnings = 0;
    if (heavy_tail_) res_.warnings |= warning_heavy_tail;
    if (any && std::fabs(res_.inverse_variance_estimate - res_.estimate) > disagreement_sigmas * res_.error)
      res_.warnings |= warning_weighted_disagreement;
    res_.chi2_dof = any ? avg_.chi2_dof() : nan;
    res_.q = any ? avg_.q() : nan;
    res_.dof = avg_.dof();
    res_.accumulated = avg_.count();
  }

  // An accumulated iteration enters the weighted average (finish_iteration; replay, from a record).
  void accumulate(const iteration_record& rec, double variance) {
    // predictable weight: the previous accumulated iteration's variance (running_average.hpp); the
    // first accumulated iteration of the call has its own
    avg_.add(rec.estimate, variance, last_variance_ > 0 ? last_variance_ : variance);
    // two consecutive accumulated iterations on one frozen map estimate the same variance
    if (last_variance_ > 0 && !rec.adapted && !last_adapted_ && rec.error > heavy_tail_ratio * std::sqrt(last_variance_))
      heavy_tail_ = true;
    last_variance_ = std::fmax(variance, running_average::variance_floor(rec.estimate));
    last_adapted_ = rec.adapted;
  }

  // The completed iterations of a resumed run, as finish_iteration left them (its records are
  // final: weighted fields included); the stopping rule is applied to the last, so that a run
  // resumed from the checkpoint of its converged end ends there.
  void replay(const vegas_progress& p) {
    MCUBES_EXPECTS(p.records.size() == p.variances.size(), "a run's progress has ", p.records.size(), " records and ",
                   p.variances.size(), " variances");
    MCUBES_EXPECTS(static_cast<long long>(p.records.size()) <= opt_.max_iterations, "the run to continue has ",
                   p.records.size(), " completed iterations, more than max_iterations = ", opt_.max_iterations);
    for (std::size_t i = 0; i < p.records.size(); ++i) {
      const iteration_record& rec = p.records[i];
      res_.n_eval += rec.n_eval;
      if (rec.accumulated) accumulate(rec, p.variances[i]);
      res_.records.push_back(rec);
      variances_.push_back(p.variances[i]);
      res_.iterations = k_ + 1;
      ++k_;
    }
    seconds_before_ = p.seconds;
    if (!res_.records.empty()) {
      const double tol = std::fmax(opt_.abs_tol, opt_.rel_tol * std::fabs(avg_.mean()));
      if (avg_.count() >= opt_.min_iterations && avg_.sdev() <= tol && avg_.chi2_dof() <= opt_.max_chi2_dof &&
          (!also_converged_ || also_converged_())) {
        res_.status = status::converged;
        phase_ = phase::done;
      }
    }
    if (k_ >= opt_.max_iterations) phase_ = phase::done;
  }

  template <class Adapt>
  void finish_iteration(iteration_sums& sums, Adapt&& adapt_map, const iteration_callback& on_iteration) {
    constexpr double nan = std::numeric_limits<double>::quiet_NaN();
    iteration_record& rec = rec_;
    rec.top_bin_level = sums.top_level;
    rec.estimate = cube_weight_ * sums.estimate;
    const double variance = cube_weight_ * cube_weight_ * sums.variance;
    const auto where = [this] { return "iteration " + std::to_string(it_) + ": "; };  // only for an error
    if (!std::isfinite(rec.estimate))
      throw numerical_error(where() + "the estimate is not finite (a sum of values of f times the map's jacobian "
                                    "overflows the double range); rescale the integrand");
    if (!std::isfinite(variance))
      throw numerical_error(where() + "the variance of the estimate is not finite (squares of f times the map's "
                                    "jacobian overflow the double range, estimate " +
                            detail::format_double(rec.estimate) + "); rescale the integrand");
    if (std::fabs(rec.estimate) >= overflow_estimate)
      throw numerical_error(where() + "|estimate| = " + detail::format_double(std::fabs(rec.estimate)) +
                            " is at or above 2^560 (3.8e168), beyond which no error estimate is representable in "
                            "double precision; rescale the integrand");
    rec.error = std::sqrt(std::fmax(variance, running_average::variance_floor(rec.estimate)));
    rec.n_eval = st_.adaptive() ? state_.cubes.evaluations : st_.n_eval();
    rec.n_nonzero = sums.flags.n_nonzero;
    res_.n_eval += rec.n_eval;

    // An iteration whose estimate is so small that its square (the scale of its variance) is near
    // the underflow threshold cannot carry an error estimate: squares of its samples underflowed
    // to 0 and its variance would be 0 (e.g. a narrow peak not yet found, sampled only in the far
    // tails). It is reported and left out, like an all-zero iteration.
    rec.underflow = rec.n_nonzero > 0 && std::fabs(rec.estimate) < underflow_estimate;
    rec.accumulated = k_ >= opt_.skip && rec.n_nonzero > 0 && !rec.underflow;
    if (rec.accumulated) {
      accumulate(rec, variance);
      if (!std::isfinite(avg_.mean()) || !std::isfinite(avg_.sdev()))
        throw numerical_error(where() + "the weighted average of the iterations overflows the double range");
    }
    const bool any = avg_.count() > 0;
    rec.weighted_estimate = any ? avg_.mean() : nan;
    rec.weighted_error = any ? avg_.sdev() : nan;
    rec.chi2_dof = any ? avg_.chi2_dof() : nan;
    rec.q = any ? avg_.q() : nan;

    if (adapt_) {
      adapt_map(sums);  // on the host or the device
      if (sums.flags.max_contribution > 0) reference() = sums.flags.max_contribution;
      if (st_.adaptive()) reallocate();
    }
    rec.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0_).count();
    res_.records.push_back(rec);
    variances_.push_back(variance);
    res_.iterations = k_ + 1;

    if (iteration_done_) iteration_done_(rec);
    const double tol = std::fmax(opt_.abs_tol, opt_.rel_tol * std::fabs(avg_.mean()));
    if (avg_.count() >= opt_.min_iterations && avg_.sdev() <= tol && avg_.chi2_dof() <= opt_.max_chi2_dof &&
        (!also_converged_ || also_converged_())) {
      res_.status = status::converged;
      phase_ = phase::done;
      return;
    }
    if (on_iteration) {
      summarise();
      res_.seconds = seconds_before_ + std::chrono::duration<double>(std::chrono::steady_clock::now() - run_start_).count();
      if (on_iteration(res_.records.back(), res_) == run_control::stop) {
        stopped_ = true;
        phase_ = phase::done;
        return;
      }
    }
    ++k_;
    start_iteration();
  }

  vegas_options opt_;
  vegas_state& state_;
  std::chrono::steady_clock::time_point run_start_, t0_;
  stratification st_;
  sampling_params<D> sp_{};
  double cube_weight_ = 0;
  result res_;
  running_average avg_;
  double last_variance_ = 0;  // the last accumulated iteration's variance (floored), 0 before the first
  bool last_adapted_ = true;  // whether the last accumulated iteration adapted the map
  bool heavy_tail_ = false;   // warning_heavy_tail seen
  std::vector<double> variances_;  // each completed iteration's variance (vegas_progress)
  double seconds_before_ = 0;      // a resumed run's completed iterations' time
  iteration_record rec_;
  int k_ = 0;   // iteration of this call (0 .. max_iterations - 1)
  int it_ = 0;  // its index in the random stream
  bool adapt_ = false;
  std::uint64_t stride_ = 1;
  bool stopped_ = false;
  phase phase_ = phase::main;
  std::function<void(const iteration_record&)> iteration_done_;
  std::function<bool()> also_converged_;
  // VEGAS+ (use_cube_shares; the allocation itself is in state_.cubes)
  double* shares_in_ = nullptr;
  double* shares_out_ = nullptr;
};

/// Whether Backend sums the shares and searches the counts' scale in one step (cuda_backend::allocate_counts).
template <class B, class = void>
struct has_one_launch_allocation : std::false_type {};
template <class B>
struct has_one_launch_allocation<
    B, std::void_t<decltype(std::declval<B&>().allocate_counts(std::declval<const share_sum_chunk&>(),
                                                               std::declval<const count_sum_chunk&>(),
                                                               std::declval<const stratification&>(), bool{}, double{},
                                                               std::uint64_t{}, std::uint64_t{}))>> : std::true_type {};

/// Whether Backend computes the allocation a run expects after a pass behind that pass
/// (cuda_backend::allocate_counts_after_pass).
template <class B, class = void>
struct has_allocation_after_pass : std::false_type {};
template <class B>
struct has_allocation_after_pass<
    B, std::void_t<decltype(std::declval<B&>().allocate_counts_after_pass(std::declval<const counts_request&>()))>>
    : std::true_type {};

/// Whether Backend can queue a map's adaptation behind the pass it adapts to (cuda_backend::adapt_map_after_pass).
template <class B, class = void>
struct has_adapt_after_pass : std::false_type {};
template <class B>
struct has_adapt_after_pass<B, std::void_t<decltype(std::declval<B&>().adapt_map_after_pass(0.0, 0.0, false))>>
    : std::true_type {};

/// Whether Backend allocates many integrals' counts in one step (cuda_backend::allocate_counts_batch).
template <class B, class = void>
struct has_batch_allocation : std::false_type {};
template <class B>
struct has_batch_allocation<
    B, std::void_t<decltype(std::declval<B&>().allocate_counts_batch(std::declval<const std::vector<counts_request>&>()))>>
    : std::true_type {};

namespace detail {
/// Whether backend runs under a team that splits the sub-cubes (each rank then counts its parts).
template <class Backend>
bool team_splits(Backend& backend) {
  if constexpr (has_team_layout<Backend>::value) return splits(team_of(backend));
  else return false;
}
/// What run (needs_counts() != 0) asks of a one-step allocation.
template <int D>
counts_request counts_request_of(vegas_run<D>& run) {
  const stratification& st = run.strat();
  counts_request q;
  q.with_total = run.needs_counts() == 1 ? 1 : 0;
  q.shares = run.share_sum();
  q.counts = q.with_total != 0 ? run.count_sum_after_total() : run.count_sum(run.scale());
  q.st = st;
  q.s0 = run.scale();
  q.base = st.n_cubes * q.counts.counts.n_base;
  q.target = st.calls;
  return q;
}
/// Gives run a one-step allocation's result (false: the device refused the launch, nothing done).
template <int D, class Allocation>
bool take_allocation(vegas_run<D>& run, const Allocation& a) {
  if (!a.launched) return false;
  if (run.needs_counts() == 1) run.set_share_total(a.total);  // sets the base and the first scale as the kernel did
  if (run.needs_counts() == 2) run.set_counts(a.scale, a.count);
  return true;
}
}  // namespace detail

/// VEGAS+: the reductions the run needs before its next pass (vegas_run::needs_counts), on
/// `backend` (its reduce and count: the same bits on every backend). Nothing for a uniform run.
/// The scale: A / sum d_h first; where sub-cubes are capped at n_cap (or floors lose samples),
/// the counts then fall short of the calls, and the scale is raised to the largest one
/// find_count_scale tries whose counts stay within the calls (core/cube_counts.hpp), so that the
/// capped sub-cubes' excess goes to the others (water-filling). Exact integer counts and a
/// sequence of scales computed on the host from them: the same counts on every backend. A backend
/// with allocate_counts (the CUDA backend: one cooperative launch, one round trip) does both steps
/// at once with the same bits, unless a team splits the sub-cubes or the device refuses the launch.
template <int D, class Backend>
void allocate_counts(vegas_run<D>& run, Backend& backend, std::vector<std::uint64_t>* part_counts = nullptr) {
  const stratification& st = run.strat();
  if constexpr (has_one_launch_allocation<Backend>::value) {  // the CUDA backend: one launch, one round trip
    if (!detail::team_splits(backend) && run.needs_counts() != 0) {
      const counts_request q = detail::counts_request_of(run);
      if (detail::take_allocation(run, backend.allocate_counts(q.shares, q.counts, q.st, q.with_total != 0, q.s0, q.base,
                                                              q.target))) {
        if (part_counts != nullptr) part_counts->clear();
        return;
      }  // else the device refused the cooperative launch: the steps below
    }
  }
  if (run.needs_counts() == 1) run.set_share_total(backend.template reduce<double>(st.n_chunks, run.share_sum(), plus_merge{}));
  if (run.needs_counts() != 2) return;
  std::vector<std::pair<double, std::vector<std::uint64_t>>> tried;  // part_counts: each scale's counts per team part
  const auto count_at = [&](double s) {
    if constexpr (has_team_layout<Backend>::value) {
      if (part_counts != nullptr && splits(team_of(backend))) {
        std::vector<std::uint64_t> parts;
        const std::uint64_t c = backend.count(st.n_chunks, run.count_sum(s), &parts);
        tried.emplace_back(s, std::move(parts));
        return c;
      }
    }
    return static_cast<std::uint64_t>(backend.count(st.n_chunks, run.count_sum(s)));
  };
  const double s0 = run.scale();
  const count_scale found = find_count_scale(s0, count_at(s0), st.n_cubes * run.params().counts.n_base, st.calls, count_at);
  run.set_counts(found.scale, found.count);
  if (part_counts != nullptr) {
    part_counts->clear();
    for (auto& t : tried)
      if (t.first == found.scale) *part_counts = std::move(t.second);
  }
}

/// VEGAS+: allocate_counts for every run of `runs` (a batch's members), the same counts as each
/// alone; on a backend with allocate_counts_batch (the CUDA backend) the runs that need an
/// allocation get it in one launch and one round trip instead of one each. Nothing for uniform runs.
/// @throws as allocate_counts.
template <int D, class Backend>
void allocate_counts_of(const std::vector<vegas_run<D>*>& runs, Backend& backend) {
  if constexpr (has_batch_allocation<Backend>::value) {
    if (!detail::team_splits(backend)) {
      std::vector<counts_request> requests;
      std::vector<vegas_run<D>*> asking;
      for (vegas_run<D>* run : runs)
        if (run->needs_counts() != 0) {
          requests.push_back(detail::counts_request_of(*run));
          asking.push_back(run);
        }
      if (requests.size() > 1) {
        const auto found = backend.allocate_counts_batch(requests);
        for (std::size_t i = 0; i < asking.size(); ++i)
          if (!detail::take_allocation(*asking[i], found[i])) allocate_counts(*asking[i], backend);
        return;
      }
    }
  }
  for (vegas_run<D>* run : runs) allocate_counts(*run, backend);
}

/// VEGAS+ under a team (the backend's team splits): gives each rank about the same number of
/// samples in the next passes. `part_counts`: the counts of the next pass per part of the team's
/// split (allocate_counts); the new layout (balanced_layout) becomes the backend's, and the shares
/// the next counts read move to the ranks that now own their sub-cubes (team_move_cubes), so that
/// every rank still reads only shares it holds. A result's bits never depend on the layout (the
/// parts are nodes of the fixed tree). Nothing for a uniform run, a backend without a team, or
/// when the busiest rank would lose no more than 5 % of its samples (the common case once the map
/// has settled: the shares then stay where they are). A collective (every rank decides alike, in
/// integers). @throws as the backend's copies and the team's exchange.
template <int D, class Backend>
void balance_team(vegas_run<D>& run, Backend& backend, const std::vector<std::uint64_t>& part_counts) {
  if constexpr (has_team_layout<Backend>::value) {
    const communicator* team = team_of(backend);
    if (!splits(team) || !run.per_cube() || part_counts.empty() || run.shares_in() == nullptr) return;
    const stratification& st = run.strat();
    const int R = team->size();
    team_layout next = balanced_layout(st.n_chunks, R, part_counts);
    // the most samples any rank would take under the current layout and under the balanced one
    std::uint64_t most_now = 0, most_next = 0;
    for (int r = 0; r < R; ++r) {
      const team_split a = split_chunks(st.n_chunks, r, R, &backend.layout);
      const team_split b = split_chunks(st.n_chunks, r, R, &next);
      std::uint64_t na = 0, nb = 0;
      for (std::uint64_t p = a.part_begin; p < a.part_end; ++p) na += part_counts[p];
      for (std::uint64_t p = b.part_begin; p < b.part_end; ++p) nb += part_counts[p];
      most_now = std::max(most_now, na);
      most_next = std::max(most_next, nb);
    }
    // moving shares costs an exchange of O(moved sub-cubes): only for a gain of more than 5 %
    __extension__ typedef unsigned __int128 wide;
    if (static_cast<wide>(most_now) * 100 <= static_cast<wide>(most_next) * 105) return;
    double* shares = run.shares_in();
    team_move_cubes(
        *team, st.n_chunks, st.chunk_cubes, st.n_cubes, &backend.layout, &next,
        [&](std::uint64_t begin, std::uint64_t n, double* out) { backend.read_cube_values(shares, begin, n, out); },
        [&](std::uint64_t begin, std::uint64_t n, const double* in) { backend.write_cube_values(shares, begin, n, in); });
    backend.layout = std::move(next);
  }
}

/// The VEGAS+ arrays of runs on `backend` (one make_cube_values of 2 m per run: host or device
/// memory), handed to the runs (vegas_run::use_cube_shares); kept between calls by a caller that
/// keeps the runs' vegas_state (the integrator), so that a continued run samples as one longer run.
/// Empty for uniform runs.
template <class Backend>
struct cube_shares {
  using values_t = std::decay_t<decltype(std::declval<Backend&>().make_cube_values(std::uint64_t{}))>;
  std::unique_ptr<values_t> values;
  std::uint64_t size = 0;  ///< doubles held

  /// Arrays for runs[0..n) (all of one grid; kept if the size is unchanged), or nothing if they are
  /// uniform.
  template <class RunPtr>
  void attach(RunPtr* runs, std::size_t n, Backend& backend) {
    if (n == 0 || !runs[0]->per_cube()) return;
    const std::uint64_t m = runs[0]->n_cubes();
    if (!values || size != 2 * m * n) {
      values = std::make_unique<values_t>(backend.make_cube_values(2 * m * n));
      size = 2 * m * n;
    }
    for (std::size_t k = 0; k < n; ++k) runs[k]->use_cube_shares(values->data() + 2 * m * k, values->data() + 2 * m * k + m);
  }

  /// The shares that run k's next counts read (the last adapting iteration's d_h, whether or not
  /// they are summed yet; `a`: that run's vegas_state::allocation), copied to the host; empty when
  /// the run has none (uniform, or no adapting iteration yet).
  std::vector<double> host_shares(const vegas_state::allocation& a, std::size_t k = 0) const {
    if (!values || a.n_cubes == 0 || !(a.has_shares || a.pending_total)) return {};
    const std::uint64_t m = a.n_cubes;
    const std::uint64_t begin = 2 * m * k + (a.second_in ? m : 0);
    if (begin + m > size) return {};
    if constexpr (detail::has_to_host<values_t>::value) {
      return values->to_host(static_cast<std::size_t>(begin), static_cast<std::size_t>(m));  // m of the 2m
    } else {
      return std::vector<double>(values->data() + begin, values->data() + begin + m);
    }
  }

  /// Sets the shares that run k's next counts read (`a`: its allocation, already restored;
  /// attach() before) from host memory: a resumed run's (vegas_progress::shares).
  /// @throws invalid_input if there are no arrays for that allocation or the size differs.
  void set_host_shares(const vegas_state::allocation& a, const std::vector<double>& host, std::size_t k = 0) {
    const std::uint64_t m = a.n_cubes;
    MCUBES_EXPECTS(values && m == host.size() && 2 * m * (k + 1) <= size, "the run's VEGAS+ shares: ", host.size(),
                   " values for ", m, " sub-cubes");
    const std::uint64_t begin = 2 * m * k + (a.second_in ? m : 0);
    if constexpr (detail::has_to_host<values_t>::value) {
      std::vector<double> all = values->to_host();
      std::copy(host.begin(), host.end(), all.begin() + static_cast<std::ptrdiff_t>(begin));
      values->copy_from_host(all.data(), all.size());
    } else {
      std::copy(host.begin(), host.end(), values->data() + begin);
    }
  }

  /// set_host_shares for n runs at once (a resumed batch): item(i, a, host, k) names the i-th's
  /// allocation, shares and run index; one copy to and from the device for all of them.
  /// @throws invalid_input as set_host_shares.
  template <class Item>
  void set_host_shares_of(std::size_t n, const Item& item) {
    if (n == 0) return;
    std::vector<double> all;
    if constexpr (detail::has_to_host<values_t>::value) {
      MCUBES_EXPECTS(values != nullptr, "the runs' VEGAS+ shares: no arrays");
      all = values->to_host();
    }
    for (std::size_t i = 0; i < n; ++i) {
      const vegas_state::allocation* a = nullptr;
      const std::vector<double>* host = nullptr;
      std::size_t k = 0;
      item(i, a, host, k);
      const std::uint64_t m = a->n_cubes;
      MCUBES_EXPECTS(values && m == host->size() && 2 * m * (k + 1) <= size, "run ", k, "'s VEGAS+ shares: ",
                     host->size(), " values for ", m, " sub-cubes");
      const std::uint64_t begin = 2 * m * k + (a->second_in ? m : 0);
      if constexpr (detail::has_to_host<values_t>::value)
        std::copy(host->begin(), host->end(), all.begin() + static_cast<std::ptrdiff_t>(begin));
      else
        std::copy(host->begin(), host->end(), values->data() + begin);
    }
    if constexpr (detail::has_to_host<values_t>::value) values->copy_from_host(all.data(), all.size());
  }
};

/// Checkpoint and resume of one run (vegas_continue; checkpoint.hpp writes files of it). `from`:
/// continue the run of that progress (its map, state and shares replace the caller's, its
/// completed iterations are accumulated as they were). `save`: called at every iteration boundary
/// of the run (after an iteration, before the next is sampled) and once when it ends, whatever
/// the status, with a function that returns the progress there (it copies the map and the VEGAS+
/// shares from the backend: call it only when writing) and whether the run has ended.
struct vegas_resumption {
  const vegas_progress* from = nullptr;
  std::function<void(const std::function<vegas_progress()>& progress, bool ended)> save;
};

/// What weighted sampling (core/weighted_sample.hpp) takes of a run that ended with the map's
/// `edges` (n_bins per axis), `state` and the VEGAS+ `shares` (empty: none): the region, the map
/// and the shares of its sub-cube grid. The same bits whatever the backend that trained.
template <int D>
sampling_density density_from(const region<D>& reg, std::vector<double> edges, int n_bins, const vegas_state& state,
                              std::vector<double> shares) {
  sampling_density d;
  d.dim = D;
  d.n_bins = n_bins;
  for (int j = 0; j < D; ++j) {
    d.lower.push_back(reg.lower()[j]);
    d.upper.push_back(reg.upper()[j]);
  }
  d.edges = std::move(edges);
  d.shares = std::move(shares);
  if (!d.shares.empty()) {
    std::uint64_t g = 1;
    while (detail::saturating_pow(g + 1, D) <= state.cubes.n_cubes) ++g;
    d.g = g;
  }
  return d;
}

/// The VEGAS+ shares of `state` on the host (cube_shares::host_shares), every rank's when the
/// backend's team splits (execution::team: each rank holds the shares of its own chunks; they are
/// gathered over the scalar chunking of the state's n_cubes sub-cubes, team_gather_cubes: a
/// collective). Empty where the state has none.
template <class Backend>
std::vector<double> host_shares_of(const Backend& backend, const cube_shares<std::remove_const_t<Backend>>& shares,
                                   const vegas_state& state) {
  std::vector<double> v = shares.host_shares(state.cubes);
  const communicator* team = team_of(backend);
  if (splits(team) && !v.empty()) {
    const std::uint64_t m = state.cubes.n_cubes, chunk_cubes = (m + max_chunks - 1) / max_chunks;
    team_gather_cubes(team, (m + chunk_cubes - 1) / chunk_cubes, chunk_cubes, v, layout_of(backend));
  }
  return v;
}

/// density_from of what a run that ended with `map` (made by `backend`), `state` and `shares` holds
/// (under a team: every rank's shares, host_shares_of).
template <int D, class Backend, class Map>
sampling_density density_of(const region<D>& reg, Backend& backend, const Map& map, const vegas_state& state,
                            const cube_shares<std::remove_const_t<Backend>>& shares) {
  return density_from<D>(reg, backend.map_edges(map), map_bins(map), state, host_shares_of(backend, shares, state));
}

/// Integrates f over `reg` with m-Cubes on `backend` (backend/backend.hpp: name(), make_map<D>,
/// sample, adapt_map, map_edges), continuing from `map` (made by that backend) and `state`:
/// iteration k of this call (k = 0 .. max_iterations - 1) has the index state.next_iteration + k
/// in the random stream; it adapts the map when k < adapt_iterations and is accumulated when
/// k >= skip. The map and the state are left where the run ended, so that a later call continues
/// (train, then measure with a frozen map). From a uniform map and a fresh state this is the
/// whole m-Cubes run (vegas_with). The arithmetic is vegas_run's (above). With `shares` (VEGAS+'s
/// per-sub-cube arrays, kept by the caller with the state) the VEGAS+ allocation continues too;
/// without, it starts afresh.
///
/// Each iteration draws at most calls_per_iteration samples, stratified in m = g^d sub-cubes and
/// importance-sampled through the adaptive map: with opt.stratification uniform (m-Cubes,
/// stratification.hpp) p = calls/m in each (rounded down to m*p); adaptive (VEGAS+, the default,
/// core/cube_counts.hpp) at least n_min in each and the rest allocated to the sub-cubes whose
/// samples varied most in the last adapting iteration (array integrands sample uniformly). The result's
/// estimate and error are the weighted average of the iterations from `skip` on that had at least
/// one non-zero sample (an all-zero iteration carries no information and is reported, not
/// averaged; so is an iteration whose |estimate| is below 2^-460, whose variance underflows), with
/// predictable weights (core/running_average.hpp): iteration k's weight is 1 / the variance of the
/// previous accumulated iteration (its own for the first of the call), fixed before it is sampled,
/// so that iterations whose errors fall with their estimates (few non-zero samples, heavy tails)
/// do not bias the average as Lepage's inverse-variance weights do; error = sqrt(sum w_k^2 s_k^2) /
/// sum w_k, chi2 = sum (I_k - I)^2 / s_k^2. The inverse-variance average is reported beside it
/// (result::inverse_variance_estimate), and result::warnings flags the signs of an underestimated
/// error (result.hpp: warning). The run stops as converged at the first iteration where at least
/// min_iterations are accumulated, error <= max(abs_tol, rel_tol |estimate|) and
/// chi2/dof <= max_chi2_dof; as interrupted when `on_iteration` returns run_control::stop or
/// opt.stop is requested (execution.hpp's stop_request: looked at before every pass; the CPU
/// backend abandons a pass mid-way, which never contributes a partial iteration); otherwise
/// after max_iterations as not_converged, or (nothing accumulated) as not_resolved when no sample
/// was non-zero and as underflow when non-zero samples gave only underflowing estimates (result.hpp).
///
/// Before anything is accumulated, the records' weighted_estimate, weighted_error, chi2_dof and q
/// are NaN (there is no weighted estimate yet), never a misleading 0 +- 0; so are the result's
/// chi2_dof and q when nothing was accumulated, with error = +Inf.
///
/// Honest numerics: the error of an iteration is never below the rounding level 4 eps |I_k|
/// (running_average's floor), a sub-cube variance that is NaN (inf - inf) is never clamped to 0,
/// and the estimate, the error and chi2 are never NaN: any overflow throws.
///
/// Determinism: for a given (f, region, options less threads/block size) the result is bitwise
/// identical on every run and for any number of threads (see backend/cpu.hpp, reduction.hpp); the
/// callback only observes (or stops at an iteration boundary).
/// @throws invalid_input for bad options (validate()); non_finite_integrand if f returns NaN or
///         Inf (first sample in index order, with its point); overflow_error if f is finite but
///         f J or (f J)^2 overflows at a sample (the first in index order, with its point);
///         numerical_error if an iteration's estimate, variance or the weighted average overflows
///         (|I_k| >= overflow_estimate = 2^560, or a sum of finite terms beyond the double range);
///         whatever `on_iteration` throws.
///
/// `resume` (vegas_resumption): continue the run of a progress, and hand the progress to a saver at
/// every iteration boundary. A run continued from the progress of its k-th boundary ends with the
/// bits of the run that was never stopped (records' seconds aside), on any backend, thread count
/// or block size. @throws invalid_input for a progress that does not fit (map size, records,
/// shares); whatever `save` throws.
namespace detail {
/// The integrand's part of one run (vegas_driver): `sample` runs the run's next pass on its backend
/// (backend.sample_passes(f, map, {run.pass()})); `fail` throws
/// the failure of sample `index` of iteration `it` whose value was `value` (throw_sample_failure,
/// with the map the pass read).
template <int D>
struct run_passes {
  std::function<iteration_sums(const vegas_run<D>& run)> sample;
  std::function<void(const sampling_params<D>& sp, int it, std::uint64_t index, double value)> fail;
};

/// The loop of one run (vegas_continue, vegas_with) for every integrand of dimension D on a Backend
/// with maps of type Map: the integrand enters only through run_passes, so that one instantiation
/// of (D, Backend, Map) serves every integrand. A program that runs many integrands can compile it
/// once: `extern template struct mcubes::detail::vegas_driver<D, B, M>;` where it is used and
/// `template struct ...` in one unit (mcubes/precompiled.hpp). Members defined outside the
/// class, so that such a declaration suppresses their instantiation.
template <int D, class Backend, class Map>
struct vegas_driver {
  using shares_type = cube_shares<std::remove_const_t<Backend>>;
  /// vegas_continue's run (same contract).
  static result run(const region<D>& reg, const vegas_options& opt, Backend& backend, Map& map, vegas_state& state,
                    shares_type& shares, const iteration_callback& on_iteration, const vegas_resumption& resume,
                    const run_passes<D>& passes);
  /// vegas_with's run from `map` (made by the backend, uniform) and a fresh state (same contract).
  static result run_new(const region<D>& reg, const vegas_options& opt, Backend& backend, Map& map,
                        const iteration_callback& on_iteration, sampling_density* trained,
                        const vegas_resumption& resume, const run_passes<D>& passes);
};

template <int D, class Backend, class Map>
result vegas_driver<D, Backend, Map>::run(const region<D>& reg, const vegas_options& opt, Backend& backend, Map& map,
                                          vegas_state& state, shares_type& shares,
                                          const iteration_callback& on_iteration, const vegas_resumption& resume,
                                          const run_passes<D>& passes) {
  if (resume.from != nullptr) {
    backend.set_map_edges(map, resume.from->edges);
    state = resume.from->state;
  }
  vegas_run<D> run(reg, opt, state, backend.name(), map_bins(map), 0, resume.from);
  vegas_run<D>* one = &run;
  shares.attach(&one, 1, backend);
  // the shares, unless the run's grid or beta differs from the progress's (the allocation then
  // starts afresh: vegas_run's constructor cleared has_shares and pending_total)
  if (resume.from != nullptr && (state.cubes.has_shares || state.cubes.pending_total)) {
    MCUBES_EXPECTS(!resume.from->shares.empty(),
                   "the run to continue has a VEGAS+ allocation but no shares (a damaged checkpoint)");
    shares.set_host_shares(state.cubes, resume.from->shares);
  }
  const auto progress = [&] {  // under a team, every rank's (the VEGAS+ shares gathered: team_gather_cubes)
    vegas_progress p = run.progress(backend.map_edges(map), shares.host_shares(state.cubes));
    team_gather_cubes(team_of(backend), run.strat().n_chunks, run.params().chunk_cubes, p.shares, layout_of(backend));
    return p;
  };
  const auto adapt = [&](const iteration_sums& sums) { backend.adapt_map(map, sums, alpha_for(opt), map_floor_for(opt), opt.symmetric_map); };
  while (!run.done()) {
    if (stop_agreed(opt.stop, team_of(backend))) {  // execution::stop: before every pass (every rank of a team)
      run.stop();
      break;
    }
    iteration_sums sums;
    try {
      std::vector<std::uint64_t> part_counts;  // under a team: the next pass's counts per part
      allocate_counts(run, backend, &part_counts);
      balance_team(run, backend, part_counts);
      if constexpr (has_allocation_after_pass<Backend>::value)  // the next allocation behind this pass (one wait for both)
        if (run.allocates_after_pass()) backend.allocate_counts_after_pass(run.allocation_after_pass());
      if constexpr (has_adapt_after_pass<Backend>::value)  // the map's adaptation behind this pass (while the host takes its sums)
        if (run.adapts_after_pass()) backend.adapt_map_after_pass(alpha_for(opt), map_floor_for(opt), opt.symmetric_map);
      sums = passes.sample(run);
    } catch (const pass_abandoned&) {  // stopped mid-pass: the pass is discarded whole
      run.stop();
      break;
    }
    const std::size_t before = run.completed();
    run.take(sums, passes.fail, adapt, on_iteration);
    if (resume.save && run.completed() > before && !run.done()) resume.save(progress, false);
  }
  if (resume.save) resume.save(progress, true);  // before finish(), which hands the records over
  return run.finish(on_iteration);
}

template <int D, class Backend, class Map>
result vegas_driver<D, Backend, Map>::run_new(const region<D>& reg, const vegas_options& opt, Backend& backend, Map& map,
                                              const iteration_callback& on_iteration, sampling_density* trained,
                                              const vegas_resumption& resume, const run_passes<D>& passes) {
  vegas_state state;
  shares_type shares;
  result r = run(reg, opt, backend, map, state, shares, on_iteration, resume, passes);
  if (trained != nullptr) *trained = density_of<D>(reg, backend, map, state, shares);
  return r;
}

/// The run_passes of f on backend with map.
template <int D, class F, class Backend, class Map>
run_passes<D> passes_of(const F& f, Backend& backend, Map& map) {
  run_passes<D> p;
  p.sample = [&f, &backend, &map](const vegas_run<D>& run) {
    std::vector<iteration_sums> sums = backend.sample_passes(f, map, std::vector<sampling_pass<D>>{run.pass()});
    return std::move(sums[0]);
  };
  p.fail = [&f, &backend, &map](const sampling_params<D>& sp, int it, std::uint64_t index, double value) {
    throw_sample_failure<D>(f, sp, backend.map_edges(map), map_bins(map), it, index, value);
  };
  return p;
}
}  // namespace detail

template <int D, class F, class Backend, class Map>
result vegas_continue(const F& f, const region<D>& reg, const vegas_options& opt, Backend& backend, Map& map,
                      vegas_state& state, cube_shares<std::remove_const_t<Backend>>& shares,
                      const iteration_callback& on_iteration = {}, const vegas_resumption& resume = {}) {
  return detail::vegas_driver<D, Backend, Map>::run(reg, opt, backend, map, state, shares, on_iteration, resume,
                                                   detail::passes_of<D>(f, backend, map));
}

/// vegas_continue with VEGAS+ arrays of its own: the state's allocation starts afresh (uniform
/// counts in the first iteration).
template <int D, class F, class Backend, class Map>
result vegas_continue(const F& f, const region<D>& reg, const vegas_options& opt, Backend& backend, Map& map,
                      vegas_state& state, const iteration_callback& on_iteration = {}) {
  state.cubes = vegas_state::allocation{};
  cube_shares<std::remove_const_t<Backend>> shares;
  return vegas_continue<D>(f, reg, opt, backend, map, state, shares, on_iteration);
}

/// vegas_continue from a uniform map of opt.n_bins bins made by `backend`, at iteration 0: one
/// complete m-Cubes run (the one-call form; mcubes::vegas chooses the backend, integrator.hpp keeps
/// the map between calls). Same contract and exceptions as vegas_continue.
///
/// With `trained` (non-null), *trained is set to the sampling density the run ended with
/// (density_of: for weighted samples, core/weighted_sample.hpp) when it returns. With `resume`,
/// the run continues a checkpointed one and hands its progress to a saver (vegas_resumption).
template <int D, class F, class Backend>
result vegas_with(const F& f, const region<D>& reg, const vegas_options& opt, Backend&& backend,
                  const iteration_callback& on_iteration = {}, sampling_density* trained = nullptr,
                  const vegas_resumption& resume = {}) {
  validate(opt, D);
  auto map = backend.template make_map<D>(map_bins_for(opt));
  using B = std::remove_reference_t<Backend>;
  return detail::vegas_driver<D, B, decltype(map)>::run_new(reg, opt, backend, map, on_iteration, trained, resume,
                                                            detail::passes_of<D>(f, backend, map));
}

}  // namespace mcubes

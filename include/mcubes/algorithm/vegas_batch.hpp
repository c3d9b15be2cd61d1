#pragma once
/// @file algorithm/vegas_batch.hpp
/// Many m-Cubes integrals in one run: a parameter batch. The integrand takes (point, parameters),
///   double f(const mcubes::point<D>& x, const P& p) const,
/// with P a trivially copyable struct; integral k is f(., params[k]) over regions[k] (or one region
/// for all). Each integral has its own adaptive map, iterations, weighted average, stopping test and
/// result (vegas_run, algorithm/vegas.hpp: the same arithmetic as a single run); integrals that have
/// ended leave the later passes. The batch runs in rounds: every active integral's next pass goes
/// to the backend in one call (cpu: one pool of (integral, tile) work items; cuda: one launch per
/// kind of pass over every active integral), then every map that its integral will adapt is
/// adapted (one call, vegas_run::adapts_on), then each integral takes its sums. On the CUDA
/// backend a batch of at least batch_pipeline_min integrals runs as two lanes (its first and
/// second half) whose rounds alternate: the device samples one lane's passes while the host takes
/// the other's sums, so that it does not wait for the host between rounds.
///
/// Determinism contract: result k is bitwise identical to
///   vegas(with_parameters<F, P>{f, params[k]}, region_k, opt with seed = batch_seed(opt.seed, k))
/// (core/batch.hpp; the seed is reported in result k), whatever K, the other members of the batch,
/// their order, the thread count, the CUDA block size or the lanes: each integral sees exactly the
/// pass sums it would see alone (the same samples, tiles, trees and exact integer bins).
///
/// Memory: the CPU holds K * D * (n_bins + 1) doubles of maps and, per pass, D * n_bins 16-byte
/// bin sums per worker thread that samples it; the CUDA backend's figure is in backend/cuda.cuh
/// (cuda_batch_bytes).

#include <cstdint>
#include <exception>
#include <stdexcept>
#include <functional>
#include <memory>
#include <mutex>
#include <thread>
#include <type_traits>
#include <algorithm>
#include <string>
#include <utility>
#include <vector>

#include "../backend/backend.hpp"
#include "../backend/team.hpp"
#include "../backend/worker_pool.hpp"
#include "../core/batch.hpp"
#include "../error.hpp"
#include "../options.hpp"
#include "../region.hpp"
#include "../result.hpp"
#include "vegas.hpp"

namespace mcubes {

/// Integral k of a batch failed: what() is "integral k: " + the failure's message; the failure
/// itself (non_finite_integrand, table_out_of_range, overflow_error, numerical_error, ...) is
/// nested (std::rethrow_if_nested(e) rethrows it with its type and fields).
class batch_error : public error {
 public:
  batch_error(std::size_t integral, const std::string& message)
      : error("integral " + std::to_string(integral) + ": " + message), integral_(integral) {}
  /// Index k of the failing integral (the lowest among those that failed in the same round).
  std::size_t integral() const noexcept { return integral_; }

 private:
  std::size_t integral_;
};

/// Where a batch stands after a round (for progress reports and stopping).
struct batch_progress {
  std::size_t integrals = 0;  ///< K
  std::size_t finished = 0;   ///< integrals that have ended (converged or at max_iterations)
  int round = 0;              ///< rounds done (a round is one pass of every active integral)
  std::uint64_t n_eval = 0;   ///< evaluations so far, all integrals
};

/// Called after every round on the calling thread; returning run_control::stop ends every active
/// integral at once with status interrupted (their completed iterations kept). Never changes a
/// result.
using batch_callback = std::function<run_control(const batch_progress&)>;

/// Per-integral failures of a batch (vegas_batch_with's `failures`): entry k is integral k's
/// exception (non_finite_integrand, overflow_error, numerical_error, ...), null if it did not fail.
using batch_failures = std::vector<std::exception_ptr>;

/// Checkpoint and resume of a batch (vegas_batch_with; checkpoint.hpp writes files of it), member
/// by member as vegas_resumption does for one run. `from` (null, or K entries): continue integral
/// k from the progress from[k] (its map, state, VEGAS+ shares and completed iterations; an
/// integral whose progress has ended, converged or at max_iterations, ends at once with that
/// result; an entry without map edges, a default vegas_progress, starts its integral from the
/// beginning: how a checkpoint holds integrals not yet begun, e.g. by a batch split over devices). `save`: called after every round (a boundary of every integral's runs: an integral in
/// the middle of an iteration, between its probe or main pass and the next, is at the boundary
/// before that iteration, which a resumed run draws again with the same bits) and once when the
/// batch ends, with a function that returns the K progresses there (it copies the maps and the
/// VEGAS+ shares from the backend: call it only when writing) and whether the batch has ended.
/// A batch continued from the progresses of one of its rounds ends with the bits of the batch
/// never stopped, on any backend, thread count, block size or lane split: each integral's runs
/// are independent (the determinism contract of vegas_batch_with).
struct batch_resumption {
  const std::vector<vegas_progress>* from = nullptr;
  std::function<void(const std::function<std::vector<vegas_progress>()>& progress, bool ended)> save;
  /// The progress integral k continues from: null when there is none or it was not begun (no map edges).
  const vegas_progress* of(std::size_t k) const {
    return from == nullptr || (*from)[k].edges.empty() ? nullptr : &(*from)[k];
  }
};

namespace detail {
/// The result of integral k that failed: the iterations it completed (vegas_run::finish after a
/// stop, status interrupted), or, where the run cannot summarise them, only its seed, options and
/// backend.
template <class Run>
result failed_member_result(Run& run, const std::string& backend_name) {
  try {
    run.stop();
    return run.finish();
  } catch (...) {
    result r;
    r.seed = run.options().seed;
    r.options = run.options();
    r.backend = backend_name;
    r.status = status::interrupted;
    return r;
  }
}
}  // namespace detail

/// Host threads that process the integrals' results after a round (at most 8, at most the
/// backend's host_workers(), and one per 128 integrals of the batch; rounds of fewer than 256
/// integrals use the calling thread alone).
inline std::size_t batch_host_threads() { return static_cast<std::size_t>(host_worker_threads()); }

/// Batches of at least this many integrals run as two pipelined lanes on a backend that supports
/// it (cuda_backend::batch_pipeline; see vegas_batch_with).
inline constexpr std::size_t batch_pipeline_min = 256;

/// Checks the batch's sizes. @throws invalid_input naming the mismatch.
inline void validate_batch(std::size_t n_params, std::size_t n_regions) {
  MCUBES_EXPECTS(n_params >= 1, "a batch needs at least one integral (the parameter list is empty)");
  MCUBES_EXPECTS(n_regions == 1 || n_regions == n_params, "a batch takes one region for all integrals or one per integral: ",
                 n_regions, " regions for ", n_params, " integrals");
}

/// Integrates f(., params[k]) over regions[k] (regions.size() == 1: the same region for all) for
/// k = 0..K-1 with m-Cubes on `backend`, as a batch (see the file comment for the rounds and the
/// determinism contract). `opt` applies to every integral, except its seed: integral k uses
/// batch_seed(opt.seed, k). Returns the K results in order. A stop requested through opt.stop
/// (execution.hpp's stop_request; looked at after every round, and between tiles by a CPU backend
/// made with it, which abandons the round whole) ends every active integral with status
/// interrupted and its completed iterations, as on_round's stop does.
///
/// With `failures` (non-null), a failing integral does not end the batch: it leaves it (its later
/// passes are not sampled), (*failures)[k] holds its exception, and result k holds the iterations
/// it completed before the failure, with status interrupted (its estimate is not a result: the
/// failure says why). The other integrals' results are unchanged, bit for bit (the determinism
/// contract: no integral depends on another). failures is resized to K, null where none failed.
/// An exception thrown by `on_round` still ends the batch.
///
/// `first_index`: the index of params[0] in a larger batch of which this call computes a contiguous
/// part (integral k's seed is batch_seed(opt.seed, first_index + k) and a batch_error names first_index + k):
/// how a batch split over several devices keeps each integral's bits (vegas_batch with
/// execution::devices).
/// @throws invalid_input for bad options or sizes (before any sampling); without `failures`,
///         batch_error (with the failure nested) for the lowest-index integral that fails in a
///         round; whatever `on_round` throws.
namespace detail {
/// One lane of a batch (batch_driver): the backend's batch state of integrals [first, first +
/// count) of the call, behind the operations the driver uses, so that the driver does not depend
/// on the integrand or its parameter type. Made by batch_members::make_lane.
template <int D>
struct batch_lane {
  virtual ~batch_lane() = default;
  /// backend.batch_set_map_edges / batch_map_edges of the lane's member j.
  virtual void set_map_edges(std::size_t j, const std::vector<double>& edges) = 0;
  virtual std::vector<double> map_edges(std::size_t j) = 0;
  /// backend.start_batch (a pipelining backend only), then finish: backend.finish_batch there,
  /// backend.sample_passes over the batch elsewhere.
  virtual void start(const std::vector<batch_pass<D>>& passes) = 0;
  virtual std::vector<iteration_sums> finish(const std::vector<batch_pass<D>>& passes) = 0;
  /// backend.adapt_batch.
  virtual void adapt(const std::vector<std::pair<std::size_t, const iteration_sums*>>& items, double alpha, double floor,
                     bool symmetric) = 0;
};

/// batch_lane of integrand f with parameters P on Backend.
template <int D, class F, class P, class Backend>
struct batch_lane_of final : batch_lane<D> {
  using batch_t = decltype(std::declval<Backend&>().template make_batch<D>(std::declval<const P*>(), std::size_t{}, int{}));
  static constexpr bool pipelined = backend_pipelines_batches<std::remove_const_t<Backend>>::value;
  batch_lane_of(const F& f, Backend& backend, const P* params, std::size_t count, int n_bins)
      : f_(f), backend_(backend), batch_(backend.template make_batch<D>(params, count, n_bins)) {}
  void set_map_edges(std::size_t j, const std::vector<double>& edges) override {
    backend_.batch_set_map_edges(batch_, j, edges);
  }
  std::vector<double> map_edges(std::size_t j) override { return backend_.batch_map_edges(batch_, j); }
  void start(const std::vector<batch_pass<D>>& passes) override {
    if constexpr (pipelined) backend_.start_batch(f_, batch_, passes);
    else (void)passes;
  }
  std::vector<iteration_sums> finish(const std::vector<batch_pass<D>>& passes) override {
    if constexpr (pipelined) return backend_.finish_batch(f_, batch_, passes);
    else return backend_.sample_passes(f_, batch_, passes);
  }
  void adapt(const std::vector<std::pair<std::size_t, const iteration_sums*>>& items, double alpha, double floor,
             bool symmetric) override {
    backend_.adapt_batch(batch_, items, alpha, floor, symmetric);
  }

 private:
  const F& f_;
  Backend& backend_;
  batch_t batch_;
};

/// The integrand's part of a batch (batch_driver): `single` runs the one integral of a batch of
/// K = 1 (vegas_with of with_parameters{f, params[0]} over regions[0], options `o`); `make_lane`
/// makes the backend's state of integrals [first, first + count) of the call (batch_lane_of);
/// `check_memory` asks a pipelining backend for the whole batch's memory (check_batch_memory);
/// `fail` throws integral k's failure of sample `index` of iteration `it` (value `value`), read
/// through the map `edges` of n_bins bins per axis (throw_sample_failure).
template <int D>
struct batch_members {
  std::function<result(const vegas_options& o, const iteration_callback& each, const vegas_resumption& one)> single;
  std::function<std::unique_ptr<batch_lane<D>>(std::size_t first, std::size_t count, int n_bins)> make_lane;
  std::function<void(std::size_t K, int n_bins)> check_memory;
  std::function<void(std::size_t k, const sampling_params<D>& sp, const std::vector<double>& edges, int n_bins, int it,
                     std::uint64_t index, double value)>
      fail;
};

/// vegas_batch_with's rounds for every integrand of dimension D on Backend (the integrand and its
/// parameters enter only through batch_members), so that one instantiation of (D, Backend) serves
/// every batch: `extern template struct mcubes::detail::batch_driver<D, B>;` where it is used and
/// `template struct ...` in one unit (mcubes/precompiled.hpp). Members defined outside the
/// class, so that such a declaration suppresses their instantiation.
template <int D, class Backend>
struct batch_driver {
  /// vegas_batch_with of K integrals (same contract).
  static std::vector<result> run(std::size_t K, const std::vector<region<D>>& regions, const vegas_options& opt,
                                 Backend& backend, const batch_callback& on_round, batch_failures* failures,
                                 const batch_resumption& resume, std::size_t first_index,
                                 const batch_members<D>& members);
};

template <int D, class Backend>
std::vector<result> batch_driver<D, Backend>::run(std::size_t K, const std::vector<region<D>>& regions,
                                                  const vegas_options& opt, Backend& backend,
                                                  const batch_callback& on_round, batch_failures* failures,
                                                  const batch_resumption& resume, std::size_t first_index,
                                                  const batch_members<D>& members) {
  validate(opt, D);
  validate_batch(K, regions.size());
  MCUBES_EXPECTS(resume.from == nullptr || resume.from->size() == K, "the batch to continue has ",
                 resume.from == nullptr ? 0 : resume.from->size(), " integrals, not ", K);
  if (failures != nullptr) failures->assign(K, nullptr);
  if (K == 1) {  // one integral: the single-run path (the same bits by the contract, without the batch's buffers)
    vegas_options o = opt;
    o.seed = batch_seed(opt.seed, first_index);
    result so_far_kept;  // with `failures`: the iterations completed before a failure
    so_far_kept.seed = o.seed;
    so_far_kept.options = o;
    so_far_kept.backend = backend.name();
    bool callback_threw = false;
    try {
      iteration_callback each;
      if (on_round || failures != nullptr)
        each = [&](const iteration_record& rec, const result& so_far) {
          if (failures != nullptr) {  // the summary and this record (O(1) per iteration)
            so_far_kept.estimate = so_far.estimate;
            so_far_kept.error = so_far.error;
            so_far_kept.chi2_dof = so_far.chi2_dof;
            so_far_kept.q = so_far.q;
            so_far_kept.dof = so_far.dof;
            so_far_kept.iterations = so_far.iterations;
            so_far_kept.accumulated = so_far.accumulated;
            so_far_kept.n_eval = so_far.n_eval;
            so_far_kept.records.push_back(rec);
          }
          if (!on_round) return run_control::proceed;
          batch_progress p;
          p.integrals = 1;
          p.round = so_far.iterations;
          p.n_eval = so_far.n_eval;
          try {
            return on_round(p);
          } catch (...) {
            callback_threw = true;
            throw;
          }
        };
      vegas_resumption one;
      one.from = resume.of(0);
      if (resume.save)
        one.save = [&](const std::function<vegas_progress()>& progress, bool ended) {
          resume.save([&] { return std::vector<vegas_progress>{progress()}; }, ended);
        };
      return {members.single(o, each, one)};
    } catch (const invalid_input&) {
      throw;
    } catch (const std::exception& e) {
      if (callback_threw && failures != nullptr) throw;
      if (failures == nullptr) std::throw_with_nested(batch_error(first_index, e.what()));
      (*failures)[0] = std::current_exception();
      so_far_kept.status = status::interrupted;
      return {std::move(so_far_kept)};
    }
  }
  // The host work of a round runs on the backend's workers (host_workers(): the CPU backend's
  // own pool; the CUDA backend's host pool), in contiguous parts of the round's integrals.
  worker_pool& pool = backend.host_workers();
  const int parts = static_cast<int>(std::min<std::size_t>(
      {batch_host_threads(), K / 128, static_cast<std::size_t>(pool.size())}));
  const auto on_pool = [&pool, parts](std::size_t n, const auto& fn) {
    if (n >= 256 && parts > 1)
      pool.run(parts, [&](int w) {
        const std::size_t p = static_cast<std::size_t>(parts), k = static_cast<std::size_t>(w);
        fn(n * k / p, n * (k + 1) / p);
      });
    else
      fn(std::size_t(0), n);
  };
  const int n_bins = map_bins_for(opt);
  std::vector<vegas_state> states(K);
  std::vector<std::unique_ptr<vegas_run<D>>> runs(K);
  const std::string backend_name = backend.name();
  std::vector<std::exception_ptr> made(K);
  on_pool(K, [&](std::size_t lo, std::size_t hi) {
    for (std::size_t k = lo; k < hi; ++k) {
      try {
        vegas_options o = opt;
        o.seed = batch_seed(opt.seed, first_index + k);
        const vegas_progress* from = resume.of(k);
        if (from != nullptr) states[k] = from->state;
        runs[k] = std::make_unique<vegas_run<D>>(regions[regions.size() == 1 ? 0 : k], o, states[k], backend_name, n_bins,
                                                 0, from);
      } catch (...) {
        made[k] = std::current_exception();
      }
    }
  });
  for (const std::exception_ptr& e : made)
    if (e) std::rethrow_exception(e);
  cube_shares<std::remove_const_t<Backend>> shares;  // VEGAS+: each integral its own allocation
  shares.attach(runs.data(), K, backend);
  if (resume.from != nullptr) {  // the shares, unless the integral's grid or beta differs (vegas_continue)
    std::vector<std::pair<std::size_t, const vegas_progress*>> restored;
    for (std::size_t k = 0; k < K; ++k) {
      if (resume.of(k) == nullptr) continue;
      const vegas_progress& p = *resume.of(k);
      if (!(states[k].cubes.has_shares || states[k].cubes.pending_total)) continue;
      MCUBES_EXPECTS(!p.shares.empty(), "integral ", k,
                     " of the batch to continue has a VEGAS+ allocation but no shares (a damaged checkpoint)");
      restored.emplace_back(k, &p);
    }
    shares.set_host_shares_of(restored.size(), [&](std::size_t i, const vegas_state::allocation*& a,
                                                   const std::vector<double>*& host, std::size_t& k) {
      k = restored[i].first;
      a = &states[k].cubes;
      host = &restored[i].second->shares;
    });
  }
  // Checkpoints: what an integral that has ended holds at its end (its records leave the run with
  // finish()), taken just before.
  std::vector<std::unique_ptr<vegas_progress>> ended;
  if (resume.save) ended.resize(K);
  const auto end_run = [&](std::size_t k) -> result {
    if (resume.save) ended[k] = std::make_unique<vegas_progress>(runs[k]->progress({}, {}));
    return runs[k]->finish();
  };

  // The lanes: integrals [first, first + count) with their own batch state (integral k is the
  // state's k - first). On a backend that pipelines batches and for K >= batch_pipeline_min, two
  // lanes whose passes alternate on the device: while it samples one lane's passes, the host takes
  // the other's sums and starts its next passes. Otherwise one lane.
  constexpr bool pipelined = backend_pipelines_batches<std::remove_const_t<Backend>>::value;
  struct lane {
    std::size_t first, count;
    std::unique_ptr<batch_lane<D>> batch;
    std::vector<std::size_t> active;  // integrals (global indices) not yet ended
    std::vector<batch_pass<D>> passes;
    bool in_flight = false;
  };
  const std::size_t n_lanes = pipelined && K >= batch_pipeline_min ? 2 : 1;
  if constexpr (pipelined)  // the whole batch's memory, before any lane's (a refusal names K)
    members.check_memory(K, n_bins);
  std::vector<lane> lanes;
  lanes.reserve(n_lanes);
  for (std::size_t l = 0; l < n_lanes; ++l) {
    const std::size_t first = K * l / n_lanes, count = K * (l + 1) / n_lanes - first;
    lanes.push_back(lane{first, count, members.make_lane(first, count, n_bins), {}, {}, false});
    lane& L = lanes.back();
    for (std::size_t j = 0; j < count; ++j) {
      if (resume.of(first + j) != nullptr) L.batch->set_map_edges(j, resume.of(first + j)->edges);
      L.active.push_back(first + j);
    }
  }
  const auto lane_of = [&](std::size_t k) -> lane& {
    for (lane& L : lanes)
      if (k < L.first + L.count) return L;
    return lanes.back();
  };
  std::vector<vegas_run<D>*> asking;
  const auto start = [&](lane& L) {  // the lane's next passes (started on a pipelining backend)
    L.passes.clear();
    asking.clear();
    for (const std::size_t k : L.active) asking.push_back(runs[k].get());
    allocate_counts_of(asking, backend);  // VEGAS+: the counts of their next passes (one launch on the GPU)
    for (const std::size_t k : L.active) L.passes.push_back(runs[k]->pass(k - L.first));
    if constexpr (pipelined) L.batch->start(L.passes);
    L.in_flight = true;
  };
  const auto finish = [&](lane& L) {  // their sums
    L.in_flight = false;
    return L.batch->finish(L.passes);
  };
  // Waits for the lanes' started passes (their buffers are in use), discarding them; without a
  // pipeline nothing was started (finish would sample the passes only to discard them).
  const auto drain = [&] {
    for (lane& L : lanes) {
      if constexpr (pipelined) {
        if (L.in_flight) {
          try {
            (void)finish(L);
          } catch (...) {  // already leaving with an exception or a stop
          }
        }
      }
      L.in_flight = false;
    }
  };

  std::vector<result> out(K);
  batch_progress progress;
  progress.integrals = K;
  std::vector<std::pair<std::size_t, const iteration_sums*>> to_adapt;
  // one lane's round: its sums, the adaptations, the takes; then its next passes
  const auto round_of = [&](lane& L) {
    std::vector<iteration_sums> sums = finish(L);
    const std::vector<batch_pass<D>>& passes = L.passes;
    const std::size_t n = passes.size();
    // The maps that this round's takes will adapt (vegas_run::adapts_on) are adapted first, in
    // one call (asynchronous on the CUDA backend: its launch runs while the host takes the sums).
    std::vector<unsigned char> predicted(n, 0), adapts(n, 0);
    to_adapt.clear();
    for (std::size_t i = 0; i < n; ++i)
      if (runs[L.first + passes[i].integral]->adapts_on(sums[i])) {
        predicted[i] = 1;
        to_adapt.emplace_back(passes[i].integral, &sums[i]);
      }
    L.batch->adapt(to_adapt, alpha_for(opt), map_floor_for(opt), opt.symmetric_map);
    // Each integral takes its pass's sums (vegas_run: averages, stopping test); independent of
    // one another, so large rounds are split over host threads (the results do not depend on it).
    std::vector<std::exception_ptr> failed(n);
    std::mutex backend_mutex;  // a failure's replay reads the map through the backend
    const auto take = [&](std::size_t lo, std::size_t hi) {
      for (std::size_t i = lo; i < hi; ++i) {
        const std::size_t k = L.first + passes[i].integral;
        try {
          const auto fail = [&](const sampling_params<D>& sp, int it, std::uint64_t index, double value) {
            std::vector<double> edges;
            {
              std::lock_guard<std::mutex> lock(backend_mutex);
              edges = L.batch->map_edges(passes[i].integral);
            }
            members.fail(k, sp, edges, n_bins, it, index, value);
          };
          runs[k]->take(sums[i], fail, [&](const iteration_sums&) { adapts[i] = 1; }, {});
          if (adapts[i] != predicted[i])
            throw std::logic_error("vegas_batch: integral " + std::to_string(k) +
                                   (adapts[i] ? " adapted its map unannounced" : " did not adapt its map as announced"));
          if (runs[k]->done()) out[k] = end_run(k);
        } catch (...) {
          failed[i] = std::current_exception();
        }
      }
    };
    on_pool(n, take);
    std::size_t first_failed = n;
    for (std::size_t i = 0; i < n; ++i) {
      if (!failed[i]) continue;
      if (failures != nullptr) {  // the integral leaves the batch (below: done), its failure kept
        const std::size_t k = L.first + passes[i].integral;
        (*failures)[k] = failed[i];
        if (resume.save) {  // its progress before the failing iteration (a resume fails there again)
          runs[k]->stop();
          if (!ended[k]) ended[k] = std::make_unique<vegas_progress>(runs[k]->progress({}, {}));
        }
        out[k] = failed_member_result(*runs[k], backend_name);
      } else if (first_failed == n || passes[i].integral < passes[first_failed].integral) {
        first_failed = i;
      }
    }
    if (first_failed < n) {
      try {
        std::rethrow_exception(failed[first_failed]);
      } catch (const std::exception& e) {
        std::throw_with_nested(batch_error(first_index + L.first + passes[first_failed].integral, e.what()));
      }
    }
    std::size_t kept = 0;
    for (const std::size_t k : L.active) {
      if (runs[k]->done()) {  // finished in take (above)
        progress.n_eval += out[k].n_eval;
        ++progress.finished;
      } else {
        L.active[kept++] = k;
      }
    }
    L.active.resize(kept);
    if (!L.active.empty()) start(L);
  };

  // Ends every active integral with status interrupted, its completed iterations kept (the passes
  // already started are not taken).
  const auto stop_all = [&] {
    drain();
    for (lane& L : lanes) {
      for (const std::size_t k : L.active) {
        runs[k]->stop();
        out[k] = end_run(k);
      }
      L.active.clear();
    }
  };
  // The K progresses at a round boundary (batch_resumption::save).
  const auto take_progress = [&] {
    std::vector<vegas_progress> ps(K);
    for (std::size_t k = 0; k < K; ++k) {
      ps[k] = ended[k] ? *ended[k] : runs[k]->progress({}, {});
      lane& L = lane_of(k);
      ps[k].edges = L.batch->map_edges(k - L.first);
      ps[k].shares = shares.host_shares(states[k].cubes, k);
      // under a team: every rank's shares of integral k (a collective; vegas_continue does the same)
      team_gather_cubes(team_of(backend), runs[k]->strat().n_chunks, runs[k]->params().chunk_cubes, ps[k].shares);
    }
    return ps;
  };
  const auto save = [&](bool at_end) {
    if (resume.save) resume.save(take_progress, at_end);
  };
  // Integrals continued from an end (converged, or at max_iterations) end at once.
  for (lane& L : lanes) {
    std::size_t kept = 0;
    for (const std::size_t k : L.active) {
      if (runs[k]->done()) {
        out[k] = end_run(k);
        progress.n_eval += out[k].n_eval;
        ++progress.finished;
      } else {
        L.active[kept++] = k;
      }
    }
    L.active.resize(kept);
  }
  try {
    for (lane& L : lanes)
      if (!L.active.empty()) start(L);
    for (;;) {
      bool any = false, abandoned = false;
      for (lane& L : lanes)
        if (L.in_flight) {
          try {
            round_of(L);
          } catch (const pass_abandoned&) {  // execution::stop mid-pass: the round is discarded whole
            abandoned = true;
            break;
          }
          any = true;
        }
      if (abandoned || (any && stop_agreed(opt.stop, team_of(backend)))) {
        stop_all();
        break;
      }
      if (!any) break;
      save(false);
      ++progress.round;
      std::size_t active = 0;
      for (const lane& L : lanes) active += L.active.size();
      if (on_round && active > 0) {
        batch_progress now = progress;
        for (const lane& L : lanes)
          for (const std::size_t k : L.active) now.n_eval += runs[k]->evaluations();
        if (on_round(now) == run_control::stop) {
          stop_all();
          break;
        }
      }
    }
  } catch (...) {
    drain();
    throw;
  }
  save(true);
  return out;
}
}  // namespace detail

template <int D, class F, class P, class Backend>
std::vector<result> vegas_batch_with(const F& f, const std::vector<region<D>>& regions, const std::vector<P>& params,
                                     const vegas_options& opt, Backend& backend, const batch_callback& on_round = {},
                                     batch_failures* failures = nullptr, const batch_resumption& resume = {},
                                     std::size_t first_index = 0) {
  using B = std::remove_const_t<Backend>;
  detail::batch_members<D> members;
  members.single = [&](const vegas_options& o, const iteration_callback& each, const vegas_resumption& one) {
    return vegas_with<D>(with_parameters<F, P>{f, params[0]}, regions[0], o, backend, each, nullptr, one);
  };
  members.make_lane = [&](std::size_t first, std::size_t count, int n_bins) -> std::unique_ptr<detail::batch_lane<D>> {
    return std::make_unique<detail::batch_lane_of<D, F, P, Backend>>(f, backend, params.data() + first, count, n_bins);
  };
  members.check_memory = [&](std::size_t K, int n_bins) {
    if constexpr (backend_pipelines_batches<B>::value) backend.template check_batch_memory<D, P>(K, n_bins);
    else (void)K, (void)n_bins;
  };
  members.fail = [&](std::size_t k, const sampling_params<D>& sp, const std::vector<double>& edges, int n_bins, int it,
                     std::uint64_t index, double value) {
    detail::throw_sample_failure<D>(with_parameters<F, P>{f, params[k]}, sp, edges, n_bins, it, index, value);
  };
  return detail::batch_driver<D, Backend>::run(params.size(), regions, opt, backend, on_round, failures, resume,
                                               first_index, members);
}
}  // namespace mcubes

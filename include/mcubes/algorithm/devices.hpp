#pragma once
/// @file algorithm/devices.hpp
/// Several CUDA devices of one process computing one call together (translation units compiled
/// by nvcc only; execution::devices): run_on_devices, the team of one host thread and one
/// cuda_backend per device that splits each pass of a single run (backend/team.hpp: the same
/// fixed parts, exchanges and bits as MPI ranks), vegas_on_devices on it, and
/// vegas_batch_on_devices, which gives each device a contiguous range of a batch's integrals.
/// Every result is bitwise that of one device, for any list of devices. Used by methods.hpp's
/// vegas and vegas_batch, the command's CUDA runners and run-time compiled objects (jit/entry.hpp).

#if defined(__CUDACC__)

#include <algorithm>
#include <atomic>
#include <cstddef>
#include <exception>
#include <memory>
#include <mutex>
#include <thread>
#include <vector>

#include "../backend/cuda.cuh"
#include "../backend/team.hpp"
#include "../error.hpp"
#include "../execution.hpp"
#include "../options.hpp"
#include "../region.hpp"
#include "../result.hpp"
#include "vegas.hpp"
#include "vegas_batch.hpp"

namespace mcubes {

namespace detail {
/// The checks every entry on several devices makes of its options and list. `what`: "a run" or
/// "a batch". @throws invalid_input naming the first problem.
inline void check_devices_of(const execution& opt, const std::vector<int>& devices, const char* what) {
  MCUBES_EXPECTS(!devices.empty(), what, " on several devices needs at least one device");
  MCUBES_EXPECTS(opt.backend != backend_kind::cpu, what, " on several devices runs on the CUDA backend (backend cpu given)");
  for (int d : devices) MCUBES_EXPECTS(d >= 0, "device ordinals must be non-negative, got ", d);
}

/// `opt` as one device's options: backend cuda on `device`, no list of devices.
inline vegas_options options_on_device(const vegas_options& opt, int device) {
  vegas_options o = opt;
  o.backend = backend_kind::cuda;
  o.device = device;
  o.devices.clear();
  o.team = nullptr;  // the member's team is its backend's
  return o;
}
}  // namespace detail
/// The team of devices of one call (vegas_on_devices, and the command's runners): one host thread
/// and one cuda_backend per entry of `devices` (CUDA ordinals; one may repeat: several streams of
/// one device), the threads a team (thread_team, backend/team.hpp) whose members split each pass.
/// Under a team of ranks (opt.team splits: MPI), every rank's devices form one team
/// (nested_communicator: rank q's device g is member (devices of the ranks before q) + g), whose
/// first member (rank 0's first device) writes checkpoints; each rank's first device runs on the
/// calling thread (thread_team::run_each), the only one that calls opt.team.
/// Calls run(backend, o, watch, member, team) on every member, where o is opt on that device
/// (backend cuda, device the member's, devices and team cleared, stop: the team's own request on
/// member 0, null elsewhere) and watch is on_iteration on member 0 (empty elsewhere), its
/// run_control::stop and opt.stop (looked at after each iteration) turned into the team's stop:
/// every member ends at the same iteration boundary. `run` must make the same collective calls on
/// every member (vegas_with with the same options; a trained density or a checkpoint saver on
/// every member or on none). Returns member 0's result, its options' device, devices and stop
/// those of opt. With `timing` (non-null), *timing is the first member's exchange time
/// (timed_communicator: the members' exchanges, waits for the slowest device included).
/// @throws invalid_input for bad options, an empty list or a negative ordinal; cuda_error if a
///         device cannot be used; the first member's exception when one fails (the others end
///         with team_failure naming its rank).
template <class Run>
result run_on_devices(const vegas_options& opt, const std::vector<int>& devices, const iteration_callback& on_iteration,
                      const Run& run, exchange_time* timing = nullptr) {
  detail::check_devices_of(opt, devices, "a run");
  const int n = static_cast<int>(devices.size());
  thread_team team(n);
  struct keep_current_device {  // the first member runs on this thread: give its device back after
    int ordinal = -1;
    keep_current_device() {
      if (cudaGetDevice(&ordinal) != cudaSuccess) ordinal = -1;
    }
    ~keep_current_device() {
      if (ordinal >= 0) cudaSetDevice(ordinal);
    }
  } keep;
  stop_request stop_all;  // the first member's: on_iteration returned stop, or opt.stop was requested
  std::vector<result> results(static_cast<std::size_t>(n));
  team.run_each([&](int r, const communicator& untimed) {
    const int device = devices[static_cast<std::size_t>(r)];
    std::unique_ptr<nested_communicator> ranks;  // under MPI ranks: every rank's devices, one team
    if (splits(opt.team)) ranks = std::make_unique<nested_communicator>(*opt.team, untimed);
    const timed_communicator member(ranks ? static_cast<const communicator&>(*ranks) : untimed);
    cuda_backend backend(launch_policy_of(opt), device);
    backend.team = &member;
    vegas_options o = detail::options_on_device(opt, device);
    o.stop = r == 0 ? &stop_all : nullptr;
    iteration_callback watch;
    if (r == 0)
      watch = [&](const iteration_record& rec, const result& so_far) {
        const run_control c = on_iteration ? on_iteration(rec, so_far) : run_control::proceed;
        if (c == run_control::stop || (opt.stop != nullptr && opt.stop->requested())) stop_all.request();
        return run_control::proceed;
      };
    results[static_cast<std::size_t>(r)] = run(backend, o, watch, r, member);
    if (r == 0 && timing != nullptr) *timing = member.time();
  });
  result r = std::move(results[0]);
  r.options.device = opt.device;
  r.options.devices = devices;
  r.options.stop = opt.stop;
  return r;
}

/// One integral on several GPUs of this process: vegas(f, reg, opt) on the team of `devices`
/// (run_on_devices): each member samples its fixed share of the sub-cubes, the parts' sums, flags
/// and exact integer bins are exchanged, and every map is adapted alike. Returns bitwise vegas's
/// result on one device (and the CPU's, where the CPU and the GPU agree) for any list of devices;
/// opt.device and opt.devices are ignored, opt.backend must be cuda or automatic; under opt.team
/// (MPI ranks) every rank's devices share the run (run_on_devices).
/// `on_iteration` is called by the first device's thread only; its run_control::stop, and
/// opt.stop, end every device's run at the next iteration boundary (status interrupted). Scalar
/// integrands only (device array integrands throw invalid_input). `timing`: as run_on_devices'.
/// @throws as run_on_devices and vegas_with.
template <int D, class F>
result vegas_on_devices(const F& f, const region<D>& reg, const vegas_options& opt, const std::vector<int>& devices,
                        const iteration_callback& on_iteration = {}, exchange_time* timing = nullptr) {
  validate(opt, D);
  return run_on_devices(
      opt, devices, on_iteration,
      [&](cuda_backend& backend, const vegas_options& o, const iteration_callback& watch, int, const communicator&) {
        return vegas_with<D>(f, reg, o, backend, watch);
      },
      timing);
}

/// A parameter batch on several GPUs of this process: vegas_batch(f, regions, params, opt) with the
/// K integrals split over `devices` in contiguous ranges (device g takes [K g / G, K (g + 1) / G),
/// G = min(devices, K)), each range a batch of its own on one host thread and one cuda_backend
/// (vegas_batch_with with first_index: integral k keeps its seed batch_seed(opt.seed, k)). Result
/// k is bitwise vegas_batch's on one device, for any list of devices. `on_round` is called under a
/// lock, after any device's round, with the batch's progress (integrals K; finished and n_eval
/// summed over the devices; round: the fewest rounds any device has done); its stop, opt.stop and a
/// failure (without `failures`) end every device at its next round: each integral then keeps its
/// completed iterations (status interrupted), as on one device, though the devices may have
/// stopped after different rounds.
/// `resume` (batch_resumption): `from` (null or K progresses) continues the batch of those
/// progresses, each device its range; `save` is called, under a lock, from the device whose round
/// just ended, with the K progresses: that device's taken then (only when the saver calls the
/// function), every other integral's as its device last handed them (at an earlier write, at its
/// end, or `from`; a default vegas_progress, i.e. not begun, before any), and `ended` true once,
/// by the last device to end, when every integral's end has been taken. Every entry is a
/// boundary of its own integral's run, which is all a continued batch needs: it ends with the bits
/// of the batch never stopped, on any device count (integrals are independent).
/// @throws invalid_input for bad options, sizes or device lists; batch_error (failure nested) for
///         the lowest-index integral that fails, when `failures` is null; whatever on_round throws.
template <int D, class F, class P>
std::vector<result> vegas_batch_on_devices(const F& f, const std::vector<region<D>>& regions, const std::vector<P>& params,
                                           const vegas_options& opt, const std::vector<int>& devices,
                                           const batch_callback& on_round = {}, batch_failures* failures = nullptr,
                                           const batch_resumption& resume = {}) {
  validate(opt, D);
  validate_batch(params.size(), regions.size());
  detail::check_devices_of(opt, devices, "a batch");
  MCUBES_EXPECTS(opt.team == nullptr, "a batch on several devices does not run under a team of MPI ranks: run it in "
                                      "one process (its integrals are split over the devices)");
  const std::size_t K = params.size();
  const std::vector<vegas_progress>* from = resume.from;
  MCUBES_EXPECTS(from == nullptr || from->size() == K, "the batch to continue has ", from == nullptr ? 0 : from->size(),
                 " integrals, not ", K);
  const std::size_t G = std::min(devices.size(), K);
  std::vector<std::vector<result>> parts(G);
  std::vector<batch_failures> part_failures(G);
  std::vector<std::exception_ptr> thrown(G);
  std::vector<batch_progress> latest(G);
  std::mutex lock;
  std::atomic<bool> stop_all{false};
  const auto begin = [&](std::size_t g) { return K * g / G; };
  // Checkpoints: every integral's latest progress handed to the saver, and the devices ended
  std::vector<vegas_progress> latest_progress;
  if (resume.save) latest_progress = from != nullptr ? *from : std::vector<vegas_progress>(K);
  std::size_t devices_ended = 0;
  std::mutex save_lock;
  std::vector<std::thread> threads;
  for (std::size_t g = 0; g < G; ++g)
    threads.emplace_back([&, g] {
      try {
        const std::size_t k0 = begin(g), k1 = begin(g + 1);
        cuda_backend backend(launch_policy_of(opt), devices[g]);
        const vegas_options o = detail::options_on_device(opt, devices[g]);
        const std::vector<P> mine(params.begin() + static_cast<std::ptrdiff_t>(k0), params.begin() + static_cast<std::ptrdiff_t>(k1));
        const std::vector<region<D>> my_regions =
            regions.size() == 1 ? regions
                                : std::vector<region<D>>(regions.begin() + static_cast<std::ptrdiff_t>(k0),
                                                         regions.begin() + static_cast<std::ptrdiff_t>(k1));
        std::vector<vegas_progress> my_from;
        batch_resumption mine_resume;
        if (from != nullptr) {
          my_from.assign(from->begin() + static_cast<std::ptrdiff_t>(k0), from->begin() + static_cast<std::ptrdiff_t>(k1));
          mine_resume.from = &my_from;
        }
        if (resume.save)
          mine_resume.save = [&, k0](const std::function<std::vector<vegas_progress>()>& progress, bool ended) {
            std::lock_guard<std::mutex> hold(save_lock);
            const auto take_mine = [&] {
              std::vector<vegas_progress> ps = progress();
              std::move(ps.begin(), ps.end(), latest_progress.begin() + static_cast<std::ptrdiff_t>(k0));
            };
            if (ended) {
              take_mine();
              ++devices_ended;
            }
            resume.save(
                [&] {
                  if (!ended) take_mine();
                  return latest_progress;
                },
                ended && devices_ended == G);
          };
        const batch_callback each = [&, g](const batch_progress& p) {
          std::lock_guard<std::mutex> hold(lock);
          latest[g] = p;
          if (on_round && !stop_all.load()) {
            batch_progress all;
            all.integrals = K;
            all.round = latest[0].round;
            for (const batch_progress& q : latest) {
              all.finished += q.finished;
              all.n_eval += q.n_eval;
              all.round = std::min(all.round, q.round);
            }
            try {
              if (on_round(all) == run_control::stop) stop_all = true;
            } catch (...) {
              stop_all = true;
              throw;
            }
          }
          return stop_all.load() ? run_control::stop : run_control::proceed;
        };
        parts[g] = vegas_batch_with<D>(f, my_regions, mine, o, backend, each,
                                       failures != nullptr ? &part_failures[g] : nullptr, mine_resume, k0);
      } catch (...) {
        thrown[g] = std::current_exception();
        stop_all = true;
      }
    });
  for (std::thread& t : threads) t.join();
  for (const std::exception_ptr& e : thrown)  // the lowest range's failure (its integrals come first)
    if (e) std::rethrow_exception(e);
  std::vector<result> out;
  out.reserve(K);
  if (failures != nullptr) failures->assign(K, nullptr);
  for (std::size_t g = 0; g < G; ++g) {
    for (std::size_t j = 0; j < parts[g].size(); ++j) {
      if (failures != nullptr && j < part_failures[g].size()) (*failures)[begin(g) + j] = part_failures[g][j];
      parts[g][j].options.device = opt.device;
      parts[g][j].options.devices = devices;
      out.push_back(std::move(parts[g][j]));
    }
  }
  return out;
}

}  // namespace mcubes

#endif  // __CUDACC__

#pragma once
/// @file execution.hpp
/// Where a method runs: the execution options shared by every method (Vegas, plain Monte Carlo,
/// the midpoint rule, Monte Carlo pi) and their one validation. Each method's options struct
/// derives from `execution`, so `opt.backend`, `opt.threads`, `opt.cuda_threads_per_block` and
/// `opt.device` mean the same everywhere.
///
/// Determinism: no field of `execution` changes a result. The same seed gives the same bits for
/// any thread count and any CUDA block size; the CPU and the GPU draw the same sample points and
/// reduce over the same fixed tree (core/fixed_tree.hpp), and agree bitwise where the integrand
/// uses only +, -, *, /, sqrt and the CUDA code is built with --fmad=false (backend/cuda.cuh).

#include <atomic>
#include <string>
#include <vector>

#include "error.hpp"

namespace mcubes {

class communicator;  // backend/team.hpp

/// Which machine computes the samples. `automatic` picks CUDA when the translation unit was
/// compiled by nvcc and a device is present, else the CPU (result.backend says which ran).
enum class backend_kind { cpu, cuda, automatic };

/// "cpu", "cuda" or "auto".
inline const char* to_string(backend_kind b) {
  switch (b) {
    case backend_kind::cpu: return "cpu";
    case backend_kind::cuda: return "cuda";
    default: return "auto";
  }
}

/// Checks a CUDA block size: a power of two in [32, 1024] (the fixed reduction tree needs a power of
/// two; 1024 is the hardware limit). @throws invalid_input naming `what` and the value.
inline void validate_block_size(int tpb, const char* what = "cuda_threads_per_block") {
  MCUBES_EXPECTS(tpb >= 32 && tpb <= 1024 && (tpb & (tpb - 1)) == 0, what, " must be a power of two in [32, 1024], got ",
                 tpb);
}

/// A request to stop a run before its end, shared by the run (execution::stop) and whoever asks
/// for the stop: another thread, or a signal handler (request() is one relaxed store to a lock-free
/// atomic, async-signal-safe). Once requested it stays requested until clear().
///
/// What a run does with it: mcubes::vegas, integrator::integrate and vegas_batch (and vegas_continue,
/// vegas_batch_with) look at it before every sampling pass, and the CPU backend's workers look at it
/// between tiles of a pass (about a millisecond of work each), so that a run on the CPU stops within
/// about that time even in the middle of a long pass. A pass stopped mid-way is abandoned whole: its
/// partial sums are never used, no partial iteration enters a result. The run then ends with status
/// interrupted and the iterations completed before it (bitwise those of a run without the stop), and
/// its vegas_state is left at the abandoned iteration, so that an integrator continues exactly where
/// an uninterrupted run would have. A CUDA pass (one kernel) and an integrand call that does not
/// return cannot be abandoned: the run stops at the end of that pass. The other methods (plain Monte
/// Carlo, the midpoint rule, pi, vegas_vector) do not look at it.
class stop_request {
 public:
  /// Asks the runs that hold this request to stop (async-signal-safe).
  void request() noexcept { requested_.store(true, std::memory_order_relaxed); }
  /// Whether a stop was requested (a relaxed load: cheap enough for a check per tile).
  bool requested() const noexcept { return requested_.load(std::memory_order_relaxed); }
  /// Withdraws the request (for the next run that shares this object).
  void clear() noexcept { requested_.store(false, std::memory_order_relaxed); }

 private:
  std::atomic<bool> requested_{false};
  static_assert(std::atomic<bool>::is_always_lock_free, "stop_request needs a lock-free atomic (signal handlers)");
};

/// The execution options of every method.
struct execution {
  backend_kind backend = backend_kind::cpu;  ///< who computes: cpu, cuda (nvcc translation units), or automatic
  int threads = 0;                           ///< CPU worker threads; 0 = all hardware threads. Never changes the result.
  int cuda_threads_per_block = 256;          ///< CUDA block size, a power of two in [32, 1024]. Never changes the result.
  int device = 0;                            ///< CUDA device ordinal (cudaSetDevice); >= 0. Never changes the result.
  /// Points per call of a device array integrand on the CUDA backend (integrand.hpp; whole tiles,
  /// at least one); 0: the default, 2^22. Memory: (D + 1) x 8 bytes per point. Never changes the result.
  unsigned long long cuda_array_points = 0;
  /// A stop request that the run honours (stop_request: when and how), or null: never stopped this
  /// way. Not owned; it must outlive the run. Never changes the completed iterations.
  const stop_request* stop = nullptr;
  /// The team of processes (MPI ranks: mcubes/mpi.hpp's mpi_communicator) that computes each
  /// integral together, or null: this process alone. Every rank runs the same call with the same
  /// options; each samples its fixed share of the sub-cubes (backend/team.hpp) and every rank
  /// returns the same result, bitwise that of one process, for any number of ranks. The CPU
  /// backend: scalar integrands (single runs and batches) and the chunk methods (plain Monte
  /// Carlo, the midpoint rule, pi); the CUDA backend: single runs of scalar integrands, on
  /// `device` or on every entry of `devices` (each rank's GPUs: the ranks' devices form one team,
  /// nested_communicator). A vector integrand, or a batch on the CUDA backend, under a team of
  /// several ranks throws invalid_input. Not owned; it must outlive the run. Never changes the
  /// result.
  const communicator* team = nullptr;
  /// The CUDA devices (ordinals; one may repeat: several streams of one device) that compute each
  /// integral together on the CUDA backend, one host thread per entry (a thread team,
  /// backend/team.hpp), or empty: `device` alone. A single integral (vegas) splits its sub-cubes
  /// over the devices in fixed contiguous ranges and exchanges the parts' sums and the exact
  /// integer bins; a batch (vegas_batch) gives each device a contiguous range of its integrals.
  /// Either way every result is bitwise that of one device, for any list. Honoured by vegas and
  /// vegas_batch in translation units compiled by nvcc; under a team of MPI ranks (`team`), vegas
  /// splits each pass over every rank's devices (a batch then throws invalid_input). A list of
  /// more than one device with the CPU backend, or for the integrator class and vector integrands
  /// throws invalid_input. Never changes the result.
  std::vector<int> devices;
};

/// The one CUDA device of `ex` (devices' only entry when it has one, else device). @throws
/// invalid_input when devices lists several (a caller that runs on one device only).
inline int one_device_of(const execution& ex, const char* who) {
  MCUBES_EXPECTS(ex.devices.size() <= 1, who, " runs on one CUDA device, but devices lists ", ex.devices.size(),
                 " (vegas and vegas_batch take several)");
  return ex.devices.empty() ? ex.device : ex.devices[0];
}

/// What vegas and vegas_batch say when ex.devices lists several devices but the call does not run
/// on the CUDA backend. @throws invalid_input then.
inline void expect_devices_on_cuda(const execution& ex) {
  MCUBES_EXPECTS(ex.devices.size() <= 1, "devices lists ", ex.devices.size(),
                 " CUDA devices, but this call does not run on the CUDA backend (backend cuda, or automatic with a "
                 "device present, in a translation unit compiled by nvcc)");
}

/// Checks every field of `ex`. (That a CUDA device exists is checked when the backend is made.)
/// @throws invalid_input naming the first offending field and its value.
inline void validate(const execution& ex) {
  MCUBES_EXPECTS(ex.backend == backend_kind::cpu || ex.backend == backend_kind::cuda ||
                     ex.backend == backend_kind::automatic,
                 "backend must be cpu, cuda or automatic, got ", static_cast<int>(ex.backend));
  MCUBES_EXPECTS(ex.threads >= 0, "threads must be at least 1 (or 0 for all cores), got ", ex.threads);
  validate_block_size(ex.cuda_threads_per_block);
  MCUBES_EXPECTS(ex.device >= 0, "device must be a non-negative CUDA device ordinal, got ", ex.device);
  for (int d : ex.devices) MCUBES_EXPECTS(d >= 0, "devices must be non-negative CUDA device ordinals, got ", d);
  MCUBES_EXPECTS(ex.cuda_array_points <= (1ull << 40), "cuda_array_points must be at most 2^40 (0: the default), got ",
                 ex.cuda_array_points);
}

}  // namespace mcubes

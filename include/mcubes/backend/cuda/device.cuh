#pragma once
/// @file backend/cuda/device.cuh
/// The device a CUDA backend runs on (cuda_backend, backend/cuda.cuh): its ordinal, its properties
/// (cudaDeviceProp, read once) and the non-blocking stream all of the backend's work runs in, with
/// a side stream for work that may run beside it (forked from and joined back to the stream by
/// events), all owned (created here, destroyed with the object). No global or thread-local state.

#include <cuda_runtime.h>

#include <string>

#include "../../error.hpp"
#include "check.cuh"

namespace mcubes {
namespace cuda_detail {

/// A device ordinal, its properties, a non-blocking stream on it and a side stream (RAII; not
/// copyable).
class device_stream {
 public:
  /// Makes `ordinal` current, reads its properties and creates the stream.
  /// @throws cuda_error if there is no device `ordinal` or a CUDA call fails.
  explicit device_stream(int ordinal) : ordinal_(ordinal) {
    if (cuda_device_count() <= ordinal_)
      throw cuda_error("no CUDA device available (device " + std::to_string(ordinal_) + " requested)");
    MCUBES_CUDA_CHECK(cudaSetDevice(ordinal_));
    MCUBES_CUDA_CHECK(cudaGetDeviceProperties(&props_, ordinal_));
    MCUBES_CUDA_CHECK(cudaStreamCreateWithFlags(&stream_, cudaStreamNonBlocking));
    MCUBES_CUDA_CHECK(cudaStreamCreateWithFlags(&side_, cudaStreamNonBlocking));
    MCUBES_CUDA_CHECK(cudaEventCreateWithFlags(&fork_, cudaEventDisableTiming));
    MCUBES_CUDA_CHECK(cudaEventCreateWithFlags(&join_, cudaEventDisableTiming));
    MCUBES_CUDA_CHECK(cudaEventCreateWithFlags(&mark_, cudaEventDisableTiming));
  }
  device_stream(const device_stream&) = delete;
  device_stream& operator=(const device_stream&) = delete;
  ~device_stream() {
    if (mark_) cudaEventDestroy(mark_);
    if (join_) cudaEventDestroy(join_);
    if (fork_) cudaEventDestroy(fork_);
    if (side_) cudaStreamDestroy(side_);
    if (stream_) cudaStreamDestroy(stream_);
  }

  int ordinal() const noexcept { return ordinal_; }
  const cudaDeviceProp& properties() const noexcept { return props_; }
  cudaStream_t stream() const noexcept { return stream_; }
  /// The side stream: work queued there after fork_side() runs beside the stream's until a
  /// join_side() or a host wait (the VEGAS+ sorted pass: the light sub-cubes beside the heavy
  /// ones, backend/cuda/vegas_pass.cuh; the allocation behind a pass beside the host's work and
  /// the next adaptation, counts_allocator.cuh). Nothing else is queued there.
  cudaStream_t side() const noexcept { return side_; }
  /// Queues on side() a wait for everything queued on stream() so far. @throws cuda_error.
  void fork_side() const {
    MCUBES_CUDA_CHECK(cudaEventRecord(fork_, stream_));
    MCUBES_CUDA_CHECK(cudaStreamWaitEvent(side_, fork_, 0));
  }
  /// Queues on stream() a wait for everything queued on side() so far. @throws cuda_error.
  void join_side() const {
    MCUBES_CUDA_CHECK(cudaEventRecord(join_, side_));
    MCUBES_CUDA_CHECK(cudaStreamWaitEvent(stream_, join_, 0));
  }
  /// Marks everything queued on side() so far (the work that wait_side_mark waits for).
  /// @throws cuda_error.
  void mark_side() const { MCUBES_CUDA_CHECK(cudaEventRecord(mark_, side_)); }
  /// Waits on the host for the work marked by the last mark_side() (none: returns at once).
  /// Returns the CUDA error of the wait (cudaSuccess), so that noexcept callers can leave it to
  /// the next checked call.
  cudaError_t wait_side_mark() const noexcept { return cudaEventSynchronize(mark_); }
  /// Streaming multiprocessors of the device.
  int multiprocessors() const noexcept { return props_.multiProcessorCount; }

  /// Makes the device current for the calling host thread (cheap when it already is), so that
  /// backends of different devices can be used from one thread. @throws cuda_error if it fails.
  void use() const { MCUBES_CUDA_CHECK(cudaSetDevice(ordinal_)); }
  /// Waits for all work in the stream. @throws cuda_error if it fails.
  void synchronize() const { MCUBES_CUDA_CHECK(cudaStreamSynchronize(stream_)); }

 private:
  int ordinal_ = 0;
  cudaDeviceProp props_{};
  cudaStream_t stream_ = nullptr;
  cudaStream_t side_ = nullptr;
  cudaEvent_t fork_ = nullptr, join_ = nullptr, mark_ = nullptr;
};

}  // namespace cuda_detail
}  // namespace mcubes

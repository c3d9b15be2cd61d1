#pragma once
/// @file backend/cuda/device.cuh
/// The device a CUDA backend runs on (cuda_backend, backend/cuda.cuh): its ordinal, its properties
/// (cudaDeviceProp, read once) and the one non-blocking stream all of the backend's work runs in,
/// owned (created here, destroyed with the object). No global or thread-local state.

#include <cuda_runtime.h>

#include <string>

#include "../../error.hpp"
#include "check.cuh"

namespace mcubes {
namespace cuda_detail {

/// A device ordinal, its properties and a non-blocking stream on it (RAII; not copyable).
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
  }
  device_stream(const device_stream&) = delete;
  device_stream& operator=(const device_stream&) = delete;
  ~device_stream() {
    if (stream_) cudaStreamDestroy(stream_);
  }

  int ordinal() const noexcept { return ordinal_; }
  const cudaDeviceProp& properties() const noexcept { return props_; }
  cudaStream_t stream() const noexcept { return stream_; }
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
};

}  // namespace cuda_detail
}  // namespace mcubes

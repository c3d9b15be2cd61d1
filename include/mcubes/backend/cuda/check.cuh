#pragma once
/// @file backend/cuda/check.cuh
/// CUDA error checking: every CUDA runtime call and every launch goes through MCUBES_CUDA_CHECK,
/// which throws mcubes::cuda_error carrying the call, the error name and string, file and line.

#include <cuda_runtime.h>

#include <sstream>
#include <string>

#include "../../error.hpp"

namespace mcubes {

/// A CUDA runtime failure (including "no CUDA device").
class cuda_error : public error {
 public:
  cuda_error(cudaError_t code, const std::string& call, const char* file, int line)
      : error(make_message(code, call, file, line)), code_(code) {}
  explicit cuda_error(const std::string& message) : error(message), code_(cudaErrorUnknown) {}
  cudaError_t code() const noexcept { return code_; }

 private:
  static std::string make_message(cudaError_t code, const std::string& call, const char* file, int line) {
    std::ostringstream s;
    s << "CUDA error " << cudaGetErrorName(code) << " (" << cudaGetErrorString(code) << ") in " << call << " at "
      << file << ":" << line;
    return s.str();
  }
  cudaError_t code_;
};

namespace cuda_detail {
inline void check(cudaError_t code, const char* call, const char* file, int line) {
  if (code != cudaSuccess) {
    (void)cudaGetLastError();  // clear a non-sticky error
    throw cuda_error(code, call, file, line);
  }
}
}  // namespace cuda_detail

/// Number of CUDA devices visible, 0 when there is none or no usable driver (never throws).
inline int cuda_device_count() noexcept {
  int n = 0;
  if (cudaGetDeviceCount(&n) != cudaSuccess) {
    (void)cudaGetLastError();
    return 0;
  }
  return n;
}

}  // namespace mcubes

/// Checks a CUDA runtime call; throws mcubes::cuda_error on failure.
#define MCUBES_CUDA_CHECK(call) ::mcubes::cuda_detail::check((call), #call, __FILE__, __LINE__)
/// Checks the last kernel launch (configuration errors) without synchronising.
#define MCUBES_CUDA_CHECK_LAUNCH(what) ::mcubes::cuda_detail::check(cudaGetLastError(), what, __FILE__, __LINE__)

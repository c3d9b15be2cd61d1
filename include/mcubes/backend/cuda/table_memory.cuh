#pragma once
/// @file backend/cuda/table_memory.cuh
/// The device copy of tables (tables/table_storage.hpp): cudaMalloc + a synchronous copy, on the
/// current device or the one table_placement::on_device names, and cudaFree with the last copy of
/// the table. Registered before main by every translation unit that includes this header (through
/// <mcubes/cuda.cuh>), so that tables made anywhere in such a program get a device copy while a
/// program without CUDA keeps its tables on the host.

#include <cuda_runtime.h>

#include <string>

#include "../../tables/table_storage.hpp"
#include "check.cuh"

namespace mcubes::cuda_detail {

/// table_device_memory::upload (table_storage.hpp): the current device (or `device`), restored
/// afterwards.
inline const void* upload_table(const void* host, std::size_t bytes, int device, bool required, int* used) {
  const int count = cuda_device_count();
  if (count == 0) {
    if (required) throw cuda_error("table_placement::on_device(" + std::to_string(device) + "): no CUDA device available");
    return nullptr;
  }
  if (device >= count)
    throw cuda_error("table_placement::on_device(" + std::to_string(device) + "): only " + std::to_string(count) +
                     " CUDA device(s)");
  int previous = 0;
  MCUBES_CUDA_CHECK(cudaGetDevice(&previous));
  const int target = device >= 0 ? device : previous;
  MCUBES_CUDA_CHECK(cudaSetDevice(target));
  void* ptr = nullptr;
  cudaError_t e = cudaMalloc(&ptr, bytes);
  if (e == cudaSuccess) e = cudaMemcpy(ptr, host, bytes, cudaMemcpyHostToDevice);
  if (e == cudaSuccess) e = cudaStreamSynchronize(cudaStreamLegacy);  // visible to non-blocking streams
  if (e != cudaSuccess) {
    if (ptr != nullptr) cudaFree(ptr);
    cudaSetDevice(previous);
    MCUBES_CUDA_CHECK(e);
  }
  MCUBES_CUDA_CHECK(cudaSetDevice(previous));
  *used = target;
  return ptr;
}

/// table_device_memory::release: cudaFree on the table's device (errors ignored).
inline void release_table(const void* ptr, int device) noexcept {
  int previous = 0;
  if (cudaGetDevice(&previous) != cudaSuccess) return;
  cudaSetDevice(device);
  cudaFree(const_cast<void*>(ptr));
  cudaSetDevice(previous);
}

inline const mcubes::detail::table_device_memory table_memory{&upload_table, &release_table};

/// Registers the device copy before main (dynamic initialisation of an inline variable).
inline const bool table_memory_registered = (mcubes::detail::table_device_memory_hook() = &table_memory, true);

}  // namespace mcubes::cuda_detail

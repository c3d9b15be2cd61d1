#pragma once
/// @file backend/cuda/device_array.cuh
/// RAII arrays in device memory and in pinned host memory, and CUDA events.
///
/// device_array<T> owns n elements allocated with cudaMalloc (never managed memory) and frees them
/// in its destructor; move-only. Its view() is a trivially copyable {pointer, size} that kernels
/// and stateful integrands take by value, e.g. a tabulated integrand:
///
///   struct table_integrand {
///     mcubes::device_span<const double> table;  // non-owning, valid while the array lives
///     __host__ __device__ double operator()(const mcubes::point<1>& x) const { ... table[i] ... }
///   };
///   mcubes::device_array<double> t(host_values);   // copies to the device
///   table_integrand f{t.view()};                   // pass f to the CUDA backend

#include <cuda_runtime.h>

#include <cstddef>
#include <utility>
#include <vector>

#include "../../config.hpp"
#include "check.cuh"

namespace mcubes {

/// Non-owning view of a device array: trivially copyable, usable in kernels and integrands.
template <class T>
struct device_span {
  T* ptr = nullptr;
  std::size_t count = 0;
  MCUBES_HOST_DEVICE T& operator[](std::size_t i) const { return ptr[i]; }
  MCUBES_HOST_DEVICE T* data() const { return ptr; }
  MCUBES_HOST_DEVICE std::size_t size() const { return count; }
};

/// Owning array of n T in device memory (cudaMalloc / cudaFree). Contents are uninitialised
/// unless built from host data. @throws cuda_error if the allocation or a copy fails.
template <class T>
class device_array {
 public:
  device_array() = default;
  explicit device_array(std::size_t n) : n_(n) {
    if (n_) MCUBES_CUDA_CHECK(cudaMalloc(reinterpret_cast<void**>(&ptr_), n_ * sizeof(T)));
  }
  explicit device_array(const std::vector<T>& host) : device_array(host.size()) { copy_from_host(host.data(), host.size()); }
  device_array(const device_array&) = delete;
  device_array& operator=(const device_array&) = delete;
  device_array(device_array&& o) noexcept : ptr_(std::exchange(o.ptr_, nullptr)), n_(std::exchange(o.n_, 0)) {}
  device_array& operator=(device_array&& o) noexcept {
    if (this != &o) {
      release();
      ptr_ = std::exchange(o.ptr_, nullptr);
      n_ = std::exchange(o.n_, 0);
    }
    return *this;
  }
  ~device_array() { release(); }

  T* data() const noexcept { return ptr_; }
  std::size_t size() const noexcept { return n_; }
  device_span<T> view() const noexcept { return {ptr_, n_}; }
  device_span<const T> const_view() const noexcept { return {ptr_, n_}; }

  /// Copies count elements from host memory (synchronous: complete on the device when it returns,
  /// so that kernels in any stream, non-blocking ones included, see the data. cudaMemcpy from
  /// pageable memory alone may return before its DMA to the device is done, and a non-blocking
  /// stream does not wait for the legacy default stream; hence the synchronisation).
  void copy_from_host(const T* src, std::size_t count) {
    MCUBES_CUDA_CHECK(cudaMemcpy(ptr_, src, count * sizeof(T), cudaMemcpyHostToDevice));
    MCUBES_CUDA_CHECK(cudaStreamSynchronize(cudaStreamLegacy));
  }
  /// Copies the whole array to a new host vector (synchronous).
  std::vector<T> to_host() const { return to_host(0, n_); }
  /// Copies elements [begin, begin + count) to a new host vector (synchronous; the range must lie
  /// within the array).
  std::vector<T> to_host(std::size_t begin, std::size_t count) const {
    std::vector<T> h(count);
    if (count) MCUBES_CUDA_CHECK(cudaMemcpy(h.data(), ptr_ + begin, count * sizeof(T), cudaMemcpyDeviceToHost));
    return h;
  }

 private:
  void release() noexcept {
    if (ptr_) cudaFree(ptr_);
    ptr_ = nullptr;
    n_ = 0;
  }
  T* ptr_ = nullptr;
  std::size_t n_ = 0;
};

/// Owning array of n T in pinned (page-locked) host memory, for asynchronous copies.
template <class T>
class pinned_array {
 public:
  pinned_array() = default;
  explicit pinned_array(std::size_t n) : n_(n) {
    if (n_) MCUBES_CUDA_CHECK(cudaMallocHost(reinterpret_cast<void**>(&ptr_), n_ * sizeof(T)));
  }
  pinned_array(const pinned_array&) = delete;
  pinned_array& operator=(const pinned_array&) = delete;
  pinned_array(pinned_array&& o) noexcept : ptr_(std::exchange(o.ptr_, nullptr)), n_(std::exchange(o.n_, 0)) {}
  pinned_array& operator=(pinned_array&& o) noexcept {
    if (this != &o) {
      if (ptr_) cudaFreeHost(ptr_);
      ptr_ = std::exchange(o.ptr_, nullptr);
      n_ = std::exchange(o.n_, 0);
    }
    return *this;
  }
  ~pinned_array() {
    if (ptr_) cudaFreeHost(ptr_);
  }
  T* data() const noexcept { return ptr_; }
  std::size_t size() const noexcept { return n_; }
  T& operator[](std::size_t i) const { return ptr_[i]; }

 private:
  T* ptr_ = nullptr;
  std::size_t n_ = 0;
};

/// Owning CUDA event without timing (cudaEventDisableTiming: the cheap kind), for ordering the
/// host against work in a stream: record() after the work, wait() before the host reuses what the
/// work reads. wait() on an event never recorded, or on an empty one (default-constructed), returns
/// at once. Move-only.
/// @throws cuda_error if creating, recording or waiting fails.
class cuda_event {
 public:
  cuda_event() = default;
  static cuda_event create() {
    cuda_event e;
    MCUBES_CUDA_CHECK(cudaEventCreateWithFlags(&e.ev_, cudaEventDisableTiming));
    return e;
  }
  cuda_event(const cuda_event&) = delete;
  cuda_event& operator=(const cuda_event&) = delete;
  cuda_event(cuda_event&& o) noexcept : ev_(std::exchange(o.ev_, nullptr)) {}
  cuda_event& operator=(cuda_event&& o) noexcept {
    if (this != &o) {
      if (ev_) cudaEventDestroy(ev_);
      ev_ = std::exchange(o.ev_, nullptr);
    }
    return *this;
  }
  ~cuda_event() {
    if (ev_) cudaEventDestroy(ev_);
  }
  void record(cudaStream_t stream) { MCUBES_CUDA_CHECK(cudaEventRecord(ev_, stream)); }
  void wait() const {
    if (ev_) MCUBES_CUDA_CHECK(cudaEventSynchronize(ev_));
  }

 private:
  cudaEvent_t ev_ = nullptr;
};

}  // namespace mcubes

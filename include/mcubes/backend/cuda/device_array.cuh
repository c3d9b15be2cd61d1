#pragma once
/// @file backend/cuda/device_array.cuh
/// RAII arrays in device memory and in pinned host memory (small pinned blocks reused within the
/// process: pinned_block_cache), and CUDA events.
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
#include <mutex>
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

/// Small pinned host blocks kept for reuse by the whole process (pinned_array). Page-locking is
/// slow: on the project's H200 machine a cudaMallocHost and cudaFreeHost of 4 KiB took 1.1 ms
/// together (bench/results/2026-11-30-fresh-backends.md), and a backend made for one call (a
/// loop of vegas() calls, each making its own backend) allocates several such blocks. A freed
/// block of at most max_block bytes goes to the free list of its power-of-two size class (at most
/// max_cached bytes in all; beyond that it is freed), and the next request of that class takes it
/// (the last one freed first). Cached blocks go back to CUDA only when the process ends: the cache
/// is never destroyed, so that no CUDA call runs during static destruction, after the runtime may
/// have shut down. Pinned memory belongs to no device. Thread-safe (one mutex). Never changes a
/// result (the blocks hold copies in transit only, and are written before they are read).
class pinned_block_cache {
 public:
  static constexpr std::size_t min_block = 256;
  static constexpr std::size_t max_block = std::size_t(1) << 20;
  static constexpr std::size_t max_cached = std::size_t(16) << 20;
  static pinned_block_cache& instance() {
    static pinned_block_cache* const cache = new pinned_block_cache;  // never destroyed (see above)
    return *cache;
  }
  /// The bytes of the block a request of `bytes` gets: its power-of-two class, at least
  /// min_block; 0 above max_block (such blocks are not cached).
  static std::size_t class_bytes(std::size_t bytes) noexcept {
    if (bytes > max_block) return 0;
    std::size_t c = min_block;
    while (c < bytes) c <<= 1;
    return c;
  }
  /// A pinned block of at least `bytes` bytes. @throws cuda_error if page-locking fails.
  void* take(std::size_t bytes) {
    const std::size_t c = class_bytes(bytes);
    if (c != 0) {
      std::lock_guard<std::mutex> lock(mutex_);
      std::vector<void*>& list = free_[index_of(c)];
      if (!list.empty()) {
        void* p = list.back();
        list.pop_back();
        cached_ -= c;
        return p;
      }
    }
    void* p = nullptr;
    MCUBES_CUDA_CHECK(cudaMallocHost(&p, c != 0 ? c : bytes));
    return p;
  }
  /// Gives back block p, taken with the same `bytes`.
  void give(void* p, std::size_t bytes) noexcept {
    const std::size_t c = class_bytes(bytes);
    if (c != 0) {
      try {
        std::lock_guard<std::mutex> lock(mutex_);
        if (cached_ + c <= max_cached) {
          free_[index_of(c)].push_back(p);
          cached_ += c;
          return;
        }
      } catch (...) {  // no room for the pointer (or the lock failed): freed below
      }
    }
    cudaFreeHost(p);
  }

 private:
  static std::size_t index_of(std::size_t c) noexcept {
    std::size_t i = 0;
    while ((min_block << i) < c) ++i;
    return i;
  }
  std::mutex mutex_;
  std::vector<void*> free_[13];  // classes min_block << i, i <= 12 (max_block)
  std::size_t cached_ = 0;
};

/// Owning array of n T in pinned (page-locked) host memory, for asynchronous copies; small arrays
/// come from pinned_block_cache (reused within the process), large ones straight from
/// cudaMallocHost. Contents are uninitialised. @throws cuda_error if page-locking fails.
template <class T>
class pinned_array {
 public:
  pinned_array() = default;
  explicit pinned_array(std::size_t n) : n_(n) {
    if (n_) ptr_ = static_cast<T*>(pinned_block_cache::instance().take(n_ * sizeof(T)));
  }
  pinned_array(const pinned_array&) = delete;
  pinned_array& operator=(const pinned_array&) = delete;
  pinned_array(pinned_array&& o) noexcept : ptr_(std::exchange(o.ptr_, nullptr)), n_(std::exchange(o.n_, 0)) {}
  pinned_array& operator=(pinned_array&& o) noexcept {
    if (this != &o) {
      release();
      ptr_ = std::exchange(o.ptr_, nullptr);
      n_ = std::exchange(o.n_, 0);
    }
    return *this;
  }
  ~pinned_array() { release(); }
  T* data() const noexcept { return ptr_; }
  std::size_t size() const noexcept { return n_; }
  T& operator[](std::size_t i) const { return ptr_[i]; }

 private:
  void release() noexcept {
    if (ptr_) pinned_block_cache::instance().give(ptr_, n_ * sizeof(T));
    ptr_ = nullptr;
    n_ = 0;
  }
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

#pragma once
/// @file backend/cuda/device_map.cuh
/// Adaptive maps in device memory (layout of adaptive_map: D rows of n_bins + 1 edges, axis-major):
///  - device_map<D>: the trivially copyable reference to one map (edges, n_bins) that the backend
///    hands out (cuda_backend::make_map) and kernels take by value (view());
///  - device_map_storage: owns the device memory of the single map of a run and its pinned staging
///    buffer (kept between runs);
///  - device_batch_maps<D>: owns the K maps of a parameter batch (one buffer).
/// Copies and fills named *_async are queued in the given stream and return at once; the others
/// wait for them.

#include <cuda_runtime.h>

#include <algorithm>
#include <cstddef>
#include <cstring>
#include <type_traits>
#include <utility>
#include <vector>

#include "../../core/adaptive_map.hpp"
#include "batch_kernels.cuh"
#include "check.cuh"
#include "device_array.cuh"

namespace mcubes {

/// The adaptive map of a run on the CUDA backend: D rows of n_bins + 1 edges in device memory
/// (layout of adaptive_map), held by the backend. Made by cuda_backend::make_map, adapted by
/// cuda_backend::adapt_map; valid until the backend's next make_map (one run at a time).
template <int D>
struct device_map {
  device_span<double> edges;
  int n_bins = 0;
  map_view<D> view() const noexcept { return map_view<D>{edges.data(), n_bins}; }
};
static_assert(std::is_trivially_copyable_v<device_map<1>>, "device_map is a reference: trivially copyable");

/// The edges of `map`, copied to the host (synchronous). @throws cuda_error if the copy fails.
template <int D>
std::vector<double> copy_map_edges(const device_map<D>& map, cudaStream_t stream) {
  std::vector<double> out(map.edges.size());
  MCUBES_CUDA_CHECK(cudaMemcpyAsync(out.data(), map.edges.data(), out.size() * sizeof(double), cudaMemcpyDeviceToHost, stream));
  MCUBES_CUDA_CHECK(cudaStreamSynchronize(stream));
  return out;
}

namespace cuda_detail {

/// Device memory of the single map of a run and the pinned buffer its edges are copied from (both
/// grow to the largest map asked for, and are kept). Not copyable.
class device_map_storage {
 public:
  /// A uniform map of n_bins bins per axis (the edges of adaptive_map<D>(n_bins)) in this storage;
  /// invalidates the map of the previous call. The copy to the device is queued in `stream`.
  /// @throws invalid_input if n_bins < 2; cuda_error if the allocation or copy fails.
  template <int D>
  device_map<D> make_uniform_async(int n_bins, cudaStream_t stream) {
    const adaptive_map<D> uniform(n_bins);
    const std::size_t n = uniform.edges().size();
    if (edges_.size() < n) edges_ = device_array<double>(n);
    if (staging_.size() < n) staging_ = pinned_array<double>(n);
    MCUBES_CUDA_CHECK(cudaStreamSynchronize(stream));  // no copy from staging_ still pending
    std::memcpy(staging_.data(), uniform.edges().data(), n * sizeof(double));
    MCUBES_CUDA_CHECK(cudaMemcpyAsync(edges_.data(), staging_.data(), n * sizeof(double), cudaMemcpyHostToDevice, stream));
    device_map<D> m;
    m.edges = device_span<double>{edges_.data(), n};
    m.n_bins = n_bins;
    return m;
  }
  /// make_uniform_async, complete when it returns.
  template <int D>
  device_map<D> make_uniform(int n_bins, cudaStream_t stream) {
    device_map<D> m = make_uniform_async<D>(n_bins, stream);
    MCUBES_CUDA_CHECK(cudaStreamSynchronize(stream));
    return m;
  }

  /// Replaces the edges of `map` (a map of this storage) with `edges` (already checked: as many
  /// as the map has), through the staging buffer; the copy is queued in `stream`.
  /// @throws cuda_error if the copy fails.
  template <int D>
  void set_edges_async(const device_map<D>& map, const std::vector<double>& edges, cudaStream_t stream) {
    MCUBES_CUDA_CHECK(cudaStreamSynchronize(stream));  // no copy from staging_ still pending
    std::memcpy(staging_.data(), edges.data(), edges.size() * sizeof(double));
    MCUBES_CUDA_CHECK(cudaMemcpyAsync(map.edges.data(), staging_.data(), edges.size() * sizeof(double),
                                      cudaMemcpyHostToDevice, stream));
  }
  /// set_edges_async, complete when it returns.
  template <int D>
  void set_edges(const device_map<D>& map, const std::vector<double>& edges, cudaStream_t stream) {
    set_edges_async(map, edges, stream);
    MCUBES_CUDA_CHECK(cudaStreamSynchronize(stream));
  }

  /// A second buffer of the layout of `map` (grown to its size and kept), for new edges that may
  /// become the map's (take_spare), if `map` is this storage's current map; else null.
  /// @throws cuda_error if the allocation fails.
  template <int D>
  double* spare_for(const device_map<D>& map) {
    if (map.edges.data() != edges_.data() || map.edges.size() > edges_.size()) return nullptr;
    if (spare_.size() < edges_.size()) spare_ = device_array<double>(edges_.size());
    return spare_.data();
  }
  /// Makes the spare buffer (spare_for(map), filled by the stream's work) the edges of `map`, the
  /// storage's current map, and its old edges the spare: no copy.
  template <int D>
  void take_spare(device_map<D>& map) noexcept {
    std::swap(edges_, spare_);
    map.edges = device_span<double>{edges_.data(), map.edges.size()};
  }

 private:
  device_array<double> edges_;
  device_array<double> spare_;  ///< spare_for / take_spare
  pinned_array<double> staging_;
};

/// The K maps of a parameter batch in one device buffer (map k at k * map_doubles()). Move-only.
template <int D>
class device_batch_maps {
 public:
  device_batch_maps() = default;
  /// Room for n maps of n_bins bins per axis (contents unset: fill_uniform_async).
  /// @throws cuda_error if the allocation fails.
  device_batch_maps(std::size_t n, int n_bins)
      : n_(n), n_bins_(n_bins), edges_(n * static_cast<std::size_t>(D) * (n_bins + 1)) {}

  std::size_t size() const noexcept { return n_; }
  int n_bins() const noexcept { return n_bins_; }
  /// Edges per map: D (n_bins + 1).
  std::size_t map_doubles() const noexcept { return static_cast<std::size_t>(D) * (n_bins_ + 1); }
  /// Map k's edges (device pointer).
  double* edges(std::size_t k) const noexcept { return edges_.data() + k * map_doubles(); }
  /// Map k as kernels take it.
  map_view<D> view(std::size_t k) const noexcept { return map_view<D>{edges(k), n_bins_}; }
  /// Map k as a device_map (a reference into this buffer).
  device_map<D> ref(std::size_t k) const noexcept { return device_map<D>{device_span<double>{edges(k), map_doubles()}, n_bins_}; }

  /// Makes every map uniform (the edges of adaptive_map<D>(n_bins), computed on the device) and
  /// sets the n pass flags at `flags` to their initial value, in one launch queued in `stream`.
  /// @throws cuda_error if the launch fails.
  void fill_uniform_async(device_flags* flags, cudaStream_t stream) {
    init_batch_kernel<><<<static_cast<unsigned>(std::min<std::size_t>(4096, (edges_.size() + 255) / 256)), 256, 0, stream>>>(
        edges_.data(), edges_.size(), n_bins_, flags, n_);
    MCUBES_CUDA_CHECK_LAUNCH("init_batch_kernel");
  }
  /// fill_uniform_async, complete when it returns.
  void fill_uniform(device_flags* flags, cudaStream_t stream) {
    fill_uniform_async(flags, stream);
    MCUBES_CUDA_CHECK(cudaStreamSynchronize(stream));
  }

  /// Map k's edges, copied to the host (synchronous). @throws cuda_error if the copy fails.
  std::vector<double> copy_to_host(std::size_t k, cudaStream_t stream) const { return copy_map_edges(ref(k), stream); }
  /// Replaces map k's edges by `host` (map_doubles() values), after the work queued in `stream`
  /// (synchronous). @throws cuda_error if the copy fails.
  void copy_from_host(std::size_t k, const std::vector<double>& host, cudaStream_t stream) {
    MCUBES_CUDA_CHECK(cudaMemcpyAsync(edges(k), host.data(), map_doubles() * sizeof(double), cudaMemcpyHostToDevice, stream));
    MCUBES_CUDA_CHECK(cudaStreamSynchronize(stream));
  }

 private:
  std::size_t n_ = 0;
  int n_bins_ = 0;
  device_array<double> edges_;
};

}  // namespace cuda_detail
}  // namespace mcubes

#pragma once
/// @file tables/interpnd.hpp
/// N-dimensional multilinear interpolation (1 <= N <= 6) on a rectilinear grid, usable inside
/// integrands on the CPU and the GPU (table_storage.hpp: ownership, device copy, thread safety).
///
/// Layout: C order, the last axis fastest: values[((i_0 n_1 + i_1) n_2 + i_2) ...] =
/// f(x0_{i_0}, x1_{i_1}, ...), i.e. a NumPy array of shape (n_0, ..., n_{N-1}) in C order. (For
/// N = 2 this is the transpose of interp2d's GSL layout.)
/// Value: with the cell (i_k) and positions u_k in it per axis (as interp1d),
///   f = sum over the 2^N corners c of prod_k (c_k ? u_k : 1 - u_k) v_{i + c},
/// computed as N successive linear interpolations along the last axis first (2^N - 1 of them).
/// Exact for functions that are linear in each coordinate separately (e.g. a + b x0 x1 x2).
/// Lookup O(1) per uniform axis (grid_axis::uniform), bisection on explicit nodes. Host and device
/// as interp1d. Out of range: the policy, per axis (table_storage.hpp).

#include <array>
#include <cstdint>
#include <memory>
#include <utility>
#include <vector>

#include "../config.hpp"
#include "table_storage.hpp"

namespace mcubes {

namespace detail {
/// "interpnd<N>" for messages.
MCUBES_HOST_DEVICE inline const char* interpnd_name(int n) {
  switch (n) {
    case 1: return "interpnd<1>";
    case 2: return "interpnd<2>";
    case 3: return "interpnd<3>";
    case 4: return "interpnd<4>";
    case 5: return "interpnd<5>";
    default: return "interpnd<6>";
  }
}
}  // namespace detail

/// The trivially copyable view of an interpnd<N> that integrands hold: operator()(x) with a
/// point<N>-like array of N doubles (host and device). Valid while a copy of its interpnd lives.
template <int N>
struct interpnd_view {
  static_assert(N >= 1 && N <= 6, "interpnd: 1 <= N <= 6 axes");
  table_memory_view mem;
  axis_view axes[N];
  std::uint64_t stride[N] = {};  ///< C-order strides
  std::uint64_t values = 0;      ///< offset of the values in the block
  out_of_range_policy policy = out_of_range_policy::error;

  /// The interpolated value at (x[0], .., x[N-1]) (file comment); outside the grid as the policy says.
  MCUBES_HOST_DEVICE double operator()(const double (&x)[N]) const { return eval(x); }
  /// The same for N separate arguments, e.g. t(a, b, c) for N = 3.
  template <class... T>
  MCUBES_HOST_DEVICE double operator()(double x0, T... rest) const {
    static_assert(sizeof...(T) + 1 == N, "interpnd_view: give N coordinates");
    const double x[N] = {x0, static_cast<double>(rest)...};
    return eval(x);
  }
  /// The value at x given as a pointer to N doubles (e.g. point<D>::data() + offset); one path
  /// for every argument, as interp1d_view; NaN gives NaN.
  MCUBES_HOST_DEVICE double eval(const double* x) const {
    const double* d = mem.data();
#if defined(__CUDA_ARCH__)
    if (d == nullptr) return detail::table_nan();  // no device copy (table_storage.hpp)
#endif
    std::uint64_t base = values;
    double u[N], xc[N];
    int cell[N];
    bool inside = true;
    for (int k = 0; k < N; ++k) {
      xc[k] = x[k] < axes[k].lo ? axes[k].lo : (x[k] > axes[k].hi ? axes[k].hi : x[k]);  // NaN stays NaN
      if (xc[k] != xc[k]) return detail::table_nan();
      inside = inside && xc[k] == x[k];
      axes[k].locate(d, xc[k], cell[k], u[k]);
      base += static_cast<std::uint64_t>(cell[k]) * stride[k];
    }
    double v = corners(d, base, u);
    if (inside) return v;
    if (policy == out_of_range_policy::error) {
      double lo[N], hi[N];
      for (int k = 0; k < N; ++k) lo[k] = axes[k].lo, hi[k] = axes[k].hi;
      return detail::lookup_out_of_range(detail::interpnd_name(N), N, x, lo, hi);
    }
    if (policy == out_of_range_policy::clamp) return v;
    for (int k = 0; k < N; ++k) {  // linear in u_k: d/du_k = value(u_k = 1) - value(u_k = 0)
      if (xc[k] == x[k]) continue;
      double w[N];
      for (int j = 0; j < N; ++j) w[j] = u[j];
      w[k] = 1;
      const double v1 = corners(d, base, w);
      w[k] = 0;
      const double v0 = corners(d, base, w);
      v += (v1 - v0) / axes[k].width(d, cell[k]) * (x[k] - xc[k]);
    }
    return v;
  }

 private:
  /// The multilinear value in the cell at `base` with positions u (2^N - 1 linear interpolations).
  MCUBES_HOST_DEVICE double corners(const double* d, std::uint64_t base, const double* u) const {
    double c[1 << N];
    for (int m = 0; m < (1 << N); ++m) {  // bit N-1-k of m: the corner's side along axis k
      std::uint64_t off = base;
      for (int k = 0; k < N; ++k)
        if ((m >> (N - 1 - k)) & 1) off += stride[k];
      c[m] = d[off];
    }
    for (int k = N - 1; k >= 0; --k)  // the last axis first: pairs (2m, 2m + 1) differ along axis k
      for (int m = 0; m < (1 << k); ++m) c[m] = c[2 * m] + u[k] * (c[2 * m + 1] - c[2 * m]);
    return c[0];
  }
};

/// An N-D table (1 <= N <= 6) with multilinear interpolation: the owning object
/// (table_storage.hpp), immutable after construction; copies share the storage.
template <int N>
class interpnd {
  static_assert(N >= 1 && N <= 6, "interpnd: 1 <= N <= 6 axes");

 public:
  /// Interpolates `values` (C order, file comment; size n_0 ... n_{N-1}) on the grid axes[0] × ...
  /// @throws invalid_input if the node count n_0 ... n_{N-1} overflows std::size_t, the size
  ///         differs, a value is not finite or the values' span max - min overflows double;
  ///         cuda_error if the device copy fails.
  interpnd(const std::array<grid_axis, N>& axes, std::vector<double> values, out_of_range_policy policy = out_of_range_policy::error,
           table_placement where = table_placement::automatic())
      : axes_(axes), policy_(policy) {
    std::array<std::size_t, N> sizes;
    for (int k = 0; k < N; ++k) sizes[k] = axes[k].size();
    const std::size_t total = detail::grid_node_count(detail::interpnd_name(N), sizes);
    if (values.size() != total)
      detail::throw_invalid(detail::interpnd_name(N), ": the grid has ", total, " nodes but ", values.size(), " values");
    detail::check_finite_values(detail::interpnd_name(N), values);
    std::vector<double> block;
    for (int k = 0; k < N; ++k) view_.axes[k] = detail::make_axis_view(axes[k], block);
    std::uint64_t s = 1;
    for (int k = N - 1; k >= 0; --k) view_.stride[k] = s, s *= axes[k].size();
    view_.values = block.size();
    block.insert(block.end(), values.begin(), values.end());
    view_.policy = policy;
    block_ = std::make_shared<const detail::table_block>(std::move(block), where);
    view_.mem = {block_->host().data(), block_->device()};
  }

  /// The view integrands hold (valid while this object or a copy lives).
  interpnd_view<N> view() const noexcept { return view_; }
  /// Host evaluation.
  double operator()(const double (&x)[N]) const { return view_(x); }
  const std::array<grid_axis, N>& axes() const noexcept { return axes_; }
  out_of_range_policy policy() const noexcept { return policy_; }
  /// The device holding the copy, -1 if the table lives on the host only.
  int device() const noexcept { return block_->device_id(); }

 private:
  std::array<grid_axis, N> axes_;
  out_of_range_policy policy_;
  std::shared_ptr<const detail::table_block> block_;
  interpnd_view<N> view_;
};

}  // namespace mcubes

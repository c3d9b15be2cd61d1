#pragma once
/// @file tables/interp1d.hpp
/// One-dimensional interpolation of tabulated values y_i = f(x_i), usable inside integrands on the
/// CPU and the GPU (table_storage.hpp: ownership, device copy, thread safety).
///
///   mcubes::interp1d dist(z_nodes, d_values, mcubes::interp1d_kind::cspline);   // owning
///   auto d = dist.view();                                                       // held by the functor
///   ... inside operator(): double dz = d(x[1]);
///
/// Kinds (GSL semantics, the GSL reference manual, "Interpolation"):
///  - linear: gsl_interp_linear, y = y_i + u (y_{i+1} - y_i), u = (x - x_i) / (x_{i+1} - x_i);
///    n >= 2. Exact for polynomials of degree 1.
///  - cspline: gsl_interp_cspline, the natural cubic spline (tables/spline.hpp); n >= 3. Exact for
///    polynomials of degree 1 (the natural end conditions S'' = 0 hold for no higher degree).
/// The cell is that of gsl_interp_bsearch (x_i <= x < x_{i+1}; the last cell for x = x_{n-1}).
/// Lookup: O(1) on a uniform grid (grid_axis::uniform), bisection O(log n) on explicit nodes.
/// Values agree with GSL's to 1e-12 relative (tests/tables); host and device evaluate the same
/// expressions, bitwise equal where the device code is compiled with --fmad=false, otherwise within
/// 1e-13 of the larger of |value| and the table's scale (nvcc fuses multiply-adds by default; near a
/// zero of the interpolant the difference is that of the rounding of terms of the table's size;
/// tests/cuda/test_tables_fma.cu).
/// Out of range: the table's out_of_range_policy policy (table_storage.hpp).

#include <cstdint>
#include <memory>
#include <utility>
#include <vector>

#include "../config.hpp"
#include "spline.hpp"
#include "table_storage.hpp"

namespace mcubes {

/// The interpolation scheme of interp1d (file comment).
enum class interp1d_kind { linear, cspline };

/// The trivially copyable view of an interp1d that integrands hold: operator()(x) interpolates
/// (host and device). Valid while a copy of its interp1d lives.
struct interp1d_view {
  table_memory_view mem;
  axis_view axis;
  std::uint64_t cells = 0;  ///< offset of the values (linear) or of 4 coefficients per cell (cspline)
  interp1d_kind kind = interp1d_kind::linear;
  out_of_range_policy policy = out_of_range_policy::error;

  /// The interpolated value at x (file comment); outside [x_0, x_{n-1}] as the policy says. One
  /// path for every argument: the argument clamped to the grid is looked up, and only an argument
  /// outside the grid takes the (rare) policy branch; NaN gives NaN.
  MCUBES_HOST_DEVICE double operator()(double x) const {
    const double* d = mem.data();
#if defined(__CUDA_ARCH__)
    if (d == nullptr) return detail::table_nan();  // no device copy (table_storage.hpp)
#endif
    const double xc = x < axis.lo ? axis.lo : (x > axis.hi ? axis.hi : x);  // NaN stays NaN
    if (xc != xc) return detail::table_nan();
    int i;
    double u;
    axis.locate(d, xc, i, u);
    const double v = cell_value(d, i, u);
    if (xc == x) return v;
    if (policy == out_of_range_policy::error) return detail::lookup_out_of_range("interp1d", 1, &x, &axis.lo, &axis.hi);
    if (policy == out_of_range_policy::clamp) return v;
    return v + cell_slope(d, i, u) / axis.width(d, i) * (x - xc);
  }

 private:
  MCUBES_HOST_DEVICE double cell_value(const double* d, int i, double u) const {
    if (kind == interp1d_kind::linear) {
      const double y0 = d[cells + i], y1 = d[cells + i + 1];
      return y0 + u * (y1 - y0);
    }
    double c0, c1, c2, c3;
    detail::load_pair(d + cells + 4 * static_cast<std::uint64_t>(i), c0, c1);
    detail::load_pair(d + cells + 4 * static_cast<std::uint64_t>(i) + 2, c2, c3);
    return c0 + u * (c1 + u * (c2 + u * c3));
  }
  /// d/du of the cell's polynomial.
  MCUBES_HOST_DEVICE double cell_slope(const double* d, int i, double u) const {
    if (kind == interp1d_kind::linear) return d[cells + i + 1] - d[cells + i];
    const double* c = d + cells + 4 * static_cast<std::uint64_t>(i);
    return c[1] + u * (2.0 * c[2] + 3.0 * u * c[3]);
  }
};

/// A 1-D table with its interpolation scheme: the owning object (table_storage.hpp), immutable
/// after construction; copies share the storage.
class interp1d {
 public:
  /// Interpolates y_i at the nodes of `x` (y.size() == x.size()).
  /// @throws invalid_input if the sizes differ, a value is not finite, the values' span max - min
  ///         overflows double, there are fewer nodes than the kind needs (linear 2, cspline 3), or
  ///         the spline's coefficients overflow double (values changing by much over a tiny
  ///         spacing); cuda_error if the device copy fails.
  interp1d(const grid_axis& x, std::vector<double> y, interp1d_kind kind,
           out_of_range_policy policy = out_of_range_policy::error, table_placement where = table_placement::automatic())
      : axis_(x), kind_(kind), policy_(policy) {
    if (y.size() != x.size()) detail::throw_invalid("interp1d: ", x.size(), " nodes but ", y.size(), " values");
    if (kind == interp1d_kind::cspline && x.size() < 3)
      detail::throw_invalid("interp1d: cspline needs at least 3 nodes, got ", x.size());
    detail::check_finite_values("interp1d", y);
    std::vector<double> block;
    view_.axis = detail::make_axis_view(x, block);
    detail::pad_to_pair(block);
    view_.cells = block.size();
    if (kind == interp1d_kind::linear) {
      block.insert(block.end(), y.begin(), y.end());
    } else {
      detail::append_spline_cells(x.node_values().data(), y.data(), 1, y.size(), block);
      detail::check_finite_coefficients("interp1d", block, view_.cells);
    }
    view_.kind = kind;
    view_.policy = policy;
    block_ = std::make_shared<const detail::table_block>(std::move(block), where);
    view_.mem = {block_->host().data(), block_->device()};
  }
  /// The same with explicit nodes (grid_axis::nodes: strictly increasing, finite).
  interp1d(std::vector<double> x, std::vector<double> y, interp1d_kind kind,
           out_of_range_policy policy = out_of_range_policy::error, table_placement where = table_placement::automatic())
      : interp1d(grid_axis::nodes(std::move(x)), std::move(y), kind, policy, where) {}

  /// The view integrands hold (valid while this object or a copy lives).
  interp1d_view view() const noexcept { return view_; }
  /// Host evaluation (the view's operator()).
  double operator()(double x) const { return view_(x); }
  const grid_axis& axis() const noexcept { return axis_; }
  interp1d_kind kind() const noexcept { return kind_; }
  out_of_range_policy policy() const noexcept { return policy_; }
  /// The device holding the copy, -1 if the table lives on the host only.
  int device() const noexcept { return block_->device_id(); }

 private:
  grid_axis axis_;
  interp1d_kind kind_;
  out_of_range_policy policy_;
  std::shared_ptr<const detail::table_block> block_;
  interp1d_view view_;
};

}  // namespace mcubes

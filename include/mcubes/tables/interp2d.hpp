#pragma once
/// @file tables/interp2d.hpp
/// Two-dimensional interpolation on a rectilinear grid, usable inside integrands on the CPU and the
/// GPU (table_storage.hpp: ownership, device copy, thread safety).
///
/// Layout (as gsl_interp2d): z[j * nx + i] = f(x_i, y_j), x fastest; that is a NumPy array of
/// shape (ny, nx) in C order, or a text table whose row j holds f(x_0, y_j) .. f(x_{nx-1}, y_j).
/// Kinds (GSL semantics, the GSL reference manual, "Interpolation", 2D):
///  - bilinear: gsl_interp2d_bilinear; with t, u the positions in the cell (x_i <= x < x_{i+1},
///    t = (x - x_i) / (x_{i+1} - x_i), u likewise in y):
///    z = (1-t)(1-u) z_{i,j} + t(1-u) z_{i+1,j} + (1-t) u z_{i,j+1} + t u z_{i+1,j+1};
///    nx, ny >= 2; exact for a + b x + c y + d x y.
///  - bicubic: gsl_interp2d_bicubic, the bicubic Hermite patch through the values and the
///    derivatives z_x, z_y, z_xy at the four corners, where z_x (z_y) is the derivative of the
///    natural cubic spline along x (y) through the row (column), and z_xy that of the spline along
///    x through z_y; nx, ny >= 4 (GSL's minimum). Exact for a + b x + c y + d x y. Stored as
///    {z, z_x, z_y, z_xy} per node and evaluated in the Hermite form (bicubic() below).
/// Lookup per axis: O(1) on a uniform axis, bisection on explicit nodes (grid_axis). Values agree
/// with GSL's to 1e-12 relative; host and device as interp1d. Out of range: the policy, per axis
/// (table_storage.hpp).

#include <array>
#include <cstdint>
#include <memory>
#include <utility>
#include <vector>

#include "../config.hpp"
#include "spline.hpp"
#include "table_storage.hpp"

namespace mcubes {

/// The interpolation scheme of interp2d (file comment).
enum class interp2d_kind { bilinear, bicubic };

/// The trivially copyable view of an interp2d that integrands hold: operator()(x, y) interpolates
/// (host and device). Valid while a copy of its interp2d lives.
struct interp2d_view {
  table_memory_view mem;
  axis_view ax, ay;
  std::uint64_t cells = 0;  ///< offset of z (bilinear) or of {z, z_x, z_y, z_xy} per node (bicubic)
  interp2d_kind kind = interp2d_kind::bilinear;
  out_of_range_policy policy = out_of_range_policy::error;

  /// The interpolated value at (x, y) (file comment); outside the grid as the policy says (one
  /// path for every argument, as interp1d_view); NaN gives NaN.
  MCUBES_HOST_DEVICE double operator()(double x, double y) const {
    const double* d = mem.data();
#if defined(__CUDA_ARCH__)
    if (d == nullptr) return detail::table_nan();  // no device copy (table_storage.hpp)
#endif
    const double xc = x < ax.lo ? ax.lo : (x > ax.hi ? ax.hi : x);  // NaN stays NaN
    const double yc = y < ay.lo ? ay.lo : (y > ay.hi ? ay.hi : y);
    if (xc != xc || yc != yc) return detail::table_nan();
    int i, j;
    double t, u;
    ax.locate(d, xc, i, t);
    ay.locate(d, yc, j, u);
    const double v = cell_value(d, i, j, t, u);
    if (xc == x && yc == y) return v;
    if (policy == out_of_range_policy::error) {
      const double arg[2] = {x, y}, lo[2] = {ax.lo, ay.lo}, hi[2] = {ax.hi, ay.hi};
      return detail::lookup_out_of_range("interp2d", 2, arg, lo, hi);
    }
    if (policy == out_of_range_policy::clamp) return v;
    double dt, du;
    cell_slopes(d, i, j, t, u, dt, du);
    return v + dt / ax.width(d, i) * (x - xc) + du / ay.width(d, j) * (y - yc);
  }

 private:
  MCUBES_HOST_DEVICE double cell_value(const double* d, int i, int j, double t, double u) const {
    if (kind == interp2d_kind::bilinear) {
      const double* z = d + cells + static_cast<std::uint64_t>(j) * ax.n + i;
      const double z00 = z[0], z10 = z[1], z01 = z[ax.n], z11 = z[ax.n + 1];
      return (1 - t) * (1 - u) * z00 + t * (1 - u) * z10 + (1 - t) * u * z01 + t * u * z11;
    }
    return bicubic(d, i, j, t, u, 0, 0);
  }
  /// d/dt and d/du of the cell's polynomial.
  MCUBES_HOST_DEVICE void cell_slopes(const double* d, int i, int j, double t, double u, double& dt, double& du) const {
    if (kind == interp2d_kind::bilinear) {
      const double* z = d + cells + static_cast<std::uint64_t>(j) * ax.n + i;
      const double z00 = z[0], z10 = z[1], z01 = z[ax.n], z11 = z[ax.n + 1];
      dt = (1 - u) * (z10 - z00) + u * (z11 - z01);
      du = (1 - t) * (z01 - z00) + t * (z11 - z10);
      return;
    }
    dt = bicubic(d, i, j, t, u, 1, 0);
    du = bicubic(d, i, j, t, u, 0, 1);
  }
  /// The cubic Hermite basis on [0, 1] (or its derivative, `order` 1): h[0], h[1] weigh the values
  /// at 0 and 1, h[2], h[3] the derivatives there (times the cell width w).
  MCUBES_HOST_DEVICE static void hermite(double t, double w, int order, double* h) {
    if (order == 0) {
      const double s = 1 - t;
      h[0] = s * s * (1 + 2 * t);
      h[1] = t * t * (3 - 2 * t);
      h[2] = w * t * s * s;
      h[3] = w * t * t * (t - 1);
    } else {
      h[0] = 6 * t * (t - 1);
      h[1] = -h[0];
      h[2] = w * (1 - t) * (1 - 3 * t);
      h[3] = w * t * (3 * t - 2);
    }
  }
  /// The bicubic Hermite patch of cell (i, j) at (t, u), or its t or u derivative: the sum over the
  /// corners (a, b) of f H_a(t) H_b(u) + f_x G_a(t) H_b(u) + f_y H_a(t) G_b(u) + f_xy G_a(t) G_b(u),
  /// with the nodes' {f, f_x, f_y, f_xy} read as two 16-byte pairs each.
  MCUBES_HOST_DEVICE double bicubic(const double* d, int i, int j, double t, double u, int t_order, int u_order) const {
    double ht[4], hu[4];
    hermite(t, ax.width(d, i), t_order, ht);
    hermite(u, ay.width(d, j), u_order, hu);
    double v = 0;
    for (int b = 0; b < 2; ++b)
      for (int a = 0; a < 2; ++a) {
        const double* node = d + cells + 4 * ((static_cast<std::uint64_t>(j) + b) * ax.n + i + a);
        double f, fx, fy, fxy;
        detail::load_pair(node, f, fx);
        detail::load_pair(node + 2, fy, fxy);
        v += ht[a] * (f * hu[b] + fy * hu[2 + b]) + ht[2 + a] * (fx * hu[b] + fxy * hu[2 + b]);
      }
    return v;
  }
};

/// A 2-D table with its interpolation scheme: the owning object (table_storage.hpp), immutable
/// after construction; copies share the storage.
class interp2d {
 public:
  /// Interpolates z (layout in the file comment: z.size() == nx * ny) on the grid x × y.
  /// @throws invalid_input if the size differs, a value is not finite, the values' span max - min
  ///         overflows double, an axis has fewer nodes than the kind needs (bilinear 2, bicubic 4),
  ///         or the bicubic derivatives overflow double; cuda_error if the device copy fails.
  interp2d(const grid_axis& x, const grid_axis& y, std::vector<double> z, interp2d_kind kind,
           out_of_range_policy policy = out_of_range_policy::error, table_placement where = table_placement::automatic())
      : x_(x), y_(y), kind_(kind), policy_(policy) {
    const std::size_t nx = x.size(), ny = y.size();
    if (z.size() != detail::grid_node_count("interp2d", std::array<std::size_t, 2>{nx, ny}))
      detail::throw_invalid("interp2d: the grid has ", nx, " x ", ny, " = ", nx * ny, " nodes but ", z.size(),
                            " values (layout z[j * nx + i] = f(x_i, y_j))");
    if (kind == interp2d_kind::bicubic && (nx < 4 || ny < 4))
      detail::throw_invalid("interp2d: bicubic needs at least 4 nodes per axis, got ", nx, " x ", ny);
    detail::check_finite_values("interp2d", z);
    std::vector<double> block;
    view_.ax = detail::make_axis_view(x, block);
    view_.ay = detail::make_axis_view(y, block);
    detail::pad_to_pair(block);
    view_.cells = block.size();
    if (kind == interp2d_kind::bilinear)
      block.insert(block.end(), z.begin(), z.end());
    else
      append_bicubic_nodes(x.node_values(), y.node_values(), z, block);
    detail::check_finite_coefficients("interp2d", block, view_.cells);
    view_.kind = kind;
    view_.policy = policy;
    block_ = std::make_shared<const detail::table_block>(std::move(block), where);
    view_.mem = {block_->host().data(), block_->device()};
  }
  /// The same with explicit nodes (grid_axis::nodes).
  interp2d(std::vector<double> x, std::vector<double> y, std::vector<double> z, interp2d_kind kind,
           out_of_range_policy policy = out_of_range_policy::error, table_placement where = table_placement::automatic())
      : interp2d(grid_axis::nodes(std::move(x)), grid_axis::nodes(std::move(y)), std::move(z), kind, policy, where) {}

  /// The view integrands hold (valid while this object or a copy lives).
  interp2d_view view() const noexcept { return view_; }
  /// Host evaluation (the view's operator()).
  double operator()(double x, double y) const { return view_(x, y); }
  const grid_axis& x_axis() const noexcept { return x_; }
  const grid_axis& y_axis() const noexcept { return y_; }
  interp2d_kind kind() const noexcept { return kind_; }
  out_of_range_policy policy() const noexcept { return policy_; }
  /// The device holding the copy, -1 if the table lives on the host only.
  int device() const noexcept { return block_->device_id(); }

 private:
  /// Per node {z, z_x, z_y, z_xy} (node-major, x fastest), the derivatives as GSL's bicubic init:
  /// z_x along each row and z_y along each column from the natural cubic spline through them, z_xy
  /// from the spline along x through z_y. A node takes 32 bytes, so tables of a few thousand nodes
  /// stay in the GPU's L1 cache.
  static void append_bicubic_nodes(const std::vector<double>& xs, const std::vector<double>& ys,
                                   const std::vector<double>& z, std::vector<double>& out) {
    const std::size_t nx = xs.size(), ny = ys.size();
    std::vector<double> zx(nx * ny), zy(nx * ny), zxy(nx * ny);
    for (std::size_t j = 0; j < ny; ++j) {  // along x, row by row
      const std::vector<double> s = detail::natural_spline_node_slopes(xs.data(), z.data() + j * nx, 1, nx);
      for (std::size_t i = 0; i < nx; ++i) zx[j * nx + i] = s[i];
    }
    for (std::size_t i = 0; i < nx; ++i) {  // along y, column by column
      const std::vector<double> s = detail::natural_spline_node_slopes(ys.data(), z.data() + i, nx, ny);
      for (std::size_t j = 0; j < ny; ++j) zy[j * nx + i] = s[j];
    }
    for (std::size_t j = 0; j < ny; ++j) {  // z_xy: along x through z_y
      const std::vector<double> s = detail::natural_spline_node_slopes(xs.data(), zy.data() + j * nx, 1, nx);
      for (std::size_t i = 0; i < nx; ++i) zxy[j * nx + i] = s[i];
    }
    for (std::size_t k = 0; k < nx * ny; ++k) {
      out.push_back(z[k]);
      out.push_back(zx[k]);
      out.push_back(zy[k]);
      out.push_back(zxy[k]);
    }
  }

  grid_axis x_, y_;
  interp2d_kind kind_;
  out_of_range_policy policy_;
  std::shared_ptr<const detail::table_block> block_;
  interp2d_view view_;
};

}  // namespace mcubes

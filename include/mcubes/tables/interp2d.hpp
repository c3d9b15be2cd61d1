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
///    x through z_y; nx, ny >= 4 (GSL's minimum). Exact for a + b x + c y + d x y. Precomputed as
///    16 coefficients per cell, z = sum_{p,q<4} a_pq t^p u^q.
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
  std::uint64_t cells = 0;  ///< offset of z (bilinear) or of 16 coefficients per cell (bicubic)
  interp2d_kind kind = interp2d_kind::bilinear;
  out_of_range_policy policy = out_of_range_policy::error;

  /// The interpolated value at (x, y) (file comment); outside the grid as the policy says.
  MCUBES_HOST_DEVICE double operator()(double x, double y) const {
    const double* d = mem.data();
#if defined(__CUDA_ARCH__)
    if (d == nullptr) return detail::table_nan();  // no device copy (table_storage.hpp)
#endif
    if (x >= ax.lo && x <= ax.hi && y >= ay.lo && y <= ay.hi) {
      int i, j;
      double t, u;
      ax.locate(d, x, i, t);
      ay.locate(d, y, j, u);
      return cell_value(d, i, j, t, u);
    }
    return outside(d, x, y);
  }

 private:
  MCUBES_HOST_DEVICE double cell_value(const double* d, int i, int j, double t, double u) const {
    if (kind == interp2d_kind::bilinear) {
      const double* z = d + cells + static_cast<std::uint64_t>(j) * ax.n + i;
      const double z00 = z[0], z10 = z[1], z01 = z[ax.n], z11 = z[ax.n + 1];
      return (1 - t) * (1 - u) * z00 + t * (1 - u) * z10 + (1 - t) * u * z01 + t * u * z11;
    }
    const double* p = d + cells + 16 * (static_cast<std::uint64_t>(j) * (ax.n - 1) + i);
    double a[16];
    for (int k = 0; k < 8; ++k) detail::load_pair(p + 2 * k, a[2 * k], a[2 * k + 1]);
    const double r0 = a[0] + u * (a[1] + u * (a[2] + u * a[3]));
    const double r1 = a[4] + u * (a[5] + u * (a[6] + u * a[7]));
    const double r2 = a[8] + u * (a[9] + u * (a[10] + u * a[11]));
    const double r3 = a[12] + u * (a[13] + u * (a[14] + u * a[15]));
    return r0 + t * (r1 + t * (r2 + t * r3));
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
    const double* a = d + cells + 16 * (static_cast<std::uint64_t>(j) * (ax.n - 1) + i);
    double r[4], s[4];
    for (int p = 0; p < 4; ++p) {
      const double* q = a + 4 * p;
      r[p] = q[0] + u * (q[1] + u * (q[2] + u * q[3]));
      s[p] = q[1] + u * (2.0 * q[2] + 3.0 * u * q[3]);
    }
    dt = r[1] + t * (2.0 * r[2] + 3.0 * t * r[3]);
    du = s[0] + t * (s[1] + t * (s[2] + t * s[3]));
  }
  MCUBES_NOINLINE MCUBES_HOST_DEVICE double outside(const double* d, double x, double y) const {
    if (x != x || y != y) return detail::table_nan();
    if (policy == out_of_range_policy::error) {
      const double arg[2] = {x, y}, lo[2] = {ax.lo, ay.lo}, hi[2] = {ax.hi, ay.hi};
      return detail::lookup_out_of_range("interp2d", 2, arg, lo, hi);
    }
    const double xc = x < ax.lo ? ax.lo : (x > ax.hi ? ax.hi : x);
    const double yc = y < ay.lo ? ay.lo : (y > ay.hi ? ay.hi : y);
    int i, j;
    double t, u;
    ax.locate(d, xc, i, t);
    ay.locate(d, yc, j, u);
    const double v = cell_value(d, i, j, t, u);
    if (policy == out_of_range_policy::clamp) return v;
    double dt, du;
    cell_slopes(d, i, j, t, u, dt, du);
    return v + dt / ax.width(d, i) * (x - xc) + du / ay.width(d, j) * (y - yc);
  }
};

/// A 2-D table with its interpolation scheme: the owning object (table_storage.hpp), immutable
/// after construction; copies share the storage.
class interp2d {
 public:
  /// Interpolates z (layout in the file comment: z.size() == nx * ny) on the grid x × y.
  /// @throws invalid_input if the size differs, a value is not finite, or an axis has fewer nodes
  ///         than the kind needs (bilinear 2, bicubic 4); cuda_error if the device copy fails.
  interp2d(const grid_axis& x, const grid_axis& y, std::vector<double> z, interp2d_kind kind,
           out_of_range_policy policy = out_of_range_policy::error, table_placement where = table_placement::automatic())
      : x_(x), y_(y), kind_(kind), policy_(policy) {
    const std::size_t nx = x.size(), ny = y.size();
    if (z.size() != nx * ny)
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
      append_bicubic_cells(x.node_values(), y.node_values(), z, block);
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
  /// The 16 coefficients of every cell (row j of cells after row j - 1, x fastest): with the corner
  /// values F = [[f00, f01, fu00, fu01], [f10, f11, fu10, fu11], [ft00, ft01, ftu00, ftu01],
  /// [ft10, ft11, ftu10, ftu11]] (first index t at 0/1, second u at 0/1; derivatives in the cell's
  /// t, u, i.e. z_x h_x, z_y h_y, z_xy h_x h_y), A = M F M^T with the cubic Hermite matrix
  /// M = [[1, 0, 0, 0], [0, 0, 1, 0], [-3, 3, -2, -1], [2, -2, 1, 1]], a_pq = A[p][q].
  static void append_bicubic_cells(const std::vector<double>& xs, const std::vector<double>& ys,
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
    static constexpr double M[4][4] = {{1, 0, 0, 0}, {0, 0, 1, 0}, {-3, 3, -2, -1}, {2, -2, 1, 1}};
    for (std::size_t j = 0; j + 1 < ny; ++j) {
      const double hy = ys[j + 1] - ys[j];
      for (std::size_t i = 0; i + 1 < nx; ++i) {
        const double hx = xs[i + 1] - xs[i];
        auto at = [&](const std::vector<double>& v, std::size_t di, std::size_t dj) { return v[(j + dj) * nx + i + di]; };
        const double F[4][4] = {
            {at(z, 0, 0), at(z, 0, 1), at(zy, 0, 0) * hy, at(zy, 0, 1) * hy},
            {at(z, 1, 0), at(z, 1, 1), at(zy, 1, 0) * hy, at(zy, 1, 1) * hy},
            {at(zx, 0, 0) * hx, at(zx, 0, 1) * hx, at(zxy, 0, 0) * hx * hy, at(zxy, 0, 1) * hx * hy},
            {at(zx, 1, 0) * hx, at(zx, 1, 1) * hx, at(zxy, 1, 0) * hx * hy, at(zxy, 1, 1) * hx * hy}};
        double MF[4][4];
        for (int p = 0; p < 4; ++p)
          for (int q = 0; q < 4; ++q) {
            double s = 0;
            for (int k = 0; k < 4; ++k) s += M[p][k] * F[k][q];
            MF[p][q] = s;
          }
        for (int p = 0; p < 4; ++p)
          for (int q = 0; q < 4; ++q) {
            double s = 0;
            for (int k = 0; k < 4; ++k) s += MF[p][k] * M[q][k];
            out.push_back(s);
          }
      }
    }
  }

  grid_axis x_, y_;
  interp2d_kind kind_;
  out_of_range_policy policy_;
  std::shared_ptr<const detail::table_block> block_;
  interp2d_view view_;
};

}  // namespace mcubes

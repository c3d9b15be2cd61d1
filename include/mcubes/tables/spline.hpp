#pragma once
/// @file tables/spline.hpp
/// The natural cubic spline through (x_i, y_i), i = 0..n-1 (n >= 3), as gsl_interp_cspline:
/// on [x_i, x_{i+1}] with s = x - x_i, h_i = x_{i+1} - x_i,
///   S(x) = y_i + b_i s + c_i s^2 + d_i s^3,
///   b_i = (y_{i+1} - y_i) / h_i - h_i (c_{i+1} + 2 c_i) / 3,   d_i = (c_{i+1} - c_i) / (3 h_i),
/// where c_i = S''(x_i) / 2 solves the symmetric tridiagonal system (c_0 = c_{n-1} = 0, natural)
///   h_{i-1} c_{i-1} + 2 (h_{i-1} + h_i) c_i + h_i c_{i+1} = 3 ((y_{i+1} - y_i) / h_i - (y_i - y_{i-1}) / h_{i-1})
/// for i = 1..n-2 (Burden & Faires, Numerical Analysis, algorithm 3.4; the system is strictly
/// diagonally dominant, so elimination without pivoting is stable). Host code; the tables evaluate
/// the polynomial on host and device. GSL itself is not used at run time: it is GPL-licensed
/// (mcubes is BSD-3), and Boost.Math has no natural spline on irregular nodes; the tests compare
/// with GSL to 1e-12.

#include <cstddef>
#include <vector>

namespace mcubes::detail {

/// c_i = S''(x_i) / 2 for i = 0..n-1 (x strictly increasing, n >= 3; values y[k * y_stride]).
inline std::vector<double> natural_spline_c(const double* x, const double* y, std::size_t y_stride, std::size_t n) {
  std::vector<double> c(n, 0.0);
  const std::size_t m = n - 2;  // unknowns c_1..c_{n-2}
  std::vector<double> diag(m), off(m), rhs(m);
  for (std::size_t k = 0; k < m; ++k) {
    const double h0 = x[k + 1] - x[k], h1 = x[k + 2] - x[k + 1];
    const double s0 = (y[(k + 1) * y_stride] - y[k * y_stride]) / h0;
    const double s1 = (y[(k + 2) * y_stride] - y[(k + 1) * y_stride]) / h1;
    diag[k] = 2.0 * (h0 + h1);
    off[k] = h1;  // couples c_{k+1} and c_{k+2}
    rhs[k] = 3.0 * (s1 - s0);
  }
  for (std::size_t k = 1; k < m; ++k) {  // forward elimination
    const double w = off[k - 1] / diag[k - 1];
    diag[k] -= w * off[k - 1];
    rhs[k] -= w * rhs[k - 1];
  }
  c[m] = rhs[m - 1] / diag[m - 1];  // back substitution: c[k + 1] is unknown k
  for (std::size_t k = m - 1; k-- > 0;) c[k + 1] = (rhs[k] - off[k] * c[k + 2]) / diag[k];
  return c;
}

/// The spline's coefficients per interval in the normalised coordinate u = s / h_i in [0, 1]:
/// S = a + u (b h + u (c h^2 + u d h^3)); four doubles {a, b h, c h^2, d h^3} per interval,
/// appended to `out`.
inline void append_spline_cells(const double* x, const double* y, std::size_t y_stride, std::size_t n,
                                std::vector<double>& out) {
  const std::vector<double> c = natural_spline_c(x, y, y_stride, n);
  for (std::size_t i = 0; i + 1 < n; ++i) {
    const double h = x[i + 1] - x[i];
    const double y0 = y[i * y_stride], y1 = y[(i + 1) * y_stride];
    const double b = (y1 - y0) / h - h * (c[i + 1] + 2.0 * c[i]) / 3.0;
    const double d = (c[i + 1] - c[i]) / (3.0 * h);
    out.push_back(y0);
    out.push_back(b * h);
    out.push_back(c[i] * h * h);
    out.push_back(d * h * h * h);
  }
}

/// S'(x_i) at every node (gsl_spline_eval_deriv there): b_i for i < n-1, and
/// b + 2 c h + 3 d h^2 of the last interval at x_{n-1}.
inline std::vector<double> natural_spline_node_slopes(const double* x, const double* y, std::size_t y_stride,
                                                      std::size_t n) {
  const std::vector<double> c = natural_spline_c(x, y, y_stride, n);
  std::vector<double> slope(n);
  for (std::size_t i = 0; i + 1 < n; ++i) {
    const double h = x[i + 1] - x[i];
    slope[i] = (y[(i + 1) * y_stride] - y[i * y_stride]) / h - h * (c[i + 1] + 2.0 * c[i]) / 3.0;
    if (i + 2 == n) {
      const double d = (c[i + 1] - c[i]) / (3.0 * h);
      slope[n - 1] = slope[i] + 2.0 * c[i] * h + 3.0 * d * h * h;
    }
  }
  return slope;
}

}  // namespace mcubes::detail

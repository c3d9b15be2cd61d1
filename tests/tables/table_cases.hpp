#pragma once
// A table integrand with an exact integral, shared by the CPU and CUDA table tests: a(x) a linear
// table (piecewise linear in x) times b(x, y) = g(y) a bilinear table constant in x with g
// piecewise linear, over [0, 2] x [0, 1]. The integral of a piecewise-linear function is its
// trapezoid sum, and the product factorises: exact = (trapezoid of a) (trapezoid of g).
#include <mcubes/config.hpp>
#include <mcubes/point.hpp>
#include <mcubes/region.hpp>
#include <mcubes/tables/interp1d.hpp>
#include <mcubes/tables/interp2d.hpp>

#include <cmath>
#include <vector>

namespace table_cases {

struct product_integrand {
  mcubes::interp1d_view a;
  mcubes::interp2d_view b;
  MCUBES_HOST_DEVICE double operator()(const mcubes::point<2>& x) const { return a(x[0]) * b(x[0], x[1]); }
};

struct exact_case {
  mcubes::interp1d a;
  mcubes::interp2d b;
  double exact;
  mcubes::region<2> region() const { return mcubes::region<2>({0.0, 0.0}, {2.0, 1.0}); }
  product_integrand integrand() const { return {a.view(), b.view()}; }
};

inline double trapezoid(const std::vector<double>& x, const std::vector<double>& y) {
  double t = 0;
  for (std::size_t i = 0; i + 1 < x.size(); ++i) t += 0.5 * (y[i] + y[i + 1]) * (x[i + 1] - x[i]);
  return t;
}

inline exact_case make_exact_case() {
  const mcubes::grid_axis ax = mcubes::grid_axis::uniform(0.0, 2.0, 9), ay = mcubes::grid_axis::nodes({0.0, 0.3, 1.0});
  std::vector<double> ya, z;
  for (double x : ax.node_values()) ya.push_back(2 + std::sin(x));
  const std::vector<double> gy{1.0, 4.0, 2.0};
  for (double g : gy)
    for (std::size_t i = 0; i < ax.size(); ++i) z.push_back(g);  // z[j * nx + i] = g(y_j)
  const double exact = trapezoid(ax.node_values(), ya) * trapezoid(ay.node_values(), gy);
  return {mcubes::interp1d(ax, ya, mcubes::interp1d_kind::linear),
          mcubes::interp2d(ax, ay, z, mcubes::interp2d_kind::bilinear), exact};
}

}  // namespace table_cases

#pragma once
// Shared by the CUDA table tests: five tables (linear, cubic spline, bilinear, bicubic, 3-D
// multilinear) under one out-of-range policy, evaluated at 4000 points (inside, on the grid's ends
// and outside) on the device and on the host. compare_device_with_host(rel) checks every value:
// rel = 0 bitwise (device code compiled with --fmad=false), otherwise
// |device - host| <= rel max(|host|, 1), the tables' values being of order 1.
#include <mcubes/cuda.cuh>
#include <mcubes/tables.hpp>

#include <gtest/gtest.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <vector>

#include "support/cuda.hpp"

namespace table_probe {

using mcubes::grid_axis;
using mcubes::out_of_range_policy;

struct probe_tables {
  mcubes::interp1d_view lin, spl;
  mcubes::interp2d_view bil, bic;
  mcubes::interpnd_view<3> nd;
  MCUBES_HOST_DEVICE void eval(double a, double b, double c, double* out) const {
    out[0] = lin(a);
    out[1] = spl(a);
    out[2] = bil(a, b);
    out[3] = bic(a, b);
    out[4] = nd(a, b, c);
  }
};

static __global__ void probe_kernel(probe_tables t, const double* pts, int n, double* out) {
  const int k = blockIdx.x * blockDim.x + threadIdx.x;
  if (k < n) t.eval(pts[3 * k], pts[3 * k + 1], pts[3 * k + 2], out + 5 * k);
}

inline std::vector<double> irregular(int n, double lo) {
  std::vector<double> x;
  for (int i = 0; i < n; ++i) x.push_back(lo + 0.3 * i + 0.013 * i * i);
  return x;
}

struct table_set {
  mcubes::interp1d lin, spl;
  mcubes::interp2d bil, bic;
  mcubes::interpnd<3> nd;
  probe_tables views() const { return {lin.view(), spl.view(), bil.view(), bic.view(), nd.view()}; }
};

inline table_set make_tables(out_of_range_policy p) {
  const grid_axis xa = grid_axis::nodes(irregular(12, 0.0)), ya = grid_axis::uniform(-1.0, 1.0, 9);
  std::vector<double> y, z, v;
  for (double x : xa.node_values()) y.push_back(2 + std::sin(x));
  for (double yy : ya.node_values())
    for (double x : xa.node_values()) z.push_back(3 + std::cos(x) * std::exp(-0.3 * yy));
  const std::array<grid_axis, 3> axes{xa, ya, grid_axis::uniform(0.0, 2.0, 5)};
  for (double a : axes[0].node_values())
    for (double b : axes[1].node_values())
      for (double c : axes[2].node_values()) v.push_back(std::sin(a) + b * c);
  using K1 = mcubes::interp1d_kind;
  using K2 = mcubes::interp2d_kind;
  return {mcubes::interp1d(xa, y, K1::linear, p), mcubes::interp1d(xa, y, K1::cspline, p),
          mcubes::interp2d(xa, ya, z, K2::bilinear, p), mcubes::interp2d(xa, ya, z, K2::bicubic, p),
          mcubes::interpnd<3>(axes, v, p)};
}

inline void compare_device_with_host(double rel) {
  std::vector<double> pts;  // inside, on the nodes' range ends, and outside
  for (int k = 0; k < 4000; ++k) {
    const double s = k / 3999.0;
    pts.push_back(-0.5 + 5.5 * s);                        // x in [-0.5, 5.0], the grid [0, 4.17]
    pts.push_back(-1.2 + 2.4 * std::fmod(s * 7.3, 1.0));  // y in [-1.2, 1.2], the grid [-1, 1]
    pts.push_back(-0.1 + 2.2 * std::fmod(s * 3.1, 1.0));  // c in [-0.1, 2.1], the grid [0, 2]
  }
  const int n = static_cast<int>(pts.size() / 3);
  for (out_of_range_policy p : {out_of_range_policy::error, out_of_range_policy::clamp, out_of_range_policy::extrapolate}) {
    const table_set t = make_tables(p);
    ASSERT_EQ(t.bic.device(), 0);  // automatic placement: copied to the current device
    const probe_tables v = t.views();
    mcubes::device_array<double> dpts(pts), dout(5 * static_cast<std::size_t>(n));
    probe_kernel<<<(n + 127) / 128, 128>>>(v, dpts.data(), n, dout.data());
    MCUBES_CUDA_CHECK_LAUNCH("probe_kernel");
    MCUBES_CUDA_CHECK(cudaDeviceSynchronize());
    const std::vector<double> dev = dout.to_host();
    int nan_count = 0;
    for (int k = 0; k < n; ++k) {
      double host[5];
      v.eval(pts[3 * k], pts[3 * k + 1], pts[3 * k + 2], host);
      for (int q = 0; q < 5; ++q) {
        const double d = dev[5 * k + q];
        if (std::isnan(host[q])) {
          ++nan_count;
          EXPECT_TRUE(std::isnan(d)) << "policy " << int(p) << " table " << q << " point " << k;
        } else if (rel == 0) {
          EXPECT_EQ(mcubes_test::bits(d), mcubes_test::bits(host[q]))
              << "policy " << int(p) << " table " << q << " point " << k << ": " << d << " vs " << host[q];
        } else {
          // relative to the table's scale (its values are of order 1-3 here): near a zero of the
          // interpolant no relative bound on the value itself can hold
          EXPECT_LE(std::fabs(d - host[q]), rel * std::max(std::fabs(host[q]), 1.0))
              << "policy " << int(p) << " table " << q << " point " << k << ": " << d << " vs " << host[q];
        }
      }
    }
    if (p == out_of_range_policy::error) EXPECT_GT(nan_count, 0);
    else EXPECT_EQ(nan_count, 0);
  }
}

}  // namespace table_probe

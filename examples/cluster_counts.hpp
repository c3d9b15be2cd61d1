#pragma once
// A 6-D integrand built from tables read at run time, integrated with the same source on the CPU
// and the GPU: an expected number of galaxy clusters,
//
//   N = ∫ dlnM dz dy d^3w  n(lnM, z) D(z)^2 / E(z) S(y) K(w),
//
// with n(lnM, z) a mass function tabulated on (ln M, z) (interp2d, bicubic, .npy file), D(z) a
// distance tabulated in z (interp1d, cubic spline, text file), S(y) a selection function of an
// observable y (interp1d, cubic spline, CSV file), E(z) = sqrt(0.3 (1 + z)^3 + 0.7) and a
// miscentring kernel K(w) = exp(-|w|^2 / (2 sigma_w^2)) computed inline. In an analysis the
// tables come from a Boltzmann code, an emulator or a catalogue; here they are tabulated from
// analytic functions (--write-tables DIR writes them; the copies in examples/data/cluster_counts
// were written so), so that the exact integral is known:
//   - the lnM integral of n = exp(-alpha u - u^2 / (2 s(z)^2)), u = lnM - L0, s(z) = s0 (1 + z),
//     is closed-form (erf), and the z integral of that times D^2 / E is done by adaptive
//     Gauss-Kronrod quadrature (Boost.Math) to 1e-13 relative;
//   - S(y) = 1 / (1 + exp(-(y - c) / width)) integrates to width [log(1 + exp((y - c) / width))];
//   - K integrates to (sigma_w sqrt(2 pi) erf(1 / (sigma_w sqrt 2)))^3 over [-1, 1]^3.
// The tables reproduce these functions to 3e-5 of their largest value (the bicubic mass function;
// the splines to 1e-7), and the integral of the tabulated integrand differs from the exact value
// by about 5e-7 relative (--write-tables prints both), far below the requested 1e-4.
//
// This header is the same source for the CPU (g++) and the GPU (nvcc): cluster_counts.cpp runs it,
// bench/tables_bench.cpp times it against cluster_counts_analytic.

#if defined(__CUDACC__)
#include <mcubes/cuda.cuh>
#else
#include <mcubes/mcubes.hpp>
#endif
#include <mcubes/tables.hpp>

#include <boost/math/quadrature/gauss_kronrod.hpp>

#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <stdexcept>
#include <string>
#include <vector>

namespace model {
// The analytic functions behind the tables, and the region.
constexpr double L0 = 32.236191301916641;  // ln(1e14)
constexpr double alpha = 1.2, s0 = 0.8;   // mass function
constexpr double c_sel = 2.0, w_sel = 0.4;  // selection
constexpr double sigma_w = 0.5;             // miscentring kernel
constexpr double lnM_lo = L0 - 2.3, lnM_hi = L0 + 2.3, z_lo = 0.1, z_hi = 1.0, y_lo = 0.0, y_hi = 5.0;

inline double mass_function(double lnM, double z) {
  const double u = lnM - L0, s = s0 * (1 + z);
  return std::exp(-alpha * u - u * u / (2 * s * s));
}
inline double distance(double z) { return std::log1p(z) * (1 + 0.2 * z); }
inline double selection(double y) { return 1 / (1 + std::exp(-(y - c_sel) / w_sel)); }

/// The exact integral, in its three factors (header comment).
struct parts {
  double mass_distance;  ///< ∫∫ n D^2 / E dlnM dz
  double selection;      ///< ∫ S dy
  double kernel;         ///< ∫ K d^3w
};
inline parts exact_parts() {
  const double pi = 3.14159265358979323846;
  const auto lnM_integral = [&](double z) {  // ∫ n dlnM over [L0 - 2.3, L0 + 2.3], closed form
    const double s = s0 * (1 + z), U = 2.3, m = alpha * s * s;
    const auto Phi = [](double t) { return 0.5 * std::erfc(-t / std::sqrt(2.0)); };
    return std::exp(alpha * alpha * s * s / 2) * std::sqrt(2 * pi) * s * (Phi((U + m) / s) - Phi((-U + m) / s));
  };
  const auto z_integrand = [&](double z) {
    const double d = distance(z);
    return lnM_integral(z) * d * d / std::sqrt(0.3 * (1 + z) * (1 + z) * (1 + z) + 0.7);
  };
  parts p;
  p.mass_distance = boost::math::quadrature::gauss_kronrod<double, 61>::integrate(z_integrand, z_lo, z_hi, 15, 1e-14);
  const auto F = [](double y) { return w_sel * std::log1p(std::exp((y - c_sel) / w_sel)); };
  p.selection = F(y_hi) - F(y_lo);
  p.kernel = std::pow(sigma_w * std::sqrt(2 * pi) * std::erf(1 / (sigma_w * std::sqrt(2.0))), 3);
  return p;
}

/// The exact integral over the region (header comment).
inline double exact() {
  const parts p = exact_parts();
  return p.mass_distance * p.selection * p.kernel;
}
}  // namespace model

/// The integrand: three table views and inline functions, callable on host and device.
struct cluster_counts {
  mcubes::interp2d_view mass_function;  // n(lnM, z)
  mcubes::interp1d_view distance;       // D(z)
  mcubes::interp1d_view selection;      // S(y)

  MCUBES_HOST_DEVICE double operator()(const mcubes::point<6>& x) const {
    const double z = x[1];
    const double e = sqrt(0.3 * (1 + z) * (1 + z) * (1 + z) + 0.7);
    const double d = distance(z);
    const double w2 = x[3] * x[3] + x[4] * x[4] + x[5] * x[5];
    const double k = exp(-w2 / (2 * model::sigma_w * model::sigma_w));
    return mass_function(x[0], z) * d * d / e * selection(x[2]) * k;
  }
};

/// The same integrand with the analytic functions inlined (the benchmark's reference).
struct cluster_counts_analytic {
  MCUBES_HOST_DEVICE double operator()(const mcubes::point<6>& x) const {
    const double z = x[1], u = x[0] - model::L0, s = model::s0 * (1 + z);
    const double e = sqrt(0.3 * (1 + z) * (1 + z) * (1 + z) + 0.7);
    const double d = log1p(z) * (1 + 0.2 * z);
    const double w2 = x[3] * x[3] + x[4] * x[4] + x[5] * x[5];
    const double k = exp(-w2 / (2 * model::sigma_w * model::sigma_w));
    const double n = exp(-model::alpha * u - u * u / (2 * s * s));
    const double sel = 1 / (1 + exp(-(x[2] - model::c_sel) / model::w_sel));
    return n * d * d / e * sel * k;
  }
};

/// The integration region (lnM, z, y, w1, w2, w3).
inline mcubes::region<6> cluster_region() {
  return mcubes::region<6>({model::lnM_lo, model::z_lo, model::y_lo, -1, -1, -1},
                           {model::lnM_hi, model::z_hi, model::y_hi, 1, 1, 1});
}

namespace cluster {

// --- writing the tables (--write-tables): text, CSV and NumPy .npy -----------------------------

void write_npy_2d(const std::string& path, std::size_t rows, std::size_t cols, const std::vector<double>& v) {
  std::string header = "{'descr': '<f8', 'fortran_order': False, 'shape': (" + std::to_string(rows) + ", " +
                       std::to_string(cols) + "), }";
  const std::size_t preamble = 10;  // magic (6), version (2), header length (2)
  while ((preamble + header.size() + 1) % 64 != 0) header += ' ';
  header += '\n';
  std::ofstream out(path, std::ios::binary);
  out.write("\x93NUMPY\x01\x00", 8);
  const std::uint16_t len = static_cast<std::uint16_t>(header.size());
  const char len_bytes[2] = {static_cast<char>(len & 0xff), static_cast<char>(len >> 8)};  // little-endian
  out.write(len_bytes, 2);
  out.write(header.data(), static_cast<std::streamsize>(header.size()));
  out.write(reinterpret_cast<const char*>(v.data()), static_cast<std::streamsize>(v.size() * sizeof(double)));
  if (!out) throw std::runtime_error("cannot write " + path);
}

std::vector<double> uniform_nodes(double lo, double hi, int n) {
  std::vector<double> x(n);
  for (int i = 0; i < n; ++i) x[i] = i + 1 == n ? hi : lo + i * ((hi - lo) / (n - 1));
  return x;
}

// The grids: a little wider than the region in lnM and z; 61 x 41, 111 and 121 nodes.
const std::vector<double> lnM_nodes = uniform_nodes(model::lnM_lo - 0.1, model::lnM_hi + 0.1, 61);
const std::vector<double> zm_nodes = uniform_nodes(0.05, 1.05, 41);
const std::vector<double> zd_nodes = uniform_nodes(0.0, 1.1, 111);
const std::vector<double> y_nodes = uniform_nodes(-0.5, 5.5, 121);

void write_tables(const std::string& dir) {
  const auto column_file = [&](const std::string& name, const char* head, const char* sep, const std::vector<double>& x,
                               double (*f)(double)) {
    std::ofstream out(dir + "/" + name);
    out << head << "\n";
    char line[96];
    for (double v : x) {
      std::snprintf(line, sizeof line, "%.17g%s%.17g\n", v, sep, f(v));
      out << line;
    }
    if (!out) throw std::runtime_error("cannot write " + dir + "/" + name);
  };
  column_file("distance.txt", "# z  D(z) = log(1 + z) (1 + 0.2 z)", "  ", zd_nodes, model::distance);
  column_file("selection.csv", "y,S", ",", y_nodes, model::selection);
  const auto nodes_file = [&](const std::string& name, const char* head, const std::vector<double>& x) {
    std::ofstream out(dir + "/" + name);
    out << head << "\n";
    char line[48];
    for (double v : x) {
      std::snprintf(line, sizeof line, "%.17g\n", v);
      out << line;
    }
  };
  nodes_file("mass_function_lnM.txt", "# ln M nodes (x axis of mass_function.npy, its columns)", lnM_nodes);
  nodes_file("mass_function_z.txt", "# z nodes (y axis of mass_function.npy, its rows)", zm_nodes);
  std::vector<double> n;  // shape (nz, nlnM): n[j * nlnM + i] = n(lnM_i, z_j)
  for (double z : zm_nodes)
    for (double l : lnM_nodes) n.push_back(model::mass_function(l, z));
  write_npy_2d(dir + "/mass_function.npy", zm_nodes.size(), lnM_nodes.size(), n);
}

// --- reading the tables ---------------------------------------------------------------------------

struct tables {
  mcubes::interp2d mass_function;
  mcubes::interp1d distance;
  mcubes::interp1d selection;
};

tables read_tables(const std::string& dir) {
  const mcubes::table_data n = mcubes::read_npy(dir + "/mass_function.npy");
  const mcubes::table_data lnM = mcubes::read_columns(dir + "/mass_function_lnM.txt");
  const mcubes::table_data z = mcubes::read_columns(dir + "/mass_function_z.txt");
  const mcubes::table_data d = mcubes::read_columns(dir + "/distance.txt");
  const mcubes::table_data s = mcubes::read_columns(dir + "/selection.csv");
  using mcubes::grid_axis;
  return tables{
      mcubes::interp2d(grid_axis::nodes(lnM.column(0)), grid_axis::nodes(z.column(0)), n.values,
                       mcubes::interp2d_kind::bicubic),
      mcubes::interp1d(d.column(0), d.column(1), mcubes::interp1d_kind::cspline),
      mcubes::interp1d(s.column(0), s.column(1), mcubes::interp1d_kind::cspline)};
}

/// How well the tables stand for the functions: the largest difference on a dense grid of the
/// region relative to the function's largest value there (per table), and the relative bias of the
/// integral of the tabulated integrand, from the midpoint rule on the tables (the K factor is
/// inline, hence exact): (∫S_table / ∫S) (∫∫ n_table D_table^2 / E / ∫∫ n D^2 / E) - 1, with the
/// exact integrals of exact_parts().
struct table_accuracy {
  double mass_function = 0, distance = 0, selection = 0, integral_bias = 0;
};

inline table_accuracy check_tables(const tables& t) {
  table_accuracy a;
  double max_n = 0, max_d = 0, max_s = 0;
  const int m = 600;
  for (int i = 0; i <= m; ++i) {
    const double z = model::z_lo + (model::z_hi - model::z_lo) * i / m;
    const double y = model::y_lo + (model::y_hi - model::y_lo) * i / m;
    a.distance = std::max(a.distance, std::fabs(t.distance(z) - model::distance(z)));
    max_d = std::max(max_d, std::fabs(model::distance(z)));
    a.selection = std::max(a.selection, std::fabs(t.selection(y) - model::selection(y)));
    max_s = std::max(max_s, std::fabs(model::selection(y)));
    for (int j = 0; j <= m; ++j) {
      const double l = model::lnM_lo + (model::lnM_hi - model::lnM_lo) * j / m;
      a.mass_function = std::max(a.mass_function, std::fabs(t.mass_function(l, z) - model::mass_function(l, z)));
      max_n = std::max(max_n, std::fabs(model::mass_function(l, z)));
    }
  }
  a.mass_function /= max_n, a.distance /= max_d, a.selection /= max_s;
  const int k = 1 << 20, q = 2000;  // midpoint points: 1-D, and per axis in 2-D
  double s_table = 0;
  for (int i = 0; i < k; ++i) s_table += t.selection(model::y_lo + (model::y_hi - model::y_lo) * (i + 0.5) / k);
  s_table *= (model::y_hi - model::y_lo) / k;
  double nz_table = 0;
  for (int i = 0; i < q; ++i) {
    const double z = model::z_lo + (model::z_hi - model::z_lo) * (i + 0.5) / q;
    const double d = t.distance(z), e = std::sqrt(0.3 * (1 + z) * (1 + z) * (1 + z) + 0.7);
    double row = 0;
    for (int j = 0; j < q; ++j) row += t.mass_function(model::lnM_lo + (model::lnM_hi - model::lnM_lo) * (j + 0.5) / q, z);
    nz_table += row * d * d / e;
  }
  nz_table *= (model::z_hi - model::z_lo) * (model::lnM_hi - model::lnM_lo) / (double(q) * q);
  const model::parts exact = model::exact_parts();
  a.integral_bias = (s_table / exact.selection) * (nz_table / exact.mass_distance) - 1;
  return a;
}

}  // namespace cluster

// The C++ reference runs of the Python module (bindings.hpp: reference_vegas, ...): one-point
// functors computing what python/tests' NumPy functions compute, with the same IEEE operations in
// the same order (so the bits must agree), and the paper's f4 for the benchmark's side-by-side
// figure (bench/python_bench.py).

#include <cmath>
#include <string>

#include "bindings.hpp"

namespace mcubes::python {
namespace {

/// 1 + sum_i (i + 1) y^2 (1 - y)^3 with y = x_i, times 7 x_0^4 + 0.01 (python/tests/conftest.py).
template <int D>
struct poly {
  double operator()(const point<D>& x) const {
    double s = 1;
    for (int i = 0; i < D; ++i) {
      const double y = x[i], z = 1 - y;
      s += (i + 1) * y * y * z * z * z;
    }
    return s * (7 * x[0] * x[0] * x[0] * x[0] + 0.01);
  }
};

/// The paper's f4: exp(-625 sum (x_i - 1/2)^2).
template <int D>
struct f4 {
  double operator()(const point<D>& x) const {
    double s = 0;
    for (int j = 0; j < D; ++j) s += (x[j] - 0.5) * (x[j] - 0.5);
    return std::exp(-625 * s);
  }
};

/// poly with its constant 0.01 replaced by a parameter c (the parameter batch's reference).
template <int D>
struct poly_with_constant {
  double operator()(const point<D>& x, const double& c) const {
    double s = 1;
    for (int i = 0; i < D; ++i) {
      const double y = x[i], z = 1 - y;
      s += (i + 1) * y * y * z * z * z;
    }
    return s * (7 * x[0] * x[0] * x[0] * x[0] + c);
  }
};

template <class Fn>
result dispatch(const std::string& name, int d, const Fn& fn) {
  if (name == "poly" && d == 1) return fn(poly<1>{}, std::integral_constant<int, 1>{});
  if (name == "poly" && d == 3) return fn(poly<3>{}, std::integral_constant<int, 3>{});
  if (name == "poly" && d == 8) return fn(poly<8>{}, std::integral_constant<int, 8>{});
  if (name == "f4" && d == 8) return fn(f4<8>{}, std::integral_constant<int, 8>{});
  MCUBES_EXPECTS(false, "no reference integrand '", name, "' in dimension ", d, " (poly: 1, 3, 8; f4: 8)");
  return {};
}

}  // namespace

result reference_vegas(const std::string& name, const box& b, const vegas_options& opt) {
  return dispatch(name, b.dim(), [&](const auto& f, auto d) {
    return mcubes::vegas(f, b.to_region<decltype(d)::value>(), opt);
  });
}

result reference_plain_mc(const std::string& name, const box& b, const plain_mc_options& opt) {
  return dispatch(name, b.dim(), [&](const auto& f, auto d) {
    return mcubes::plain_mc(f, b.to_region<decltype(d)::value>(), opt);
  });
}

result reference_midpoint(const std::string& name, const box& b, std::uint64_t n, const midpoint_options& opt) {
  return dispatch(name, b.dim(), [&](const auto& f, auto d) {
    return mcubes::midpoint(f, b.to_region<decltype(d)::value>(), n, opt);
  });
}

std::vector<result> reference_batch(const box& b, const std::vector<double>& constants, const vegas_options& opt) {
  MCUBES_EXPECTS(b.dim() == 3, "the batch reference is 3-dimensional, got ", b.dim());
  return mcubes::vegas_batch<3>(poly_with_constant<3>{}, b.to_region<3>(), constants, opt);
}

}  // namespace mcubes::python

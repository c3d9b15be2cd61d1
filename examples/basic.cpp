// The smallest complete mcubes program: integrate a 3-D Gaussian over the unit cube on the CPU.
#include <mcubes/mcubes.hpp>

#include <cmath>
#include <cstdio>

struct gaussian {  // an integrand: a const call operator taking mcubes::point<D>
  double operator()(const mcubes::point<3>& x) const {
    double s = 0;
    for (int i = 0; i < 3; ++i) s += (x[i] - 0.5) * (x[i] - 0.5);
    return std::exp(-50 * s);
  }
};

int main() {
  mcubes::vegas_options opts;  // defaults: rel_tol 1e-3, 1e6 calls per iteration, seed fixed
  opts.rel_tol = 1e-4;
  const mcubes::result r = mcubes::vegas(gaussian{}, mcubes::region<3>::unit(), opts);
  const double exact = std::pow(std::sqrt(M_PI / 50) * std::erf(std::sqrt(50.0) / 2), 3);
  std::printf("estimate %.10f +- %.2e (%s, %d iterations), exact %.10f\n", r.estimate, r.error,
              mcubes::to_string(r.status), r.iterations, exact);
  return r.converged() ? 0 : 1;
}

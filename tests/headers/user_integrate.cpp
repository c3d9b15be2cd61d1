// Compiled (not run) by the header tests (tests/headers/CMakeLists.txt) with -Wall -Wextra -Werror
// -O2: every CPU entry point instantiated on small integrands, as a user program would.
#include <mcubes/mcubes.hpp>
#include <mcubes/suite.hpp>

#include <cstdio>

namespace {

struct product {
  double operator()(const mcubes::point<3>& x) const { return x[0] * x[1] * x[2]; }
};

}  // namespace

int main() {
  mcubes::vegas_options o;
  o.calls_per_iteration = 10000;
  const auto a = mcubes::vegas(product{}, mcubes::region<3>::unit(), o);
  const auto sum = [](const mcubes::point<2>& x) { return x[0] + x[1]; };
  const auto b = mcubes::vegas(sum, mcubes::region<2>::unit(), o);
  const auto c = mcubes::plain_mc(product{}, mcubes::region<3>::unit());
  const auto d = mcubes::midpoint(product{}, mcubes::region<3>::unit(), 10);
  mcubes::pi_options po;
  po.samples = 1000;
  const auto e = mcubes::pi_monte_carlo(po);
  const auto f = mcubes::pi_midpoint(1000);
  std::printf("%g %g %g %g %g %g\n", a.estimate, b.estimate, c.estimate, d.estimate, e.estimate, f.estimate);
  return 0;
}

// Compiled (not run) by the header tests (tests/headers/CMakeLists.txt) with nvcc
// -Xcompiler=-Wall,-Wextra (and -Werror): mcubes::integrate and the other methods instantiated
// on a functor, and with --extended-lambda on a __host__ __device__ lambda, as a user's .cu file
// would. The second compilation (MCUBES_TEST_SECOND_UNIT: no main, a function of another name) is
// linked with the first into one program (Headers.nvcc:two_translation_units): no kernel or
// function of the headers is defined twice.
#include <mcubes/cuda.cuh>

#include <cstdio>

namespace {

struct product {
  MCUBES_HOST_DEVICE double operator()(const mcubes::point<3>& x) const { return x[0] * x[1] * x[2]; }
};

}  // namespace

#if defined(MCUBES_TEST_SECOND_UNIT)
int user_integrate_second_unit() {
#else
int main() {
#endif
  mcubes::vegas_options o;
  o.backend = mcubes::backend_kind::automatic;
  o.calls_per_iteration = 10000;
  const auto a = mcubes::integrate(product{}, mcubes::region<3>::unit(), o);
  std::printf("%g\n", a.estimate);
#if defined(MCUBES_TEST_EXTENDED_LAMBDA)
  const auto sum = [] MCUBES_HOST_DEVICE(const mcubes::point<2>& x) { return x[0] + x[1]; };
  const auto b = mcubes::integrate(sum, mcubes::region<2>::unit(), o);
  std::printf("%g\n", b.estimate);
  const double scale = 2.0;  // a capturing extended lambda (not trivially copyable on the host)
  const auto scaled = [=] MCUBES_HOST_DEVICE(const mcubes::point<2>& x) { return scale * x[0]; };
  std::printf("%g\n", mcubes::integrate(scaled, mcubes::region<2>::unit(), o).estimate);
#endif
  mcubes::plain_mc_options pm;
  pm.backend = mcubes::backend_kind::automatic;
  const auto c = mcubes::plain_mc(product{}, mcubes::region<3>::unit(), pm);
  mcubes::midpoint_options mo;
  mo.backend = mcubes::backend_kind::automatic;
  const auto d = mcubes::midpoint(product{}, mcubes::region<3>::unit(), 10, mo);
  mcubes::pi_options po;
  po.backend = mcubes::backend_kind::automatic;
  const auto e = mcubes::pi_monte_carlo(po);
  const auto f = mcubes::pi_midpoint(1000, mo);
  std::printf("%g %g %g %g\n", c.estimate, d.estimate, e.estimate, f.estimate);
  return 0;
}

// Must not compile: the integrand returns float (check_integrand's second rule).
#include <mcubes/mcubes.hpp>
struct f {
  float operator()(const mcubes::point<2>& x) const { return static_cast<float>(x[0]); }
};
int main() {
  mcubes::integrator<2> integ(mcubes::region<2>::unit());
  return static_cast<int>(integ.integrate(f{}).estimate);
}

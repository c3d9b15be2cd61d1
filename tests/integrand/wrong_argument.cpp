// Must not compile: the integrand takes a double, not a point<D> (check_integrand's first rule).
#include <mcubes/mcubes.hpp>
struct f {
  double operator()(double x) const { return x; }
};
int main() { return static_cast<int>(mcubes::plain_mc<3>(f{}, mcubes::region<3>::unit()).estimate); }

// Must not compile: the call operator is not const (check_integrand's first rule).
#include <mcubes/mcubes.hpp>
struct f {
  double operator()(const mcubes::point<2>& x) { return x[0]; }
};
int main() { return static_cast<int>(mcubes::vegas<2>(f{}, mcubes::region<2>::unit()).estimate); }

// The integrand contract's traits (integrand.hpp): each rule accepts what it should and refuses
// what it should. The compile-fail tests (tests/integrand/*.cpp, *.cu via check_compile_fail.cmake)
// check that the entry points stop with the rule's message.
#include <gtest/gtest.h>

#include <mcubes/integrand.hpp>
#include <mcubes/suite.hpp>

#include <vector>

namespace {
struct good {
  double operator()(const mcubes::point<3>& x) const { return x[0]; }
};
struct generic {  // the suite's form: a template over D
  template <int D>
  double operator()(const mcubes::point<D>& x) const { return x[0]; }
};
struct non_const {
  double operator()(const mcubes::point<3>& x) { return x[0]; }
};
struct takes_double {
  double operator()(double x) const { return x; }
};
struct returns_float {
  float operator()(const mcubes::point<3>&) const { return 1.0f; }
};
struct returns_reference {
  const double& operator()(const mcubes::point<3>& x) const { return x[0]; }
};
struct holds_vector {
  std::vector<double> v;
  double operator()(const mcubes::point<3>& x) const { return x[0]; }
};
}  // namespace

TEST(IntegrandContract, Traits) {
  EXPECT_TRUE((mcubes::is_integrand_v<good, 3>));
  EXPECT_TRUE((mcubes::is_device_integrand_v<good, 3>));
  EXPECT_FALSE((mcubes::is_integrand_v<good, 2>));  // point<2> is not point<3>
  EXPECT_TRUE((mcubes::is_integrand_v<generic, 7>));
  EXPECT_TRUE((mcubes::is_device_integrand_v<mcubes::suite::f4_gaussian, 8>));
  EXPECT_FALSE((mcubes::is_const_callable_v<non_const, 3>));
  EXPECT_FALSE((mcubes::is_const_callable_v<takes_double, 3>));
  EXPECT_TRUE((mcubes::is_const_callable_v<returns_float, 3>));
  EXPECT_FALSE((mcubes::returns_double_v<returns_float, 3>));
  EXPECT_FALSE((mcubes::returns_double_v<returns_reference, 3>));
  EXPECT_TRUE((mcubes::is_integrand_v<holds_vector, 3>));         // fine on the CPU
  EXPECT_FALSE((mcubes::is_device_integrand_v<holds_vector, 3>));  // not for the GPU
  EXPECT_TRUE((mcubes::check_integrand<3, good>()));
}

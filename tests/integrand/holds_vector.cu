// Must not compile for the CUDA backend: the integrand holds a std::vector (not trivially copyable).
#include <mcubes/cuda.cuh>
#include <vector>
struct f {
  std::vector<double> table;
  MCUBES_HOST_DEVICE double operator()(const mcubes::point<2>& x) const { return x[0]; }
};
int main() { return static_cast<int>(mcubes::vegas<2>(f{}, mcubes::region<2>::unit()).estimate); }

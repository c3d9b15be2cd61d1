// The second translation unit of Headers.nvcc:two_translation_units (two_units_a.cu).
#include <mcubes/cuda.cuh>
#include <cstdio>
double run_a();
struct fb { MCUBES_HOST_DEVICE double operator()(const mcubes::point<3>& x) const { return x[1]; } };
int main() { mcubes::vegas_options o; o.backend = mcubes::backend_kind::cpu; std::printf("%g %g\n", run_a(), mcubes::vegas<3>(fb{}, mcubes::region<3>::unit(), o).estimate); }

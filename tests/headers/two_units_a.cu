// Two translation units that both include <mcubes/cuda.cuh> link into one program (no kernel or
// function of the headers defined twice); see Headers.nvcc:two_translation_units.
#include <mcubes/cuda.cuh>
struct fa { MCUBES_HOST_DEVICE double operator()(const mcubes::point<2>& x) const { return x[0]; } };
double run_a() { mcubes::vegas_options o; o.backend = mcubes::backend_kind::automatic; return mcubes::vegas<2>(fa{}, mcubes::region<2>::unit(), o).estimate; }

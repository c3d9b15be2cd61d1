// GPU callables of the Python module as one translation unit, for builds configured with
// MCUBES_CUDA_COMPILE_CHECK=ON (device_call.hpp: one dimension compiled, nothing can run it): nvcc's
// fixed cost of a unit paid once instead of four times. The same sources as a user's build.
#include "device_dims_a.cu"
#include "device_dims_b.cu"
#include "device_dims_c.cu"
#include "device_dims_d.cu"

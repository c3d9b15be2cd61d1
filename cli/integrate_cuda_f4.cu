/// @file cli/integrate_cuda_f4.cu
/// The CUDA runner of f4, every dimension of the integrand (its own translation unit:
/// integrate_cuda_impl.cuh says why).
#include "integrate_cuda_impl.cuh"

template mcubes::result mcubes::cli::run_integrand_cuda<mcubes::suite::f4_desc>(const run_request&);

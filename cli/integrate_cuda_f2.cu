/// @file cli/integrate_cuda_f2.cu
/// The CUDA runner of f2, every dimension of the integrand (its own translation unit:
/// integrate_cuda_impl.cuh says why).
#include "integrate_cuda_impl.cuh"

template mcubes::result mcubes::cli::run_integrand_cuda<mcubes::suite::f2_desc>(const run_request&);

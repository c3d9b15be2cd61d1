/// @file cli/integrate_cuda_fB.cu
/// The CUDA runner of fB, every dimension of the integrand (its own translation unit:
/// integrate_cuda_impl.cuh says why).
#include "integrate_cuda_impl.cuh"

template mcubes::result mcubes::cli::run_integrand_cuda<mcubes::suite::fB_desc>(const run_request&);

/// @file cli/integrate_cuda_fA.cu
/// The CUDA runner of fA, every dimension of the integrand (its own translation unit:
/// integrate_cuda_impl.cuh says why).
#include "integrate_cuda_impl.cuh"

template mcubes::result mcubes::cli::run_integrand_cuda<mcubes::suite::fA_desc>(const run_request&);

/// @file cli/scan_cuda_f4.cu
/// The CUDA scan runner of f4, dimensions 1..scan_cuda_max_dim (its own translation unit:
/// scan_cuda_impl.cuh says why).
#include "scan_cuda_impl.cuh"

template std::vector<mcubes::result> mcubes::cli::scan_integrand_cuda<mcubes::suite::f4_desc>(const scan_request&);

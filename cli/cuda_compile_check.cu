/// @file cli/cuda_compile_check.cu
/// The command's CUDA units (the runners of integrate and scan, pi on the GPU) as one translation
/// unit, for builds configured with MCUBES_CUDA_COMPILE_CHECK=ON (scripts/test.sh where no GPU is
/// visible): each runner then has one dimension per integrand and nothing can run it, so nvcc's
/// fixed cost of a unit (parsing the library and CUB, about half a minute) is paid once instead of
/// sixteen times. The same sources as the units a user's build compiles one by one.
#include "integrate_cuda.cu"
#include "integrate_cuda_f1.cu"
#include "integrate_cuda_f2.cu"
#include "integrate_cuda_f3.cu"
#include "integrate_cuda_f4.cu"
#include "integrate_cuda_f5.cu"
#include "integrate_cuda_f6.cu"
#include "integrate_cuda_fA.cu"
#include "integrate_cuda_fB.cu"
#include "pi_cuda.cu"
#include "scan_cuda.cu"
#include "scan_cuda_f1.cu"
#include "scan_cuda_f2.cu"
#include "scan_cuda_f3.cu"
#include "scan_cuda_f4.cu"
#include "scan_cuda_f5.cu"
#include "scan_cuda_f6.cu"

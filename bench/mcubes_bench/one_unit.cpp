// mcubes-bench's sources as one translation unit, for builds configured with
// MCUBES_CUDA_COMPILE_CHECK=ON (scripts/test.sh where no GPU is visible): compiled by nvcc, each unit
// costs its fixed half minute of parsing the library and CUB; here it is paid once. The same sources.
#include "main.cpp"
#include "reference.cpp"
#include "throughput.cpp"
#include "cpu.cpp"
#include "accuracy.cpp"

#pragma once
/// @file backend/launch_report.hpp
/// What a CUDA entry point of plain Monte Carlo, the midpoint rule or Monte Carlo pi reports about
/// its launch (filled when the caller passes a non-null pointer). A plain struct, so that code
/// compiled without nvcc (the `mcubes` command, reports) can carry it.

#include <string>

namespace mcubes {

/// Launch geometry and device time of one CUDA run.
struct launch_report {
  int device = -1;               ///< CUDA device ordinal
  std::string device_name;       ///< cudaDeviceProp::name
  int multiprocessors = 0;       ///< SM count
  int threads_per_block = 0;     ///< block size used (a power of two in [32, 1024])
  int blocks_per_sm = 0;         ///< resident blocks per SM from cudaOccupancyMaxActiveBlocksPerMultiprocessor
  long long grid = 0;            ///< blocks launched: min(blocks_per_sm x SMs, blocks with work)
  double kernel_ms = 0;          ///< device time of the kernel(s), CUDA events (excludes copies to the host)
};

}  // namespace mcubes

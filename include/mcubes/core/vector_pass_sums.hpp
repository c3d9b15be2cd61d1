#pragma once
/// @file core/vector_pass_sums.hpp
/// The sums of one pass of a vector-valued integrand, as every backend returns them
/// (cpu_backend::sample_passes, backend/cpu/vector_pass.hpp; cuda_backend::sample_passes,
/// backend/cuda/vector_pass.cuh) and algorithm/vegas_vector.hpp takes them.

#include <vector>

#include "sampler.hpp"

namespace mcubes {

/// A vector pass's sums: `scalar` as iteration_sums for component 0 (estimate, variance, flags,
/// bins: what the loop and the map use) and `sums`, the N estimates then the covariance triangle
/// (core/vector_sampler.hpp), unscaled, summed over all sub-cubes.
struct vector_pass_sums {
  iteration_sums scalar;
  std::vector<double> sums;
};

}  // namespace mcubes

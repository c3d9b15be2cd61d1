#pragma once
/// @file cli/npy_file.hpp
/// `mcubes sample --npy FILE`: weighted points as a NumPy array file.

#include <mcubes/core/weighted_sample.hpp>

#include "output_file.hpp"

namespace mcubes::cli {

/// Writes the n points of `s` to `out` (atomically, in bounded memory) in the NumPy .npy format
/// 1.0: one float64 little-endian ('<f8') C-order array of shape (n, d + 1), row i = x_0 .. x_(d-1)
/// of point i, then its weight (core/weighted_sample.hpp). numpy.load reads it:
///   a = numpy.load(FILE); x, w = a[:, :-1], a[:, -1]
/// @throws mcubes::error if the write fails (a file's previous content unchanged).
void write_weighted_npy(const atomic_output_file& out, const weighted_sampler& s);

}  // namespace mcubes::cli

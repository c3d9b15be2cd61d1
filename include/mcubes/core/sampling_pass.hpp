#pragma once
/// @file core/sampling_pass.hpp
/// The unit of work of every backend: one sampling pass, as the methods hand it to
/// sample_passes (backend/backend.hpp), and the sums a pass of an integrand of N values returns.
/// A call of sample_passes runs K passes (K = 1 for one integral; K > 1 for the members of a
/// batch, or several passes over one map) of an integrand whose value per point is `Values`:
/// double (a scalar integrand) or values<N> (a vector-valued integrand of N components, N >= 1).
/// Host and device code.

#include <cstddef>
#include <cstdint>
#include <type_traits>

#include "sampler.hpp"
#include "../values.hpp"
#include "stratification.hpp"
#include "vector_pass_sums.hpp"

namespace mcubes {

/// One sampling pass: which of the maps given with it the pass samples through (`integral`: 0
/// where one map is given; member k of a batch: k), its sampling parameters (seed, iteration, bin
/// scale, and VEGAS+'s per-sub-cube sample counts in sp.counts: none for the uniform strategy),
/// V-Sample (adapt: bin sums for the map's adaptation) or No-Adjust, the chunk stride (> 1 only for
/// the bin-scale probe, whose sums are not used) and the stratification (sub-cubes and chunks).
template <int D>
struct sampling_pass {
  std::size_t integral = 0;
  sampling_params<D> sp{};
  bool adapt = false;
  std::uint64_t stride = 1;
  stratification st{};
};

/// The pass form of an integrand whose value per point is Values: `components` (0 for a scalar
/// integrand, N for values<N>) and the sums of one of its passes (`sums`): iteration_sums for a
/// scalar integrand; vector_pass_sums (component 0's iteration_sums and the N estimates and the
/// N x N products) for values<N>.
template <class Values>
struct pass_form;
template <>
struct pass_form<double> {
  static constexpr int components = 0;
  using sums = iteration_sums;
};
template <int N>
struct pass_form<values<N>> {
  static_assert(N >= 1, "a vector-valued integrand has at least one component");
  static constexpr int components = N;
  using sums = vector_pass_sums;
};
/// The sums of one pass of an integrand whose value per point is Values (pass_form).
template <class Values>
using pass_sums_t = typename pass_form<Values>::sums;

}  // namespace mcubes

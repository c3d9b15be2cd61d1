#pragma once
/// @file core/batch.hpp
/// What every backend shares for parameter batches (algorithm/vegas_batch.hpp): the integrand of
/// one member of a batch, the seed of member k, and the name of a member's sampling pass
/// (batch_pass: a sampling_pass, core/sampling_pass.hpp). Host and device code.

#include <cstddef>
#include <cstdint>
#include <utility>

#include "../config.hpp"
#include "../point.hpp"
#include "../random.hpp"
#include "sampler.hpp"
#include "sampling_pass.hpp"
#include "stratification.hpp"

namespace mcubes {

/// The seed of integral k of a batch run with seed `seed`: the first two words of Philox4x32-10
/// (random.hpp) under the key of (seed, stream_id::batch_seed) at the counter {k mod 2^32, k >> 32,
/// 0, 0}:
///   batch_seed(seed, k) = w0 + 2^32 w1,  {w0, w1, w2, w3} = Philox4x32-10_key(seed, 5)({k lo, k hi, 0, 0}).
/// Distinct members of a batch thus draw independent streams (a scan with one fixed seed would
/// give correlated errors), and integral k is reproduced alone with vegas(..., seed = batch_seed(seed, k)).
/// A pure function of (seed, k): the same on every backend and in every batch.
MCUBES_HOST_DEVICE inline std::uint64_t batch_seed(std::uint64_t seed, std::uint64_t k) {
  sample_stream s(seed, stream_id::batch_seed, 0, k);
  const auto w = s.block(0);
  return static_cast<std::uint64_t>(w.v[0]) | (static_cast<std::uint64_t>(w.v[1]) << 32);
}

/// The integrand of one member of a parameter batch: f(x, p) at fixed parameters p, as an integrand
/// of x (integrand.hpp). Trivially copyable when F and P are. vegas(with_parameters<F, P>{f, p},
/// region, opt) integrates member p alone: the batch evaluates exactly this functor.
template <class F, class P>
struct with_parameters {
  F f;  ///< the batch integrand: double f(const point<D>&, const P&) const
  P p;  ///< this member's parameters
  template <int D>
  MCUBES_HOST_DEVICE double operator()(const point<D>& x) const {
    return f(x, p);
  }
  /// values[i] = f(xs[i], p), i < n, in one call, where F has such a points call (values bitwise
  /// its one-point calls'): the CPU backend then evaluates a batch of samples at once
  /// (cpu_detail::pass_integrand_of; the run-time compiled integrands' program side,
  /// jit/object_run_impl.hpp). Host only.
  template <int D, class G = F,
            class = decltype(std::declval<const G&>()(std::declval<const point<D>*>(), std::size_t{},
                                                      std::declval<const P&>(), std::declval<double*>()))>
  void operator()(const point<D>* xs, std::size_t n, double* values) const {
    f(xs, n, p, values);
  }
};

/// One sampling pass of member `integral` of a batch (core/sampling_pass.hpp: the backends' unit
/// of work, whose `integral` is the member's index here).
template <int D>
using batch_pass = sampling_pass<D>;

}  // namespace mcubes

#pragma once
/// @file jit/points_entry.hpp
/// The object side of an integrand compiled at run time that holds the integrand only (a "points
/// object", jit/abi.hpp mcubes_jit_method_points): the program runs the method with its own
/// precompiled engine (jit/object_run.hpp) and calls the object for the integrand's values, n
/// points at a time. What the generated unit (jit/source.hpp, generate_points_source) includes:
/// nothing of the engine, so that such an object compiles in a fraction of a second.
///  - points_entry<D>(f, x, n, values, message): values[i] = f(point i) for i < n, point i the
///    D doubles at x + i * D (n consecutive mcubes::point<D>), in order; an exception thrown by
///    the user's code is caught into its kind (mcubes_jit_error_kind) and message;
///  - index_entry<D>(f, x): the index out of range that f meets at the point x (checked_point,
///    jit/checked_point.hpp), or INT_MIN: the failing sample re-evaluated for the report;
///  - bound_parameters<G, Params, P>: a batch integrand G(x, q) with its parameters q, the
///    computation that with_parameters<G, Params> (core/batch.hpp) makes, for P > 0.
/// The user's text sees `<cmath>` and `<cstdlib>` (std::exit and the like) as in an object with its own
/// run. Determinism: values[i] is f(point i) computed by the same code, bit for bit, as the engine's
/// one-point call would compute it (no contraction, no -ffast-math: jit/toolchain.hpp).

#include <climits>
#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <exception>
#include <new>

#include "../point.hpp"
#include "abi.hpp"
#include "checked_point.hpp"

namespace mcubes::jit::detail {

/// Copies `what` into an object's message buffer (MCUBES_JIT_MESSAGE_SIZE bytes, truncated) and
/// returns `kind`.
inline int points_failure(char* message, int kind, const char* what) noexcept {
  if (message != nullptr) {
    std::strncpy(message, what, MCUBES_JIT_MESSAGE_SIZE - 1);
    message[MCUBES_JIT_MESSAGE_SIZE - 1] = '\0';
  }
  return kind;
}

/// The D doubles at x as a point (x: the first coordinate of n consecutive point<D>s).
template <int D>
const point<D>* points_at(const double* x) noexcept {
  static_assert(sizeof(point<D>) == D * sizeof(double), "point<D> is D doubles");
  return reinterpret_cast<const point<D>*>(x);
}

/// mcubes_jit_points_fn's body: values[i] = f(point i), i < n. Returns mcubes_jit_ok, or the kind
/// of what the user's code threw (message: its what()). Never throws.
template <int D, class F>
int points_entry(const F& f, const double* x, std::uint64_t n, double* values, char* message) noexcept {
  try {
    const point<D>* xs = points_at<D>(x);
    for (std::uint64_t i = 0; i < n; ++i) values[i] = f(xs[i]);
    return mcubes_jit_ok;
  } catch (const std::bad_alloc&) {
    return points_failure(message, mcubes_jit_out_of_memory, "out of memory");
  } catch (const std::exception& e) {
    return points_failure(message, mcubes_jit_other, e.what());
  } catch (...) {
    return points_failure(message, mcubes_jit_other, "unknown exception in the compiled integrand");
  }
}

/// mcubes_jit_index_at_fn's body: the index out of range that f meets at the point x, or INT_MIN
/// (also when f throws). Runs f once; not to be called while the object runs elsewhere.
template <int D, class F>
int index_entry(const F& f, const double* x) noexcept {
  bad_index().store(INT_MIN, std::memory_order_relaxed);
  try {
    (void)f(*points_at<D>(x));
  } catch (...) {
  }
  return bad_index().load(std::memory_order_relaxed);
}

/// The batch integrand G with the parameters at `values` (P doubles): f(x) = G{}(x, q), as
/// with_parameters<G, Params>{G{}, q} computes it.
template <class G, class Params, int P>
struct bound_parameters {
  Params q{};
  explicit bound_parameters(const double* values) {
    for (int k = 0; k < P; ++k) q.p[k] = values[k];
  }
  template <int D>
  double operator()(const point<D>& x) const {
    return G{}(x, q);
  }
};

}  // namespace mcubes::jit::detail

#pragma once
/// @file jit/checked_point.hpp
/// The `x` of the user's text in an integrand compiled at run time (jit.hpp): checked_point<D>,
/// x[i] reads coordinate i of the point; a constant i outside 0..D-1 is a compile error (GCC, with
/// optimisation: the call of an undefined function carrying an error attribute survives only for
/// such an index), any other i outside that range makes x[i] NaN and records i (detail::bad_index),
/// so that the run that meets it fails with jit::index_out_of_range naming i and the point (the
/// failing sample re-evaluated on the host). Light on purpose: the objects that hold only the
/// integrand (jit/points_entry.hpp) include this, not the engine.

#include <atomic>
#include <climits>
#include <limits>
#include <type_traits>

#include "../config.hpp"
#include "../point.hpp"

/// Marks the exported functions of an object (everything else is hidden: -fvisibility=hidden).
#if defined(__GNUC__) || defined(__clang__)
#define MCUBES_JIT_EXPORT __attribute__((visibility("default")))
#else
#define MCUBES_JIT_EXPORT
#endif

namespace mcubes::jit {

namespace detail {

#if defined(__GNUC__) && !defined(__clang__) && !defined(__CUDACC__) && defined(__OPTIMIZE__)
/// Never defined, never called in a valid program: GCC reports a call that survives optimisation
/// as a compile error with this text (jit/source.hpp maps it back to the user's x[...]).
[[gnu::error("mcubes-jit: constant index out of range")]] void constant_index_out_of_range();
#define MCUBES_JIT_CONSTANT_INDEX_CHECK 1
#else
#define MCUBES_JIT_CONSTANT_INDEX_CHECK 0
#endif

/// The first index i outside [0, D) that x[i] met on the host since the last reset, or INT_MIN.
inline std::atomic<int>& bad_index() {
  static std::atomic<int> index{INT_MIN};
  return index;
}

}  // namespace detail

/// The point as the user's text sees it (`x`): x[i] is coordinate i (0-based) of the point in the
/// region, by value. Out-of-range indices: see the file comment. Costs nothing for an index the
/// compiler can bound (a constant, a loop up to D).
template <int D>
class checked_point {
 public:
  MCUBES_HOST_DEVICE explicit checked_point(const point<D>& x) : x_(x) {}
  /// x[i] for an integer i (a floating-point index is a compile error, not a silent truncation).
  template <class I, std::enable_if_t<std::is_integral_v<I>, int> = 0>
  MCUBES_HOST_DEVICE double operator[](I i) const {
    const long long k = static_cast<long long>(i);  // an unsigned i beyond LLONG_MAX: negative, out of range
#if MCUBES_JIT_CONSTANT_INDEX_CHECK
    if (__builtin_constant_p(k) && (k < 0 || k >= D)) detail::constant_index_out_of_range();
#endif
    if (k >= 0 && k < D) return x_[static_cast<int>(k)];
    return out_of_range(k < INT_MIN ? INT_MIN + 1 : k > INT_MAX ? INT_MAX : static_cast<int>(k));
  }
  /// D.
  MCUBES_HOST_DEVICE static constexpr int size() { return D; }
  /// The point itself (for a function that takes a const mcubes::point<D>&).
  MCUBES_HOST_DEVICE const point<D>& get() const { return x_; }

 private:
  MCUBES_HOST_DEVICE static double out_of_range(int i) {
#if !defined(__CUDA_ARCH__)
    int none = INT_MIN;
    detail::bad_index().compare_exchange_strong(none, i, std::memory_order_relaxed);
#else
    (void)i;
#endif
    return std::numeric_limits<double>::quiet_NaN();
  }
  const point<D>& x_;
};

}  // namespace mcubes::jit

#pragma once
/// @file integrand.hpp
/// The integrand contract, checked at compile time. An integrand of dimension D is a functor f with
///   double operator()(const mcubes::point<D>& x) const
/// i.e. callable on a const object with a const point<D>&, returning exactly double (not float: the
/// sums are in double; not a reference or a proxy). For the CUDA backend it must also be trivially
/// copyable: it is copied to the device by value, so it may hold numbers and views of device
/// memory (mcubes::device_span), never a std::vector or a pointer to host memory.
///
/// Every entry point (methods.hpp) calls check_integrand<D, F>() (check_device_integrand in
/// translation units compiled by nvcc, which instantiate the CUDA path) before anything else, in the
/// form
///   if constexpr (check_integrand<D, F>()) { ...the method... } else { return {}; }
/// so that a broken rule gives one static_assert naming it, and the compiler does not go on into the
/// sampling loop with the bad type (whose errors would bury it).
///
/// Determinism: the integrand must be a pure function of x (no state changed by a call: the CPU
/// backend calls one integrand object from several threads at once, and the same sample may be
/// recomputed to report a failure).

#include <type_traits>
#include <utility>

#include "point.hpp"

namespace mcubes {

namespace detail {
template <class F, int D, class = void>
struct const_callable : std::false_type {};
template <class F, int D>
struct const_callable<F, D, std::void_t<decltype(std::declval<const F&>()(std::declval<const point<D>&>()))>>
    : std::true_type {};

template <class F, int D, bool = const_callable<F, D>::value>
struct returns_double : std::false_type {};
template <class F, int D>
struct returns_double<F, D, true>
    : std::is_same<decltype(std::declval<const F&>()(std::declval<const point<D>&>())), double> {};
}  // namespace detail

/// True if f(x) is valid for `const F f` and `const point<D>& x`.
template <class F, int D>
inline constexpr bool is_const_callable_v = detail::const_callable<F, D>::value;

/// True if that call returns exactly double.
template <class F, int D>
inline constexpr bool returns_double_v = detail::returns_double<F, D>::value;

/// True if F is an integrand of dimension D for the CPU backend (both rules above).
template <class F, int D>
inline constexpr bool is_integrand_v = is_const_callable_v<F, D> && returns_double_v<F, D>;

/// True if F is also an integrand for the CUDA backend (trivially copyable).
template <class F, int D>
inline constexpr bool is_device_integrand_v = is_integrand_v<F, D> && std::is_trivially_copyable_v<F>;

/// Asserts the CPU contract, one static_assert per rule with a one-line message; returns
/// is_integrand_v<F, D> (for `if constexpr`, see the file comment).
template <int D, class F>
constexpr bool check_integrand() {
  static_assert(is_const_callable_v<F, D>,
                "mcubes: the integrand must be callable as f(const mcubes::point<D>&) on a const object "
                "(is its operator() declared const, and does it take const mcubes::point<D>& for this D?)");
  static_assert(!is_const_callable_v<F, D> || returns_double_v<F, D>, "mcubes: the integrand must return double");
  return is_integrand_v<F, D>;
}

/// Asserts the CUDA contract as well (trivially copyable); returns is_device_integrand_v<F, D>.
template <int D, class F>
constexpr bool check_device_integrand() {
  static_assert(std::is_trivially_copyable_v<F>,
                "mcubes: an integrand for the CUDA backend must be trivially copyable (it is copied to the "
                "device by value: hold numbers and mcubes::device_span views, not a std::vector)");
  return check_integrand<D, F>() && std::is_trivially_copyable_v<F>;
}

/// The contract of the translation unit's backends: check_device_integrand where the CUDA backend
/// is compiled in (nvcc), check_integrand otherwise.
template <int D, class F>
constexpr bool check_integrand_here() {
#if defined(__CUDACC__)
  return check_device_integrand<D, F>();
#else
  return check_integrand<D, F>();
#endif
}

}  // namespace mcubes

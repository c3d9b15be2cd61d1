#pragma once
/// @file integrand.hpp
/// The integrand contract, checked at compile time. An integrand of dimension D is a functor f with
///   double operator()(const mcubes::point<D>& x) const
/// i.e. callable on a const object with a const point<D>&, returning exactly double (not float: the
/// sums are in double; not a reference or a proxy). For the CUDA backend it must also be trivially
/// copyable: it is copied to the device by value, so it may hold numbers, table views (tables.hpp)
/// and views of device memory (mcubes::device_span), never a std::vector or a pointer to host
/// memory. An extended lambda (nvcc --extended-lambda) is accepted as well:
///   const auto v = table.view();
///   auto f = [=] MCUBES_HOST_DEVICE (const mcubes::point<2>& x) { return v(x[0]) * x[1]; };
/// (in g++ translation units MCUBES_HOST_DEVICE is empty and this is a plain lambda). nvcc does not
/// allow such a lambda inside a private or protected member function (e.g. a GoogleTest body).
///
/// Optional, for the CUDA backend only: `static constexpr int cuda_min_blocks = k;` (1, 2 or 3;
/// default 3) sets the register budget of the Vegas sampling kernel for blocks of up to 256
/// threads to 65536 / (256 k) registers (80 for 3, 128 for 2). An integrand that gathers from
/// several tables runs faster with 2 (the cluster-counts example: 16.4 G evaluations/s with 80
/// registers, 21.6 with 128, on the H100; bench/results/2026-11-23-h100-tables.md). It never
/// changes a result.
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

/// True if F is the closure type of an extended __host__ __device__ lambda (nvcc --extended-lambda):
/// nvcc wraps such closures in a type that is not trivially copyable on the host but is copied to
/// kernels by value as designed; its captures must be trivially copyable (numbers, table views,
/// device_span), which nvcc does not let us check.
template <class F>
inline constexpr bool is_extended_lambda_v =
#if defined(__CUDACC_EXTENDED_LAMBDA__)
    __nv_is_extended_host_device_lambda_closure_type(F);
#else
    false;
#endif

/// True if F is copied to the device by value as it is: trivially copyable, or an extended lambda.
template <class F>
inline constexpr bool is_device_copyable_v = std::is_trivially_copyable_v<F> || is_extended_lambda_v<F>;

/// True if F is also an integrand for the CUDA backend (is_device_copyable_v).
template <class F, int D>
inline constexpr bool is_device_integrand_v = is_integrand_v<F, D> && is_device_copyable_v<F>;

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
  static_assert(is_device_copyable_v<F>,
                "mcubes: an integrand for the CUDA backend must be trivially copyable (it is copied to the "
                "device by value: hold numbers, table views and mcubes::device_span views, not a std::vector)");
  return check_integrand<D, F>() && is_device_copyable_v<F>;
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

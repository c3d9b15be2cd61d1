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
///
/// Array integrands (CPU backend): an integrand may also evaluate many points in one call, e.g. a
/// function written with NumPy (the Python module) or one that vectorises across points. It
/// declares `static constexpr bool array_integrand = true;` and has, besides the one-point call,
///   void operator()(const double* x, std::size_t n, double* values) const
/// with x row-major (n, D) (point i at x[i*D .. i*D + D), i.e. n consecutive point<D>s) and
/// values[i] = f(point i). The CPU backend then generates the points of a tile in sample-index
/// order, calls the array form once per slice of up to 32768 points (backend/cpu/array_path.hpp)
/// and accumulates the values in sample order: the result is bitwise that of the one-point calls,
/// for any number of threads. The one-point call must give the same values: it re-evaluates a
/// failing sample for the report (core/sample_diagnosis.hpp). The array call may be made from
/// several threads at once (each with its own x and values). mcubes::array_function<D, G> makes
/// both forms from a G that has only the array call. Plain Monte Carlo and the midpoint rule call
/// the array form too (per group of chunks); the CUDA backend does not (CPU backend only).
///
/// Device array integrands (CUDA backend, Vegas): an integrand whose values are computed by the
/// caller's own device code, e.g. a PyTorch or CuPy function (the Python module), declares
/// `static constexpr bool device_array_integrand = true;` and has the host function
///   void operator()(const double* x, std::size_t n, double* values, void* stream) const
/// with x (row-major (n, D), as above) and values in device memory, x complete when it is called,
/// and values[i] = f(point i) written when it returns or enqueued on the cudaStream_t `stream`.
/// The CUDA backend generates the points of a slice of whole tiles, calls it, and accumulates the
/// values as its one-point kernels do (backend/cuda/array_path.cuh): bitwise the one-point
/// functor that computes the same values, for any slice size and block size.
/// mcubes::device_array_function<D, G> (backend/cuda/array_path.cuh) makes one from such a G.

#include <cstddef>
#include <cstdint>
#include <type_traits>
#include <utility>

#include "point.hpp"
#include "values.hpp"

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

namespace detail {
template <class F, class = void>
struct declares_array_integrand : std::false_type {};
template <class F>
struct declares_array_integrand<F, std::void_t<decltype(F::array_integrand)>>
    : std::bool_constant<static_cast<bool>(F::array_integrand)> {};

template <class F, class = void>
struct array_callable : std::false_type {};
template <class F>
struct array_callable<F, std::void_t<decltype(std::declval<const F&>()(
                             std::declval<const double*>(), std::declval<std::size_t>(), std::declval<double*>()))>>
    : std::true_type {};

template <class F, class = void>
struct declares_device_array_integrand : std::false_type {};
template <class F>
struct declares_device_array_integrand<F, std::void_t<decltype(F::device_array_integrand)>>
    : std::bool_constant<static_cast<bool>(F::device_array_integrand)> {};
}  // namespace detail

/// True if F declares `static constexpr bool device_array_integrand = true` (file comment): the
/// CUDA backend evaluates it through its array path, never through a one-point device call.
template <class F>
inline constexpr bool is_device_array_integrand_v = detail::declares_device_array_integrand<F>::value;

/// True if F declares `static constexpr bool array_integrand = true`.
template <class F>
inline constexpr bool declares_array_integrand_v = detail::declares_array_integrand<F>::value;

/// True if F is an array integrand of dimension D (file comment): it declares array_integrand =
/// true, has the const array call f(const double* x, std::size_t n, double* values) and is an
/// integrand of dimension D (the one-point call).
template <class F, int D>
inline constexpr bool is_array_integrand_v = declares_array_integrand_v<F> && detail::array_callable<F>::value &&
                                             detail::const_callable<F, D>::value;

/// Points per call of an array integrand at most (the CPU backend's slice; plain Monte Carlo's and
/// the midpoint rule's groups of chunks), unless one chunk holds more.
inline constexpr std::uint64_t array_call_points = 32768;

/// The chunks per call of an array integrand for a method whose chunks hold `chunk_points` points,
/// among n_chunks: the largest power of two g <= next power of two >= n_chunks with g chunk_points
/// <= array_call_points (at least 1). An aligned group of g chunks is a node of the method's
/// fixed pairwise tree (core/fixed_tree.hpp), so reducing group results gives the same bits.
constexpr std::uint64_t array_group_chunks(std::uint64_t n_chunks, std::uint64_t chunk_points) {
  std::uint64_t width = 1;
  while (width < n_chunks) width *= 2;
  std::uint64_t g = 1;
  while (2 * g <= width && 2 * g * chunk_points <= array_call_points) g *= 2;
  return g;
}

/// An array integrand of dimension D made from a function object G with the array call only,
/// g(const double* x, std::size_t n, double* values) const (x row-major (n, D)): the one-point call
/// evaluates a single row. Trivially copyable when G is.
template <int D, class G>
struct array_function {
  G g;
  static constexpr bool array_integrand = true;
  /// values[i] = f(x[i*D .. i*D + D)) for i < n.
  void operator()(const double* x, std::size_t n, double* values) const { g(x, n, values); }
  /// f(x): the array call with n = 1.
  double operator()(const point<D>& x) const {
    double v = 0;
    g(x.x, 1, &v);
    return v;
  }
};

/// A vector-valued array integrand (values<N>) of dimension D made from a G with the array call
/// only, g(const double* x, std::size_t n, double* values) const with values row-major (n, N) (row i:
/// the N components at point i). The CPU backend's vector pass calls it per group of chunks of up
/// to array_call_points points (backend/cpu/vector_pass.hpp); the one-point call evaluates a single
/// row. Trivially copyable when G is.
template <int D, int N, class G>
struct vector_array_function {
  G g;
  static constexpr bool array_integrand = true;
  /// values[i*N + c] = component c of f(x[i*D .. i*D + D)) for i < n.
  void operator()(const double* x, std::size_t n, double* values) const { g(x, n, values); }
  /// f(x): the array call with n = 1.
  mcubes::values<N> operator()(const point<D>& x) const {
    mcubes::values<N> v{};
    g(x.x, 1, v.v);
    return v;
  }
};

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
  static_assert(!declares_array_integrand_v<F> || detail::array_callable<F>::value,
                "mcubes: an array integrand (array_integrand = true) must also have "
                "void operator()(const double* x, std::size_t n, double* values) const");
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

#pragma once
/// @file tables/table_storage.hpp
/// What every table (interp1d, interp2d, interpnd) is made of: one immutable block of doubles on
/// the host, its copy on a CUDA device when one is used, the trivially copyable view an integrand
/// holds, the grid axes, and the out-of-range policy.
///
/// Ownership: a table object shares its block (std::shared_ptr), so copying a table is cheap and
/// the block, host and device, lives while any copy does; it is freed (cudaFree included) with the
/// last copy. Views are non-owning: an integrand holding a view must not outlive every copy of its
/// table. The block is never modified after construction, so views may be read from any number of
/// CPU threads and GPU threads at once (the CPU backend calls one integrand from several threads).
///
/// Device copy (table_placement): with `automatic` (the default), the block is copied once, at
/// construction, to the current CUDA device, if and only if the program has the CUDA backend (some
/// translation unit includes <mcubes/cuda.cuh>, which registers the copy routine before main) and a
/// device is present; otherwise the table lives on the host only and needs no CUDA at all, and a
/// run with backend automatic falls back to the CPU as usual. `host_only` never copies;
/// `on_device(k)` copies to device k and throws if it cannot. A view reads the host block in host
/// code and the device block in device code (__CUDA_ARCH__); integrate on the device the table was
/// copied to (execution::device; both default to device 0). In device code, a table without a
/// device copy returns NaN, which the run reports as a non-finite integrand value.

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <limits>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "../config.hpp"
#include "../core/sample_diagnosis.hpp"
#include "../error.hpp"

namespace mcubes {

/// What a table does with an argument outside its grid [x_0, x_{n-1}] (per axis), chosen at
/// construction:
///  - error: the lookup returns NaN, so the integrand value is not finite; the run stops with
///    table_out_of_range (error.hpp), which names the first such sample in sample-index order (on
///    any backend), its point, the lookup's argument and the grid (core/sample_diagnosis.hpp).
///    Called directly (outside a run), the lookup returns NaN. This is GSL's behaviour (GSL_EDOM).
///  - clamp: the argument is moved to the nearest point of the grid (each axis to [x_0, x_{n-1}]).
///  - extrapolate: linear extrapolation, the first-order Taylor expansion of the interpolant at
///    the clamped point c: f(c) + sum_k df/dx_k(c) (x_k - c_k), with one-sided derivatives from
///    inside the grid. For linear and multilinear interpolation along one axis this continues the
///    end cell's line.
/// A NaN argument gives NaN under every policy.
enum class out_of_range_policy { error, clamp, extrapolate };

/// Where a table's values live (file comment): automatic() (default), host_only(), on_device(k).
class table_placement {
 public:
  /// The current CUDA device if the program has the CUDA backend and a device is present; the host
  /// alone otherwise.
  static table_placement automatic() noexcept { return table_placement(false, -1); }
  /// The host alone (the table cannot be read in device code).
  static table_placement host_only() noexcept { return table_placement(true, -1); }
  /// CUDA device `device` (>= 0); constructing the table throws if that device cannot be used.
  static table_placement on_device(int device) noexcept { return table_placement(false, device); }
  bool is_host_only() const noexcept { return host_only_; }
  /// The device named by on_device, -1 otherwise.
  int device() const noexcept { return device_; }

 private:
  table_placement(bool host_only, int device) : host_only_(host_only), device_(device) {}
  bool host_only_;
  int device_;
};

namespace detail {

/// The copy of a table to a CUDA device, provided by backend/cuda/table_memory.cuh (registered
/// before main by any translation unit that includes <mcubes/cuda.cuh>).
struct table_device_memory {
  /// Copies `bytes` from `host` to device `device` (-1: the current one) and returns the device
  /// pointer (the device used in *used), or nullptr if no device is present and `required` is false.
  /// @throws cuda_error if the allocation or the copy fails, or `required` and the device is absent.
  const void* (*upload)(const void* host, std::size_t bytes, int device, bool required, int* used);
  /// Frees a pointer returned by upload (errors ignored: it runs in destructors).
  void (*release)(const void* ptr, int device) noexcept;
};

/// The registered device copy routine (nullptr in a program without the CUDA backend).
inline const table_device_memory*& table_device_memory_hook() noexcept {
  static const table_device_memory* hook = nullptr;
  return hook;
}

/// One table's values: the host block and its device copy (file comment). Move-only; shared by
/// table objects through std::shared_ptr<const table_block>.
class table_block {
 public:
  table_block(std::vector<double> host, table_placement where) : host_(std::move(host)) {
    if (where.is_host_only() || host_.empty()) return;
    const table_device_memory* hook = table_device_memory_hook();
    if (hook == nullptr) {
      if (where.device() >= 0)
        throw invalid_input("table_placement::on_device(" + std::to_string(where.device()) +
                            "): this program has no CUDA backend (no translation unit includes <mcubes/cuda.cuh>)");
      return;
    }
    device_ = static_cast<const double*>(
        hook->upload(host_.data(), host_.size() * sizeof(double), where.device(), where.device() >= 0, &device_id_));
    if (device_ != nullptr) release_ = hook->release;
  }
  table_block(const table_block&) = delete;
  table_block& operator=(const table_block&) = delete;
  ~table_block() {
    if (device_ != nullptr && release_ != nullptr) release_(device_, device_id_);
  }
  const std::vector<double>& host() const noexcept { return host_; }
  /// The device copy, nullptr if none.
  const double* device() const noexcept { return device_; }
  /// The device holding the copy (-1 if none).
  int device_id() const noexcept { return device_ != nullptr ? device_id_ : -1; }

 private:
  std::vector<double> host_;
  const double* device_ = nullptr;
  int device_id_ = -1;
  void (*release_)(const void*, int) noexcept = nullptr;
};

/// A quiet NaN on host and device.
MCUBES_HOST_DEVICE inline double table_nan() {
#if defined(__CUDA_ARCH__)
  return __longlong_as_double(0x7ff8000000000000LL);
#else
  return std::numeric_limits<double>::quiet_NaN();
#endif
}

/// The result of a lookup outside the grid under out_of_range_policy::error: NaN, and on the host the
/// record for the failure report (core/sample_diagnosis.hpp; only while a diagnosis is armed).
MCUBES_HOST_DEVICE inline double lookup_out_of_range(const char* table, int axes, const double* argument,
                                                     const double* lower, const double* upper) {
#if !defined(__CUDA_ARCH__)
  note_lookup_out_of_range(table, axes, argument, lower, upper);
#else
  (void)table, (void)axes, (void)argument, (void)lower, (void)upper;
#endif
  return table_nan();
}

/// Reads p[0], p[1] (p 16-byte aligned: the coefficient sections start at even offsets of the
/// block, pad_to_pair). On the device one 16-byte read-only load (LDG.128): a lookup per sample
/// gathers from a different cell in each thread, so the number of load instructions, not the bytes,
/// bounds the rate (measured: bench/results/2026-11-23-h100-tables.md).
MCUBES_HOST_DEVICE inline void load_pair(const double* p, double& a, double& b) {
#if defined(__CUDA_ARCH__)
  const double2 v = __ldg(reinterpret_cast<const double2*>(p));
  a = v.x;
  b = v.y;
#else
  a = p[0];
  b = p[1];
#endif
}

/// Pads the block to an even length, so that the next section starts 16-byte aligned.
inline void pad_to_pair(std::vector<double>& block) {
  if (block.size() % 2 != 0) block.push_back(0.0);
}

}  // namespace detail

/// The trivially copyable address of a table block: host and device pointers. data() is the host
/// block in host code and the device block (possibly nullptr) in device code.
struct table_memory_view {
  const double* host = nullptr;
  const double* device = nullptr;
  MCUBES_HOST_DEVICE const double* data() const {
#if defined(__CUDA_ARCH__)
    return device;
#else
    return host;
#endif
  }
};

/// One axis of a table's grid: nodes x_0 < x_1 < ... < x_{n-1}, either uniform (x_i = lo + i h,
/// h = (hi - lo) / (n - 1), x_{n-1} = hi; lookup O(1)) or given explicitly (strictly increasing;
/// lookup by bisection, O(log n)). Explicit nodes that are uniform to 1e-13 of the range (as
/// read back from a file written with enough digits) get the O(1) lookup too; the cell then
/// follows from t = (x - x_0) / h, which can differ from bisection only for x within about 1e-13
/// of the range from a node, where both cells give the same value to rounding (continuity).
class grid_axis {
 public:
  /// n uniform nodes from lo to hi.
  /// @throws invalid_input unless lo < hi are finite, 2 <= n <= 2^31 - 1, the range hi - lo is
  ///         finite and the spacing h = (hi - lo) / (n - 1) has a finite reciprocal (h >= about
  ///         5.6e-309: lookups compute (x - lo) / h as (x - lo) * (1 / h)).
  static grid_axis uniform(double lo, double hi, std::size_t n) {
    if (!(std::isfinite(lo) && std::isfinite(hi) && lo < hi))
      detail::throw_invalid("grid_axis::uniform: needs finite lo < hi, got [", lo, ", ", hi, "]");
    if (n < 2 || n > max_nodes) detail::throw_invalid("grid_axis::uniform: needs 2 <= n <= 2^31 - 1 nodes, got ", n);
    const double range = hi - lo;
    if (!std::isfinite(range))
      detail::throw_invalid("grid_axis::uniform: the range hi - lo of [", lo, ", ", hi, "] overflows double");
    const double h = range / static_cast<double>(n - 1);
    if (!std::isfinite(1.0 / h))
      detail::throw_invalid("grid_axis::uniform: the spacing (hi - lo) / (n - 1) = ", h, " of [", lo, ", ", hi, "] with ",
                            n, " nodes is too small (1 / spacing overflows double)");
    grid_axis a;
    a.uniform_ = true;
    a.nodes_.resize(n);
    for (std::size_t i = 0; i + 1 < n; ++i) a.nodes_[i] = lo + static_cast<double>(i) * h;
    a.nodes_[n - 1] = hi;
    return a;
  }
  /// Explicit nodes.
  /// @throws invalid_input unless every node is finite, they strictly increase, there are at least
  ///         2, the range x_{n-1} - x_0 is finite and every spacing x_i - x_{i-1} has a finite
  ///         reciprocal (the message names the first bad node).
  static grid_axis nodes(std::vector<double> x) {
    if (x.size() < 2 || x.size() > max_nodes)
      detail::throw_invalid("grid_axis::nodes: needs 2 <= n <= 2^31 - 1 nodes, got ", x.size());
    for (std::size_t i = 0; i < x.size(); ++i) {
      if (!std::isfinite(x[i])) detail::throw_invalid("grid_axis::nodes: node ", i, " is ", x[i], " (not finite)");
      if (i > 0 && !(x[i] > x[i - 1]))
        detail::throw_invalid("grid_axis::nodes: node ", i, " = ", x[i], " is not greater than node ", i - 1, " = ",
                              x[i - 1], " (the nodes must strictly increase)");
      if (i > 0 && !std::isfinite(1.0 / (x[i] - x[i - 1])))
        detail::throw_invalid("grid_axis::nodes: node ", i, " = ", x[i], " is too close to node ", i - 1, " = ", x[i - 1],
                              " (1 / spacing overflows double)");
    }
    const std::size_t n = x.size();
    const double lo = x.front(), range = x.back() - lo;
    if (!std::isfinite(range))
      detail::throw_invalid("grid_axis::nodes: the range x_", n - 1, " - x_0 = ", x.back(), " - ", lo,
                            " overflows double");
    grid_axis a;
    a.nodes_ = std::move(x);
    // Nodes uniform to 1e-13 of the range (e.g. read from a file) get the O(1) lookup; the range is
    // finite, so the test compares finite numbers, and 1 / h must be finite for the lookup.
    const double h = range / static_cast<double>(n - 1);
    a.uniform_ = std::isfinite(1.0 / h);
    for (std::size_t i = 1; i + 1 < n && a.uniform_; ++i)
      a.uniform_ = std::fabs(a.nodes_[i] - (lo + static_cast<double>(i) * h)) <= 1e-13 * range;
    return a;
  }
  std::size_t size() const noexcept { return nodes_.size(); }
  bool is_uniform() const noexcept { return uniform_; }
  double lower() const noexcept { return nodes_.front(); }
  double upper() const noexcept { return nodes_.back(); }
  /// The nodes x_0..x_{n-1}.
  const std::vector<double>& node_values() const noexcept { return nodes_; }

  static constexpr std::size_t max_nodes = 2147483647u;

 private:
  grid_axis() = default;
  std::vector<double> nodes_;
  bool uniform_ = false;
};

/// The device-side form of a grid_axis: locate(x) gives the cell i (0 <= i <= n - 2) with
/// x_i <= x < x_{i+1} (i = n - 2 for x = x_{n-1}, as gsl_interp_bsearch) and the position
/// u = (x - x_i) / (x_{i+1} - x_i) in it, for lo <= x <= hi. Uniform axes compute
/// t = (x - lo) / h, i = min(floor t, n - 2), u = t - i (O(1), no memory read); explicit axes
/// bisect their nodes (stored in the table block at `nodes`).
struct axis_view {
  double lo = 0, hi = 0;
  double inv_h = 0;        ///< uniform: 1 / h
  double h = 0;            ///< uniform: h
  std::uint64_t nodes = 0;  ///< explicit: offset of the nodes in the block
  int n = 0;
  bool uniform = false;

  MCUBES_HOST_DEVICE void locate(const double* block, double x, int& i, double& u) const {
    if (uniform) {
      const double t = (x - lo) * inv_h;
      i = static_cast<int>(t);
      if (i > n - 2) i = n - 2;
      u = t - static_cast<double>(i);
    } else {
      const double* xs = block + nodes;
      int a = 0, b = n - 1;
      while (b - a > 1) {
        const int m = a + (b - a) / 2;  // (a + b) / 2 overflows int beyond 2^30 nodes
        if (xs[m] > x) b = m; else a = m;
      }
      i = a;
      u = (x - xs[a]) / (xs[a + 1] - xs[a]);
    }
  }
  /// Width of cell i.
  MCUBES_HOST_DEVICE double width(const double* block, int i) const {
    return uniform ? h : block[nodes + i + 1] - block[nodes + i];
  }
};

namespace detail {

/// Appends the axis's nodes to the block (explicit axes only) and returns its view.
inline axis_view make_axis_view(const grid_axis& a, std::vector<double>& block) {
  axis_view v;
  v.n = static_cast<int>(a.size());
  v.lo = a.lower();
  v.hi = a.upper();
  v.uniform = a.is_uniform();
  if (v.uniform) {
    v.h = (v.hi - v.lo) / static_cast<double>(v.n - 1);
    v.inv_h = 1.0 / v.h;
  } else {
    v.nodes = block.size();
    block.insert(block.end(), a.node_values().begin(), a.node_values().end());
  }
  return v;
}

/// Checks that every value is finite and that the span max - min of the values is finite, so that
/// no difference of values (or of interpolated values) taken by a lookup overflows. The message
/// names the table, the flat index and the value, or the extreme values.
inline void check_finite_values(const char* table, const std::vector<double>& v) {
  for (std::size_t i = 0; i < v.size(); ++i)
    if (!std::isfinite(v[i])) throw_invalid(table, ": value ", i, " is ", v[i], " (tables must be finite)");
  if (v.empty()) return;
  const auto [lo, hi] = std::minmax_element(v.begin(), v.end());
  if (!std::isfinite(*hi - *lo))
    throw_invalid(table, ": the values span [", *lo, ", ", *hi, "], whose width overflows double (value ",
                  lo - v.begin(), " and value ", hi - v.begin(), ")");
}

/// Checks that the coefficients a table computed from its values (spline, bicubic derivatives) are
/// finite: values that change by much over a tiny spacing give slopes beyond the double range.
inline void check_finite_coefficients(const char* table, const std::vector<double>& block, std::size_t from) {
  for (std::size_t i = from; i < block.size(); ++i)
    if (!std::isfinite(block[i]))
      throw_invalid(table, ": the interpolant's coefficients overflow double (the values change too fast for the "
                           "node spacing; rescale the values or the nodes)");
}

/// The number of nodes n_0 x n_1 x ... of a grid with the axis sizes `sizes`.
/// @throws invalid_input naming the table if the product overflows std::size_t.
template <class Sizes>
std::size_t grid_node_count(const char* table, const Sizes& sizes) {
  std::size_t total = 1;
  for (const std::size_t n : sizes) {
    if (n != 0 && total > std::numeric_limits<std::size_t>::max() / n) {
      std::string text;
      for (const std::size_t m : sizes) text += (text.empty() ? "" : " x ") + std::to_string(m);
      throw_invalid(table, ": the grid's node count ", text, " overflows std::size_t");
    }
    total *= n;
  }
  return total;
}

}  // namespace detail

}  // namespace mcubes

#pragma once
/// @file core/sample_diagnosis.hpp
/// Naming why a sample failed. When a method meets a non-finite integrand value (the first in
/// sample-index order, on any backend), the host recomputes that sample's point and calls
/// throw_non_finite, which evaluates the integrand there once more, on the host, with a diagnosis
/// armed for the calling thread. Code inside the integrand that returns NaN on purpose (a table
/// lookup outside its grid under out_of_range_policy::error, tables/) records its reason while the
/// diagnosis is armed, and the exception names it (table_out_of_range) instead of reporting a bare
/// non_finite_integrand. Nothing is recorded while no diagnosis is armed, so the record costs
/// nothing on the sampling path, and the integrand stays a pure function of x.

#include <cstdint>
#include <vector>

#include "../error.hpp"
#include "../point.hpp"

namespace mcubes::detail {

/// Largest number of axes a recorded lookup may have (interpnd's limit).
inline constexpr int max_lookup_axes = 6;

/// The first table lookup outside its grid met while a diagnosis is armed (per thread).
struct lookup_failure {
  bool armed = false;
  bool recorded = false;
  const char* table = "";
  int axes = 0;
  double argument[max_lookup_axes] = {};
  double lower[max_lookup_axes] = {};
  double upper[max_lookup_axes] = {};
};

/// The calling thread's record.
inline lookup_failure& current_lookup_failure() noexcept {
  thread_local lookup_failure record;
  return record;
}

/// Called by a table's host code for a lookup outside its grid under out_of_range_policy::error: records
/// the lookup (kind of table, argument, bounds per axis) if a diagnosis is armed and nothing is
/// recorded yet; does nothing otherwise.
inline void note_lookup_out_of_range(const char* table, int axes, const double* argument, const double* lower,
                                     const double* upper) noexcept {
  lookup_failure& r = current_lookup_failure();
  if (!r.armed || r.recorded || axes < 1 || axes > max_lookup_axes) return;
  r.recorded = true;
  r.table = table;
  r.axes = axes;
  for (int k = 0; k < axes; ++k) r.argument[k] = argument[k], r.lower[k] = lower[k], r.upper[k] = upper[k];
}

/// Throws for a non-finite integrand value `value` met at sample `index` of iteration `iteration`,
/// whose point is x: re-evaluates f(x) on the host with the diagnosis armed (file comment), then
/// throws table_out_of_range if a table lookup outside its grid was recorded, non_finite_integrand
/// otherwise. The value reported is the one the backend met (the host's may differ only if f is
/// not a pure function of x).
template <int D, class F>
[[noreturn]] void throw_non_finite(const F& f, int iteration, std::uint64_t index, const point<D>& x, double value) {
  lookup_failure& r = current_lookup_failure();
  r = lookup_failure{};
  r.armed = true;
  try {
    (void)f(x);
  } catch (...) {  // an integrand that throws on the host: report the value the backend met
  }
  const lookup_failure got = r;
  r = lookup_failure{};
  std::vector<double> xs(x.x, x.x + D);
  if (got.recorded)
    throw table_out_of_range(iteration, index, std::move(xs), value, got.table,
                             std::vector<double>(got.argument, got.argument + got.axes),
                             std::vector<double>(got.lower, got.lower + got.axes),
                             std::vector<double>(got.upper, got.upper + got.axes));
  throw non_finite_integrand(iteration, index, std::move(xs), value);
}

}  // namespace mcubes::detail

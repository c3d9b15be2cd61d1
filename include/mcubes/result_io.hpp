#pragma once
/// @file result_io.hpp
/// Printing results: the value(error) form (format_with_error), one line per result
/// (operator<<), and the table of iterations (summary), as vegas prints `result` and
/// `integ.summary()`. Host code; the command's reports use the same formatter.

#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <ostream>
#include <sstream>
#include <string>

#include "algorithm/vegas_vector.hpp"
#include "result.hpp"

namespace mcubes {

/// estimate(error) with the digits the error supports: two significant digits of the error, the
/// estimate rounded to the same decimal place, a common power of ten: 6.3850(13)e-10 means
/// 6.3850e-10 +- 0.0013e-10 (the particle physicists' and gvar's form). For an error that is not
/// finite and positive, the estimate with 17 significant digits. Never throws but std::bad_alloc.
inline std::string format_with_error(double estimate, double error) {
  char buf[96];
  if (!(error > 0) || !std::isfinite(error) || !std::isfinite(estimate)) {
    std::snprintf(buf, sizeof buf, "%.17g", estimate);
    return buf;
  }
  int last = static_cast<int>(std::floor(std::log10(error))) - 1;  // decimal place of the error's 2nd digit
  long long units = std::llround(error / std::pow(10.0, last));
  if (units >= 100) {  // 99.6 -> 100: one place up
    ++last;
    units = std::llround(error / std::pow(10.0, last));
  }
  int e = estimate != 0 ? static_cast<int>(std::floor(std::log10(std::fabs(estimate)))) : last + 1;
  if (e < last + 1) e = last + 1;  // an estimate smaller than the error: show it at the error's scale
  for (int attempt = 0; attempt < 2; ++attempt) {
    const int decimals = e - last;
    const double mantissa = estimate / std::pow(10.0, e);
    char m[64];
    std::snprintf(m, sizeof m, "%.*f", decimals, mantissa);
    if (std::fabs(std::atof(m)) >= 10 && attempt == 0) {  // rounding carried into a new digit: 9.99 -> 10.0
      ++e;
      continue;
    }
    if (e == 0)
      std::snprintf(buf, sizeof buf, "%s(%lld)", m, units);
    else
      std::snprintf(buf, sizeof buf, "%s(%lld)e%+03d", m, units, e);
    return buf;
  }
  return buf;
}

namespace detail {
inline std::string short_g(double x) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.3g", x);
  return buf;
}
}  // namespace detail

/// One line: `1.084653(69)e-02 (converged; 10 iterations, 7.81e+06 evaluations, chi2/dof 0.84,
/// Q 0.58)`, with the warnings' names appended when set.
inline std::ostream& operator<<(std::ostream& os, const result& r) {
  os << format_with_error(r.estimate, r.error) << " (" << to_string(r.status) << "; " << r.iterations
     << (r.iterations == 1 ? " iteration, " : " iterations, ") << detail::short_g(static_cast<double>(r.n_eval))
     << " evaluations, chi2/dof " << detail::short_g(r.chi2_dof) << ", Q " << detail::short_g(r.q);
  for (const warning w : all_warnings)
    if (r.has_warning(w)) os << ", warning " << to_string(w);
  return os << ')';
}

/// One line per component, `[i] value(error)`, then the run's status line (chi2/dof of the vector).
inline std::ostream& operator<<(std::ostream& os, const vector_result& r) {
  for (int i = 0; i < r.components; ++i) os << '[' << i << "] " << format_with_error(r.estimate[i], r.error[i]) << '\n';
  return os << '(' << to_string(r.status()) << "; " << r.run.iterations << " iterations, chi2/dof of the vector "
            << detail::short_g(r.chi2_dof_vector) << " (dof " << r.dof_vector << "), Q " << detail::short_g(r.q_vector) << ')';
}

/// The header line of the full table of iterations: the command's report prints it, its rows
/// (iteration_row) as the iterations complete and the legend (iteration_table_legend); summary(r,
/// true) and Python's Result.summary(extended=True) are the same table.
inline std::string iteration_table_header() {
  char line[128];
  std::snprintf(line, sizeof line, "%4s %-5s %18s %11s %18s %11s %10s %9s %10s\n", "iter", "flags", "estimate", "error",
                "weighted est.", "weighted err", "chi2/dof", "Q", "time [s]");
  return line;
}

/// One row of the full table: index, flags (a adapted, * accumulated, r rescaled, o overflow
/// levels, u underflow), estimate, error, the weighted estimate and error so far, chi2/dof and Q
/// ("-" before the first accumulated iteration), seconds.
inline std::string iteration_row(const iteration_record& it) {
  const char flags[6] = {it.adapted ? 'a' : '-', it.accumulated ? '*' : '-', it.rescaled ? 'r' : '-',
                         it.top_bin_level > 0 ? 'o' : '-', it.underflow ? 'u' : '-', '\0'};
  char line[192];
  if (std::isnan(it.weighted_estimate))
    std::snprintf(line, sizeof line, "%4d %-5s %18.10g %11.4g %18s %11s %10s %9s %10.4f\n", it.index, flags, it.estimate,
                  it.error, "-", "-", "-", "-", it.seconds);
  else
    std::snprintf(line, sizeof line, "%4d %-5s %18.10g %11.4g %18.10g %11.4g %10.4g %9.3g %10.4f\n", it.index, flags,
                  it.estimate, it.error, it.weighted_estimate, it.weighted_error, it.chi2_dof, it.q, it.seconds);
  return line;
}

/// The legend of the full table's flags.
inline std::string iteration_table_legend() {
  return "flags: a = map adapted with this iteration's samples, * = accumulated in the weighted estimate, "
         "r = bin contributions re-accumulated with a new scale, o = bin contributions beyond the scale's "
         "range kept in overflow levels, u = estimate below 2^-460 (underflow, left out); "
         "- in the weighted columns: nothing accumulated yet\n";
}

/// The table of iterations, as vegas's `Integrator.summary()`: per iteration its estimate,
/// the weighted average so far, chi2/dof and Q, with `-` for an iteration that was not
/// accumulated (skipped, all zero, or underflow) and `a` after the index of one that adapted the
/// map; then a blank line and the result's line ("result: " and operator<<). With `extended`, the
/// full table of the command's report instead (iteration_table_header, iteration_row,
/// iteration_table_legend), then the same result line. The one implementation of the table:
/// the command and Python's Result.summary() print these strings.
inline std::string summary(const result& r, bool extended = false) {
  std::ostringstream os;
  if (extended) {
    os << iteration_table_header();
    for (const iteration_record& it : r.records) os << iteration_row(it);
    os << iteration_table_legend() << "\nresult: " << r << '\n';
    return os.str();
  }
  os << "itn   integral             wgt average          chi2/dof   Q\n";
  os << "------------------------------------------------------------------\n";
  for (const iteration_record& it : r.records) {
    char idx[16];
    std::snprintf(idx, sizeof idx, "%d%s", it.index + 1, it.adapted ? "a" : "");
    char line[160];
    const std::string here = format_with_error(it.estimate, it.error);
    const std::string avg =
        std::isfinite(it.weighted_estimate) ? format_with_error(it.weighted_estimate, it.weighted_error) : std::string("-");
    std::snprintf(line, sizeof line, "%-5s %-20s %-20s %-10s %s%s\n", idx, here.c_str(), avg.c_str(),
                  std::isfinite(it.chi2_dof) ? detail::short_g(it.chi2_dof).c_str() : "-",
                  std::isfinite(it.q) ? detail::short_g(it.q).c_str() : "-", it.accumulated ? "" : "  (not accumulated)");
    os << line;
  }
  os << "\nresult: " << r << '\n';
  return os.str();
}

}  // namespace mcubes

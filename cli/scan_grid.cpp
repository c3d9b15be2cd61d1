/// @file cli/scan_grid.cpp
/// The parameter grid of `mcubes scan` (scan_grid.hpp).
#include "scan_grid.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <limits>

#include <mcubes/error.hpp>

#include "parse.hpp"

namespace mcubes::cli {

double scan_range::value(std::uint64_t i) const {
  if (i == 0) return start;
  if (count <= 1 || i + 1 >= count) return stop;
  const long double v = static_cast<long double>(start) +
                        (static_cast<long double>(stop) - start) * static_cast<long double>(i) / static_cast<long double>(count - 1);
  double out = static_cast<double>(v);
  // Rounded to 15 significant digits of the range's scale: 0.2:0.8:7 gives 0.3, not 0.30000000000000004.
  const double scale = std::max(std::fabs(start), std::fabs(stop));
  const int decimals = 14 - static_cast<int>(std::floor(std::log10(scale)));
  if (scale > 0 && decimals >= 0 && decimals <= 320) {
    char buf[512];
    std::snprintf(buf, sizeof buf, "%.*Lf", decimals, v);
    out = std::strtod(buf, nullptr);
  }
  if (out == 0) out = 0.0;  // never -0
  return std::min(stop, std::max(start, out));
}

std::vector<double> scan_grid::point(std::uint64_t k) const {
  std::vector<double> values = defaults;
  for (std::size_t j = ranges.size(); j-- > 0;) {  // the last range varies fastest
    const scan_range& r = ranges[j];
    values[r.parameter] = r.value(k % r.count);
    k /= r.count;
  }
  return values;
}

std::string scan_grid::describe() const {
  if (ranges.empty()) return "no --param: one point at the defaults";
  std::string s;
  for (const scan_range& r : ranges) {
    s += s.empty() ? "" : " x ";
    if (r.count == 1)
      s += r.name + " = " + suite::detail::number_text(r.start);
    else
      s += r.name + ": " + std::to_string(r.count) + " values in [" + suite::detail::number_text(r.start) + ", " +
           suite::detail::number_text(r.stop) + "]";
  }
  return s;
}

scan_grid parse_scan_grid(const std::vector<std::string>& texts, const suite::entry& e) {
  scan_grid g;
  g.entry = &e;
  g.defaults = e.default_values();
  std::string names;
  for (const suite::parameter& p : e.parameters) names += std::string(names.empty() ? "" : ", ") + p.name;
  const double big = std::numeric_limits<double>::max();
  for (const std::string& text : texts) {
    const std::size_t eq = text.find('=');
    MCUBES_EXPECTS(eq != std::string::npos && eq > 0,
                   "--param must be NAME=VALUE or NAME=START:STOP:COUNT (e.g. u=0:1:11), got '", text, "'");
    scan_range r;
    r.name = text.substr(0, eq);
    r.text = text;
    MCUBES_EXPECTS(!e.parameters.empty(), "--param ", r.name, ": integrand ", e.name, " has no parameters");
    while (r.parameter < e.parameters.size() && r.name != e.parameters[r.parameter].name) ++r.parameter;
    MCUBES_EXPECTS(r.parameter < e.parameters.size(), "--param: integrand ", e.name, " has no parameter '", r.name,
                   "' (its parameters: ", names, ")");
    for (const scan_range& earlier : g.ranges)
      MCUBES_EXPECTS(earlier.parameter != r.parameter, "--param ", r.name, " given twice");
    const std::string value = text.substr(eq + 1);
    const std::size_t c1 = value.find(':');
    if (c1 == std::string::npos) {  // NAME=V
      r.start = r.stop = parse_real(value, "--param " + r.name, -big, big);
      r.count = 1;
    } else {
      const std::size_t c2 = value.find(':', c1 + 1);
      MCUBES_EXPECTS(c2 != std::string::npos && value.find(':', c2 + 1) == std::string::npos, "--param ", r.name,
                     " must be ", r.name, "=VALUE or ", r.name, "=START:STOP:COUNT (e.g. ", r.name,
                     "=0:1:11), got '", text, "'");
      r.start = parse_real(value.substr(0, c1), "--param " + r.name + " START", -big, big);
      r.stop = parse_real(value.substr(c1 + 1, c2 - c1 - 1), "--param " + r.name + " STOP", -big, big);
      r.count = parse_count(value.substr(c2 + 1), "--param " + r.name + " COUNT");
      MCUBES_EXPECTS(r.count >= 1, "--param ", text, ": COUNT must be at least 1 (COUNT 0 gives no integrals)");
      MCUBES_EXPECTS(r.start <= r.stop, "--param ", text, ": the range is reversed (START ",
                     suite::detail::number_text(r.start), " is above STOP ", suite::detail::number_text(r.stop),
                     "); write it upwards, START <= STOP");
      MCUBES_EXPECTS(r.count > 1 || r.start == r.stop, "--param ", text,
                     ": COUNT 1 is one value and needs START == STOP (write ", r.name, "=VALUE for one value)");
    }
    if (r.count > max_scan_integrals || g.size > max_scan_integrals / r.count)
      mcubes::detail::throw_invalid("the grid has more than ", max_scan_integrals, " points (K = the product of the "
                                    "COUNTs); a scan takes at most that many integrals");
    g.size *= r.count;
    g.ranges.push_back(r);
  }
  return g;
}

std::vector<std::vector<double>> check_scan_points(const scan_grid& grid, int dim, std::vector<double>& exact) {
  std::vector<std::vector<double>> points(grid.size);
  exact.assign(grid.size, 0.0);
  for (std::uint64_t k = 0; k < grid.size; ++k) {
    points[k] = grid.point(k);
    try {
      exact[k] = grid.entry->exact_at(dim, points[k]);
    } catch (const invalid_input& ex) {
      throw invalid_input("grid point " + std::to_string(k) + " (" + suite::params_text(*grid.entry, points[k]) +
                          "): " + ex.what());
    }
  }
  return points;
}

}  // namespace mcubes::cli

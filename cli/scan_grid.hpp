#pragma once
/// @file cli/scan_grid.hpp
/// The parameter grid of `mcubes scan`: the --param options read into ranges, the grid they span
/// and its points, in a fixed order. Host code, no numerics beyond the spacing of the values.
///
/// Grammar (one --param per parameter, at most once each):
///   NAME=V                  one value (a finite real, cli/parse.hpp);
///   NAME=START:STOP:COUNT   COUNT >= 1 values from START to STOP inclusive, linearly spaced:
///                           v_0 = START, v_{COUNT-1} = STOP exactly, and in between
///                           v_i = START + (STOP - START) i/(COUNT - 1) (in long double) rounded to
///                           15 significant digits of max(|START|, |STOP|), so that 0.2:0.8:7 gives
///                           0.3 and not 0.30000000000000004. START <= STOP (a reversed range is refused);
///                           COUNT = 1 needs START == STOP (it is the one value V); START == STOP
///                           with COUNT > 1 repeats the point COUNT times (independent seeds: a check
///                           of the reported errors).
/// The grid is the product of the ranges in the order the options are given, the last varying
/// fastest: point k has index i_j = (k / (n_{j+1} ... n_m)) mod n_j in range j. Parameters not given
/// keep their defaults (the paper's values). K = n_1 ... n_m (1 when no --param is given).

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include <mcubes/suite.hpp>

namespace mcubes::cli {

/// One --param of a scan: a parameter and its values.
struct scan_range {
  std::size_t parameter = 0;  ///< index in entry.parameters
  std::string name;           ///< its name ("a", "u")
  std::string text;           ///< the option's value as given ("u=0:1:11")
  double start = 0, stop = 0; ///< first and last value (equal for NAME=V)
  std::uint64_t count = 1;    ///< number of values, >= 1
  /// Value i (0 <= i < count): start, then start + (stop - start) i/(count - 1) rounded to 15
  /// significant digits of the range's scale (file comment), the last one exactly stop; always in
  /// [start, stop].
  double value(std::uint64_t i) const;
};

/// The grid of a scan over the parameters of one suite integrand.
struct scan_grid {
  const suite::entry* entry = nullptr;
  std::vector<scan_range> ranges;  ///< in command-line order (the last varies fastest)
  std::vector<double> defaults;    ///< every parameter's value where no range is given (entry order)
  std::uint64_t size = 1;          ///< K, the number of points (product of the counts)
  /// The parameter values of point k (0 <= k < size), in the order of entry->parameters.
  std::vector<double> point(std::uint64_t k) const;
  /// "a: 3 values in [5, 10] x u: 4 values in [0.2, 0.8]"; "no --param: the defaults" when empty.
  std::string describe() const;
};

/// Most integrals one scan takes (K); memory refuses most grids well before it.
inline constexpr std::uint64_t max_scan_integrals = 10000000;

/// Reads the --param texts of a scan of integrand `e` into its grid (the values are not yet
/// checked against the integrand's ranges: check_scan_points does that).
/// @throws invalid_input (one line naming the option) for a malformed text or number, an unknown
///         or repeated parameter, a parameter for an integrand without parameters, a reversed
///         range, COUNT = 0 (no integrals), COUNT = 1 with START != STOP, or K > max_scan_integrals.
scan_grid parse_scan_grid(const std::vector<std::string>& texts, const suite::entry& e);

/// The parameter values of every point of the grid (point k at k) and their exact values in
/// dimension dim (suite::entry::exact_at), checking each point as `mcubes integrate --param` does.
/// @throws invalid_input naming the first point the integrand rejects and the suite's reason.
std::vector<std::vector<double>> check_scan_points(const scan_grid& grid, int dim, std::vector<double>& exact);

}  // namespace mcubes::cli

#pragma once
/// @file map_io.hpp
/// Saving and loading an integrator's adaptive map as JSON (nlohmann-json), so that a map trained
/// once can be reused in another run or program (warm start) or kept with a result.
///
/// Format (version 1):
///   { "format": "mcubes adaptive map", "version": 1, "dim": D, "n_bins": n,
///     "region": { "lower": [a_0, ...], "upper": [b_0, ...] },
///     "edges": [[e_00, ..., e_0n], ..., [e_(D-1)0, ...]],       unit coordinates, one row per axis
///     "next_iteration": k, "reference": r }                   where the run stands (vegas_state)
/// Doubles are written in the shortest form that reads back to the same double (nlohmann-json's
/// number output), so save then load gives the same bits: the loaded integrator draws exactly the
/// samples the saved one would have drawn next.
///
/// Files are replaced atomically (atomic_file.hpp): an interrupted save leaves the old file or the
/// new one, never a part; a symbolic link's final target is replaced (the link stays), a character
/// device or a FIFO is written straight through, a directory or a socket is refused.
/// Include this header explicitly (it needs nlohmann/json.hpp, Debian nlohmann-json3-dev).

#include <nlohmann/json.hpp>

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <sstream>
#include <string>
#include <type_traits>
#include <vector>

#include "algorithm/vegas.hpp"
#include "atomic_file.hpp"
#include "core/adaptive_map.hpp"
#include "error.hpp"

namespace mcubes {

/// The JSON document of an integrator's map (format above).
template <class Integrator>
nlohmann::json map_to_json(const Integrator& integ) {
  const auto& reg = integ.region();
  constexpr int D = std::decay_t<decltype(reg)>::dim;
  const std::vector<double> e = integ.edges();
  const int n = integ.n_bins();
  nlohmann::json j;
  j["format"] = "mcubes adaptive map";
  j["version"] = 1;
  j["dim"] = D;
  j["n_bins"] = n;
  std::vector<double> lo(D), hi(D);
  for (int a = 0; a < D; ++a) {
    lo[a] = reg.lower()[a];
    hi[a] = reg.upper()[a];
  }
  j["region"] = {{"lower", lo}, {"upper", hi}};
  nlohmann::json rows = nlohmann::json::array();
  for (int a = 0; a < D; ++a)
    rows.push_back(std::vector<double>(e.begin() + static_cast<std::ptrdiff_t>(a) * (n + 1),
                                       e.begin() + static_cast<std::ptrdiff_t>(a + 1) * (n + 1)));
  j["edges"] = rows;
  j["next_iteration"] = integ.state().next_iteration;
  j["reference"] = integ.state().reference;
  return j;
}

/// Sets an integrator's map and state from a document of map_to_json. The dimension and n_bins
/// must be the integrator's; the region may differ (a map is in unit coordinates), which is how a
/// map warm-starts a similar problem. `with_state` = false keeps the integrator's iteration index.
/// @throws invalid_input naming what is missing or wrong (format, dim, n_bins, an edge).
template <class Integrator>
void map_from_json(Integrator& integ, const nlohmann::json& j, bool with_state = true) {
  constexpr int D = std::decay_t<decltype(integ.region())>::dim;
  try {
    MCUBES_EXPECTS(j.at("format").get<std::string>() == "mcubes adaptive map" && j.at("version").get<int>() == 1,
                   "not an mcubes adaptive map of version 1");
    const int dim = j.at("dim").get<int>(), n = j.at("n_bins").get<int>();
    MCUBES_EXPECTS(dim == D, "the map has dimension ", dim, ", the integrator ", D);
    MCUBES_EXPECTS(n == integ.n_bins(), "the map has ", n, " bins per axis, the integrator ", integ.n_bins());
    const auto& rows = j.at("edges");
    MCUBES_EXPECTS(rows.is_array() && rows.size() == static_cast<std::size_t>(D), "the map needs ", D, " rows of edges");
    std::vector<double> e;
    e.reserve(static_cast<std::size_t>(D) * (n + 1));
    for (const auto& row : rows) {
      MCUBES_EXPECTS(row.is_array() && row.size() == static_cast<std::size_t>(n) + 1, "every row of edges needs ", n + 1,
                     " numbers");
      for (const auto& v : row) e.push_back(v.get<double>());
    }
    check_map_edges(e, D, n);
    vegas_state s = integ.state();
    if (with_state) {
      s.next_iteration = j.at("next_iteration").get<int>();
      s.reference = j.at("reference").get<double>();
    }
    integ.set_edges(e);
    integ.set_state(s);
  } catch (const nlohmann::json::exception& ex) {
    throw invalid_input(std::string("adaptive map: ") + ex.what());
  }
}

/// Writes the integrator's map to `path` (format above), replacing the file (or a link's final
/// target) atomically and durably, or straight through to a character device or FIFO
/// (write_file_atomically, atomic_file.hpp).
/// @throws unwritable_output (an invalid_input) for a directory, a socket, a block device or a
///         link chain too long; error if the file cannot be written (with the path and the reason).
template <class Integrator>
void save_map(const Integrator& integ, const std::string& path) {
  write_file_atomically(path, map_to_json(integ).dump(1) + "\n", true);
}

/// Reads a map saved by save_map into the integrator (map_from_json).
/// @throws invalid_input for a file that cannot be read or parsed (naming it), or a map that does
///         not fit the integrator.
template <class Integrator>
void load_map(Integrator& integ, const std::string& path, bool with_state = true) {
  std::ifstream in(path);
  MCUBES_EXPECTS(static_cast<bool>(in), "cannot read the adaptive map file ", path);
  nlohmann::json j;
  try {
    in >> j;
  } catch (const nlohmann::json::exception& ex) {
    throw invalid_input(path + ": not JSON (" + ex.what() + ")");
  }
  map_from_json(integ, j, with_state);
}

}  // namespace mcubes

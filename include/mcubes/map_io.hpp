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
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <limits>
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

namespace detail {
/// A JSON value as text for a message: at most 40 characters ("..." at the end).
inline std::string map_value_text(const nlohmann::json& v) {
  const std::string s = v.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
  return s.size() <= 40 ? s : s.substr(0, 37) + "...";
}
/// Member `key` of a map document as an int in [lo, hi]: a JSON integer ("3", not "3.0", "3.9" or
/// "1e10"), checked before any conversion. @throws invalid_input naming the key and the value.
inline int map_integer(const nlohmann::json& j, const char* key, long long lo, long long hi) {
  const nlohmann::json& v = j.at(key);
  bool ok = false;
  long long x = 0;
  if (v.is_number_unsigned()) {
    const auto u = v.get<std::uint64_t>();
    ok = u <= static_cast<std::uint64_t>(hi);
    if (ok) x = static_cast<long long>(u);
  } else if (v.is_number_integer()) {
    x = v.get<std::int64_t>();
    ok = x <= hi;
  }
  if (!(ok && x >= lo))
    throw_invalid("adaptive map: \"", key, "\" must be an integer in [", lo, ", ", hi, "], got ", map_value_text(v));
  return static_cast<int>(x);
}
/// Member `key` (or element) `v` of a map document as a finite double: a JSON number.
/// @throws invalid_input naming `what` and the value.
inline double map_number(const nlohmann::json& v, const std::string& what) {
  if (!v.is_number() || !std::isfinite(v.get<double>()))
    throw_invalid("adaptive map: ", what, " must be a finite number, got ", map_value_text(v));
  return v.get<double>();
}
}  // namespace detail

/// Sets an integrator's map and state from a document of map_to_json. The dimension and n_bins
/// must be the integrator's; the region may differ (a map is in unit coordinates), which is how a
/// map warm-starts a similar problem. `with_state` = false keeps the integrator's iteration index.
/// "version", "dim", "n_bins" and "next_iteration" must be JSON integers (not 3.0, 3.9 or 1e10) in
/// the range of int, "dim" >= 1, "n_bins" in [2, 2^20], "next_iteration" >= 0; the edges and
/// "reference" finite numbers.
/// @throws invalid_input naming what is missing or wrong (format, dim, n_bins, an edge).
template <class Integrator>
void map_from_json(Integrator& integ, const nlohmann::json& j, bool with_state = true) {
  constexpr int D = std::decay_t<decltype(integ.region())>::dim;
  constexpr long long int_max = std::numeric_limits<int>::max();
  try {
    MCUBES_EXPECTS(j.is_object(), "adaptive map: the document must be a JSON object, got ", j.type_name());
    MCUBES_EXPECTS(j.at("format").is_string() && j.at("format").get<std::string>() == "mcubes adaptive map" &&
                       detail::map_integer(j, "version", 0, int_max) == 1,
                   "not an mcubes adaptive map of version 1");
    const int dim = detail::map_integer(j, "dim", 1, int_max), n = detail::map_integer(j, "n_bins", 2, 1 << 20);
    MCUBES_EXPECTS(dim == D, "the map has dimension ", dim, ", the integrator ", D);
    MCUBES_EXPECTS(n == integ.n_bins(), "the map has ", n, " bins per axis, the integrator ", integ.n_bins());
    const auto& rows = j.at("edges");
    MCUBES_EXPECTS(rows.is_array() && rows.size() == static_cast<std::size_t>(D), "the map needs ", D, " rows of edges");
    std::vector<double> e;
    e.reserve(static_cast<std::size_t>(D) * (n + 1));
    for (const auto& row : rows) {
      MCUBES_EXPECTS(row.is_array() && row.size() == static_cast<std::size_t>(n) + 1, "every row of edges needs ", n + 1,
                     " numbers");
      for (const auto& v : row) e.push_back(detail::map_number(v, "edge " + std::to_string(e.size() % (n + 1)) +
                                                                      " of axis " + std::to_string(e.size() / (n + 1))));
    }
    check_map_edges(e, D, n);
    vegas_state s = integ.state();
    if (with_state) {
      s.next_iteration = detail::map_integer(j, "next_iteration", 0, int_max);
      s.reference = detail::map_number(j.at("reference"), "\"reference\"");
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
/// @throws invalid_input naming the path for a file that cannot be opened or read (a directory, a
///         missing or unreadable file: with the reason), that is not JSON, or a map that does not
///         fit the integrator or is malformed (map_from_json's message after the path).
template <class Integrator>
void load_map(Integrator& integ, const std::string& path, bool with_state = true) {
  std::string text;
  {
    errno = 0;
    std::FILE* f = std::fopen(path.c_str(), "rb");
    if (f == nullptr)
      throw invalid_input("cannot read the adaptive map file " + path + ": " + std::strerror(errno));
    char buf[1 << 16];
    std::size_t got;
    errno = 0;
    while ((got = std::fread(buf, 1, sizeof buf, f)) > 0) text.append(buf, got);
    const bool failed = std::ferror(f) != 0;  // e.g. EISDIR: a directory opens but cannot be read
    const int err = errno;
    std::fclose(f);
    if (failed)
      throw invalid_input("cannot read the adaptive map file " + path + ": " +
                          (err != 0 ? std::strerror(err) : "read error"));
  }
  nlohmann::json j;
  try {
    j = nlohmann::json::parse(text);
  } catch (const nlohmann::json::exception& ex) {
    throw invalid_input(path + ": not JSON (" + ex.what() + ")");
  }
  try {
    map_from_json(integ, j, with_state);
  } catch (const invalid_input& ex) {
    throw invalid_input(path + ": " + ex.what());
  }
}

}  // namespace mcubes

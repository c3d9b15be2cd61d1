// Loading an adaptive map (mcubes/map_io.hpp): the document's numbers are checked before any
// conversion (an integer field given as 3.9, 8.0 or 1e10; a count beyond int; a non-finite
// reference), and a path that cannot be read (a directory, a missing file) is an invalid_input
// naming the path and the reason.
#include <mcubes/map_io.hpp>
#include <mcubes/mcubes.hpp>

#include <gtest/gtest.h>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <limits>
#include <string>

#include <unistd.h>

namespace {

mcubes::vegas_options map_options() {
  mcubes::vegas_options o;
  o.n_bins = 8;
  o.threads = 1;
  return o;
}

// The message of the invalid_input that fn throws ("no exception" or the other type's otherwise).
template <class Fn>
std::string invalid_message(Fn&& fn) {
  try {
    fn();
  } catch (const mcubes::invalid_input& e) {
    return e.what();
  } catch (const std::exception& e) {
    return std::string("not invalid_input: ") + e.what();
  }
  return "no exception";
}

std::string temp_dir() {
  const std::string dir = (std::filesystem::temp_directory_path() / ("mcubes_map_load_" + std::to_string(::getpid()))).string();
  std::filesystem::create_directories(dir);
  return dir;
}

// A valid document of a 3-axis map with 8 bins (a fresh integrator's) and its state.
nlohmann::json valid_document() {
  const mcubes::integrator<3> a(mcubes::region<3>::unit(), map_options());
  return mcubes::map_to_json(a);
}

// map_from_json into a fresh 3-axis, 8-bin integrator with `key` set to `value`.
std::string load_with(const std::string& key, const nlohmann::json& value) {
  nlohmann::json j = valid_document();
  j[key] = value;
  mcubes::integrator<3> b(mcubes::region<3>::unit(), map_options());
  return invalid_message([&] { mcubes::map_from_json(b, j); });
}

TEST(MapLoad, IntegerFieldsMustBeJsonIntegersInRange) {
  EXPECT_EQ(load_with("dim", 3), "no exception");
  // 3.9 was read as 3 (and accepted), 1e10 converted to int (undefined behaviour)
  EXPECT_EQ(load_with("dim", 3.9), "adaptive map: \"dim\" must be an integer in [1, 2147483647], got 3.9");
  EXPECT_EQ(load_with("dim", 3.0), "adaptive map: \"dim\" must be an integer in [1, 2147483647], got 3.0");
  EXPECT_EQ(load_with("n_bins", 1e10), "adaptive map: \"n_bins\" must be an integer in [2, 1048576], got 10000000000.0");
  EXPECT_EQ(load_with("n_bins", 8.5), "adaptive map: \"n_bins\" must be an integer in [2, 1048576], got 8.5");
  EXPECT_EQ(load_with("n_bins", std::numeric_limits<std::uint64_t>::max()),
            "adaptive map: \"n_bins\" must be an integer in [2, 1048576], got 18446744073709551615");
  EXPECT_EQ(load_with("n_bins", -8), "adaptive map: \"n_bins\" must be an integer in [2, 1048576], got -8");
  EXPECT_EQ(load_with("n_bins", "8"), "adaptive map: \"n_bins\" must be an integer in [2, 1048576], got \"8\"");
  EXPECT_EQ(load_with("version", 1.5), "adaptive map: \"version\" must be an integer in [0, 2147483647], got 1.5");
  EXPECT_EQ(load_with("next_iteration", 2.5),
            "adaptive map: \"next_iteration\" must be an integer in [0, 2147483647], got 2.5");
  EXPECT_EQ(load_with("next_iteration", 1e300),
            "adaptive map: \"next_iteration\" must be an integer in [0, 2147483647], got 1e+300");
  EXPECT_EQ(load_with("next_iteration", 4294967296LL),
            "adaptive map: \"next_iteration\" must be an integer in [0, 2147483647], got 4294967296");
  EXPECT_EQ(load_with("next_iteration", 7), "no exception");
  EXPECT_EQ(load_with("reference", std::numeric_limits<double>::infinity()),
            "adaptive map: \"reference\" must be a finite number, got null");
  EXPECT_EQ(load_with("reference", "x"), "adaptive map: \"reference\" must be a finite number, got \"x\"");
  EXPECT_EQ(load_with("dim", std::string(100, 'x')),
            "adaptive map: \"dim\" must be an integer in [1, 2147483647], got \"" + std::string(36, 'x') + "...");
  nlohmann::json j = valid_document();
  j["edges"][1][3] = "0.4";
  mcubes::integrator<3> b(mcubes::region<3>::unit(), map_options());
  EXPECT_EQ(invalid_message([&] { mcubes::map_from_json(b, j); }),
            "adaptive map: edge 3 of axis 1 must be a finite number, got \"0.4\"");
}

TEST(MapLoad, FilesThatCannotBeReadNameThePath) {
  const std::string dir = temp_dir();
  mcubes::integrator<3> b(mcubes::region<3>::unit(), map_options());
  // a directory opens but cannot be read: was a raw std::ios_base::failure or a parse error
  EXPECT_EQ(invalid_message([&] { mcubes::load_map(b, dir); }),
            "cannot read the adaptive map file " + dir + ": Is a directory");
  EXPECT_EQ(invalid_message([&] { mcubes::load_map(b, dir + "/absent.json"); }),
            "cannot read the adaptive map file " + dir + "/absent.json: No such file or directory");
  // a file whose document is wrong: the path, then what is wrong
  const std::string path = dir + "/dim.json";
  nlohmann::json j = valid_document();
  j["dim"] = 3.9;
  std::ofstream(path) << j.dump();
  EXPECT_EQ(invalid_message([&] { mcubes::load_map(b, path); }),
            path + ": adaptive map: \"dim\" must be an integer in [1, 2147483647], got 3.9");
  std::ofstream(path) << "{";
  EXPECT_EQ(invalid_message([&] { mcubes::load_map(b, path); }).rfind(path + ": not JSON (", 0), 0u);
  std::ofstream(path) << valid_document().dump();
  EXPECT_EQ(invalid_message([&] { mcubes::load_map(b, path); }), "no exception");
  std::filesystem::remove_all(dir);
}

}  // namespace

// Checkpoints (checkpoint.hpp) and resumed runs (vegas_continue's vegas_resumption): a run resumed
// from the checkpoint of any iteration boundary, on another thread count, ends with the bits of the
// run never stopped; the file format round-trips and refuses truncated, damaged, newer and foreign
// checkpoints.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <string>
#include <vector>

#include "mcubes/checkpoint.hpp"
#include "mcubes/mcubes.hpp"
#include "support/results.hpp"

namespace {

struct peak3 {  // a peak off the grid: VEGAS+ moves samples, the map adapts
  double operator()(const mcubes::point<3>& x) const {
    double r2 = 2e-3;
    for (int j = 0; j < 3; ++j) r2 += (x[j] - 0.31) * (x[j] - 0.31);
    return 1.0 / r2;
  }
};

mcubes::vegas_options run_options(mcubes::stratification_mode mode) {
  mcubes::vegas_options o;
  o.calls_per_iteration = 30000;
  o.max_iterations = 9;
  o.adapt_iterations = 5;
  o.skip = 2;
  o.min_iterations = 3;
  o.rel_tol = 1e-9;  // every iteration runs
  o.stratification = mode;
  o.seed = 17;
  return o;
}

// One run from a uniform map on `threads` CPU threads, resumed from `from` when given; `saved`
// collects the progress at every boundary and at the end.
mcubes::result run(const mcubes::vegas_options& o, int threads, const mcubes::vegas_progress* from,
                   std::vector<mcubes::vegas_progress>* saved) {
  mcubes::cpu_backend backend(threads);
  auto map = backend.make_map<3>(mcubes::map_bins_for(o));
  mcubes::vegas_state state;
  mcubes::cube_shares<mcubes::cpu_backend> shares;
  mcubes::vegas_resumption r;
  r.from = from;
  if (saved != nullptr)
    r.save = [saved](const std::function<mcubes::vegas_progress()>& progress, bool) { saved->push_back(progress()); };
  return mcubes::vegas_continue<3>(peak3{}, mcubes::region<3>::unit(), o, backend, map, state, shares, {}, r);
}

mcubes::checkpoint make_checkpoint(const mcubes::vegas_options& o, const mcubes::vegas_progress& p) {
  mcubes::checkpoint c;
  c.integrand = "peak3";
  c.dim = 3;
  c.lower = {0, 0, 0};
  c.upper = {1, 1, 1};
  c.options = o;
  c.progress = p;
  return c;
}

TEST(Checkpoint, AResumedRunEndsWithTheBitsOfTheUninterruptedOne) {
  for (auto mode : {mcubes::stratification_mode::adaptive, mcubes::stratification_mode::uniform}) {
    SCOPED_TRACE(mcubes::to_string(mode));
    const mcubes::vegas_options o = run_options(mode);
    std::vector<mcubes::vegas_progress> saved;
    const mcubes::result whole = run(o, 2, nullptr, &saved);
    ASSERT_EQ(whole.iterations, 9);
    ASSERT_EQ(saved.size(), 9u);  // 8 boundaries and the end
    if (mode == mcubes::stratification_mode::adaptive) {
      EXPECT_FALSE(saved[5].shares.empty());
    }
    for (std::size_t k = 0; k < saved.size(); ++k) {
      SCOPED_TRACE(testing::Message() << "resumed after " << saved[k].records.size() << " iterations");
      EXPECT_EQ(saved[k].records.size(), std::min<std::size_t>(k + 1, 9));
      // through the file format, on another thread count
      const std::string bytes = mcubes::encode_checkpoint(make_checkpoint(o, saved[k]));
      const mcubes::checkpoint c = mcubes::decode_checkpoint(bytes, "test");
      EXPECT_EQ(mcubes::encode_checkpoint(c), bytes);
      EXPECT_EQ(mcubes::checkpoint_difference(c, "peak3", 3, {0, 0, 0}, {1, 1, 1}, o, false), "");
      const mcubes::result resumed = run(c.options, 3, &c.progress, nullptr);
      mcubes_test::expect_same_result(whole, resumed);
    }
  }
}

TEST(Checkpoint, DamagedTruncatedNewerAndForeignFilesAreRefused) {
  const mcubes::vegas_options o = run_options(mcubes::stratification_mode::adaptive);
  std::vector<mcubes::vegas_progress> saved;
  run(o, 2, nullptr, &saved);
  const std::string bytes = mcubes::encode_checkpoint(make_checkpoint(o, saved[4]));
  const auto refused = [](const std::string& b, const std::string& fragment) {
    try {
      mcubes::decode_checkpoint(b, "f");
      ADD_FAILURE() << "accepted; expected: " << fragment;
    } catch (const mcubes::invalid_input& e) {
      EXPECT_NE(std::string(e.what()).find(fragment), std::string::npos) << e.what();
    }
  };
  for (std::size_t cut : {std::size_t(0), std::size_t(5), std::size_t(12), bytes.size() / 2, bytes.size() - 1})
    refused(bytes.substr(0, cut), cut < 8 ? "not an mcubes checkpoint" : cut < 16 ? "truncated" : "checksum");
  for (std::size_t at : {std::size_t(20), bytes.size() / 3, bytes.size() - 6}) {
    std::string b = bytes;
    b[at] = static_cast<char>(b[at] ^ 0x10);
    refused(b, "checksum");
  }
  std::string newer = bytes.substr(0, bytes.size() - 4);
  newer[8] = 2;  // format version 2, with its own valid checksum
  const std::uint32_t crc = mcubes::detail::checkpoint_crc(newer.data(), newer.size());
  for (int i = 0; i < 4; ++i) newer.push_back(static_cast<char>((crc >> (8 * i)) & 0xff));
  refused(newer, "newer mcubes");
  refused("MCUBESXX" + bytes.substr(8), "not an mcubes checkpoint");

  const mcubes::checkpoint c = mcubes::decode_checkpoint(bytes, "f");
  const std::vector<double> lo{0, 0, 0}, hi{1, 1, 1};
  EXPECT_NE(mcubes::checkpoint_difference(c, "other", 3, lo, hi, o, false).find("integrand 'peak3'"), std::string::npos);
  EXPECT_NE(mcubes::checkpoint_difference(c, "peak3", 4, lo, hi, o, false).find("dimension 3"), std::string::npos);
  EXPECT_NE(mcubes::checkpoint_difference(c, "peak3", 3, lo, {1, 2, 1}, o, false).find("axis 1"), std::string::npos);
  mcubes::vegas_options seed = o;
  seed.seed = 18;
  EXPECT_NE(mcubes::checkpoint_difference(c, "peak3", 3, lo, hi, seed, true).find("seed is 17, not 18"), std::string::npos);
  mcubes::vegas_options longer = o;
  longer.max_iterations = 20;
  EXPECT_NE(mcubes::checkpoint_difference(c, "peak3", 3, lo, hi, longer, false).find("--force"), std::string::npos);
  EXPECT_EQ(mcubes::checkpoint_difference(c, "peak3", 3, lo, hi, longer, true), "");
  // a longer run continued from a checkpoint of the shorter: the same first iterations, then more
  const mcubes::result more = run(longer, 1, &c.progress, nullptr);
  EXPECT_EQ(more.iterations, 20);
  EXPECT_EQ(more.records[3].estimate, c.progress.records[3].estimate);
}

}  // namespace

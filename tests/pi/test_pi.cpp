// Monte Carlo pi on the CPU (algorithm/pi.hpp): the Philox implementation against Random123, the
// statistical bound, bitwise thread-count invariance of the hit count, and bad input.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>

#include <mcubes/mcubes.hpp>
#include <mcubes/random.hpp>

#include "support/bits.hpp"

namespace {

constexpr double pi_value = 3.141592653589793238462643383279502884;
constexpr double max_pull = 5.0;  ///< |estimate - pi| <= 5 standard errors

using mcubes_test::bits;

TEST(PiPhilox, RoundKeyPhiloxEqualsRandom123) {
  for (std::uint64_t seed : {std::uint64_t(0), std::uint64_t(20211231), ~std::uint64_t(0), std::uint64_t(0x123456789abcdefull)}) {
    const mcubes::philox_round_keys rk = mcubes::make_philox_round_keys(seed, mcubes::stream_id::pi);
    for (std::uint64_t j : {std::uint64_t(0), std::uint64_t(1), std::uint64_t(12345), std::uint64_t(1) << 32,
                            (std::uint64_t(1) << 61) + 7}) {
      const mcubes::philox_words w = mcubes::pi_pair_words(j, rk);
      const std::uint64_t c = j / mcubes::pi_chunk_pairs, k = j % mcubes::pi_chunk_pairs;  // the pi layout
      const auto r = mcubes::sample_stream(seed, mcubes::stream_id::pi, static_cast<std::uint32_t>(c), k)
                         .block(static_cast<std::uint32_t>(c >> 32));
      for (int i = 0; i < 4; ++i) EXPECT_EQ(w.v[i], r.v[i]) << "seed " << seed << " pair " << j << " word " << i;
    }
  }
}

TEST(PiPhilox, HitTestIsTheQuarterDisc) {
  // coordinates are ((w >> 8) | 1) 2^-24 in (0,1); the test is x^2 + y^2 <= 1
  EXPECT_EQ(mcubes::pi_hit(0u, 0u), 1u);
  EXPECT_EQ(mcubes::pi_hit(0xFFFFFFFFu, 0xFFFFFFFFu), 0u);
  EXPECT_EQ(mcubes::pi_hit(0xFFFFFFFFu, 0u), 1u);  // x = 1 - 2^-24, y = 2^-24
  EXPECT_GT(mcubes::pi_coordinate(0u), 0.0f);
  EXPECT_LT(mcubes::pi_coordinate(0xFFFFFFFFu), 1.0f);
  // x = y = 0.7071 (just inside) and 0.7072 (just outside)
  const auto word = [](double x) { return static_cast<std::uint32_t>(x * 4294967296.0); };
  EXPECT_EQ(mcubes::pi_hit(word(0.7071), word(0.7071)), 1u);
  EXPECT_EQ(mcubes::pi_hit(word(0.7072), word(0.7072)), 0u);
}

TEST(PiMonteCarlo, WithinFiveSigma) {
  for (std::uint64_t seed : {std::uint64_t(1), std::uint64_t(20211231)}) {
    mcubes::pi_options o;
    o.samples = 20000000;
    o.seed = seed;
    const mcubes::pi_mc_result r = mcubes::pi_monte_carlo(o);
    EXPECT_EQ(r.backend, "cpu");
    EXPECT_EQ(r.samples, o.samples);
    EXPECT_NEAR(r.error, 4 * std::sqrt(pi_value / 4 * (1 - pi_value / 4) / o.samples), 1e-6);
    EXPECT_LE(std::fabs(r.estimate - pi_value), max_pull * r.error) << "seed " << seed << ": " << r.estimate;
    EXPECT_EQ(r.estimate, 4.0 * static_cast<double>(r.hits) / static_cast<double>(r.samples));
  }
}

TEST(PiMonteCarlo, BitwiseIdenticalForAnyThreadCount) {
  mcubes::pi_options o;
  o.samples = 3000001;  // odd: the lone last sample is counted too
  o.seed = 7;
  o.threads = 1;
  const mcubes::pi_mc_result ref = mcubes::pi_monte_carlo(o);
  for (int t : {2, 3, 8}) {
    o.threads = t;
    const mcubes::pi_mc_result r = mcubes::pi_monte_carlo(o);
    EXPECT_EQ(r.hits, ref.hits) << t << " threads";
    EXPECT_EQ(bits(r.estimate), bits(ref.estimate)) << t << " threads";
    EXPECT_EQ(bits(r.error), bits(ref.error)) << t << " threads";
  }
}

TEST(PiMonteCarlo, CountsEverySampleOnceOddAndEven) {
  const mcubes::philox_round_keys rk = mcubes::make_philox_round_keys(99, mcubes::stream_id::pi);
  std::uint64_t expected = 0;  // serial reference: sample 2j from words 0,1, 2j+1 from words 2,3
  for (std::uint64_t k = 0; k < 2001; ++k) {
    const mcubes::philox_words w = mcubes::pi_pair_words(k / 2, rk);
    expected += (k % 2 == 0) ? mcubes::pi_hit(w.v[0], w.v[1]) : mcubes::pi_hit(w.v[2], w.v[3]);
    if (k + 1 == 2000 || k + 1 == 2001) {
      mcubes::pi_options o;
      o.samples = k + 1;
      o.seed = 99;
      o.threads = 3;
      EXPECT_EQ(mcubes::pi_monte_carlo(o).hits, expected) << "N = " << k + 1;
    }
  }
}

TEST(PiMonteCarlo, SeedsGiveDifferentStreams) {
  mcubes::pi_options a, b;
  a.samples = b.samples = 100000;
  a.seed = 1;
  b.seed = 2;
  EXPECT_NE(mcubes::pi_monte_carlo(a).hits, mcubes::pi_monte_carlo(b).hits);
}

TEST(PiMonteCarlo, MemoryAtTheMaximumSampleCountIsSmall) {
  // N = 2^62: 2^61 pairs in 2^49 chunks of 2^12; the CPU reduction holds a bounded number of
  // 64-bit counts, the same as for 2^20 chunks (a vector of tile results would hold 2^39, 4 TiB)
  EXPECT_EQ(mcubes::pi_chunks(mcubes::pi_max_samples), std::uint64_t(1) << 49);
  for (int t : {1, 16, 64}) {
    const std::uint64_t bytes = mcubes::cpu_tree_reduce_max_partials(mcubes::pi_chunks(mcubes::pi_max_samples), t) *
                                sizeof(std::uint64_t);
    EXPECT_LE(bytes, static_cast<std::uint64_t>(t) * 8500 + 600) << t << " threads";  // 8.5 kB a thread
    EXPECT_EQ(bytes, mcubes::cpu_tree_reduce_max_partials(std::uint64_t(1) << 20, t) * sizeof(std::uint64_t));
  }
  EXPECT_EQ(mcubes::pi_chunks(3), 1u);
  EXPECT_EQ(mcubes::pi_chunks(2 * mcubes::pi_chunk_pairs + 1), 1u);
  EXPECT_EQ(mcubes::pi_chunks(2 * mcubes::pi_chunk_pairs + 2), 2u);
}

TEST(PiMonteCarlo, BadInputIsRejected) {
  auto run = [](std::uint64_t n, int threads, int tpb) {
    mcubes::pi_options o;
    o.samples = n;
    o.threads = threads;
    o.cuda_threads_per_block = tpb;
    return mcubes::pi_monte_carlo(o);
  };
  EXPECT_THROW(run(0, 0, 256), mcubes::invalid_input);
  EXPECT_THROW(run(1, 0, 256), mcubes::invalid_input);
  EXPECT_THROW(run((std::uint64_t(1) << 62) + 1, 0, 256), mcubes::invalid_input);
  EXPECT_THROW(run(~std::uint64_t(0), 0, 256), mcubes::invalid_input);
  EXPECT_THROW(run(1000, -1, 256), mcubes::invalid_input);
  EXPECT_THROW(run(1000, 0, 48), mcubes::invalid_input);
  EXPECT_THROW(run(1000, 0, 2048), mcubes::invalid_input);
  mcubes::pi_options o;
  o.samples = 1000;
  o.backend = mcubes::backend_kind::cuda;  // this translation unit is not compiled by nvcc
  EXPECT_THROW(mcubes::pi_monte_carlo(o), mcubes::invalid_input);
  o.backend = mcubes::backend_kind::automatic;  // falls back to the CPU
  EXPECT_EQ(mcubes::pi_monte_carlo(o).backend, "cpu");
}

}  // namespace

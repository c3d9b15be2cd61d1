// Unit tests of random.hpp: Philox4x32-10 known answers and the sample_stream contract
// (seed, stream, iteration, index, draw) -> uniform double in (0,1).

#include <gtest/gtest.h>

#include <array>
#include <cmath>
#include <cstdint>
#include <random>
#include <set>
#include <utility>
#include <vector>

#include "mcubes/options.hpp"
#include "mcubes/backend/cpu.hpp"
#include "mcubes/random.hpp"

#include "support/bits.hpp"

namespace {

using u32 = std::uint32_t;
using u64 = std::uint64_t;

constexpr double max_sigmas = 5.0;

// Known-answer vectors of Philox4x32-10 from Random123's tests/kat_vectors (DEShawResearch/random123,
// lines "philox4x32 10 ..."; columns: counter[4], key[2], expected output[4], hex). The file is not
// shipped by Debian's librandom123-dev; these three lines were taken from the upstream file as
// quoted verbatim in several public repositories' test suites, and agree among them.
struct kat { u32 ctr[4]; u32 key[2]; u32 out[4]; };
constexpr kat philox_kats[] = {
    {{0x00000000, 0x00000000, 0x00000000, 0x00000000}, {0x00000000, 0x00000000},
     {0x6627e8d5, 0xe169c58d, 0xbc57ac4c, 0x9b00dbd8}},
    {{0xffffffff, 0xffffffff, 0xffffffff, 0xffffffff}, {0xffffffff, 0xffffffff},
     {0x408f276d, 0x41c83b0e, 0xa20bc7c6, 0x6d5451fd}},
    {{0x243f6a88, 0x85a308d3, 0x13198a2e, 0x03707344}, {0xa4093822, 0x299f31d0},
     {0xd16cfe09, 0x94fdcceb, 0x5001e420, 0x24126ea1}},
};

r123::Philox4x32::ctr_type philox(const u32 (&c)[4], const u32 (&k)[2]) {
  r123::Philox4x32::ctr_type ctr = {{c[0], c[1], c[2], c[3]}};
  r123::Philox4x32::key_type key = {{k[0], k[1]}};
  return r123::Philox4x32()(ctr, key);
}

// The documented conversion of one 32-bit word: (w + 1/2) 2^-32, exact, in (0,1).
double u01_reference(u32 w) { return (static_cast<double>(w) + 0.5) * std::ldexp(1.0, -32); }

using mcubes_test::same_bits;

TEST(Philox, KnownAnswers) {
  for (const auto& v : philox_kats) {
    const auto r = philox(v.ctr, v.key);
    for (int i = 0; i < 4; ++i) EXPECT_EQ(r.v[i], v.out[i]) << std::hex << "word " << i << " of ctr " << v.ctr[0];
  }
}

// The stream contract's layout: key = {seed mod 2^32, (seed >> 32) xor (stream << 24)},
// counter = {index mod 2^32, index >> 32, iteration, block}. The expected words come from the
// generator itself (verified above), applied to the documented counter and key.
TEST(SampleStream, CounterAndKeyLayout) {
  const u64 seeds[] = {0, mcubes::default_seed, 0x123456789abcdefull};
  const u64 indices[] = {0, 1, 0xffffffffull, 0x100000000ull, 0x0123456789abcdefull};
  for (u64 seed : seeds) {
    for (auto stream : {mcubes::stream_id::vegas, mcubes::stream_id::plain_mc, mcubes::stream_id::pi}) {
      for (u64 index : indices) {
        for (u32 iteration : {0u, 7u}) {
          for (u32 b : {0u, 1u, 16u}) {
            const u32 c[4] = {static_cast<u32>(index), static_cast<u32>(index >> 32), iteration, b};
            const u32 k[2] = {static_cast<u32>(seed), static_cast<u32>(seed >> 32) ^ (static_cast<u32>(stream) << 24)};
            const auto expected = philox(c, k);
            const auto got = mcubes::sample_stream(seed, stream, iteration, index).block(b);
            for (int i = 0; i < 4; ++i) ASSERT_EQ(got.v[i], expected.v[i]);
          }
        }
      }
    }
  }
  // Draw 4b + i comes from word i of block b.
  mcubes::sample_stream s(mcubes::default_seed, mcubes::stream_id::vegas, 3, 12345);
  double u[11];
  s.fill(u);
  for (int k = 0; k < 11; ++k) {
    const auto r = mcubes::sample_stream(mcubes::default_seed, mcubes::stream_id::vegas, 3, 12345).block(k / 4);
    EXPECT_TRUE(same_bits(u[k], u01_reference(r.v[k % 4]))) << "draw " << k;
  }
}

// philox_schedule (the key schedule precomputed, round 0 shared by the blocks; the CUDA kernels'
// generator) and philox_compact_schedule (round keys computed as it goes) give sample_stream's numbers bit for bit: every seed, stream, iteration, index
// (including indices >= 2^32) and number of draws (part of a block, several blocks).
template <int N>
void expect_schedule_matches(u64 seed, mcubes::stream_id stream, u32 iteration, u64 index) {
  double want[N], got[N];
  mcubes::sample_stream(seed, stream, iteration, index).fill(want);
  mcubes::philox_schedule::make(seed, stream, iteration).fill(index, got);
  for (int k = 0; k < N; ++k)
    ASSERT_TRUE(same_bits(got[k], want[k])) << "N " << N << " draw " << k << " seed " << seed << " iteration "
                                            << iteration << " index " << index;
  // the compact form (round keys computed as it goes; the parameter batch's generator)
  mcubes::philox_compact_schedule::make(seed, stream, iteration).fill(index, got);
  for (int k = 0; k < N; ++k)
    ASSERT_TRUE(same_bits(got[k], want[k])) << "compact: N " << N << " draw " << k << " seed " << seed << " iteration "
                                            << iteration << " index " << index;
}

TEST(PhiloxSchedule, SameNumbersAsSampleStream) {
  const u64 seeds[] = {0, 1, mcubes::default_seed, 0x123456789abcdefull, ~u64(0)};
  const u64 indices[] = {0, 1, 12345, 0xffffffffull, 0x100000000ull, 0x0123456789abcdefull, ~u64(0)};
  const u32 iterations[] = {0u, 1u, 7u, 0x80000000u, 0xffffffffu};
  for (u64 seed : seeds)
    for (auto stream : {mcubes::stream_id::vegas, mcubes::stream_id::plain_mc, mcubes::stream_id::pi})
      for (u32 it : iterations)
        for (u64 index : indices) {
          expect_schedule_matches<1>(seed, stream, it, index);
          expect_schedule_matches<3>(seed, stream, it, index);
          expect_schedule_matches<8>(seed, stream, it, index);
          expect_schedule_matches<9>(seed, stream, it, index);
          expect_schedule_matches<13>(seed, stream, it, index);
        }
  std::uint64_t state = 0x9E3779B97F4A7C15ull;  // and random inputs (splitmix64)
  auto next = [&state] {
    std::uint64_t z = (state += 0x9E3779B97F4A7C15ull);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
  };
  for (int i = 0; i < 20000; ++i) {
    const u64 seed = next(), index = next();
    const u32 it = static_cast<u32>(next());
    expect_schedule_matches<6>(seed, mcubes::stream_id::vegas, it, index);
    expect_schedule_matches<9>(seed, mcubes::stream_id::vegas, it, index);
  }
}

TEST(SampleStream, WordConversionIsInTheOpenInterval) {
  EXPECT_EQ(mcubes::sample_stream::to_double(0u), std::ldexp(1.0, -33));
  EXPECT_EQ(mcubes::sample_stream::to_double(0xffffffffu), 1.0 - std::ldexp(1.0, -33));
  EXPECT_LT(mcubes::sample_stream::to_double(0xffffffffu), 1.0);
  EXPECT_EQ(mcubes::sample_stream::to_double(0x80000000u), 0.5 + std::ldexp(1.0, -33));
  for (u32 w : {0u, 1u, 0x7ffu, 0x800u, 0x7fffffffu, 0xdeadbeefu, 0xfffffffeu, 0xffffffffu})
    EXPECT_TRUE(same_bits(mcubes::sample_stream::to_double(w), u01_reference(w))) << w;
}

// fill<N> and fill<M> agree on their common prefix, for N, M = 1..33 (N not a multiple of 4 uses
// part of the last block).
template <int N>
std::vector<double> draws(u64 seed, mcubes::stream_id stream, u32 iteration, u64 index) {
  double u[N];
  mcubes::sample_stream(seed, stream, iteration, index).fill(u);
  return std::vector<double>(u, u + N);
}

template <int... N>
std::vector<std::vector<double>> all_prefixes(std::integer_sequence<int, N...>, u64 seed, u32 iteration, u64 index) {
  return {draws<N + 1>(seed, mcubes::stream_id::vegas, iteration, index)...};
}

TEST(SampleStream, FillPrefixesAgree) {
  for (u64 index : {u64(0), u64(99), u64(1) << 40}) {
    const auto all = all_prefixes(std::make_integer_sequence<int, 33>{}, 77, 2, index);
    ASSERT_EQ(all.size(), 33u);
    const auto& longest = all.back();
    for (std::size_t n = 0; n < all.size(); ++n) {
      ASSERT_EQ(all[n].size(), n + 1);
      for (std::size_t i = 0; i <= n; ++i) ASSERT_TRUE(same_bits(all[n][i], longest[i])) << "N = " << n + 1 << ", i = " << i;
    }
    for (double u : longest) {
      EXPECT_GT(u, 0.0);
      EXPECT_LT(u, 1.0);
    }
    // The 33 draws of one sample are distinct.
    EXPECT_EQ(std::set<double>(longest.begin(), longest.end()).size(), longest.size());
  }
}

TEST(SampleStream, DistinctForDifferentInputs) {
  // Every combination gives different first four draws (one Philox block, 128 random bits): no two
  // of the streams coincide. Seeds stay below 2^56, where (seed >> 32) xor (stream << 24) is
  // one-to-one; the contract only separates streams for one seed.
  const u64 seeds[] = {0, 1, 2, mcubes::default_seed, u64(1) << 32, (u64(1) << 32) + 1, (u64(1) << 55) - 1};
  const mcubes::stream_id streams[] = {mcubes::stream_id::vegas, mcubes::stream_id::plain_mc, mcubes::stream_id::pi,
                                       mcubes::stream_id::probe};
  const u32 iterations[] = {0, 1, 2, 1000};
  const u64 indices[] = {0, 1, 2, 3, 1000, 0xffffffffull, 0x100000000ull, 0x100000001ull, ~u64(0)};
  std::set<std::array<double, 4>> seen;
  std::size_t total = 0;
  for (u64 seed : seeds)
    for (auto stream : streams)
      for (u32 it : iterations)
        for (u64 index : indices) {
          double u[4];
          mcubes::sample_stream(seed, stream, it, index).fill(u);
          seen.insert({u[0], u[1], u[2], u[3]});
          ++total;
        }
  EXPECT_EQ(seen.size(), total);
}

TEST(SampleStream, MeanAndVarianceOfAMillionDraws) {
  constexpr int n_samples = 250000, per_sample = 4;
  constexpr double n = static_cast<double>(n_samples) * per_sample;
  double sum = 0, sum2 = 0, lo = 1, hi = 0;
  for (int i = 0; i < n_samples; ++i) {
    double u[per_sample];
    mcubes::sample_stream(mcubes::default_seed, mcubes::stream_id::vegas, 0, static_cast<u64>(i)).fill(u);
    for (double x : u) {
      sum += x;
      sum2 += x * x;
      lo = std::fmin(lo, x);
      hi = std::fmax(hi, x);
    }
  }
  const double mean = sum / n;
  const double var = sum2 / n - mean * mean;
  // sd of the mean: sqrt(1/12/n); sd of the sample variance: sqrt((mu4 - sigma^4)/n), mu4 = 1/80.
  EXPECT_NEAR(mean, 0.5, max_sigmas * std::sqrt(1.0 / 12 / n));
  EXPECT_NEAR(var, 1.0 / 12, max_sigmas * std::sqrt((1.0 / 80 - 1.0 / 144) / n));
  EXPECT_GT(lo, 0.0);
  EXPECT_LT(hi, 1.0);
  EXPECT_LT(lo, 1e-4);       // the draws reach near both ends
  EXPECT_GT(hi, 1 - 1e-4);
}

}  // namespace

// The one Philox round function (random.hpp: philox_round, philox4x32_10) gives Random123's
// Philox4x32-10 for any counter and key; the CPU fast path's batch generator (the SSE2 / AVX2 /
// scalar forms of backend/cpu.hpp, whichever this CPU runs) gives sample_stream's numbers bit for
// bit, for indices that cross 2^32 and dimensions that need several Philox blocks.
TEST(PhiloxRound, Philox4x32_10IsRandom123) {
  std::mt19937_64 rng(42);
  for (int t = 0; t < 2000; ++t) {
    const u64 seed = rng();
    const auto stream = static_cast<mcubes::stream_id>(1 + t % 4);
    const u32 c[4] = {static_cast<u32>(rng()), static_cast<u32>(rng()), static_cast<u32>(rng()), static_cast<u32>(rng())};
    const mcubes::philox_round_keys rk = mcubes::make_philox_round_keys(seed, stream);
    const mcubes::philox_words got = mcubes::philox4x32_10(mcubes::philox_words{{c[0], c[1], c[2], c[3]}}, rk);
    const u32 k[2] = {static_cast<u32>(seed), static_cast<u32>(seed >> 32) ^ (static_cast<u32>(stream) << 24)};
    const auto want = philox(c, k);
    for (int w = 0; w < 4; ++w) ASSERT_EQ(got.v[w], want.v[w]) << "trial " << t << " word " << w;
  }
}

template <int D>
void expect_batch_matches(u64 seed, u32 iteration, u64 first) {
  double u[D][mcubes::cpu_detail::batch];
  mcubes::cpu_detail::uniform_batch<D>(mcubes::make_philox_round_keys(seed, mcubes::stream_id::vegas), iteration, first, u);
#if MCUBES_CPU_AVX2_DISPATCH
  double v[D][mcubes::cpu_detail::batch];
  if (mcubes::cpu_detail::cpu_has_avx2()) {
    mcubes::cpu_detail::uniform_batch_avx2<D>(mcubes::make_philox_round_keys(seed, mcubes::stream_id::vegas), iteration, first, v);
  }
#endif
#if MCUBES_CPU_AVX512_DISPATCH
  // the AVX-512F form, for consecutive and for listed indices (the same numbers: listed = first + i)
  double w[D][mcubes::cpu_detail::batch], x[D][mcubes::cpu_detail::batch];
  std::uint64_t listed[mcubes::cpu_detail::batch];
  for (int i = 0; i < mcubes::cpu_detail::batch; ++i) listed[i] = first + static_cast<u64>(i);
  if (mcubes::cpu_detail::cpu_has_avx512()) {
    const auto key = mcubes::make_philox_round_keys(seed, mcubes::stream_id::vegas);
    mcubes::cpu_detail::uniform_batch_of_avx512<D>(key, iteration, mcubes::cpu_detail::consecutive_indices{first}, w);
    mcubes::cpu_detail::uniform_batch_of_avx512<D>(key, iteration, mcubes::cpu_detail::listed_indices{listed}, x);
  }
#endif
  for (int i = 0; i < mcubes::cpu_detail::batch; ++i) {
    double want[D];
    mcubes::sample_stream(seed, mcubes::stream_id::vegas, iteration, first + static_cast<u64>(i)).fill(want);
    for (int j = 0; j < D; ++j) {
      ASSERT_TRUE(same_bits(u[j][i], want[j])) << "D " << D << " sample " << first + i << " axis " << j;
#if MCUBES_CPU_AVX2_DISPATCH
      if (mcubes::cpu_detail::cpu_has_avx2()) {
        ASSERT_TRUE(same_bits(v[j][i], want[j])) << "AVX2: D " << D << " sample " << first + i << " axis " << j;
      }
#endif
#if MCUBES_CPU_AVX512_DISPATCH
      if (mcubes::cpu_detail::cpu_has_avx512()) {
        ASSERT_TRUE(same_bits(w[j][i], want[j])) << "AVX-512: D " << D << " sample " << first + i << " axis " << j;
        ASSERT_TRUE(same_bits(x[j][i], want[j])) << "AVX-512 listed: D " << D << " sample " << first + i << " axis " << j;
      }
#endif
    }
  }
}

TEST(PhiloxRound, CpuBatchFormsAreSampleStream) {
  for (u64 first : {u64(0), u64(12345), u64(0xffffffffull) - 20, ~u64(0) - 100}) {
    expect_batch_matches<1>(mcubes::default_seed, 0, first);
    expect_batch_matches<5>(7, 3, first);
    expect_batch_matches<9>(~u64(0), 0xffffffffu, first);
  }
}

// Unit tests of backend/cpu/simd.hpp: the forms of the map over a batch (the per-axis SSE2 or plain
// map_axis, the AVX2 map_axes_avx2_of and the AVX-512F map_axes_avx512_of) give bit for bit the same
// points, jacobians and bins. On a CPU with AVX-512F the fast path runs the AVX-512F form only, so
// the AVX2 form is compared here explicitly (the end-to-end comparison with the serial sampler is
// DeterminismCpu.FastPathEqualsSerialSampleChunk). A form the CPU lacks is left out and said so.

#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <random>
#include <string>
#include <vector>

#include "mcubes/backend/cpu.hpp"

#include "support/bits.hpp"

namespace {

using mcubes::cpu_detail::batch;
using mcubes_test::same_bits;

struct map_out {
  double jac[batch];
  int bin[64][batch];
  std::vector<double> x;  // n x D
};

// One case: D axes of n_bins bins each (edges sorted uniforms, 0 and 1 at the ends), n samples of
// sub-cube coordinates in [0, g) and uniforms, the region the unit cube or not.
template <int D>
void expect_map_forms_agree(std::uint64_t seed, int n_bins, int g, int n, bool unit) {
  std::mt19937_64 rng(seed);
  std::uniform_real_distribution<double> uni(0.0, 1.0);
  std::vector<double> edges(static_cast<std::size_t>(D) * (n_bins + 1));
  for (int j = 0; j < D; ++j) {
    std::vector<double> inner(static_cast<std::size_t>(n_bins - 1));
    for (double& v : inner) v = uni(rng);
    std::sort(inner.begin(), inner.end());
    double* e = edges.data() + static_cast<std::size_t>(j) * (n_bins + 1);
    e[0] = 0.0;
    for (int k = 0; k + 1 < n_bins; ++k) e[k + 1] = inner[static_cast<std::size_t>(k)];
    e[n_bins] = 1.0;
  }
  const mcubes::map_view<D> map{edges.data(), n_bins};
  double lower[D], width[D];
  for (int j = 0; j < D; ++j) {
    lower[j] = unit ? 0.0 : -0.75 + 0.25 * j;
    width[j] = unit ? 1.0 : 0.5 + 0.125 * j;
  }
  // the last uniform of each axis 1 - 2^-33, the top of r123::u01's range: the map's clamp
  static double c[D][batch], u[D][batch];
  for (int j = 0; j < D; ++j)
    for (int i = 0; i < batch; ++i) {
      c[j][i] = static_cast<double>(rng() % static_cast<std::uint64_t>(g));  // padded lanes valid too
      u[j][i] = i == n - 1 ? 1.0 - 0x1p-33 : (static_cast<double>(rng() >> 32) + 0.5) * 0x1p-32;
    }
  if (n > 1) c[0][n - 1] = g - 1;
  const double inv_g = 1.0 / g;
  const double* cp[D];
  const double* up[D];
  for (int j = 0; j < D; ++j) cp[j] = c[j], up[j] = u[j];
  const auto run = [&](int form, map_out& out) {
    static mcubes::point<D> xs[batch];
    int bin[D][batch];
    if (form == 0) {
      mcubes::cpu_detail::map_axis<D, true>(map, 0, lower[0], width[0], inv_g, n, c[0], u[0], out.jac, bin[0], xs);
      for (int j = 1; j < D; ++j)
        mcubes::cpu_detail::map_axis<D, false>(map, j, lower[j], width[j], inv_g, n, c[j], u[j], out.jac, bin[j], xs);
    }
#if MCUBES_CPU_AVX2_DISPATCH
    if (form == 1) {
      if (unit)
        mcubes::cpu_detail::map_axes_avx2_of<D, true>(map, lower, width, inv_g, n, cp, up, out.jac, bin, xs);
      else
        mcubes::cpu_detail::map_axes_avx2_of<D, false>(map, lower, width, inv_g, n, cp, up, out.jac, bin, xs);
    }
#endif
#if MCUBES_CPU_AVX512_DISPATCH
    if (form == 2) {
      if (unit)
        mcubes::cpu_detail::map_axes_avx512_of<D, true>(map, lower, width, inv_g, n, cp, up, out.jac, bin, xs);
      else
        mcubes::cpu_detail::map_axes_avx512_of<D, false>(map, lower, width, inv_g, n, cp, up, out.jac, bin, xs);
    }
#endif
    for (int j = 0; j < D; ++j)
      for (int i = 0; i < n; ++i) out.bin[j][i] = bin[j][i];
    out.x.clear();
    for (int i = 0; i < n; ++i)
      for (int j = 0; j < D; ++j) out.x.push_back(xs[i].x[j]);
  };
  map_out want, got;
  run(0, want);
  const std::string label = "D " + std::to_string(D) + ", " + std::to_string(n_bins) + " bins, g " + std::to_string(g) +
                            ", n " + std::to_string(n) + (unit ? ", unit region" : ", region");
  for (int form = 1; form <= 2; ++form) {
    bool has = false;
#if MCUBES_CPU_AVX2_DISPATCH
    if (form == 1) has = mcubes::cpu_detail::cpu_has_avx2();
#endif
#if MCUBES_CPU_AVX512_DISPATCH
    if (form == 2) has = mcubes::cpu_detail::cpu_has_avx512();
#endif
    if (!has) continue;
    run(form, got);
    const char* name = form == 1 ? "AVX2" : "AVX-512F";
    for (int i = 0; i < n; ++i) {
      ASSERT_TRUE(same_bits(got.jac[i], want.jac[i])) << name << " jacobian, sample " << i << ", " << label;
      for (int j = 0; j < D; ++j) {
        ASSERT_EQ(got.bin[j][i], want.bin[j][i]) << name << " bin, sample " << i << " axis " << j << ", " << label;
        ASSERT_TRUE(same_bits(got.x[static_cast<std::size_t>(i) * D + j], want.x[static_cast<std::size_t>(i) * D + j]))
            << name << " point, sample " << i << " axis " << j << ", " << label;
      }
    }
  }
}

TEST(CpuSimd, MapFormsGiveTheSameBits) {
  bool avx2 = false, avx512 = false;
#if MCUBES_CPU_AVX2_DISPATCH
  avx2 = mcubes::cpu_detail::cpu_has_avx2();
#endif
#if MCUBES_CPU_AVX512_DISPATCH
  avx512 = mcubes::cpu_detail::cpu_has_avx512();
#endif
  if (!avx2) std::printf("[ note     ] no AVX2 form on this build or CPU: only the per-axis map runs\n");
  if (avx2 && !avx512) std::printf("[ note     ] no AVX-512F form on this build or CPU: AVX2 against the per-axis map\n");
  std::uint64_t seed = 1;
  for (const bool unit : {true, false})
    for (const int n : {batch, 37, 8, 1}) {
      expect_map_forms_agree<1>(seed++, 500, 7, n, unit);
      expect_map_forms_agree<3>(seed++, 37, 3, n, unit);
      expect_map_forms_agree<4>(seed++, 500, 5, n, unit);
      expect_map_forms_agree<6>(seed++, 1000, 2, n, unit);
      expect_map_forms_agree<8>(seed++, 500, 4, n, unit);
      expect_map_forms_agree<9>(seed++, 64, 1, n, unit);
    }
}

}  // namespace

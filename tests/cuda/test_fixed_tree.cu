// The device forms of the fixed pairwise tree (core/fixed_tree.hpp) against fixed_tree_reduce,
// bitwise: the shared-memory block form (block_tree.cuh: chunk reductions, map adaptation), the
// warp-shuffle forms of the Vegas pass (warp_tree_sum, block_tree_sum, tree_reduce_body) and the
// register form for small groups (group_pairwise_sum). Inputs span 40 binades and both signs, so
// that any change of the order of additions changes the bits.
#include <gtest/gtest.h>

#include <mcubes/backend/cuda/block_tree.cuh>
#include <mcubes/backend/cuda/device_array.cuh>
#include <mcubes/backend/cuda/vegas_kernels.cuh>
#include <mcubes/core/fixed_tree.hpp>
#include <mcubes/core/reduction.hpp>
#include <mcubes/core/tree_reduce.hpp>

#include <cmath>
#include <cstdint>
#include <random>
#include <vector>

#include "support/cuda.hpp"

namespace {

std::vector<double> spread_values(std::size_t n, unsigned seed) {
  std::mt19937_64 rng(seed);
  std::uniform_real_distribution<double> mant(-1.0, 1.0);
  std::uniform_int_distribution<int> expo(-20, 20);
  std::vector<double> a(n);
  for (auto& x : a) x = std::ldexp(mant(rng), expo(rng));
  return a;
}

template <int B>
__global__ void block_merge_kernel(const double* a, const mcubes::moments* m, double* out_sum, mcubes::moments* out_m) {
  __shared__ mcubes::cuda_detail::block_tree_storage<double, B> s1;
  __shared__ mcubes::cuda_detail::block_tree_storage<mcubes::moments, B> s2;
  const double r = mcubes::cuda_detail::block_tree_merge<B>(a[threadIdx.x], s1, mcubes::plus_merge{});
  const mcubes::moments rm = mcubes::cuda_detail::block_tree_merge<B>(m[threadIdx.x], s2, mcubes::merge_partials{});
  if (threadIdx.x == 0) {
    *out_sum = r;
    *out_m = rm;
  }
}

__global__ void block_sum_kernel(const double* a, const double* b, double* out) {
  __shared__ double buf[2][32];
  double e = a[threadIdx.x], v = b[threadIdx.x];
  mcubes::cuda_detail::block_tree_sum(e, v, buf);
  if (threadIdx.x == 0) {
    out[0] = e;
    out[1] = v;
  }
}

__global__ void tree_body_kernel(const double* a, const double* b, std::uint64_t n, std::uint64_t width, double* out) {
  double sa, sb;
  mcubes::cuda_detail::tree_reduce_body(a, b, n, width, sa, sb);
  if (threadIdx.x == 0) {
    out[0] = sa;
    out[1] = sb;
  }
}

__global__ void group_kernel(const double* a, std::uint64_t count, std::uint64_t G, double* out) {
  *out = mcubes::cuda_detail::group_pairwise_sum(a, count, G);
}

template <class T>
std::vector<T> to_host(const mcubes::device_array<T>& d, std::size_t n) {
  std::vector<T> h(n);
  MCUBES_CUDA_CHECK(cudaMemcpy(h.data(), d.data(), n * sizeof(T), cudaMemcpyDeviceToHost));
  return h;
}

template <class T>
mcubes::device_array<T> to_device(const std::vector<T>& h) {
  mcubes::device_array<T> d(h.size());
  MCUBES_CUDA_CHECK(cudaMemcpy(d.data(), h.data(), h.size() * sizeof(T), cudaMemcpyHostToDevice));
  return d;
}

template <int B>
void check_block_merge() {
  const std::vector<double> a = spread_values(B, 100 + B);
  std::vector<mcubes::moments> m(B);
  for (int i = 0; i < B; ++i) m[i] = mcubes::moments::from_shifted_sums(1 + i % 7, a[i], a[(i + 1) % B], std::fabs(a[i]));
  auto da = to_device(a);
  auto dm = to_device(m);
  mcubes::device_array<double> ds(1);
  mcubes::device_array<mcubes::moments> dr(1);
  block_merge_kernel<B><<<1, B>>>(da.data(), dm.data(), ds.data(), dr.data());
  MCUBES_CUDA_CHECK_LAUNCH("block_merge_kernel");
  MCUBES_CUDA_CHECK(cudaDeviceSynchronize());
  const double want = mcubes::fixed_tree_reduce(a.data(), B, B, mcubes::plus_merge{});
  EXPECT_EQ(mcubes_test::bits(to_host(ds, 1)[0]), mcubes_test::bits(want)) << "B = " << B;
  const mcubes::moments wm =
      mcubes::fixed_tree_reduce(m.data(), B, B, [](const mcubes::moments& x, const mcubes::moments& y) { return merge(x, y); });
  const mcubes::moments got = to_host(dr, 1)[0];
  EXPECT_EQ(got.n, wm.n);
  EXPECT_EQ(mcubes_test::bits(got.mean), mcubes_test::bits(wm.mean)) << "B = " << B;
  EXPECT_EQ(mcubes_test::bits(got.m2), mcubes_test::bits(wm.m2)) << "B = " << B;
}

TEST(FixedTreeDevice, BlockMergeIsTheTreeOfBLeaves) {
  MCUBES_REQUIRE_DEVICE();
  check_block_merge<32>();
  check_block_merge<64>();
  check_block_merge<128>();
  check_block_merge<256>();
  check_block_merge<512>();
  check_block_merge<1024>();
}

TEST(FixedTreeDevice, WarpShuffleBlockSumIsTheTree) {
  MCUBES_REQUIRE_DEVICE();
  for (int B = 32; B <= 1024; B *= 2) {
    const std::vector<double> a = spread_values(B, 7 + B), b = spread_values(B, 9 + B);
    auto da = to_device(a), db = to_device(b);
    mcubes::device_array<double> out(2);
    block_sum_kernel<<<1, B>>>(da.data(), db.data(), out.data());
    MCUBES_CUDA_CHECK_LAUNCH("block_sum_kernel");
    MCUBES_CUDA_CHECK(cudaDeviceSynchronize());
    const std::vector<double> got = to_host(out, 2);
    EXPECT_EQ(mcubes_test::bits(got[0]), mcubes_test::bits(mcubes::fixed_tree_reduce(a.data(), B, B, mcubes::plus_merge{})))
        << "B = " << B;
    EXPECT_EQ(mcubes_test::bits(got[1]), mcubes_test::bits(mcubes::fixed_tree_reduce(b.data(), B, B, mcubes::plus_merge{})))
        << "B = " << B;
  }
}

TEST(FixedTreeDevice, TreeReduceKernelBodyIsTheTree) {
  MCUBES_REQUIRE_DEVICE();
  for (std::uint64_t n : {1ull, 2ull, 3ull, 31ull, 33ull, 1000ull, 1526ull, 4096ull, 8191ull}) {
    const std::uint64_t width = mcubes::next_pow2(n);
    for (std::uint64_t w : {width, 2 * width})
      for (unsigned T : {32u, 256u, 1024u}) {
        if (w / (w < T ? w : T) > 8) continue;  // the kernel's contract: at most 8 values per thread
        const std::vector<double> a = spread_values(n, 11 + n), b = spread_values(n, 13 + n);
        auto da = to_device(a), db = to_device(b);
        mcubes::device_array<double> out(2);
        tree_body_kernel<<<1, T>>>(da.data(), db.data(), n, w, out.data());
        MCUBES_CUDA_CHECK_LAUNCH("tree_body_kernel");
        MCUBES_CUDA_CHECK(cudaDeviceSynchronize());
        const std::vector<double> got = to_host(out, 2);
        EXPECT_EQ(mcubes_test::bits(got[0]), mcubes_test::bits(mcubes::fixed_tree_reduce(a.data(), n, w, mcubes::plus_merge{})))
            << "n = " << n << ", width = " << w << ", T = " << T;
        EXPECT_EQ(mcubes_test::bits(got[1]), mcubes_test::bits(mcubes::fixed_tree_reduce(b.data(), n, w, mcubes::plus_merge{})))
            << "n = " << n << ", width = " << w << ", T = " << T;
      }
  }
}

TEST(FixedTreeDevice, RegisterFormOfSmallGroupsIsTheTree) {
  MCUBES_REQUIRE_DEVICE();
  std::vector<double> a = spread_values(8, 5);
  a[1] = -0.0;
  auto da = to_device(a);
  mcubes::device_array<double> out(1);
  for (std::uint64_t G = 1; G <= 16; G *= 2)
    for (std::uint64_t count = 0; count <= G && count <= 8; ++count) {
      group_kernel<<<1, 1>>>(da.data(), count, G, out.data());
      MCUBES_CUDA_CHECK_LAUNCH("group_kernel");
      MCUBES_CUDA_CHECK(cudaDeviceSynchronize());
      EXPECT_EQ(mcubes_test::bits(to_host(out, 1)[0]),
                mcubes_test::bits(mcubes::fixed_tree_reduce(a.data(), count, G, mcubes::plus_merge{})))
          << "G = " << G << ", count = " << count;
    }
}

}  // namespace

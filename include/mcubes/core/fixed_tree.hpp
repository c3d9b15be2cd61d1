#pragma once
/// @file core/fixed_tree.hpp
/// The determinism primitives of mcubes that every backend shares, each written once:
///
///  1. The never-fused multiply and add (portable::det_mul, portable::det_add): IEEE round-to-
///     nearest operations that no compiler contracts into a fused multiply-add: __dmul_rn /
///     __dadd_rn on the device (nvcc does not fuse them, whatever --fmad says), plain operators on
///     the host, where the baseline x86-64 target has no FMA (a host build with FMA enabled must add
///     -ffp-contract=off, as documented in backend/cpu.hpp). Every computation that must give the
///     same bits on the CPU and the GPU (map adaptation, the merges of moments) uses them.
///
///  2. The fixed pairwise tree (fixed_tree_reduce): the complete binary tree over the leaves
///     a[0..n) padded with identities T{} to `width` (a power of two >= n), adjacent pairs first,
///     level by level: a'[i] = merge(a[2i], a[2i+1]). Every aligned power-of-two group of leaves is
///     a node of that tree, so a backend may reduce aligned groups of any power-of-two size (a CPU
///     tile, a warp, a CUDA block) and finish with fixed_tree_reduce over the group results: the
///     bits are the same, whatever the number of threads or the block size. A subtree made only of
///     padding is the identity, and a node whose right subtree is padding is merge(left, T{}):
///     for sums of doubles, left + 0.0 (which turns -0.0 into +0.0, exactly as the level-by-level
///     form over zero-padded leaves does); for partial types whose merge has an exact identity
///     (moments, dd_sum, mc_partial, ...), left itself.
///
///  3. The same tree over leaves that arrive one at a time (tree_accumulator), in O(log n) memory.
///
/// The other forms of the tree (the CPU tile loop, the CUDA warp-shuffle and shared-memory block
/// forms in backend/cuda/block_tree.cuh and vegas_kernels.cuh) are tested bitwise against
/// fixed_tree_reduce (tests/unit/test_reduction.cpp, tests/cuda/test_fixed_tree.cu).
///
/// Source: the fixed-order reduction is the determinism device of the m-Cubes reference
/// (Sakiotis et al. 2022, section 4) made independent of the launch; pairwise summation: Higham,
/// "Accuracy and Stability of Numerical Algorithms", 2nd ed., section 4.2.

#include <array>
#include <cstdint>

#include "../config.hpp"

namespace mcubes {
namespace portable {

/// a * b rounded once, never fused with a following addition (device: __dmul_rn).
MCUBES_HOST_DEVICE inline double det_mul(double a, double b) {
#if defined(__CUDA_ARCH__)
  return __dmul_rn(a, b);
#else
  return a * b;
#endif
}

/// a + b rounded once, never fused with a preceding product (device: __dadd_rn).
MCUBES_HOST_DEVICE inline double det_add(double a, double b) {
#if defined(__CUDA_ARCH__)
  return __dadd_rn(a, b);
#else
  return a + b;
#endif
}

/// a - b as det_add(a, -b).
MCUBES_HOST_DEVICE inline double det_sub(double a, double b) { return det_add(a, -b); }

}  // namespace portable

/// Smallest power of two >= n (1 for n = 0).
MCUBES_HOST_DEVICE inline std::uint64_t next_pow2(std::uint64_t n) {
  std::uint64_t w = 1;
  while (w < n) w <<= 1;
  return w;
}

/// The merge of sums of doubles: a + b (the padding identity is 0.0).
struct plus_merge {
  template <class T>
  MCUBES_HOST_DEVICE T operator()(const T& a, const T& b) const {
    return a + b;
  }
};

/// The merge of partial types with an overload mcubes::merge(a, b) (moments, dd_sum, mc_partial,
/// midpoint_partial, ...), found by argument-dependent lookup. Host and device.
struct merge_partials {
  template <class T>
  MCUBES_HOST_DEVICE T operator()(const T& a, const T& b) const {
    return merge(a, b);
  }
};

#if defined(__CUDACC__)
// Merge is a host lambda in CPU code and a device functor in kernels: each instantiation that runs
// is valid, so nvcc's host/device execution-space check is disabled here.
#pragma nv_exec_check_disable
#endif
/// Merges a[0..n) over the fixed pairwise tree of width `width` (a power of two >= n; file
/// comment): T{} for n = 0; a[0] for width 1; merge(left, T{}) when the right half is padding;
/// merge(left, right) otherwise. O(n) merges, recursion depth log2(width); a complete subtree of
/// 2, 4 or 8 leaves is merged without recursion (the same nodes in the same order: a CPU tile of one-
/// sub-cube chunks reduces hundreds of thousands of leaves per pass). Host and device.
template <class T, class Merge>
MCUBES_HOST_DEVICE T fixed_tree_reduce(const T* a, std::uint64_t n, std::uint64_t width, const Merge& merge) {
  if (n == 0) return T{};
  if (width == 1) return a[0];
  if (n == width && width <= 8) {
    if (width == 2) return merge(a[0], a[1]);
    if (width == 4) return merge(merge(a[0], a[1]), merge(a[2], a[3]));
    return merge(merge(merge(a[0], a[1]), merge(a[2], a[3])), merge(merge(a[4], a[5]), merge(a[6], a[7])));
  }
  const std::uint64_t half = width / 2;
  if (n <= half) return merge(fixed_tree_reduce(a, n, half, merge), T{});
  return merge(fixed_tree_reduce(a, half, half, merge), fixed_tree_reduce(a + half, n - half, half, merge));
}

/// The fixed pairwise tree evaluated over leaves that arrive one at a time, in leaf order, in
/// O(log n) memory: a binary counter. push() merges the new leaf with the stack's top while both are
/// roots of complete subtrees of the same size (every such pair is a node of the tree: aligned and
/// adjacent), so the stack holds the roots of the complete subtrees of the binary decomposition of
/// the count, largest first (at most 64). result() merges them right to left, which is what
/// fixed_tree_reduce does with the padded last subtree. Hence, bitwise, for a merge with an exact
/// identity (merge(x, T{}) == x),
///   push(a[0]); ...; push(a[n-1]); result() == fixed_tree_reduce(a, n, width, merge)
/// for every power-of-two width >= n. Host only.
template <class T, class Merge>
class tree_accumulator {
 public:
  explicit tree_accumulator(const Merge& merge) : merge_(merge) {}

  /// Appends the next leaf.
  void push(T leaf) {
    int level = 0;
    while (size_ > 0 && level_[size_ - 1] == level) {
      leaf = merge_(node_[size_ - 1], leaf);
      --size_;
      ++level;
    }
    node_[size_] = leaf;
    level_[size_] = level;
    ++size_;
    ++count_;
  }

  /// The root of the tree over the leaves pushed so far (T{} for none).
  T result() const {
    if (size_ == 0) return T{};
    T r = node_[size_ - 1];
    for (int i = size_ - 2; i >= 0; --i) r = merge_(node_[i], r);
    return r;
  }

  /// Leaves pushed so far.
  std::uint64_t count() const noexcept { return count_; }

 private:
  Merge merge_;
  std::array<T, 64> node_{};  // roots of complete subtrees, in leaf order
  int level_[64] = {};        // node_[i] covers 2^level_[i] leaves
  int size_ = 0;
  std::uint64_t count_ = 0;
};

}  // namespace mcubes

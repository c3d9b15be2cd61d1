#pragma once
/// @file backend/cuda/block_tree.cuh
/// The CUDA block form of the fixed pairwise tree (core/fixed_tree.hpp): B values, one per thread
/// in thread order, merged level by level in shared memory, adjacent pairs first. It is the aligned
/// group of B leaves of fixed_tree_reduce, bitwise (tests/cuda/test_fixed_tree.cu). Used by the
/// chunk reductions (launch.cuh) and the map adaptation kernel (adapt_kernels.cuh). The warp-shuffle
/// form of the Vegas pass lives in vegas_kernels.cuh (warp_tree_sum, block_tree_sum), tested the
/// same way.

#include "../../core/fixed_tree.hpp"

namespace mcubes::cuda_detail {

/// Shared memory for block_tree_merge: B values of T (raw storage, since T may have default member
/// initialisers, which __shared__ variables cannot).
template <class T, int B>
struct block_tree_storage {
  alignas(T) unsigned char bytes[sizeof(T) * B];
  __device__ T* values() { return reinterpret_cast<T*>(bytes); }
};

/// Merges the B values v (one per thread, in thread order) over the fixed pairwise tree, adjacent
/// pairs first, level by level in shared memory: the aligned group of B leaves of core/tree_reduce.hpp.
/// Every thread of the block must call it (it synchronises); the result is valid in thread 0. The
/// storage may be reused after the call returns (it ends with a barrier).
template <int B, class T, class Merge>
__device__ T block_tree_merge(const T& v, block_tree_storage<T, B>& storage, const Merge& merge) {
  T* s = storage.values();
  const unsigned tid = threadIdx.x;
  s[tid] = v;
  __syncthreads();
#pragma unroll
  for (unsigned step = 1; step < static_cast<unsigned>(B); step <<= 1) {
    if ((tid & (2 * step - 1)) == 0) s[tid] = merge(s[tid], s[tid + step]);
    __syncthreads();
  }
  const T r = s[0];
  __syncthreads();
  return r;
}


}  // namespace mcubes::cuda_detail

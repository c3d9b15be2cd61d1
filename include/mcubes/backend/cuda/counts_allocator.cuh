#pragma once
/// @file backend/cuda/counts_allocator.cuh
/// The owner of a CUDA backend's VEGAS+ allocations of single integrals (cuda_backend::
/// allocate_counts): the allocation kernel's device memory and pinned result, the heavy
/// sub-cubes' lists it makes for the next pass (cuda_launch_policy::list_heavy_with_allocation,
/// into heavy_buffers), and the allocation after a pass.
///
/// The allocation after a pass (cuda_launch_policy::allocate_after_pass): an adapting VEGAS+
/// iteration ends with a pass that writes the sub-cubes' shares, and the next iteration begins with
/// their allocation (algorithm/vegas.hpp: allocate_counts), each a round trip of the host. The run
/// may ask, before such a pass, for the allocation it expects to need after it (ask_after_next_pass,
/// a counts_request); the pass then queues it behind its own kernels and waits once for both
/// (launch_asked before its wait, landed after it). When the run then asks for an allocation,
/// allocate() hands back the one that landed if the request is the same in every field the
/// allocation reads (same_allocation) and nothing has written the shares since: every pass, a
/// batch, and a write or new array of shares drops it (drop()). Otherwise it allocates as always.
/// So the counts, the lists and every bit of a result are the same with or without it; an
/// allocation asked for and not used (the run converged after that pass) costs one launch.
/// With cuda_launch_policy::allocate_beside the queued allocation runs on the device's side stream
/// (device.cuh), forked behind the pass's sampling, and the pass's wait does not cover it: the
/// host takes the pass's sums and the run queues the map's adaptation (which reads neither the
/// shares nor anything the allocation writes) while it runs; allocate() waits for it on the host,
/// and so does drop() (nothing queued after a drop may meet the allocation's writes).
/// Determinism: as allocate.cuh (neither grid nor block size changes a count).

#include <cuda_runtime.h>

#include <algorithm>
#include <cstdint>
#include <cstring>

#include "../../core/cube_counts.hpp"
#include "../../core/stratification.hpp"
#include "allocate.cuh"
#include "device.cuh"
#include "device_array.cuh"
#include "heavy_cubes.cuh"
#include "heavy_lists.cuh"
#include "occupancy.cuh"

namespace mcubes::cuda_detail {

/// Whether two requests give the same allocation: the same shares array and chunking, the same
/// counts in every field count(c) and the listing read (not the scale the search sets, nor where a
/// pass would write its shares), the same stratification, base and target, and, for a search
/// without the total, the same first scale (compared bit for bit).
inline bool same_allocation(const counts_request& a, const counts_request& b) {
  const cube_counts &ca = a.counts.counts, &cb = b.counts.counts;
  const stratification &sa = a.st, &sb = b.st;
  return a.with_total == b.with_total && (a.with_total != 0 || std::memcmp(&a.s0, &b.s0, sizeof a.s0) == 0) &&
         a.base == b.base && a.target == b.target && a.shares.share == b.shares.share &&
         a.shares.n_cubes == b.shares.n_cubes && a.shares.chunk_cubes == b.shares.chunk_cubes &&
         a.counts.n_cubes == b.counts.n_cubes && a.counts.chunk_cubes == b.counts.chunk_cubes &&
         ca.n_base == cb.n_base && ca.n_extra_max == cb.n_extra_max && ca.share_in == cb.share_in &&
         ca.beta16 == cb.beta16 && ca.segment == cb.segment &&
         (a.with_total != 0 || std::memcmp(&ca.scale, &cb.scale, sizeof ca.scale) == 0) && sa.dim == sb.dim &&
         sa.g == sb.g && sa.n_cubes == sb.n_cubes && sa.samples_per_cube == sb.samples_per_cube &&
         sa.min_samples_per_cube == sb.min_samples_per_cube && sa.calls == sb.calls &&
         sa.segment_samples == sb.segment_samples && sa.chunk_cubes == sb.chunk_cubes && sa.n_chunks == sb.n_chunks;
}

/// A backend's single-integral VEGAS+ allocations (file comment). Not copyable: owns device and
/// pinned memory.
class counts_allocator {
 public:
  counts_allocator() = default;
  counts_allocator(const counts_allocator&) = delete;
  counts_allocator& operator=(const counts_allocator&) = delete;

  /// The allocation of request q (allocate.cuh: the sum of the shares when q.with_total, the
  /// counts' scale, and with `policy`'s list_heavy_with_allocation the next pass's heavy lists in
  /// hb), the one that landed after the last pass where it is q's (file comment), else in one
  /// cooperative launch and one round trip. launched = false: the device refused the launch,
  /// nothing done.
  /// @throws invalid_input if q.st.n_chunks > max_chunks; cuda_error if a CUDA call fails.
  counts_allocation allocate(const counts_request& q, const cuda_launch_policy& policy, heavy_buffers& hb,
                             int multiprocessors, cudaStream_t stream) {
    hb.prelisted = {};
    if (state_ == ahead::beside) {  // its result on the host, its lists and scratch written
      MCUBES_CUDA_CHECK(beside_->wait_side_mark());
      state_ = ahead::landed;
    }
    if (state_ == ahead::landed && same_allocation(ahead_, q)) {
      state_ = ahead::none;
      ++used_;
      return take(*result_.data(), ahead_list_, q, hb);
    }
    drop();
    const heavy_list_request list = list_request(q, policy, hb);
    ensure_result();
    const counts_allocation r = allocate_counts(q.shares, q.counts, q.st, q.with_total != 0, q.s0, q.base, q.target, list,
                                                scratch_, result_.data(), multiprocessors, blocks_per_sm_, stream);
    return r.launched ? take(r, list, q, hb) : r;
  }

  /// Asks for allocation q behind the next scalar pass (file comment; replaces an earlier request).
  void ask_after_next_pass(const counts_request& q) {
    drop();
    ahead_ = q;
    state_ = ahead::asked;
  }
  /// Called by a scalar pass after the kernels that write the shares, before it waits: queues the
  /// asked allocation in the device's stream (the pass's wait then covers it), or with
  /// policy.allocate_beside on its side stream, forked there (file comment). Nothing if none was
  /// asked or the device refuses the launch. @throws as launch_counts_allocation.
  void launch_asked(const cuda_launch_policy& policy, heavy_buffers& hb, const device_stream& device) {
    if (state_ != ahead::asked) return;
    state_ = ahead::none;
    if (ahead_.st.n_chunks > max_chunks) return;
    ahead_list_ = list_request(ahead_, policy, hb, device.stream());
    ensure_result();
    const bool beside = policy.allocate_beside;
    if (beside) device.fork_side();
    if (launch_counts_allocation(ahead_.shares, ahead_.counts, ahead_.st, ahead_.with_total != 0, ahead_.s0, ahead_.base,
                                 ahead_.target, ahead_list_, scratch_, result_.data(), device.multiprocessors(),
                                 blocks_per_sm_, beside ? device.side() : device.stream())) {
      state_ = ahead::queued;
      if (beside) {
        device.mark_side();
        beside_ = &device;
        state_ = ahead::beside;
      }
    }
  }
  /// Called by that pass once its wait returned: the queued allocation's result is on the host.
  void landed() noexcept {
    if (state_ == ahead::queued) state_ = ahead::landed;
  }
  /// Forgets an asked, queued or landed allocation (anything that may write the shares calls it);
  /// one running beside the stream is waited for first (a failed wait is left to the next checked
  /// CUDA call, which reports the device's error).
  void drop() noexcept {
    settle();
    state_ = ahead::none;
  }
  /// Forgets a queued or landed allocation, not one asked for behind the next pass (a pass calls
  /// it before it runs); as drop() for one running beside.
  void drop_landed() noexcept {
    settle();
    if (state_ != ahead::asked) state_ = ahead::none;
  }

  /// Whether an allocation queued behind the last pass runs beside its stream (launch_asked).
  bool running_beside() const noexcept { return state_ == ahead::beside; }
  /// Allocations so far whose heavy sub-cubes did not fit the room kept for their lists.
  std::uint64_t lists_over_capacity() const noexcept { return over_capacity_; }
  /// Allocations so far handed back from behind a pass (not launched when asked for).
  std::uint64_t used_after_pass() const noexcept { return used_; }

 private:
  /// asked: to queue behind the next pass; queued: in the stream, behind it; beside: on the side
  /// stream (not waited for yet); landed: its result on the host.
  enum class ahead { none, asked, queued, beside, landed };

  /// An allocation beside the stream: waited for, so landed.
  void settle() noexcept {
    if (state_ != ahead::beside) return;
    (void)beside_->wait_side_mark();
    state_ = ahead::landed;
  }

  void ensure_result() {
    if (result_.size() == 0) result_ = pinned_array<counts_allocation>(1);
  }

  /// The heavy lists to make with allocation q (on = 0: none): room for twice the last pass's
  /// heavy sub-cubes, at least 4096 (at most calls / (T + 1) sub-cubes exceed T); where they do not
  /// fit, the pass lists them itself. `queued`: a stream whose queued pass may still read the
  /// lists' arrays; it is waited for before an array is replaced by a larger one.
  static heavy_list_request list_request(const counts_request& q, const cuda_launch_policy& policy, heavy_buffers& hb,
                                         cudaStream_t queued = nullptr) {
    heavy_list_request list;
    const cube_counts& c = q.counts.counts;
    const stratification& st = q.st;
    if (!policy.list_heavy_with_allocation || policy.balance_above > 0 || c.segment == 0 || c.share_in == nullptr ||
        st.n_chunks > max_chunks)
      return list;
    list.on = 1;
    list.above = heavy_above(c, st.calls, st.n_cubes, policy.heavy_above_average);
    const std::uint64_t bound = std::min<std::uint64_t>(st.n_cubes, st.calls / (list.above + 1)) + 1;
    const std::uint64_t want = std::min<std::uint64_t>(bound, std::max<std::uint64_t>(4096, 2 * hb.n_heavy));
    if (queued != nullptr && (hb.chunk_heavy_first.size() < st.n_chunks + 1 || hb.chunk_seg_first.size() < st.n_chunks + 1 ||
                              hb.cube.size() < want || hb.seg_first.size() < want + 1))
      MCUBES_CUDA_CHECK(cudaStreamSynchronize(queued));
    grow(hb.chunk_heavy_first, st.n_chunks + 1);
    grow(hb.chunk_seg_first, st.n_chunks + 1);
    grow(hb.cube, want);
    grow(hb.seg_first, want + 1);
    list.chunk_heavy_first = hb.chunk_heavy_first.data();
    list.chunk_seg_first = hb.chunk_seg_first.data();
    list.cube = hb.cube.data();
    list.seg_first = hb.seg_first.data();
    list.capacity = std::min<std::uint64_t>(hb.cube.size(), hb.seg_first.size() - 1);
    return list;
  }

  /// Result r of allocation q made with `list`: the lists become the next pass's where they fit.
  counts_allocation take(const counts_allocation& r, const heavy_list_request& list, const counts_request& q,
                         heavy_buffers& hb) {
    if (list.on != 0 && r.searched != 0 && r.listed == 0) ++over_capacity_;
    if (list.on != 0 && r.searched != 0 && r.listed != 0) {  // else the pass lists them (and sizes the next)
      hb.n_heavy = r.n_heavy;
      hb.n_segments = r.n_segments;
      hb.above = list.above;
      cube_counts at = q.counts.counts;
      at.scale = r.scale;
      hb.prelisted = heavy_listing_key::of(at, list.above, q.st);
    }
    return r;
  }

  device_array<allocation_scratch> scratch_;  ///< the kernel's device memory (kept)
  pinned_array<counts_allocation> result_;    ///< its result on the host
  int blocks_per_sm_ = 0;                     ///< the kernel's resident blocks per SM (0: not asked yet)
  ahead state_ = ahead::none;
  const device_stream* beside_ = nullptr;  ///< the device of an allocation beside its stream
  counts_request ahead_;            ///< the allocation asked for behind the next pass
  heavy_list_request ahead_list_;   ///< the lists queued with it
  std::uint64_t over_capacity_ = 0, used_ = 0;
};

}  // namespace mcubes::cuda_detail

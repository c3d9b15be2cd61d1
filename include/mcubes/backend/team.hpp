#pragma once
/// @file backend/team.hpp
/// One integral computed by a team of processes (MPI ranks), with the bits of one process: the
/// fixed split of a pass's chunks over the ranks, and the one exchange that every team operation
/// ends with, over the communicator interface (backend/communicator.hpp, with its thread and
/// nested teams).
///
/// The split (team_split): the chunks [0, n) of a pass (or of a reduction) are cut into P aligned
/// parts of S chunks, S = min(W, max(W / next_pow2(64 R), 1024)) with W = next_pow2(n) and R ranks
/// (64 parts per rank where there are that many chunks, and parts of at least 1024 chunks, so that
/// a CPU tile and a CUDA block's tile of up to 1024 chunks lie inside one part); rank r takes the
/// parts [P r / R, P (r+1) / R), a contiguous range of chunks (none for some ranks of a small
/// problem). Every part is a node of the one fixed tree of core/fixed_tree.hpp,
/// so each rank reduces its parts on its own and the parts' values, gathered in part order, are
/// merged over the tree of width W / S: bitwise the value one process computes over all n chunks,
/// for any R. The split depends on n and R only, so a VEGAS+ pass and the reductions of its
/// per-sub-cube shares (algorithm/vegas.hpp allocate_counts) give every rank the same chunks, and a
/// rank reads only the shares it wrote.
///
/// What is exchanged per pass: the parts' values (2 doubles each: at most 2 x 64 x next_pow2(R)
/// per pass), the flags of each rank (chunk_partial: counts, first failing sample, largest term:
/// merged exactly, in any order) and, for an adapting pass, the exact integer bin sums (D x
/// n_bins 128-bit integers per level), added as integers. Never a floating-point sum across ranks.
///
/// Failures: every exchange first agrees on the ranks' states. A rank whose pass threw makes every
/// rank throw (itself its own exception; the others team_failure naming the rank and its message);
/// a pass that one rank abandoned on a stop request (execution::stop) is abandoned by all
/// (pass_abandoned), so that every rank ends its run at the same iteration boundary.

#include <algorithm>
#include <cstdint>
#include <exception>
#include <string>
#include <type_traits>
#include <vector>

#include "../core/fixed_tree.hpp"
#include "../core/reduction.hpp"
#include "../core/sampler.hpp"
#include "../error.hpp"
#include "../execution.hpp"
#include "communicator.hpp"

namespace mcubes {

/// Whether `team` splits the work: non-null and more than one rank.
inline bool splits(const communicator* team) { return team != nullptr && team->size() > 1; }

/// A team's assignment of the parts of one chunking to its ranks, when it is not the even one of
/// split_chunks: rank r takes the parts [first_part[r], first_part[r + 1]). Set by balance_team
/// (algorithm/vegas.hpp) from a VEGAS+ run's counts, so that every rank samples about as many
/// points; the parts themselves (S, P) stay those of split_chunks, every part a node of the fixed
/// tree, so a layout never changes a result's bits. The same on every rank (computed from gathered
/// values).
struct team_layout {
  std::uint64_t n_chunks = 0;              ///< the chunking it is for (0: none)
  std::vector<std::uint64_t> first_part;  ///< ranks + 1 part boundaries, first 0, last P
  bool applies(std::uint64_t n, int ranks) const {
    return n_chunks == n && n != 0 && first_part.size() == static_cast<std::size_t>(ranks) + 1;
  }
};

/// The split of n chunks over a team (file comment): parts of `part_chunks` chunks, this rank's
/// parts [part_begin, part_end) = chunks [chunk_begin(), chunk_end()). `layout`: the team's
/// layout (or null) that other ranks' splits are taken from.
struct team_split {
  std::uint64_t n_chunks = 0;
  std::uint64_t width = 1;        ///< next_pow2(n_chunks)
  std::uint64_t part_chunks = 1;  ///< S, a power of two
  std::uint64_t n_parts = 0;      ///< ceil(n_chunks / S)
  std::uint64_t part_begin = 0, part_end = 0;
  const team_layout* layout = nullptr;
  std::uint64_t chunk_begin() const { return part_begin * part_chunks < n_chunks ? part_begin * part_chunks : n_chunks; }
  std::uint64_t chunk_end() const { return part_end * part_chunks < n_chunks ? part_end * part_chunks : n_chunks; }
};

/// The smallest part of a split (team_split) where there are more chunks: a tile of any backend.
inline constexpr std::uint64_t team_min_part_chunks = 1024;

/// The split of n_chunks chunks for rank `rank` of `ranks` (ranks = 1: one part, every chunk): the
/// even one, or that of `layout` where it applies to n_chunks and ranks (team_layout).
inline team_split split_chunks(std::uint64_t n_chunks, int rank, int ranks, const team_layout* layout = nullptr) {
  team_split s;
  s.n_chunks = n_chunks;
  s.width = next_pow2(n_chunks);
  const std::uint64_t parts = ranks > 1 ? next_pow2(64 * static_cast<std::uint64_t>(ranks)) : 1;
  s.part_chunks = std::min(s.width, std::max(s.width / parts, team_min_part_chunks));
  s.n_parts = (n_chunks + s.part_chunks - 1) / s.part_chunks;
  const std::uint64_t r = static_cast<std::uint64_t>(rank), R = static_cast<std::uint64_t>(ranks);
  if (layout != nullptr && ranks > 1 && layout->applies(n_chunks, ranks) && layout->first_part.back() == s.n_parts) {
    s.part_begin = layout->first_part[r];
    s.part_end = layout->first_part[r + 1];
    s.layout = layout;
    return s;
  }
  s.part_begin = s.n_parts * r / R;
  s.part_end = s.n_parts * (r + 1) / R;
  return s;
}

/// The split of n_chunks for this process: every chunk when `team` does not split.
inline team_split split_chunks(std::uint64_t n_chunks, const communicator* team, const team_layout* layout = nullptr) {
  return splits(team) ? split_chunks(n_chunks, team->rank(), team->size(), layout) : split_chunks(n_chunks, 0, 1);
}

/// The layout that gives each of `ranks` ranks about the same total weight: `weights` one per part
/// of split_chunks(n_chunks, ., ranks) (a VEGAS+ pass's sample counts per part); rank r's parts
/// start at the first part whose preceding weights reach r / ranks of the total (exact integer
/// arithmetic: the same layout on every rank). Every rank gets a contiguous range (possibly empty).
/// @throws invalid_input if the weights are not one per part.
inline team_layout balanced_layout(std::uint64_t n_chunks, int ranks, const std::vector<std::uint64_t>& weights) {
  const team_split s = split_chunks(n_chunks, 0, ranks);
  MCUBES_EXPECTS(weights.size() == s.n_parts, "balanced_layout: ", weights.size(), " weights for ", s.n_parts, " parts");
  __extension__ typedef unsigned __int128 wide;  // totals times ranks, exactly
  wide total = 0;
  for (std::uint64_t w : weights) total += w;
  team_layout l;
  l.n_chunks = n_chunks;
  l.first_part.assign(static_cast<std::size_t>(ranks) + 1, s.n_parts);
  l.first_part[0] = 0;
  wide before = 0;  // the weight of parts [0, p)
  std::uint64_t p = 0;
  for (int r = 1; r < ranks; ++r) {
    const wide goal = total * static_cast<wide>(r);  // compare before * ranks with total * r
    while (p < s.n_parts && before * static_cast<wide>(ranks) < goal) before += weights[p++];
    // the boundary before the last part taken, where that lands nearer the goal
    if (p > l.first_part[static_cast<std::size_t>(r) - 1] && before * static_cast<wide>(ranks) > goal) {
      const wide lower = before - weights[p - 1];
      if (goal - lower * static_cast<wide>(ranks) < before * static_cast<wide>(ranks) - goal) {
        before = lower;
        --p;
      }
    }
    l.first_part[static_cast<std::size_t>(r)] = p;
  }
  return l;
}

/// The exchange every team operation ends with: each rank's state (ok, abandoned, failed) and its
/// payload, gathered on every rank. Rethrows `failure` on the rank that had it, and throws
/// team_failure (the lowest failing rank and its message) on the others; throws pass_abandoned
/// on every rank if one abandoned. Otherwise returns the payloads by rank. (The state travels
/// after the payload, so that taking it off moves no byte of a large payload.)
inline std::vector<std::vector<unsigned char>> team_exchange(const communicator& team, const std::exception_ptr& failure,
                                                             bool abandoned, std::vector<unsigned char> payload) {
  const std::int32_t state = failure ? 2 : abandoned ? 1 : 0;
  if (failure) {
    std::string what = "failed";
    try {
      std::rethrow_exception(failure);
    } catch (const std::exception& e) {
      what = e.what();
    } catch (...) {
    }
    payload.clear();
    put_bytes(payload, what.data(), what.size());
  }
  put_bytes(payload, &state);
  std::vector<std::vector<unsigned char>> all;
  team.all_gather(payload, all);
  bool any_abandoned = false;
  for (std::size_t r = 0; r < all.size(); ++r) {
    MCUBES_EXPECTS(all[r].size() >= sizeof(std::int32_t), "team exchange: a rank's message is shorter than expected");
    std::size_t at = all[r].size() - sizeof(std::int32_t);
    std::int32_t s = 0;
    take_bytes(all[r], at, &s);
    all[r].resize(all[r].size() - sizeof(std::int32_t));
    if (s == 2) {
      if (failure) std::rethrow_exception(failure);
      throw team_failure(static_cast<int>(r), std::string(all[r].begin(), all[r].end()));
    }
    any_abandoned = any_abandoned || s == 1;
  }
  if (any_abandoned) throw pass_abandoned();
  return all;
}

/// Whether a run stops before its next pass: `stop` requested on this process, or, when `team`
/// splits, on any rank (a collective: every rank gets the same answer, so all end their runs at
/// the same iteration boundary).
inline bool stop_agreed(const stop_request* stop, const communicator* team) {
  const bool mine = stop != nullptr && stop->requested();
  if (!splits(team)) return mine;
  try {
    team_exchange(*team, nullptr, mine, {});
  } catch (const pass_abandoned&) {
    return true;
  }
  return false;
}

/// The team of a backend (its member `team`), or null for a backend that has none.
template <class B, class = void>
struct backend_team {
  static const communicator* of(const B&) { return nullptr; }
};
template <class B>
struct backend_team<B, std::void_t<decltype(std::declval<const B&>().team)>> {
  static const communicator* of(const B& b) { return b.team; }
};
template <class B>
const communicator* team_of(const B& b) {
  return backend_team<B>::of(b);
}

/// The team layout of a backend (its member `layout`: balance_team sets it), or null for a backend
/// that has none. `has_team_layout<B>`: whether B has one.
template <class B, class = void>
struct has_team_layout : std::false_type {};
template <class B>
struct has_team_layout<B, std::void_t<decltype(std::declval<B&>().layout)>> : std::true_type {};
template <class B>
const team_layout* layout_of(const B& b) {
  if constexpr (has_team_layout<B>::value)
    return &b.layout;
  else
    return nullptr;
}

/// Completes `values` (one per sub-cube, chunk c holding sub-cubes [c chunk_cubes, (c + 1)
/// chunk_cubes)) on every rank of `team`, when each rank holds the values of its own chunks
/// (split_chunks(n_chunks, team, layout): a VEGAS+ rank's shares). A collective when `team` splits
/// (the ranks' slices gathered, O(sub-cubes) bytes); nothing otherwise, or for empty values. A
/// checkpoint's progress needs it (checkpoint_saver::set_team); the passes never do.
inline void team_gather_cubes(const communicator* team, std::uint64_t n_chunks, std::uint64_t chunk_cubes,
                              std::vector<double>& values, const team_layout* layout = nullptr) {
  if (!splits(team)) return;
  const std::uint64_t n = values.size();
  const auto cubes_of = [&](const team_split& s, std::uint64_t& begin, std::uint64_t& end) {
    begin = std::min(n, s.chunk_begin() * chunk_cubes);
    end = std::min(n, s.chunk_end() * chunk_cubes);
  };
  std::uint64_t begin = 0, end = 0;
  cubes_of(split_chunks(n_chunks, team, layout), begin, end);
  std::vector<unsigned char> payload;
  if (end > begin) put_bytes(payload, values.data() + begin, end - begin);
  const auto all = team_exchange(*team, nullptr, false, payload);
  for (int r = 0; r < team->size(); ++r) {
    cubes_of(split_chunks(n_chunks, r, team->size(), layout), begin, end);
    std::size_t at = 0;
    if (end > begin) take_bytes(all[static_cast<std::size_t>(r)], at, values.data() + begin, end - begin);
  }
}

/// Moves per-sub-cube values (chunk c holding sub-cubes [c chunk_cubes, (c + 1) chunk_cubes) of
/// n_cubes) from the ranks that own them under `from` to those that own them under `to` (both
/// layouts of n_chunks, or null for the even split): each rank sends the slices of its old range
/// that another rank's new range holds (read(begin, count, out) copies them out of the backend's
/// array) and receives those of its new range that it did not hold (write(begin, count, in)). A
/// collective: O(moved sub-cubes x ranks) bytes; nothing moves when the ranges are unchanged.
template <class Read, class Write>
void team_move_cubes(const communicator& team, std::uint64_t n_chunks, std::uint64_t chunk_cubes, std::uint64_t n_cubes,
                     const team_layout* from, const team_layout* to, const Read& read, const Write& write) {
  const int R = team.size(), me = team.rank();
  const auto cubes_of = [&](const team_layout* l, int r, std::uint64_t& begin, std::uint64_t& end) {
    const team_split s = split_chunks(n_chunks, r, R, l);
    begin = std::min(n_cubes, s.chunk_begin() * chunk_cubes);
    end = std::min(n_cubes, s.chunk_end() * chunk_cubes);
  };
  // the slice of r's old range that s's new range holds (r != s)
  const auto slice = [&](int r, int s, std::uint64_t& begin, std::uint64_t& end) {
    std::uint64_t a0, a1, b0, b1;
    cubes_of(from, r, a0, a1);
    cubes_of(to, s, b0, b1);
    begin = std::max(a0, b0);
    end = std::max(begin, std::min(a1, b1));
    if (r == s) end = begin;
  };
  std::vector<unsigned char> payload;
  std::exception_ptr failure;
  try {
    std::vector<double> buffer;
    for (int s = 0; s < R; ++s) {
      std::uint64_t begin, end;
      slice(me, s, begin, end);
      if (end == begin) continue;
      buffer.resize(end - begin);
      read(begin, end - begin, buffer.data());
      put_bytes(payload, buffer.data(), buffer.size());
    }
  } catch (...) {
    failure = std::current_exception();
  }
  const auto all = team_exchange(team, failure, false, std::move(payload));
  std::vector<double> buffer;
  for (int r = 0; r < R; ++r) {
    std::size_t at = 0;
    for (int s = 0; s < R; ++s) {
      std::uint64_t begin, end;
      slice(r, s, begin, end);
      if (end == begin) continue;
      if (s != me) {
        at += (end - begin) * sizeof(double);
        continue;
      }
      buffer.resize(end - begin);
      take_bytes(all[static_cast<std::size_t>(r)], at, buffer.data(), buffer.size());
      write(begin, end - begin, buffer.data());
    }
  }
}

/// The chunk function of a part: chunk(first + c) for the part's c-th chunk. Trivially copyable
/// when ChunkFn is (the CUDA backend launches it).
template <class ChunkFn>
struct offset_chunk {
  ChunkFn chunk;
  std::uint64_t first;
#if defined(__CUDACC__)
  // chunk is a host functor on the CPU backend and a device one on the CUDA backend
#pragma nv_exec_check_disable
#endif
  MCUBES_HOST_DEVICE auto operator()(std::uint64_t c) const { return chunk(first + c); }
};

/// Appends this rank's share of one pass to a team exchange's payload (every backend's pass ends
/// so): its flags, then the estimate and variance sums of each of its parts p in [split.part_begin,
/// split.part_end), part_sums(p, est, var) computing them (the fixed tree over the part's chunks,
/// padded to the part's width).
template <class PartSums>
void put_team_pass(std::vector<unsigned char>& payload, const chunk_partial& flags, const team_split& split,
                   const PartSums& part_sums) {
  put_bytes(payload, &flags);
  for (std::uint64_t p = split.part_begin; p < split.part_end; ++p) {
    double part[2] = {0, 0};
    part_sums(p, part[0], part[1]);
    put_bytes(payload, part, 2);
  }
}

/// The whole pass from the ranks' shares put by put_team_pass (all[r] read from at[r], advanced):
/// the flags merged (order-independent), the parts' sums in part order merged over the tree of
/// width W / S. Bitwise the one-process estimate and variance. top_level and bins are left empty.
inline iteration_sums take_team_pass(const communicator& team, const std::vector<std::vector<unsigned char>>& all,
                                     std::vector<std::size_t>& at, const team_split& split) {
  iteration_sums out;
  std::vector<double> est(split.n_parts, 0.0), var(split.n_parts, 0.0);
  for (int r = 0; r < team.size(); ++r) {
    const std::size_t k = static_cast<std::size_t>(r);
    chunk_partial flags;
    take_bytes(all[k], at[k], &flags);
    merge_flags(out.flags, flags);
    const team_split sr = split_chunks(split.n_chunks, r, team.size(), split.layout);
    for (std::uint64_t p = sr.part_begin; p < sr.part_end; ++p) {
      double part[2];
      take_bytes(all[k], at[k], part, 2);
      est[p] = part[0];
      var[p] = part[1];
    }
  }
  out.estimate = pairwise_sum(est.data(), split.n_parts, split.width / split.part_chunks);
  out.variance = pairwise_sum(var.data(), split.n_parts, split.width / split.part_chunks);
  return out;
}

/// Replaces `bins` (the same number of exact bin sums on every rank: the levels of one or more
/// adapting passes) by their sum over the ranks: integer additions, so in any order the bits of
/// one process's bins. A collective.
inline void team_sum_bins(const communicator& team, std::vector<bin_accumulator>& bins) {
  std::vector<unsigned char> mine;
  put_bytes(mine, bins.data(), bins.size());
  const auto all = team_exchange(team, nullptr, false, mine);
  for (bin_accumulator& b : bins) b = bin_accumulator{};
  for (const auto& m : all) {
    MCUBES_EXPECTS(m.size() == bins.size() * sizeof(bin_accumulator), "team exchange: the ranks' bins differ in size");
    std::size_t at = 0;
    for (bin_accumulator& b : bins) {
      bin_accumulator x;
      take_bytes(m, at, &x);
      b.add(x);
    }
  }
}

/// Widens a part's value from the tree of its own chunks (width next_pow2(count)) to the part's
/// width S of the fixed tree: merge(x, T{}) once per level (fixed_tree.hpp: a node whose right
/// subtree is padding).
template <class T, class Merge>
T widen_to(T value, std::uint64_t count, std::uint64_t width, const Merge& merge) {
  for (std::uint64_t w = next_pow2(count); w < width; w *= 2) value = merge(value, T{});
  return value;
}

/// The team form of a backend's reduce from all of this rank's parts at once: parts(s) returns the
/// values of the parts [s.part_begin, s.part_end) of s = split_chunks(n_chunks, team, layout),
/// each the value of its chunks over the fixed tree, widened to the part's width S (widen_to); they
/// are gathered and merged over the tree of width W / S: bitwise the one-process value.
/// `all_parts` (may be null): every part's value, in part order (balance_team reads a count's).
/// T trivially copyable.
template <class T, class PartsFn, class Merge>
T team_reduce_parts(const communicator& team, std::uint64_t n_chunks, const PartsFn& parts, const Merge& merge,
                    const team_layout* layout = nullptr, std::vector<T>* all_parts = nullptr) {
  const team_split s = split_chunks(n_chunks, &team, layout);
  std::vector<unsigned char> payload;
  std::exception_ptr failure;
  try {
    const std::vector<T> mine = parts(s);
    MCUBES_EXPECTS(mine.size() == s.part_end - s.part_begin, "team reduction: ", mine.size(), " values for ",
                   s.part_end - s.part_begin, " parts");
    if (!mine.empty()) put_bytes(payload, mine.data(), mine.size());
  } catch (...) {
    failure = std::current_exception();
  }
  const auto all = team_exchange(team, failure, false, payload);
  std::vector<T> values(s.n_parts);
  std::size_t k = 0;
  for (const auto& m : all) {
    std::size_t at = 0;
    const std::size_t n = m.size() / sizeof(T);
    MCUBES_EXPECTS(k + n <= values.size(), "team exchange: more parts than the split has");
    take_bytes(m, at, values.data() + k, n);
    k += n;
  }
  MCUBES_EXPECTS(k == values.size(), "team exchange: fewer parts than the split has");
  T out{};
  if (s.n_parts != 0) out = fixed_tree_reduce(values.data(), s.n_parts, s.width / s.part_chunks, merge);
  if (all_parts != nullptr) *all_parts = std::move(values);
  return out;
}

/// The team form of a backend's reduce, part by part: part(first, count) computes the value of
/// chunks [first, first + count) over the fixed tree of width next_pow2(count) (team_reduce_parts).
template <class T, class PartFn, class Merge>
T team_reduce(const communicator& team, std::uint64_t n_chunks, const PartFn& part, const Merge& merge,
              const team_layout* layout = nullptr, std::vector<T>* all_parts = nullptr) {
  return team_reduce_parts<T>(
      team, n_chunks,
      [&](const team_split& s) {
        std::vector<T> v;
        for (std::uint64_t p = s.part_begin; p < s.part_end; ++p) {
          const std::uint64_t first = p * s.part_chunks;
          const std::uint64_t count = std::min(s.part_chunks, n_chunks - first);
          v.push_back(widen_to(part(first, count), count, s.part_chunks, merge));
        }
        return v;
      },
      merge, layout, all_parts);
}

}  // namespace mcubes

#pragma once
/// @file core/cube_counts.hpp
/// VEGAS+ adaptive stratification (G. P. Lepage, "Adaptive multidimensional integration: vegas
/// enhanced", J. Comput. Phys. 439 (2021) 110386, arXiv:2009.05112, section 3): the number of
/// samples of each sub-cube is redistributed, iteration after iteration, towards the sub-cubes
/// whose estimates vary most. Host and device code; written once for every backend.
///
/// The grid (make_adaptive_stratification): as vegas, a quarter of the calls is spread uniformly
/// (neval_frac = 0.75): g = floor(min(N/8, 2^24)^(1/d)) intervals per axis, m = g^d sub-cubes,
/// n_min = max(2, floor(N / (4 m))) samples in every sub-cube, and the rest, A = N - m n_min, is
/// allocated. The allocation's memory is 16 bytes per sub-cube (two arrays of shares), so m is
/// capped at 2^24 (256 MiB).
///
/// The rule (Lepage 2021, Eq. 20 with its damping; vegas before 6.1.1): after an adapting
/// iteration, sub-cube h carries
///   d_h = S_h^beta,   S_h^2 = n_h var_h = (s2 - s1^2 / n_h) / (n_h - 1),
/// the sample variance of f J in the sub-cube (var_h is the variance of its estimate I_h,
/// core/sampler.hpp, before the factor V/m), and the next iteration gives it
///   n_h = n_min + min(n_cap - n_min, floor(d_h * A / sum_h d_h))
/// samples (n_cap = max(50000, 8 N/m)); where the caps (or the floors) leave calls unused, the scale
/// A / sum_h d_h is raised until the counts use them (algorithm/vegas.hpp allocate_counts). beta = 1 is the optimal allocation n_h ~ S_h; beta < 1
/// damps it against the noise of S_h estimated from a few samples; beta = 0 spreads A uniformly.
/// Not vegas 6.1.1's (S_h^2 / n_h)^(beta/2): since that carries the last n_h, the allocation
/// oscillates from one iteration to the next (a sub-cube given many samples looks quiet and gets
/// few): on Lepage's Eq. (45) (three Gaussians on the diagonal of [0,1]^8, 2.5e5 calls) the
/// iteration errors alternate by a factor of about 3, and the allocation frozen after the last
/// adapting iteration may be the poor one. Nor the CIGAR/torchquad lineage's var^beta
/// (S_h^(2 beta)), which concentrates far more. The first iteration of a run, and any iteration after one whose d_h are
/// all 0, gives every sub-cube n_h = floor(N / m).
///
/// Determinism: d_h is computed with correctly rounded square roots and never-fused products only
/// (beta a multiple of 1/16: d_h = ((S_h^2)^(1/32))^(16 beta)), sum_h d_h over the fixed pairwise tree
/// of the backend's reduce (every backend: the same bits), and n_h from one rounded product and a
/// floor. So every backend, thread count, block size and device computes the same n_h. The samples
/// of sub-cube h have the indices h * n_cap + k, k < n_h (random.hpp keys the uniforms by index), so
/// a change of one sub-cube's count moves no other sub-cube's points.
///
/// Segments: the sums of a sub-cube are taken over segments of L consecutive samples, then over
/// the segments in order (core/sampler.hpp, sample_cubes), L a power of two with
/// L >= max(64, 2 floor(N/m)), a function of (d, N) only. A sub-cube of at most L samples (every
/// sub-cube of a first iteration) is one segment; the larger ones, together at most N samples, have
/// at most 2 N / L <= m segments, so that a backend that samples their segments in parallel needs
/// O(m) memory (backend/cuda/heavy_cubes.cuh).

#include <cmath>
#include <cstdint>

#include "../config.hpp"
#include "../error.hpp"
#include "fixed_tree.hpp"
#include "portable_math.hpp"
#include "stratification.hpp"

namespace mcubes {

/// Fraction of the calls of an iteration that VEGAS+ allocates (vegas's neval_frac).
inline constexpr double adaptive_calls_fraction = 0.75;
/// Most samples one sub-cube receives in an iteration (vegas's max_neval_hcube), unless 8 times
/// the average floor(N/m) is more (budgets beyond 2^27 calls, where m is capped).
inline constexpr std::uint64_t max_samples_per_cube = 50000;
/// Most sub-cubes of the VEGAS+ grid (2^24): its two arrays of shares take 16 bytes per sub-cube
/// (256 MiB at most, per integral), whatever the calls; beyond 2^27 calls n_min grows instead.
inline constexpr std::uint64_t max_adaptive_cubes = std::uint64_t(1) << 24;
/// The granularity of beta: d_h = (S_h^2)^(beta/2) is computed from (S_h^2)^(1/32) (five square roots).
inline constexpr int beta_steps = 16;

/// The per-sub-cube sample counts of one pass (a field of sampling_params). n_base == 0: the
/// uniform m-Cubes counts (p per sub-cube, sample index c * p + k). Otherwise sub-cube c has
/// count(c) samples with indices c * p + k (p = n_cap then, the index stride). Trivially copyable.
struct cube_counts {
  std::uint64_t n_base = 0;       ///< samples of every sub-cube (n_min, or floor(N/m) without shares)
  std::uint64_t n_extra_max = 0;  ///< n_cap - n_base
  double scale = 0;               ///< A / sum_h d_h (0: no shares)
  const double* share_in = nullptr;  ///< d_h of the last adapting iteration (null: none)
  double* share_out = nullptr;       ///< where this pass writes its d_h (null: nowhere)
  std::uint32_t beta16 = 12;         ///< 16 beta
  /// L, the samples of a segment (core/sampler.hpp, sample_cubes): a power of two >= 64 and at least
  /// twice floor(N/m) (stratification::segment_samples); 0: one segment per sub-cube.
  std::uint64_t segment = 0;

  MCUBES_HOST_DEVICE bool per_cube() const noexcept { return n_base != 0; }
  /// A pass of the uniform strategy: p samples per sub-cube and no shares written (sample_cubes
  /// may then run its uniform_counts form, core/sampler.hpp).
  MCUBES_HOST_DEVICE bool none() const noexcept { return n_base == 0 && share_out == nullptr; }
  /// Samples of sub-cube c (per_cube() only).
  MCUBES_HOST_DEVICE std::uint64_t count(std::uint64_t c) const {
    if (share_in == nullptr) return n_base;
    return count_of(share_in[c]);
  }
  /// Samples of a sub-cube whose share is d_h = `share` (share_in non-null): count(c) is
  /// count_of(share_in[c]).
  MCUBES_HOST_DEVICE std::uint64_t count_of(double share) const {
    const double t = portable::det_mul(share, scale);
    const std::uint64_t extra = t >= static_cast<double>(n_extra_max) ? n_extra_max : static_cast<std::uint64_t>(t);
    return n_base + extra;  // t >= 0: d_h >= 0 (never NaN, cube_share) and scale >= 0
  }
};

/// d_h = var^(beta/2) for beta = beta16 / 16 (var: the sub-cube's S_h^2): (var^(1/32))^beta16 by correctly rounded square roots
/// and never-fused products in a fixed order (bitwise the same on every backend). 0 for var <= 0
/// and for a NaN var (a sub-cube whose sums overflowed: the pass reports it); 1 for beta16 = 0.
MCUBES_HOST_DEVICE inline double cube_share(double var, std::uint32_t beta16) {
  if (!(var > 0) || !(var <= 1.7976931348623157e308)) return 0;  // 0, negative, NaN or +Inf
  if (beta16 == 0) return 1;
  double r = var;
  for (int i = 0; i < 5; ++i) r = std::sqrt(r);
  double d = 1, base = r;         // binary powering, lowest bit first
  for (std::uint32_t e = beta16; e != 0; e >>= 1) {
    if (e & 1u) d = portable::det_mul(d, base);
    base = portable::det_mul(base, base);
  }
  return d;
}

/// The chunk functor that sums the shares of one chunk's sub-cubes in index order (the leaves of
/// the fixed tree of a backend's reduce): sum_h d_h is reduce(n_chunks, share_sum_chunk, plus_merge).
struct share_sum_chunk {
  const double* share = nullptr;
  std::uint64_t n_cubes = 0, chunk_cubes = 1;
  MCUBES_HOST_DEVICE double operator()(std::uint64_t chunk) const {
    const std::uint64_t begin = chunk * chunk_cubes;
    const std::uint64_t end = begin + chunk_cubes < n_cubes ? begin + chunk_cubes : n_cubes;
    double s = 0;
    for (std::uint64_t c = begin; c < end; ++c) s = portable::det_add(s, share[c]);
    return s;
  }
};

/// The chunk functor of the evaluations of a pass: sum of count(c) over one chunk's sub-cubes
/// (a backend's count()).
struct count_sum_chunk {
  cube_counts counts;
  std::uint64_t n_cubes = 0, chunk_cubes = 1;
  MCUBES_HOST_DEVICE std::uint64_t operator()(std::uint64_t chunk) const {
    const std::uint64_t begin = chunk * chunk_cubes;
    const std::uint64_t end = begin + chunk_cubes < n_cubes ? begin + chunk_cubes : n_cubes;
    std::uint64_t s = 0;
    for (std::uint64_t c = begin; c < end; ++c) s += counts.count(c);
    return s;
  }
};

/// Whether a sum of the shares allows an allocation (positive and finite; otherwise every sub-cube
/// gets floor(N/m): algorithm/vegas.hpp, vegas_run::set_share_total).
MCUBES_HOST_DEVICE inline bool usable_share_total(double total) { return total > 0 && total - total == 0; }

/// The first scale of the counts, A / sum_h d_h with A = N - m n_min (the calls left after every
/// sub-cube's n_min), for a usable total of the shares.
MCUBES_HOST_DEVICE inline double first_count_scale(const stratification& st, double total) {
  return static_cast<double>(st.calls - st.n_cubes * st.min_samples_per_cube) / total;
}

/// One integral's VEGAS+ allocation, as algorithm/vegas.hpp's allocate_counts asks it of a
/// backend: its shares' sum (shares, when with_total; else the first scale is s0) and the search
/// of its counts' scale (counts; base = n_cubes n_base, target = the calls). Trivially copyable
/// (a backend copies many of them to the device: cuda_backend::allocate_counts_batch).
struct counts_request {
  share_sum_chunk shares;
  count_sum_chunk counts;
  stratification st;
  double s0 = 0;
  std::uint64_t base = 0, target = 0;
  int with_total = 0;
};

/// A scale of the counts and the evaluations at it (find_count_scale).
struct count_scale {
  double scale = 0;
  std::uint64_t count = 0;
};

/// The water-filling search of the counts' scale (algorithm/vegas.hpp, allocate_counts): the
/// counts at scale s, C(s) = sum_c count(c) (count_at(s), a backend's exact integer count), grow
/// with s; C(s0) = n0 at the first guess s0 = A / sum_h d_h; C(0) = base (every sub-cube n_base).
/// Returns the largest scale tried whose counts stay within `target` (the calls) with its count,
/// stopping once that count is within 0.1 % of the target (or once a step of 2^100 adds no sample:
/// every sub-cube that can take samples is capped). With E(s) = C(s) - base the allocated part and W = target - base:
///  - below the target, the first try extrapolates E linearly to W, 5 % beyond it (at least 1/64
///    more than s, at most 8 times s); each later one follows the local power law of E through
///    its last two points (E ~ s^k: ln s' = ln s + ln(1.05 W / E) / k, at most 2^100 times s), or
///    where E did not grow, 8 times the last step's factor squared. Where the shares span many
///    orders of magnitude (a narrow peak seen on a coarse map) E grows far more slowly than s and
///    the linear rule alone crept towards the target in up to 50 tries;
///  - once a try exceeds the target, regula falsi on the bracket with the Illinois rule (the
///    retained end's distance halved after two steps on the same side): on ln E against ln s while
///    the bracket spans more than a factor 2 and both ends have E > 0, on C against s after that,
///    falling back to the middle (geometric, then arithmetic) where the interpolation leaves the
///    bracket; at most 64 tries in all.
/// Every try is a function of the counts before it, so every backend tries the same scales.
/// Typically 2-6 tries (the bisection it replaces took up to 30, one device round trip each); the
/// second allocation of the m-Cubes suite's 9-D narrow Gaussian (fB) took 52 with the linear rule
/// alone, 8 now (bench/results/2026-12-02-count-search.md).
/// Host and device: the CUDA backend runs it on every thread of one cooperative grid
/// (backend/cuda/allocate.cuh), each try a grid-wide exact count, every thread on the same path;
/// the arithmetic is IEEE division, never-fused products and sums and portable::det_log / det_exp
/// (core/portable_math.hpp), so host and device try the same scales.
#if defined(__CUDACC__)
#pragma nv_exec_check_disable
#endif
template <class CountAt>
MCUBES_HOST_DEVICE count_scale find_count_scale(double s0, std::uint64_t n0, std::uint64_t base, std::uint64_t target,
                                                CountAt&& count_at) {
  using portable::det_add;
  using portable::det_exp;
  using portable::det_log;
  using portable::det_mul;
  using portable::det_sub;
  const std::uint64_t close = target - target / 1024;  // within 0.1 %: good enough
  count_scale lo{s0, n0};
  if (lo.count >= close || !(s0 > 0)) return lo;
  count_scale hi{0, 0};
  bool bracket = lo.count > target;  // the first guess may overshoot (floors never add; kept general)
  if (bracket) {
    hi = lo;
    lo = count_scale{0, base};
  }
  const auto extra_of = [&](std::uint64_t n) { return static_cast<double>(n - (n > base ? base : n)); };
  const double want = extra_of(target);
  int tries = 0;
  count_scale prev{0, 0};  // the try below the target before lo (scale 0: none yet)
  double last_factor = 1;  // s / lo.scale of the last step below the target
  while (!bracket && tries < 64) {
    const double extra = extra_of(lo.count);
    const double extra_prev = prev.scale > 0 ? extra_of(prev.count) : 0;
    double s;
    if (prev.scale > 0 && extra > extra_prev && extra_prev > 0) {
      // the local power law E ~ s^k through the last two tries, extrapolated 5 % beyond W
      const double k = det_sub(det_log(extra), det_log(extra_prev)) / det_log(lo.scale / prev.scale);
      double step = det_log(det_mul(want, 1.05) / extra) / k;  // ln(s' / s)
      if (!(step <= 69.3)) step = 69.3;                         // at most about 2^100 times s
      s = det_mul(lo.scale, det_exp(step));
    } else if (prev.scale > 0 && extra == extra_prev) {  // E did not grow: a wider step
      const double f = det_mul(det_mul(last_factor, last_factor), 8.0);
      s = det_mul(lo.scale, f <= 0x1p100 ? f : 0x1p100);
    } else {  // the first try (or E grew from 0): linear
      s = extra > 0 ? lo.scale * (want / extra) * 1.05 : 8 * lo.scale;
      if (!(s <= 8 * lo.scale)) s = 8 * lo.scale;
    }
    if (!(s >= lo.scale * (1 + 1.0 / 64))) s = lo.scale * (1 + 1.0 / 64);
    if (!(s - s == 0)) break;  // past the largest double: keep lo
    const std::uint64_t n = count_at(s);
    ++tries;
    if (n > target) {
      hi = count_scale{s, n};
      bracket = true;
      break;
    }
    const double factor = s / lo.scale;
    const bool grew = n != lo.count;
    prev = lo;
    lo = count_scale{s, n};
    last_factor = factor;
    // no growth over a step of 2^100: every sub-cube that can take samples is capped
    if ((!grew && factor >= 0x1p100) || lo.count >= close) return lo;
  }
  // Illinois regula falsi: x the abscissa, f the signed distance to the target, in log or linear form
  int side = 0;
  bool logs = false;
  double x_lo = 0, x_hi = 0, f_lo = 0, f_hi = 0;
  const auto set_form = [&](bool use_logs) {
    logs = use_logs;
    side = 0;
    if (logs) {
      x_lo = det_log(lo.scale), x_hi = det_log(hi.scale);
      f_lo = det_sub(det_log(extra_of(lo.count)), det_log(want)), f_hi = det_sub(det_log(extra_of(hi.count)), det_log(want));
    } else {
      x_lo = lo.scale, x_hi = hi.scale;
      f_lo = static_cast<double>(lo.count) - static_cast<double>(target);  // < 0
      f_hi = static_cast<double>(hi.count) - static_cast<double>(target);  // > 0
    }
  };
  const auto wide = [&]() { return lo.scale > 0 && hi.scale > 2 * lo.scale && extra_of(lo.count) > 0; };
  if (bracket) set_form(wide());
  while (bracket && tries < 64 && lo.count < close) {
    if (logs && !wide()) set_form(false);
    double x = det_add(x_lo, det_mul(x_hi - x_lo, -f_lo / (f_hi - f_lo)));
    if (!(x > x_lo && x < x_hi)) x = logs ? det_add(x_lo, det_mul(x_hi - x_lo, 0.5)) : 0.5 * (x_lo + x_hi);
    double s = logs ? det_exp(x) : x;
    if (!(s > lo.scale && s < hi.scale)) s = 0.5 * (lo.scale + hi.scale);
    if (!(s > lo.scale && s < hi.scale)) break;  // the bracket is two adjacent doubles
    const std::uint64_t n = count_at(s);
    ++tries;
    const double f = logs ? (n > base ? det_sub(det_log(extra_of(n)), det_log(want)) : -1e300)
                          : static_cast<double>(n) - static_cast<double>(target);
    if (n <= target) {
      lo = count_scale{s, n};
      x_lo = logs ? det_log(s) : s;
      f_lo = f;
      if (side == -1) f_hi *= 0.5;
      side = -1;
    } else {
      hi = count_scale{s, n};
      x_hi = logs ? det_log(s) : s;
      f_hi = f;
      if (side == 1) f_lo *= 0.5;
      side = 1;
    }
  }
  return lo;
}

/// The sub-cube grid of VEGAS+ for a d-dimensional problem with maxcalls evaluations per iteration
/// (file comment): g = floor(min(maxcalls/8, max_adaptive_cubes)^(1/d)) (at least 1), m = g^d,
/// samples_per_cube = the index stride n_cap = max(max_samples_per_cube, 8 floor(maxcalls/m)),
/// min_samples_per_cube = n_min = max(2, floor(maxcalls/(4m))), segment_samples = L (file comment),
/// chunks as make_stratification's for maxcalls/m samples per sub-cube.
/// @throws invalid_input if d < 1 or maxcalls < 2.
inline stratification make_adaptive_stratification(int dim, std::uint64_t maxcalls, std::uint64_t min_chunk_samples = 0) {
  std::uint64_t quarter = maxcalls / 4 >= 2 ? maxcalls / 4 : 2;  // g from (maxcalls/8)^(1/d): make_stratification halves
  if (quarter > 2 * max_adaptive_cubes) quarter = 2 * max_adaptive_cubes;
  stratification s = make_stratification(dim, quarter, 0);
  const std::uint64_t m = s.n_cubes;
  const std::uint64_t avg = maxcalls / m >= 2 ? maxcalls / m : 2;
  std::uint64_t n_min = maxcalls / (4 * m);
  if (n_min < 2) n_min = 2;
  s.min_samples_per_cube = n_min;
  s.calls = maxcalls;
  s.samples_per_cube = max_samples_per_cube > 8 * (maxcalls / m) ? max_samples_per_cube : 8 * (maxcalls / m);
  s.segment_samples = 64;
  while (s.segment_samples < 2 * (maxcalls / m)) s.segment_samples *= 2;
  s.chunk_cubes = (m + max_chunks - 1) / max_chunks;
  const std::uint64_t for_samples = (min_chunk_samples + avg - 1) / avg;
  if (for_samples > s.chunk_cubes) s.chunk_cubes = for_samples < m ? for_samples : m;
  s.n_chunks = (m + s.chunk_cubes - 1) / s.chunk_cubes;
  return s;
}

}  // namespace mcubes

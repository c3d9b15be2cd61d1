#pragma once
/// @file sampler.hpp
/// The serial body of V-Sample and V-Sample-No-Adjust (Sakiotis et al. 2022, Algorithm 3) for one chunk of
/// sub-cubes: the unit of work that every backend hands to one thread. Host and device code.
///
/// For sample k of sub-cube c (global index i = c*p + k) with uniform u from the stream contract
/// (random.hpp): y_j = (c_j + u_j) * fl(1/g) (a product, not a division: cheaper on GPUs, and the
/// same bits on every backend; y_j may round to 1, which maps to the upper edge), x_j = a_j + (b_j - a_j) * map_j(y_j), weight
/// J(y) * V / (m p). Per sub-cube, with s1 = sum f J and s2 = sum (f J)^2 over its p samples:
///   I_c = s1/p,   var_c = (s2 - s1 I_c) / (p (p-1))   (negative rounding clamped at 0; NaN kept),
/// and the iteration estimate is I = V/m sum_c I_c with variance V^2/m^2 sum_c var_c (stratified
/// variance). V-Sample also adds (f J)^2, quantized (reduction.hpp), to the bin of x_j on each axis.

#include <cmath>
#include <cstdint>
#include <type_traits>
#include <vector>

#include "../config.hpp"
#include "../point.hpp"
#include "../random.hpp"
#include "adaptive_map.hpp"
#include "cube_counts.hpp"
#include "reduction.hpp"
#include "stratification.hpp"

namespace mcubes {

/// Everything a sampling thread needs for one iteration. Trivially copyable (kernel parameter).
template <int D>
struct sampling_params {
  double lower[D];               ///< region lower bounds a_j
  double width[D];               ///< region widths b_j - a_j
  std::uint64_t g = 0;           ///< intervals per axis
  double inv_g = 1;              ///< 1.0 / g (rounded once, on the host): y_j = (c_j + u_j) * inv_g
  std::uint64_t n_cubes = 0;     ///< m
  std::uint64_t p = 0;           ///< samples per sub-cube (VEGAS+: the index stride, counts below)
  std::uint64_t chunk_cubes = 0; ///< sub-cubes per chunk
  std::uint64_t seed = 0;
  std::uint32_t iteration = 0;
  double bin_scale = 1;          ///< power-of-two fixed-point scale of bin contributions
  cube_counts counts;            ///< VEGAS+ per-sub-cube counts (core/cube_counts.hpp); default: p each
  /// Axes whose bins V-Sample accumulates: D, or 1 for m-Cubes1D (vegas_options::symmetric_map:
  /// the paper's one-map variant histograms axis 0 only; the map is shared by every axis).
  int bin_axes = D;
  /// The exact reciprocals of p and p (p - 1) where they are powers of two, else 0
  /// (portable::count_reciprocal; set with p by set_samples_per_cube): the uniform grid's sub-cubes
  /// then multiply instead of divide (finish_uniform_cube), the same bits. 0 divides. Derived from
  /// p: change p through set_samples_per_cube only (vegas_run does; a p written directly after it
  /// would leave them stale, while a p written directly on a fresh struct leaves them 0: divisions).
  double p_inv = 0;
  double p_var_inv = 0;
  /// Sets p and its reciprocals.
  MCUBES_HOST_DEVICE void set_samples_per_cube(std::uint64_t samples) {
    p = samples;
    const double pd = static_cast<double>(samples);
    p_inv = portable::count_reciprocal(pd);
    p_var_inv = portable::count_reciprocal(pd * (pd - 1));
  }
};

/// Per-chunk partial results. Sums are over the chunk's sub-cubes in index order.
struct chunk_partial {
  double estimate = 0;                    ///< sum_c I_c (unscaled)
  double variance = 0;                    ///< sum_c var_c (unscaled)
  std::uint64_t n_nonzero = 0;            ///< samples with f != 0
  /// Smallest sample index where f is non-finite or f J or (f J)^2 overflows (the sample adds 0)
  std::uint64_t first_non_finite = ~std::uint64_t(0);
  double non_finite_value = 0;            ///< the value f returned at that sample (finite: an overflow)
  double max_contribution = 0;            ///< max over samples of (f J)^2 (V-Sample only)
};

/// Results of one sampling pass, before scaling by the region volume.
struct iteration_sums {
  double estimate = 0;          ///< sum over sub-cubes of I_c (fixed tree)
  double variance = 0;          ///< sum over sub-cubes of var_c (fixed tree)
  chunk_partial flags;          ///< n_nonzero, first_non_finite, max_contribution
  /// Highest bin level of the pass (top_bin_level of its largest term; V-Sample only): 0 unless
  /// some term reached 2^63 units of the scale.
  int top_level = 0;
  /// (top_level + 1) * D * n_bins exact fixed-point sums, level-major: level L's D * n_bins sums
  /// (axis-major) in units of 2^(40 L) (V-Sample on the CPU backend; the CUDA backend keeps them
  /// on the device).
  std::vector<bin_accumulator> bins;
};

/// A stop poll that never stops (the device's, and every caller that does not abandon passes).
struct no_poll {
  static constexpr bool enabled = false;
  MCUBES_HOST_DEVICE bool operator()() const { return false; }
};

/// Bin sink that discards contributions: selects V-Sample-No-Adjust at compile time.
struct no_bins {
  static constexpr bool enabled = false;
  MCUBES_HOST_DEVICE void add(int, int, std::uint64_t) {}
  MCUBES_HOST_DEVICE void add_level(int, int, int, std::uint64_t) {}
};

/// The uniforms of the Vegas stream (random.hpp), one sample_stream per sample. The CUDA kernels
/// use philox_schedule instead (the same numbers, with the key schedule precomputed).
struct vegas_stream_uniforms {
  std::uint64_t seed;
  std::uint32_t iteration;
  template <int N>
  MCUBES_HOST_DEVICE void fill(std::uint64_t index, double (&u)[N]) const {
    sample_stream(seed, stream_id::vegas, iteration, index).fill(u);
  }
};

/// Computes the point of sample `index` (sub-cube index / p, sample index % p): fills x (region
/// coordinates) and bins, returns the jacobian J of the map (region volume not included).
/// The sub-cube coordinates come as doubles (exact: g <= 2^49). `uni` gives the sample's uniforms:
/// vegas_stream_uniforms{sp.seed, sp.iteration} or the equal philox_schedule of the Vegas stream.
template <int D, class U>
MCUBES_HOST_DEVICE inline double make_sample(const sampling_params<D>& sp, const map_view<D>& map, const U& uni,
                                             const double (&coord)[D], std::uint64_t index, point<D>& x,
                                             int (&bin)[D]) {
  double u[D];
  uni.fill(index, u);
  double jac = 1.0;
  for (int j = 0; j < D; ++j) {
    const double y = (coord[j] + u[j]) * sp.inv_g;
    double xu;
    bin[j] = map.map(j, y, xu, jac);
    x[j] = sp.lower[j] + sp.width[j] * xu;
  }
  return jac;
}

/// make_sample with the Vegas stream's uniforms from sample_stream.
template <int D>
MCUBES_HOST_DEVICE inline double make_sample(const sampling_params<D>& sp, const map_view<D>& map,
                                             const double (&coord)[D], std::uint64_t index, point<D>& x,
                                             int (&bin)[D]) {
  return make_sample<D>(sp, map, vegas_stream_uniforms{sp.seed, sp.iteration}, coord, index, x, bin);
}

/// make_sample with integer sub-cube coordinates.
template <int D>
MCUBES_HOST_DEVICE inline double make_sample(const sampling_params<D>& sp, const map_view<D>& map,
                                             const std::uint64_t (&coord)[D], std::uint64_t index, point<D>& x,
                                             int (&bin)[D]) {
  double c[D];
  for (int j = 0; j < D; ++j) c[j] = static_cast<double>(coord[j]);
  return make_sample<D>(sp, map, c, index, x, bin);
}

/// Sub-cube coordinates c_j = floor(c / g^j) mod g.
template <int D>
MCUBES_HOST_DEVICE inline void cube_coordinates(std::uint64_t cube, std::uint64_t g, std::uint64_t (&coord)[D]) {
  if (cube <= 0xFFFFFFFFull && g <= 0xFFFFFFFFull) {  // the same quotients by 32-bit division (a 64-bit one is a
                                                       // ~70-instruction subroutine on GPUs)
    std::uint32_t c = static_cast<std::uint32_t>(cube);
    const std::uint32_t g32 = static_cast<std::uint32_t>(g);
    for (int j = 0; j < D; ++j) {
      coord[j] = c % g32;
      c /= g32;
    }
    return;
  }
  for (int j = 0; j < D; ++j) {
    coord[j] = cube % g;
    cube /= g;
  }
}

namespace detail {
template <class F, class = void>
struct sample_indexed : std::false_type {};
template <class F>
struct sample_indexed<F, std::void_t<decltype(F::sample_indexed)>> : std::bool_constant<static_cast<bool>(F::sample_indexed)> {};
}  // namespace detail

/// The integrand's value at sample `index`, whose point is x: f(x), or f.at_sample(x, index) for a
/// functor that declares `static constexpr bool sample_indexed = true` (the CUDA array path's point
/// writer and value reader, backend/cuda/array_path.cuh, which store or look up by sample index).
/// The value type is the integrand's (double, or values<N> for core/vector_sampler.hpp).
template <int D, class F>
MCUBES_HOST_DEVICE inline auto sample_value(const F& f, const point<D>& x, std::uint64_t index) {
  if constexpr (detail::sample_indexed<F>::value) {
    return f.at_sample(x, index);
  } else {
    (void)index;
    return f(x);
  }
}

/// Integer type of sub-cube coordinates in sample_cubes: for D >= 2, g^D = m < 2^64 gives
/// g < 2^32, so 32-bit integers hold them (half the registers of doubles on a GPU: fewer spills in
/// the V-Sample kernels); for D = 1, g may reach 2^49 and doubles (exact) are used.
template <int D>
using cube_coord_t = std::conditional_t<(D >= 2), std::uint32_t, double>;

/// The coordinates of sub-cube `cube` (cube_coordinates) as cube_coord_t<D>.
template <int D>
MCUBES_HOST_DEVICE inline void cube_start(std::uint64_t cube, std::uint64_t g, cube_coord_t<D> (&coord)[D]) {
  std::uint64_t ic[D];
  cube_coordinates<D>(cube, g, ic);
  for (int j = 0; j < D; ++j) coord[j] = static_cast<cube_coord_t<D>>(ic[j]);
}

/// Precomputed sub-cubes for sample_cubes: none (every backend's serial passes).
struct no_precomputed_cubes {
  static constexpr bool enabled = false;
  MCUBES_HOST_DEVICE std::uint64_t first(std::uint64_t) const { return 0; }
  MCUBES_HOST_DEVICE bool precomputed(std::uint64_t) const { return false; }
  MCUBES_HOST_DEVICE double mean(std::uint64_t) const { return 0; }
  MCUBES_HOST_DEVICE double var(std::uint64_t) const { return 0; }
};

/// One sample of sample_segment (see there), sample `index` of the sub-cube whose coordinates (as
/// doubles) are cd: add(f J, (f J)^2) (both 0 for a non-finite value, which is recorded in `out`),
/// out.n_nonzero, and with enabled `bins` out.max_contribution and the bin terms
/// (f J)^2 * term_scale. The serial sums of a segment add f J and (f J)^2 in index order; a backend
/// may compute the samples of a segment in parallel and add them in that order (the CUDA backend's
/// heavy sub-cubes, backend/cuda/heavy_cubes.cuh): the same bits.
template <int D, class F, class Bins, class U, class Add>
MCUBES_HOST_DEVICE inline void sample_term(const F& f, const sampling_params<D>& sp, const map_view<D>& map, const U& uni,
                                           const double (&cd)[D], std::uint64_t index, double term_scale, Bins& bins,
                                           chunk_partial& out, const Add& add) {
  point<D> x;
  int bin[D];
  const double jac = make_sample<D>(sp, map, uni, cd, index, x, bin);
  double v = sample_value<D>(f, x, index);
  double fj = v * jac;
  double fj2 = fj * fj;
  if (!(fj2 - fj2 == 0)) {  // f NaN or +-Inf, or f J or (f J)^2 overflows: recorded, never summed
    if (index < out.first_non_finite) out.first_non_finite = index, out.non_finite_value = v;
    v = fj = fj2 = 0;
  }
  if (v != 0) ++out.n_nonzero;
  add(fj, fj2);
  if constexpr (Bins::enabled) {
    if (fj2 > out.max_contribution) out.max_contribution = fj2;
    add_bin_term<D>(bins, fj2 * term_scale, quantization_dither(index), [&](int j) { return bin[j]; }, sp.bin_axes);
  }
}

/// Samples indices [first, last) of one sub-cube whose coordinates (as doubles) are cd, the body of
/// sample_cubes for one segment (see there): adds f J to t1 and (f J)^2 to t2 serially in index
/// order (from the caller's values, 0 for a new segment), each bin term (f J)^2 * term_scale to
/// `bins`, and the flags to `out` (sample_term). `cube_first` is the sub-cube's first index (the
/// poll's rhythm). Returns false when the poll asked to stop (the caller abandons the pass).
template <int D, class F, class Bins, class U, class Poll>
MCUBES_HOST_DEVICE inline bool sample_segment(const F& f, const sampling_params<D>& sp, const map_view<D>& map, const U& uni,
                                              const double (&cd)[D], std::uint64_t first, std::uint64_t last,
                                              std::uint64_t cube_first, double term_scale, Bins& bins, chunk_partial& out,
                                              double& t1, double& t2, const Poll& poll) {
  for (std::uint64_t index = first; index != last; ++index) {
    sample_term<D>(f, sp, map, uni, cd, index, term_scale, bins, out, [&](double fj, double fj2) {
      t1 += fj;
      t2 += fj2;
    });
    if constexpr (Poll::enabled) {
      if (((index - cube_first) & 63u) == 63u && poll()) return false;
    }
  }
  return true;
}

/// The counts a sample_cubes instantiation serves: any_counts reads sp.counts at run time (VEGAS+
/// per-cube counts, shares, segments; or uniform); uniform_counts is for passes with
/// sp.counts.none() only (the uniform strategy), p samples per sub-cube with no per-cube branch in
/// the loop: the same arithmetic, so the same bits, as any_counts on such a pass. The CUDA kernels
/// choose the form per pass (a sub-cube of the uniform grid has few samples, e.g. 2: the per-cube
/// branches of any_counts cost ~8 % of V-Sample there).
struct any_counts {
  static constexpr bool uniform_only = false;
};
struct uniform_counts {
  static constexpr bool uniform_only = true;
};

/// A sub-cube's estimate and variance from its sums (file comment): I_c = s1/n,
/// var_c = (s2 - s1 I_c) / (n (n-1)) (negative rounding clamped at 0; NaN kept); with
/// counts.share_out set, writes d_c = cube_share(n var_c, beta16) there (core/cube_counts.hpp).
struct cube_estimate {
  double mean, var;
};
MCUBES_HOST_DEVICE inline cube_estimate finish_cube(double s1, double s2, double pd, const cube_counts& counts, std::uint64_t c) {
  const double mean = s1 / pd;
  double var = (s2 - s1 * mean) / (pd * (pd - 1));
  if (var <= 0) var = 0;  // rounding; a NaN (inf - inf: sums that overflow) stays NaN and is reported
  if (counts.share_out != nullptr) counts.share_out[c] = cube_share(portable::det_mul(var, pd), counts.beta16);
  return {mean, var};
}

/// finish_cube for a sub-cube of the uniform grid (sp.p samples, no share; sample_cubes'
/// uniform_counts form): s1 * sp.p_inv and
/// (s2 - s1 I_c) * sp.p_var_inv where those reciprocals are set (exact powers of two), else the
/// divisions; the same bits as finish_cube (portable::count_reciprocal). The reciprocals come with
/// the launch's parameters, so a kernel holds no register for them across its sample loop (the
/// power-of-two test done in the kernel, hoisted out of the loop, cost a V-Sample kernel 16 bytes
/// of spills).
template <int D>
MCUBES_HOST_DEVICE inline cube_estimate finish_uniform_cube(double s1, double s2, double pd, const sampling_params<D>& sp) {
  const double mean = sp.p_inv != 0 ? portable::det_mul(s1, sp.p_inv) : s1 / pd;
  const double dev = s2 - s1 * mean;
  double var = sp.p_var_inv != 0 ? portable::det_mul(dev, sp.p_var_inv) : dev / (pd * (pd - 1));
  if (var <= 0) var = 0;  // as finish_cube
  return {mean, var};
}

/// Processes sub-cubes [begin, end) serially (V-Sample or No-Adjust, see the file comment), the
/// partial of a chunk. With VEGAS+ counts (sp.counts.per_cube(), core/cube_counts.hpp) sub-cube c has
/// n_c = sp.counts.count(c) samples of indices c*p + k, k < n_c, its I_c and var_c use n_c for p,
/// each bin term is (f J)^2 * (bin_scale / n_c) (the sample's share of the sub-cube's volume: the
/// bins estimate the integral of (f J)^2 over each increment however the samples are spread), and
/// sp.counts.share_out, when set, receives d_c = cube_share(n_c var_c, beta16).
/// Segments (VEGAS+ only): the samples of sub-cube c are cut into segments of L =
/// sp.counts.segment consecutive indices (the last may be shorter); s1 and s2 of the sub-cube are
/// the serial sums, in segment order, of each segment's serial sums (sample_segment). A sub-cube of
/// at most L samples is one segment: its plain serial sums. The rule lets a backend sample the
/// segments of a large sub-cube in parallel and combine them in the same order (the CUDA
/// backend's heavy sub-cubes, backend/cuda/heavy_cubes.cuh), with the same bits.
/// `coord` holds the coordinates of sub-cube `begin` on entry (cube_start) and is stepped by an odometer (axis 0 fastest: no integer division) from sub-cube to sub-cube; on
/// return it holds those of sub-cube `end` (the coordinates past the last sub-cube, m, wrap to 0),
/// so that a thread that samples consecutive chunks divides only once. The same values as
/// cube_coordinates for every sub-cube, so the same bits.
/// Bins: a sink with `static constexpr bool enabled` and `add(axis, bin, quantized)`. Uniforms:
/// `uni` (see make_sample). Poll (the CPU backend's stop request; no_poll elsewhere): with
/// `static constexpr bool enabled = true`, called after every 64th sample of a sub-cube; when it
/// returns true the partial is returned unfinished (the caller abandons the pass whole).
/// Pre (no_precomputed_cubes, or the CUDA backend's heavy sub-cubes): the sub-cubes for which
/// pre.precomputed(n_c) holds are not sampled here: their I_c, var_c are pre.mean(h), pre.var(h),
/// h counting them from pre.first(begin) in index order (their samples, bins, flags and shares
/// come from the backend's own launches, with the segment rule above).
template <int D, class F, class Bins, class U, class Poll = no_poll, class Pre = no_precomputed_cubes, class Counts = any_counts>
MCUBES_HOST_DEVICE inline chunk_partial sample_cubes(const F& f, const sampling_params<D>& sp, const map_view<D>& map,
                                                     std::uint64_t begin, std::uint64_t end, cube_coord_t<D> (&coord)[D],
                                                     Bins& bins, const U& uni, const Poll& poll = Poll{},
                                                     const Pre& pre = Pre{}, Counts = Counts{}) {
  chunk_partial out;
  const bool per_cube = !Counts::uniform_only && sp.counts.per_cube();
  const cube_counts no_counts{};  // uniform_counts: no shares to write (sp.counts.none())
  const cube_counts& counts = Counts::uniform_only ? no_counts : sp.counts;
  const double pd_uniform = static_cast<double>(sp.p);
  const cube_coord_t<D> gc = static_cast<cube_coord_t<D>>(sp.g);
  std::uint64_t h = pre.first(begin);
  for (std::uint64_t c = begin; c < end; ++c) {
    const std::uint64_t n = per_cube ? sp.counts.count(c) : sp.p;
    cube_estimate ce;
    if (Pre::enabled && !Counts::uniform_only && per_cube && pre.precomputed(n)) {
      ce.mean = pre.mean(h);
      ce.var = pre.var(h);
      ++h;
    } else {
      double cd[D];  // converted exactly to double once per sub-cube
      for (int j = 0; j < D; ++j) cd[j] = static_cast<double>(coord[j]);
      const double pd = per_cube ? static_cast<double>(n) : pd_uniform;
      const double term_scale = per_cube ? sp.bin_scale / pd : sp.bin_scale;  // uniform: bin_scale itself
      const std::uint64_t first = c * sp.p, last = first + n;  // sample indices c*p + k, k < n
      const std::uint64_t seg = per_cube && sp.counts.segment != 0 ? sp.counts.segment : n;
      double s1 = 0, s2 = 0;
      if (n <= seg) {  // one segment: its sums are the sub-cube's (no second pair of sums live: registers)
        if (!sample_segment<D>(f, sp, map, uni, cd, first, last, first, term_scale, bins, out, s1, s2, poll))
          return out;  // abandoned: the caller discards it
      } else {
        for (std::uint64_t s0 = first; s0 != last;) {
          const std::uint64_t s_end = last - s0 > seg ? s0 + seg : last;
          double t1 = 0, t2 = 0;
          if (!sample_segment<D>(f, sp, map, uni, cd, s0, s_end, first, term_scale, bins, out, t1, t2, poll))
            return out;
          s1 += t1;
          s2 += t2;
          s0 = s_end;
        }
      }
      // the uniform_counts form (the uniform grid's kernels) multiplies by the pass's reciprocals;
      // any_counts divides (no per-sub-cube branch between the two in VEGAS+'s loops); the same bits
      if constexpr (Counts::uniform_only)
        ce = finish_uniform_cube<D>(s1, s2, pd, sp);
      else
        ce = finish_cube(s1, s2, pd, counts, c);
    }
    out.estimate += ce.mean;
    out.variance += ce.var;
    for (int j = 0; j < D; ++j) {  // odometer step to the next sub-cube
      coord[j] += 1;
      if (coord[j] < gc) break;
      coord[j] = 0;
    }
  }
  return out;
}

/// Processes chunk `chunk` (sub-cubes [chunk*chunk_cubes, min(m, (chunk+1)*chunk_cubes))) serially
/// (sample_cubes; one division per axis per chunk for its first sub-cube's coordinates).
template <int D, class F, class Bins, class U, class Poll = no_poll, class Pre = no_precomputed_cubes, class Counts = any_counts>
MCUBES_HOST_DEVICE inline chunk_partial sample_chunk(const F& f, const sampling_params<D>& sp, const map_view<D>& map,
                                                     std::uint64_t chunk, Bins& bins, const U& uni, const Poll& poll = Poll{},
                                                     const Pre& pre = Pre{}, Counts counts_form = Counts{}) {
  const std::uint64_t begin = chunk * sp.chunk_cubes;
  std::uint64_t end = begin + sp.chunk_cubes;
  if (end > sp.n_cubes) end = sp.n_cubes;
  cube_coord_t<D> coord[D] = {};
  if (begin < end) cube_start<D>(begin, sp.g, coord);
  return sample_cubes<D>(f, sp, map, begin, end, coord, bins, uni, poll, pre, counts_form);
}

/// sample_chunk with the Vegas stream's uniforms from sample_stream.
template <int D, class F, class Bins>
MCUBES_HOST_DEVICE inline chunk_partial sample_chunk(const F& f, const sampling_params<D>& sp, const map_view<D>& map,
                                                     std::uint64_t chunk, Bins& bins) {
  return sample_chunk<D>(f, sp, map, chunk, bins, vegas_stream_uniforms{sp.seed, sp.iteration});
}

/// Merges the non-summed fields of partial `b` into `a` (order-independent: min, max, integer sum).
MCUBES_HOST_DEVICE inline void merge_flags(chunk_partial& a, const chunk_partial& b) {
  a.n_nonzero += b.n_nonzero;
  if (b.first_non_finite < a.first_non_finite) a.first_non_finite = b.first_non_finite, a.non_finite_value = b.non_finite_value;
  if (b.max_contribution > a.max_contribution) a.max_contribution = b.max_contribution;
}

}  // namespace mcubes

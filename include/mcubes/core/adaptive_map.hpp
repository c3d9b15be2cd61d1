#pragma once
/// @file adaptive_map.hpp
/// The Vegas adaptive map (Lepage 1978, J. Comput. Phys. 27:192; Sakiotis et al. 2022 section 3): on each axis,
/// n_bins bins with edges 0 = e_0 < e_1 <= ... <= e_n = 1 in unit coordinates. A uniform y in (0,1)
/// maps to bin b = floor(y n) and to x = e_b + (e_{b+1} - e_b)(y n - b), with jacobian
/// J = n (e_{b+1} - e_b). Adaptation moves the edges so that each bin holds an equal share of the
/// damped, smoothed bin contributions. Edge storage is axis-major: edges[j*(n+1) + k].

#include <cmath>
#include <cstdint>
#include <vector>

#include "../config.hpp"
#include "../error.hpp"
#include "portable_math.hpp"
#include "reduction.hpp"

namespace mcubes {

/// The steps of one axis's adaptation (adaptive_map::adapt_axis), as functions of one element so
/// that the host (serially) and the device (one thread per element, backend/cuda/adapt_kernels.cuh)
/// compute the same bits. What keeps them equal:
///  - S = sum d_k is the fixed pairwise tree (reduction.hpp) on both;
///  - logarithms and powers are portable::det_log/det_pow, never-fused products (portable_math.hpp);
///  - the damped weights r_k are quantized to integers q_k = max(1, floor(r_k / r_max 2^s)) with
///    s = 62 - ceil(log2 n), so their prefix sums P_k are exact 64-bit integers (< 2^62) in any
///    order of summation; the relative resolution 2^-s (<= 2^-42) is far below the statistical noise
///    of the contributions;
///  - new edge i comes from its own target R i / n (R = P_{n-1}) by a search over P, and the edges
///    are made monotone by a prefix maximum (order-independent), not by a serial clamp;
///  - a defensive floor (floor_weight) is an integer function of the exact total of the q_k and of
///    one old bin's width: the same on both.
namespace map_adaptation {

/// Smallest relative contribution of a bin in the damping (vegas: TINY).
inline constexpr double min_share = 1e-300;

/// Smoothed contribution d_k of bin k of n >= 2 (step 1 of adapt_axis).
MCUBES_HOST_DEVICE inline double smoothed(const double* c, int k, int n) {
  if (k == 0) return portable::det_add(c[0], c[1]) / 2;
  if (k == n - 1) return portable::det_add(c[n - 2], c[n - 1]) / 2;
  return portable::det_add(portable::det_add(c[k - 1], c[k]), c[k + 1]) / 3;
}

/// Whether the total S of the smoothed contributions allows adaptation (positive and finite).
MCUBES_HOST_DEVICE inline bool usable_total(double S) { return S > 0 && S - S == 0; }

/// Damped weight r = ((1 - f)/ln(1/f))^alpha of a bin with smoothed contribution d, f = max(d/S, 1e-300).
/// Empty bins keep the weight of a relative contribution of min_share (as Lepage's vegas does with
/// its TINY): r = 0 would give them zero width for good, since a bin of zero width is never sampled
/// again, and a peak missed by one iteration could never be found.
MCUBES_HOST_DEVICE inline double damped_weight(double d, double S, double alpha) {
  double f = d / S;
  if (!(f > min_share)) f = min_share;
  if (f >= 1) return 1.0;
  return portable::det_pow(portable::det_sub(1.0, f) / -portable::det_log(f), alpha);
}

/// s = 62 - ceil(log2 n): n quantized weights of at most 2^s sum to less than 2^62; with a
/// defensive floor (floor_weight) one less, so that the weights and their floors together stay below 2^62.
MCUBES_HOST_DEVICE inline int weight_shift(int n, bool with_floor = false) {
  int b = 0;
  while ((1 << b) < n) ++b;
  return 62 - b - (with_floor ? 1 : 0);
}

/// The factor c = eps / (1 - eps) of a defensive floor eps in (0, 1/2] (floor_weight).
MCUBES_HOST_DEVICE inline double floor_factor(double eps) { return eps / (1 - eps); }

/// The defensive floor's weight of an old bin of width w (e_{k+1} - e_k) when the quantized
/// weights sum to Q: floor(c Q w), c = floor_factor(eps). Added to the bin's quantized weight, it
/// spreads the fraction eps of the axis's total weight in proportion to width (uniformly in x):
/// the new map is the mixture (1 - eps) adapted + eps uniform (defensive importance sampling,
/// T. Hesterberg, Technometrics 37 (1995) 185), so no new increment is wider than about
/// 1 / (eps n) and the jacobian of an axis never exceeds 1/eps. Sum over bins <= c Q < Q < 2^61
/// (eps <= 1/2, weight_shift with a floor): the total stays exact in 64 bits.
MCUBES_HOST_DEVICE inline std::uint64_t floor_weight(std::uint64_t Q, double w, double c) {
  return static_cast<std::uint64_t>(portable::det_mul(portable::det_mul(c, static_cast<double>(Q)), w));
}

/// The defensive floor goes to the starved bins only: those whose quantized damped weight is below
/// 1/starved_ratio of the axis's mean weight Q / n. Through the damping (damped_weight, 500 bins, a
/// near-uniform histogram) that is a smoothed share d_k / S below about 1e-22 at VEGAS+'s alpha 1.0
/// (1e-11 at alpha 1.5): a region where f is zero or
/// negligible, next to no bin that saw f (the smoothing spreads a bin's contribution to its
/// neighbours).
inline constexpr std::uint64_t starved_ratio = 8;

/// The starved bins' bound: a bin whose quantized weight q_k is below Q / (starved_ratio n) gets
/// the floor (exact integers: the same on every backend).
MCUBES_HOST_DEVICE inline std::uint64_t starved_below(std::uint64_t Q, int n) {
  return Q / (static_cast<std::uint64_t>(n) * starved_ratio);
}

/// The floor's weight of a bin of quantized weight q and old width w: floor_weight(Q, w, c) when it
/// is starved (q < below = starved_below(Q, n)), else 0.
MCUBES_HOST_DEVICE inline std::uint64_t starved_floor_weight(std::uint64_t q, std::uint64_t below, std::uint64_t Q, double w,
                                                             double c) {
  return q < below ? floor_weight(Q, w, c) : 0;
}

/// q = max(1, floor(r / r_max * 2^shift)) for 0 < r <= r_max.
MCUBES_HOST_DEVICE inline std::uint64_t quantized_weight(double r, double r_max, int shift) {
  const double t = portable::det_mul(r / r_max, ldexp(1.0, shift));
  const std::uint64_t q = static_cast<std::uint64_t>(t);
  return q > 0 ? q : 1;
}

/// New edge i (1 <= i < n) of an axis with old edges e[0..n], quantized weights q and their
/// inclusive prefix sums p: the point where the cumulative weight, linear inside each old bin,
/// reaches R i / n (R = p[n-1]); the old bin is the first k with p_k >= target (n - 1 at most).
MCUBES_HOST_DEVICE inline double new_edge(int i, int n, const std::uint64_t* p, const std::uint64_t* q, const double* e) {
  const double target = portable::det_mul(static_cast<double>(p[n - 1]), static_cast<double>(i)) / n;
  int lo = 0, hi = n - 1;  // smallest k in [0, n-1] with p_k >= target (n - 1 if none)
  while (lo < hi) {
    const int mid = (lo + hi) / 2;
    if (static_cast<double>(p[mid]) >= target) hi = mid; else lo = mid + 1;
  }
  const int k = lo;
  double frac = portable::det_sub(target, static_cast<double>(p[k] - q[k])) / static_cast<double>(q[k]);
  frac = frac < 0 ? 0 : (frac > 1 ? 1 : frac);
  const double x = portable::det_add(e[k], portable::det_mul(portable::det_sub(e[k + 1], e[k]), frac));
  return x > 1.0 ? 1.0 : x;
}

}  // namespace map_adaptation

/// Non-owning, trivially copyable view of the map for sampling code (host or device).
template <int D>
struct map_view {
  const double* edges = nullptr;  ///< D * (n_bins + 1) edges, axis-major
  int n_bins = 0;

  /// Maps u in (0,1) on axis j to the unit coordinate x_unit; returns the bin index and multiplies
  /// `jacobian` by n_bins * bin width.
  MCUBES_HOST_DEVICE int map(int j, double u, double& x_unit, double& jacobian) const {
    const double t = u * n_bins;
    int b = static_cast<int>(t);
    b = b < n_bins - 1 ? b : n_bins - 1;  // u < 1, but u * n_bins may round up to n_bins (a min: one instruction on GPUs)
    const double* e = edges + static_cast<std::uint64_t>(j) * (n_bins + 1);
    const double lo = e[b];
    const double w = e[b + 1] - lo;
    x_unit = lo + w * (t - b);
    jacobian *= w * n_bins;
    return b;
  }
};

/// Checks that `edges` is a valid map of `dim` axes and n_bins bins each: dim * (n_bins + 1)
/// values, axis-major; per axis the first edge is 0, the last 1, and the edges strictly increase.
/// @throws invalid_input naming the size, or the axis and edge index that break the rule.
inline void check_map_edges(const std::vector<double>& edges, int dim, int n_bins) {
  const std::size_t row = static_cast<std::size_t>(n_bins) + 1;
  MCUBES_EXPECTS(edges.size() == static_cast<std::size_t>(dim) * row, "an adaptive map of ", dim, " axes and ", n_bins,
                 " bins needs ", static_cast<std::size_t>(dim) * row, " edges, got ", edges.size());
  for (int j = 0; j < dim; ++j) {
    const double* e = edges.data() + static_cast<std::size_t>(j) * row;
    MCUBES_EXPECTS(e[0] == 0.0 && e[n_bins] == 1.0, "adaptive map axis ", j, ": the edges must run from 0 to 1, got ", e[0],
                   " .. ", e[n_bins]);
    for (int k = 1; k <= n_bins; ++k)
      MCUBES_EXPECTS(e[k] > e[k - 1], "adaptive map axis ", j, ": edges must strictly increase, but edge ", k, " = ", e[k],
                     " <= edge ", k - 1, " = ", e[k - 1]);
  }
}

/// Owning adaptive map of D axes and n_bins bins each, initially uniform.
template <int D>
class adaptive_map {
 public:
  /// @throws invalid_input if n_bins < 2.
  explicit adaptive_map(int n_bins) : n_bins_(n_bins) {
    MCUBES_EXPECTS(n_bins >= 2, "n_bins must be at least 2, got ", n_bins);
    edges_.resize(static_cast<std::size_t>(D) * (n_bins + 1));
    for (int j = 0; j < D; ++j)
      for (int k = 0; k <= n_bins; ++k) edge(j, k) = static_cast<double>(k) / n_bins;
  }

  int n_bins() const noexcept { return n_bins_; }

  /// Replaces every edge: `edges` holds D rows of n_bins + 1 unit coordinates (axis-major, the
  /// layout of edges()), each row starting at 0, ending at 1 and strictly increasing.
  /// @throws invalid_input naming the axis and edge that break the rule (or the size).
  void set_edges(const std::vector<double>& edges) {
    check_map_edges(edges, D, n_bins_);
    edges_ = edges;
  }

  double& edge(int j, int k) { return edges_[static_cast<std::size_t>(j) * (n_bins_ + 1) + k]; }
  double edge(int j, int k) const { return edges_[static_cast<std::size_t>(j) * (n_bins_ + 1) + k]; }
  const std::vector<double>& edges() const noexcept { return edges_; }
  map_view<D> view() const { return map_view<D>{edges_.data(), n_bins_}; }

  /// Bin of unit coordinate x on axis j: the k with e_k <= x < e_{k+1} (last bin for x = 1).
  int bin_of(int j, double x) const {
    int lo = 0, hi = n_bins_;  // invariant: e_lo <= x < e_hi (with x = 1 in the last bin)
    if (x >= edge(j, n_bins_)) return n_bins_ - 1;
    if (x <= edge(j, 0)) return 0;
    while (hi - lo > 1) {
      const int mid = (lo + hi) / 2;
      if (edge(j, mid) <= x) lo = mid; else hi = mid;
    }
    return lo;
  }

  /// Adapts axis j to the contributions c[0..n_bins) (sum of squared weighted values per bin):
  ///  1. smoothing:  d_0 = (c_0 + c_1)/2, d_k = (c_{k-1} + c_k + c_{k+1})/3, d_{n-1} = (c_{n-2} + c_{n-1})/2;
  ///  2. damping:    r_k = ((1 - f_k) / ln(1/f_k))^alpha with f_k = max(d_k/S, 1e-300), S = sum d_k
  ///                 (the limit 1 for f_k = 1; the floor keeps empty bins alive with a small width);
  ///  3. defensive floor (eps > 0 only): of the integer weights q_k of the r_k (their total Q),
  ///                 each starved one (q_k < Q / (8 n): map_adaptation::starved_below) gets
  ///                 floor(eps/(1-eps) Q (e_{k+1} - e_k)) more (map_adaptation::floor_weight): a
  ///                 fraction up to eps of the weight spread uniformly in x over the region where
  ///                 the histogram saw (next to) nothing, so that no increment there grows wider
  ///                 than about 1/(eps n) (its jacobian stays below 1/eps); the bins that saw f keep
  ///                 Lepage's rule (a floor everywhere costs every peaked integrand a variance of
  ///                 about D eps per sample, however good its map: options.hpp, vegas_plus_map_floor);
  ///  4. rebinning:  new edges such that each new bin holds R/n of R = sum of the weights, spread
  ///                 uniformly inside each old bin.
  /// eps = 0 is Lepage's and m-Cubes' rule (the uniform stratification's, bit for bit as before
  /// the floor existed); eps in (0, 1/2] otherwise (options.hpp: map_floor_for).
  /// The arithmetic is the one of map_adaptation (below), which the CUDA backend runs on the
  /// device (backend/cuda/adapt_kernels.cuh): the same edges, bit for bit, on both.
  /// Leaves the axis unchanged when alpha = 0 (the map is frozen, options.hpp), when the
  /// contributions are all zero or not finite (nothing to learn), and when every damped weight
  /// underflows to 0 (alpha far beyond max_alpha: 0/0 would follow).
  /// Uniform contributions are a fixed point (up to rounding). Never produces NaN; edges stay sorted.
  void adapt_axis(int j, const double* c, double alpha, double eps = 0) {
    if (alpha == 0) return;  // r_k = 1 for every non-empty bin would still squeeze the empty ones
    const int n = n_bins_;
    d_.resize(n);
    q_.resize(n);
    p_.resize(n);
    fresh_.resize(n + 1);
    double* d = d_.data();
    for (int k = 0; k < n; ++k) d[k] = map_adaptation::smoothed(c, k, n);
    const double S = pairwise_sum(d, static_cast<std::uint64_t>(n));
    if (!map_adaptation::usable_total(S)) return;
    double r_max = 0;
    for (int k = 0; k < n; ++k) {
      d[k] = map_adaptation::damped_weight(d[k], S, alpha);  // d now holds r
      if (d[k] > r_max) r_max = d[k];
    }
    if (!map_adaptation::usable_total(r_max)) return;  // every weight underflowed: keep the axis
    const int shift = map_adaptation::weight_shift(n, eps > 0);
    const double* e = edges_.data() + static_cast<std::size_t>(j) * (n + 1);
    std::uint64_t total = 0;
    for (int k = 0; k < n; ++k) {
      q_[k] = map_adaptation::quantized_weight(d[k], r_max, shift);
      total += q_[k];
    }
    if (eps > 0) {
      const double cf = map_adaptation::floor_factor(eps);
      const std::uint64_t Q = total;
      const std::uint64_t below = map_adaptation::starved_below(Q, n);
      for (int k = 0; k < n; ++k) q_[k] += map_adaptation::starved_floor_weight(q_[k], below, Q, e[k + 1] - e[k], cf);
    }
    total = 0;
    for (int k = 0; k < n; ++k) {
      total += q_[k];
      p_[k] = total;
    }
    double* fresh = fresh_.data();
    fresh[0] = 0.0;
    fresh[n] = 1.0;
    double running = 0.0;
    for (int i = 1; i < n; ++i) {
      const double x = map_adaptation::new_edge(i, n, p_.data(), q_.data(), e);
      running = x > running ? x : running;  // prefix maximum: monotone despite rounding
      fresh[i] = running;
    }
    for (int i = 0; i <= n; ++i) edge(j, i) = fresh[i];
  }

  /// Adapts every axis; contributions are axis-major, D * n_bins values; eps: the defensive floor (adapt_axis).
  void adapt(const std::vector<double>& contributions, double alpha, double eps = 0) {
    MCUBES_EXPECTS(contributions.size() == static_cast<std::size_t>(D) * n_bins_, "adapt: expected ", D * n_bins_,
                   " contributions, got ", contributions.size());
    for (int j = 0; j < D; ++j) adapt_axis(j, contributions.data() + static_cast<std::size_t>(j) * n_bins_, alpha, eps);
  }

  /// m-Cubes1D: adapts axis 0 to `c` (n_bins values summed over all axes) and copies it to every axis.
  void adapt_symmetric(const double* c, double alpha, double eps = 0) {
    adapt_axis(0, c, alpha, eps);
    for (int j = 1; j < D; ++j)
      for (int k = 0; k <= n_bins_; ++k) edge(j, k) = edge(0, k);
  }

  /// Adapts to the exact bin sums of a V-Sample pass: levels 0..top_level of D * n_bins sums each
  /// (level-major, each level axis-major; iteration_sums::bins), folded per bin from the top level
  /// down (combine_bin_level, reduction.hpp): each axis to its own row (adapt), or, for m-Cubes1D
  /// (`symmetric`), every axis to the exact sum of the rows, level by level (adapt_symmetric).
  /// The CUDA backend does the same on the device (adapt_kernels.cuh).
  void adapt(const bin_accumulator* bins, double alpha, double eps, bool symmetric, int top_level = 0) {
    const int nb = n_bins_;
    const std::size_t n_values = static_cast<std::size_t>(D) * nb;
    contributions_.resize(static_cast<std::size_t>(symmetric ? 1 : D) * nb);
    if (symmetric) {
      for (int k = 0; k < nb; ++k) {
        double c = 0;
        for (int level = top_level; level >= 0; --level) {
          const bin_accumulator* row = bins + static_cast<std::size_t>(level) * n_values;
          bin_accumulator a = row[k];
          for (int j = 1; j < D; ++j) a.add(row[static_cast<std::size_t>(j) * nb + k]);
          c = combine_bin_level(c, a, level == top_level);
        }
        contributions_[k] = c;
      }
      adapt_symmetric(contributions_.data(), alpha, eps);
    } else {
      for (std::size_t i = 0; i < contributions_.size(); ++i) {
        double c = 0;
        for (int level = top_level; level >= 0; --level)
          c = combine_bin_level(c, bins[static_cast<std::size_t>(level) * n_values + i], level == top_level);
        contributions_[i] = c;
      }
      for (int j = 0; j < D; ++j) adapt_axis(j, contributions_.data() + static_cast<std::size_t>(j) * nb, alpha, eps);
    }
  }

 private:
  int n_bins_;
  std::vector<double> edges_;
  std::vector<double> d_, fresh_, contributions_;  // scratch of adapt_axis / adapt, kept to avoid allocations
  std::vector<std::uint64_t> q_, p_;
};

}  // namespace mcubes

#pragma once
/// @file adaptive_map.hpp
/// The Vegas adaptive map (Lepage 1978, J. Comput. Phys. 27:192; seeds/001 section 3): on each axis,
/// n_bins bins with edges 0 = e_0 < e_1 <= ... <= e_n = 1 in unit coordinates. A uniform y in (0,1)
/// maps to bin b = floor(y n) and to x = e_b + (e_{b+1} - e_b)(y n - b), with jacobian
/// J = n (e_{b+1} - e_b). Adaptation moves the edges so that each bin holds an equal share of the
/// damped, smoothed bin contributions. Edge storage is axis-major: edges[j*(n+1) + k].

#include <cmath>
#include <cstdint>
#include <vector>

#include "../config.hpp"
#include "../error.hpp"

namespace mcubes {

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
    if (b >= n_bins) b = n_bins - 1;  // u < 1, but u * n_bins may round up to n_bins
    const double* e = edges + static_cast<std::uint64_t>(j) * (n_bins + 1);
    const double lo = e[b];
    const double w = e[b + 1] - lo;
    x_unit = lo + w * (t - b);
    jacobian *= w * n_bins;
    return b;
  }
};

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
  ///  3. rebinning:  new edges such that each new bin holds R/n of R = sum r_k, r spread uniformly
  ///                 inside each old bin.
  /// Leaves the axis unchanged when alpha = 0 (the map is frozen, options.hpp) and when the
  /// contributions are all zero or not finite (nothing to learn).
  /// Uniform contributions are a fixed point (up to rounding). Never produces NaN; edges stay sorted.
  void adapt_axis(int j, const double* c, double alpha) {
    if (alpha == 0) return;  // r_k = 1 for every non-empty bin would still squeeze the empty ones
    const int n = n_bins_;
    d_.resize(n);
    r_.resize(n);
    fresh_.resize(n + 1);
    double* d = d_.data();
    double* r = r_.data();
    d[0] = (c[0] + c[1]) / 2;
    d[n - 1] = (c[n - 2] + c[n - 1]) / 2;
    for (int k = 1; k < n - 1; ++k) d[k] = (c[k - 1] + c[k] + c[k + 1]) / 3;
    double S = 0;
    for (int k = 0; k < n; ++k) S += d[k];
    if (!(S > 0) || !std::isfinite(S)) return;
    double R = 0;
    for (int k = 0; k < n; ++k) {
      // Empty bins keep the weight of a relative contribution of min_share (as Lepage's vegas
      // does with its TINY): r = 0 would give them zero width for good, since a bin of zero width
      // is never sampled again, and a peak missed by one iteration could never be found.
      const double f = std::fmax(d[k] / S, min_share);
      r[k] = f >= 1 ? 1.0 : damp((1 - f) / -std::log(f), alpha);
      R += r[k];
    }
    if (!(R > 0) || !std::isfinite(R)) return;
    double* fresh = fresh_.data();
    fresh[0] = 0.0;
    fresh[n] = 1.0;
    int k = 0;        // old bin being consumed
    double acc = 0;   // sum of r over old bins [0, k)
    for (int i = 1; i < n; ++i) {
      const double target = R * i / n;
      while (k < n - 1 && (r[k] == 0 || acc + r[k] < target)) acc += r[k++];
      double frac = r[k] > 0 ? (target - acc) / r[k] : 0.0;
      frac = frac < 0 ? 0 : (frac > 1 ? 1 : frac);
      double e = edge(j, k) + (edge(j, k + 1) - edge(j, k)) * frac;
      if (e < fresh[i - 1]) e = fresh[i - 1];  // monotone despite rounding
      fresh[i] = e > 1.0 ? 1.0 : e;
    }
    for (int i = 0; i <= n; ++i) edge(j, i) = fresh[i];
  }

  /// Adapts every axis; contributions are axis-major, D * n_bins values.
  void adapt(const std::vector<double>& contributions, double alpha) {
    MCUBES_EXPECTS(contributions.size() == static_cast<std::size_t>(D) * n_bins_, "adapt: expected ", D * n_bins_,
                   " contributions, got ", contributions.size());
    for (int j = 0; j < D; ++j) adapt_axis(j, contributions.data() + static_cast<std::size_t>(j) * n_bins_, alpha);
  }

  /// m-Cubes1D: adapts axis 0 to `c` (n_bins values summed over all axes) and copies it to every axis.
  void adapt_symmetric(const double* c, double alpha) {
    adapt_axis(0, c, alpha);
    for (int j = 1; j < D; ++j)
      for (int k = 0; k <= n_bins_; ++k) edge(j, k) = edge(0, k);
  }

 private:
  /// Smallest relative contribution of a bin in the damping (vegas: TINY).
  static constexpr double min_share = 1e-300;
  /// t^alpha, with the common exponents 1.5 (the default) and 1 done without pow.
  static double damp(double t, double alpha) {
    if (alpha == 1.5) return t * std::sqrt(t);
    if (alpha == 1.0) return t;
    return std::pow(t, alpha);
  }
  int n_bins_;
  std::vector<double> edges_;
  std::vector<double> d_, r_, fresh_;  // scratch of adapt_axis, kept to avoid allocations
};

}  // namespace mcubes

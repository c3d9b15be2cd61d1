#pragma once
/// @file core/weighted_sample.hpp
/// Weighted samples from a trained run (vegas's Integrator.random_batch()): points x_i of the
/// region and weights w_i such that, for any integrand f,
///
///   sum_i w_i f(x_i)  estimates  integral of f over the region   (unbiased),
///
/// drawn from the sampling density that the run's training built: its adaptive map and, for
/// VEGAS+, its allocation of samples over the sub-cubes. A weighted histogram of a derived quantity
/// s(x) with weights w_i f(x_i) estimates the distribution of s under f (event generation, the
/// distributions of observables), with the variance reduction the map learnt.
///
/// The design of n points (exactly n; G. P. Lepage, arXiv:2009.05112, sections 2-3): the unit
/// hypercube is cut into m = g^d equal sub-cubes (sub-cube c has coordinates c_j = floor(c / g^j)
/// mod g, axis 0 fastest) holding n_c >= 1 points each, sum_c n_c = n. A point of sub-cube c is
/// y_j = (c_j + u_j) * fl(1/g), x_j = a_j + (b_j - a_j) * map_j(y_j), with weight
///
///   w = V J(y) / (m n_c)                  (V the region's volume, J the map's jacobian),
///
/// so that sum over the sub-cube of w f is V/m times the sub-cube's mean of f J: the stratified
/// estimate of core/sampler.hpp. The counts:
///  - with a VEGAS+ allocation (the shares d_h of the run's sub-cube grid, core/cube_counts.hpp)
///    and n >= m: that grid; every sub-cube n_min = max(1, floor(n / (4 m))) points and the rest
///    A = n - m n_min shared in proportion to d_h, as cumulative floors: n_c = n_min +
///    floor(A D_c / D) - floor(A D_(c-1) / D) with D_c = d_0 + ... + d_c summed in index order
///    (D = D_(m-1); the last sub-cube takes what the floors left). The allocation the next
///    iteration of the run would sample with, scaled to n points and without the run's cap;
///  - otherwise (a uniform run, no adapting iteration yet, all d_h = 0, or n < m): the uniform
///    grid of make_stratification(d, n) (g = floor((n/2)^(1/d)), at least 1), floor(n/m) points
///    in each sub-cube and one more in the first n mod m.
///
/// Determinism: point i (i = 0 .. n-1, in sub-cube order) is a pure function of the density, n,
/// the seed and i: its uniforms are those of random.hpp's stream stream_id::weighted_sample at
/// iteration 0 and index i, so any range of points (fill(first, count)) has the bits of the same
/// points of the whole sample, in any order of calls. The density is backend-independent host data
/// (an integrator trained on the CPU or on a GPU holds the same bits), so the points are too.
/// The points are computed on the host, serially.

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <utility>
#include <vector>

#include "../error.hpp"
#include "../random.hpp"
#include "adaptive_map.hpp"
#include "stratification.hpp"

namespace mcubes {

/// What weighted sampling takes of a trained run (integrator::density(); core/weighted_sample.hpp):
/// the region, the adaptive map and the VEGAS+ shares. Host data, the same on every backend.
struct sampling_density {
  int dim = 0;                 ///< d
  int n_bins = 0;              ///< bins per axis of the map
  std::vector<double> lower;   ///< the region's lower bounds a_j (d)
  std::vector<double> upper;   ///< the region's upper bounds b_j (d)
  std::vector<double> edges;   ///< the map: d rows of n_bins + 1 unit edges, axis-major (adaptive_map)
  std::uint64_t g = 0;         ///< VEGAS+: intervals per axis of the shares' sub-cube grid (0: none)
  std::vector<double> shares;  ///< VEGAS+: d_h of the g^d sub-cubes in index order; empty: none
};

/// One batch of weighted points: x holds `count` rows of d coordinates (row-major), w their weights.
struct weighted_points {
  int dim = 0;
  std::vector<double> x;  ///< count * d
  std::vector<double> w;  ///< count
  std::uint64_t size() const noexcept { return w.size(); }
};

/// The n weighted points of a sampling_density (file comment: the design, the weights and the
/// determinism contract). Cheap to query in ranges: fill(first, count, ...) computes points
/// first .. first + count - 1 of the whole sample; holds O(m) memory (the counts' prefix sums)
/// only with a VEGAS+ allocation.
class weighted_sampler {
 public:
  /// @throws invalid_input if n is 0, the density's sizes disagree (d, n_bins + 1 edges per axis,
  ///         g^d shares), an edge row is not a map (check_map_edges), a bound is not finite, a
  ///         lower bound is not below its upper one, or a share is negative or not finite.
  weighted_sampler(sampling_density density, std::uint64_t n, std::uint64_t seed)
      : den_(std::move(density)), n_(n), seed_(seed) {
    const int d = den_.dim;
    MCUBES_EXPECTS(d >= 1, "weighted samples: the dimension must be at least 1, got ", d);
    MCUBES_EXPECTS(n >= 1, "weighted samples: the number of points must be at least 1");
    MCUBES_EXPECTS(den_.lower.size() == static_cast<std::size_t>(d) && den_.upper.size() == static_cast<std::size_t>(d),
                   "weighted samples: the region needs ", d, " lower and upper bounds, got ", den_.lower.size(), " and ",
                   den_.upper.size());
    volume_ = 1;
    for (int j = 0; j < d; ++j) {
      const double a = den_.lower[static_cast<std::size_t>(j)], b = den_.upper[static_cast<std::size_t>(j)];
      MCUBES_EXPECTS(std::isfinite(a) && std::isfinite(b) && a < b, "weighted samples: axis ", j,
                     " of the region must have finite bounds lower < upper, got [", a, ", ", b, "]");
      volume_ *= b - a;
    }
    check_map_edges(den_.edges, d, den_.n_bins);
    if (!den_.shares.empty()) {
      MCUBES_EXPECTS(den_.g >= 1 && detail::saturating_pow(den_.g, d) == den_.shares.size(),
                     "weighted samples: ", den_.shares.size(), " shares are not the g^d sub-cubes of g = ", den_.g,
                     " in d = ", d);
      for (double s : den_.shares)
        MCUBES_EXPECTS(s >= 0 && std::isfinite(s), "weighted samples: a sub-cube's share must be finite and >= 0, got ", s);
    }
    if (!den_.shares.empty() && n >= den_.shares.size() && allocate()) return;
    prefix_.clear();
    g_ = n >= 2 ? make_stratification(d, n).g : 1;
    m_ = detail::saturating_pow(g_, d);
    base_ = n / m_;
    extra_ = n % m_;
  }

  int dim() const noexcept { return den_.dim; }
  /// n, the points of the whole sample.
  std::uint64_t size() const noexcept { return n_; }
  std::uint64_t seed() const noexcept { return seed_; }
  /// The sub-cube grid: g intervals per axis, m = g^d sub-cubes.
  std::uint64_t g() const noexcept { return g_; }
  std::uint64_t n_cubes() const noexcept { return m_; }
  /// Whether the VEGAS+ allocation sets the counts (else the uniform design).
  bool allocated() const noexcept { return !prefix_.empty(); }
  const sampling_density& density() const noexcept { return den_; }

  /// n_c, the points of sub-cube c (c < m).
  std::uint64_t cube_points(std::uint64_t c) const {
    if (allocated()) return prefix_[c + 1] - prefix_[c];
    return base_ + (c < extra_ ? 1 : 0);
  }

  /// Points first .. first + count - 1: x[k * d + j] is coordinate j of point first + k, w[k] its
  /// weight. @throws invalid_input if the range is not within 0 .. n.
  void fill(std::uint64_t first, std::uint64_t count, double* x, double* w) const {
    MCUBES_EXPECTS(first <= n_ && count <= n_ - first, "weighted samples: points ", first, " .. ", first + count,
                   " are not within the sample's ", n_);
    if (count == 0) return;
    const int d = den_.dim;
    const double inv_g = 1.0 / static_cast<double>(g_);
    const std::size_t row = static_cast<std::size_t>(den_.n_bins) + 1;
    std::uint64_t c = cube_of(first);
    std::uint64_t cube_end = cube_begin(c) + cube_points(c);
    double cube_weight = volume_ / (static_cast<double>(m_) * static_cast<double>(cube_points(c)));
    std::vector<double> coord(static_cast<std::size_t>(d));
    set_coordinates(c, coord);
    for (std::uint64_t k = 0; k < count; ++k) {
      const std::uint64_t i = first + k;
      while (i >= cube_end) {  // the next non-empty sub-cube
        ++c;
        cube_end += cube_points(c);
        cube_weight = volume_ / (static_cast<double>(m_) * static_cast<double>(cube_points(c)));
        set_coordinates(c, coord);
      }
      sample_stream stream(seed_, stream_id::weighted_sample, 0, i);
      double jac = 1;
      double* xi = x + k * static_cast<std::uint64_t>(d);
      std::uint32_t words[4] = {0, 0, 0, 0};
      for (int j = 0; j < d; ++j) {
        if (j % 4 == 0) {
          const auto r = stream.block(static_cast<std::uint32_t>(j / 4));
          for (int q = 0; q < 4; ++q) words[q] = r.v[q];
        }
        const double y = (coord[static_cast<std::size_t>(j)] + sample_stream::to_double(words[j % 4])) * inv_g;
        double xu;
        // axis j's row as a one-axis map: the arithmetic of every sampling pass (map_view::map)
        map_view<1>{den_.edges.data() + static_cast<std::size_t>(j) * row, den_.n_bins}.map(0, y, xu, jac);
        const double a = den_.lower[static_cast<std::size_t>(j)];
        xi[j] = a + (den_.upper[static_cast<std::size_t>(j)] - a) * xu;
      }
      w[k] = jac * cube_weight;
    }
  }

  /// fill() into a new weighted_points.
  weighted_points points(std::uint64_t first, std::uint64_t count) const {
    weighted_points p;
    p.dim = den_.dim;
    p.x.resize(static_cast<std::size_t>(count * static_cast<std::uint64_t>(den_.dim)));
    p.w.resize(static_cast<std::size_t>(count));
    fill(first, count, p.x.data(), p.w.data());
    return p;
  }
  /// All n points.
  weighted_points points() const { return points(0, n_); }

 private:
  // The VEGAS+ counts (file comment); false when the shares are all 0 (the uniform design then).
  bool allocate() {
    const std::uint64_t m = den_.shares.size();
    std::vector<double> cum(m);
    double total = 0;
    for (std::uint64_t c = 0; c < m; ++c) cum[c] = total += den_.shares[c];
    if (!(total > 0) || !std::isfinite(total)) return false;
    g_ = den_.g;
    m_ = m;
    std::uint64_t n_min = n_ / (4 * m);
    if (n_min < 1) n_min = 1;
    const std::uint64_t a = n_ - m * n_min;
    const double ad = static_cast<double>(a);
    prefix_.assign(m + 1, 0);
    std::uint64_t extra_before = 0;
    for (std::uint64_t c = 0; c < m; ++c) {
      double t = std::floor(ad * (cum[c] / total));
      std::uint64_t extra_through = t >= ad ? a : static_cast<std::uint64_t>(t);
      if (c + 1 == m) extra_through = a;
      if (extra_through < extra_before) extra_through = extra_before;  // monotone (rounding)
      prefix_[c + 1] = (c + 1) * n_min + extra_through;
      extra_before = extra_through;
    }
    return true;
  }

  // The first point of sub-cube c.
  std::uint64_t cube_begin(std::uint64_t c) const {
    if (allocated()) return prefix_[c];
    return c * base_ + (c < extra_ ? c : extra_);
  }
  // The sub-cube of point i (i < n).
  std::uint64_t cube_of(std::uint64_t i) const {
    if (allocated()) return static_cast<std::uint64_t>(std::upper_bound(prefix_.begin(), prefix_.end(), i) - prefix_.begin()) - 1;
    const std::uint64_t big = extra_ * (base_ + 1);
    return i < big ? i / (base_ + 1) : extra_ + (i - big) / base_;
  }
  void set_coordinates(std::uint64_t c, std::vector<double>& coord) const {
    for (std::size_t j = 0; j < coord.size(); ++j) {
      coord[j] = static_cast<double>(c % g_);
      c /= g_;
    }
  }

  sampling_density den_;
  std::uint64_t n_ = 0, seed_ = 0;
  double volume_ = 1;
  std::uint64_t g_ = 1, m_ = 1, base_ = 0, extra_ = 0;
  std::vector<std::uint64_t> prefix_;  // VEGAS+: prefix_[c] = points before sub-cube c
};

}  // namespace mcubes

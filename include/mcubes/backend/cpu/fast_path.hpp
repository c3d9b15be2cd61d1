#pragma once
/// @file backend/cpu/fast_path.hpp
/// The SIMD fast path of the CPU backend (backend/cpu.hpp): the Vegas samples of a tile of chunks
/// computed as one stream of consecutive samples, in batches of 64: Philox for the whole batch
/// (SSE2 on every x86-64 CPU, AVX2 or AVX-512F when the CPU has it, chosen at run time), the map
/// over the batch, then f, the samples' terms (with AVX2 four at a time) and the sums sample by sample in
/// index order. It gives bitwise the results of
/// core/sampler.hpp's sample_chunk (the code the CUDA kernels share): the same sample points, the
/// same per-sub-cube and per-chunk sums in the same order, the same integer bin terms; the batch
/// generator is tested bitwise against random.hpp's Philox (tests/unit/test_random.cpp).
/// FMA: the baseline x86-64 target has none; a build with FMA enabled (e.g. -march=x86-64-v3)
/// lets the compiler contract a * b + c in the library and the integrand alike (GCC's default
/// -ffp-contract=fast), which changes low bits of the results relative to other builds and the GPU
/// (built with --fmad=false); add -ffp-contract=off to such builds to keep them.
/// The per-batch building blocks (Philox, the map, the sub-cube coordinates) are in
/// backend/cpu/simd.hpp; this file holds the batch generator, the sums and the bin sink.

#include <algorithm>
#include <cstdint>
#include <vector>

#include "../../core/reduction.hpp"
#include "../../core/sampler.hpp"
#include "../../core/stratification.hpp"
#include "../../error.hpp"
#include "../../execution.hpp"
#include "../../integrand.hpp"
#include "simd.hpp"

namespace mcubes {

/// Bin sink over a thread-private array of D * n_bins accumulators (level 0) and, allocated at the
/// first term that needs one, max_bin_level more such arrays for the overflow levels (`over`,
/// level-major: level L at (L - 1) * n_values). Host only.
struct bin_array_sink {
  static constexpr bool enabled = true;
  bin_accumulator* bins;
  int n_bins;
  std::vector<bin_accumulator>* over = nullptr;
  std::size_t n_values = 0;  ///< D * n_bins
  MCUBES_HOST_DEVICE void add(int axis, int bin, std::uint64_t q) { bins[static_cast<std::size_t>(axis) * n_bins + bin].add(q); }
  MCUBES_HOST_DEVICE void add_level(int level, int axis, int bin, std::uint64_t q) {
#if !defined(__CUDA_ARCH__)
    if (over->empty()) over->assign(static_cast<std::size_t>(max_bin_level) * n_values, bin_accumulator{});
    (*over)[(static_cast<std::size_t>(level) - 1) * n_values + static_cast<std::size_t>(axis) * n_bins + bin].add(q);
#else
    (void)level, (void)axis, (void)bin, (void)q;
#endif
  }
};

namespace cpu_detail {

template <int D>
struct array_workspace;  // array_path.hpp

/// The integrand of a CPU pass behind function pointers, so that the CPU backend's passes
/// (backend/cpu.hpp sample_cpu_passes, this file) are compiled once per dimension D, not once per
/// integrand type: `points` evaluates n points (values[i] = f(xs[i]), one point after the other;
/// an array integrand's array form, integrand.hpp, in one call), `one` evaluates one point (the
/// one-point call). The fast paths call `points` once per batch of 64 samples and then add the
/// values in sample order: the same values, sums and bits as calling f sample by sample.
/// `array_tile`: for an array integrand (and only then) the array path of a tile
/// (array_path.hpp sample_tile_array: larger tiles, one call per slice), so that a program
/// compiles that path only where it has array integrands. Made by pass_integrand_of
/// (array_path.hpp). Not owning: f outlives the pass. Host only (device code never calls it).
template <int D>
struct pass_integrand {
  const void* f = nullptr;
  void (*points)(const void* f, const point<D>* xs, std::size_t n, double* values) = nullptr;
  double (*one)(const void* f, const point<D>& x) = nullptr;
  /// The tile's chunks (first + c) stride, c < count, on the array path (V-Sample when `adapt`,
  /// into `sink`); null for a scalar integrand.
  void (*array_tile)(const pass_integrand& f, const sampling_params<D>& sp, const map_view<D>& map,
                     const coordinate_tables<D>& tables, std::uint64_t first, std::uint64_t count,
                     std::uint64_t stride, bool adapt, double* est, double* var, chunk_partial& flags,
                     bin_array_sink& sink, array_workspace<D>& ws, const stop_request* stop) = nullptr;
  /// Whether f is an array integrand (is_array_integrand_v).
  bool array() const noexcept { return array_tile != nullptr; }
  /// f(x) (core/sampler.hpp's sample_chunk calls it so: the serial sampler of tests).
  MCUBES_HOST_DEVICE double operator()(const point<D>& x) const {
#if defined(__CUDA_ARCH__)
    (void)x;
    return 0;
#else
    return one(f, x);
#endif
  }
  /// values[i] = f(xs[i]) for i < n.
  void operator()(const point<D>* xs, std::size_t n, double* values) const { points(f, xs, n, values); }
};

/// The sample points of the consecutive sub-cubes [cube_begin, cube_end), batch by batch, in
/// sample-index order: for each batch of at most `batch` consecutive samples, the uniforms
/// (uniform_batch), the sub-cube coordinates (coordinate_tables or runs) and the map, axis by axis
/// (map_axis): the point, the jacobian and the bin of every axis, bitwise what make_sample
/// (core/sampler.hpp) gives for each of these samples. Used by sample_chunks below (which calls f
/// on each point as it comes) and by the array path (backend/cpu/array_path.hpp, which stores the
/// points of many batches and evaluates them in one call). Host only; holds no heap memory.
template <int D>
class batch_generator {
 public:
  batch_generator(const sampling_params<D>& sp, const map_view<D>& map, const coordinate_tables<D>& tables,
                  std::uint64_t cube_begin, std::uint64_t cube_end)
      : sp_(sp), map_(map), tables_(tables), key_(make_philox_round_keys(sp.seed, stream_id::vegas)),
        index_(cube_begin * sp.p), index_end_(cube_end * sp.p) {
#if MCUBES_CPU_AVX2_DISPATCH
    avx2_ = cpu_has_avx2();
#endif
    if (cube_begin >= cube_end) {
      index_end_ = index_;
      return;
    }
    // Per axis j, either its position pos[j] in the tabulated cycle of coordinates, or (for the
    // axes with long runs) its coordinate as a double (exact, < 2^53), the samples left before it
    // changes (it steps by one, mod g, every g^j sub-cubes) and whether cb[j] holds only that value.
    cube_coordinates<D>(cube_begin, sp.g, coord_);
    std::uint64_t gj = 1, below = 0;  // g^j and cube_begin mod g^j
    for (int j = 0; j < D; ++j) {
      cd_[j] = static_cast<double>(coord_[j]);
      run_[j] = gj * sp.p;
      left_[j] = (gj - below) * sp.p;
      below += coord_[j] * gj;
      pos_[j] = below * sp.p;  // (cube_begin mod g^(j+1)) p, used if tabulated
      uniform_[j] = false;
      if (j + 1 < D) gj *= sp.g;  // g^(D-1) <= m: no overflow
    }
    for (int j = 0; j < D; ++j)  // lanes past the end of a short last batch are computed too: keep them in bounds
      for (int i = 0; i < batch; ++i) cb_[j][i] = 0.0;
  }

  /// Index of the first sample of the next batch.
  std::uint64_t index() const noexcept { return index_; }
  /// Samples not yet generated.
  std::uint64_t remaining() const noexcept { return index_end_ - index_; }

  /// Generates the next batch: x (row i: the point of sample index() + i, as read before the call),
  /// jac[i] (the map's jacobian, region volume not included) and bin[j][i] (the bin of axis j).
  /// Returns the batch's size n (0 when every sample is done); rows n..batch-1 are scratch.
  int next(point<D>* x, double* jac, int (&bin)[D][batch]) {
    if (index_ >= index_end_) return 0;
    const int n = static_cast<int>(std::min<std::uint64_t>(batch, index_end_ - index_));
#if MCUBES_CPU_AVX2_DISPATCH
    if (avx2_)
      uniform_batch_of_wide<D>(key_, sp_.iteration, consecutive_indices{index_}, u_);
    else
#endif
      uniform_batch<D>(key_, sp_.iteration, index_, u_);
    const double* c[D];  // sub-cube coordinate of each sample
    for (int j = 0; j < D; ++j) {
      if (tables_.cycle[j]) {  // a slice of the table
        c[j] = tables_.data.data() + tables_.offset[j] + pos_[j];
        pos_[j] += static_cast<std::uint64_t>(n);
        if (pos_[j] >= tables_.cycle[j]) pos_[j] %= tables_.cycle[j];
        continue;
      }
      c[j] = cb_[j];
      if (left_[j] >= static_cast<std::uint64_t>(n) && uniform_[j]) {  // the whole batch in one run, already filled
      } else if (left_[j] >= static_cast<std::uint64_t>(n)) {
        for (int i = 0; i < batch; ++i) cb_[j][i] = cd_[j];
        uniform_[j] = true;
      } else {  // run by run; padded lanes keep a valid coordinate
        for (int i = 0; i < n;) {
          const int len = static_cast<int>(std::min<std::uint64_t>(left_[j], static_cast<std::uint64_t>(n - i)));
          for (int e = i + len; i < e; ++i) cb_[j][i] = cd_[j];
          if ((left_[j] -= static_cast<std::uint64_t>(len)) == 0) {
            if (++coord_[j] == sp_.g) coord_[j] = 0;
            cd_[j] = static_cast<double>(coord_[j]);
            left_[j] = run_[j];
          }
        }
        uniform_[j] = false;
        continue;
      }
      if ((left_[j] -= static_cast<std::uint64_t>(n)) == 0) {
        if (++coord_[j] == sp_.g) coord_[j] = 0;
        cd_[j] = static_cast<double>(coord_[j]);
        left_[j] = run_[j];
        uniform_[j] = false;
      }
    }
#if MCUBES_CPU_AVX2_DISPATCH
    if (avx2_) {
      const double* u[D];
      for (int j = 0; j < D; ++j) u[j] = u_[j];
      map_axes_wide<D>(map_, sp_.lower, sp_.width, sp_.inv_g, n, c, u, jac, bin, x);
    } else
#endif
    {
      map_axis<D, true>(map_, 0, sp_.lower[0], sp_.width[0], sp_.inv_g, n, c[0], u_[0], jac, bin[0], x);
      for (int j = 1; j < D; ++j) map_axis<D, false>(map_, j, sp_.lower[j], sp_.width[j], sp_.inv_g, n, c[j], u_[j], jac, bin[j], x);
    }
    index_ += static_cast<std::uint64_t>(n);
    return n;
  }

 private:
  const sampling_params<D>& sp_;
  map_view<D> map_;
  const coordinate_tables<D>& tables_;
  philox_round_keys key_;
  bool avx2_ = false;  // in every unit (nvcc's have no AVX2 path): one layout for g++ and nvcc units
  std::uint64_t index_, index_end_;
  double cd_[D];
  std::uint64_t pos_[D], run_[D], left_[D], coord_[D];
  bool uniform_[D];
  double u_[D][batch];   // uniforms of the batch, axis-major
  double cb_[D][batch];  // sub-cube coordinate of each sample (untabulated axes)
};

/// One sample's share of the sums, as core/sampler.hpp's sample_segment takes it (the same
/// operations in the same order): f J into s1, (f J)^2 into s2, the bin term (f J)^2 term_scale
/// (bin_of(j): the sample's bin on axis j) and the flags; a non-finite value, or f J or (f J)^2
/// overflowing, is recorded (first index) and adds 0. Both fast paths below use it.
template <int D, class Bins, class BinOf>
MCUBES_CPU_INLINE void add_sample(double v, double jac, std::uint64_t index, double term_scale, Bins& bins,
                                  const BinOf& bin_of, chunk_partial& flags, double& s1, double& s2, int bin_axes) {
  double fj = v * jac;
  double fj2 = fj * fj;
  if (!(fj2 - fj2 == 0)) {  // f NaN or +-Inf, or f J or (f J)^2 overflows (as sample_chunk)
    if (index < flags.first_non_finite) flags.first_non_finite = index, flags.non_finite_value = v;
    v = fj = fj2 = 0;
  }
  if (v != 0) ++flags.n_nonzero;
  s1 += fj;
  s2 += fj2;
  if constexpr (Bins::enabled) {
    if (fj2 > flags.max_contribution) flags.max_contribution = fj2;
    add_bin_term<D>(bins, fj2 * term_scale, quantization_dither(index), bin_of, bin_axes);
  }
}

/// The sums of sample_chunk (core/sampler.hpp) over consecutive samples given one at a time in
/// sample-index order, from the first sample of chunk `first`: per sample the value f, the
/// weighted value f J, its square, the flags and the bin term; per sub-cube its mean and variance;
/// per chunk their sums, stored in est[i], var[i] (i = chunk - first) when the chunk's last sample
/// is added. The same operations in the same order as sample_chunk, hence the same bits.
template <int D>
struct sample_accumulator {
  const sampling_params<D>& sp;
  double* est;
  double* var;
  chunk_partial& flags;
  std::uint64_t index_end;  ///< one past the last sample (the end of the last, possibly short, chunk)
  double pd = static_cast<double>(sp.p);
  double var_den = pd * (pd - 1);
  std::uint64_t k = 0;              // sample within the sub-cube
  std::uint64_t cube_in_chunk = 0;  // sub-cube within the chunk
  std::uint64_t chunk = 0;          // chunk - first
  double s1 = 0, s2 = 0, chunk_est = 0, chunk_var = 0;

  /// Adds sample `index` with value v and jacobian jac; bin_of(j) is its bin on axis j.
  template <class Bins, class BinOf>
  MCUBES_CPU_INLINE void add(double v, double jac, std::uint64_t index, Bins& bins, const BinOf& bin_of) {
    add_sample<D>(v, jac, index, sp.bin_scale, bins, bin_of, flags, s1, s2, sp.bin_axes);
    end_sample(index);
  }
  /// add() for a sample of a V-Sample pass whose weighted value fj = v J, its square fj2 (finite)
  /// and its level-0 bin quantum q were computed ahead (level0_terms_avx2: add_sample's values):
  /// add_sample's remaining steps in its order.
  template <class Bins, class BinOf>
  MCUBES_CPU_INLINE void add_level0(double v, double fj, double fj2, std::uint64_t q, std::uint64_t index, Bins& bins,
                                    const BinOf& bin_of) {
    if (v != 0) ++flags.n_nonzero;
    s1 += fj;
    s2 += fj2;
    if (fj2 > flags.max_contribution) flags.max_contribution = fj2;
    if (q != 0) add_level0_quantum<D>(bins, q, bin_of, sp.bin_axes);
    end_sample(index);
  }
  /// The end of sample `index`: its sub-cube's and chunk's sums where it is their last.
  MCUBES_CPU_INLINE void end_sample(std::uint64_t index) {
    if (++k == sp.p) {  // sub-cube done: its mean and variance, in sub-cube order
      const double mean = s1 / pd;
      double vr = (s2 - s1 * mean) / var_den;
      if (vr <= 0) vr = 0;  // as sample_chunk: NaN stays NaN
      chunk_est += mean;
      chunk_var += vr;
      s1 = s2 = 0;
      k = 0;
      if (++cube_in_chunk == sp.chunk_cubes || index + 1 == index_end) {  // chunk done
        est[chunk] = chunk_est;
        var[chunk] = chunk_var;
        chunk_est = chunk_var = 0;
        cube_in_chunk = 0;
        ++chunk;
      }
    }
  }
};

/// The CPU fast path of sample_chunk (core/sampler.hpp) for the consecutive chunks
/// [first, first + count), i.e. the contiguous sample indices of their sub-cubes: stores each
/// chunk's estimate and variance in est[i], var[i], merges its flags into `flags` and adds its
/// bin contributions to `bins`. Bitwise the same results as sample_chunk chunk by chunk: the same
/// uniforms (uniform_batch), the same floating-point operations per axis as make_sample and
/// map_view::map (in the same order; only the loop order over samples and axes differs), the
/// same per-sub-cube sums s1, s2 in sample order, per-chunk sums in sub-cube order, the same
/// quantized bin terms (integer sums: any order); flags are min / max / counts.
/// Work saved: Philox and the map run vectorised over a batch of samples (SSE2, or AVX2 when the
/// CPU has it); sub-cube coordinates come from small per-axis tables or runs, with no division
/// after the first sub-cube; the point is built in place for f; chunk boundaries restart nothing.
/// `stop` (execution::stop, or null) is looked at before each batch of 64 samples: once it is
/// requested the call returns at once, its sums incomplete (the caller abandons the pass).
template <int D, class Bins>
inline void sample_chunks(const pass_integrand<D>& f, const sampling_params<D>& sp, const map_view<D>& map,
                          const coordinate_tables<D>& tables, std::uint64_t first, std::uint64_t count, double* est,
                          double* var, chunk_partial& flags, Bins& bins, const stop_request* stop = nullptr) {
  const std::uint64_t cube_begin = first * sp.chunk_cubes;
  std::uint64_t cube_end = (first + count) * sp.chunk_cubes;
  if (cube_end > sp.n_cubes) cube_end = sp.n_cubes;
  if (cube_begin >= cube_end) return;
  batch_generator<D> gen(sp, map, tables, cube_begin, cube_end);
  sample_accumulator<D> acc{sp, est, var, flags, cube_end * sp.p};
  double jac[batch];
  int bin[D][batch];  // bin of each sample, axis-major
  point<D> xs[batch];
  double fx[batch];
#if MCUBES_CPU_AVX2_DISPATCH
  const bool avx2 = Bins::enabled && cpu_has_avx2();
  double fj[batch], fj2[batch];
  std::uint64_t q[batch];
#endif
  for (;;) {
    if (stop != nullptr && stop->requested()) return;
    const std::uint64_t index0 = gen.index();
    const int n = gen.next(xs, jac, bin);
    if (n == 0) break;
    f(xs, static_cast<std::size_t>(n), fx);
#if MCUBES_CPU_AVX2_DISPATCH
    if (avx2) {  // V-Sample: the samples' terms four at a time, then their sums in order
      const std::uint64_t simple = level0_terms_avx2(n, fx, jac, index0, nullptr, sp.bin_scale, nullptr, fj, fj2, q);
      for (int i = 0; i < n; ++i) {
        const std::uint64_t index = index0 + static_cast<std::uint64_t>(i);
        const auto bin_of = [&](int j) { return bin[j][i]; };
        if ((simple >> i) & 1u)
          acc.add_level0(fx[i], fj[i], fj2[i], q[i], index, bins, bin_of);
        else
          acc.add(fx[i], jac[i], index, bins, bin_of);
      }
      continue;
    }
#endif
    for (int i = 0; i < n; ++i)
      acc.add(fx[i], jac[i], index0 + static_cast<std::uint64_t>(i), bins, [&](int j) { return bin[j][i]; });
  }
}

/// The sums of a pass with VEGAS+ counts (sample_cubes' arithmetic, core/sampler.hpp) over samples
/// given one at a time in sample-index order: sample_segment's body (add_sample, with the bin
/// term (f J)^2 bin_scale / n_c), then at the ends the sample carries the segment's sums into its
/// sub-cube's, the sub-cube's estimate (finish_cube, the shares too) into its chunk's, and the
/// chunk's into est[out], var[out]. Bitwise sample_chunk's, chunk by chunk.
/// finish_cube (two divisions and, for the shares, five square roots in a chain: with ~2.5 samples
/// a sub-cube at the paper's settings, a long latency chain every few samples) runs for up to
/// `batch` finished sub-cubes at once in flush() (with AVX2 four at a time: finish_cubes_avx2, the
/// same IEEE operations lane by lane), which then adds them to their chunks in sub-cube order:
/// call flush() after the last sample (the callers do after every batch); est, var and the shares
/// are complete only then.
template <int D, class Bins>
struct counts_sums {
  enum : unsigned char { end_segment = 1, end_cube = 2, end_chunk = 4 };
  const sampling_params<D>& sp;
  double* est;
  double* var;
  chunk_partial& flags;
  Bins& bins;
  double t1 = 0, t2 = 0, s1 = 0, s2 = 0, chunk_est = 0, chunk_var = 0;
  std::uint64_t out = 0;
  int n_done = 0;  // finished sub-cubes not yet flushed: their sums, counts, indices, chunk ends
  double done_s1[batch] = {}, done_s2[batch] = {}, done_pd[batch] = {};
  std::uint64_t done_cube[batch] = {};
  bool done_chunk[batch] = {};
  /// Adds sample `index` of sub-cube `cube` (n_c = pd samples) with value v and jacobian jac;
  /// `ends`: which ends it is the last sample of; bin_of(j): its bin on axis j.
  template <class BinOf>
  MCUBES_CPU_INLINE void add(double v, double jac, std::uint64_t index, double pd, std::uint64_t cube, unsigned char ends,
                             const BinOf& bin_of) {
    add_sample<D>(v, jac, index, sp.bin_scale / pd, bins, bin_of, flags, t1, t2, sp.bin_axes);
    end_sample(pd, cube, ends);
  }
  /// add() for a sample of a V-Sample pass whose fj = v J, fj2 (finite) and level-0 bin quantum q
  /// were computed ahead (level0_terms_avx2: add_sample's values): add_sample's remaining steps.
  template <class BinOf>
  MCUBES_CPU_INLINE void add_level0(double v, double fj, double fj2, std::uint64_t q, double pd, std::uint64_t cube,
                                    unsigned char ends, const BinOf& bin_of) {
    if (v != 0) ++flags.n_nonzero;
    t1 += fj;
    t2 += fj2;
    if (fj2 > flags.max_contribution) flags.max_contribution = fj2;
    if (q != 0) add_level0_quantum<D>(bins, q, bin_of, sp.bin_axes);
    end_sample(pd, cube, ends);
  }
  /// The ends that a sample of sub-cube `cube` (n_c = pd) closes (`ends`; a chunk ends only with
  /// its last sub-cube).
  MCUBES_CPU_INLINE void end_sample(double pd, std::uint64_t cube, unsigned char ends) {
    if (ends & end_segment) {
      s1 += t1;
      s2 += t2;
      t1 = t2 = 0;
    }
    if (ends & end_cube) {
      done_s1[n_done] = s1;
      done_s2[n_done] = s2;
      done_pd[n_done] = pd;
      done_cube[n_done] = cube;
      done_chunk[n_done] = (ends & end_chunk) != 0;
      s1 = s2 = 0;
      if (++n_done == batch) flush();
    }
  }
  /// finish_cube for the finished sub-cubes (their shares written), then their estimates and
  /// variances added to their chunks in sub-cube order, each chunk's sums stored at its end.
  MCUBES_CPU_INLINE void flush() {
    const int n = n_done;
    if (n == 0) return;
    double mean[batch], vr[batch];
#if MCUBES_CPU_AVX2_DISPATCH
    if (cpu_has_avx2()) {
      double share[batch];
      finish_cubes_avx2(n, done_s1, done_s2, done_pd, sp.counts.beta16, sp.counts.share_out != nullptr, mean, vr, share);
      if (sp.counts.share_out != nullptr)
        for (int i = 0; i < n; ++i) sp.counts.share_out[done_cube[i]] = share[i];
    } else
#endif
      for (int i = 0; i < n; ++i) {
        const cube_estimate ce = finish_cube(done_s1[i], done_s2[i], done_pd[i], sp.counts, done_cube[i]);
        mean[i] = ce.mean;
        vr[i] = ce.var;
      }
    for (int i = 0; i < n; ++i) {
      chunk_est += mean[i];
      chunk_var += vr[i];
      if (done_chunk[i]) {
        est[out] = chunk_est;
        var[out] = chunk_var;
        chunk_est = chunk_var = 0;
        ++out;
      }
    }
    n_done = 0;
  }
};

/// One batch of up to 64 samples of a pass with VEGAS+ counts, as counts_batches hands it on:
/// for i < n, sample index[i] of sub-cube cube_of[i] (n_c = pd_of[i]) at point xs[i] with jacobian
/// jac[i], bins bin[j][i] and ends[i] (counts_sums' flags).
/// The per-sample arrays that counts_batches fills have `fill_block` - 1 entries of slack past the
/// batch: a run is filled in whole blocks of four (its last block may write past the run; the next
/// run, or the padding of run_batch, overwrites those entries).
template <int D>
struct counts_batch {
  static constexpr int fill_block = 4;
  int n = 0;
  std::uint64_t index[batch + fill_block - 1], cube_of[batch + fill_block - 1];
  double cb[D][batch + fill_block - 1], u[D][batch], jac[batch], pd_of[batch + fill_block - 1];
  int bin[D][batch];
  unsigned char ends[batch + fill_block - 1];
  point<D> xs[batch];
};

/// The samples of the chunks (first + c) stride, c < count, of a pass with VEGAS+ counts
/// (sp.counts.per_cube(), core/cube_counts.hpp), in sample-index order: their sub-cubes in order
/// and sub-cube c's samples c p + k, k < n_c, filled into batches of 64 that run across sub-cubes
/// (listed sample indices and per-sample sub-cube coordinates); Philox and the map vectorised over
/// the batch (uniform_batch_of, map_axis: bitwise make_sample's points). Calls take(b) for each
/// full batch and the last one. `stop` is looked at before each batch: returns false once it is
/// requested (the caller abandons the pass), true when every sample was handed on.
template <int D, class Take>
inline bool counts_batches(const sampling_params<D>& sp, const map_view<D>& map, std::uint64_t first, std::uint64_t count,
                           std::uint64_t stride, const stop_request* stop, const Take& take) {
  using ends_t = counts_sums<D, no_bins>;
  const philox_round_keys key = make_philox_round_keys(sp.seed, stream_id::vegas);
#if MCUBES_CPU_AVX2_DISPATCH
  const bool avx2 = cpu_has_avx2();
#endif
  counts_batch<D> b;
  const auto run_batch = [&] {
    const int n = b.n;
    for (int i = n; i < batch; ++i) {  // padded lanes: a valid index and coordinate, results unused
      b.index[i] = b.index[0];
      for (int j = 0; j < D; ++j) b.cb[j][i] = b.cb[j][0];
    }
#if MCUBES_CPU_AVX2_DISPATCH
    if (avx2) {
      uniform_batch_of_wide<D>(key, sp.iteration, listed_indices{b.index}, b.u);
      const double* cs[D];
      const double* us[D];
      for (int j = 0; j < D; ++j) cs[j] = b.cb[j], us[j] = b.u[j];
      map_axes_wide<D>(map, sp.lower, sp.width, sp.inv_g, n, cs, us, b.jac, b.bin, b.xs);
    } else
#endif
    {
      uniform_batch_of<D>(key, sp.iteration, listed_indices{b.index}, b.u);
      map_axis<D, true>(map, 0, sp.lower[0], sp.width[0], sp.inv_g, n, b.cb[0], b.u[0], b.jac, b.bin[0], b.xs);
      for (int j = 1; j < D; ++j)
        map_axis<D, false>(map, j, sp.lower[j], sp.width[j], sp.inv_g, n, b.cb[j], b.u[j], b.jac, b.bin[j], b.xs);
    }
    take(static_cast<const counts_batch<D>&>(b));
    b.n = 0;
  };
  const cube_coord_t<D> gc = static_cast<cube_coord_t<D>>(sp.g);
  cube_coord_t<D> coord[D] = {};
  std::uint64_t next_cube = ~std::uint64_t(0);  // the sub-cube whose coordinates `coord` holds
  for (std::uint64_t c = 0; c < count; ++c) {
    const std::uint64_t chunk = (first + c) * stride;
    const std::uint64_t begin = chunk * sp.chunk_cubes;
    const std::uint64_t end = begin + sp.chunk_cubes < sp.n_cubes ? begin + sp.chunk_cubes : sp.n_cubes;
    // consecutive chunks (stride 1) continue the odometer; otherwise D divisions place it
    if (begin != next_cube) cube_start<D>(begin, sp.g, coord);
    next_cube = end;
    for (std::uint64_t cube = begin; cube < end; ++cube) {
      const std::uint64_t n_c = sp.counts.count(cube);
      const std::uint64_t seg = sp.counts.segment != 0 ? sp.counts.segment : n_c;
      const double pd = static_cast<double>(n_c);
      double cd[D];
      for (int j = 0; j < D; ++j) cd[j] = static_cast<double>(coord[j]);
      // the sub-cube's samples in runs that fill the batch: per run, fills of its values, then
      // the ends (a segment's every seg samples, the sub-cube's and the chunk's at its last)
      for (std::uint64_t k = 0; k < n_c;) {
        const int n = b.n;
        const int len = static_cast<int>(std::min<std::uint64_t>(n_c - k, static_cast<std::uint64_t>(batch - n)));
        const std::uint64_t index0 = cube * sp.p + k;
        constexpr int fb = counts_batch<D>::fill_block;
        for (int i0 = 0; i0 < len; i0 += fb) {  // whole blocks (see counts_batch): few, short runs
          for (int l = 0; l < fb; ++l) b.index[n + i0 + l] = index0 + static_cast<std::uint64_t>(i0 + l);
          for (int j = 0; j < D; ++j)
            for (int l = 0; l < fb; ++l) b.cb[j][n + i0 + l] = cd[j];
          for (int l = 0; l < fb; ++l) {
            b.cube_of[n + i0 + l] = cube;
            b.pd_of[n + i0 + l] = pd;
            b.ends[n + i0 + l] = 0;
          }
        }
        // the samples k + i with (k + i + 1) % seg == 0 in this run, the first at seg - 1 - k % seg
        for (std::uint64_t i = seg - 1 - k % seg; i < static_cast<std::uint64_t>(len); i += seg)
          b.ends[n + static_cast<int>(i)] = ends_t::end_segment;
        k += static_cast<std::uint64_t>(len);
        if (k == n_c)  // the run ends the sub-cube (and its chunk if the sub-cube is the chunk's last)
          b.ends[n + len - 1] = static_cast<unsigned char>(ends_t::end_segment | ends_t::end_cube |
                                                           (cube + 1 == end ? ends_t::end_chunk : 0));
        b.n = n + len;
        if (b.n == batch) {
          if (stop != nullptr && stop->requested()) return false;  // abandoned: the caller discards the pass
          run_batch();
        }
      }
      for (int j = 0; j < D; ++j) {  // odometer step to the next sub-cube
        coord[j] += 1;
        if (coord[j] < gc) break;
        coord[j] = 0;
      }
    }
  }
  if (stop != nullptr && stop->requested()) return false;
  if (b.n > 0) run_batch();
  return true;
}

/// The CPU fast path of sample_chunk (core/sampler.hpp) for a pass with VEGAS+ counts
/// (sp.counts.per_cube(), core/cube_counts.hpp): the chunks (first + c) stride, c < count, their
/// samples in batches (counts_batches), f and the sums sample by sample in index order
/// (counts_sums). Stores each chunk's sums in est[c], var[c] and merges the flags into `flags`:
/// bitwise sample_chunk's, chunk by chunk. `stop` is looked at before each batch.
template <int D, class Bins>
inline void sample_chunks_counts(const pass_integrand<D>& f, const sampling_params<D>& sp, const map_view<D>& map, std::uint64_t first,
                                 std::uint64_t count, std::uint64_t stride, double* est, double* var, chunk_partial& flags,
                                 Bins& bins, const stop_request* stop = nullptr) {
  counts_sums<D, Bins> sums{sp, est, var, flags, bins};
  double fx[batch];
#if MCUBES_CPU_AVX2_DISPATCH
  const bool avx2 = Bins::enabled && cpu_has_avx2();
  double fj[batch], fj2[batch];
  std::uint64_t q[batch];
#endif
  counts_batches<D>(sp, map, first, count, stride, stop, [&](const counts_batch<D>& b) {
    f(b.xs, static_cast<std::size_t>(b.n), fx);
#if MCUBES_CPU_AVX2_DISPATCH
    if (avx2) {  // V-Sample: the samples' terms four at a time, then their sums in order
      const std::uint64_t simple = level0_terms_avx2(b.n, fx, b.jac, 0, b.index, sp.bin_scale, b.pd_of, fj, fj2, q);
      for (int i = 0; i < b.n; ++i) {
        const auto bin_of = [&](int j) { return b.bin[j][i]; };
        if ((simple >> i) & 1u)
          sums.add_level0(fx[i], fj[i], fj2[i], q[i], b.pd_of[i], b.cube_of[i], b.ends[i], bin_of);
        else
          sums.add(fx[i], b.jac[i], b.index[i], b.pd_of[i], b.cube_of[i], b.ends[i], bin_of);
      }
      sums.flush();
      return;
    }
#endif
    for (int i = 0; i < b.n; ++i)
      sums.add(fx[i], b.jac[i], b.index[i], b.pd_of[i], b.cube_of[i], b.ends[i], [&](int j) { return b.bin[j][i]; });
    sums.flush();
  });
}

}  // namespace cpu_detail


}  // namespace mcubes

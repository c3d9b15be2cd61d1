#pragma once
/// @file backend/backend.hpp
/// The backend concept, in one place. A backend decides who computes which problem-defined chunk;
/// it never decides what is computed, so it never changes a result. Two exist: cpu_backend
/// (backend/cpu.hpp: its pool of worker threads) and cuda_backend (backend/cuda.cuh: one device and one stream).
/// Every method (algorithm/vegas.hpp, vegas_vector.hpp, vegas_batch.hpp, plain_mc.hpp,
/// midpoint.hpp, pi.hpp) and the integrator (methods.hpp) are written once over these operations.
///
/// The chunk operations (plain Monte Carlo, the midpoint rule, pi):
///
///   std::string name()                                  "cpu" or "cuda"
///   T reduce<T>(n_chunks, chunk, merge)                 merge of chunk(c), c in [0, n_chunks), over
///                                                       the fixed pairwise tree (core/fixed_tree.hpp);
///                                                       merge(x, T{}) == x; bitwise the same on
///                                                       every backend for the same chunk partials
///   uint64 count(n_chunks, chunk)                       exact integer sum of chunk(c)
///
/// the sampling operation, the backend's one entry for Vegas passes (core/sampling_pass.hpp):
///
///   vector<pass_sums_t<Values>> sample_passes<Values = double>(f, maps, passes)
///                                                       K = passes.size() passes of an integrand
///                                                       whose value per point is Values (double:
///                                                       a scalar integrand; values<N>: a vector
///                                                       integrand of N components), each through
///                                                       map passes[i].integral of `maps` (one
///                                                       integral's map, make_map: integral 0; a
///                                                       batch, make_batch: member k, integrand
///                                                       with_parameters{f, params[k]}), V-Sample
///                                                       or No-Adjust, with the pass's sampling
///                                                       parameters (VEGAS+'s per-sub-cube counts
///                                                       among them). Result i is pass i's sums
///                                                       (iteration_sums; vector_pass_sums for
///                                                       values<N>: component 0's and the N
///                                                       estimates and N x N products), bitwise
///                                                       those of pass i alone. The backend picks
///                                                       its kernel or CPU pass (its policies) by
///                                                       the form: scalar, vector, batch.
///
/// the map operations (Vegas, vector Vegas, the integrator's saved and loaded maps):
///
///   Map make_map<D>(n_bins)                             a uniform adaptive map the backend owns
///                                                       (host memory or device memory); map.view()
///                                                       is its map_view<D>
///   void adapt_map(map, sums, alpha, floor, symmetric)  the map adapted to the last V-Sample pass
///                                                       (floor: the defensive floor, options.hpp)
///   vector<double> map_edges(map)                       the edges, on the host
///   void set_map_edges(map, edges)                      replaces the edges (checked)
///   Values make_cube_values(n)                          n doubles in the backend's memory, with
///                                                       data() (VEGAS+'s per-sub-cube shares,
///                                                       read and written by the passes through
///                                                       sampling_params::counts)
///
/// the batch operations of algorithm/vegas_batch.hpp (many integrals f(., params[k])):
///
///   Batch make_batch<D>(params, n, n_bins)              the maps and bins of n integrals (the
///                                                       `maps` of sample_passes for a batch)
///   void adapt_batch(batch, items, alpha, floor, symmetric) maps adapted to their last V-Sample passes
///   vector<double> batch_map_edges(batch, k)            integral k's edges, on the host
///   worker_pool& host_workers()                         the host threads of a round's host work
///                                                       (backend/worker_pool.hpp)
///
/// and, on a backend with static constexpr bool batch_pipeline = true (cuda_backend), the
/// pipeline operations:
///
///   void check_batch_memory<D, P>(n, n_bins)            throws invalid_input if n integrals do not fit
///   void start_batch(f, batch, passes)                  sample_passes over a batch in two calls (vegas_batch
///   vector<iteration_sums> finish_batch(f, batch, passes) alternates two batches on the device)
///
/// and, optionally (cuda_backend), VEGAS+'s allocation in one step (algorithm/vegas.hpp,
/// allocate_counts, detects it):
///
///   allocate_counts(shares, counts, st, with_total, s0, base, target)
///                                                       the sum of the shares as reduce gives it
///                                                       and the counts' scale and evaluations as
///                                                       the search over count() finds them
///   allocate_counts_batch(vector<counts_request>)      allocate_counts of each request, in one step
///                                                       (a batch's members)
///
/// Chunk functors, merges and integrands are trivially copyable structs with MCUBES_HOST_DEVICE call
/// operators (the CUDA backend copies them to the device by value); chunk c depends on c and the
/// problem only. Determinism contract of every backend: the same bits for any thread count, block
/// size, grid or stream, on every run.
///
/// `is_backend_v<B>` checks every operation above at compile time, with the argument and result
/// types the methods use, on probe functors (dimension 2, 2 components, one parameter).

#include <cstddef>
#include <cstdint>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

#include "../config.hpp"
#include "../core/batch.hpp"
#include "../core/sampler.hpp"
#include "../core/sampling_pass.hpp"
#include "../core/stratification.hpp"
#include "../point.hpp"
#include "../values.hpp"
#include "worker_pool.hpp"

namespace mcubes {

/// True if B declares static constexpr bool batch_pipeline = true: it offers check_batch_memory,
/// start_batch and finish_batch, and vegas_batch pipelines large batches on it.
template <class B, class = void>
struct backend_pipelines_batches : std::false_type {};
template <class B>
struct backend_pipelines_batches<B, std::void_t<decltype(B::batch_pipeline)>>
    : std::bool_constant<static_cast<bool>(B::batch_pipeline)> {};

namespace backend_probe {

/// The dimension, number of components and parameters of the probes.
inline constexpr int dim = 2;
inline constexpr int components = 2;
struct parameters {
  double a;
};

/// A chunk of a reduce: one double per chunk.
struct chunk {
  MCUBES_HOST_DEVICE double operator()(std::uint64_t) const { return 0; }
};
/// The merge of a reduce.
struct merge {
  MCUBES_HOST_DEVICE double operator()(double x, double y) const { return x + y; }
};
/// A chunk of a count: an integer per chunk.
struct count_chunk {
  MCUBES_HOST_DEVICE std::uint32_t operator()(std::uint64_t) const { return 0; }
};
/// An integrand of dim variables.
struct integrand {
  MCUBES_HOST_DEVICE double operator()(const point<dim>&) const { return 1; }
};
/// A vector-valued integrand of dim variables and `components` components.
struct vector_integrand {
  MCUBES_HOST_DEVICE values<components> operator()(const point<dim>&) const { return {}; }
};
/// A batch integrand of dim variables and `parameters`.
struct batch_integrand {
  MCUBES_HOST_DEVICE double operator()(const point<dim>&, const parameters&) const { return 1; }
};

template <class B>
using map_t = std::decay_t<decltype(std::declval<B&>().template make_map<dim>(int{}))>;
template <class B>
using batch_t =
    std::decay_t<decltype(std::declval<B&>().template make_batch<dim>(std::declval<const parameters*>(), std::size_t{}, int{}))>;
using passes_t = std::vector<batch_pass<dim>>;
using adapt_items_t = std::vector<std::pair<std::size_t, const iteration_sums*>>;

// name, reduce, count
template <class B, class = void>
struct chunk_ops : std::false_type {};
template <class B>
struct chunk_ops<B, std::void_t<decltype(std::declval<B&>().name()),
                                decltype(std::declval<B&>().template reduce<double>(std::uint64_t{}, chunk{}, merge{})),
                                decltype(std::declval<B&>().count(std::uint64_t{}, count_chunk{}))>>
    : std::bool_constant<std::is_convertible_v<decltype(std::declval<B&>().name()), std::string> &&
                         std::is_same_v<decltype(std::declval<B&>().template reduce<double>(std::uint64_t{}, chunk{}, merge{})),
                                        double> &&
                         std::is_same_v<decltype(std::declval<B&>().count(std::uint64_t{}, count_chunk{})), std::uint64_t>> {};

// sample_passes (over a map: scalar and vector integrands; over a batch), make_map, adapt_map,
// map_edges, set_map_edges
using pass_list_t = std::vector<sampling_pass<dim>>;
template <class B>
using sample_passes_t = decltype(std::declval<B&>().sample_passes(integrand{}, std::declval<const map_t<B>&>(),
                                                                  std::declval<const pass_list_t&>()));
template <class B>
using sample_vector_passes_t = decltype(std::declval<B&>().template sample_passes<values<components>>(
    vector_integrand{}, std::declval<const map_t<B>&>(), std::declval<const pass_list_t&>()));
template <class B>
using adapt_map_t = decltype(std::declval<B&>().adapt_map(std::declval<map_t<B>&>(), std::declval<const iteration_sums&>(), double{}, double{}, bool{}));
template <class B>
using map_edges_t = decltype(std::declval<B&>().map_edges(std::declval<const map_t<B>&>()));
template <class B>
using set_map_edges_t = decltype(std::declval<B&>().set_map_edges(std::declval<map_t<B>&>(), std::declval<const std::vector<double>&>()));
template <class B>
using cube_values_data_t = decltype(std::declval<B&>().make_cube_values(std::uint64_t{}).data());

template <class B, class = void>
struct map_ops : std::false_type {};
template <class B>
struct map_ops<B, std::void_t<map_t<B>, decltype(std::declval<const map_t<B>&>().view()), sample_passes_t<B>,
                              sample_vector_passes_t<B>, adapt_map_t<B>, map_edges_t<B>, set_map_edges_t<B>,
                              cube_values_data_t<B>>>
    : std::bool_constant<std::is_same_v<decltype(std::declval<const map_t<B>&>().view()), map_view<dim>> &&
                         std::is_convertible_v<sample_passes_t<B>, std::vector<iteration_sums>> &&
                         std::is_convertible_v<sample_vector_passes_t<B>, std::vector<vector_pass_sums>> &&
                         std::is_convertible_v<map_edges_t<B>, std::vector<double>> &&
                         std::is_same_v<cube_values_data_t<B>, double*>> {};

// make_batch, sample_passes over a batch, adapt_batch, batch_map_edges, host_workers
template <class B>
using sample_batch_t =
    decltype(std::declval<B&>().sample_passes(batch_integrand{}, std::declval<batch_t<B>&>(), std::declval<const passes_t&>()));
template <class B>
using adapt_batch_t =
    decltype(std::declval<B&>().adapt_batch(std::declval<batch_t<B>&>(), std::declval<const adapt_items_t&>(), double{}, double{}, bool{}));
template <class B>
using batch_map_edges_t = decltype(std::declval<B&>().batch_map_edges(std::declval<const batch_t<B>&>(), std::size_t{}));
template <class B>
using host_workers_t = decltype(std::declval<B&>().host_workers());

template <class B, class = void>
struct batch_ops : std::false_type {};
template <class B>
struct batch_ops<B, std::void_t<batch_t<B>, sample_batch_t<B>, adapt_batch_t<B>, batch_map_edges_t<B>, host_workers_t<B>>>
    : std::bool_constant<std::is_convertible_v<sample_batch_t<B>, std::vector<iteration_sums>> &&
                         std::is_convertible_v<batch_map_edges_t<B>, std::vector<double>> &&
                         std::is_same_v<host_workers_t<B>, worker_pool&>> {};

// check_batch_memory, start_batch, finish_batch
template <class B>
using check_batch_memory_t =
    decltype(std::declval<B&>().template check_batch_memory<dim, parameters>(std::size_t{}, int{}));
template <class B>
using start_batch_t =
    decltype(std::declval<B&>().start_batch(batch_integrand{}, std::declval<batch_t<B>&>(), std::declval<const passes_t&>()));
template <class B>
using finish_batch_t =
    decltype(std::declval<B&>().finish_batch(batch_integrand{}, std::declval<batch_t<B>&>(), std::declval<const passes_t&>()));

template <class B, class = void>
struct pipeline_ops : std::false_type {};
template <class B>
struct pipeline_ops<B, std::void_t<check_batch_memory_t<B>, start_batch_t<B>, finish_batch_t<B>>>
    : std::is_convertible<finish_batch_t<B>, std::vector<iteration_sums>> {};

}  // namespace backend_probe

/// True if B offers name, reduce and count (the operations of plain Monte Carlo, the midpoint rule
/// and pi) with the argument and result types above.
template <class B>
inline constexpr bool has_chunk_operations_v = backend_probe::chunk_ops<B>::value;
/// True if B offers sample_passes over a map (scalar and vector integrands), make_map, adapt_map,
/// map_edges, set_map_edges and make_cube_values (Vegas, vector Vegas, the integrator) and its map
/// has view().
template <class B>
inline constexpr bool has_map_operations_v = backend_probe::map_ops<B>::value;
/// True if B offers make_batch, sample_passes over a batch, adapt_batch, batch_map_edges and
/// host_workers (vegas_batch).
template <class B>
inline constexpr bool has_batch_operations_v = backend_probe::batch_ops<B>::value;
/// True if B offers check_batch_memory, start_batch and finish_batch (and a batch: make_batch).
template <class B>
inline constexpr bool has_pipeline_operations_v = backend_probe::pipeline_ops<B>::value;

/// True if B is a backend: it offers every operation listed above (the pipeline operations where it
/// declares batch_pipeline = true), each with the argument and result types the methods use,
/// checked on the probe functors of backend_probe. A type that lacks one is not a backend.
template <class B>
inline constexpr bool is_backend_v = has_chunk_operations_v<B> && has_map_operations_v<B> &&
                                     has_batch_operations_v<B> &&
                                     (!backend_pipelines_batches<B>::value || has_pipeline_operations_v<B>);

}  // namespace mcubes

#pragma once
/// @file backend/backend.hpp
/// The backend concept, in one place. A backend decides who computes which problem-defined chunk;
/// it never decides what is computed, so it never changes a result. Two exist: cpu_backend
/// (backend/cpu.hpp: std::threads) and cuda_backend (backend/cuda.cuh: one device and one stream).
/// Every method (algorithm/vegas.hpp, plain_mc.hpp, midpoint.hpp, pi.hpp) is written once over
/// these operations:
///
///   std::string name()                                  "cpu" or "cuda"
///   T reduce<T>(n_chunks, chunk, merge)                 merge of chunk(c), c in [0, n_chunks), over
///                                                       the fixed pairwise tree (core/fixed_tree.hpp);
///                                                       merge(x, T{}) == x; bitwise the same on
///                                                       every backend for the same chunk partials
///   uint64 count(n_chunks, chunk)                       exact integer sum of chunk(c)
///   Map make_map<D>(n_bins)                             a uniform adaptive map the backend owns
///                                                       (host memory or device memory)
///   iteration_sums sample(f, sp, st, map, adapt, stride) one Vegas pass (V-Sample / No-Adjust)
///   void adapt_map(map, sums, alpha, symmetric)         the map adapted to the last V-Sample pass
///   vector<double> map_edges(map)                       the edges, on the host
///   void set_map_edges(map, edges)                      replaces the edges (checked)
///
/// and the batch operations of algorithm/vegas_batch.hpp (many integrals f(., params[k])):
///
///   Batch make_batch<D>(params, n, n_bins)              the maps and bins of n integrals
///   vector<iteration_sums> sample_batch(f, batch, passes) one pass of each listed integral, each
///                                                       bitwise its sample() alone
///   void adapt_batch(batch, items, alpha, symmetric)    maps adapted to their last V-Sample passes
///   vector<double> batch_map_edges(batch, k)            integral k's edges, on the host
///
/// and, on a backend with static constexpr bool batch_pipeline = true (cuda_backend),
/// start_batch / finish_batch (sample_batch in two calls: vegas_batch alternates two batches on
/// the device) and check_batch_memory<D, P>(n, n_bins) (throws invalid_input if n integrals do not fit).
///
/// Chunk functors and merges are trivially copyable structs with MCUBES_HOST_DEVICE call operators
/// (the CUDA backend copies them to the device by value); chunk c depends on c and the problem only.
/// Determinism contract of every backend: the same bits for any thread count, block size, grid or
/// stream, on every run.
///
/// is_backend_v<B> checks the chunk operations at compile time (the Vegas operations are templates
/// over the integrand and are checked where they are used).

#include <cstdint>
#include <string>
#include <type_traits>
#include <utility>

namespace mcubes {

namespace detail {
struct count_probe {
  std::uint32_t operator()(std::uint64_t) const { return 0; }
};
template <class B, class = void>
struct has_backend_ops : std::false_type {};
template <class B>
struct has_backend_ops<B, std::void_t<decltype(std::declval<B&>().name()),
                                       decltype(std::declval<B&>().count(std::uint64_t{}, count_probe{}))>>
    : std::true_type {};
}  // namespace detail

/// True if B offers the chunk operations of a backend (name, count; reduce is a template checked at
/// its use).
template <class B>
inline constexpr bool is_backend_v = detail::has_backend_ops<B>::value;

}  // namespace mcubes

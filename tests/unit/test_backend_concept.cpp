// The backend concept (backend/backend.hpp): is_backend_v holds for cpu_backend, and for a type
// that declares every operation of the concept; it fails for that type less any one operation, with
// one operation of the wrong form, and for a type that declares batch_pipeline = true without the
// pipeline operations. All checks are static_asserts (a failure stops the build); the test below
// repeats the central ones at run time so that they are listed with the other tests.
#include <gtest/gtest.h>

#include <cstddef>
#include <cstdint>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

#include <mcubes/backend/backend.hpp>
#include <mcubes/backend/cpu.hpp>

namespace {

using mcubes::batch_pass;
using mcubes::iteration_sums;
using mcubes::map_view;
using mcubes::sampling_pass;
using mcubes::sampling_params;
using mcubes::stratification;

// ---- The probe functors are what the concept says functors are: trivially copyable.
static_assert(std::is_trivially_copyable_v<mcubes::backend_probe::chunk>);
static_assert(std::is_trivially_copyable_v<mcubes::backend_probe::merge>);
static_assert(std::is_trivially_copyable_v<mcubes::backend_probe::count_chunk>);
static_assert(std::is_trivially_copyable_v<mcubes::backend_probe::integrand>);
static_assert(std::is_trivially_copyable_v<mcubes::backend_probe::vector_integrand>);
static_assert(std::is_trivially_copyable_v<mcubes::backend_probe::batch_integrand>);

// ---- The real CPU backend: every operation, no pipeline.
static_assert(mcubes::has_chunk_operations_v<mcubes::cpu_backend>);
static_assert(mcubes::has_map_operations_v<mcubes::cpu_backend>);
static_assert(mcubes::has_batch_operations_v<mcubes::cpu_backend>);
static_assert(!mcubes::backend_pipelines_batches<mcubes::cpu_backend>::value);
static_assert(!mcubes::has_pipeline_operations_v<mcubes::cpu_backend>);
static_assert(mcubes::is_backend_v<mcubes::cpu_backend>);
static_assert(mcubes::is_backend_v<const mcubes::cpu_backend>);  // its operations are const

// ---- A backend declared operation by operation (declarations only: the trait never calls them).
template <int D>
struct fake_map {
  map_view<D> view() const;
};
template <int D>
struct viewless_map {};
template <int D, class P>
struct fake_batch {};

struct op_name {
  static std::string name();
};
struct op_reduce {
  template <class T, class Chunk, class Merge>
  T reduce(std::uint64_t n_chunks, const Chunk& chunk, const Merge& merge) const;
};
struct op_count {
  template <class Chunk>
  std::uint64_t count(std::uint64_t n_chunks, const Chunk& chunk) const;
};
struct op_make_map {
  template <int D>
  fake_map<D> make_map(int n_bins) const;
};
struct op_sample_passes {  // over a map (scalar and vector integrands) and over a batch
  template <class Values = double, int D, class F>
  std::vector<mcubes::pass_sums_t<Values>> sample_passes(const F& f, const fake_map<D>& map,
                                                         const std::vector<sampling_pass<D>>& passes) const;
  template <class Values = double, int D, class F, class P>
  std::vector<mcubes::pass_sums_t<Values>> sample_passes(const F& f, fake_batch<D, P>& b,
                                                         const std::vector<sampling_pass<D>>& passes) const;
};
struct op_adapt_map {
  template <class Map>
  void adapt_map(Map& map, const iteration_sums& sums, double alpha, double floor, bool symmetric) const;
};
struct op_map_edges {
  template <class Map>
  std::vector<double> map_edges(const Map& map) const;
};
struct op_set_map_edges {
  template <class Map>
  void set_map_edges(Map& map, const std::vector<double>& edges) const;
};
struct op_make_cube_values {
  std::vector<double> make_cube_values(std::uint64_t n) const;
};
struct op_make_cube_values_const {  // read-only storage: the passes could not write their shares
  const std::vector<double> make_cube_values(std::uint64_t n) const;
};
struct const_values {
  const double* data() const;
};
struct op_make_cube_values_read_only {
  const_values make_cube_values(std::uint64_t n) const;
};
struct op_make_batch {
  template <int D, class P>
  fake_batch<D, P> make_batch(const P* params, std::size_t n, int n_bins) const;
};
struct op_adapt_batch {
  template <int D, class P>
  void adapt_batch(fake_batch<D, P>& b, const std::vector<std::pair<std::size_t, const iteration_sums*>>& items,
                   double alpha, double floor, bool symmetric) const;
};
struct op_batch_map_edges {
  template <int D, class P>
  std::vector<double> batch_map_edges(const fake_batch<D, P>& b, std::size_t k) const;
};
struct op_host_workers {
  mcubes::worker_pool& host_workers() const;
};
struct op_pipeline_flag {
  static constexpr bool batch_pipeline = true;
};
struct op_check_batch_memory {
  template <int D, class P>
  void check_batch_memory(std::size_t n, int n_bins);
};
struct op_start_batch {
  template <int D, class F, class P>
  void start_batch(const F& f, fake_batch<D, P>& b, const std::vector<batch_pass<D>>& passes);
};
struct op_finish_batch {
  template <int D, class F, class P>
  std::vector<iteration_sums> finish_batch(const F& f, fake_batch<D, P>& b, const std::vector<batch_pass<D>>& passes);
};

// Operations of the wrong form, each a replacement of one above.
struct op_name_int {
  static int name();
};
struct op_count_double {  // count must be an exact uint64
  template <class Chunk>
  double count(std::uint64_t n_chunks, const Chunk& chunk) const;
};
struct op_make_map_viewless {  // every map has view() (its map_view, for the host-side readers)
  template <int D>
  viewless_map<D> make_map(int n_bins) const;
};
struct op_sample_passes_scalar_only {  // a vector integrand's passes return the scalar sums only
  template <class Values = double, int D, class F>
  std::vector<iteration_sums> sample_passes(const F& f, const fake_map<D>& map,
                                            const std::vector<sampling_pass<D>>& passes) const;
  template <class Values = double, int D, class F, class P>
  std::vector<iteration_sums> sample_passes(const F& f, fake_batch<D, P>& b,
                                            const std::vector<sampling_pass<D>>& passes) const;
};
struct op_sample_passes_maps_only {  // no batch form
  template <class Values = double, int D, class F>
  std::vector<mcubes::pass_sums_t<Values>> sample_passes(const F& f, const fake_map<D>& map,
                                                         const std::vector<sampling_pass<D>>& passes) const;
};
struct op_sample_passes_double {  // one number per call, not the sums of each pass
  template <class Values = double, int D, class F, class Maps>
  double sample_passes(const F& f, Maps& maps, const std::vector<sampling_pass<D>>& passes) const;
};
struct op_map_edges_to_map {  // set_map_edges without the edges
  template <class Map>
  void set_map_edges(Map& map) const;
};
struct op_sample_passes_batch_one {  // one sums for all passes of a batch
  template <class Values = double, int D, class F>
  std::vector<mcubes::pass_sums_t<Values>> sample_passes(const F& f, const fake_map<D>& map,
                                                         const std::vector<sampling_pass<D>>& passes) const;
  template <class Values = double, int D, class F, class P>
  iteration_sums sample_passes(const F& f, fake_batch<D, P>& b, const std::vector<sampling_pass<D>>& passes) const;
};
struct op_host_workers_by_value {  // a count of threads, not the pool
  int host_workers() const;
};
struct op_pipeline_flag_false {
  static constexpr bool batch_pipeline = false;
};

template <class Op>
struct absent {};
/// The backend of operations Ops, with Old replaced by New.
template <class Old, class New, class... Ops>
struct backend_replacing : std::conditional_t<std::is_same_v<Ops, Old>, New, Ops>... {};

#define MCUBES_TEST_CPU_OPS                                                                                      \
  op_name, op_reduce, op_count, op_make_map, op_sample_passes, op_adapt_map, op_map_edges, op_set_map_edges,     \
      op_make_cube_values, op_make_batch, op_adapt_batch, op_batch_map_edges, op_host_workers
#define MCUBES_TEST_PIPELINE_OPS op_pipeline_flag, op_check_batch_memory, op_start_batch, op_finish_batch

/// Whether the operations of a CPU-like backend (no pipeline), with Old replaced by New, make a backend.
template <class Old, class New = absent<Old>>
inline constexpr bool cpu_like_is_backend = mcubes::is_backend_v<backend_replacing<Old, New, MCUBES_TEST_CPU_OPS>>;
/// The same for a pipelining backend (batch_pipeline = true and the pipeline operations).
template <class Old, class New = absent<Old>>
inline constexpr bool pipelined_is_backend =
    mcubes::is_backend_v<backend_replacing<Old, New, MCUBES_TEST_CPU_OPS, MCUBES_TEST_PIPELINE_OPS>>;

struct nothing {};  // replaces nothing

// Every operation declared: a backend, with or without the pipeline.
static_assert(cpu_like_is_backend<nothing>);
static_assert(pipelined_is_backend<nothing>);
static_assert(mcubes::has_pipeline_operations_v<backend_replacing<nothing, nothing, MCUBES_TEST_CPU_OPS, MCUBES_TEST_PIPELINE_OPS>>);
// The pipeline operations without the flag, or with batch_pipeline = false: still a backend.
static_assert(pipelined_is_backend<op_pipeline_flag>);
static_assert(pipelined_is_backend<op_pipeline_flag, op_pipeline_flag_false>);
static_assert(cpu_like_is_backend<op_name, backend_replacing<nothing, nothing, op_name, op_pipeline_flag_false>>);

// Less any one operation: not a backend.
static_assert(!cpu_like_is_backend<op_name>);
static_assert(!cpu_like_is_backend<op_reduce>);
static_assert(!cpu_like_is_backend<op_count>);
static_assert(!cpu_like_is_backend<op_make_map>);
static_assert(!cpu_like_is_backend<op_sample_passes>);
static_assert(!cpu_like_is_backend<op_adapt_map>);
static_assert(!cpu_like_is_backend<op_map_edges>);
static_assert(!cpu_like_is_backend<op_set_map_edges>);
static_assert(!cpu_like_is_backend<op_make_cube_values>);
static_assert(!cpu_like_is_backend<op_make_batch>);
static_assert(!cpu_like_is_backend<op_adapt_batch>);
static_assert(!cpu_like_is_backend<op_batch_map_edges>);
static_assert(!cpu_like_is_backend<op_host_workers>);
// batch_pipeline = true without one of the pipeline operations: not a backend.
static_assert(!pipelined_is_backend<op_check_batch_memory>);
static_assert(!pipelined_is_backend<op_start_batch>);
static_assert(!pipelined_is_backend<op_finish_batch>);
// One operation of the wrong form: not a backend.
static_assert(!cpu_like_is_backend<op_name, op_name_int>);
static_assert(!cpu_like_is_backend<op_count, op_count_double>);
static_assert(!cpu_like_is_backend<op_make_map, op_make_map_viewless>);
static_assert(!cpu_like_is_backend<op_sample_passes, op_sample_passes_double>);
static_assert(!cpu_like_is_backend<op_sample_passes, op_sample_passes_scalar_only>);  // no vector form
static_assert(!cpu_like_is_backend<op_sample_passes, op_sample_passes_maps_only>);    // no batch form
static_assert(!cpu_like_is_backend<op_set_map_edges, op_map_edges_to_map>);
static_assert(!cpu_like_is_backend<op_make_cube_values, op_make_cube_values_const>);
static_assert(!cpu_like_is_backend<op_make_cube_values, op_make_cube_values_read_only>);
static_assert(!cpu_like_is_backend<op_sample_passes, op_sample_passes_batch_one>);
static_assert(!cpu_like_is_backend<op_host_workers, op_host_workers_by_value>);
// Not backends at all.
static_assert(!mcubes::is_backend_v<int>);
static_assert(!mcubes::is_backend_v<nothing>);

TEST(BackendConcept, CpuBackendIsABackendAndIncompleteTypesAreNot) {
  EXPECT_TRUE(mcubes::is_backend_v<mcubes::cpu_backend>);
  EXPECT_TRUE(cpu_like_is_backend<nothing>);
  EXPECT_TRUE(pipelined_is_backend<nothing>);
  EXPECT_FALSE(cpu_like_is_backend<op_sample_passes>);
  EXPECT_FALSE((cpu_like_is_backend<op_sample_passes, op_sample_passes_scalar_only>));
  EXPECT_FALSE(pipelined_is_backend<op_finish_batch>);
}

}  // namespace

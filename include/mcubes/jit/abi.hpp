#pragma once
/// @file jit/abi.hpp
/// The binary interface between a program and an integrand compiled at run time (jit.hpp): plain C
/// structs and two exported C functions, so that the program and the shared object need to agree
/// on nothing but this file (not on a C++ standard library, its exception types or its std::string
/// layout). The program fills an mcubes_jit_call, calls the object's mcubes_jit_run, and gets the
/// result, each iteration (through a C callback) and, on failure, the kind of the error with its
/// message and sample, which it throws again as the same mcubes exception type (jit.hpp).
///
/// An object exports
///   const mcubes_jit_object* mcubes_jit_object_info(void);  what it is (ABI version, D, method, ...)
/// and its method's entry, and nothing else (it is compiled with hidden visibility):
///   int mcubes_jit_run(mcubes_jit_call* call);              one run (vegas, plain_mc, midpoint);
///   int mcubes_jit_run_batch(mcubes_jit_batch_call* call);  one parameter batch (vegas_batch);
/// both return call->error_kind. An object of method mcubes_jit_method_points holds the integrand
/// only (the program runs any method itself, jit/object_run.hpp) and exports instead
///   int mcubes_jit_points(const double* params, const double* x, uint64_t n, double* values,
///                         char* message);                 values[i] = f(point i), mcubes_jit_points_fn
///   int32_t mcubes_jit_index_at(const double* params, const double* x);  mcubes_jit_index_at_fn
/// Exceptions never cross the interface: the object catches everything, and the program's callback
/// must not throw into it.
///
/// MCUBES_JIT_ABI_VERSION changes with any change of these structs or functions; an object of
/// another version is refused before it is called.

#include <stdint.h>

/// Version of this interface (objects of another version are refused).
#define MCUBES_JIT_ABI_VERSION 10

/// Slots for the options table's fields (mcubes_jit_options::vegas; at least vegas_option_count).
#define MCUBES_JIT_OPTION_SLOTS 32

/// The largest size of the error message an object returns (bytes, with the terminating 0).
#define MCUBES_JIT_MESSAGE_SIZE 4096

#ifdef __cplusplus
extern "C" {
#endif

/// The method an object runs (one per object: only that one is compiled). vegas_batch: m-Cubes over
/// K parameter vectors in one batch (mcubes::vegas_batch_with; entry mcubes_jit_run_batch).
/// mcubes_jit_method_points: the object holds the integrand only and serves every method, which the
/// program runs (entries mcubes_jit_points and mcubes_jit_index_at; CPU objects only).
enum mcubes_jit_method {
  mcubes_jit_vegas = 0,
  mcubes_jit_plain_mc = 1,
  mcubes_jit_midpoint = 2,
  mcubes_jit_vegas_batch = 3,
  mcubes_jit_method_points = 4
};

/// The backend an object was compiled for: cpu (C++ compiler) or cuda (nvcc).
enum mcubes_jit_backend { mcubes_jit_cpu = 0, mcubes_jit_cuda = 1 };

/// What went wrong in a run (mcubes_jit_call::error_kind), one per mcubes exception type.
enum mcubes_jit_error_kind {
  mcubes_jit_ok = 0,
  mcubes_jit_invalid_input = 1,       ///< mcubes::invalid_input
  mcubes_jit_non_finite = 2,          ///< mcubes::non_finite_integrand (iteration, sample, point, value)
  mcubes_jit_index_out_of_range = 3,  ///< non_finite_integrand caused by x[i] with i outside [0, D): error_index
  mcubes_jit_overflow = 4,            ///< mcubes::overflow_error (iteration, sample, point, value, jacobian)
  mcubes_jit_numerical = 5,           ///< mcubes::numerical_error
  mcubes_jit_cuda_error = 6,          ///< mcubes::cuda_error
  mcubes_jit_error = 7,               ///< any other mcubes::error
  mcubes_jit_out_of_memory = 8,       ///< std::bad_alloc
  mcubes_jit_other = 9,               ///< any other exception
  mcubes_jit_bad_call = 10            ///< the call itself does not fit the object (ABI, dimension, parameters)
};

/// The options of every method (vegas_options, plain_mc_options, midpoint_options; the fields of
/// the method that does not run are ignored).
typedef struct mcubes_jit_options {
  /// The fields of vegas_options in the order of the options table (options.hpp,
  /// for_each_vegas_option), 64 bits each (option_slot: a double's bits, an integer, 0/1, the
  /// enumerator); plain Monte Carlo and the midpoint rule read rel_tol, abs_tol and seed there.
  uint64_t vegas[MCUBES_JIT_OPTION_SLOTS];
  int32_t n_vegas;      ///< slots used: the program's vegas_option_count (the object checks it)
  uint64_t samples;     ///< plain Monte Carlo: N
  uint64_t n_per_axis;  ///< midpoint rule: points per axis
  int32_t threads, cuda_threads_per_block, device;
  /// execution::stop: an mcubes::stop_request (execution.hpp: one lock-free std::atomic<bool>, the
  /// same object in the program and the object, both compiled with the same headers), or null.
  const void* stop;
  /// execution::devices: n_devices CUDA ordinals (null when n_devices is 0: `device` alone). An
  /// object compiled by nvcc splits a Vegas run or batch over them (algorithm/devices.hpp); any
  /// other object refuses more than one.
  const int32_t* devices;
  int32_t n_devices;
} mcubes_jit_options;

/// mcubes::iteration_record.
typedef struct mcubes_jit_record {
  int32_t index;
  double estimate, error;
  int32_t adapted, accumulated, underflow;
  double weighted_estimate, weighted_error, chi2_dof, q;
  uint64_t n_eval, n_nonzero;
  int32_t rescaled, top_bin_level;
  double seconds;
} mcubes_jit_record;

/// mcubes::result less its options and records (the program keeps the options and collects the
/// records through on_record).
typedef struct mcubes_jit_summary {
  double estimate, error, chi2_dof, q;
  int32_t dof, status, iterations, accumulated;  ///< status: mcubes::status as int
  uint64_t n_eval, seed;
  double seconds;
  double inverse_variance_estimate, inverse_variance_error;
  uint32_t warnings;  ///< mcubes::warning bit set
} mcubes_jit_summary;

/// After each iteration (Vegas only), on the calling thread: the iteration's record and the result
/// so far. Returns 0 to go on, anything else to stop at this iteration boundary. Must not throw.
typedef int (*mcubes_jit_iteration_fn)(void* context, const mcubes_jit_record* record, const mcubes_jit_summary* so_far);
/// Called once per record of the final result, in order, before mcubes_jit_run returns.
typedef void (*mcubes_jit_record_fn)(void* context, const mcubes_jit_record* record);
/// The chi-square upper tail Q(chi2, dof) of the program (core/running_average.hpp's chi2_q).
typedef double (*mcubes_jit_chi2_q_fn)(double chi2, int dof);

/// After a Vegas run (not a batch) that returns normally, the sampling density it ended with
/// (core/weighted_sample.hpp, sampling_density): the map's dim * (n_bins + 1) edges and the VEGAS+
/// shares of the g^dim sub-cubes (n_shares = 0: none). The arrays are valid during the call only.
typedef void (*mcubes_jit_density_fn)(void* context, int32_t dim, int32_t n_bins, const double* edges, uint64_t g,
                                      uint64_t n_shares, const double* shares);

/// Bytes handed to the program: appends bytes[0..n) to the program's `sink`.
typedef void (*mcubes_jit_bytes_fn)(void* sink, const char* bytes, uint64_t n);
/// Given to on_boundary, callable during that call only: puts the run's progress at this boundary
/// (mcubes::encode_progress bytes, checkpoint.hpp) through put(sink, ...). Returns 0, else the
/// object failed to take it.
typedef int (*mcubes_jit_progress_fn)(void* progress_context, void* sink, mcubes_jit_bytes_fn put);
/// At every iteration boundary of a Vegas run and once at its end (ended = 1):
/// mcubes::vegas_resumption::save on the program's side, which may take the progress by calling
/// progress(progress_context, sink, put). Returns 0 to go on; anything else ends the run with
/// mcubes_jit_error (the program keeps its own exception and throws it again). For a batch
/// (mcubes_jit_batch_call): after every round and at its end, batch_resumption::save, the
/// progress being every integral's (mcubes::encode_progresses bytes).
typedef int (*mcubes_jit_boundary_fn)(void* context, int32_t ended, void* progress_context,
                                      mcubes_jit_progress_fn progress);

/// One run: inputs, then outputs.
typedef struct mcubes_jit_call {
  uint32_t abi_version;    ///< MCUBES_JIT_ABI_VERSION
  uint32_t size;           ///< sizeof(mcubes_jit_call); sizeof(mcubes_jit_batch_call) for a batch
  int32_t method;          ///< mcubes_jit_method; must be the object's
  int32_t dim;             ///< D; must be the object's
  const double* lower;     ///< D lower bounds
  const double* upper;     ///< D upper bounds
  const double* params;    ///< the parameters p[0..n_params-1] (null when n_params is 0); a batch:
                           ///< K * n_params, integral k's at params + k * n_params
  int32_t n_params;        ///< must be the object's
  mcubes_jit_options options;
  void* context;                       ///< passed to the callbacks
  mcubes_jit_iteration_fn on_iteration;  ///< may be null
  mcubes_jit_record_fn on_record;      ///< may be null
  mcubes_jit_chi2_q_fn chi2_q;         ///< required: the object has no chi-square tail of its own
  mcubes_jit_density_fn on_density;    ///< may be null (Vegas: the trained density, for weighted samples)
  mcubes_jit_boundary_fn on_boundary;  ///< may be null (Vegas and batches: checkpoints, mcubes_jit_boundary_fn)
  const char* resume;                  ///< may be null (Vegas: encode_progress bytes of the run to continue;
                                       ///< a batch: encode_progresses bytes of its K integrals)
  uint64_t resume_size;                ///< bytes at resume
  // outputs
  mcubes_jit_summary result;           ///< valid when error_kind is mcubes_jit_ok
  int32_t error_kind;                  ///< mcubes_jit_error_kind
  int32_t error_iteration;             ///< non-finite / overflow: the iteration
  uint64_t error_sample;               ///< non-finite / overflow: the sample index
  double error_value;                  ///< non-finite / overflow: f(x)
  double error_jacobian;               ///< overflow: J(x)
  int32_t error_index;                 ///< index out of range: the i of x[i]
  int32_t error_in_batch;              ///< 1: the failure is that of integral error_integral of a batch
  uint64_t error_integral;             ///< a batch's failing integral (the lowest of its round)
  double* error_point;                 ///< D doubles provided by the program: the sample's point
  char error_message[MCUBES_JIT_MESSAGE_SIZE];  ///< what(), truncated
} mcubes_jit_call;

/// What an object is (mcubes_jit_object_info).
typedef struct mcubes_jit_object {
  uint32_t abi_version;  ///< MCUBES_JIT_ABI_VERSION of the headers it was compiled with
  int32_t dim;           ///< D
  int32_t method;        ///< mcubes_jit_method
  int32_t backend;       ///< mcubes_jit_backend
  int32_t n_params;      ///< P
  const char* key;       ///< the cache key (hex SHA-256) it was compiled under
} mcubes_jit_object;

/// mcubes::batch_progress.
typedef struct mcubes_jit_batch_progress {
  uint64_t integrals, finished;
  int32_t round;
  uint64_t n_eval;
} mcubes_jit_batch_progress;

/// After each round of a batch, on the calling thread: returns 0 to go on, anything else to stop
/// every active integral at this round boundary (status interrupted). Must not throw.
typedef int (*mcubes_jit_round_fn)(void* context, const mcubes_jit_batch_progress* progress);
/// Called once per record of integral k's final result, in order of k then of the records, before
/// mcubes_jit_run_batch returns.
typedef void (*mcubes_jit_batch_record_fn)(void* context, uint64_t integral, const mcubes_jit_record* record);

/// With on_failure set, once per integral that failed (in order of k), before mcubes_jit_run_batch
/// returns: `failure` is a call whose error fields describe its failure (error_point: the call's
/// buffer, valid during the callback only). Must not throw.
typedef void (*mcubes_jit_batch_failure_fn)(void* context, uint64_t integral, const mcubes_jit_call* failure);

/// One parameter batch (method vegas_batch): integral k = 0..n_integrals-1 integrates the integrand
/// with the parameters params + k * n_params over the call's region, with the call's options and
/// the seed batch_seed(options.seed, k). The call's on_iteration, on_record and result are unused;
/// its error fields describe a failure (error_in_batch, error_integral: whose).
typedef struct mcubes_jit_batch_call {
  mcubes_jit_call call;                     ///< call.size = sizeof(mcubes_jit_batch_call)
  uint64_t n_integrals;                     ///< K >= 1
  mcubes_jit_round_fn on_round;             ///< may be null
  mcubes_jit_batch_record_fn on_batch_record;  ///< may be null
  mcubes_jit_summary* results;              ///< K summaries, provided by the program; valid on success
  /// May be null: a failing integral then fails the batch (the call's error fields). Else a failing
  /// integral leaves the batch (vegas_batch_with's failures): its summary holds the iterations it
  /// completed (status interrupted) and on_failure reports it; the batch succeeds.
  mcubes_jit_batch_failure_fn on_failure;
} mcubes_jit_batch_call;

/// A points object's values: values[i] = f(point i) for i < n, point i the D doubles at x + i * D,
/// with the parameters params[0..P-1] (null when P is 0). Returns mcubes_jit_ok, or the kind of the
/// exception that the integrand's code threw with its what() in `message` (MCUBES_JIT_MESSAGE_SIZE
/// bytes); values are then unspecified. May be called from several threads at once.
typedef int (*mcubes_jit_points_fn)(const double* params, const double* x, uint64_t n, double* values, char* message);
/// A points object's check of a failing sample: evaluates f once at the D doubles at x and returns
/// the i of an x[i] it read outside 0..D-1 (INT32_MIN: none). Not while another thread calls the object.
typedef int32_t (*mcubes_jit_index_at_fn)(const double* params, const double* x);

typedef const mcubes_jit_object* (*mcubes_jit_object_info_fn)(void);
typedef int (*mcubes_jit_run_fn)(mcubes_jit_call* call);
typedef int (*mcubes_jit_run_batch_fn)(mcubes_jit_batch_call* call);

#ifdef __cplusplus
}  // extern "C"
#endif

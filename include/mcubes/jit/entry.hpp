#pragma once
/// @file jit/entry.hpp
/// The run side of an integrand compiled at run time (jit.hpp): the method, its options, its
/// callbacks and its errors across the C interface of jit/abi.hpp. Used in two places: by the
/// objects that run their method themselves (jit/source.hpp, generate_source: CUDA objects, and CPU
/// objects in a program without the precompiled run-time engine or of a dimension outside it), and
/// by the program's own run of an object that holds only the integrand (jit/object_run.hpp). Parts:
///  - checked_point<D> (jit/checked_point.hpp), the `x` of the user's text;
///  - run_with<D, Method, Backend>(call, f, index_at): runs one method (mcubes::vegas_with,
///    plain_mc_with or midpoint_with, the one-call forms that mcubes::vegas, plain_mc and midpoint
///    run) on a backend of the kind Backend (a cpu_backend, or a cuda_backend in a unit compiled by
///    nvcc), reports each iteration and catches every exception into the call's error fields
///    (fail_with_current); run_entry<F, D, Method, Backend, P>(call) checks the call against an
///    object and runs it so with the object's functor;
///  - run_batch_with<D, Backend>(batch, g, params, index_at): the same for a parameter batch
///    (mcubes::vegas_batch_with over K parameter vectors, method vegas_batch), with the same checks
///    (check_call), options (vegas_options_of), backend (object_backend) and error fields, plus the
///    failing integral; run_batch_entry<G, Params, D, Backend, P>(call) for an object's functor;
///  - the chi-square tail chi2_q of the program, forwarded through the call (an object does not
///    compile Boost.Math: MCUBES_CHI2_Q_EXTERNAL, core/running_average.hpp).
/// Determinism: a run is the same computation as the ahead-of-time one-call method with the same
/// options; compiled with the same flags, it gives the same bits (tests/jit/test_jit.cpp checks it).

#include <array>
#include <atomic>
#include <climits>
#include <cstring>
#include <exception>
#include <functional>
#include <limits>
#include <new>
#include <string>
#include <type_traits>
#include <vector>

#include "../algorithm/midpoint.hpp"
#include "../algorithm/plain_mc.hpp"
#include "../algorithm/vegas.hpp"
#include "../algorithm/vegas_batch.hpp"
#include "../backend/cpu.hpp"
#include "../checkpoint.hpp"
#include "../config.hpp"
#include "../error.hpp"
#include "../integrand.hpp"
#include "../point.hpp"
#include "../region.hpp"
#include "../result.hpp"
#include "abi.hpp"
#include "checked_point.hpp"
#if defined(__CUDACC__)
#include "../algorithm/devices.hpp"
#include "../backend/cuda.cuh"
#endif

namespace mcubes::jit {

namespace detail {

/// The program's chi-square tail, set from each call (the object's chi2_q forwards to it).
inline std::atomic<mcubes_jit_chi2_q_fn>& host_chi2_q() {
  static std::atomic<mcubes_jit_chi2_q_fn> fn{nullptr};
  return fn;
}

inline mcubes_jit_record to_c(const iteration_record& r) {
  mcubes_jit_record c;
  std::memset(&c, 0, sizeof c);
  c.index = r.index;
  c.estimate = r.estimate;
  c.error = r.error;
  c.adapted = r.adapted;
  c.accumulated = r.accumulated;
  c.underflow = r.underflow;
  c.weighted_estimate = r.weighted_estimate;
  c.weighted_error = r.weighted_error;
  c.chi2_dof = r.chi2_dof;
  c.q = r.q;
  c.n_eval = r.n_eval;
  c.n_nonzero = r.n_nonzero;
  c.rescaled = r.rescaled;
  c.top_bin_level = r.top_bin_level;
  c.seconds = r.seconds;
  return c;
}

inline mcubes_jit_summary to_c(const result& r) {
  mcubes_jit_summary c;
  std::memset(&c, 0, sizeof c);
  c.estimate = r.estimate;
  c.error = r.error;
  c.chi2_dof = r.chi2_dof;
  c.q = r.q;
  c.dof = r.dof;
  c.status = static_cast<int32_t>(r.status);
  c.iterations = r.iterations;
  c.accumulated = r.accumulated;
  c.n_eval = r.n_eval;
  c.seed = r.seed;
  c.seconds = r.seconds;
  c.inverse_variance_estimate = r.inverse_variance_estimate;
  c.inverse_variance_error = r.inverse_variance_error;
  c.warnings = r.warnings;
  return c;
}

/// Copies `what` into the call's message (truncated to MCUBES_JIT_MESSAGE_SIZE - 1 bytes).
inline int fail(mcubes_jit_call* call, int kind, const char* what) {
  call->error_kind = kind;
  std::strncpy(call->error_message, what, MCUBES_JIT_MESSAGE_SIZE - 1);
  call->error_message[MCUBES_JIT_MESSAGE_SIZE - 1] = '\0';
  return kind;
}

/// Fills the sample fields of the call from a failure that carries one.
template <class E>
void set_sample(mcubes_jit_call* call, const E& e) {
  call->error_iteration = e.iteration();
  call->error_sample = e.sample_index();
  call->error_value = e.value();
  const std::vector<double>& p = e.point();
  for (std::size_t i = 0; i < p.size() && i < static_cast<std::size_t>(call->dim); ++i) call->error_point[i] = p[i];
}

/// The index out of range that f meets at `x` (re-evaluated on the host), or INT_MIN.
template <int D, class F>
int index_met_at(const F& f, const std::vector<double>& x) {
  if (x.size() != static_cast<std::size_t>(D)) return INT_MIN;
  point<D> p;
  for (int i = 0; i < D; ++i) p[i] = x[static_cast<std::size_t>(i)];
  bad_index().store(INT_MIN, std::memory_order_relaxed);
  (void)f(p);
  return bad_index().load(std::memory_order_relaxed);
}

/// The execution fields of the call's options on the object's backend.
template <int Backend>
void set_execution(execution& ex, const mcubes_jit_options& o) {
  ex.backend = Backend == mcubes_jit_cuda ? backend_kind::cuda : backend_kind::cpu;
  ex.threads = o.threads;
  ex.cuda_threads_per_block = o.cuda_threads_per_block;
  ex.device = o.device;
  ex.stop = static_cast<const stop_request*>(o.stop);
  if (o.devices != nullptr && o.n_devices > 0) ex.devices.assign(o.devices, o.devices + o.n_devices);
}

/// The options table's fields of the call (mcubes_jit_options::vegas; the other fields default).
/// @throws invalid_input if the program's table has another number of entries (other headers).
inline vegas_options vegas_fields_of(const mcubes_jit_options& o) {
  MCUBES_EXPECTS(o.n_vegas == vegas_option_count, "the program passes ", o.n_vegas, " options, this object knows ",
                 vegas_option_count, " (compiled with other mcubes headers)");
  vegas_options v;
  int k = 0;
  for_each_vegas_option([&](const option_info&, auto field) { from_option_slot(o.vegas[k++], v.*field); });
  return v;
}

/// The vegas_options of the call (a single run's, or every integral's of a batch).
template <int Backend>
vegas_options vegas_options_of(const mcubes_jit_options& o) {
  vegas_options v = vegas_fields_of(o);
  set_execution<Backend>(v, o);
  return v;
}

/// The object's backend for the call's options: a cuda_backend in an object compiled by nvcc, a
/// cpu_backend otherwise.
template <int Backend>
auto object_backend(const mcubes_jit_options& o) {
#if defined(__CUDACC__)
  static_assert(Backend == mcubes_jit_cuda, "an object compiled by nvcc runs on the CUDA backend");
  MCUBES_EXPECTS(o.n_devices <= 1, "this method of a run-time compiled integrand runs on one CUDA device, but ",
                 o.n_devices, " devices were given");
  cuda_launch_policy policy;
  policy.threads_per_block = o.cuda_threads_per_block;
  return cuda_backend(policy, o.n_devices == 1 ? o.devices[0] : o.device);
#else
  static_assert(Backend == mcubes_jit_cpu, "an object compiled by a C++ compiler runs on the CPU backend");
  MCUBES_EXPECTS(o.n_devices <= 1, o.n_devices, " CUDA devices were given to an integrand compiled for the CPU");
  return cpu_backend(o.threads, static_cast<const stop_request*>(o.stop));
#endif
}

/// The progress of a run at a boundary, for the program's on_boundary (take_progress).
struct progress_taker {
  const std::function<vegas_progress()>* progress;
  std::exception_ptr failure;
};

/// mcubes_jit_progress_fn: encodes the progress and hands the bytes to the program.
extern "C" inline int take_progress(void* context, void* sink, mcubes_jit_bytes_fn put) {
  progress_taker& t = *static_cast<progress_taker*>(context);
  try {
    const std::string bytes = encode_progress((*t.progress)());
    put(sink, bytes.data(), bytes.size());
    return 0;
  } catch (...) {
    t.failure = std::current_exception();
    return 1;
  }
}

/// The progresses of a batch at a round boundary, for the program's on_boundary (take_progresses).
struct progresses_taker {
  const std::function<std::vector<vegas_progress>()>* progress;
  std::exception_ptr failure;
};

/// mcubes_jit_progress_fn of a batch: encodes every integral's progress for the program.
extern "C" inline int take_progresses(void* context, void* sink, mcubes_jit_bytes_fn put) {
  progresses_taker& t = *static_cast<progresses_taker*>(context);
  try {
    const std::string bytes = encode_progresses((*t.progress)());
    put(sink, bytes.data(), bytes.size());
    return 0;
  } catch (...) {
    t.failure = std::current_exception();
    return 1;
  }
}

/// The run itself: the method Method of the object on its backend.
template <int D, int Method, int Backend, class F>
result run_method(const F& f, const mcubes_jit_call& call) {
  std::array<double, D> lo{}, hi{};
  for (int i = 0; i < D; ++i) lo[i] = call.lower[i], hi[i] = call.upper[i];
  const region<D> reg(lo, hi);
  const mcubes_jit_options& o = call.options;
  if constexpr (Method == mcubes_jit_vegas) {
    const vegas_options v = vegas_options_of<Backend>(o);
    validate(v, D);
    iteration_callback on_iteration;
    if (call.on_iteration != nullptr)
      on_iteration = [&call](const iteration_record& rec, const result& so_far) {
        const mcubes_jit_record r = to_c(rec);
        const mcubes_jit_summary s = to_c(so_far);
        return call.on_iteration(call.context, &r, &s) == 0 ? run_control::proceed : run_control::stop;
      };
    // checkpoints: the run to continue, and the program's saver at every boundary
    vegas_resumption resumption;
    vegas_progress from;
    if (call.resume != nullptr) {
      from = decode_progress(std::string(call.resume, static_cast<std::size_t>(call.resume_size)), "the run's progress");
      resumption.from = &from;
    }
    if (call.on_boundary != nullptr)
      resumption.save = [&call](const std::function<vegas_progress()>& progress, bool ended) {
        progress_taker taker{&progress, nullptr};
        if (call.on_boundary(call.context, ended ? 1 : 0, &taker, &take_progress) != 0) {
          if (taker.failure) std::rethrow_exception(taker.failure);
          throw error("the program failed at an iteration boundary (its checkpoint)");
        }
      };
    sampling_density trained;
    result r;
#if defined(__CUDACC__)
    if (v.devices.size() > 1) {  // one host thread and backend per device (algorithm/devices.hpp)
      r = run_on_devices(v, v.devices, on_iteration,
                         [&](cuda_backend& backend, const vegas_options& mine, const iteration_callback& watch, int m,
                             const communicator& team) {
                           sampling_density spare;  // the density is gathered on every device, kept by the first
                           vegas_resumption own;     // checkpoints: the program's saver decides on the first device
                           own.from = resumption.from;
                           if (resumption.save) own.save = team_member_save(team, resumption.save);
                           return vegas_with<D>(f, reg, mine, backend, watch,
                                                call.on_density == nullptr ? nullptr : m == 0 ? &trained : &spare, own);
                         });
    } else
#endif
      r = vegas_with<D>(f, reg, v, object_backend<Backend>(o), on_iteration,
                        call.on_density != nullptr ? &trained : nullptr, resumption);
    if (call.on_density != nullptr)
      call.on_density(call.context, trained.dim, trained.n_bins, trained.edges.data(), trained.g,
                      trained.shares.size(), trained.shares.data());
    return r;
  } else if constexpr (Method == mcubes_jit_plain_mc) {
    plain_mc_options m;
    set_execution<Backend>(m, o);
    const vegas_options v = vegas_fields_of(o);
    m.samples = o.samples;
    m.seed = v.seed;
    m.rel_tol = v.rel_tol;
    m.abs_tol = v.abs_tol;
    validate(m);
    auto backend = object_backend<Backend>(o);
    return plain_mc_with<D>(f, reg, m, backend);
  } else {
    static_assert(Method == mcubes_jit_midpoint, "unknown method");
    midpoint_options m;
    set_execution<Backend>(m, o);
    const vegas_options v = vegas_fields_of(o);
    m.rel_tol = v.rel_tol;
    m.abs_tol = v.abs_tol;
    validate(m);
    auto backend = object_backend<Backend>(o);
    return midpoint_with<D>(f, reg, o.n_per_axis, m, backend);
  }
}

/// The parameters `values` (P doubles) as the object's parameter struct Params (a member double p[P]).
template <class Params, int P>
Params parameters_of(const double* values) {
  Params q{};
  for (int k = 0; k < P; ++k) q.p[k] = values[k];
  return q;
}

/// The functor of one run: F{} without parameters (P = 0), else F = with_parameters<G, Params>
/// holding `values` (P doubles).
template <class F, int P>
F functor_of(const double* values) {
  F f{};
  if constexpr (P > 0) f.p = parameters_of<decltype(f.p), P>(values);
  return f;
}

/// Checks the header of a call against the object: ABI version and the size of the struct the
/// entry takes (mcubes_jit_call or mcubes_jit_batch_call), then method, dimension, parameters and
/// the required pointers. Returns mcubes_jit_ok, or the error kind (the call's error fields set
/// only when its layout is known to be this one).
template <int D>
int check_call(mcubes_jit_call* call, std::size_t size, int method, int n_params) noexcept {
  if (call == nullptr || call->abi_version != MCUBES_JIT_ABI_VERSION || call->size != size)
    return mcubes_jit_bad_call;  // the layout is not ours: nothing may be written
  call->error_kind = mcubes_jit_ok;
  call->error_message[0] = '\0';
  call->error_in_batch = 0;
  call->error_integral = 0;
  if (call->method != method || call->dim != D || call->n_params != n_params || call->lower == nullptr ||
      call->upper == nullptr || call->chi2_q == nullptr || call->error_point == nullptr ||
      (n_params > 0 && call->params == nullptr))
    return fail(call, mcubes_jit_bad_call, "the call does not fit the compiled integrand (method, dimension, parameters)");
  host_chi2_q().store(call->chi2_q);
  return mcubes_jit_ok;
}

/// The error fields of the call from the exception being handled (called in a catch block):
/// its kind, message and sample; a batch_error gives its integral and the failure nested in it.
/// `index_at(point)` re-evaluates the failing integrand at a point (index_met_at) once the
/// integral is known. Returns the error kind. Never throws.
template <class IndexAt>
int fail_with_current(mcubes_jit_call* call, const IndexAt& index_at) noexcept {
  try {
    throw;
  } catch (const batch_error& e) {
    call->error_in_batch = 1;
    call->error_integral = e.integral();
    try {
      std::rethrow_if_nested(e);
    } catch (...) {
      return fail_with_current(call, index_at);
    }
    return fail(call, mcubes_jit_error, e.what());
  } catch (const overflow_error& e) {
    set_sample(call, e);
    call->error_jacobian = e.jacobian();
    return fail(call, mcubes_jit_overflow, e.what());
  } catch (const non_finite_integrand& e) {
    set_sample(call, e);
    int index = INT_MIN;
    try {
      index = index_at(e.point());
    } catch (...) {
    }
    if (index != INT_MIN) {
      call->error_index = index;
      return fail(call, mcubes_jit_index_out_of_range, e.what());
    }
    return fail(call, mcubes_jit_non_finite, e.what());
  } catch (const numerical_error& e) {
    return fail(call, mcubes_jit_numerical, e.what());
  } catch (const invalid_input& e) {
    return fail(call, mcubes_jit_invalid_input, e.what());
#if defined(__CUDACC__)
  } catch (const cuda_error& e) {
    return fail(call, mcubes_jit_cuda_error, e.what());
#endif
  } catch (const error& e) {
    return fail(call, mcubes_jit_error, e.what());
  } catch (const std::bad_alloc&) {
    return fail(call, mcubes_jit_out_of_memory, "out of memory");
  } catch (const std::exception& e) {
    return fail(call, mcubes_jit_other, e.what());
  } catch (...) {
    return fail(call, mcubes_jit_other, "unknown exception in the compiled integrand");
  }
}

/// The method Method on a backend of kind Backend with the integrand f, for a checked call: the
/// result and records into the call, or any exception into its error fields (`index_at(point)`:
/// the index out of range that f meets at a point, or INT_MIN; index_met_at). Never throws.
template <int D, int Method, int Backend, class F, class IndexAt>
int run_with(mcubes_jit_call* call, const F& f, const IndexAt& index_at) noexcept {
  try {
    static_assert(check_integrand<D, F>(), "the generated integrand breaks the integrand contract");
    const result r = run_method<D, Method, Backend>(f, *call);
    call->result = to_c(r);
    if (call->on_record != nullptr)
      for (const iteration_record& rec : r.records) {
        const mcubes_jit_record c = to_c(rec);
        call->on_record(call->context, &c);
      }
    return mcubes_jit_ok;
  } catch (...) {
    return fail_with_current(call, index_at);
  }
}

/// mcubes_jit_run of an object: functor F (default-constructible; with P > 0 F is
/// with_parameters<G, Params> and its parameters are the call's), dimension D, method, backend and
/// parameter count as compiled. Never throws.
template <class F, int D, int Method, int Backend, int P>
int run_entry(mcubes_jit_call* call) noexcept {
  const int checked = check_call<D>(call, sizeof(mcubes_jit_call), Method, P);
  if (checked != mcubes_jit_ok) return checked;
  return run_with<D, Method, Backend>(call, functor_of<F, P>(call->params), [&](const std::vector<double>& x) {
    return index_met_at<D>(functor_of<F, P>(call->params), x);
  });
}

/// A parameter batch on a backend of kind Backend for a checked batch call: vegas_batch_with<D>(g,
/// region, params(), options, backend, on_round) (g(x, params[k]): the batch integrand,
/// with_parameters<G, Params> per integral), the results and records into the call, or any
/// exception into its error fields (`index_at(k, point)`: the index out of range that integral k's
/// integrand meets at a point, or INT_MIN). `params()` gives the K parameter structs. Never throws.
template <int D, int Backend, class G, class MakeParams, class IndexAt>
int run_batch_with(mcubes_jit_batch_call* batch, const G& g, const MakeParams& make_params, const IndexAt& index_at) noexcept {
  mcubes_jit_call* call = &batch->call;
  if (batch->n_integrals < 1 || batch->results == nullptr)
    return fail(call, mcubes_jit_bad_call, "the batch call has no integrals or no room for their results");
  try {
    const auto params = make_params();
    using Params = typename std::decay_t<decltype(params)>::value_type;
    static_assert(check_integrand<D, with_parameters<G, Params>>(), "the generated integrand breaks the integrand contract");
    std::array<double, D> lo{}, hi{};
    for (int i = 0; i < D; ++i) lo[i] = call->lower[i], hi[i] = call->upper[i];
    const vegas_options v = vegas_options_of<Backend>(call->options);
    validate(v, D);
    batch_callback on_round;
    if (batch->on_round != nullptr)
      on_round = [batch](const batch_progress& p) {
        mcubes_jit_batch_progress c;
        std::memset(&c, 0, sizeof c);
        c.integrals = p.integrals;
        c.finished = p.finished;
        c.round = p.round;
        c.n_eval = p.n_eval;
        return batch->on_round(batch->call.context, &c) == 0 ? run_control::proceed : run_control::stop;
      };
    // checkpoints: the batch to continue, and the program's saver after every round
    batch_resumption resumption;
    std::vector<vegas_progress> from;
    if (call->resume != nullptr) {
      from = decode_progresses(std::string(call->resume, static_cast<std::size_t>(call->resume_size)),
                               "the batch's progress");
      MCUBES_EXPECTS(from.size() == batch->n_integrals, "the batch to continue has ", from.size(), " integrals, not ",
                     batch->n_integrals);
      resumption.from = &from;
    }
    if (call->on_boundary != nullptr)
      resumption.save = [call](const std::function<std::vector<vegas_progress>()>& progress, bool ended) {
        progresses_taker taker{&progress, nullptr};
        if (call->on_boundary(call->context, ended ? 1 : 0, &taker, &take_progresses) != 0) {
          if (taker.failure) std::rethrow_exception(taker.failure);
          throw error("the program failed at a round boundary (its checkpoint)");
        }
      };
    batch_failures failures;
    std::vector<result> rs;
#if defined(__CUDACC__)
    if (v.devices.size() > 1) {  // the integrals split over the devices (algorithm/devices.hpp)
      rs = vegas_batch_on_devices<D>(g, {region<D>(lo, hi)}, params, v, v.devices, on_round,
                                     batch->on_failure != nullptr ? &failures : nullptr, resumption);
    } else
#endif
    {
      auto backend = object_backend<Backend>(call->options);
      rs = vegas_batch_with<D>(g, {region<D>(lo, hi)}, params, v, backend, on_round,
                               batch->on_failure != nullptr ? &failures : nullptr, resumption);
    }
    for (std::size_t k = 0; k < rs.size(); ++k) batch->results[k] = to_c(rs[k]);
    if (batch->on_batch_record != nullptr)
      for (std::size_t k = 0; k < rs.size(); ++k)
        for (const iteration_record& rec : rs[k].records) {
          const mcubes_jit_record c = to_c(rec);
          batch->on_batch_record(call->context, k, &c);
        }
    for (std::size_t k = 0; k < failures.size(); ++k) {
      if (!failures[k]) continue;
      mcubes_jit_call one = *call;  // the inputs, and error fields of its own
      one.error_in_batch = 0;
      one.error_integral = k;
      try {
        std::rethrow_exception(failures[k]);
      } catch (...) {
        fail_with_current(&one, [&](const std::vector<double>& x) { return index_at(k, x); });
      }
      batch->on_failure(call->context, k, &one);
    }
    return mcubes_jit_ok;
  } catch (...) {
    return fail_with_current(call, [&](const std::vector<double>& x) {
      return index_at(static_cast<std::size_t>(call->error_integral), x);
    });
  }
}

/// mcubes_jit_run_batch of an object: the batch integrand G (f(x, params)) with parameter struct
/// Params (a member double p[P], P >= 1), dimension D and backend as compiled; runs
/// vegas_batch_with<D>(G{}, region, params, options, backend, on_round) (the batch evaluates
/// with_parameters<G, Params>, the functor of run_entry: integral k gives the bits of a single run
/// with its parameters and seed batch_seed(seed, k)). Never throws.
template <class G, class Params, int D, int Backend, int P>
int run_batch_entry(mcubes_jit_batch_call* batch) noexcept {
  static_assert(P >= 1, "a batch needs parameters");
  mcubes_jit_call* call = batch != nullptr ? &batch->call : nullptr;
  const int checked = check_call<D>(call, sizeof(mcubes_jit_batch_call), mcubes_jit_vegas_batch, P);
  if (checked != mcubes_jit_ok) return checked;
  using F = with_parameters<G, Params>;
  return run_batch_with<D, Backend>(
      batch, G{},
      [&] {
        std::vector<Params> params;
        params.reserve(batch->n_integrals);
        for (std::uint64_t k = 0; k < batch->n_integrals; ++k)
          params.push_back(parameters_of<Params, P>(call->params + k * P));
        return params;
      },
      [&](std::size_t k, const std::vector<double>& x) {
        return index_met_at<D>(functor_of<F, P>(call->params + k * P), x);
      });
}

}  // namespace detail
}  // namespace mcubes::jit

#if defined(MCUBES_CHI2_Q_EXTERNAL) && !defined(__CUDA_ARCH__)
/// The object's chi2_q (declared by core/running_average.hpp under MCUBES_CHI2_Q_EXTERNAL): the
/// program's, through the call.
#define MCUBES_JIT_DEFINE_CHI2_Q \
  double mcubes::chi2_q(double chi2, int dof) { return ::mcubes::jit::detail::host_chi2_q().load()(chi2, dof); }
#else
#define MCUBES_JIT_DEFINE_CHI2_Q
#endif

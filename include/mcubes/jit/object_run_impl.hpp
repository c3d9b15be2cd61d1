#pragma once
/// @file jit/object_run_impl.hpp
/// The definitions of jit/object_run.hpp: the program's run of a points object. The integrand the
/// engine sees is object_integrand<D> (a single run; the parameters of the call) or, in a batch,
/// with_parameters<object_batch_integrand<D>, object_parameters> (core/batch.hpp), whose points
/// call hands the object n points at a time (the CPU backend's batches of 64 samples,
/// backend/cpu/fast_path.hpp; plain Monte Carlo and the midpoint rule call it point by point).
/// An exception thrown by the integrand's code inside the object comes back as mcubes::error with
/// its message (std::bad_alloc as itself), as from an object's own run.

#include <climits>
#include <cstddef>
#include <cstdint>
#include <new>
#include <string>
#include <vector>

#include "../core/batch.hpp"
#include "../point.hpp"
#include "entry.hpp"
#include "object_run.hpp"

namespace mcubes::jit::detail {

/// What a points object's values call returned, as the exception the engine passes on.
[[noreturn]] inline void throw_points_failure(int kind, const char* message) {
  if (kind == mcubes_jit_out_of_memory) throw std::bad_alloc();
  throw error(message[0] != '\0' ? std::string(message) : std::string("the compiled integrand failed"));
}

/// values[i] = f(point i) by the object, i < n.
inline void object_points(const points_api& api, const double* params, const double* x, std::size_t n, double* values) {
  char message[MCUBES_JIT_MESSAGE_SIZE];
  message[0] = '\0';
  const int rc = api.points(params, x, static_cast<std::uint64_t>(n), values, message);
  if (rc != mcubes_jit_ok) throw_points_failure(rc, message);
}

/// The integrand of a single run: the object with the call's parameters (not owning).
template <int D>
struct object_integrand {
  const points_api* api;
  const double* params;
  double operator()(const point<D>& x) const {
    double v;
    object_points(*api, params, x.x, 1, &v);
    return v;
  }
  /// values[i] = (*this)(xs[i]), i < n, in one call of the object (pass_integrand_of's points call).
  void operator()(const point<D>* xs, std::size_t n, double* values) const { object_points(*api, params, xs->x, n, values); }
};

/// A batch member's parameters: P doubles of the call (not owning).
struct object_parameters {
  const double* p;
};

/// The batch integrand of a batch call: the object with a member's parameters.
template <int D>
struct object_batch_integrand {
  const points_api* api;
  double operator()(const point<D>& x, const object_parameters& q) const {
    double v;
    object_points(*api, q.p, x.x, 1, &v);
    return v;
  }
  /// The points call with a member's parameters (with_parameters' points call, core/batch.hpp).
  void operator()(const point<D>* xs, std::size_t n, const object_parameters& q, double* values) const {
    object_points(*api, q.p, xs->x, n, values);
  }
};

/// The index out of range that the object meets at x with `params`, or INT_MIN.
inline int object_index_at(const points_api& api, const double* params, const std::vector<double>& x, int dim) {
  if (x.size() != static_cast<std::size_t>(dim)) return INT_MIN;
  return api.index_at(params, x.data());
}

template <int D>
int run_points_object(const points_api& api, mcubes_jit_call* call) noexcept {
  const int method = call != nullptr && call->abi_version == MCUBES_JIT_ABI_VERSION && call->size == sizeof(mcubes_jit_call)
                         ? call->method
                         : -1;
  const int checked = check_call<D>(call, sizeof(mcubes_jit_call), method, api.n_params);
  if (checked != mcubes_jit_ok) return checked;
  const object_integrand<D> f{&api, api.n_params > 0 ? call->params : nullptr};
  const auto index_at = [&](const std::vector<double>& x) { return object_index_at(api, f.params, x, D); };
  switch (method) {
    case mcubes_jit_vegas: return run_with<D, mcubes_jit_vegas, mcubes_jit_cpu>(call, f, index_at);
    case mcubes_jit_plain_mc: return run_with<D, mcubes_jit_plain_mc, mcubes_jit_cpu>(call, f, index_at);
    case mcubes_jit_midpoint: return run_with<D, mcubes_jit_midpoint, mcubes_jit_cpu>(call, f, index_at);
    default: return fail(call, mcubes_jit_bad_call, "a single run of a points object is vegas, plain_mc or midpoint");
  }
}

template <int D>
int run_points_object_batch(const points_api& api, mcubes_jit_batch_call* batch) noexcept {
  mcubes_jit_call* call = batch != nullptr ? &batch->call : nullptr;
  const int checked = check_call<D>(call, sizeof(mcubes_jit_batch_call), mcubes_jit_vegas_batch, api.n_params);
  if (checked != mcubes_jit_ok) return checked;
  const std::size_t P = static_cast<std::size_t>(api.n_params);
  return run_batch_with<D, mcubes_jit_cpu>(
      batch, object_batch_integrand<D>{&api},
      [&] {
        std::vector<object_parameters> params;
        params.reserve(static_cast<std::size_t>(batch->n_integrals));
        for (std::uint64_t k = 0; k < batch->n_integrals; ++k) params.push_back(object_parameters{call->params + k * P});
        return params;
      },
      [&](std::size_t k, const std::vector<double>& x) { return object_index_at(api, call->params + k * P, x, D); });
}

}  // namespace mcubes::jit::detail

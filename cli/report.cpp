/// @file cli/report.cpp
/// Text and JSON reports of `mcubes integrate` (see report.hpp).
#include "report.hpp"

#include <cmath>
#include <limits>

#include <mcubes/config.hpp>

namespace mcubes::cli {

namespace {

constexpr double nan_value = std::numeric_limits<double>::quiet_NaN();

/// Evaluations per second of the whole run (NaN if the run took no measurable time).
double evals_per_second(const result& res) {
  return res.seconds > 0 ? static_cast<double>(res.n_eval) / res.seconds : nan_value;
}

/// "x" with %.6g, or "n/a" for a non-finite value.
std::string short_number(double x) {
  if (!std::isfinite(x)) return "n/a";
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.6g", x);
  return buf;
}

}  // namespace

accuracy compare_with_exact(const run_report& r) {
  accuracy a;
  a.exact = r.entry->exact(r.dim);
  const double diff = r.res.estimate - a.exact;
  a.true_rel_error = a.exact != 0 ? std::fabs(diff) / std::fabs(a.exact) : nan_value;
  a.pull = (r.res.error > 0 && std::isfinite(r.res.error)) ? diff / r.res.error : nan_value;
  return a;
}

int exit_code(status s) { return s == status::converged ? 0 : 1; }

void print_header(std::FILE* out, const run_report& r) {
  std::fprintf(out, "integrand %s (%s), d = %d, region [%.17g, %.17g]^%d\n", r.entry->name.c_str(),
               r.entry->description.c_str(), r.dim, r.entry->lower, r.entry->upper, r.dim);
  const vegas_options& o = r.res.options;
  std::fprintf(out,
               "calls/iteration %llu, max iterations %d, adapting %d, skip %d, min iterations %d, rel_tol %.6g, "
               "abs_tol %.6g, max chi2/dof %.6g, bins %d, alpha %.6g%s\n",
               static_cast<unsigned long long>(o.calls_per_iteration), o.max_iterations, o.adapt_iterations, o.skip,
               o.min_iterations, o.rel_tol, o.abs_tol, o.max_chi2_dof, o.n_bins, o.alpha,
               o.symmetric_map ? ", symmetric map" : "");
}

void print_iteration_table(std::FILE* out, const result& res) {
  std::fprintf(out, "%4s %-5s %18s %11s %18s %11s %10s %9s %10s\n", "iter", "flags", "estimate", "error",
               "weighted est.", "weighted err", "chi2/dof", "Q", "time [s]");
  for (const iteration_record& it : res.records) {
    char flags[5] = {it.adapted ? 'a' : '-', it.accumulated ? '*' : '-', it.rescaled ? 'r' : '-',
                     it.top_bin_level > 0 ? 'o' : '-', '\0'};
    std::fprintf(out, "%4d %-5s %18.10g %11.4g %18.10g %11.4g %10.4g %9.3g %10.4f\n", it.index, flags, it.estimate,
                 it.error, it.weighted_estimate, it.weighted_error, it.chi2_dof, it.q, it.seconds);
  }
  std::fprintf(out, "flags: a = map adapted with this iteration's samples, * = accumulated in the weighted estimate, "
                    "r = bin contributions re-accumulated with a new scale, o = bin contributions beyond the scale's "
                    "range kept in overflow levels\n");
}

void print_result(std::FILE* out, const run_report& r) {
  const result& res = r.res;
  const double rel = res.estimate != 0 ? res.error / std::fabs(res.estimate) : nan_value;
  std::fprintf(out, "result: %.17g +- %.6g (relative %s)\n", res.estimate, res.error, short_number(rel).c_str());
  std::fprintf(out, "status: %s after %d iteration%s (%d accumulated, chi2/dof %.4g, dof %d, Q %.4g)\n",
               to_string(res.status), res.iterations, res.iterations == 1 ? "" : "s", res.accumulated, res.chi2_dof,
               res.dof, res.q);
  std::fprintf(out, "evaluations: %llu in %.4g s (%s evaluations/s)\n", static_cast<unsigned long long>(res.n_eval),
               res.seconds, short_number(evals_per_second(res)).c_str());
  std::fprintf(out, "seed: %llu\n", static_cast<unsigned long long>(res.seed));
  std::fprintf(out, "backend: %s, %d thread%s\n", r.backend_description.c_str(), r.threads, r.threads == 1 ? "" : "s");
  const accuracy a = compare_with_exact(r);
  std::fprintf(out, "exact: %.17g, true relative error %s, pull (estimate - exact)/error %s\n", a.exact,
               short_number(a.true_rel_error).c_str(), short_number(a.pull).c_str());
}

void print_quiet_result(std::FILE* out, const run_report& r) {
  std::fprintf(out, "result: %.17g +- %.6g (%s)\n", r.res.estimate, r.res.error, to_string(r.res.status));
}

nlohmann::ordered_json json_number(double x) {
  if (!std::isfinite(x)) return nullptr;
  return x;
}

nlohmann::ordered_json to_json(const run_report& r) {
  using json = nlohmann::ordered_json;
  const result& res = r.res;
  const vegas_options& o = res.options;
  const accuracy a = compare_with_exact(r);

  json iterations = json::array();
  for (const iteration_record& it : res.records) {
    iterations.push_back({{"index", it.index},
                          {"estimate", json_number(it.estimate)},
                          {"error", json_number(it.error)},
                          {"adapted", it.adapted},
                          {"accumulated", it.accumulated},
                          {"weighted_estimate", json_number(it.weighted_estimate)},
                          {"weighted_error", json_number(it.weighted_error)},
                          {"chi2_dof", json_number(it.chi2_dof)},
                          {"q", json_number(it.q)},
                          {"n_eval", it.n_eval},
                          {"n_nonzero", it.n_nonzero},
                          {"rescaled", it.rescaled},
                          {"top_bin_level", it.top_bin_level},
                          {"seconds", json_number(it.seconds)}});
  }
  json options = {{"rel_tol", json_number(o.rel_tol)},
                  {"abs_tol", json_number(o.abs_tol)},
                  {"calls_per_iteration", o.calls_per_iteration},
                  {"max_iterations", o.max_iterations},
                  {"adapt_iterations", o.adapt_iterations},
                  {"skip", o.skip},
                  {"min_iterations", o.min_iterations},
                  {"max_chi2_dof", json_number(o.max_chi2_dof)},
                  {"n_bins", o.n_bins},
                  {"alpha", json_number(o.alpha)},
                  {"symmetric_map", o.symmetric_map},
                  {"seed", o.seed},
                  {"threads", o.threads},
                  {"backend", to_string(o.backend)},
                  {"cuda_threads_per_block", o.cuda_threads_per_block}};
  json j;
  j["version"] = MCUBES_VERSION_STRING;
  j["integrand"] = {{"name", r.entry->name},
                    {"description", r.entry->description},
                    {"dim", r.dim},
                    {"any_dim", r.entry->any_dim},
                    {"lower", json_number(r.entry->lower)},
                    {"upper", json_number(r.entry->upper)}};
  j["estimate"] = json_number(res.estimate);
  j["error"] = json_number(res.error);
  j["chi2_dof"] = json_number(res.chi2_dof);
  j["q"] = json_number(res.q);
  j["dof"] = res.dof;
  j["status"] = to_string(res.status);
  j["n_eval"] = res.n_eval;
  j["n_iterations"] = res.iterations;
  j["accumulated"] = res.accumulated;
  j["iterations"] = std::move(iterations);
  j["seed"] = res.seed;
  j["backend"] = res.backend;
  j["backend_description"] = r.backend_description;
  j["threads"] = r.threads;
  j["options"] = std::move(options);
  j["exact"] = json_number(a.exact);
  j["true_rel_error"] = json_number(a.true_rel_error);
  j["pull"] = json_number(a.pull);
  j["seconds"] = json_number(res.seconds);
  j["evals_per_second"] = json_number(evals_per_second(res));
  return j;
}

}  // namespace mcubes::cli

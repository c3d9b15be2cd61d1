/// @file cli/report.cpp
/// Text and JSON reports of `mcubes integrate` (see report.hpp).
#include "report.hpp"
#include "user_integrand.hpp"

#include <cmath>
#include <cstdlib>
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

/// The integrand in words: its paper-form description at the paper's parameters, else its formula
/// with the parameters a and u (whose values the report gives beside it).
std::string described(const run_report& r) {
  return (r.params.empty() || r.params == r.entry->default_values()) ? r.entry->description : r.entry->formula;
}

}  // namespace

accuracy compare_with_exact(const run_report& r) {
  accuracy a;
  if (r.user || !r.lower.empty() || r.entry->exact == nullptr) {  // no exact value for this integrand or region
    a.exact = a.true_rel_error = a.pull = nan_value;
    return a;
  }
  a.exact = r.params.empty() ? r.entry->exact(r.dim) : r.entry->exact_at(r.dim, r.params);
  const double diff = r.res.estimate - a.exact;
  a.true_rel_error = a.exact != 0 ? std::fabs(diff) / std::fabs(a.exact) : nan_value;
  a.pull = (r.res.error > 0 && std::isfinite(r.res.error)) ? diff / r.res.error : nan_value;
  return a;
}

int exit_code(status s) { return s == status::converged ? 0 : 1; }

void print_header(std::FILE* out, const run_report& r) {
  const std::string params = suite::params_text(*r.entry, r.params);
  std::fprintf(out, "integrand %s (%s), d = %d, region [%.17g, %.17g]^%d%s%s\n", r.entry->name.c_str(),
               described(r).c_str(), r.dim, r.entry->lower, r.entry->upper, r.dim,
               params.empty() ? "" : ", parameters ", params.c_str());
  if (!r.lower.empty()) {
    std::fprintf(out, "region");
    for (std::size_t i = 0; i < r.lower.size(); ++i)
      std::fprintf(out, "%s[%.17g, %.17g]", i ? " x " : " ", r.lower[i], r.upper[i]);
    std::fprintf(out, " (--region/--lower/--upper)\n");
  }
  print_plan_line(out, r.plan, r.dim, r.res.options);
}

void print_plan_line(std::FILE* out, const vegas_plan& plan, int dim, const vegas_options& o) {
  const stratification& g = plan.grid;
  if (g.adaptive())
    std::fprintf(out,
                 "evaluations/iteration %llu at most (%llu sub-cubes = %llu^%d, at least %llu samples each, the rest "
                 "where the sub-cubes vary most; stratification adaptive (VEGAS+), beta %.6g), ",
                 static_cast<unsigned long long>(plan.n_eval), static_cast<unsigned long long>(g.n_cubes),
                 static_cast<unsigned long long>(g.g), dim, static_cast<unsigned long long>(g.min_samples_per_cube), o.beta);
  else
    std::fprintf(out,
                 "evaluations/iteration %llu (%llu sub-cubes = %llu^%d x %llu samples; at most %llu asked; stratification "
                 "uniform (m-Cubes)), ",
                 static_cast<unsigned long long>(plan.n_eval), static_cast<unsigned long long>(g.n_cubes),
                 static_cast<unsigned long long>(g.g), dim, static_cast<unsigned long long>(g.samples_per_cube),
                 static_cast<unsigned long long>(o.calls_per_iteration));
  const int bins = map_bins_for(o);
  std::fprintf(out,
               "max iterations %d, adapting %d, skip %d, min iterations %d, rel_tol %.6g, abs_tol %.6g, "
               "max chi2/dof %.6g, bins %d%s, alpha %.6g%s, map floor %.6g%s\n",
               o.max_iterations, o.adapt_iterations, o.skip, o.min_iterations, o.rel_tol, o.abs_tol, o.max_chi2_dof, bins,
               o.n_bins == 0 ? " (auto)" : "", alpha_for(o), o.alpha == auto_alpha ? " (auto)" : "", map_floor_for(o),
               o.symmetric_map ? ", symmetric map" : "");
  if (o.n_bins != 0 && static_cast<std::uint64_t>(o.n_bins) * 10 > o.calls_per_iteration)
    std::fprintf(out,
                 "warning: %d bins per axis get fewer than ten samples each from %llu evaluations per iteration; the "
                 "map's weighted average is biased with so few (--bins auto: %d)\n",
                 o.n_bins, static_cast<unsigned long long>(o.calls_per_iteration), [&] {
                   vegas_options a = o;
                   a.n_bins = 0;
                   return map_bins_for(a);
                 }());
}

void print_table_header(std::FILE* out) { std::fputs(iteration_table_header().c_str(), out); }

void print_iteration_row(std::FILE* out, const iteration_record& it) { std::fputs(iteration_row(it).c_str(), out); }

void print_table_legend(std::FILE* out) { std::fputs(iteration_table_legend().c_str(), out); }

void print_iteration_table(std::FILE* out, const result& res) {
  print_table_header(out);
  for (const iteration_record& it : res.records) print_iteration_row(out, it);
  print_table_legend(out);
}

void print_result(std::FILE* out, const run_report& r) {
  const result& res = r.res;
  const double rel = res.estimate != 0 ? res.error / std::fabs(res.estimate) : nan_value;
  std::fprintf(out, "result: %s  (%.17g +- %.6g, relative %s)\n", format_with_error(res.estimate, res.error).c_str(),
               res.estimate, res.error, short_number(rel).c_str());
  std::string why = describe(res.status);
  if (res.status == status::not_converged && res.iterations >= res.options.max_iterations)
    why = "stopped at max_iterations (" + std::to_string(res.options.max_iterations) + ") without meeting the tolerance";
  if (res.status == status::interrupted && r.signal != 0)
    why = std::string("stopped by signal ") + (r.signal == 2 ? "SIGINT" : r.signal == 15 ? "SIGTERM" : std::to_string(r.signal)) +
          "; the estimate is that of the completed iterations";
  std::fprintf(out, "status: %s: %s\n", to_string(res.status), why.c_str());
  for (const warning w : all_warnings)
    if (res.has_warning(w)) std::fprintf(out, "warning: %s: %s\n", to_string(w), describe(w));
  if (res.has_warning(warning_weighted_disagreement))
    std::fprintf(out, "inverse-variance weighted average (Lepage): %.17g +- %.6g\n", res.inverse_variance_estimate,
                 res.inverse_variance_error);
  std::fprintf(out, "iterations: %d (%d accumulated, chi2/dof %s, dof %d, Q %s)\n", res.iterations, res.accumulated,
               short_number(res.chi2_dof).c_str(), res.dof, short_number(res.q).c_str());
  std::fprintf(out, "evaluations: %llu in %.4g s (%s evaluations/s)\n", static_cast<unsigned long long>(res.n_eval),
               res.seconds, short_number(evals_per_second(res)).c_str());
  if (r.exchange) {
    const exchange_time& t = r.exchange->time;
    std::fprintf(out, "exchange: %s, %.3g ms per iteration (%llu exchanges, %s bytes in all; waits for the slowest "
                 "member included)\n",
                 r.exchange->team.c_str(), res.iterations > 0 ? 1e3 * t.seconds / res.iterations : 0.0,
                 static_cast<unsigned long long>(t.exchanges), short_number(static_cast<double>(t.bytes)).c_str());
  }
  std::fprintf(out, "seed: %llu\n", static_cast<unsigned long long>(res.seed));  // the backend: in the header
  const accuracy a = compare_with_exact(r);
  if (r.user) return;  // no exact value
  if (!r.lower.empty()) {
    std::fprintf(out, "exact: not known for this region (the exact value is that of [%.17g, %.17g]^%d)\n",
                 r.entry->lower, r.entry->upper, r.dim);
    return;
  }
  std::fprintf(out, "exact: %.17g, true relative error %s, pull (estimate - exact)/error %s\n", a.exact,
               short_number(a.true_rel_error).c_str(), short_number(a.pull).c_str());
}

void print_quiet_result(std::FILE* out, const run_report& r) {
  std::fprintf(out, "result: %s (%s", format_with_error(r.res.estimate, r.res.error).c_str(), to_string(r.res.status));
  for (const warning w : all_warnings)
    if (r.res.has_warning(w)) std::fprintf(out, "; warning: %s", to_string(w));
  std::fprintf(out, ")\n");
}

nlohmann::ordered_json warnings_json(const result& res) {
  nlohmann::ordered_json list = nlohmann::ordered_json::array();
  for (const warning w : all_warnings)
    if (res.has_warning(w)) list.push_back(to_string(w));
  return list;
}

nlohmann::ordered_json json_number(double x) {
  if (!std::isfinite(x)) return nullptr;
  return x;
}

nlohmann::ordered_json option_json(double x) { return json_number(x); }
nlohmann::ordered_json option_json(std::uint64_t x) { return x; }
nlohmann::ordered_json option_json(int x) { return x; }
nlohmann::ordered_json option_json(bool x) { return x; }
nlohmann::ordered_json option_json(stratification_mode x) { return to_string(x); }

nlohmann::ordered_json options_json(const vegas_options& o) {
  const vegas_options resolved = with_resolved_defaults(o);  // n_bins and alpha as the run used them
  nlohmann::ordered_json j;  // the options table (options.hpp), then what follows from it and the execution options
  for_each_vegas_option([&](const option_info& info, auto field) { j[info.name] = option_json(resolved.*field); });
  j["map_floor"] = json_number(map_floor_for(o));
  j["threads"] = o.threads;
  j["backend"] = to_string(o.backend);
  j["cuda_threads_per_block"] = o.cuda_threads_per_block;
  return j;
}

nlohmann::ordered_json iteration_json(const iteration_record& it) {
  return {{"index", it.index},
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
          {"underflow", it.underflow},
          {"top_bin_level", it.top_bin_level},
          {"seconds", json_number(it.seconds)}};
}

nlohmann::ordered_json to_json(const run_report& r) {
  using json = nlohmann::ordered_json;
  const result& res = r.res;
  const vegas_options& o = res.options;
  const accuracy a = compare_with_exact(r);

  json iterations = json::array();
  for (const iteration_record& it : res.records) iterations.push_back(iteration_json(it));
  json j;
  j["version"] = MCUBES_VERSION_STRING;
  j["integrand"] = {{"name", r.entry->name},
                    {"description", described(r)},
                    {"dim", r.dim},
                    {"any_dim", r.entry->any_dim},
                    {"lower", json_number(r.entry->lower)},
                    {"upper", json_number(r.entry->upper)}};
  json params = json::object();
  for (std::size_t k = 0; k < r.entry->parameters.size() && k < r.params.size(); ++k)
    params[r.entry->parameters[k].name] = json_number(r.params[k]);
  j["params"] = std::move(params);
  {
    json region = json::array();
    for (int i = 0; i < r.dim; ++i) {
      const bool own = r.lower.empty();
      region.push_back({json_number(own ? r.entry->lower : r.lower[static_cast<std::size_t>(i)]),
                        json_number(own ? r.entry->upper : r.upper[static_cast<std::size_t>(i)])});
    }
    if (!r.lower.empty()) j["integrand"]["lower"] = j["integrand"]["upper"] = nullptr;
    j["region"] = std::move(region);
  }
  if (r.user) {
    nlohmann::ordered_json u = user_integrand_json(*r.user);
    j["source"] = std::move(u["source"]);
    j["compile"] = std::move(u["compile"]);
  }
  if (r.compiled) j["compile"] = std::move(user_integrand_json(*r.compiled)["compile"]);
  if (!r.map_edges.empty()) {
    json rows = json::array();
    for (const std::vector<double>& row : r.map_edges) {
      json e = json::array();
      for (double x : row) e.push_back(json_number(x));
      rows.push_back(std::move(e));
    }
    j["map"] = {{"n_bins", r.map_edges.front().size() - 1}, {"edges", std::move(rows)}};
  }
  if (r.exchange)
    j["exchange"] = {{"team", r.exchange->team},
                     {"seconds", json_number(r.exchange->time.seconds)},
                     {"exchanges", r.exchange->time.exchanges},
                     {"bytes", r.exchange->time.bytes}};
  if (r.sample)
    j["sample"] = {{"file", r.sample->file},
                   {"points", r.sample->points},
                   {"seed", r.sample->seed},
                   {"sub_cubes", r.sample->n_cubes},
                   {"design", r.sample->allocated ? "vegas+ allocation" : "uniform"},
                   {"columns", "x0 .. x(d-1), weight"}};
  // A failed run has no result: its estimate, error, chi2_dof, q (and what follows from them) are null.
  const bool failed = r.run_state == "failed";
  const auto value = [failed](double x) { return failed ? json(nullptr) : json_number(x); };
  j["estimate"] = value(res.estimate);
  j["error"] = value(res.error);
  j["chi2_dof"] = value(res.chi2_dof);
  j["q"] = value(res.q);
  j["dof"] = res.dof;
  j["inverse_variance_estimate"] = json_number(res.inverse_variance_estimate);
  j["inverse_variance_error"] = json_number(res.inverse_variance_error);
  j["warnings"] = warnings_json(res);
  j["status"] = r.run_state.empty() ? std::string(to_string(res.status)) : r.run_state;
  j["status_detail"] = r.run_state == "running" ? std::string("the run is in progress; the iterations so far")
                       : r.run_state == "failed" ? r.failure
                                                  : std::string(describe(res.status));
  if (r.signal != 0) j["signal"] = r.signal;
  j["result_text"] = failed ? json(nullptr) : json(format_with_error(res.estimate, res.error));
  j["n_eval"] = res.n_eval;
  j["n_iterations"] = res.iterations;
  j["evaluations_per_iteration"] = r.plan.n_eval;
  if (r.plan.grid.adaptive())  // VEGAS+: the counts vary; at least min_samples_per_cube each
    j["grid"] = {{"g", r.plan.grid.g}, {"sub_cubes", r.plan.grid.n_cubes}, {"min_samples_per_cube", r.plan.grid.min_samples_per_cube}};
  else
    j["grid"] = {{"g", r.plan.grid.g}, {"sub_cubes", r.plan.grid.n_cubes}, {"samples_per_cube", r.plan.grid.samples_per_cube}};
  j["accumulated"] = res.accumulated;
  j["iterations"] = std::move(iterations);
  j["seed"] = res.seed;
  j["backend"] = res.backend;
  j["backend_description"] = r.backend_description;
  j["threads"] = r.threads;
  j["options"] = options_json(o);
  j["exact"] = json_number(a.exact);
  j["true_rel_error"] = value(a.true_rel_error);
  j["pull"] = value(a.pull);
  j["seconds"] = json_number(res.seconds);
  j["evals_per_second"] = json_number(evals_per_second(res));
  return j;
}

}  // namespace mcubes::cli

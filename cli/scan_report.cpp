/// @file cli/scan_report.cpp
/// Text and JSON reports of `mcubes scan` (see scan_report.hpp).
#include "scan_report.hpp"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>
#include <map>
#include <string>
#include <type_traits>

#include <mcubes/config.hpp>

#include "parse.hpp"
#include "report.hpp"

namespace mcubes::cli {

namespace {

constexpr double nan_value = std::numeric_limits<double>::quiet_NaN();

/// Chunks per tile of the CPU backend's pass (backend/cpu.hpp, scalar integrands).
constexpr double cpu_tile_chunks = 1024;

/// Host bytes of one grid point besides its result: its parameter values (a vector), exact value,
/// parameter struct and pass descriptor, rounded up.
constexpr double scan_point_bytes = 160;

/// Host bytes of one integral's run state on any backend, measured (peak resident memory of scans
/// of 20,000 integrals, tests/cli/test_scan.cpp checks the estimate): its vegas_run (about 0.8 KB),
/// its pass descriptor and sums of a round, the per-worker pass state, and the allocator's share.
constexpr double scan_run_state_bytes = 2048;

/// Host bytes of one integral in the JSON record built at the end (nlohmann::json nodes and the
/// dumped text), and of each iteration record in it with --json-iterations (measured as above). The
/// record is built after the batch has freed its run state, maps and bins, in their place.
constexpr double scan_json_result_bytes = 2048;
constexpr double scan_json_iteration_bytes = 1536;

std::string number(double x) { return suite::detail::number_text(x); }

/// Evaluations of the results so far.
std::uint64_t total_evaluations(const scan_report& r) {
  if (r.results.empty()) return r.progress.n_eval;
  std::uint64_t n = 0;
  for (const result& res : r.results) n += res.n_eval;
  return n;
}

/// The pull (estimate - exact)/error, NaN where the error is not finite and positive.
double pull_of(const result& res, double exact) {
  return (res.error > 0 && std::isfinite(res.error)) ? (res.estimate - exact) / res.error : nan_value;
}

/// Number of integrals per status (row_status), by name.
std::map<std::string, std::size_t> status_counts(const scan_report& r) {
  std::map<std::string, std::size_t> counts;
  for (std::uint64_t k = 0; k < r.results.size(); ++k) ++counts[row_status(r, k)];
  return counts;
}

bool failed_at(const scan_report& r, std::uint64_t k) { return k < r.failures.size() && !r.failures[k].empty(); }

}  // namespace

std::string row_status(const scan_report& r, std::uint64_t k) {
  return failed_at(r, k) ? std::string("failed") : std::string(to_string(r.results[k].status));
}

std::size_t failed_count(const scan_report& r) {
  std::size_t n = 0;
  for (const std::string& f : r.failures) n += !f.empty();
  return n;
}

double scan_host_bytes(std::uint64_t K, int d, const vegas_options& o, const vegas_plan& plan, int cpu_threads,
                       bool on_cuda, bool json_iterations) {
  const double n = map_bins_for(o), dd = d, I = o.max_iterations;
  double capacity = 1;  // of the records vector (grown by doubling)
  while (capacity < I) capacity *= 2;
  const double results = capacity * sizeof(iteration_record) + sizeof(result) + scan_point_bytes;
  const double json = scan_json_result_bytes + (json_iterations ? I * scan_json_iteration_bytes : 0.0);
  if (on_cuda)  // maps and bins are on the device
    return static_cast<double>(K) * (results + std::max(scan_run_state_bytes, json));
  const double tiles = std::ceil(static_cast<double>(plan.grid.n_chunks) / cpu_tile_chunks);
  const double workers = std::min<double>(cpu_threads, std::max(1.0, tiles));
  const double map = 8.0 * dd * (n + 1) + 8.0 * (4 * n + 1) + 8.0 * dd * n;  // edges, adaptation scratch
  const double shares = o.stratification == stratification_mode::adaptive ? 16.0 * static_cast<double>(plan.grid.n_cubes) : 0;
  const double run = map + 16.0 * dd * n * (1 + workers) + shares + scan_run_state_bytes;  // while the batch runs
  return static_cast<double>(K) * (results + std::max(run, json));
}

double scan_device_bytes(std::uint64_t K, int d, int n_bins) {
  const double n = n_bins, dd = d;
  return static_cast<double>(K) * (8.0 * dd * (n + 1) + 16.0 * dd * n + 200.0);
}

std::string overall_status(const scan_report& r) {
  bool all = true;
  for (std::uint64_t k = 0; k < r.results.size(); ++k) {
    if (failed_at(r, k)) continue;
    if (r.results[k].status == status::interrupted) return "interrupted";
    all = all && r.results[k].status == status::converged;
  }
  if (failed_count(r) > 0) return "failed";
  return all ? "converged" : "not converged";
}

int scan_exit_code(const scan_report& r) {
  if (failed_count(r) > 0) return 3;
  for (const result& res : r.results)
    if (res.status != status::converged) return 1;
  return 0;
}

std::string reproduce_command(const scan_report& r, std::uint64_t k, std::uint64_t seed) {
  const suite::entry& e = *r.entry;
  const vegas_options& o = r.options;
  vegas_options def;  // what `mcubes integrate` takes when an option is not given
  def.calls_per_iteration = e.paper.calls;
  def.max_iterations = e.paper.max_iterations;
  def.adapt_iterations = e.paper.adapt_iterations;
  def.skip = e.paper.skip;
  std::string s = "mcubes integrate " + e.name + " --dim " + std::to_string(r.dim);
  const std::vector<double>& values = (*r.points)[k];
  for (std::size_t j = 0; j < e.parameters.size(); ++j)
    s += std::string(" --param ") + e.parameters[j].name + "=" + number(values[j]);
  s += " --seed " + std::to_string(seed) + " --backend " + r.backend;
  // every field of the options table that differs from what the command takes by default (the seed: above)
  const auto text = [](const auto& x) -> std::string {
    using T = std::decay_t<decltype(x)>;
    if constexpr (std::is_same_v<T, double>) return number(x);
    else if constexpr (std::is_same_v<T, stratification_mode>) return to_string(x);
    else return std::to_string(x);
  };
  for_each_vegas_option([&](const option_info& info, auto field) {
    if (std::strcmp(info.name, "seed") == 0 || o.*field == def.*field) return;
    if constexpr (std::is_same_v<std::decay_t<decltype(o.*field)>, bool>)
      s += std::string(" ") + info.flag;  // a flag: given when true (false is the default)
    else
      s += std::string(" ") + info.flag + " " + text(o.*field);
  });
  return s;
}

void print_scan_header(std::FILE* out, const scan_report& r) {
  const suite::entry& e = *r.entry;
  std::fprintf(out, "scan of %s (%s), d = %d, region [%.17g, %.17g]^%d\n", e.name.c_str(), e.formula.c_str(), r.dim,
               e.lower, e.upper, r.dim);
  std::string fixed;
  for (std::size_t j = 0; j < e.parameters.size(); ++j) {
    bool ranged = false;
    for (const scan_range& g : r.grid->ranges) ranged = ranged || g.parameter == j;
    if (!ranged) fixed += (fixed.empty() ? "" : ", ") + std::string(e.parameters[j].name) + " = " + number(r.grid->defaults[j]);
  }
  std::fprintf(out, "grid: K = %llu integrals: %s%s%s%s\n", static_cast<unsigned long long>(r.grid->size),
               r.grid->describe().c_str(), r.grid->ranges.size() > 1 ? " (in this order, the last varying fastest)" : "",
               fixed.empty() ? "" : "; at the defaults: ", fixed.c_str());
  print_plan_line(out, r.plan, r.dim, r.options);
  const vegas_options& o = r.options;
  std::fprintf(out,
               "seed %llu: integral k uses the seed batch_seed(%llu, k) (column seed); 'mcubes integrate %s --dim %d "
               "--param NAME=VALUE ... --seed SEED' with the same options reproduces a row bit for bit\n",
               static_cast<unsigned long long>(o.seed), static_cast<unsigned long long>(o.seed), e.name.c_str(), r.dim);
  std::fprintf(out, "backend: %s, %d thread%s%s; memory: host %s", r.backend_description.c_str(), r.threads,
               r.threads == 1 ? "" : "s", r.backend == "cuda" ? " per block" : "", format_bytes(r.host_bytes).c_str());
  if (r.backend == "cuda") std::fprintf(out, ", device %s", format_bytes(r.device_bytes).c_str());
  std::fprintf(out, "\n");
}

void print_scan_row_header(std::FILE* out, const scan_report& r) {
  std::fprintf(out, "%6s", "k");
  for (const suite::parameter& p : r.entry->parameters) std::fprintf(out, " %12s", p.name);
  std::fprintf(out, " %24s %10s %24s %7s %-13s %5s %20s\n", "estimate", "error", "exact", "pull", "status", "iter",
               "seed");
}

void print_scan_row(std::FILE* out, const scan_report& r, std::uint64_t k) {
  const result& res = r.results[k];
  const double exact = (*r.exact)[k];
  const bool failed = failed_at(r, k);
  const double pull = failed ? nan_value : pull_of(res, exact);
  std::fprintf(out, "%6llu", static_cast<unsigned long long>(k));
  for (const double v : (*r.points)[k]) std::fprintf(out, " %12s", number(v).c_str());
  char pull_text[32] = "-", estimate_text[40] = "-", error_text[32] = "-";
  if (std::isfinite(pull)) std::snprintf(pull_text, sizeof pull_text, "%.2f", pull);
  if (!failed) {
    std::snprintf(estimate_text, sizeof estimate_text, "%.17g", res.estimate);
    std::snprintf(error_text, sizeof error_text, "%.3g", res.error);
  }
  std::fprintf(out, " %24s %10s %24.17g %7s %-13s %5d %20llu\n", estimate_text, error_text, exact, pull_text,
               row_status(r, k).c_str(), res.iterations, static_cast<unsigned long long>(res.seed));
}

void print_scan_summary(std::FILE* out, const scan_report& r) {
  std::string counts;
  for (const auto& [name, n] : status_counts(r)) counts += (counts.empty() ? "" : ", ") + std::to_string(n) + " " + name;
  std::uint64_t warned = 0;
  for (const result& res : r.results) warned += res.warnings != 0;
  if (warned != 0) counts += " (" + std::to_string(warned) + " with a warning on the error: the JSON's \"warnings\")";
  const std::uint64_t n_eval = total_evaluations(r);
  std::fprintf(out, "scan: %llu integrals: %s; %llu evaluations in %.4g s (%.3g evaluations/s)\n",
               static_cast<unsigned long long>(r.results.size()), counts.c_str(),
               static_cast<unsigned long long>(n_eval), r.seconds,
               r.seconds > 0 ? static_cast<double>(n_eval) / r.seconds : 0.0);
  for (std::uint64_t k = 0; k < r.results.size(); ++k)
    if (failed_at(r, k))
      std::fprintf(out, "failed: integral %llu (%s; seed %llu): %s\n", static_cast<unsigned long long>(k),
                   suite::params_text(*r.entry, (*r.points)[k]).c_str(),
                   static_cast<unsigned long long>(r.results[k].seed), r.failures[k].c_str());
  if (r.signal != 0)
    std::fprintf(out, "status: interrupted: stopped by signal %s after round %d; every integral keeps its completed "
                      "iterations\n",
                 r.signal == 2 ? "SIGINT" : r.signal == 15 ? "SIGTERM" : std::to_string(r.signal).c_str(),
                 r.progress.round);
}

nlohmann::ordered_json scan_to_json(const scan_report& r) {
  using json = nlohmann::ordered_json;
  const suite::entry& e = *r.entry;
  json j;
  j["command"] = "scan";
  j["version"] = MCUBES_VERSION_STRING;
  j["integrand"] = {{"name", e.name},       {"formula", e.formula},          {"dim", r.dim},
                    {"any_dim", e.any_dim}, {"lower", json_number(e.lower)}, {"upper", json_number(e.upper)}};
  json region = json::array();
  for (int i = 0; i < r.dim; ++i) region.push_back({json_number(e.lower), json_number(e.upper)});
  j["region"] = std::move(region);
  {
    json ranges = json::array(), defaults = json::object();
    for (const scan_range& g : r.grid->ranges)
      ranges.push_back({{"name", g.name},
                        {"text", g.text},
                        {"start", json_number(g.start)},
                        {"stop", json_number(g.stop)},
                        {"count", g.count}});
    for (std::size_t p = 0; p < e.parameters.size(); ++p) {
      bool ranged = false;
      for (const scan_range& g : r.grid->ranges) ranged = ranged || g.parameter == p;
      if (!ranged) defaults[e.parameters[p].name] = json_number(r.grid->defaults[p]);
    }
    j["parameter_grid"] = {{"order", "the product of the ranges in the order given, the last varying fastest"},
                           {"integrals", r.grid->size},
                           {"ranges", std::move(ranges)},
                           {"defaults", std::move(defaults)}};
  }
  j["options"] = options_json(r.options);
  j["seed_rule"] = "integral k uses batch_seed(options.seed, k)";
  j["evaluations_per_iteration"] = r.plan.n_eval;
  j["grid"] = {{"g", r.plan.grid.g}, {"sub_cubes", r.plan.grid.n_cubes}, {"samples_per_cube", r.plan.grid.samples_per_cube}};
  j["backend"] = r.backend;
  j["backend_description"] = r.backend_description;
  j["threads"] = r.threads;
  j["memory"] = {{"host_bytes", json_number(r.host_bytes)}, {"device_bytes", json_number(r.device_bytes)}};
  const std::string state = r.run_state.empty() ? overall_status(r) : r.run_state;
  j["status"] = state;
  j["status_detail"] = state == "running"       ? std::string("the scan is in progress; results come at the end")
                       : state == "failed"      ? (r.failure.empty() ? std::to_string(failed_count(r)) + " of " +
                                                              std::to_string(r.results.size()) +
                                                              " integrals failed (status \"failed\", see their "
                                                              "failure); the others are complete"
                                                        : r.failure)
                       : state == "interrupted" ? std::string("stopped early; every integral keeps its completed "
                                                              "iterations (status interrupted where it had not ended)")
                       : state == "converged"   ? std::string("every integral converged")
                                                : std::string("some integrals did not converge (see their status)");
  if (r.signal != 0) j["signal"] = r.signal;
  json counts = json::object();
  for (const auto& [name, n] : status_counts(r)) counts[name] = n;
  j["counts"] = std::move(counts);
  j["progress"] = {{"round", r.progress.round}, {"finished", r.progress.finished}, {"n_eval", r.progress.n_eval}};
  const std::uint64_t n_eval = total_evaluations(r);
  j["n_eval"] = n_eval;
  j["seconds"] = json_number(r.seconds);
  j["evals_per_second"] = json_number(r.seconds > 0 ? static_cast<double>(n_eval) / r.seconds : nan_value);
  json results = json::array();
  for (std::size_t k = 0; k < r.results.size(); ++k) {
    const result& res = r.results[k];
    const double exact = (*r.exact)[k];
    const bool failed = failed_at(r, k);
    const auto value = [failed](double x) { return failed ? json(nullptr) : json_number(x); };
    json params = json::object();
    for (std::size_t p = 0; p < e.parameters.size(); ++p) params[e.parameters[p].name] = json_number((*r.points)[k][p]);
    json o = {{"index", k},
              {"params", std::move(params)},
              {"seed", res.seed},
              {"estimate", value(res.estimate)},
              {"error", value(res.error)},
              {"chi2_dof", value(res.chi2_dof)},
              {"q", value(res.q)},
              {"dof", res.dof},
              {"status", row_status(r, k)},
              {"warnings", warnings_json(res)},
              {"n_iterations", res.iterations},
              {"accumulated", res.accumulated},
              {"n_eval", res.n_eval},
              {"exact", json_number(exact)},
              {"true_rel_error", value(exact != 0 ? std::fabs(res.estimate - exact) / std::fabs(exact) : nan_value)},
              {"pull", value(pull_of(res, exact))},
              {"seconds", json_number(res.seconds)},
              {"reproduce", reproduce_command(r, k, res.seed)}};
    if (failed) o["failure"] = r.failures[k];
    if (r.json_iterations) {
      json its = json::array();
      for (const iteration_record& it : res.records) its.push_back(iteration_json(it));
      o["iterations"] = std::move(its);
    }
    results.push_back(std::move(o));
  }
  j["results"] = std::move(results);
  return j;
}

}  // namespace mcubes::cli

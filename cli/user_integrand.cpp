/// @file cli/user_integrand.cpp
/// Integrands given as text on the command line, and the region options (user_integrand.hpp).
#include "user_integrand.hpp"

#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <deque>
#include <limits>
#include <sstream>

#include <unistd.h>

#include <mcubes/error.hpp>
#include <mcubes/jit.hpp>

#include "interrupt.hpp"
#include "parse.hpp"

namespace mcubes::cli {

bool is_user_integrand(const integrate_args& a) {
  return a.expr_opt->count() > 0 || a.body_opt->count() > 0;
}

namespace {

/// NaN: the user's integrand has no exact value (after the check of the number of values).
double no_exact_value(int, const std::vector<double>&) { return std::numeric_limits<double>::quiet_NaN(); }

/// "p0", "p1", ...: storage for the parameter names of user_entry (suite::parameter holds a const char*).
const char* parameter_name(std::size_t j) {
  static std::deque<std::string> names;
  while (names.size() <= j) names.push_back("p" + std::to_string(names.size()));
  return names[j].c_str();
}

}  // namespace

const suite::entry& user_entry(const integrate_args& a, std::size_t n_params, const std::string& name, double lower,
                               double upper) {
  MCUBES_EXPECTS(!(a.expr_opt->count() > 0 && a.body_opt->count() > 0),
                 "give the integrand once: --expr EXPR or --body BODY, not both");
  MCUBES_EXPECTS(a.name.empty(), "give the integrand once: a suite NAME ('", a.name,
                 "') or --expr/--body, not both");
  static suite::entry e;
  const bool expr = a.expr_opt->count() > 0;
  e.name = !name.empty() ? name : expr ? "expr" : "body";
  e.description = expr ? a.expr : a.body;
  e.formula = e.description;
  e.parameters.clear();
  for (std::size_t j = 0; j < n_params; ++j)
    e.parameters.push_back(suite::parameter{parameter_name(j), std::numeric_limits<double>::quiet_NaN(),
                                            "p[j] of the text"});
  e.exact_at = &no_exact_value;
  e.default_dim = 1;
  e.any_dim = true;
  e.lower = lower;
  e.upper = upper;
  const vegas_options defaults;
  e.paper = suite::run_settings{defaults.calls_per_iteration, defaults.max_iterations, defaults.adapt_iterations,
                                defaults.skip};
  e.exact = nullptr;
  e.max_dim = jit::max_dim;
  return e;
}

std::size_t user_parameter_count(const integrate_args& a, const std::vector<std::string>& texts, int dim) {
  const bool expr = a.expr_opt->count() > 0;
  const char* option = expr ? "--expr" : "--body";
  std::vector<bool> given;
  for (const std::string& text : texts) {
    const std::size_t eq = text.find('=');
    MCUBES_EXPECTS(eq != std::string::npos && eq > 0, "--param must be NAME=VALUE (e.g. p0=2), got '", text, "'");
    const std::string name = text.substr(0, eq);
    const bool digits = name.size() >= 2 && name[0] == 'p' &&
                        name.find_first_not_of("0123456789", 1) == std::string::npos &&
                        (name.size() == 2 || name[1] != '0') && name.size() <= 6;
    MCUBES_EXPECTS(digits, "--param ", name, ": the parameters of ", option,
                   " are named p0, p1, ... (p[0], p[1], ... in the text), got '", name, "'");
    const std::size_t j = std::stoul(name.substr(1));
    MCUBES_EXPECTS(j < static_cast<std::size_t>(jit::max_params), "--param ", name, ": at most ", jit::max_params,
                   " parameters p0 .. p", jit::max_params - 1);
    if (given.size() <= j) given.resize(j + 1, false);
    MCUBES_EXPECTS(!given[j], "--param ", name, " given twice");
    given[j] = true;
  }
  for (std::size_t j = 0; j < given.size(); ++j)
    MCUBES_EXPECTS(given[j], "--param p", given.size() - 1, " given without p", j, ": the parameters are p0 .. p",
                   given.size() - 1, ", each given once");
  jit::integrand_source src = expr ? jit::expression(a.expr, dim) : jit::body(a.body, dim);
  src.label = option;
  for (const jit::parameter_use& u : jit::literal_parameter_uses(src))
    MCUBES_EXPECTS(u.index < static_cast<long long>(given.size()), option, " reads p[", u.index, "] (line ", u.line,
                   ", column ", u.column, ") but no --param p", u.index, "=VALUE is given");
  return given.size();
}

int resolve_user_dim(const integrate_args& a) {
  const char* option = a.expr_opt->count() > 0 ? "--expr" : "--body";
  MCUBES_EXPECTS(a.dim_opt->count() > 0, option, " needs --dim D (the number of variables x[0] .. x[D-1])");
  return static_cast<int>(parse_int(a.dim, "--dim", 1, jit::max_dim));
}

namespace {

/// "A:B" as two finite reals with A < B. @throws invalid_input naming the option.
void parse_pair(const std::string& text, const std::string& option, double& a, double& b) {
  const std::size_t colon = text.find(':');
  MCUBES_EXPECTS(colon != std::string::npos && text.find(':', colon + 1) == std::string::npos,
                 option, " takes LOWER:UPPER pairs separated by commas (e.g. 0:1,0:2), got '", text, "'");
  const double big = std::numeric_limits<double>::max();
  a = parse_real(text.substr(0, colon), option + " (lower bound)", -big, big);
  b = parse_real(text.substr(colon + 1), option + " (upper bound)", -big, big);
}

}  // namespace

void resolve_region(const integrate_args& a, const suite::entry& e, int dim, std::vector<double>& lower,
                    std::vector<double>& upper) {
  lower.clear();
  upper.clear();
  const bool region = a.region_opt->count() > 0, lo = a.lower_opt->count() > 0, hi = a.upper_opt->count() > 0;
  if (!region && !lo && !hi) return;
  MCUBES_EXPECTS(!(region && (lo || hi)), "give the region once: --region or --lower/--upper, not both");
  const double big = std::numeric_limits<double>::max();
  std::string option = "--region";
  if (region) {
    std::vector<std::string> pairs;
    std::stringstream s(a.region);
    for (std::string p; std::getline(s, p, ',');) pairs.push_back(p);
    if (!a.region.empty() && a.region.back() == ',') pairs.emplace_back();
    MCUBES_EXPECTS(pairs.size() == 1 || pairs.size() == static_cast<std::size_t>(dim), "--region needs ", dim,
                   dim == 1 ? " pair" : " pairs (one per axis) or one pair for every axis", " LOWER:UPPER, got ",
                   pairs.size(), " in '", a.region, "'");
    for (const std::string& p : pairs) {
      double x = 0, y = 0;
      parse_pair(p, "--region", x, y);
      lower.push_back(x);
      upper.push_back(y);
    }
    if (pairs.size() == 1) {
      lower.assign(static_cast<std::size_t>(dim), lower[0]);
      upper.assign(static_cast<std::size_t>(dim), upper[0]);
    }
  } else {
    MCUBES_EXPECTS(lo && hi, lo ? "--lower needs --upper" : "--upper needs --lower", " (the bounds of every axis)");
    option = "--lower/--upper";
    lower.assign(static_cast<std::size_t>(dim), parse_real(a.lower, "--lower", -big, big));
    upper.assign(static_cast<std::size_t>(dim), parse_real(a.upper, "--upper", -big, big));
  }
  double volume = 1;
  for (int i = 0; i < dim; ++i) {
    const double x = lower[static_cast<std::size_t>(i)], y = upper[static_cast<std::size_t>(i)];
    MCUBES_EXPECTS(x < y, option, ": the lower bound must be below the upper bound",
                   dim > 1 ? " on axis " + std::to_string(i) : std::string(), " (lower = ", x, ", upper = ", y, ")");
    MCUBES_EXPECTS(std::isfinite(y - x), option, ": the width of axis ", i, " overflows (lower = ", x, ", upper = ", y,
                   ")");
    volume *= y - x;
  }
  MCUBES_EXPECTS(std::isfinite(volume) && volume > 0, option, ": the region's volume ", volume,
                 " is not a finite positive number");
  bool own = true;
  for (int i = 0; i < dim; ++i) own = own && lower[static_cast<std::size_t>(i)] == e.lower && upper[static_cast<std::size_t>(i)] == e.upper;
  if (own) lower.clear(), upper.clear();
}

backend_choice choose_user_backend(backend_kind requested) {
  backend_choice c;
  c.requested = requested;
  c.used = backend_kind::cpu;
  c.description = "cpu";
  if (requested == backend_kind::cpu) return c;
  const jit::cuda_device d = jit::query_cuda_device(0);
  if (d.count == 0) {
    if (requested == backend_kind::cuda) throw error("backend cuda requested, but " + d.why + " (use --backend cpu or auto)");
    c.description = "cpu (auto: " + d.why + ")";
    return c;
  }
  const bool nvcc = !jit::find_program("nvcc").empty() || !jit::find_program("/usr/local/cuda/bin/nvcc").empty() ||
                    std::getenv("CUDACXX") != nullptr;
  if (!nvcc && requested == backend_kind::automatic) {
    c.description = "cpu (auto: no nvcc to compile the integrand for the CUDA device)";
    return c;
  }
  c.used = backend_kind::cuda;  // backend cuda without nvcc: the compilation names what to install
  c.description = "cuda (" + d.name + ", " + d.arch() + ")" + (requested == backend_kind::automatic ? " (auto: device found)" : "");
  return c;
}

namespace {
/// Compiles `src` for vegas or vegas_batch on `backend` under `copt` (Ctrl-C cancels it); on a
/// terminal (`progress`) shows "[mcubes] compiling <what> with <compiler> ..." on stderr while the
/// compiler runs and clears the line after.
std::shared_ptr<const jit::compiled_integrand> compile_with_progress(const jit::integrand_source& src, bool batch,
                                                                     const backend_choice& backend,
                                                                     jit::compile_options copt, bool progress,
                                                                     const std::string& what) {
  copt.cancelled = [] { return interrupt_signal() != 0; };
  bool shown = false;
  if (progress)
    copt.on_compile = [&](const std::vector<std::string>& command) {
      std::fprintf(stderr, "\r\033[K[mcubes] compiling %s with %s ...", what.c_str(), command.front().c_str());
      std::fflush(stderr);
      shown = true;
    };
  struct clear_line {
    bool& shown;
    ~clear_line() {
      if (shown) std::fprintf(stderr, "\r\033[K"), std::fflush(stderr);
    }
  } clear{shown};
  return std::make_shared<const jit::compiled_integrand>(
      jit::compile(src, batch ? jit::method::vegas_batch : jit::method::vegas, backend.used, copt, 0));
}
}  // namespace

std::shared_ptr<const jit::compiled_integrand> compile_user_integrand(const integrate_args& a, int dim,
                                                                      std::size_t n_params, bool batch,
                                                                      const backend_choice& backend, bool progress) {
  const bool expr = a.expr_opt->count() > 0;
  const int p = static_cast<int>(n_params);
  jit::integrand_source src = expr ? jit::expression(a.expr, dim, p) : jit::body(a.body, dim, p);
  src.label = expr ? "--expr" : "--body";
  jit::compile_options copt;
  copt.timeout_seconds = parse_real(a.compile_timeout, "--compile-timeout", 1e-3, 86400);
  return compile_with_progress(src, batch, backend, copt, progress, "the integrand");
}

bool suite_compiled_at_run_time(const suite::entry& e, int dim) {
  return e.any_dim && !suite::is_precompiled_dim(dim);
}

std::shared_ptr<const jit::compiled_integrand> compile_suite_integrand(const suite::entry& e, int dim, bool batch,
                                                                       const backend_choice& backend, bool progress) {
  const jit::integrand_source src = jit::suite_integrand(e.name, dim, static_cast<int>(e.parameters.size()));
  return compile_with_progress(src, batch, backend, {}, progress,
                               e.name + " for d = " + std::to_string(dim) + " (once: it is cached)");
}

namespace {
void set_compile_fields(user_integrand_report& u, const jit::compiled_integrand& f) {
  const jit::compile_info& i = f.info();
  u.cache_hit = i.cache_hit;
  u.compile_seconds = i.compile_seconds;
  u.total_seconds = i.total_seconds;
  u.compiler = i.compiler;
  u.compiler_version = i.compiler_version;
  u.object = i.object;
  u.key = i.key;
  u.backend = i.backend;
  u.cuda_arch = i.cuda_arch;
}
}  // namespace

user_integrand_report report_of(const integrate_args& a, const jit::compiled_integrand& f) {
  user_integrand_report u;
  const bool expr = a.expr_opt->count() > 0;
  u.option = expr ? "--expr" : "--body";
  u.kind = expr ? "expression" : "body";
  u.text = expr ? a.expr : a.body;
  set_compile_fields(u, f);
  return u;
}

user_integrand_report report_of(const suite::entry& e, const jit::compiled_integrand& f) {
  user_integrand_report u;
  u.kind = "suite";
  u.text = e.name;
  set_compile_fields(u, f);
  return u;
}

nlohmann::ordered_json user_integrand_json(const user_integrand_report& u) {
  nlohmann::ordered_json j;
  j["source"] = {{"kind", u.kind}, {"text", u.text}};
  j["compile"] = {{"backend", u.backend},
                  {"cache_hit", u.cache_hit},
                  {"compile_seconds", json_number(u.compile_seconds)},
                  {"total_seconds", json_number(u.total_seconds)},
                  {"compiler", u.compiler},
                  {"compiler_version", u.compiler_version},
                  {"cuda_arch", u.cuda_arch},
                  {"object", u.object},
                  {"key", u.key}};
  return j;
}

void print_compile_line(std::FILE* out, const user_integrand_report& u) {
  if (u.cache_hit)
    std::fprintf(out, "compiled: cache hit, %.3f s (%s, %s)\n", u.total_seconds, u.compiler_version.c_str(),
                 u.object.c_str());
  else
    std::fprintf(out, "compiled: %.2f s by %s (%s%s%s), cached as %s\n", u.compile_seconds, u.compiler.c_str(),
                 u.compiler_version.c_str(), u.cuda_arch.empty() ? "" : ", ", u.cuda_arch.c_str(), u.object.c_str());
}

result run_user_integrand(const run_request& rq) {
  MCUBES_EXPECTS(rq.compiled != nullptr, "no compiled integrand to run");
  jit::box region = rq.lower.empty() ? jit::box::cube(rq.dim, rq.entry->lower, rq.entry->upper) : jit::box{rq.lower, rq.upper};
  const std::vector<double> params = rq.params.empty() ? rq.entry->default_values() : rq.params;
  result r = rq.compiled->vegas(region, rq.options, rq.on_iteration, params, rq.trained, rq.resume);
  r.options.backend = rq.backend.requested;
  return r;
}

std::vector<result> run_user_scan(const scan_request& rq) {
  MCUBES_EXPECTS(rq.compiled != nullptr, "no compiled integrand to run");
  jit::box region = rq.lower.empty() ? jit::box::cube(rq.dim, rq.entry->lower, rq.entry->upper) : jit::box{rq.lower, rq.upper};
  std::vector<result> rs = rq.compiled->vegas_batch(region, *rq.points, rq.options, rq.on_round, rq.failures, rq.resume);
  for (result& r : rs) r.options.backend = rq.backend.requested;
  return rs;
}

}  // namespace mcubes::cli

/// @file cli/user_integrand.cpp
/// Integrands given as text on the command line, and the region options (user_integrand.hpp).
#include "user_integrand.hpp"

#include <cmath>
#include <cstdio>
#include <cstdlib>
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

const suite::entry& user_entry(const integrate_args& a) {
  MCUBES_EXPECTS(!(a.expr_opt->count() > 0 && a.body_opt->count() > 0),
                 "give the integrand once: --expr EXPR or --body BODY, not both");
  MCUBES_EXPECTS(a.name.empty(), "give the integrand once: a suite NAME ('", a.name,
                 "') or --expr/--body, not both");
  static suite::entry e;
  const bool expr = a.expr_opt->count() > 0;
  e.name = expr ? "expr" : "body";
  e.description = expr ? a.expr : a.body;
  e.default_dim = 1;
  e.any_dim = true;
  e.lower = 0;
  e.upper = 1;
  const vegas_options defaults;
  e.paper = suite::run_settings{defaults.calls_per_iteration, defaults.max_iterations, defaults.adapt_iterations,
                                defaults.skip};
  e.exact = nullptr;
  e.max_dim = jit::max_dim;
  return e;
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

std::shared_ptr<const jit::compiled_integrand> compile_user_integrand(const integrate_args& a, int dim,
                                                                      const backend_choice& backend, bool progress) {
  const bool expr = a.expr_opt->count() > 0;
  jit::integrand_source src = expr ? jit::expression(a.expr, dim) : jit::body(a.body, dim);
  src.label = expr ? "--expr" : "--body";
  jit::compile_options copt;
  copt.timeout_seconds = parse_real(a.compile_timeout, "--compile-timeout", 1e-3, 86400);
  copt.cancelled = [] { return interrupt_signal() != 0; };
  bool shown = false;
  if (progress)
    copt.on_compile = [&](const std::vector<std::string>& command) {
      std::fprintf(stderr, "\r\033[K[mcubes] compiling the integrand with %s ...", command.front().c_str());
      std::fflush(stderr);
      shown = true;
    };
  struct clear_line {
    bool& shown;
    ~clear_line() {
      if (shown) std::fprintf(stderr, "\r\033[K"), std::fflush(stderr);
    }
  } clear{shown};
  return std::make_shared<const jit::compiled_integrand>(jit::compile(src, jit::method::vegas, backend.used, copt, 0));
}

user_integrand_report report_of(const integrate_args& a, const jit::compiled_integrand& f) {
  user_integrand_report u;
  const bool expr = a.expr_opt->count() > 0;
  u.option = expr ? "--expr" : "--body";
  u.kind = expr ? "expression" : "body";
  u.text = expr ? a.expr : a.body;
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
  return u;
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
  jit::box region = rq.lower.empty() ? jit::box::unit(rq.dim) : jit::box{rq.lower, rq.upper};
  result r = rq.compiled->vegas(region, rq.options, rq.on_iteration);
  r.options.backend = rq.backend.requested;
  return r;
}

}  // namespace mcubes::cli

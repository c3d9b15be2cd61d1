/// @file cli/list_command.cpp
/// `mcubes list` (see list_command.hpp).
#include "list_command.hpp"

#include <algorithm>
#include <cstdio>
#include <string>
#include <vector>

#include <mcubes/suite.hpp>

namespace mcubes::cli {

namespace {

std::string format(const char* fmt, double x) {
  char buf[64];
  std::snprintf(buf, sizeof buf, fmt, x);
  return buf;
}

/// One row of the table, as text.
std::vector<std::string> row_of(const suite::entry& e) {
  const std::string dim = std::to_string(e.default_dim) + (e.any_dim ? " (any)" : " (fixed)");
  const std::string region = "[" + format("%.17g", e.lower) + ", " + format("%.17g", e.upper) + "]^d";
  const std::string paper = "calls " + format("%.3g", static_cast<double>(e.paper.calls)) + ", itmax " +
                            std::to_string(e.paper.max_iterations) + ", ita " +
                            std::to_string(e.paper.adapt_iterations) + ", skip " + std::to_string(e.paper.skip);
  const std::string params = e.parameters.empty() ? "-" : suite::params_text(e, e.default_values());
  return {e.name, dim, region, format("%.17g", e.exact(e.default_dim)), paper, params, e.description};
}

int run_list() {
  std::vector<std::vector<std::string>> rows = {
      {"name", "dim", "region", "exact (default dim)", "paper settings", "parameters", "description"}};
  for (const suite::entry& e : suite::entries()) rows.push_back(row_of(e));
  std::vector<std::size_t> width(rows[0].size(), 0);
  for (const auto& r : rows)
    for (std::size_t c = 0; c < r.size(); ++c) width[c] = std::max(width[c], r[c].size());
  for (const auto& r : rows) {
    std::string line;
    for (std::size_t c = 0; c < r.size(); ++c) {
      line += r[c];
      if (c + 1 < r.size()) line += std::string(width[c] - r[c].size() + 2, ' ');
    }
    std::printf("%s\n", line.c_str());
  }
  std::printf("dim: default dimension; 'any' integrands take --dim 1..32, 'fixed' ones only their own.\n");
  std::printf("paper settings: the defaults of 'mcubes integrate' (calls per iteration, max iterations, adapting "
              "iterations, skipped iterations).\n");
  std::printf("parameters: the paper's values, the defaults of 'mcubes integrate NAME --param a=VALUE --param "
              "u=VALUE' (the exact value follows them):\n");
  for (const suite::entry& e : suite::entries()) {
    if (e.parameters.empty()) continue;
    std::string roles;
    for (const suite::parameter& p : e.parameters)
      roles += std::string(roles.empty() ? "" : "; ") + p.name + ": " + p.role;
    std::printf("  %s  %s: %s\n", e.name.c_str(), e.formula.c_str(), roles.c_str());
  }
  return 0;
}

}  // namespace

std::function<int()> add_list_command(CLI::App& app) {
  app.add_subcommand("list", "List the test integrands of the suite with their exact values and paper settings");
  return [] { return run_list(); };
}

}  // namespace mcubes::cli

/// @file cli/integrand_dispatch.cpp
/// The table from suite integrand names to their runners (cli/dispatch_<name>.cpp).
#include "integrand_dispatch.hpp"

namespace mcubes::cli {

runner find_runner(const std::string& name) {
  static const struct {
    const char* name;
    runner run;
  } table[] = {{"f1", &run_f1}, {"f2", &run_f2}, {"f3", &run_f3}, {"f4", &run_f4},
               {"f5", &run_f5}, {"f6", &run_f6}, {"fA", &run_fA}, {"fB", &run_fB}};
  for (const auto& t : table)
    if (name == t.name) return t.run;
  return nullptr;
}

}  // namespace mcubes::cli

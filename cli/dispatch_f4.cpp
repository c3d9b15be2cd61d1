/// @file cli/dispatch_f4.cpp
/// Runner of the Gaussian integrand f4 for d = 1..max_cli_dim (its own translation unit: see
/// integrand_dispatch.hpp for why the dispatch is split).
#include "integrand_dispatch.hpp"

namespace mcubes::cli {
result run_f4(const run_request& rq) { return run_any_dim<suite::f4_gaussian>(rq); }
}  // namespace mcubes::cli

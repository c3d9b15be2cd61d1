/// @file cli/dispatch_f3.cpp
/// Runner of the corner-peak integrand f3 for d = 1..max_cli_dim (its own translation unit: see
/// integrand_dispatch.hpp for why the dispatch is split).
#include "integrand_dispatch.hpp"

namespace mcubes::cli {
result run_f3(const run_request& rq) { return run_any_dim<suite::f3_corner_peak>(rq); }
}  // namespace mcubes::cli

/// @file cli/dispatch_f6.cpp
/// Runner of the discontinuous integrand f6 for d = 1..max_cli_dim (its own translation unit: see
/// integrand_dispatch.hpp for why the dispatch is split).
#include "integrand_dispatch.hpp"

namespace mcubes::cli {
result run_f6(const run_request& rq) { return run_any_dim<suite::f6_discontinuous>(rq); }
}  // namespace mcubes::cli

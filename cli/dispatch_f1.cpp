/// @file cli/dispatch_f1.cpp
/// Runner of the oscillatory integrand f1 for d = 1..max_cli_dim (its own translation unit: see
/// integrand_dispatch.hpp for why the dispatch is split).
#include "integrand_dispatch.hpp"

namespace mcubes::cli {
result run_f1(const run_request& rq) { return run_any_dim<suite::f1_oscillatory>(rq); }
}  // namespace mcubes::cli

/// @file cli/dispatch_f5.cpp
/// Runner of the C0 integrand f5 for d = 1..max_cli_dim (its own translation unit: see
/// integrand_dispatch.hpp for why the dispatch is split).
#include "integrand_dispatch.hpp"

namespace mcubes::cli {
result run_f5(const run_request& rq) { return run_any_dim<suite::f5_c0>(rq); }
}  // namespace mcubes::cli

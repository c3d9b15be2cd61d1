/// @file cli/dispatch_f2.cpp
/// Runner of the product-peak integrand f2 for d = 1..max_cli_dim (its own translation unit: see
/// integrand_dispatch.hpp for why the dispatch is split).
#include "integrand_dispatch.hpp"

namespace mcubes::cli {
result run_f2(const run_request& rq) { return run_any_dim<suite::f2_product_peak>(rq); }
}  // namespace mcubes::cli

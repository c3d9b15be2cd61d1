/// @file cli/dispatch_fixed.cpp
/// Runners of the fixed-dimension integrands fA (d = 6) and fB (d = 9).
#include "integrand_dispatch.hpp"

namespace mcubes::cli {
result run_fA(const run_request& rq) { return run_fixed_dim<suite::fA_sin_sum, 6>(rq); }
result run_fB(const run_request& rq) { return run_fixed_dim<suite::fB_narrow_gaussian, 9>(rq); }
}  // namespace mcubes::cli

/// @file cli/dispatch_fB.cpp
/// The runner of fB on the CPU, every dimension of the integrand (its own translation unit:
/// dispatch_impl.hpp says why).
#include "dispatch_impl.hpp"

template mcubes::result mcubes::cli::run_integrand<mcubes::suite::fB_desc>(const run_request&);

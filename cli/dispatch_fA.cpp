/// @file cli/dispatch_fA.cpp
/// The runner of fA on the CPU, every dimension of the integrand (its own translation unit:
/// dispatch_impl.hpp says why).
#include "dispatch_impl.hpp"

template mcubes::result mcubes::cli::run_integrand<mcubes::suite::fA_desc>(const run_request&);

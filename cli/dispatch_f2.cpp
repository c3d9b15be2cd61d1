/// @file cli/dispatch_f2.cpp
/// The runner of f2 on the CPU, every dimension of the integrand (its own translation unit:
/// dispatch_impl.hpp says why).
#include "dispatch_impl.hpp"

template mcubes::result mcubes::cli::run_integrand<mcubes::suite::f2_desc>(const run_request&);

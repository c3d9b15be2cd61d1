/// @file cli/dispatch_f3.cpp
/// The runner of f3 on the CPU, every dimension of the integrand (its own translation unit:
/// dispatch_impl.hpp says why).
#include "dispatch_impl.hpp"

template mcubes::result mcubes::cli::run_integrand<mcubes::suite::f3_desc>(const run_request&);

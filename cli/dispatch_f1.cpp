/// @file cli/dispatch_f1.cpp
/// The runner of f1 on the CPU, every dimension of the integrand (its own translation unit:
/// dispatch_impl.hpp says why).
#include "dispatch_impl.hpp"

template mcubes::result mcubes::cli::run_integrand<mcubes::suite::f1_desc>(const run_request&);

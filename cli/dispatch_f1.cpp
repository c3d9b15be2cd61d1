/// @file cli/dispatch_f1.cpp
/// The CPU runners of f1, integrate and scan, every precompiled dimension of the integrand: one
/// translation unit per integrand (dispatch_impl.hpp says why), the two in one unit because they
/// share the sampling loop of the same functor (with_parameters) and the run's machinery, which g++
/// then compiles once.
#include "dispatch_impl.hpp"
#include "scan_impl.hpp"

template mcubes::result mcubes::cli::run_integrand<mcubes::suite::f1_desc>(const run_request&);
template std::vector<mcubes::result> mcubes::cli::scan_integrand<mcubes::suite::f1_desc>(const scan_request&);

/// @file cli/scan_f1.cpp
/// The scan runner of f1 on the CPU, every dimension of the integrand (its own translation unit:
/// scan_impl.hpp says why).
#include "scan_impl.hpp"

template std::vector<mcubes::result> mcubes::cli::scan_integrand<mcubes::suite::f1_desc>(const scan_request&);

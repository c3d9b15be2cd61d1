/// @file cli/scan_f5.cpp
/// The scan runner of f5 on the CPU, every dimension of the integrand (its own translation unit:
/// scan_impl.hpp says why).
#include "scan_impl.hpp"

template std::vector<mcubes::result> mcubes::cli::scan_integrand<mcubes::suite::f5_desc>(const scan_request&);

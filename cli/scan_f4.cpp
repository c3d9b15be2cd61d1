/// @file cli/scan_f4.cpp
/// The scan runner of f4 on the CPU, every dimension of the integrand (its own translation unit:
/// scan_impl.hpp says why).
#include "scan_impl.hpp"

template std::vector<mcubes::result> mcubes::cli::scan_integrand<mcubes::suite::f4_desc>(const scan_request&);

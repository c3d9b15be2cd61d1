#pragma once
/// @file tables.hpp
/// Tables and interpolators for integrands that run on the CPU and the GPU from one source:
/// interp1d (linear, natural cubic spline), interp2d (bilinear, bicubic), interpnd<N> (multilinear,
/// N <= 6), each an owning object with a trivially copyable view that the integrand holds
/// (tables/table_storage.hpp: ownership, device copy, out-of-range policies, thread safety), and
/// the readers of table files (tables/table_file.hpp: text columns, NumPy .npy).

#include "tables/interp1d.hpp"
#include "tables/interp2d.hpp"
#include "tables/interpnd.hpp"
#include "tables/table_file.hpp"
#include "tables/table_storage.hpp"

#pragma once
/// @file mcubes.hpp
/// Umbrella header of mcubes: every method (m-Cubes Vegas and its integrator object, plain Monte
/// Carlo, the midpoint rule, Monte Carlo pi) on CPU threads, and on CUDA GPUs in translation units
/// compiled by nvcc (there, include <mcubes/cuda.cuh>, which also gives the device containers).
/// Compiles with a plain C++17 compiler (no CUDA headers).
///
///   struct f { double operator()(const mcubes::point<3>& x) const { return x[0]*x[1]*x[2]; } };
///   auto r = mcubes::vegas(f{}, mcubes::region<3>::unit(), opts);   // r.estimate +- r.error
///
/// The layers, bottom up: core/ (the maths every backend shares: stratification, the adaptive map,
/// the sampler, the fixed pairwise tree, the random streams) <- backend/ (who computes which chunk:
/// backend.hpp, cpu.hpp, cuda.cuh) <- algorithm/ (each method written once over the backend
/// operations) <- methods.hpp (one-call entries and the integrator, choosing the backend).

#include "algorithm/midpoint.hpp"
#include "algorithm/pi.hpp"
#include "algorithm/plain_mc.hpp"
#include "algorithm/vegas.hpp"
#include "algorithm/vegas_batch.hpp"
#include "algorithm/vegas_vector.hpp"
#include "backend/cpu.hpp"
#include "config.hpp"
#include "error.hpp"
#include "execution.hpp"
#include "methods.hpp"
#include "options.hpp"
#include "plan.hpp"
#include "point.hpp"
#include "region.hpp"
#include "result.hpp"
#include "result_io.hpp"
#include "values.hpp"

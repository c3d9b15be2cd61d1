#pragma once
/// @file mcubes.hpp
/// Umbrella header of mcubes: m-Cubes (Vegas) multi-dimensional integration on CPU threads and
/// GPUs. Compiles with a plain C++17 compiler (no CUDA headers).
///
///   struct f { double operator()(const mcubes::point<3>& x) const { return x[0]*x[1]*x[2]; } };
///   auto r = mcubes::vegas(f{}, mcubes::region<3>::unit(), opts);   // r.estimate +- r.error

#include "algorithm/vegas.hpp"
#include "backend/cpu.hpp"
#include "config.hpp"
#include "error.hpp"
#include "options.hpp"
#include "plan.hpp"
#include "point.hpp"
#include "region.hpp"
#include "result.hpp"

namespace mcubes {

/// Integrates f over `reg` with m-Cubes (see vegas_with for the algorithm, determinism and
/// exceptions) on the backend named in opt.backend. `automatic` runs on the CPU here; the CUDA
/// backend is reached through mcubes/cuda.cuh in a translation unit compiled by nvcc.
/// `on_iteration`, if given, is called after every iteration and may stop the run (result.hpp).
/// @throws invalid_input if opt.backend is cuda (this entry point has no CUDA backend).
template <int D, class F>
result vegas(const F& f, const region<D>& reg, const vegas_options& opt = {}, const iteration_callback& on_iteration = {}) {
  MCUBES_EXPECTS(opt.backend != backend_kind::cuda,
                 "backend cuda requested, but this program was built without the CUDA backend (use mcubes/cuda.cuh)");
  validate(opt, D);
  return vegas_with<D>(f, reg, opt, cpu_backend(opt.threads), on_iteration);
}

}  // namespace mcubes

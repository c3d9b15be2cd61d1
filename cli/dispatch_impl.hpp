#pragma once
/// @file cli/dispatch_impl.hpp
/// The definition of run_integrand<Desc> (integrand_dispatch.hpp): every dimension of the
/// integrand (suite::visit_dimension) runs mcubes::vegas_with over its region on the chosen backend
/// (run_backend.hpp). Each (integrand, D) pair is a separate instantiation of the whole sampling
/// loop (about 0.65 s of g++ -O3 each); included only by the one-line files cli/dispatch_<name>.cpp.

#include <mcubes/suite.hpp>

#include "integrand_dispatch.hpp"

namespace mcubes::cli {

template <class Desc>
result run_integrand(const run_request& rq) {
  return suite::visit_dimension<Desc, result>(rq.dim, [&](auto dim) {
    constexpr int D = decltype(dim)::value;
    return run_on_backend<D>(typename Desc::functor{}, region<D>::cube(Desc::lower, Desc::upper), rq.options, rq.backend,
                             rq.on_iteration);
  });
}

}  // namespace mcubes::cli

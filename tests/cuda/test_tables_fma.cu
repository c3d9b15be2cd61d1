// Tables on the GPU with the default --fmad=true (fused multiply-adds in device code, none on the
// host): device lookups agree with the host's to 1e-13 of max(|value|, the tables' scale 1), the
// tolerance documented in tables/interp1d.hpp. Skipped without a device.
#include "table_probe.cuh"

namespace {
constexpr double fma_rel_tol = 1e-13;
}

TEST(TablesCudaFma, DeviceLookupsAgreeWithTheHostsToTheDocumentedTolerance) {
  MCUBES_REQUIRE_DEVICE();
  table_probe::compare_device_with_host(fma_rel_tol);
}

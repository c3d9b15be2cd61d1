// GPU callables of the Python module for D = 1 .. 4 (device_dims_impl.cuh).
#include "device_dims_impl.cuh"

namespace mcubes::python {
void register_device_dims_a(device_vegas_entry* table, device_integrator_factory* integrators) {
  register_device_dim<1>(table, integrators);
  register_device_dim<2>(table, integrators);
  register_device_dim<3>(table, integrators);
  register_device_dim<4>(table, integrators);
}
}  // namespace mcubes::python

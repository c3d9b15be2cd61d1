// GPU callables of the Python module for D = 9 .. 12 (device_dims_impl.cuh).
#include "device_dims_impl.cuh"

namespace mcubes::python {
void register_device_dims_c(device_vegas_entry* table, device_integrator_factory* integrators) {
  register_device_dim<9>(table, integrators);
  register_device_dim<10>(table, integrators);
  register_device_dim<11>(table, integrators);
  register_device_dim<12>(table, integrators);
}
}  // namespace mcubes::python

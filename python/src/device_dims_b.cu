// GPU callables of the Python module for D = 5 .. 8 (device_dims_impl.cuh).
#include "device_dims_impl.cuh"

namespace mcubes::python {
void register_device_dims_b(device_vegas_entry* table, device_integrator_factory* integrators) {
  register_device_dim<5>(table, integrators);
  register_device_dim<6>(table, integrators);
  register_device_dim<7>(table, integrators);
  register_device_dim<8>(table, integrators);
}
}  // namespace mcubes::python

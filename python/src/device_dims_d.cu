// GPU callables of the Python module for D = 13 .. 16 (device_dims_impl.cuh).
#include "device_dims_impl.cuh"

namespace mcubes::python {
void register_device_dims_d(device_vegas_entry* table, device_integrator_factory* integrators) {
  register_device_dim<13>(table, integrators);
  register_device_dim<14>(table, integrators);
  register_device_dim<15>(table, integrators);
  register_device_dim<16>(table, integrators);
}
}  // namespace mcubes::python

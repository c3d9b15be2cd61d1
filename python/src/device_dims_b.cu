// GPU callables of the Python module for D = 5 .. 8 (device_dims_impl.cuh).
#include "device_dims_impl.cuh"

namespace mcubes::python {
void register_device_dims_b(device_vegas_entry* table) {
  register_device_dim<5>(table);
  register_device_dim<6>(table);
  register_device_dim<7>(table);
  register_device_dim<8>(table);
}
}  // namespace mcubes::python

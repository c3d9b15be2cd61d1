// GPU callables of the Python module for D = 9 .. 12 (device_dims_impl.cuh).
#include "device_dims_impl.cuh"

namespace mcubes::python {
void register_device_dims_c(device_vegas_entry* table) {
  register_device_dim<9>(table);
  register_device_dim<10>(table);
  register_device_dim<11>(table);
  register_device_dim<12>(table);
}
}  // namespace mcubes::python

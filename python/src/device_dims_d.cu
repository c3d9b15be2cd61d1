// GPU callables of the Python module for D = 13 .. 16 (device_dims_impl.cuh).
#include "device_dims_impl.cuh"

namespace mcubes::python {
void register_device_dims_d(device_vegas_entry* table) {
  register_device_dim<13>(table);
  register_device_dim<14>(table);
  register_device_dim<15>(table);
  register_device_dim<16>(table);
}
}  // namespace mcubes::python

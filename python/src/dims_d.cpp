// The Python module's entries for D = 13, 14, 15, 16 (dims_impl.hpp).
#include "dims_impl.hpp"

namespace mcubes::python {
void register_dims_d(dim_entry* table) {
  register_dim<13>(table);
  register_dim<14>(table);
  register_dim<15>(table);
  register_dim<16>(table);
}
}  // namespace mcubes::python

// The Python module's entries for D = 5, 6, 7, 8 (dims_impl.hpp).
#include "dims_impl.hpp"

namespace mcubes::python {
void register_dims_b(dim_entry* table) {
  register_dim<5>(table);
  register_dim<6>(table);
  register_dim<7>(table);
  register_dim<8>(table);
}
}  // namespace mcubes::python

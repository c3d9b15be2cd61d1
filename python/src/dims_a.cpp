// The Python module's entries for D = 1, 2, 3, 4 (dims_impl.hpp).
#include "dims_impl.hpp"

namespace mcubes::python {
void register_dims_a(dim_entry* table) {
  register_dim<1>(table);
  register_dim<2>(table);
  register_dim<3>(table);
  register_dim<4>(table);
}
}  // namespace mcubes::python

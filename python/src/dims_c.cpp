// The Python module's entries for D = 9, 10, 11, 12 (dims_impl.hpp).
#include "dims_impl.hpp"

namespace mcubes::python {
void register_dims_c(dim_entry* table) {
  register_dim<9>(table);
  register_dim<10>(table);
  register_dim<11>(table);
  register_dim<12>(table);
}
}  // namespace mcubes::python

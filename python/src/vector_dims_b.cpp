// Vector-valued Python callables for D = 5 .. 8 (vector_dims_impl.hpp).
#include "vector_dims_impl.hpp"

namespace mcubes::python {
void register_vector_dims_b(vector_entry (*table)[max_components + 1]) {
  register_vector_dim<5>(table);
  register_vector_dim<6>(table);
  register_vector_dim<7>(table);
  register_vector_dim<8>(table);
}
}  // namespace mcubes::python

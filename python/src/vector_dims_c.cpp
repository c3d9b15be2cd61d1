// Vector-valued Python callables for D = 9 .. 12 (vector_dims_impl.hpp).
#include "vector_dims_impl.hpp"

namespace mcubes::python {
void register_vector_dims_c(vector_entry (*table)[max_components + 1]) {
  register_vector_dim<9>(table);
  register_vector_dim<10>(table);
  register_vector_dim<11>(table);
  register_vector_dim<12>(table);
}
}  // namespace mcubes::python

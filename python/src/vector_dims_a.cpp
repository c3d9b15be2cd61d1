// Vector-valued Python callables for D = 1 .. 4 (vector_dims_impl.hpp).
#include "vector_dims_impl.hpp"

namespace mcubes::python {
void register_vector_dims_a(vector_entry (*table)[max_components + 1]) {
  register_vector_dim<1>(table);
  register_vector_dim<2>(table);
  register_vector_dim<3>(table);
  register_vector_dim<4>(table);
}
}  // namespace mcubes::python

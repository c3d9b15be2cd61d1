// Vector-valued Python callables for D = 13 .. 16 (vector_dims_impl.hpp).
#include "vector_dims_impl.hpp"

namespace mcubes::python {
void register_vector_dims_d(vector_entry (*table)[max_components + 1]) {
  register_vector_dim<13>(table);
  register_vector_dim<14>(table);
  register_vector_dim<15>(table);
  register_vector_dim<16>(table);
}
}  // namespace mcubes::python

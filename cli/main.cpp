#include <mcubes/mcubes.hpp>
int main() { return 0; }

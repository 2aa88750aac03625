// A planted breach for layering_check_catches_breach (tests/CMakeLists.txt): the
// check must name this include. Never compiled.
#include "client-cpp/src/client_impl.h"

// Helpers shared by tests: free loopback ports, the provider under test, temp paths.
// Tests only.
#pragma once

#include <string>

namespace rpmp::testing {

// A TCP port on 127.0.0.1 that was free a moment ago, outside the ephemeral range (so
// no outgoing connection takes it before its user binds it); never the same twice in
// one process.
int FreePort();
// RPMP_TEST_PROVIDER or "auto", the product default (which $RPMP_PROVIDER overrides:
// the *_over_rxm tests set it, tests/CMakeLists.txt).
std::string Provider();
// A fresh path under /dev/shm unique to this process and call: "/dev/shm/rpmp-test-<pid>-<n>-<tag>".
std::string TempPath(const std::string& tag);

}  // namespace rpmp::testing

// Helpers shared by the transport's Catch tests (fabric_test.cc, sibling_domain_test.cc):
// waiting for one operation's completion with a deadline, and the native TCP provider's
// name on this libfabric. Tests only.
#pragma once

#include <catch2/catch.hpp>

#include <chrono>
#include <string>

#include "transport/fabric.h"

namespace rpmp::testing {

// Polls both fabrics until `ctx` completes or 10 s pass; returns its completion.
inline Completion AwaitOne(Fabric& a, Fabric& b, OpContext* ctx) {
  auto until = std::chrono::steady_clock::now() + std::chrono::seconds(10);
  Completion c[8];
  while (std::chrono::steady_clock::now() < until) {
    for (Fabric* f : {&a, &b}) {
      int n = f->Poll(c, 8);
      for (int i = 0; i < n; i++)
        if (c[i].ctx == ctx) return c[i];
    }
  }
  FAIL("operation did not complete within 10 s");
  return {};
}

// The native TCP reliable-datagram provider under the name this libfabric gives it:
// "net" in 1.17, "tcp" from 1.18; "" when neither opens natively.
inline std::string NativeTcpProvider() {
  for (const char* name : {"tcp", "net"}) {
    FabricOptions o;
    o.provider = name;
    o.node = "127.0.0.1";
    if (Fabric::Open(o).ok()) return name;
  }
  return "";
}

}  // namespace rpmp::testing

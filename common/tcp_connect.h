// ConnectTcp: one non-blocking TCP connection attempt to host:port, bounded in time.
// The shared first step of the quick probes that look at a peer's TCP port without the
// protocol stack on it: transport/peer_probe.h (does anything listen?) and
// proto/tls_probe.h (does it answer TLS?). Thread-safe; blocks at most `wait`.
#pragma once

#include <chrono>
#include <string>

namespace rpmp {

struct TcpConnectResult {
  int fd = -1;           // >= 0: connected (non-blocking, close-on-exec); the caller closes it
  bool refused = false;  // the attempt was actively refused: nothing listens there
};

// fd < 0 and !refused: the address did not resolve, or no answer came within `wait`.
TcpConnectResult ConnectTcp(const std::string& host, const std::string& port,
                            std::chrono::milliseconds wait);

}  // namespace rpmp

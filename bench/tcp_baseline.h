// The machine's own limit for a benchmark line: a plain loopback TCP stream carrying
// the same message size, measured in the same run. Used by rpmp-bench and
// rpmp-tcp-pingpong.
#pragma once

#include <chrono>
#include <cstddef>
#include <utility>

namespace rpmp::bench {

// A connected pair of loopback TCP sockets (client side, server side), TCP_NODELAY on
// both, or {-1, -1} when the socket calls fail.
std::pair<int, int> LoopbackTcpPair();

// MB/s (10^6 bytes) of one TCP stream over 127.0.0.1 writing `msg_size`-byte writes
// for `duration`; 0 when the socket calls fail.
double LoopbackTcpMBps(size_t msg_size, std::chrono::milliseconds duration);

}  // namespace rpmp::bench

// Parsing helpers for human-written configuration: sizes ("64m", "1G", "4096"),
// durations ("500ms", "3s", "1m"), and "host:port" endpoints. Used by the daemons'
// flag and config-file readers and by the CLI. Thread-safe, pure functions.
#pragma once

#include <chrono>
#include <cstdint>
#include <string>

#include "common/status.h"

namespace rpmp {

// "4096", "4k", "64m", "1G", "2t" (binary multiples, case-insensitive, optional "b"/"ib").
StatusOr<uint64_t> ParseSize(const std::string& s);
// "250ms", "3s", "2m", "1h", or a plain number of seconds.
StatusOr<std::chrono::milliseconds> ParseDuration(const std::string& s);

struct HostPort {
  std::string host;
  std::string port;
  std::string ToString() const { return host + ":" + port; }
};
// "127.0.0.1:7000", "[::1]:7000", "node3:7000". InvalidArgument when malformed.
StatusOr<HostPort> ParseHostPort(const std::string& s);
// As ParseHostPort, but PORT may also be 0 (an address to listen on: any free port).
StatusOr<HostPort> ParseListenAddress(const std::string& s);

// True for 127.0.0.0/8, ::1 and "localhost".
bool IsLoopbackHost(const std::string& host);

// A node id as every RPMP tool and log prints it: 16 lowercase hex digits.
std::string NodeIdHex(uint64_t id);

// "1.5 GiB", "512 KiB", "17 B".
std::string HumanBytes(uint64_t n);

}  // namespace rpmp

// ServerConfig: everything an rpmp-server needs to start, from a YAML file and/or
// command-line flags (flags win). Validation happens here, once, with messages a
// person can act on. Used by server/main.cc and tests; not thread-safe (load once).
#pragma once

#include <chrono>
#include <cstdint>
#include <string>
#include <vector>

#include "common/status.h"

namespace rpmp {

struct PoolConfig {
  std::string path;
  uint64_t size = 0;  // bytes; used when the pool is created
};

struct ServerConfig {
  std::string listen = "127.0.0.1:7300";   // HOST:PORT of the data plane
  std::string provider = "tcp;ofi_rxm";
  std::vector<PoolConfig> pools;
  uint64_t segment_size = 64ull << 20;
  uint32_t recv_slots = 256;               // requests the server holds at once
  uint32_t max_inflight_per_client = 64;
  uint32_t commit_threads = 1;             // persist + commit off the progress thread
  std::chrono::milliseconds drain_timeout{10000};
  std::vector<std::string> proxies;        // HOST:PORT of rpmp-proxy (cluster mode)
  // Cluster mode: how long a write may wait for its replicas (docs/cluster.md).
  std::chrono::milliseconds replication_timeout{10000};
  // Security (docs/security.md). Without a secret the server runs in protected mode:
  // it refuses to listen on a non-loopback address unless `insecure` is set.
  std::string auth_secret_file;            // the cluster secret; empty = none
  bool insecure = false;                   // --insecure: serve any address without a secret
  uint32_t max_sessions_per_address = 64;
  std::chrono::milliseconds session_idle_timeout{3600 * 1000};
  // HOST:PORT of the Prometheus /metrics endpoint; empty = metrics off (the default).
  std::string metrics_listen;
};

// True for 127.0.0.0/8, ::1 and "localhost".
bool IsLoopbackHost(const std::string& host);

// Parses argv (flags: --listen, --provider, --pool PATH:SIZE (repeatable),
// --segment-size, --config FILE, --proxy LIST, --auth-secret-file FILE, --insecure,
// --metrics-listen, --help). A --config file is read
// first, then the other flags override it. Returns FailedPrecondition with the
// usage text for --help.
StatusOr<ServerConfig> LoadServerConfig(int argc, char** argv);
// Reads a YAML config file into *c (keys as in deploy/rpmp-server.yaml).
Status LoadServerConfigFile(const std::string& path, ServerConfig* c);
Status ValidateServerConfig(const ServerConfig& c);
const char* ServerUsage();

}  // namespace rpmp

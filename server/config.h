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
  bool capacity_tier = false;  // --capacity-pool / `tier: capacity`: used when fast pools are full
};

struct ServerConfig {
  std::string listen = "127.0.0.1:7300";   // HOST:PORT of the data plane
  std::string provider = "auto";           // verbs;ofi_rxm on RDMA hosts, else the native TCP provider (providers.cc)
  std::vector<PoolConfig> pools;
  uint64_t segment_size = 64ull << 20;
  uint32_t recv_slots = 256;               // requests the server holds at once
  uint32_t max_inflight_per_client = 64;
  uint32_t commit_threads = 1;             // persist + commit off the progress thread
  // Data shards: endpoints with a progress thread each (docs/sharding.md). 0: as the
  // machine allows, clamp(cores / 2, 1, 16) ($RPMP_DATA_THREADS, when set, instead);
  // 1: one endpoint on `listen`, as before.
  // recv_slots is per shard.
  uint32_t data_threads = 0;
  // The progress thread polls the completion queue without sleeping (lowest latency,
  // one core kept busy). Off: it sleeps in poll(2) until traffic arrives.
  bool busy_poll = false;
  // Touch every page of the pools at start (slower start, by about a second per GiB on
  // tmpfs): no request pays a first-touch page fault, as on a server whose pools have
  // been written through once (docs/operations.md).
  bool prefault = false;
  std::chrono::milliseconds drain_timeout{10000};
  std::vector<std::string> proxies;        // HOST:PORT of rpmp-proxy (cluster mode)
  // Cluster mode: how long a write may wait for its replicas (docs/cluster.md).
  std::chrono::milliseconds replication_timeout{10000};
  // Security (docs/security.md). Without a secret the server runs in protected mode:
  // it refuses to listen on a non-loopback address unless `insecure` is set.
  std::string auth_secret_file;            // the cluster secret; empty = none
  bool insecure = false;                   // --insecure: serve any address without a secret
  // Mutual TLS to rpmp-proxy (cluster mode): this node's certificate (OU=rpmp-node;
  // the proxy binds the node id to it) and the CA of the proxies' certificates.
  // Empty = $RPMP_TLS_DIR if set, else plaintext (proto/proxy_credentials.h).
  std::string tls_ca_file, tls_cert_file, tls_key_file;
  uint32_t max_sessions_per_address = 64;
  // All sessions at once: each holds a provider connection (a socket), so this is
  // also the bound on connections that said HELLO and then went idle.
  uint32_t max_sessions = 4096;
  std::chrono::milliseconds session_idle_timeout{3600 * 1000};
  // Unauthenticated work (docs/security.md): a reply to a HELLO not handed to the
  // provider within hello_timeout is withdrawn and its slot and address entry freed;
  // at most max_pending_hellos HELLO replies are in flight at once (0 = a quarter of
  // recv_slots, at most 64); at most hello_rate_per_address HELLOs per second are
  // answered per claimed client address.
  std::chrono::milliseconds hello_timeout{2000};
  uint32_t max_pending_hellos = 0;
  uint32_t hello_rate_per_address = 20;
  // A server-initiated RMA (reading a put's payload from the client, writing a get's
  // records into it) not complete after this long: the client's session is dropped
  // and the request's slot serves others again (docs/security.md). The client's own
  // call has given up by then (ClientOptions::timeout, 30 s by default).
  std::chrono::milliseconds rma_timeout{30000};
  // HOST:PORT of the Prometheus /metrics endpoint; empty = metrics off (the default).
  std::string metrics_listen;
  // Background compaction (server/compactor.h, docs/operations.md "Space"): segments
  // at least this share dead are compacted; 0 turns compaction off.
  double compaction_threshold = 0.5;
  uint64_t compaction_rate = 64ull << 20;  // bytes copied per second at most
  // How long a segment emptied by compaction stays allocated for one-sided readers.
  std::chrono::milliseconds compaction_grace{5000};
};

// True for an unspecified (wildcard) address: 0.0.0.0, ::, [::] and their spellings.
// rpmp-server refuses to listen on one: the listen address is also the endpoint the
// node registers with, which clients and the other servers dial.
bool IsWildcardHost(const std::string& host);

// Parses argv (flags: --listen, --provider, --pool PATH:SIZE (repeatable),
// --segment-size, --config FILE, --proxy LIST, --auth-secret-file FILE, --insecure,
// --busy-poll, --metrics-listen, --rma-timeout, --compaction-threshold, --compaction-rate,
// --compaction-grace, --tls-ca FILE, --tls-cert FILE, --tls-key FILE, --help). A --config
// file is read
// first, then the other flags override it. Returns FailedPrecondition with the
// usage text for --help.
StatusOr<ServerConfig> LoadServerConfig(int argc, char** argv);
// Reads a YAML config file into *c (keys as in deploy/rpmp-server.yaml).
Status LoadServerConfigFile(const std::string& path, ServerConfig* c);
Status ValidateServerConfig(const ServerConfig& c);
const char* ServerUsage();

}  // namespace rpmp

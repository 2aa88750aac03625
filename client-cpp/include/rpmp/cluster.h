// librpmp cluster mode: a Client that speaks to a whole RPMP cluster through its
// proxies (rpmp-proxy) instead of to one server. Get one with
// Client::ConnectCluster(proxies, options); it offers the very same Client interface
// (so the Java binding and Spark change only the connect call):
//
// - Namespaces are created on first write with ClusterOptions::namespace_defaults
//   (or explicitly through AsCluster(client)->CreateNamespace).
// - Writes (put/append/del) go to the namespace's primary, which replicates them and
//   answers once min_replicas copies are persisted; reads go to the primary and fail
//   over at once to the other replicas. Placement and node map are cached and
//   refreshed when a server is unreachable or says the placement moved; calls retry
//   for up to ClusterOptions::retry_for (covering a node's or a proxy's failover).
// - DeleteNamespace asks the proxy, which has every holder delete it.
// - alloc picks the live node with the most free space; a GlobalAddress names its
//   node, so write/read/free find it again. GetMeta fills RecordRef::node_id so
//   ReadRecord reads from the replica that listed the record.
// Thread-safe like every Client. An appended record whose acknowledgement was lost
// in a failover may be stored twice (the retry cannot know); puts are idempotent.
#pragma once

#include <chrono>
#include <cstdint>
#include <string>
#include <vector>

#include "rpmp/client.h"

namespace rpmp {

struct NamespaceOptions {
  uint32_t replicas = 2;      // copies of every record (R)
  uint32_t min_replicas = 0;  // copies before a write is acknowledged; 0 = replicas
  uint64_t ttl_seconds = 0;   // expire when untouched this long; 0 = never
};

struct ClusterOptions {
  ClientOptions client;  // for each server connection; client.timeout is per call
  // How long a call keeps retrying through failovers before it gives up.
  std::chrono::milliseconds retry_for{30000};
  std::chrono::milliseconds proxy_timeout{2000};  // one proxy RPC
  bool create_namespaces = true;                  // create on first write
  NamespaceOptions namespace_defaults;
};

struct NamespaceInfo {
  std::string name;
  NamespaceOptions options;
  std::vector<uint64_t> replicas;  // node ids of the placement, in order
  uint64_t primary = 0;            // node id that orders writes
  bool degraded = false;
};

// What a cluster client did that costs more than the call itself (ClusterControl::Counters).
struct ClusterCounters {
  uint64_t server_connections = 0;  // connections to rpmp-servers opened (each: an endpoint
                                    // with its buffer pools, a HELLO, a session)
  uint64_t staged_copies = 0;       // writes and reads of Buffers registered with another
                                    // server's connection, moved through one extra copy
  uint64_t staged_bytes = 0;        // the bytes of those copies
  uint64_t failover_retries = 0;    // calls sent again after a failover answer (the
                                    // namespace's placement refreshed from the proxy first)
  // Sessions with the servers (docs/security.md, "How a session ends"):
  uint64_t sessions_opened = 0;          // HELLOs that succeeded, first ones included
  uint64_t sessions_reestablished = 0;   // of them, replacing a lost session
  uint64_t session_refusals = 0;         // replies saying a session ended (each is re-opened)
};

// Space of one LIVE node as its last heartbeat reported it to the proxy leader (all its
// pools together; approximate, as the store's accounting is).
struct NodeSpace {
  uint64_t node_id = 0;
  uint64_t capacity = 0;
  uint64_t free = 0;
};

// A per-application credential from the proxy (ClusterControl::IssueCredential;
// docs/security.md "Tenants"). `token` is a secret (ClientOptions::tenant_token): keep
// it out of logs, command lines and configuration that others can read.
struct Credential {
  std::string token;
  std::string prefix;  // namespaces it may act on ("*": all)
  std::string app;
  int64_t expiry_unix = 0;
};

// One node of the node map with its statistics (ClusterControl::StatNodes).
struct NodeStats {
  uint64_t node_id = 0;
  std::string endpoint;
  std::string state;  // LIVE, SUSPECT, DEAD or DRAINING, as `rpmpctl nodes` prints it
  // Ok when the node answered (stats valid); otherwise why not: Unavailable "not asked"
  // for a SUSPECT or DEAD node, or the error of its Stat call.
  Status status;
  ServerStats stats;
  // Space per tier from the node's last heartbeat (the proxy's node map), whether or
  // not the node answered; capacity 0 for a tier it does not have (or an older node).
  uint64_t fast_capacity = 0, fast_free = 0;
  uint64_t capacity_tier_capacity = 0, capacity_tier_free = 0;
};

// Cluster-only calls of a Client made by ConnectCluster.
class ClusterControl {
 public:
  virtual ~ClusterControl() = default;
  // Idempotent for equal options; AlreadyExists for different ones;
  // FailedPrecondition when there are fewer live nodes than replicas.
  virtual StatusOr<NamespaceInfo> CreateNamespace(const std::string& name, const NamespaceOptions& o) = 0;
  virtual StatusOr<NamespaceInfo> DescribeNamespace(const std::string& name) = 0;
  // Deletes name and, with recursive, every name/...; returns the names deleted.
  virtual StatusOr<std::vector<std::string>> DeleteNamespaces(const std::string& name, bool recursive) = 0;
  virtual Status TouchNamespace(const std::string& name) = 0;
  // GetMeta answered by one given replica (node id from DescribeNamespace), no failover:
  // lets a reader that found a record missing on one replica look on the others.
  // RecordRef::node_id is set to node_id.
  virtual StatusOr<ObjectMeta> GetMetaOnNode(const std::string& ns, const std::string& key,
                                             uint64_t node_id) = 0;
  virtual ClusterCounters Counters() const = 0;
  // The LIVE nodes' space from the proxy's node map: one proxy call, no server asked
  // (so a paused server cannot delay it). Unavailable when no proxy answers.
  virtual StatusOr<std::vector<NodeSpace>> LiveNodeSpace() = 0;
  // Every node of the proxy's node map, in its order; LIVE and DRAINING nodes are asked
  // for their statistics (one Stat each, in turn). Unavailable when no proxy answers.
  // Client::Stat of a cluster client is the sum of the nodes that answered (node_id 0).
  virtual StatusOr<std::vector<NodeStats>> StatNodes() = 0;
  // A credential for `prefix` ("*" with an admin certificate) from the proxy leader;
  // ttl_seconds 0 = 24 h. FailedPrecondition when the proxies issue none (started
  // without --token-secret-file); AlreadyExists when another application holds an
  // overlapping prefix. This client keeps its own credentials: nothing switches to it.
  virtual StatusOr<Credential> IssueCredential(const std::string& prefix, const std::string& app,
                                               uint64_t ttl_seconds) = 0;
  // A new credential for the prefix of a valid `token` (PermissionDenied otherwise).
  virtual StatusOr<Credential> RenewCredential(const std::string& token, uint64_t ttl_seconds) = 0;
};

// The cluster totals of StatNodes' answers, as a cluster client's Stat returns them
// (node_id 0): counts summed, every pool listed, compaction summed (enabled or running
// when any node is, the latest last run). Nodes without stats (status not ok) are left out.
ServerStats SumNodeStats(const std::vector<NodeStats>& nodes);

// The cluster side of a Client from ConnectCluster; nullptr for a server-direct one.
ClusterControl* AsCluster(Client* client);

// Comma-separated HOST:PORT list -> vector; RPMP_PROXIES when `list` is empty.
std::vector<std::string> ProxyList(const std::string& list);

}  // namespace rpmp

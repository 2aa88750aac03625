// ClusterAgent: the cluster-mode control loop of one rpmp-server. A thread that
// heartbeats the proxy leader (found by ProxyClient) with the node's stable id, data
// endpoint and space figures; applies namespace deletions the leader sends back; and
// tells the Replicator when the node-map epoch moves (placements may have changed).
// Quotas (docs/cluster.md "Quotas"): reports the bytes of its namespaces under the
// leader's byte-quota prefixes, keeps each such quota with the use the leader summed,
// adds what this node wrote as a primary since the heartbeat (NoteWritten), and
// answers CheckQuota from that (the Replicator refuses writes that would pass one).
// When no proxy answers, the server keeps serving data: the agent logs (at most every
// 10 s) and keeps trying every heartbeat interval.
//
// Threads: Start/Stop from the owner (server/main.cc); the loop runs on its own thread.
#pragma once

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "proto/proxy_client.h"
#include "server/cluster/replicator.h"
#include "server/store/store.h"

namespace rpmp {

class ClusterAgent {
 public:
  // A heartbeat names the namespaces holding at least 1/kLargeNamespaceFraction of the
  // node's capacity with their bytes (large_namespaces), so that the leader substitutes
  // their members only by nodes with room for a copy (docs/cluster.md).
  static constexpr uint64_t kLargeNamespaceFraction = 64;
  // `replicator` may be null (then epochs and deletions only touch the store).
  ClusterAgent(Store* store, ProxyClient* proxy, Replicator* replicator, std::string endpoint,
               std::chrono::milliseconds interval);
  ~ClusterAgent();
  void Start();
  void Stop();
  // Epoch of the last heartbeat reply (0 before the first).
  uint64_t epoch() const { return epoch_.load(); }
  // Whether the primary lease is valid now: the last answered heartbeat was sent
  // less than the leader's lease_ms ago (docs/cluster.md). Any thread.
  bool LeaseValid() const;
  // LeaseValid(), or waits up to `max` for a heartbeat reply that renews it (a late
  // beat on a loaded machine then delays a write instead of failing it).
  bool WaitLease(std::chrono::milliseconds max);
  // OK, or ResourceExhausted naming prefix, quota and use when a write of `length`
  // payload bytes to ns would pass the byte quota of a prefix covering it (use as the
  // leader last summed it + this node's writes since). Any thread.
  Status CheckQuota(const std::string& ns, uint64_t length) const;
  // The session quota that applies to a tenant credential for `tenant_prefix`
  // (docs/cluster.md "Quotas"): the smallest max_sessions of the leader's session
  // quotas covering it, with that quota's prefix in *quota_prefix; 0 when none does.
  // Any thread.
  uint32_t SessionQuotaFor(const std::string& tenant_prefix, std::string* quota_prefix) const;
  // A write of `length` payload bytes to ns was committed here as its primary.
  void NoteWritten(const std::string& ns, uint64_t length);

 private:
  void Loop();
  Status Beat();
  // Deletes ns as the leader asked; true when done and to be acknowledged.
  bool ApplyDeletion(const std::string& ns);

  Store* store_;
  ProxyClient* proxy_;
  Replicator* replicator_;
  const std::string endpoint_;
  std::chrono::milliseconds interval_;
  std::atomic<uint64_t> epoch_{0};
  std::atomic<int64_t> lease_until_ns_{0};  // steady clock
  bool registered_ = false;
  std::vector<std::string> acks_;  // deletions applied, acknowledged in the next beat
  struct ByteQuota {
    std::string prefix;
    uint64_t max = 0, used = 0;  // from the leader
    uint64_t written = 0;        // by this node since the heartbeat that reported `used`
  };
  // The byte quotas' prefixes, for this heartbeat's report (the writes counted so
  // far are in the store's figures it sends).
  std::vector<std::string> StartQuotaReport();
  void NoteByteQuotas(const v1::HeartbeatReply& reply);
  mutable std::mutex quota_mu_;
  std::vector<ByteQuota> byte_quotas_;  // guarded by quota_mu_
  std::vector<std::pair<std::string, uint32_t>> session_quotas_;  // prefix, max; guarded by quota_mu_
  // Per byte_quotas_ entry: bytes written here since the reply that set it, and
  // that count when the current heartbeat's report was taken. Guarded by quota_mu_.
  std::vector<uint64_t> written_, report_base_;
  std::mutex mu_;
  std::condition_variable cv_;
  bool stop_ = false;
  std::thread thread_;
};

}  // namespace rpmp

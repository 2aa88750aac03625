// ClusterClient: the Client of rpmp/cluster.h. Routes each call of the Client
// interface to the right rpmp-server(s) of a cluster, from placements and the node
// map it caches from rpmp-proxy (through ProxyClient), with one server-direct
// ClientImpl per server endpoint, kept for the client's lifetime (they re-open their
// session by themselves when a server restarts).
//
// Files: cluster_client.cc (placement cache, routing with failover, key-value calls),
// cluster_client_connect.cc (construction), cluster_client_admin.cc (namespace admin),
// cluster_client_nodes.cc (servers of nodes, their buffers), cluster_client_raw.cc (raw
// memory), cluster_client_stats.cc (counters, stats), cluster_client_async.cc
// (asynchronous forms). Internal to client-cpp. Thread-safe.
#pragma once

#include <condition_variable>
#include <deque>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <set>
#include <thread>
#include <vector>

#include "client-cpp/src/write_ids.h"
#include "proto/proxy_client.h"
#include "rpmp/client.h"
#include "rpmp/cluster.h"

namespace rpmp {

class ClusterClient : public Client, public ClusterControl {
 public:
  ClusterClient(std::vector<std::string> proxies, const ClusterOptions& options);
  ~ClusterClient() override;

  StatusOr<Buffer> AllocBuffer(size_t size) override;
  StatusOr<Buffer> AllocBufferForWrite(const std::string& ns, size_t size) override;
  StatusOr<Buffer> AllocBufferForRead(const RecordRef& r, size_t size) override;
  Status Put(const std::string& ns, const std::string& key, const void* data, size_t len,
             uint64_t tag) override;
  Status Append(const std::string& ns, const std::string& key, const void* data, size_t len,
                uint64_t tag) override;
  StatusOr<std::string> Get(const std::string& ns, const std::string& key) override;
  Status Get(const std::string& ns, const std::string& key, Buffer* out) override;
  StatusOr<ObjectMeta> GetMeta(const std::string& ns, const std::string& key) override;
  StatusOr<ObjectMeta> GetMetaOfTags(const std::string& ns, const std::string& key,
                                     const std::vector<uint64_t>& tags) override;
  Status ReadRecord(const RecordRef& r, Buffer* dst, size_t dst_offset) override;
  Status Delete(const std::string& ns, const std::string& key) override;
  StatusOr<std::vector<KeyInfo>> List(const std::string& ns, const std::string& start_after,
                                      size_t max) override;
  Status DeleteNamespace(const std::string& ns) override;
  StatusOr<ServerStats> Stat() override;

  void PutAsync(const std::string& ns, const std::string& key, const Buffer& buf, uint64_t tag,
                Callback done) override;
  void AppendAsync(const std::string& ns, const std::string& key, const Buffer& buf, uint64_t tag,
                   Callback done) override;
  void GetAsync(const std::string& ns, const std::string& key, Buffer* out, Callback done) override;
  void ReadRecordAsync(const RecordRef& r, Buffer* dst, size_t dst_offset, Callback done) override;

  StatusOr<GlobalAddress> Alloc(uint64_t size) override;
  Status Free(const GlobalAddress& addr) override;
  Status Write(const GlobalAddress& addr, const void* data, size_t len) override;
  Status Read(const GlobalAddress& addr, void* dst, size_t len) override;

  uint64_t NodeId() const override { return 0; }
  const std::string& ServerAddress() const override { return proxy_list_; }

  StatusOr<NamespaceInfo> CreateNamespace(const std::string& name, const NamespaceOptions& o) override;
  StatusOr<NamespaceInfo> DescribeNamespace(const std::string& name) override;
  StatusOr<std::vector<std::string>> DeleteNamespaces(const std::string& name, bool recursive) override;
  Status TouchNamespace(const std::string& name) override;
  StatusOr<ObjectMeta> GetMetaOnNode(const std::string& ns, const std::string& key,
                                     uint64_t node_id) override;

  ClusterCounters Counters() const override;
  StatusOr<std::vector<NodeSpace>> LiveNodeSpace() override;
  StatusOr<std::vector<NodeStats>> StatNodes() override;
  StatusOr<Credential> IssueCredential(const std::string& prefix, const std::string& app,
                                       uint64_t ttl_seconds) override;  // cluster_client_credentials.cc
  StatusOr<Credential> RenewCredential(const std::string& token, uint64_t ttl_seconds) override;
  // Checks that some proxy answers (used by ConnectCluster).
  Status Probe();

 private:
  using ServerFn = std::function<Status(Client*, uint64_t node_id)>;
  // The retry loop OnPrimary and OnAnyReplica share: runs attempt until it says its
  // status is final (returns true) or options_.retry_for passes, refreshing ns's
  // placement and backing off (20 ms doubling to 500 ms) between attempts.
  Status WithFailover(const std::string& ns, const std::function<bool(Status*)>& attempt);
  // Runs fn against the namespace's primary, retrying through failovers.
  Status OnPrimary(const std::string& ns, bool create, const ServerFn& fn);
  // Runs fn against the primary, then the other replicas when one is unreachable.
  Status OnAnyReplica(const std::string& ns, const ServerFn& fn);
  StatusOr<std::shared_ptr<const v1::Namespace>> Placement(const std::string& ns, bool create);
  void Invalidate(const std::string& ns);
  // The ClientImpl for a server; Unavailable when it cannot be reached or is no
  // longer node `node_id` (0 = do not check).
  StatusOr<Client*> ServerAt(const std::string& endpoint, uint64_t node_id);
  StatusOr<Client*> ServerOfNode(uint64_t node_id);
  StatusOr<Client*> AnyServer();  // for AllocBuffer
  // Memory of c's connection, remembered as c's (Owns).
  StatusOr<Buffer> AllocFrom(Client* c, size_t size);
  // Counts one extra copy of `bytes` (memory of another connection).
  void CountStagedCopy(size_t bytes);
  void CountFailoverRetry();
  void RunAsync(std::function<void()> job);
  void ExecutorLoop();
  // The connected server-direct client of a cached placement's primary / of a node seen
  // before, else nullptr (never blocks; for the asynchronous forms).
  Client* CachedPrimary(const std::string& ns);
  Client* CachedServerOfNode(uint64_t node_id);
  // True when buf is registered memory of c (allocated through this client from c).
  bool Owns(Client* c, const Buffer& buf);
  void WriteAsync(WriteKind kind, const std::string& ns, const std::string& key, const Buffer& buf,
                  uint64_t tag, Callback done);
  // A put or append with write id `id` on the namespace's primary, retried through
  // failovers with the same id (cluster_client.cc).
  Status WriteOnPrimary(WriteKind kind, const std::string& ns, const std::string& key, const void* data,
                        size_t len, uint64_t tag, WriteId id);

  const std::vector<std::string> proxies_;
  const std::string proxy_list_;
  ClusterOptions options_;
  ProxyClient proxy_;
  mutable std::mutex mu_;  // guards placements_, servers_, connecting_, counters_
  std::map<std::string, std::shared_ptr<const v1::Namespace>> placements_;
  std::map<std::string, std::unique_ptr<Client>> servers_;  // by endpoint, never removed
  std::map<uint64_t, Client*> node_servers_;                // node id -> server seen serving it
  std::map<const void*, Client*> pool_owner_;               // buffer pool -> its client
  // Endpoints a thread is connecting to: other callers wait for that connection instead
  // of opening one of their own (ServerAt).
  std::condition_variable connect_cv_;
  std::set<std::string> connecting_;
  ClusterCounters counters_;

  std::mutex exec_mu_;
  std::condition_variable exec_cv_;
  std::deque<std::function<void()>> exec_jobs_;
  bool exec_stop_ = false;
  std::vector<std::thread> executors_;
  // One write id per put/append/delete call, resent unchanged to every server the
  // call tries (docs/append-path.md): a retry on a new primary is applied at most once.
  WriteIdMinter ids_;
};

// Codes after which a call should be retried elsewhere or after a refresh.
bool IsFailoverCode(StatusCode c);
NamespaceInfo ToInfo(const v1::Namespace& ns);

}  // namespace rpmp

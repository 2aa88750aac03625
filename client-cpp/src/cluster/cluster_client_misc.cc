// ClusterClient: construction and Client::ConnectCluster, namespace administration,
// raw memory routed by node id, aggregated stats, and the asynchronous forms: appends,
// puts and record reads go straight to the asynchronous call of the serving connection
// when its placement / node is known (no thread per call); the first call for a
// namespace, and the retry after a failover, run the blocking form on a small executor.
#include <algorithm>
#include <cstdlib>
#include <cstring>

#include "client-cpp/src/buffer_pool.h"
#include "client-cpp/src/client_impl.h"
#include "client-cpp/src/cluster/cluster_client.h"
#include "common/thread_name.h"
#include "proto/placement.h"

namespace rpmp {
namespace {

constexpr int kExecutorThreads = 4;

std::string Join(const std::vector<std::string>& v) {
  std::string out;
  for (const std::string& s : v) out += (out.empty() ? "" : ",") + s;
  return out;
}

ProxyClientOptions ProxyOptions(const ClusterOptions& o) {
  ProxyClientOptions p;
  p.rpc_timeout = o.proxy_timeout;
  p.retry_for = o.retry_for;
  return p;
}

}  // namespace

std::vector<std::string> ProxyList(const std::string& list) { return ProxiesFromFlagOrEnv(list); }

ClusterControl* AsCluster(Client* client) { return dynamic_cast<ClusterControl*>(client); }

StatusOr<std::unique_ptr<Client>> Client::ConnectCluster(const std::vector<std::string>& proxies,
                                                         const ClusterOptions& options) {
  if (proxies.empty()) return Status::InvalidArgument("no proxy given (HOST:PORT list or RPMP_PROXIES)");
  auto c = std::make_unique<ClusterClient>(proxies, options);
  RPMP_RETURN_IF_ERROR(c->Probe());
  return std::unique_ptr<Client>(std::move(c));
}

ClusterClient::ClusterClient(std::vector<std::string> proxies, const ClusterOptions& options)
    : proxies_(proxies), proxy_list_(Join(proxies)), options_(options), proxy_(proxies, ProxyOptions(options)) {
  for (int i = 0; i < kExecutorThreads; i++) executors_.emplace_back([this] {
      NameThisThread("rpmp-cluster");
      ExecutorLoop();
    });
}

ClusterClient::~ClusterClient() {
  {
    std::lock_guard<std::mutex> lock(exec_mu_);
    exec_stop_ = true;
  }
  exec_cv_.notify_all();
  for (std::thread& t : executors_) t.join();
}

Status ClusterClient::Probe() { return proxy_.GetNodeMap().status().Annotate("cannot reach the RPMP proxies " + proxy_list_); }

StatusOr<NamespaceInfo> ClusterClient::CreateNamespace(const std::string& name, const NamespaceOptions& o) {
  v1::NamespaceOptions po;
  po.set_replicas(o.replicas);
  po.set_min_replicas(o.min_replicas);
  po.set_ttl_seconds(o.ttl_seconds);
  RPMP_ASSIGN_OR_RETURN(v1::Namespace ns, proxy_.CreateNamespace(name, po));
  Invalidate(name);
  return ToInfo(ns);
}

StatusOr<NamespaceInfo> ClusterClient::DescribeNamespace(const std::string& name) {
  Invalidate(name);
  RPMP_ASSIGN_OR_RETURN(std::shared_ptr<const v1::Namespace> ns, Placement(name, false));
  return ToInfo(*ns);
}

StatusOr<std::vector<std::string>> ClusterClient::DeleteNamespaces(const std::string& name, bool recursive) {
  StatusOr<v1::DeleteNamespaceReply> r = proxy_.DeleteNamespace(name, recursive);
  {
    std::lock_guard<std::mutex> lock(mu_);
    for (auto it = placements_.begin(); it != placements_.end();) {
      bool under = it->first == name || (recursive && it->first.rfind(name + "/", 0) == 0);
      it = under ? placements_.erase(it) : std::next(it);
    }
  }
  if (!r.ok()) return r.status();
  return std::vector<std::string>(r->deleted().begin(), r->deleted().end());
}

Status ClusterClient::TouchNamespace(const std::string& name) { return proxy_.TouchNamespace(name).status(); }

StatusOr<ObjectMeta> ClusterClient::GetMetaOnNode(const std::string& ns, const std::string& key,
                                                  uint64_t node_id) {
  RPMP_ASSIGN_OR_RETURN(Client* c, ServerOfNode(node_id));
  RPMP_ASSIGN_OR_RETURN(ObjectMeta meta, c->GetMeta(ns, key));
  for (RecordRef& r : meta.records) r.node_id = node_id;
  return meta;
}

StatusOr<Client*> ClusterClient::ServerOfNode(uint64_t node_id) {
  // A node seen before needs no node map from the proxy (one RPC per record read).
  if (Client* c = CachedServerOfNode(node_id)) return c;
  RPMP_ASSIGN_OR_RETURN(v1::NodeMap map, proxy_.GetNodeMap());
  for (const v1::Node& n : map.nodes()) {
    if (n.id() != node_id) continue;
    StatusOr<Client*> c = ServerAt(n.endpoint(), node_id);
    if (c.ok()) {
      std::lock_guard<std::mutex> lock(mu_);
      node_servers_[node_id] = *c;
    }
    return c;
  }
  return Status::NotFound("node " + GlobalAddress{node_id, 0, 0}.ToString() + " is not in the cluster");
}

StatusOr<Client*> ClusterClient::AnyServer() {
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (!servers_.empty()) return servers_.begin()->second.get();
  }
  RPMP_ASSIGN_OR_RETURN(v1::NodeMap map, proxy_.GetNodeMap());
  Status last = Status::Unavailable("no LIVE storage node in the cluster");
  for (const v1::Node& n : map.nodes()) {
    if (n.state() != v1::NODE_STATE_LIVE) continue;
    StatusOr<Client*> c = ServerAt(n.endpoint(), n.id());
    if (c.ok()) return c;
    last = c.status();
  }
  return last;
}

StatusOr<Buffer> ClusterClient::AllocFrom(Client* c, size_t size) {
  StatusOr<Buffer> b = c->AllocBuffer(size);
  if (b.ok() && b->slab() != nullptr) {
    std::lock_guard<std::mutex> lock(mu_);
    pool_owner_[b->slab()->pool] = c;
  }
  return b;
}

StatusOr<Buffer> ClusterClient::AllocBuffer(size_t size) {
  RPMP_ASSIGN_OR_RETURN(Client* c, AnyServer());
  return AllocFrom(c, size);
}

StatusOr<Buffer> ClusterClient::AllocBufferForWrite(const std::string& ns, size_t size) {
  Client* c = CachedPrimary(ns);
  if (c == nullptr) {  // resolve the placement now; the write would have to anyway
    StatusOr<std::shared_ptr<const v1::Namespace>> p = Placement(ns, /*create=*/false);
    int i = p.ok() ? PrimaryIndex(**p) : -1;
    if (i >= 0) {
      const v1::Replica& m = (*p)->placement(i);
      StatusOr<Client*> s = ServerAt(m.endpoint(), m.node_id());
      if (s.ok()) c = *s;
    }
  }
  if (c == nullptr) return AllocBuffer(size);  // no route yet: any server's memory
  return AllocFrom(c, size);
}

StatusOr<Buffer> ClusterClient::AllocBufferForRead(const RecordRef& r, size_t size) {
  // Only a node already connected: a read must not wait here for a node that may be down.
  Client* c = r.node_id == 0 ? nullptr : CachedServerOfNode(r.node_id);
  if (c == nullptr) return AllocBuffer(size);
  return AllocFrom(c, size);
}

void ClusterClient::CountStagedCopy(size_t bytes) {
  std::lock_guard<std::mutex> lock(mu_);
  counters_.staged_copies++;
  counters_.staged_bytes += bytes;
}

void ClusterClient::CountFailoverRetry() {
  std::lock_guard<std::mutex> lock(mu_);
  counters_.failover_retries++;
}

ClusterCounters ClusterClient::Counters() const {
  std::lock_guard<std::mutex> lock(mu_);
  ClusterCounters k = counters_;
  for (const auto& [endpoint, client] : servers_) {
    Connection::SessionCounts s = static_cast<const ClientImpl*>(client.get())->session_counts();
    k.sessions_opened += s.opened;
    k.sessions_reestablished += s.reestablished;
    k.session_refusals += s.refused;
  }
  return k;
}

StatusOr<std::vector<NodeSpace>> ClusterClient::LiveNodeSpace() {
  RPMP_ASSIGN_OR_RETURN(v1::NodeMap map, proxy_.GetNodeMap());
  std::vector<NodeSpace> out;
  for (const v1::Node& n : map.nodes())
    if (n.state() == v1::NODE_STATE_LIVE) out.push_back({n.id(), n.capacity(), n.free()});
  return out;
}

StatusOr<GlobalAddress> ClusterClient::Alloc(uint64_t size) {
  RPMP_ASSIGN_OR_RETURN(v1::NodeMap map, proxy_.GetNodeMap());
  std::vector<const v1::Node*> live;
  for (const v1::Node& n : map.nodes())
    if (n.state() == v1::NODE_STATE_LIVE) live.push_back(&n);
  std::sort(live.begin(), live.end(), [](const v1::Node* a, const v1::Node* b) { return a->free() > b->free(); });
  Status last = Status::Unavailable("no LIVE storage node in the cluster");
  for (const v1::Node* n : live) {
    StatusOr<Client*> c = ServerAt(n->endpoint(), n->id());
    if (!c.ok()) { last = c.status(); continue; }
    StatusOr<GlobalAddress> a = (*c)->Alloc(size);
    if (a.ok() || !IsFailoverCode(a.status().code())) return a;
    last = a.status();
  }
  return last;
}

Status ClusterClient::Free(const GlobalAddress& addr) {
  RPMP_ASSIGN_OR_RETURN(Client* c, ServerOfNode(addr.node_id));
  return c->Free(addr);
}

Status ClusterClient::Write(const GlobalAddress& addr, const void* data, size_t len) {
  RPMP_ASSIGN_OR_RETURN(Client* c, ServerOfNode(addr.node_id));
  return c->Write(addr, data, len);
}

Status ClusterClient::Read(const GlobalAddress& addr, void* dst, size_t len) {
  RPMP_ASSIGN_OR_RETURN(Client* c, ServerOfNode(addr.node_id));
  return c->Read(addr, dst, len);
}

StatusOr<std::vector<NodeStats>> ClusterClient::StatNodes() {
  RPMP_ASSIGN_OR_RETURN(v1::NodeMap map, proxy_.GetNodeMap());
  std::vector<NodeStats> out;
  for (const v1::Node& n : map.nodes()) {
    NodeStats ns;
    ns.node_id = n.id();
    ns.endpoint = n.endpoint();
    ns.state = NodeStateName(n.state());
    if (n.state() != v1::NODE_STATE_LIVE && n.state() != v1::NODE_STATE_DRAINING) {
      ns.status = Status::Unavailable("not asked: the node is " + ns.state);
    } else {
      StatusOr<Client*> c = ServerAt(n.endpoint(), n.id());
      StatusOr<ServerStats> s = c.ok() ? (*c)->Stat() : StatusOr<ServerStats>(c.status());
      if (s.ok()) ns.stats = std::move(s).value();
      else ns.status = s.status();
    }
    out.push_back(std::move(ns));
  }
  return out;
}

StatusOr<ServerStats> ClusterClient::Stat() {
  RPMP_ASSIGN_OR_RETURN(std::vector<NodeStats> nodes, StatNodes());
  return SumNodeStats(nodes);
}

ServerStats SumNodeStats(const std::vector<NodeStats>& nodes) {
  ServerStats total;
  for (const NodeStats& n : nodes) {
    if (!n.status.ok()) continue;
    const ServerStats& s = n.stats;
    total.namespaces += s.namespaces;
    total.keys += s.keys;
    total.records += s.records;
    total.live_bytes += s.live_bytes;
    total.pools.insert(total.pools.end(), s.pools.begin(), s.pools.end());
    CompactionInfo& k = total.compaction;
    k.enabled = k.enabled || s.compaction.enabled;
    k.running = k.running || s.compaction.running;
    k.dead_bytes += s.compaction.dead_bytes;
    k.segments += s.compaction.segments;
    k.records += s.compaction.records;
    k.bytes += s.compaction.bytes;
    k.steps += s.compaction.steps;
    k.last_run_unix_ms = std::max(k.last_run_unix_ms, s.compaction.last_run_unix_ms);
  }
  return total;
}

void ClusterClient::RunAsync(std::function<void()> job) {
  {
    std::lock_guard<std::mutex> lock(exec_mu_);
    exec_jobs_.push_back(std::move(job));
  }
  exec_cv_.notify_one();
}

void ClusterClient::ExecutorLoop() {
  while (true) {
    std::function<void()> job;
    {
      std::unique_lock<std::mutex> lock(exec_mu_);
      exec_cv_.wait(lock, [this] { return exec_stop_ || !exec_jobs_.empty(); });
      if (exec_jobs_.empty()) return;
      job = std::move(exec_jobs_.front());
      exec_jobs_.pop_front();
    }
    job();
  }
}

Client* ClusterClient::CachedPrimary(const std::string& ns) {
  std::lock_guard<std::mutex> lock(mu_);
  auto p = placements_.find(ns);
  if (p == placements_.end()) return nullptr;
  int i = PrimaryIndex(*p->second);
  if (i < 0) return nullptr;
  const v1::Replica& m = p->second->placement(i);
  auto s = servers_.find(m.endpoint());
  if (s == servers_.end() || s->second->NodeId() != m.node_id()) return nullptr;
  return s->second.get();
}

Client* ClusterClient::CachedServerOfNode(uint64_t node_id) {
  std::lock_guard<std::mutex> lock(mu_);
  auto it = node_servers_.find(node_id);
  if (it == node_servers_.end()) return nullptr;
  if (it->second->NodeId() != node_id) {  // that endpoint now serves another node
    node_servers_.erase(it);
    return nullptr;
  }
  return it->second;
}

bool ClusterClient::Owns(Client* c, const Buffer& buf) {
  if (buf.slab() == nullptr) return false;
  std::lock_guard<std::mutex> lock(mu_);
  auto it = pool_owner_.find(buf.slab()->pool);
  return it != pool_owner_.end() && it->second == c;
}

void ClusterClient::WriteAsync(WriteKind kind, const std::string& ns, const std::string& key,
                               const Buffer& buf, uint64_t tag, Callback done) {
  // The caller keeps buf's memory until done (the zero-copy contract of the async forms);
  // nothing here keeps a reference to the Buffer object itself.
  // One write id for the fast path and any blocking retry after a failover, so a retry
  // of a write the old primary already stored is answered, not applied twice.
  const char* data = buf.data();
  size_t len = buf.size();
  WriteId id = ids_.Next();
  auto blocking = [this, kind, ns, key, data, len, tag, id, done] {
    done(WriteOnPrimary(kind, ns, key, data, len, tag, id));
  };
  Client* c = CachedPrimary(ns);
  if (c == nullptr) return RunAsync(blocking);  // placement unknown: resolve off this thread
  // A failover: the blocking form retries through placement refreshes, on the executor.
  auto finish = [this, ns, blocking, done](Status st) {
    if (st.ok() || !IsFailoverCode(st.code())) return done(st);
    Invalidate(ns);
    CountFailoverRetry();
    RunAsync(blocking);
  };
  if (Owns(c, buf) || !buf.valid()) {
    return static_cast<ClientImpl*>(c)->WriteAsyncWithId(kind, ns, key, buf, tag, id, finish);
  }
  // buf is registered with another server's connection: one copy into the primary's
  // memory, owned by the callback until the call completes.
  StatusOr<Buffer> b = c->AllocBuffer(len);
  if (!b.ok()) return RunAsync(blocking);
  CountStagedCopy(len);
  std::memcpy(b->data(), data, len);
  b->set_size(len);
  auto owned = std::make_shared<Buffer>(std::move(b).value());
  auto keep = [owned, finish](Status st) { finish(st); };
  static_cast<ClientImpl*>(c)->WriteAsyncWithId(kind, ns, key, *owned, tag, id, keep);
}

void ClusterClient::PutAsync(const std::string& ns, const std::string& key, const Buffer& buf, uint64_t tag,
                             Callback done) {
  WriteAsync(WriteKind::kPut, ns, key, buf, tag, std::move(done));
}

void ClusterClient::AppendAsync(const std::string& ns, const std::string& key, const Buffer& buf, uint64_t tag,
                                Callback done) {
  WriteAsync(WriteKind::kAppend, ns, key, buf, tag, std::move(done));
}

void ClusterClient::GetAsync(const std::string& ns, const std::string& key, Buffer* out, Callback done) {
  RunAsync([this, ns, key, out, done] { done(Get(ns, key, out)); });
}

void ClusterClient::ReadRecordAsync(const RecordRef& r, Buffer* dst, size_t dst_offset, Callback done) {
  auto blocking = [this, r, dst, dst_offset, done] { done(ReadRecord(r, dst, dst_offset)); };
  Client* c = r.node_id == 0 ? nullptr : CachedServerOfNode(r.node_id);
  if (c == nullptr || dst == nullptr || !dst->valid()) return RunAsync(blocking);
  uint64_t node = r.node_id;
  auto finish = [this, node, done](Status st) {
    if (!st.ok() && IsFailoverCode(st.code())) {
      std::lock_guard<std::mutex> lock(mu_);
      node_servers_.erase(node);  // look the node up again next time
    }
    done(st);
  };
  if (Owns(c, *dst)) return c->ReadRecordAsync(r, dst, dst_offset, finish);
  // dst is registered with another connection: read into c's memory, then copy.
  if (dst_offset > dst->capacity() || r.length > dst->capacity() - dst_offset)
    return done(Status::OutOfRange("destination buffer too small"));
  StatusOr<Buffer> b = c->AllocBuffer(r.length);
  if (!b.ok()) return RunAsync(blocking);
  CountStagedCopy(r.length);
  auto tmp = std::make_shared<Buffer>(std::move(b).value());
  size_t len = r.length;
  c->ReadRecordAsync(r, tmp.get(), 0, [tmp, dst, dst_offset, len, finish](Status st) {
    if (st.ok() && len > 0) std::memcpy(dst->data() + dst_offset, tmp->data(), len);
    finish(st);
  });
}

}  // namespace rpmp

// ClusterClient: construction and Client::ConnectCluster, namespace administration,
// raw memory routed by node id, aggregated stats, and the asynchronous forms (run
// on a small executor, since a cluster call may wait through a failover).
#include <algorithm>
#include <cstdlib>
#include <cstring>

#include "client-cpp/src/cluster/cluster_client.h"
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
  for (int i = 0; i < kExecutorThreads; i++) executors_.emplace_back([this] { ExecutorLoop(); });
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
  RPMP_ASSIGN_OR_RETURN(v1::NodeMap map, proxy_.GetNodeMap());
  for (const v1::Node& n : map.nodes())
    if (n.id() == node_id) return ServerAt(n.endpoint(), node_id);
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

StatusOr<Buffer> ClusterClient::AllocBuffer(size_t size) {
  RPMP_ASSIGN_OR_RETURN(Client* c, AnyServer());
  return c->AllocBuffer(size);
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

StatusOr<ServerStats> ClusterClient::Stat() {
  RPMP_ASSIGN_OR_RETURN(v1::NodeMap map, proxy_.GetNodeMap());
  ServerStats total;
  for (const v1::Node& n : map.nodes()) {
    if (n.state() != v1::NODE_STATE_LIVE) continue;
    StatusOr<Client*> c = ServerAt(n.endpoint(), n.id());
    if (!c.ok()) continue;
    StatusOr<ServerStats> s = (*c)->Stat();
    if (!s.ok()) continue;
    total.namespaces += s->namespaces;
    total.keys += s->keys;
    total.records += s->records;
    total.live_bytes += s->live_bytes;
    total.pools.insert(total.pools.end(), s->pools.begin(), s->pools.end());
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

void ClusterClient::PutAsync(const std::string& ns, const std::string& key, const Buffer& buf, uint64_t tag,
                             Callback done) {
  RunAsync([this, ns, key, &buf, tag, done] { done(Put(ns, key, buf.data(), buf.size(), tag)); });
}

void ClusterClient::AppendAsync(const std::string& ns, const std::string& key, const Buffer& buf, uint64_t tag,
                                Callback done) {
  RunAsync([this, ns, key, &buf, tag, done] { done(Append(ns, key, buf.data(), buf.size(), tag)); });
}

void ClusterClient::GetAsync(const std::string& ns, const std::string& key, Buffer* out, Callback done) {
  RunAsync([this, ns, key, out, done] { done(Get(ns, key, out)); });
}

void ClusterClient::ReadRecordAsync(const RecordRef& r, Buffer* dst, size_t dst_offset, Callback done) {
  RunAsync([this, r, dst, dst_offset, done] { done(ReadRecord(r, dst, dst_offset)); });
}

}  // namespace rpmp

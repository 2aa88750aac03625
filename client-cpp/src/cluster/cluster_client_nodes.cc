// ClusterClient: which server-direct client serves a node (ServerOfNode, AnyServer and
// their cached forms, which never block) and registered memory of those connections
// (AllocBuffer*, remembered per pool so Owns can tell whose memory a buffer is).
// See cluster_client.h.
#include "link/buffer_pool.h"
#include "client-cpp/src/cluster/cluster_client.h"
#include "proto/placement.h"

namespace rpmp {

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

StatusOr<Buffer> ClusterClient::AllocFrom(Client* c, size_t size) {
  StatusOr<Buffer> b = c->AllocBuffer(size);
  if (b.ok() && b->slab() != nullptr) {
    std::lock_guard<std::mutex> lock(mu_);
    pool_owner_[b->slab()->pool] = c;
  }
  return b;
}

bool ClusterClient::Owns(Client* c, const Buffer& buf) {
  if (buf.slab() == nullptr) return false;
  std::lock_guard<std::mutex> lock(mu_);
  auto it = pool_owner_.find(buf.slab()->pool);
  return it != pool_owner_.end() && it->second == c;
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

}  // namespace rpmp

// ClusterClient: placement cache, routing to primary / replicas with failover, and
// the key-value calls. See cluster_client.h.
#include "client-cpp/src/cluster/cluster_client.h"

#include <algorithm>
#include <cstring>
#include <thread>

#include "client-cpp/src/client_impl.h"
#include "common/config_util.h"
#include "common/log.h"
#include "proto/placement.h"

namespace rpmp {

bool IsFailoverCode(StatusCode c) {
  return c == StatusCode::kUnavailable || c == StatusCode::kDeadlineExceeded ||
         c == StatusCode::kFailedPrecondition;
}

NamespaceInfo ToInfo(const v1::Namespace& ns) {
  NamespaceInfo info;
  info.name = ns.name();
  info.options = {ns.options().replicas(), ns.options().min_replicas(), ns.options().ttl_seconds()};
  for (const v1::Replica& r : ns.placement()) info.replicas.push_back(r.node_id());
  int p = PrimaryIndex(ns);
  info.primary = p < 0 ? 0 : ns.placement(p).node_id();
  info.degraded = ns.degraded();
  return info;
}

StatusOr<std::shared_ptr<const v1::Namespace>> ClusterClient::Placement(const std::string& ns, bool create) {
  {
    std::lock_guard<std::mutex> lock(mu_);
    auto it = placements_.find(ns);
    if (it != placements_.end()) return it->second;
  }
  StatusOr<v1::Namespace> p = proxy_.GetPlacement(ns);
  if (p.status().IsNotFound() && create && options_.create_namespaces) {
    const NamespaceOptions& d = options_.namespace_defaults;
    v1::NamespaceOptions o;
    o.set_replicas(d.replicas);
    o.set_min_replicas(d.min_replicas);
    o.set_ttl_seconds(d.ttl_seconds);
    p = proxy_.CreateNamespace(ns, o);
    if (p.status().code() == StatusCode::kAlreadyExists) p = proxy_.GetPlacement(ns);  // created by another
  }
  if (!p.ok()) {
    if (p.status().IsNotFound()) return Status::NotFound("namespace '" + ns + "' does not exist");
    return p.status();
  }
  auto shared = std::make_shared<const v1::Namespace>(std::move(p).value());
  std::lock_guard<std::mutex> lock(mu_);
  placements_[ns] = shared;
  return shared;
}

void ClusterClient::Invalidate(const std::string& ns) {
  std::lock_guard<std::mutex> lock(mu_);
  placements_.erase(ns);
}

StatusOr<Client*> ClusterClient::ServerAt(const std::string& endpoint, uint64_t node_id) {
  Client* c = nullptr;
  {
    // One connection attempt per endpoint at a time: a caller that finds another thread
    // connecting waits for its outcome instead of opening (and throwing away) its own.
    std::unique_lock<std::mutex> lock(mu_);
    connect_cv_.wait(lock, [&] { return connecting_.count(endpoint) == 0; });
    auto it = servers_.find(endpoint);
    if (it != servers_.end()) {
      c = it->second.get();
    } else {
      connecting_.insert(endpoint);
    }
  }
  if (c == nullptr) {
    StatusOr<std::unique_ptr<Client>> fresh = Client::Connect(endpoint, options_.client);
    Status st = fresh.status();
    {
      std::lock_guard<std::mutex> lock(mu_);
      connecting_.erase(endpoint);
      if (fresh.ok()) {
        counters_.server_connections++;
        std::unique_ptr<Client>& slot = servers_[endpoint];
        slot = std::move(fresh).value();
        c = slot.get();
      }
    }
    connect_cv_.notify_all();
    if (!st.ok()) return st;
  }
  if (node_id != 0) {
    if (c->NodeId() != node_id)
      return Status::Unavailable("server at " + endpoint + " is not node " + NodeIdHex(node_id));
    // Reads of this node's records (and memory for them) find the connection without a
    // node map lookup, whichever call opened it.
    std::lock_guard<std::mutex> lock(mu_);
    node_servers_[node_id] = c;
  }
  return c;
}

Status ClusterClient::WithFailover(const std::string& ns, const std::function<bool(Status*)>& attempt) {
  auto deadline = std::chrono::steady_clock::now() + options_.retry_for;
  std::chrono::milliseconds backoff(20);
  while (true) {
    Status st;
    if (attempt(&st)) return st;
    Invalidate(ns);
    if (std::chrono::steady_clock::now() + backoff > deadline) return st;
    CountFailoverRetry();
    std::this_thread::sleep_for(backoff);
    backoff = std::min(backoff * 2, std::chrono::milliseconds(500));
  }
}

Status ClusterClient::OnPrimary(const std::string& ns, bool create, const ServerFn& fn) {
  return WithFailover(ns, [&](Status* st) {
    StatusOr<std::shared_ptr<const v1::Namespace>> p = Placement(ns, create);
    if (!p.ok()) {
      *st = p.status();
      return !IsFailoverCode(st->code());
    }
    int i = PrimaryIndex(**p);
    if (i < 0) {
      *st = Status::Unavailable("namespace '" + ns + "' has no usable replica");
      return false;
    }
    const v1::Replica& m = (*p)->placement(i);
    StatusOr<Client*> c = ServerAt(m.endpoint(), m.node_id());
    *st = c.ok() ? fn(*c, m.node_id()) : c.status();
    // A server that does not know the namespace yet or any more: refresh too.
    return st->ok() || (!IsFailoverCode(st->code()) && !(create && st->IsNotFound()));
  });
}

Status ClusterClient::OnAnyReplica(const std::string& ns, const ServerFn& fn) {
  return WithFailover(ns, [&](Status* st) {
    StatusOr<std::shared_ptr<const v1::Namespace>> p = Placement(ns, false);
    if (!p.ok()) {
      *st = p.status();
      return !IsFailoverCode(st->code());
    }
    const v1::Namespace& pl = **p;
    std::vector<int> order;
    int primary = PrimaryIndex(pl);
    if (primary >= 0) order.push_back(primary);
    for (int i = 0; i < pl.placement_size(); i++)
      if (i != primary && pl.placement(i).state() != v1::NODE_STATE_DEAD && InSync(pl, i)) order.push_back(i);
    *st = Status::Unavailable("namespace '" + ns + "' has no usable replica");
    for (int i : order) {
      const v1::Replica& m = pl.placement(i);
      StatusOr<Client*> c = ServerAt(m.endpoint(), m.node_id());
      *st = c.ok() ? fn(*c, m.node_id()) : c.status();
      if (st->ok() || !IsFailoverCode(st->code())) return true;  // fail over at once otherwise
    }
    return false;
  });
}

Status ClusterClient::WriteOnPrimary(WriteKind kind, const std::string& ns, const std::string& key,
                                     const void* data, size_t len, uint64_t tag, WriteId id) {
  // One id for every server this call is sent to: a retry after a failover is answered
  // with the first outcome instead of being stored twice.
  return OnPrimary(ns, true, [&](Client* c, uint64_t) {
    return static_cast<ClientImpl*>(c)->WriteWithId(kind, ns, key, data, len, tag, id);
  });
}

Status ClusterClient::Put(const std::string& ns, const std::string& key, const void* data, size_t len,
                          uint64_t tag) {
  return WriteOnPrimary(WriteKind::kPut, ns, key, data, len, tag, ids_.Next());
}

Status ClusterClient::Append(const std::string& ns, const std::string& key, const void* data, size_t len,
                             uint64_t tag) {
  return WriteOnPrimary(WriteKind::kAppend, ns, key, data, len, tag, ids_.Next());
}

StatusOr<std::string> ClusterClient::Get(const std::string& ns, const std::string& key) {
  std::string out;
  Status st = OnAnyReplica(ns, [&](Client* c, uint64_t) {
    StatusOr<std::string> v = c->Get(ns, key);
    if (v.ok()) out = std::move(v).value();
    return v.status();
  });
  if (!st.ok()) return st;
  return out;
}

Status ClusterClient::Get(const std::string& ns, const std::string& key, Buffer* out) {
  // The bytes arrive in the serving connection's memory; copied once into *out,
  // which may belong to another connection's registered pool.
  RPMP_ASSIGN_OR_RETURN(std::string v, Get(ns, key));
  if (!out->valid() || out->capacity() < v.size()) {
    RPMP_ASSIGN_OR_RETURN(*out, AllocBuffer(v.size()));
  }
  if (!v.empty()) std::memcpy(out->data(), v.data(), v.size());
  out->set_size(v.size());
  return Status::Ok();
}

StatusOr<ObjectMeta> ClusterClient::GetMeta(const std::string& ns, const std::string& key) {
  return GetMetaOfTags(ns, key, {});
}

StatusOr<ObjectMeta> ClusterClient::GetMetaOfTags(const std::string& ns, const std::string& key,
                                                  const std::vector<uint64_t>& tags) {
  ObjectMeta meta;
  Status st = OnAnyReplica(ns, [&](Client* c, uint64_t node) {
    StatusOr<ObjectMeta> m = c->GetMetaOfTags(ns, key, tags);
    if (!m.ok()) return m.status();
    meta = std::move(m).value();
    for (RecordRef& r : meta.records) r.node_id = node;
    return Status::Ok();
  });
  if (!st.ok()) return st;
  return meta;
}

Status ClusterClient::ReadRecord(const RecordRef& r, Buffer* dst, size_t dst_offset) {
  if (r.node_id == 0) return Status::InvalidArgument("record reference without a node (use GetMeta of this client)");
  RPMP_ASSIGN_OR_RETURN(Client* c, ServerOfNode(r.node_id));
  if (dst->valid() && Owns(c, *dst)) return c->ReadRecord(r, dst, dst_offset);
  if (dst->valid() && dst->slab() != nullptr) {
    // dst may be registered with another connection: read into c's memory, copy.
    RPMP_ASSIGN_OR_RETURN(Buffer tmp, c->AllocBuffer(r.length));
    RPMP_RETURN_IF_ERROR(c->ReadRecord(r, &tmp, 0));
    if (dst->capacity() < dst_offset + r.length) return Status::OutOfRange("destination buffer too small");
    CountStagedCopy(r.length);
    std::memcpy(dst->data() + dst_offset, tmp.data(), r.length);
    return Status::Ok();
  }
  return Status::InvalidArgument("invalid destination buffer");
}

Status ClusterClient::Delete(const std::string& ns, const std::string& key) {
  WriteId id = ids_.Next();
  return OnPrimary(ns, false, [&](Client* c, uint64_t) {
    return static_cast<ClientImpl*>(c)->DeleteWithId(ns, key, id);
  });
}

StatusOr<std::vector<KeyInfo>> ClusterClient::List(const std::string& ns, const std::string& start_after,
                                                   size_t max) {
  std::vector<KeyInfo> keys;
  Status st = OnAnyReplica(ns, [&](Client* c, uint64_t) {
    StatusOr<std::vector<KeyInfo>> k = c->List(ns, start_after, max);
    if (k.ok()) keys = std::move(k).value();
    return k.status();
  });
  if (st.IsNotFound()) return std::vector<KeyInfo>{};  // like a server: unknown = empty
  if (!st.ok()) return st;
  return keys;
}

Status ClusterClient::DeleteNamespace(const std::string& ns) {
  StatusOr<std::vector<std::string>> d = DeleteNamespaces(ns, false);
  return d.status();
}

}  // namespace rpmp

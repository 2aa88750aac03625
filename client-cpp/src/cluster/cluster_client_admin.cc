// ClusterClient's namespace administration (ClusterControl of rpmp/cluster.h): create,
// describe, delete and touch namespaces through the proxy, keeping the placement cache in
// step, and GetMetaOnNode (one replica's answer, no failover). See cluster_client.h.
#include "client-cpp/src/cluster/cluster_client.h"

namespace rpmp {

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

}  // namespace rpmp

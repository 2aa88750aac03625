// ClusterClient's raw memory: Alloc on the LIVE node with the most free space (the
// next one when it fails over), Free/Write/Read on the node the address names.
// See cluster_client.h.
#include <algorithm>

#include "client-cpp/src/cluster/cluster_client.h"

namespace rpmp {

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

}  // namespace rpmp

// ClusterClient's counters and statistics: ClusterCounters (its own and its server
// connections' session counts), the live nodes' space from the proxy's node map, each
// node's Stat (StatNodes) and their sum (Stat, SumNodeStats). See cluster_client.h.
#include <algorithm>

#include "client-cpp/src/client_impl.h"
#include "client-cpp/src/cluster/cluster_client.h"
#include "proto/placement.h"

namespace rpmp {

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

StatusOr<std::vector<NodeStats>> ClusterClient::StatNodes() {
  RPMP_ASSIGN_OR_RETURN(v1::NodeMap map, proxy_.GetNodeMap());
  std::vector<NodeStats> out;
  for (const v1::Node& n : map.nodes()) {
    NodeStats ns;
    ns.node_id = n.id();
    ns.endpoint = n.endpoint();
    ns.state = NodeStateName(n.state());
    ns.fast_capacity = n.fast_capacity();
    ns.fast_free = n.fast_free();
    ns.capacity_tier_capacity = n.capacity_tier_capacity();
    ns.capacity_tier_free = n.capacity_tier_free();
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

}  // namespace rpmp

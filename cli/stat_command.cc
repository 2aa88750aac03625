// Implementation of rpmpctl stat (see stat_command.h).
#include "cli/exit_codes.h"
#include "cli/stat_command.h"

#include <algorithm>
#include <chrono>
#include <cinttypes>
#include <cstdio>
#include <string>
#include <vector>

#include "common/config_util.h"
#include "rpmp/cluster.h"

namespace rpmp {
namespace {

using cli::Bad;
using cli::Fail;

std::string LastRun(uint64_t unix_ms) {
  if (unix_ms == 0) return "never";
  long long now = std::chrono::duration_cast<std::chrono::milliseconds>(
                      std::chrono::system_clock::now().time_since_epoch())
                      .count();
  long long ago = now - static_cast<long long>(unix_ms);
  return std::to_string(ago < 0 ? 0 : ago / 1000) + "s ago";
}

const char* CompactionState(const CompactionInfo& k) {
  return !k.enabled ? "off" : k.running ? "running" : "idle";
}

// The lines a server and a cluster share: counts, pools, compaction.
void PrintBody(const ServerStats& s) {
  std::printf("namespaces %" PRIu64 " keys %" PRIu64 " records %" PRIu64 " live %s\n", s.namespaces, s.keys,
              s.records, HumanBytes(s.live_bytes).c_str());
  for (const PoolInfo& p : s.pools)
    std::printf("pool %s [%s] capacity %s used %s free %s\n", p.path.c_str(), p.medium.c_str(),
                HumanBytes(p.capacity).c_str(), HumanBytes(p.used).c_str(), HumanBytes(p.free).c_str());
  const CompactionInfo& k = s.compaction;
  std::printf("compaction %s dead %s segments_compacted %" PRIu64 " records_moved %" PRIu64
              " bytes_moved %s last_run %s\n",
              CompactionState(k), HumanBytes(k.dead_bytes).c_str(), k.segments, k.records,
              HumanBytes(k.bytes).c_str(), LastRun(k.last_run_unix_ms).c_str());
}

// " fast used X of Y capacity_tier used X of Y" from the node map (heartbeats);
// a tier the node does not have is left out.
std::string Tiers(const NodeStats& n) {
  std::string out;
  auto one = [&out](const char* name, uint64_t capacity, uint64_t free) {
    if (capacity == 0) return;
    out += std::string(" ") + name + " used " + HumanBytes(capacity - std::min(free, capacity)) + " of " +
           HumanBytes(capacity);
  };
  one("fast", n.fast_capacity, n.fast_free);
  one("capacity_tier", n.capacity_tier_capacity, n.capacity_tier_free);
  return out;
}

// The cluster's space per tier, one line each: "tier NAME capacity X used Y free Z".
void PrintTierTotals(const std::vector<NodeStats>& nodes) {
  uint64_t fc = 0, ff = 0, cc = 0, cf = 0;
  for (const NodeStats& n : nodes) {
    if (n.state == "DEAD") continue;
    fc += n.fast_capacity, ff += n.fast_free, cc += n.capacity_tier_capacity, cf += n.capacity_tier_free;
  }
  auto line = [](const char* name, uint64_t capacity, uint64_t free) {
    std::printf("tier %s capacity %s used %s free %s\n", name, HumanBytes(capacity).c_str(),
                HumanBytes(capacity - std::min(free, capacity)).c_str(), HumanBytes(free).c_str());
  };
  line("fast", fc, ff);
  line("capacity", cc, cf);
}

// One line per node: its counts and its pools together, or why it has none; then
// its space per tier (after the older fields).
void PrintNode(const NodeStats& n) {
  std::printf("node %s at %s %s", NodeIdHex(n.node_id).c_str(), n.endpoint.c_str(), n.state.c_str());
  if (!n.status.ok()) {
    std::printf(" (%s)%s\n", n.status.ToString().c_str(), Tiers(n).c_str());
    return;
  }
  const ServerStats& s = n.stats;
  uint64_t capacity = 0, used = 0, free = 0;
  for (const PoolInfo& p : s.pools) capacity += p.capacity, used += p.used, free += p.free;
  std::printf(" namespaces %" PRIu64 " keys %" PRIu64 " records %" PRIu64 " live %s pools %zu capacity %s used %s"
              " free %s compaction %s%s\n",
              s.namespaces, s.keys, s.records, HumanBytes(s.live_bytes).c_str(), s.pools.size(),
              HumanBytes(capacity).c_str(), HumanBytes(used).c_str(), HumanBytes(free).c_str(),
              CompactionState(s.compaction), Tiers(n).c_str());
}

int ClusterStat(Client& c, ClusterControl& cc) {
  StatusOr<std::vector<NodeStats>> nodes = cc.StatNodes();
  if (!nodes.ok()) return Fail(nodes.status());
  size_t answered = 0;
  for (const NodeStats& n : *nodes) answered += n.status.ok() ? 1 : 0;
  std::printf("cluster of %zu nodes (%zu answered) at %s\n", nodes->size(), answered, c.ServerAddress().c_str());
  PrintBody(SumNodeStats(*nodes));  // the same answers, not asked twice
  PrintTierTotals(*nodes);
  for (const NodeStats& n : *nodes) PrintNode(n);
  return 0;
}

}  // namespace

int RunStat(Client& c) {
  if (ClusterControl* cc = AsCluster(&c)) return ClusterStat(c, *cc);
  StatusOr<ServerStats> s = c.Stat();
  if (!s.ok()) return Fail(s.status());
  std::printf("node %s at %s\n", NodeIdHex(s->node_id).c_str(), c.ServerAddress().c_str());
  PrintBody(*s);
  return 0;
}

}  // namespace rpmp

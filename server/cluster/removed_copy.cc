// Removed copies: a node substituted out of a namespace's placement (it was DEAD or
// draining) keeps its copy, which nobody reads or repairs any more. Once the
// namespace's placement is whole again (every member in sync, none DEAD), that copy is
// garbage: it is dropped here, so that node failures do not leave full copies of large
// namespaces (a Spark shuffle's groups) filling the cluster until the namespace is
// deleted (docs/cluster.md "Removed copies").
//
// Safety: the in-sync members hold every acknowledged record (the proxy's record), so
// the dropped copy is never the only one. The check is made again on a placement read
// from the proxy right before the drop, on the namespace's worker, and the drop is
// abandoned when this node saw a newer epoch of the namespace meanwhile (it may have
// been made a member again). While the copy is dropped, replica frames of the namespace
// are refused, so a repair that starts onto this node then fails and is retried on
// what is left, never counted on records the drop removed. Reads of a dropped copy
// answer FailedPrecondition (failover) until a newer epoch makes this node a member
// again; after a restart they answer as for any namespace the node does not hold.
//
// Callers: Replicator::ScanOnce (repair.cc) queues DropRemovedCopy; reads are refused
// by CheckRead (read_fence.cc).
#include "common/log.h"
#include "proto/placement.h"
#include "server/cluster/replicator.h"
#include "server/store/store.h"

namespace rpmp {
namespace {

// ns's placement no longer has `self`, `self` was substituted out of it, and every
// member is in sync and not DEAD: the placement is whole without this node's copy.
bool RemovedAndWhole(const v1::Namespace& ns, uint64_t self) {
  if (!WasSubstitutedOut(ns, self) || ns.placement_size() == 0 || ns.in_sync_size() != ns.placement_size()) return false;
  for (int i = 0; i < ns.placement_size(); i++) {
    const v1::Replica& m = ns.placement(i);
    if (m.node_id() == self || m.state() == v1::NODE_STATE_DEAD || !InSync(ns, i)) return false;
  }
  return true;
}

}  // namespace

bool Replicator::HoldsRemovedCopy(const v1::Namespace& ns) {
  if (!RemovedAndWhole(ns, self_)) return false;
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (dropped_.count(ns.name()) || dropping_.count(ns.name())) return false;
  }
  return !store_->List(ns.name(), "", 1).status().IsNotFound();
}

void Replicator::DropRemovedCopy(const std::string& ns) {
  StatusOr<v1::Namespace> now = proxy_->GetPlacement(ns);
  if (!now.ok() || !RemovedAndWhole(*now, self_)) return;  // deleted, changed, or the proxy is away
  if (!BeginDrop(ns, now->epoch())) return;
  Status d = store_->DeleteNamespace(ns);
  EndDrop(ns, now->epoch(), d.ok() || d.IsNotFound());  // else the copy is still there: reads keep it
  if (d.ok()) {
    RPMP_LOG_INFO("dropped this node's copy of namespace %s: substituted out of it, and its %d members "
                  "are all in sync (epoch %llu)",
                  ns.c_str(), now->placement_size(), static_cast<unsigned long long>(now->epoch()));
  } else if (!d.IsNotFound()) {
    RPMP_LOG_WARN("cannot drop this node's copy of namespace %s (substituted out of it): %s", ns.c_str(),
                  d.ToString().c_str());
  }
}

bool Replicator::BeginDrop(const std::string& ns, uint64_t epoch) {
  std::lock_guard<std::mutex> lock(mu_);
  auto f = fences_.find(ns);
  if (f != fences_.end() && f->second.epoch > epoch) return false;  // newer news: a member again?
  if (!dropping_.insert(ns).second) return false;
  dropped_count_.fetch_add(1);
  return true;
}

void Replicator::EndDrop(const std::string& ns, uint64_t epoch, bool gone) {
  std::lock_guard<std::mutex> lock(mu_);
  dropping_.erase(ns);
  if (gone && dropped_.emplace(ns, epoch).second) {
    ns_.erase(ns);
  } else {
    dropped_count_.fetch_sub(1);
  }
}

void Replicator::UndropLocked(const std::string& ns, uint64_t epoch) {
  auto d = dropped_.find(ns);
  if (d == dropped_.end() || (epoch != 0 && epoch <= d->second)) return;
  dropped_.erase(d);
  dropped_count_.fetch_sub(1);
}

}  // namespace rpmp

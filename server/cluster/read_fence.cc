// Read fencing: a cluster member serves a client read (get, get_meta, list) of a
// namespace only while the newest placement it knows counts it in sync, so that a
// client reading with an old placement never takes a stale copy, or "not found" from a
// node that dropped its copy, for an answer (docs/cluster.md "Read fencing").
//
// Refused (FailedPrecondition, a failover code: the client asks the proxy for the
// placement and reads an in-sync member) when this node:
// - dropped or is dropping its copy after being substituted out (removed_copy.cc);
// - knows a newer epoch in which it is an out-of-sync member or was substituted out;
// - learnt the namespace's newest epoch from a replica frame only (it may be the repair
//   of this very node), until a placement read says whether it is in sync;
// - restarted and has not yet read the placements from the proxy (the first scan).
// Each refusal asks the scanner for a pass (coalesced), which reads every placement.
// Namespaces this node was never part of are not refused (they answer "not found").
// What remains: a node cut off from the primary and removed from the in-sync set
// serves reads until it learns the new epoch (docs/cluster.md "Known limits").
//
// Callers: the server's read handlers (CheckRead, from the progress threads: no
// blocking, one mutex taken only while some namespace is refused or before the first
// scan); NoteEpoch and CheckReplicaFrame (replicator.cc) keep the state.
#include "proto/placement.h"
#include "server/cluster/replicator.h"

namespace rpmp {

Status Replicator::CheckRead(const std::string& ns) {
  if (scanned_.load(std::memory_order_acquire) && dropped_count_.load(std::memory_order_relaxed) == 0 &&
      unreadable_count_.load(std::memory_order_relaxed) == 0)
    return Status::Ok();
  std::lock_guard<std::mutex> lock(mu_);
  if (dropped_.count(ns) || dropping_.count(ns))
    return Status(StatusCode::kFailedPrecondition,
                  "namespace '" + ns + "': this node was substituted out of it and dropped its copy; "
                  "ask the proxy for its placement");
  if (!scanned_.load(std::memory_order_relaxed)) {
    WantScanLocked();
    return Status(StatusCode::kFailedPrecondition,
                  "namespace '" + ns + "': this node has not read the placements from the proxy since it "
                  "started, so it cannot tell whether its copy is in sync; read another member");
  }
  if (unreadable_.count(ns)) {
    WantScanLocked();
    auto f = fences_.find(ns);
    return Status(StatusCode::kFailedPrecondition,
                  "namespace '" + ns + "': this node is not an in-sync member of it at epoch " +
                      std::to_string(f == fences_.end() ? 0 : f->second.epoch) +
                      " as far as it knows; ask the proxy for its placement");
  }
  return Status::Ok();
}

void Replicator::SetReadableLocked(const std::string& ns, bool readable) {
  if (readable ? unreadable_.erase(ns) > 0 : unreadable_.insert(ns).second)
    unreadable_count_.store(unreadable_.size(), std::memory_order_relaxed);
}

void Replicator::WantScanLocked() {
  if (scan_wanted_) return;
  scan_wanted_ = true;
  scan_cv_.notify_all();
}

}  // namespace rpmp

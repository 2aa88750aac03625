// Repair: how a primary brings a member of a namespace's placement up to date without
// ever destroying a copy that may be needed (docs/cluster.md, "Repair"). It compares
// the member's keys and record lists (tag, length, CRC) with its own, appends the
// records the member lacks at the end of a key, and rewrites (put, then appends) only
// keys whose records diverge, and deletes keys the primary does not have. Before any
// such destructive step on a member the proxy lists as in sync, the member is taken
// out of the in-sync set; after a complete copy it is added back. The source is always
// the primary, which is in sync, hence holds every acknowledged record. Runs on the
// namespace's worker, so no write of the namespace interleaves. Also the scanner,
// which queues repairs of members that are not in sync after every placement change.
#include <chrono>
#include <set>

#include "common/config_util.h"
#include "common/log.h"
#include "proto/placement.h"
#include "server/cluster/replicator.h"
#include "server/server_metrics.h"
#include "server/store/store.h"

namespace rpmp {
Status Replicator::RepairMember(const std::string& ns, NsState* s, int index, ReplicaLink* link) {
  RepairProgress progress(ReplicationHooks());  // metrics: running, records, result
  auto started = std::chrono::steady_clock::now();
  const uint64_t node = s->placement.placement(index).node_id();
  bool in_sync = InSync(s->placement, index);
  auto leave_in_sync = [&]() -> Status {
    if (!in_sync) return Status::Ok();
    RPMP_RETURN_IF_ERROR(SetMemberInSync(ns, s, node, false));
    in_sync = false;
    return Status::Ok();
  };
  RPMP_ASSIGN_OR_RETURN(std::vector<std::string> theirs, link->ListKeys(ns));
  std::set<std::string> extra(theirs.begin(), theirs.end());
  uint64_t keys = 0, records = 0, bytes = 0, rewritten = 0;
  std::string after;
  while (true) {
    StatusOr<ListPage> page = store_->List(ns, after, 1000);
    if (page.status().IsNotFound()) break;
    if (!page.ok()) return page.status();
    for (const StoredKey& k : page->keys) {
      extra.erase(k.key);
      StatusOr<ObjectView> view = store_->Get(ns, k.key);
      if (view.status().IsNotFound()) continue;
      if (!view.ok()) return view.status();
      RPMP_ASSIGN_OR_RETURN(std::vector<ReplicaRecord> have, link->Records(ns, k.key));
      size_t common = 0;
      while (common < have.size() && common < view->records.size() &&
             have[common] == ReplicaRecord{view->records[common].tag, view->records[common].length,
                                           view->records[common].crc})
        common++;
      size_t from = common;
      if (common < have.size()) {  // diverges: the member holds records we do not
        RPMP_RETURN_IF_ERROR(leave_in_sync());
        from = 0;
        rewritten++;
      }
      // Records carry their write ids. A rewritten key's are installed
      // (wire::kFlagInstallId): the member forgets the ids of the records the first put
      // replaces and learns every id of the primary's copy, even those it knew from its
      // diverged copy (it would skip those records otherwise). Without them, a client's
      // retry of one of these writes would be stored a second time once the member
      // serves as primary. A record with an id is sent with the kind it was written
      // with (the member's id table checks it); an append to an absent key creates it.
      bool rewrite = from != common;
      for (size_t i = from; i < view->records.size(); i++) {
        const RecordInfo& r = view->records[i];
        WriteId id = r.write_id;
        WriteOutcome first = id.valid() ? store_->FindWrite(ns, id) : WriteOutcome{};
        bool put = first.state != WriteState::kUnknown ? first.kind == WriteIdKind::kPut : i == 0;
        if (i == 0 && rewrite) put = true;  // must replace the diverged copy
        WriteKind kind = put ? WriteKind::kPut : WriteKind::kAppend;
        Status sent = link->Write(kind, ns, k.key, r.tag, r.data, r.length, r.crc, id, FenceOf(s),
                                  rewrite && id.valid());
        if (id.valid() && !rewrite && IsWriteIdTooOld(sent)) {
          // The member remembers more newer writes of this writer than its window (a
          // record appended late, e.g. moved to an extent after a refusal): a retry
          // that old is refused everywhere; the record goes installed, its id kept.
          sent = link->Write(kind, ns, k.key, r.tag, r.data, r.length, r.crc, id, FenceOf(s), true);
        }
        RPMP_RETURN_IF_ERROR(sent);
        records++;
        bytes += r.length;
        progress.Copied(r.length);
      }
      keys += from < view->records.size();
    }
    if (!page->more || page->keys.empty()) break;
    after = page->keys.back().key;
  }
  for (const std::string& k : extra) {  // keys we deleted (or never acknowledged)
    RPMP_RETURN_IF_ERROR(leave_in_sync());
    RPMP_RETURN_IF_ERROR(link->Delete(ns, k, {}, FenceOf(s)));
    rewritten++;
  }
  // A deletion that raced with the copy would leave the copy behind: check.
  StatusOr<v1::Namespace> still = proxy_->GetPlacement(ns);
  if (still.status().IsNotFound()) {
    link->DeleteNamespace(ns, FenceOf(s));
    store_->DeleteNamespace(ns);
    return Status::NotFound("namespace '" + ns + "' was deleted during repair");
  }
  if (!in_sync) RPMP_RETURN_IF_ERROR(SetMemberInSync(ns, s, node, true));
  auto ms = std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::steady_clock::now() - started);
  RPMP_LOG_INFO("repaired namespace %s on node %016llx at %s: %llu keys completed (%llu rewritten or deleted), "
                "%llu records, %llu bytes in %lld ms",
                ns.c_str(), static_cast<unsigned long long>(node), link->endpoint().c_str(),
                static_cast<unsigned long long>(keys), static_cast<unsigned long long>(rewritten),
                static_cast<unsigned long long>(records), static_cast<unsigned long long>(bytes),
                static_cast<long long>(ms.count()));
  progress.Succeeded();
  return Status::Ok();
}

Status Replicator::SetMemberInSync(const std::string& ns, NsState* s, uint64_t node, bool in_sync) {
  StatusOr<v1::Namespace> next = proxy_->SetInSync(ns, s->placement.epoch(), self_, node, in_sync);
  if (!next.ok()) {
    std::lock_guard<std::mutex> lock(mu_);
    s->stale = true;
    return next.status().Annotate(std::string(in_sync ? "adding" : "removing") + " in-sync member " +
                                  NodeIdHex(node));
  }
  s->placement = std::move(next).value();
  s->have = true;
  NoteEpoch(s->placement);
  return Status::Ok();
}

void Replicator::RepairJob(const std::string& ns) {
  std::shared_ptr<NsState> s = StateOf(ns);
  if (!CheckPrimary(ns, s.get()).ok()) return;
  bool needed = false;
  for (int i = 0; i < s->placement.placement_size(); i++) {
    const v1::Replica& m = s->placement.placement(i);
    if (m.node_id() != self_ && m.state() != v1::NODE_STATE_DEAD &&
        (!InSync(s->placement, i) || !s->synced.count(m.node_id())))
      needed = true;
  }
  if (!needed) return;
  // Replicating "nothing" repairs every member not in sync, and retries until the
  // write timeout when one is unreachable.
  Status st = Replicate(ns, s.get(), [](ReplicaLink*) { return Status::Ok(); });
  if (!st.ok()) RPMP_LOG_WARN("namespace %s: repair incomplete: %s", ns.c_str(), st.ToString().c_str());
}

// Passes come often (every epoch change, every refused read: read_fence.cc), and a
// repair that cannot finish (a member without room) holds the namespace's worker, which
// also runs its writes, up to the write timeout: a namespace has at most one scan job
// queued. The job unmarks itself as it starts, so a change seen meanwhile queues another.
bool Replicator::QueueScanJobOnce(const std::string& ns) {
  std::lock_guard<std::mutex> lock(mu_);
  return scan_jobs_queued_.insert(ns).second;
}

void Replicator::ScanJobStarts(const std::string& ns) {
  std::lock_guard<std::mutex> lock(mu_);
  scan_jobs_queued_.erase(ns);
}

void Replicator::ScanLoop() {
  while (true) {
    {
      std::unique_lock<std::mutex> lock(mu_);
      scan_cv_.wait(lock, [this] { return stopping_ || scan_wanted_; });
      if (stopping_) return;
      scan_wanted_ = false;
    }
    ScanOnce();
    // At most ten passes a second: refused reads ask for passes (read_fence.cc).
    std::unique_lock<std::mutex> lock(mu_);
    scan_cv_.wait_for(lock, std::chrono::milliseconds(100), [this] { return stopping_; });
  }
}

void Replicator::ScanOnce() {
  StatusOr<v1::ListNamespacesReply> all = proxy_->ListNamespaces("");
  if (!all.ok()) {
    RPMP_LOG_WARN("cannot list namespaces for repair: %s", all.status().ToString().c_str());
    std::lock_guard<std::mutex> lock(mu_);
    scan_wanted_ = true;  // try again at the next epoch change or heartbeat
    return;
  }
  for (const v1::Namespace& ns : all->namespaces()) {
    NoteEpoch(ns);
    if (HoldsRemovedCopy(ns)) {  // removed_copy.cc
      std::string name = ns.name();
      if (QueueScanJobOnce(name)) Enqueue(name, [this, name] { ScanJobStarts(name); DropRemovedCopy(name); });
      continue;
    }
    int p = PrimaryIndex(ns);
    if (p < 0 || ns.placement(p).node_id() != self_) continue;
    // Members out of the in-sync set (substitutes, returning members): queue their
    // repair. In-sync members this process has not synchronised are checked by the
    // diff at the next write (or right here when a repair runs anyway).
    bool pending = false;
    for (int i = 0; i < ns.placement_size(); i++)
      if (ns.placement(i).node_id() != self_ && ns.placement(i).state() != v1::NODE_STATE_DEAD && !InSync(ns, i))
        pending = true;
    if (pending) {
      std::string name = ns.name();
      if (QueueScanJobOnce(name)) Enqueue(name, [this, name] { ScanJobStarts(name); RepairJob(name); });
    }
  }
  scanned_.store(true, std::memory_order_release);  // reads may be served (read_fence.cc)
}

}  // namespace rpmp

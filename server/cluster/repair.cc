// Repair: how a primary brings a member of a namespace's placement up to date — the
// member's copy of the namespace is dropped and every record is sent again, key by
// key, in the primary's order (first record of a key as a put, the rest as appends,
// same tags). Runs on the namespace's worker, so no write of the namespace
// interleaves. Also the scanner, which looks for substituted members after every
// placement change and queues their repair. See replicator.h.
#include <chrono>

#include "common/log.h"
#include "proto/placement.h"
#include "server/cluster/replicator.h"
#include "server/server_metrics.h"

namespace rpmp {

Status Replicator::RepairMember(const std::string& ns, ReplicaLink* link) {
  RepairProgress progress(ReplicationHooks());  // metrics: running, records, result
  auto started = std::chrono::steady_clock::now();
  RPMP_RETURN_IF_ERROR(link->DeleteNamespace(ns));
  uint64_t keys = 0, records = 0, bytes = 0;
  std::string after;
  while (true) {
    RPMP_ASSIGN_OR_RETURN(ListPage page, store_->List(ns, after, 1000));
    for (const KeyInfo& k : page.keys) {
      StatusOr<ObjectView> view = store_->Get(ns, k.key);
      if (view.status().IsNotFound()) continue;
      if (!view.ok()) return view.status();
      for (size_t i = 0; i < view->records.size(); i++) {
        const RecordInfo& r = view->records[i];
        RPMP_RETURN_IF_ERROR(link->Write(i == 0, ns, k.key, r.tag, r.data, r.length, r.crc));
        records++;
        bytes += r.length;
        progress.Copied(r.length);
      }
      keys++;
    }
    if (!page.more || page.keys.empty()) break;
    after = page.keys.back().key;
  }
  // A deletion that raced with the copy would leave the copy behind: check.
  StatusOr<v1::Namespace> still = proxy_->GetPlacement(ns);
  if (still.status().IsNotFound()) {
    link->DeleteNamespace(ns);
    store_->DeleteNamespace(ns);
    return Status::NotFound("namespace '" + ns + "' was deleted during repair");
  }
  auto ms = std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::steady_clock::now() - started);
  RPMP_LOG_INFO("repaired namespace %s on node %016llx at %s: %llu keys, %llu records, %llu bytes in %lld ms",
                ns.c_str(), static_cast<unsigned long long>(link->node_id()), link->endpoint().c_str(),
                static_cast<unsigned long long>(keys), static_cast<unsigned long long>(records),
                static_cast<unsigned long long>(bytes), static_cast<long long>(ms.count()));
  progress.Succeeded();
  return Status::Ok();
}

void Replicator::RepairJob(const std::string& ns) {
  std::shared_ptr<NsState> s = StateOf(ns);
  if (!CheckPrimary(ns, s.get()).ok()) return;
  bool needed = false;
  for (int i = 0; i < s->placement.placement_size(); i++) {
    const v1::Replica& m = s->placement.placement(i);
    if (m.node_id() != self_ && m.state() != v1::NODE_STATE_DEAD && JoinedEpoch(s->placement, i) > 0 &&
        !s->synced.count(m.node_id()))
      needed = true;
  }
  if (!needed) return;
  // Replicating "nothing" repairs every member not in sync, and retries until the
  // write timeout when one is unreachable.
  Status st = Replicate(ns, s.get(), [](ReplicaLink*) { return Status::Ok(); });
  if (!st.ok()) RPMP_LOG_WARN("namespace %s: repair incomplete: %s", ns.c_str(), st.ToString().c_str());
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
    int p = PrimaryIndex(ns);
    if (p < 0 || ns.placement(p).node_id() != self_) continue;
    // Substitutes start empty: queue their repair (the worker skips members it
    // already brought in sync). Original members are assumed in sync until a write
    // to them fails.
    bool substitute_pending = false;
    for (int i = 0; i < ns.placement_size(); i++)
      if (ns.placement(i).node_id() != self_ && JoinedEpoch(ns, i) > 0) substitute_pending = true;
    if (substitute_pending) {
      std::string name = ns.name();
      Enqueue(name, [this, name] { RepairJob(name); });
    }
  }
}

}  // namespace rpmp

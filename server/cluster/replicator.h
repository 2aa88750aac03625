// Replicator: cluster-mode WriteCoordinator of one rpmp-server (see docs/cluster.md).
//
// For each namespace it caches the placement from the proxy and checks that this
// node is the primary (proto/placement.h). Writes and deletes of one namespace run
// one after another on the same worker thread (namespaces are hashed onto workers):
// commit locally, then send the record to every other usable member through a
// ReplicaLink, one record at a time, so every replica commits in the same order and
// holds byte-identical records. The client is answered once RequiredCopies() copies
// exist and every member of the proxy's in-sync set holds the record (a member that
// missed it is removed from that set first); members out of sync are repaired
// (diff-copied, repair.cc) before they receive anything else, then added back.
// Members out of the in-sync set are repaired as soon as a placement change is seen
// (ScanSoon()). Writes start and are acknowledged only under the node's lease.
//
// Threads: Submit*/ScanSoon/Forget from any thread; work runs on the workers and one
// scanner thread. Start once, Stop once (fails queued work with Unavailable). Work
// submitted before Start (the server serves before cluster mode starts) waits in its
// queue until Start, or runs in Stop.
#pragma once

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <deque>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "link/replica_link.h"
#include "proto/proxy_client.h"
#include "server/cluster/write_coordinator.h"

namespace rpmp {

struct ReplicatorOptions {
  uint32_t workers = 4;
  // How long a write may wait for enough copies (e.g. for a dead member's
  // substitution) before it fails with Unavailable.
  std::chrono::milliseconds write_timeout{10000};
  ReplicaLinkOptions link;  // sessions with other servers
};

class Replicator : public WriteCoordinator {
 public:
  Replicator(Store* store, ProxyClient* proxy, uint64_t self_id, ReplicatorOptions options);
  ~Replicator() override;

  void Start();
  void Stop();

  void SubmitWrite(const WriteSpec& spec, Reservation* reservation, DoneFn done) override;
  void SubmitDelete(const std::string& ns, const std::string& key, const WriteId& id, DoneFn done) override;
  void SubmitDuplicate(const WriteSpec& spec, DoneFn done) override;
  Status CheckReplicaFrame(const std::string& ns, bool has_fence, uint64_t epoch, uint64_t primary) override;
  // Placements may have changed (epoch moved): refetch and repair substitutes.
  void ScanSoon();
  // The namespace was deleted: drop what is cached about it.
  void Forget(const std::string& ns);
  // Set before Start: whether this node holds a primary lease (from the heartbeat
  // agent; may wait briefly for a renewal). Without one the node neither starts nor
  // acknowledges writes.
  void SetLeaseCheck(std::function<bool()> lease_valid) { lease_valid_ = std::move(lease_valid); }
  // Set before Start: `check(ns, length)` is OK, or the error (ResourceExhausted) that
  // refuses a new put or append of ns because it would pass a byte quota
  // (docs/cluster.md "Quotas"); `written(ns, length)` is told of each write this
  // primary committed. Deletes and retries of committed writes are never refused.
  void SetQuotaCheck(std::function<Status(const std::string&, uint64_t)> check,
                     std::function<void(const std::string&, uint64_t)> written) {
    quota_check_ = std::move(check);
    quota_written_ = std::move(written);
  }
  // Set before Start: the session quotas the heartbeat agent holds (SessionQuotaFor).
  void SetSessionQuota(std::function<uint32_t(const std::string&, std::string*)> lookup) {
    session_quota_ = std::move(lookup);
  }
  uint32_t SessionQuotaFor(const std::string& tenant_prefix, std::string* quota_prefix) const override {
    return session_quota_ ? session_quota_(tenant_prefix, quota_prefix) : 0;
  }
  Status CheckRead(const std::string& ns) override;  // read_fence.cc

 private:
  friend class ReplicatorTestPeer;  // fence_test.cc: drives NoteEpoch and the first scan

  struct NsState {
    bool have = false, stale = true;
    v1::Namespace placement;
    std::set<uint64_t> synced;  // members known to hold exactly our records
  };
  struct Worker {
    std::mutex mu;
    std::condition_variable cv;
    std::deque<std::function<void()>> jobs;
    std::thread thread;
  };

  void Enqueue(const std::string& ns, std::function<void()> job);
  void WorkerLoop(Worker* w);
  void RunLeftJobs(Worker* w);  // Stop, for a worker whose thread never started
  void ScanLoop();
  void ScanOnce();

  std::shared_ptr<NsState> StateOf(const std::string& ns);
  // Loads the placement when stale (or `force`); NotFound for unknown namespaces.
  Status Refresh(const std::string& ns, NsState* s, bool force);
  // FailedPrecondition unless this node is the namespace's primary.
  Status CheckPrimary(const std::string& ns, NsState* s);
  // Brings every usable member up to date with `apply` already done locally;
  // `send` forwards the one operation to an in-sync member. Counts copies; before it
  // answers Ok every in-sync member that did not get the operation has been removed
  // from the in-sync set at the proxy. Unavailable without a lease.
  Status Replicate(const std::string& ns, NsState* s,
                   const std::function<Status(ReplicaLink*)>& send);
  StatusOr<std::shared_ptr<ReplicaLink>> LinkFor(const v1::Replica& member);
  void DropLink(uint64_t node_id);

  // repair.cc: brings placement member `index` (behind `link`) to exactly our
  // records of ns and adds it to the in-sync set.
  Status RepairMember(const std::string& ns, NsState* s, int index, ReplicaLink* link);
  // Asks the proxy to add/remove `node` to/from ns's in-sync set; updates s->placement.
  Status SetMemberInSync(const std::string& ns, NsState* s, uint64_t node, bool in_sync);
  bool LeaseValid() const { return !lease_valid_ || lease_valid_(); }
  // Our fence for frames of ns (the epoch of the placement we act on).
  ReplicaFence FenceOf(const NsState* s) const { return {s->placement.epoch(), self_}; }
  // Remembers the newest (epoch, primary) seen for ns, for CheckReplicaFrame, and
  // whether this node may serve reads of ns at that epoch (read_fence.cc).
  void NoteEpoch(const v1::Namespace& ns);
  // read_fence.cc; caller holds mu_: records whether client reads of ns are served
  // (unreadable_), and asks the scanner for a pass (coalesced).
  void SetReadableLocked(const std::string& ns, bool readable);
  void WantScanLocked();
  void RepairJob(const std::string& ns);
  // repair.cc: a scan queues at most one job (repair or drop) per namespace.
  bool QueueScanJobOnce(const std::string& ns);
  void ScanJobStarts(const std::string& ns);
  // removed_copy.cc: this node was substituted out of ns and every member of ns is
  // in sync, so its copy is garbage: drops it (on ns's worker) unless a newer epoch
  // of ns was seen meanwhile. Replica frames of ns are refused while it is dropped.
  void DropRemovedCopy(const std::string& ns);
  // DropRemovedCopy's two steps around the store's delete: BeginDrop marks ns as being
  // dropped (replica frames and reads refused); false when a newer epoch than `epoch`
  // was seen or a drop is under way. EndDrop records it dropped at `epoch` when the copy
  // is `gone`, else lets reads have it again.
  bool BeginDrop(const std::string& ns, uint64_t epoch);
  void EndDrop(const std::string& ns, uint64_t epoch, bool gone);
  // Whether ns (as the proxy lists it) is a removed copy that this node still holds.
  bool HoldsRemovedCopy(const v1::Namespace& ns);
  // Caller holds mu_: ns's copy counts as dropped no more when it was dropped at an
  // epoch below `epoch` (0: whatever the epoch, e.g. ns was deleted).
  void UndropLocked(const std::string& ns, uint64_t epoch);

  void RunWrite(const WriteSpec& spec, Reservation* r, const DoneFn& done);
  void RunDelete(const std::string& ns, const std::string& key, const WriteId& id, const DoneFn& done);
  void RunDuplicate(const WriteSpec& spec, const DoneFn& done);

  Store* store_;
  ProxyClient* proxy_;
  const uint64_t self_;
  ReplicatorOptions options_;
  std::function<bool()> lease_valid_;
  std::function<Status(const std::string&, uint64_t)> quota_check_;
  std::function<uint32_t(const std::string&, std::string*)> session_quota_;
  std::function<void(const std::string&, uint64_t)> quota_written_;
  std::vector<std::unique_ptr<Worker>> workers_;
  bool stopping_ = false;  // guarded by mu_

  mutable std::mutex mu_;  // guards ns_, links_, scan flags and jobs, fences_, dropping_, dropped_, unreadable_
  std::map<std::string, std::shared_ptr<NsState>> ns_;
  std::map<uint64_t, std::shared_ptr<ReplicaLink>> links_;
  std::map<uint64_t, std::string> link_endpoints_;
  struct Fence {
    uint64_t epoch = 0, primary = 0;  // primary 0 = unknown / none usable
  };
  std::map<std::string, Fence> fences_;  // newest epoch seen per namespace
  std::set<std::string> dropping_;        // copies being dropped: replica frames refused
  std::map<std::string, uint64_t> dropped_;  // copies dropped, at that placement epoch
  std::atomic<size_t> dropped_count_{0};   // dropping_ + dropped_ entries (reads skip the lock at 0)
  // Namespaces whose newest known epoch does not count this node in sync (it is an
  // out-of-sync member, or was substituted out, or learnt the epoch from a replica
  // frame only): client reads are refused until a placement says otherwise.
  std::set<std::string> unreadable_;
  std::atomic<size_t> unreadable_count_{0};  // unreadable_.size() (reads skip the lock at 0)
  std::atomic<bool> scanned_{false};         // a scan read every placement since the start
  std::set<std::string> scan_jobs_queued_;  // namespaces with a repair or drop queued
  bool scan_wanted_ = true;
  std::condition_variable scan_cv_;
  std::thread scanner_;
};

}  // namespace rpmp

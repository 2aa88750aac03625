// Replicator: queues, placement cache, primary check and the replication of one
// write or delete to the other members. Repair is in repair.cc.
#include "server/cluster/replicator.h"

#include <functional>

#include "common/config_util.h"
#include "common/log.h"
#include "common/thread_name.h"
#include "proto/placement.h"
#include "server/server_metrics.h"

namespace rpmp {

// The queues exist from construction: the server serves (and may submit writes)
// before ClusterMode starts the threads; such work waits in its queue until Start.
Replicator::Replicator(Store* store, ProxyClient* proxy, uint64_t self_id, ReplicatorOptions options)
    : store_(store), proxy_(proxy), self_(self_id), options_(options) {
  uint32_t n = options_.workers == 0 ? 1 : options_.workers;
  for (uint32_t i = 0; i < n; i++) workers_.push_back(std::make_unique<Worker>());
}

Replicator::~Replicator() { Stop(); }

void Replicator::Start() {
  for (auto& owned : workers_) {
    Worker* w = owned.get();
    w->thread = std::thread([this, w] {
      NameThisThread("rpmp-replicate");
      WorkerLoop(w);
    });
  }
  scanner_ = std::thread([this] {
    NameThisThread("rpmp-repl-scan");
    ScanLoop();
  });
}

void Replicator::Stop() {
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (stopping_) return;
    stopping_ = true;
  }
  scan_cv_.notify_all();
  for (auto& w : workers_) {
    {
      std::lock_guard<std::mutex> lock(w->mu);
    }
    w->cv.notify_all();
  }
  for (auto& w : workers_) {
    if (w->thread.joinable()) w->thread.join();
    else RunLeftJobs(w.get());  // never started
  }
  if (scanner_.joinable()) scanner_.join();
}

void Replicator::RunLeftJobs(Worker* w) {
  std::deque<std::function<void()>> left;
  {
    std::lock_guard<std::mutex> lock(w->mu);
    left.swap(w->jobs);
  }
  for (auto& job : left) job();  // each answers its caller (no lease: Unavailable)
}

void Replicator::Enqueue(const std::string& ns, std::function<void()> job) {
  Worker* w = workers_[std::hash<std::string>()(ns) % workers_.size()].get();
  {
    std::lock_guard<std::mutex> lock(w->mu);
    w->jobs.push_back(std::move(job));
  }
  w->cv.notify_one();
}

void Replicator::WorkerLoop(Worker* w) {
  while (true) {
    std::function<void()> job;
    {
      std::unique_lock<std::mutex> lock(w->mu);
      w->cv.wait_for(lock, std::chrono::milliseconds(200), [&] { return !w->jobs.empty(); });
      bool stop;
      {
        std::lock_guard<std::mutex> l2(mu_);
        stop = stopping_;
      }
      if (w->jobs.empty()) {
        if (stop) return;
        continue;
      }
      job = std::move(w->jobs.front());
      w->jobs.pop_front();
    }
    job();
  }
}

void Replicator::SubmitWrite(const WriteSpec& spec, Reservation* reservation, DoneFn done) {
  Enqueue(spec.ns, [this, spec, reservation, done] { RunWrite(spec, reservation, done); });
}

void Replicator::SubmitDelete(const std::string& ns, const std::string& key, const WriteId& id, DoneFn done) {
  Enqueue(ns, [this, ns, key, id, done] { RunDelete(ns, key, id, done); });
}

void Replicator::SubmitDuplicate(const WriteSpec& spec, DoneFn done) {
  Enqueue(spec.ns, [this, spec, done] { RunDuplicate(spec, done); });
}

void Replicator::ScanSoon() {
  {
    std::lock_guard<std::mutex> lock(mu_);
    scan_wanted_ = true;
    for (auto& [name, s] : ns_) s->stale = true;
  }
  scan_cv_.notify_all();
}

void Replicator::Forget(const std::string& ns) {
  std::lock_guard<std::mutex> lock(mu_);
  ns_.erase(ns);
  UndropLocked(ns, 0);  // deleted: a new one starts afresh
  SetReadableLocked(ns, true);
}

std::shared_ptr<Replicator::NsState> Replicator::StateOf(const std::string& ns) {
  std::lock_guard<std::mutex> lock(mu_);
  std::shared_ptr<NsState>& s = ns_[ns];
  if (!s) s = std::make_shared<NsState>();
  return s;
}

Status Replicator::Refresh(const std::string& ns, NsState* s, bool force) {
  bool stale;
  {
    std::lock_guard<std::mutex> lock(mu_);
    stale = s->stale;
    s->stale = false;
  }
  if (s->have && !stale && !force) return Status::Ok();
  StatusOr<v1::Namespace> p = proxy_->GetPlacement(ns);
  if (!p.ok()) {
    std::lock_guard<std::mutex> lock(mu_);
    s->stale = true;
    if (p.status().IsNotFound())
      return Status::NotFound("namespace '" + ns + "' is not known to the proxy (create it first)");
    return p.status();
  }
  s->placement = std::move(p).value();
  s->have = true;
  NoteEpoch(s->placement);
  return Status::Ok();
}

void Replicator::NoteEpoch(const v1::Namespace& ns) {
  int p = PrimaryIndex(ns);
  bool member = false, in_sync = false;
  for (int i = 0; i < ns.placement_size(); i++)
    if (ns.placement(i).node_id() == self_) member = true, in_sync = InSync(ns, i);
  // Reads are served by an in-sync member, and by a node the namespace never placed
  // (it holds nothing of it); refused by an out-of-sync or substituted-out one.
  bool readable = member ? in_sync : !WasSubstitutedOut(ns, self_);
  std::lock_guard<std::mutex> lock(mu_);
  if (member) UndropLocked(ns.name(), ns.epoch());  // a member again: reads and its repair are served
  Fence& f = fences_[ns.name()];
  if (ns.epoch() < f.epoch) return;
  if (ns.epoch() > f.epoch || f.primary == 0) f = {ns.epoch(), p >= 0 ? ns.placement(p).node_id() : 0};
  SetReadableLocked(ns.name(), readable);  // read_fence.cc
}

Status Replicator::CheckReplicaFrame(const std::string& ns, bool has_fence, uint64_t epoch, uint64_t primary) {
  if (!has_fence) return Status::Ok();  // a primary of an older release
  std::lock_guard<std::mutex> lock(mu_);
  if (dropping_.count(ns))
    return Status(StatusCode::kFailedPrecondition, "replica frame for namespace '" + ns +
                                                       "' refused: this node is dropping its copy (substituted out)");
  Fence& f = fences_[ns];
  if (epoch < f.epoch)
    return Status(StatusCode::kFailedPrecondition, "replica frame for namespace '" + ns + "' at epoch " +
                                                       std::to_string(epoch) + " refused: epoch " +
                                                       std::to_string(f.epoch) + " is newer");
  if (epoch == f.epoch && f.primary != 0 && primary != f.primary)
    return Status(StatusCode::kFailedPrecondition, "replica frame for namespace '" + ns + "' from node " +
                                                       std::to_string(primary) + " refused: the primary of epoch " +
                                                       std::to_string(epoch) + " is " + std::to_string(f.primary));
  if (primary == self_) return Status(StatusCode::kFailedPrecondition, "replica frame from this node itself");
  if (epoch > f.epoch) {
    f = {epoch, primary};
    // Whether this node is in sync at the new epoch (or is being repaired) is unknown
    // until a placement says: reads wait for the scan (read_fence.cc).
    SetReadableLocked(ns, false);
    WantScanLocked();
  }
  UndropLocked(ns, epoch);  // a member again (a newer placement): its primary repairs it
  return Status::Ok();
}

Status Replicator::CheckPrimary(const std::string& ns, NsState* s) {
  for (int attempt = 0; attempt < 2; attempt++) {
    RPMP_RETURN_IF_ERROR(Refresh(ns, s, attempt > 0));
    int p = PrimaryIndex(s->placement);
    if (p >= 0 && s->placement.placement(p).node_id() == self_) return Status::Ok();
    if (attempt == 1) {
      std::string who = p < 0 ? "none is usable"
                              : "it is node " + NodeIdHex(s->placement.placement(p).node_id()) +
                                    " at " + s->placement.placement(p).endpoint();
      return Status(StatusCode::kFailedPrecondition,
                    "this node is not the primary of namespace '" + ns + "' (" + who + ", epoch " +
                        std::to_string(s->placement.epoch()) + "): refresh the placement");
    }
  }
  return Status::Internal("unreachable");
}

StatusOr<std::shared_ptr<ReplicaLink>> Replicator::LinkFor(const v1::Replica& member) {
  {
    std::lock_guard<std::mutex> lock(mu_);
    auto it = links_.find(member.node_id());
    if (it != links_.end() && link_endpoints_[member.node_id()] == member.endpoint()) return it->second;
  }
  RPMP_ASSIGN_OR_RETURN(std::unique_ptr<ReplicaLink> link, ReplicaLink::Open(member.endpoint(), options_.link));
  if (link->node_id() != member.node_id())
    return Status::Unavailable("server at " + member.endpoint() + " is no longer node " +
                               NodeIdHex(member.node_id()));
  std::shared_ptr<ReplicaLink> shared(std::move(link));
  std::lock_guard<std::mutex> lock(mu_);
  links_[member.node_id()] = shared;
  link_endpoints_[member.node_id()] = member.endpoint();
  return shared;
}

void Replicator::DropLink(uint64_t node_id) {
  std::lock_guard<std::mutex> lock(mu_);
  links_.erase(node_id);
}

Status Replicator::Replicate(const std::string& ns, NsState* s,
                             const std::function<Status(ReplicaLink*)>& send) {
  auto deadline = std::chrono::steady_clock::now() + options_.write_timeout;
  std::set<uint64_t> holders = {self_};
  std::chrono::milliseconds backoff(50);
  Status last;
  while (true) {
    if (!LeaseValid()) return Status::Unavailable("namespace '" + ns + "': this node's primary lease expired");
    for (int i = 0; i < s->placement.placement_size(); i++) {
      const v1::Replica m = s->placement.placement(i);  // a copy: repair may replace s->placement
      if (m.state() == v1::NODE_STATE_DEAD || holders.count(m.node_id())) continue;
      StatusOr<std::shared_ptr<ReplicaLink>> link = LinkFor(m);
      Status st = link.status();
      if (st.ok()) {
        bool in_sync = s->synced.count(m.node_id()) > 0 && InSync(s->placement, i);
        // A member we are not sure of is diff-repaired (which includes this
        // operation), so its records keep our order.
        st = in_sync ? send(link->get()) : RepairMember(ns, s, i, link->get());
      }
      if (st.ok()) {
        holders.insert(m.node_id());
        s->synced.insert(m.node_id());
      } else {
        last = st;
        if (ReplicationMetrics* rm = ReplicationHooks()) rm->replica_misses->Add();
        s->synced.erase(m.node_id());
        DropLink(m.node_id());
        RPMP_LOG_WARN("namespace %s: member %016llx at %s missed an update: %s", ns.c_str(),
                      static_cast<unsigned long long>(m.node_id()), m.endpoint().c_str(),
                      st.ToString().c_str());
      }
    }
    if (ReplicationMetrics* rm = ReplicationHooks(); rm && holders.size() >= RequiredCopies(s->placement))
      rm->replicate_seconds->Observe(std::chrono::duration<double>(
          std::chrono::steady_clock::now() - (deadline - options_.write_timeout)).count());
    if (holders.size() >= RequiredCopies(s->placement)) {
      // Invariant 3: every in-sync member holds what we acknowledge.
      Status dropped;
      for (int i = 0; i < s->placement.placement_size() && dropped.ok(); i++) {
        uint64_t id = s->placement.placement(i).node_id();
        if (!holders.count(id) && InSync(s->placement, i)) dropped = SetMemberInSync(ns, s, id, false);
      }
      if (dropped.ok()) {
        if (!LeaseValid()) return Status::Unavailable("namespace '" + ns + "': this node's primary lease expired");
        return Status::Ok();
      }
      last = dropped;
    }
    if (std::chrono::steady_clock::now() + backoff > deadline) {
      // A member out of space is answered as such (not retried by clients as a failover).
      StatusCode code = last.code() == StatusCode::kResourceExhausted ? last.code() : StatusCode::kUnavailable;
      return Status(code, "namespace '" + ns + "': only " + std::to_string(holders.size()) + " of " +
                              std::to_string(RequiredCopies(s->placement)) +
                              " required copies written; last error: " + last.ToString());
    }
    std::this_thread::sleep_for(backoff);
    backoff = std::min(backoff * 2, std::chrono::milliseconds(400));
    Status r = Refresh(ns, s, true);  // maybe the dead member has been substituted
    if (!r.ok()) return r;
    int p = PrimaryIndex(s->placement);
    if (p < 0 || s->placement.placement(p).node_id() != self_)
      return Status(StatusCode::kFailedPrecondition, "namespace '" + ns + "': no longer the primary");
  }
}

void Replicator::RunWrite(const WriteSpec& spec, Reservation* r, const DoneFn& done) {
  std::shared_ptr<NsState> s = StateOf(spec.ns);
  Status st = LeaseValid() ? CheckPrimary(spec.ns, s.get())
                           : Status::Unavailable("this node holds no primary lease (no recent heartbeat reply)");
  // Refused before anything is committed: a write over quota leaves no record anywhere.
  if (st.ok() && quota_check_) st = quota_check_(spec.ns, spec.length);
  if (!st.ok()) {
    store_->Abort(r);
    return done(st);
  }
  // Copied before the commit: once committed, the reserved memory can be released
  // under us (a namespace deletion from the heartbeat thread).
  std::string data(r->payload(), spec.length);
  st = store_->Commit(r);
  if (!st.ok()) return done(st);
  if (quota_written_) quota_written_(spec.ns, spec.length);
  st = Replicate(spec.ns, s.get(), [&](ReplicaLink* link) {
    return link->Write(spec.kind, spec.ns, spec.key, spec.tag, data.data(), spec.length,
                       spec.crc, spec.id, FenceOf(s.get()));
  });
  done(st);
}

void Replicator::RunDelete(const std::string& ns, const std::string& key, const WriteId& id, const DoneFn& done) {
  std::shared_ptr<NsState> s = StateOf(ns);
  Status st = LeaseValid() ? CheckPrimary(ns, s.get())
                           : Status::Unavailable("this node holds no primary lease (no recent heartbeat reply)");
  if (!st.ok()) return done(st);
  Status local = store_->Delete(ns, key, id);
  if (!local.ok() && !local.IsNotFound()) return done(local);
  st = Replicate(ns, s.get(), [&](ReplicaLink* link) { return link->Delete(ns, key, id, FenceOf(s.get())); });
  done(st.ok() ? local : st);
}

// A retry of a write this primary already committed (maybe never replicated: the
// first attempt timed out). Members not in sync are repaired by Replicate, which
// brings them this record in order; in-sync members get it again and deduplicate it.
void Replicator::RunDuplicate(const WriteSpec& spec, const DoneFn& done) {
  std::shared_ptr<NsState> s = StateOf(spec.ns);
  Status st = LeaseValid() ? CheckPrimary(spec.ns, s.get())
                           : Status::Unavailable("this node holds no primary lease (no recent heartbeat reply)");
  if (!st.ok()) return done(st);
  std::string data;
  bool found = false;
  StatusOr<ObjectView> view = store_->Get(spec.ns, spec.key);
  if (view.ok()) {
    for (const RecordInfo& r : view->records) {
      if (r.write_id != spec.id) continue;
      data.assign(r.data, r.length);
      found = true;
    }
  }
  st = Replicate(spec.ns, s.get(), [&](ReplicaLink* link) {
    if (!found) return Status::Ok();  // superseded by a later put: nothing to resend
    return link->Write(spec.kind, spec.ns, spec.key, spec.tag, data.data(), data.size(),
                       spec.crc, spec.id, FenceOf(s.get()));
  });
  done(st);
}

}  // namespace rpmp

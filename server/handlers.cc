// Per-op request handlers of the server (see server.h). They run on the progress
// thread, except FinishWrite which runs on a commit thread. Each ends by calling
// Reply/ReplyError, or by posting RMA whose completion continues in OnRmaDone.
#include <algorithm>
#include <cstring>

#include "common/crc32c.h"
#include "common/log.h"
#include "server/server.h"
#include "server/slot.h"

namespace rpmp {
namespace {

constexpr size_t kListByteBudget = wire::kMaxFrame - 4096;

size_t MaxInline(const Fabric& f) { return std::min(f.traits().default_inline, wire::kMaxInline); }

}  // namespace

// A replica frame from a primary that is no longer one is refused (docs/cluster.md).
Status Server::CheckFence(const Slot* s) const {
  const wire::Request& q = s->req;
  if (coordinator_ == nullptr || !(q.h.flags & wire::kFlagReplica)) return Status::Ok();
  return coordinator_->CheckReplicaFrame(std::string(q.ns), q.h.flags & wire::kFlagFence, q.fence_epoch,
                                         q.fence_primary);
}

void Server::HandleWrite(Slot* s) {
  const wire::Request& q = s->req;
  if (Status f = CheckFence(s); !f.ok()) return ReplyError(s, f);
  WriteSpec spec;
  spec.ns = std::string(q.ns);
  spec.key = std::string(q.key);
  spec.kind = q.h.op == wire::Op::kPut ? WriteKind::kPut : WriteKind::kAppend;
  spec.tag = q.tag;
  spec.length = q.length;
  spec.crc = q.crc;
  spec.id = q.write_id;
  spec.install_id = (q.h.flags & wire::kFlagInstallId) != 0;  // the decoder allows it on replica frames only
  if (q.h.flags & wire::kFlagInline) {
    if (Crc32c(q.inline_data.data(), q.inline_data.size()) != q.crc)
      return ReplyError(s, Status::InvalidArgument("payload checksum does not match the frame's"));
  }
  StatusOr<Reservation> r = store_->Reserve(spec);
  if (!r.ok()) return ReplyError(s, r.status());
  s->reservation = std::move(r).value();
  // A retry of a write already committed here: nothing to transfer. The store's
  // Commit answers the first outcome; in cluster mode the coordinator first makes
  // sure the write reached min_replicas copies (docs/append-path.md).
  if (s->reservation.duplicate()) {
    Status st = store_->Commit(&s->reservation);
    s->reservation.Reset();
    if (st.ok() && Coordinated(s))
      return coordinator_->SubmitDuplicate(spec, [this, s](const Status& d) { d.ok() ? Reply(s) : ReplyError(s, d); });
    return st.ok() ? Reply(s) : ReplyError(s, st);
  }
  counters_.bytes_in.fetch_add(q.length, std::memory_order_relaxed);
  if (q.h.flags & wire::kFlagInline) {
    if (q.length > 0) std::memcpy(s->reservation.payload(), q.inline_data.data(), q.length);
    return CommitOrCoordinate(s);
  }
  s->rma_ops.resize(1);
  s->rma_ops[0].slot = s;
  s->rma_pending = 1;
  Status st = s->fabric->Read(&s->rma_ops[0].op, s->peer, s->reservation.payload(), q.length,
                            pool_mrs_[s->reservation.pool()]->desc(), q.rma.addr, q.rma.key);
  if (!st.ok()) {
    s->rma_pending = 0;
    store_->Abort(&s->reservation);
    return ReplyError(s, st);
  }
  WatchRma(s);
}

void Server::FinishWrite(Slot* s) {
  if (s->req.h.op != wire::Op::kWrite) return CommitOrCoordinate(s);
  store_->PersistRaw(s->raw, s->req.length);
  Reply(s);
}

bool Server::Coordinated(const Slot* s) const {
  return coordinator_ != nullptr && !(s->req.h.flags & wire::kFlagReplica);
}

void Server::CommitOrCoordinate(Slot* s) {
  if (!Coordinated(s)) {
    Status st = store_->Commit(&s->reservation);
    s->reservation.Reset();
    return st.ok() ? Reply(s) : ReplyError(s, st);
  }
  const wire::Request& q = s->req;
  WriteSpec spec;
  spec.ns = std::string(q.ns);
  spec.key = std::string(q.key);
  spec.kind = q.h.op == wire::Op::kPut ? WriteKind::kPut : WriteKind::kAppend;
  spec.tag = q.tag;
  spec.length = q.length;
  spec.crc = q.crc;
  spec.id = q.write_id;
  coordinator_->SubmitWrite(spec, &s->reservation, [this, s](const Status& st) {
    s->reservation.Reset();
    st.ok() ? Reply(s) : ReplyError(s, st);
  });
}

void Server::OnRmaDone(Slot* s, const Status& st) {
  if (s->abandoned) return EndAbandoned(s);  // past rma_timeout: nobody waits for it
  s->rma_deadline = std::chrono::steady_clock::time_point::max();  // its deadline no longer applies
  wire::Op op = s->req.h.op;
  bool inbound = op == wire::Op::kPut || op == wire::Op::kAppend || op == wire::Op::kWrite;
  if (!st.ok()) {
    if (s->reservation.valid()) store_->Abort(&s->reservation);
    return ReplyError(s, Status::Unavailable("data transfer with the client failed: " + st.message()));
  }
  if (!inbound) {
    s->view = ObjectView();  // unpin
    s->resp.outcome = wire::GetOutcome::kWrittenToRma;
    return Reply(s);
  }
  {
    std::lock_guard<std::mutex> lock(commit_mu_);
    commit_queue_.push_back(s);
  }
  commit_cv_.notify_one();
}

// A client read of a namespace this node cannot vouch for in cluster mode (it dropped
// its copy, or is not in sync as far as it knows): FailedPrecondition, and the client
// asks the proxy again (server/cluster/read_fence.cc).
Status Server::CheckRead(const Slot* s) const {
  // A primary's repair reads this member's copy (replica list/get_meta): never fenced.
  if (coordinator_ == nullptr || (s->req.h.flags & wire::kFlagReplica)) return Status::Ok();
  return coordinator_->CheckRead(std::string(s->req.ns));
}

void Server::HandleGet(Slot* s) {
  if (Status c = CheckRead(s); !c.ok()) return ReplyError(s, c);
  StatusOr<ObjectView> v = store_->Get(std::string(s->req.ns), std::string(s->req.key));
  if (!v.ok()) return ReplyError(s, v.status());
  s->view = std::move(v).value();
  const ObjectView& view = s->view;
  wire::Response& r = s->resp;
  r.total_length = view.total_length;
  r.record_count = static_cast<uint32_t>(view.records.size());
  if (view.records.size() <= wire::kMaxPageItems) {
    for (const RecordInfo& ri : view.records) r.records.push_back({0, ri.length, ri.crc, 0, 0, 0});
  }
  bool rma = s->req.h.flags & wire::kFlagRma;
  if (view.total_length <= MaxInline(*s->fabric)) {
    r.outcome = wire::GetOutcome::kInline;
    if (view.records.size() == 1) {
      r.inline_data = std::string_view(view.records[0].data, view.records[0].length);
    } else {  // concatenate into the receive buffer, no longer needed by the request
      size_t off = 0;
      for (const RecordInfo& ri : view.records) {
        std::memcpy(s->recv_buf + off, ri.data, ri.length);
        off += ri.length;
      }
      r.inline_data = std::string_view(s->recv_buf, off);
    }
    counters_.bytes_out.fetch_add(view.total_length, std::memory_order_relaxed);
    return Reply(s);
  }
  if (!rma || s->req.rma.length < view.total_length) {
    r.outcome = wire::GetOutcome::kNeedsBuffer;
    r.records.clear();
    return Reply(s);
  }
  s->rma_ops.resize(view.records.size());
  uint64_t dst = s->req.rma.addr;
  s->rma_pending = view.records.size() + 1;  // +1 until every write is posted
  for (size_t i = 0; i < view.records.size(); i++) {
    const RecordInfo& ri = view.records[i];
    if (ri.length == 0) { s->rma_pending--; continue; }
    s->rma_ops[i].slot = s;
    Status st = s->fabric->Write(&s->rma_ops[i].op, s->peer, ri.data, ri.length,
                               pool_mrs_[ri.pool]->desc(), dst, s->req.rma.key);
    if (!st.ok()) {
      s->rma_status = st;
      s->rma_pending -= view.records.size() - i;  // these will never complete
      break;
    }
    dst += ri.length;
  }
  counters_.bytes_out.fetch_add(view.total_length, std::memory_order_relaxed);
  if (--s->rma_pending == 0) return OnRmaDone(s, s->rma_status);
  WatchRma(s);
}

void Server::HandleGetMeta(Slot* s) {
  if (Status c = CheckRead(s); !c.ok()) return ReplyError(s, c);
  StatusOr<ObjectView> v = store_->Get(std::string(s->req.ns), std::string(s->req.key));
  if (!v.ok()) return ReplyError(s, v.status());
  const std::vector<RecordInfo>& recs = v->records;
  uint32_t max = s->req.max == 0 || s->req.max > wire::kMaxPageItems ? wire::kMaxPageItems : s->req.max;
  wire::Response& r = s->resp;
  r.total_length = v->total_length;
  r.record_count = static_cast<uint32_t>(recs.size());
  // Lists recs[i] with the key of the record's own segment: it reaches that segment of
  // this namespace and nothing else (docs/security.md).
  auto list = [&](const RecordInfo& ri) {
    const MemoryRegion* mr = SegmentKeys::RegionOf(ri.access);
    if (mr == nullptr) return false;
    r.records.push_back({ri.tag, ri.length, ri.crc, ri.pool, mr->RmaAddr(ri.data), mr->key(),
                         static_cast<uint32_t>(&ri - recs.data())});
    return true;
  };
  auto unregistered = [] { return Status::Internal("record's segment is not registered for remote reads"); };
  size_t i = s->req.start;
  if (!s->req.tag_filter.empty()) {  // only the records of these tags (e.g. a map range)
    std::vector<uint64_t>& tags = s->req.tag_filter;
    std::sort(tags.begin(), tags.end());
    for (; i < recs.size() && r.records.size() < max; i++) {
      if (!std::binary_search(tags.begin(), tags.end(), recs[i].tag)) continue;
      if (!list(recs[i])) return ReplyError(s, unregistered());
    }
    r.h.flags |= wire::kFlagTagFilter;
    r.next_start = static_cast<uint32_t>(i);
    r.more = i < recs.size();
    return Reply(s);
  }
  for (; i < recs.size() && r.records.size() < max; i++)
    if (!list(recs[i])) return ReplyError(s, unregistered());
  r.more = s->req.start + r.records.size() < recs.size();
  Reply(s);
}

void Server::HandleList(Slot* s) {
  if (Status c = CheckRead(s); !c.ok()) return ReplyError(s, c);
  size_t max = s->req.max == 0 || s->req.max > wire::kMaxPageItems ? wire::kMaxPageItems : s->req.max;
  StatusOr<ListPage> page = store_->List(std::string(s->req.ns), std::string(s->req.start_after), max);
  if (!page.ok()) return ReplyError(s, page.status());
  size_t bytes = 0;
  for (StoredKey& k : page->keys) {
    bytes += k.key.size() + 16;
    if (bytes > kListByteBudget) { s->resp.more = true; break; }
    s->resp.keys.push_back({std::move(k.key), k.total_length, k.records});
  }
  if (page->more) s->resp.more = true;
  Reply(s);
}

void Server::HandleStat(Slot* s) {
  StoreStats st = store_->Stats();
  wire::Response& r = s->resp;
  r.node_id = st.node_id;
  r.namespaces = st.namespaces;
  r.key_count = st.keys;
  r.record_total = st.records;
  r.live_bytes = st.live_bytes;
  for (const PoolStats& p : st.pools) r.pools.push_back({p.path, p.medium, p.capacity, p.used, p.free});
  if (s->req.h.flags & wire::kFlagStatCompaction) {
    CompactorStatus cs = compactor_->status();
    r.h.flags |= wire::kFlagStatCompaction;
    r.compaction = {st.dead_bytes, st.compacted_segments, st.compacted_records, st.compacted_bytes,
                    cs.steps, cs.last_run_unix_ms, cs.enabled, cs.running};
  }
  Reply(s);
}

void Server::HandleSimple(Slot* s) {
  Status st = CheckFence(s);
  if (!st.ok()) return ReplyError(s, st);
  switch (s->req.h.op) {
    case wire::Op::kDel:
      if (Coordinated(s)) {
        return coordinator_->SubmitDelete(std::string(s->req.ns), std::string(s->req.key), s->req.write_id,
                                          [this, s](const Status& st) { st.ok() ? Reply(s) : ReplyError(s, st); });
      }
      st = store_->Delete(std::string(s->req.ns), std::string(s->req.key), s->req.write_id);
      break;
    case wire::Op::kDeleteNs: st = store_->DeleteNamespace(std::string(s->req.ns)); break;
    case wire::Op::kBye: EndSession(s, s->req.h.session); break;
    default: st = Status::Unimplemented("op not served here"); break;
  }
  st.ok() ? Reply(s) : ReplyError(s, st);
}

}  // namespace rpmp

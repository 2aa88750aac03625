// Blocking key-value and raw-memory calls of ClientImpl (async forms in client_async.cc).
#include "client-cpp/src/client_impl.h"

#include <algorithm>
#include <cstring>
#include <thread>

#include "common/crc32c.h"

namespace rpmp {
namespace {

wire::Request KeyRequest(wire::Op op, const std::string& ns, const std::string& key) {
  wire::Request r;
  r.h.op = op;
  r.ns = ns;
  r.key = key;
  return r;
}

Status CheckNames(const std::string& ns, const std::string& key) {
  if (ns.empty() || ns.size() > wire::kMaxNamespace)
    return Status::InvalidArgument("namespace must be 1-255 bytes");
  if (key.empty() || key.size() > wire::kMaxKey)
    return Status::InvalidArgument("key must be 1-1024 bytes");
  return Status::Ok();
}

}  // namespace

Status VerifyRecords(const wire::Response& resp, const char* data, size_t len) {
  if (resp.records.size() != resp.record_count) return Status::Ok();  // too many to list
  size_t off = 0;
  for (size_t i = 0; i < resp.records.size(); i++) {
    const wire::RecordMeta& m = resp.records[i];
    if (m.length > len - off) return Status::DataLoss("record lengths exceed the object");
    if (Crc32c(data + off, m.length) != m.crc)
      return Status::DataLoss("checksum mismatch in record " + std::to_string(i));
    off += m.length;
  }
  return Status::Ok();
}

bool ClientImpl::MayRetry(Repeat repeat, const Status& st, bool sent, bool session_lost) {
  StatusCode code = st.code();
  // Never sent (no slot, no session, local send error): repeating cannot apply it twice.
  if (!sent) return code == StatusCode::kUnavailable || code == StatusCode::kDeadlineExceeded;
  // It may have reached the server and run there. Only a failure of the session
  // itself (server gone or silent) is ours to retry; an error the server answered
  // (e.g. Unavailable from a cluster primary short of replicas) is the caller's.
  if (!session_lost) return false;
  switch (repeat) {
    case Repeat::kWrite:  // the write id makes the server apply it at most once
      return code == StatusCode::kUnavailable || code == StatusCode::kDeadlineExceeded;
    case Repeat::kRead:   // not after a timeout: the old attempt may still fill the target
      return code == StatusCode::kUnavailable;
    case Repeat::kIfNotSent:  // may have been applied: the caller must know
      return false;
  }
  return false;
}

Connection::PollingScope::Mode ClientImpl::WaitMode() const {
  using Mode = Connection::PollingScope::Mode;
  if (options_.poll_for.count() > 0) return Mode::kSpin;
  return options_.caller_waits ? Mode::kLead : Mode::kOff;
}

void ClientImpl::Await(CallLatch& done, Connection::PollingScope* polling) {
  if (Pick()->OnProgressThread()) {
    // A blocking call from a completion callback (against Client's contract): this
    // thread is the one that would complete it, so it does the progress loop's work.
    polling->End();
    Pick()->ProgressUntil([&done] { return done.Ready(); });
  } else if (polling->leading()) {
    Pick()->DriveUntil([&done] { return done.Ready(); });
  } else if (polling->mode() == Connection::PollingScope::Mode::kSpin) {
    const auto until = std::chrono::steady_clock::now() + options_.poll_for;
    while (!done.Ready()) {
      if (Pick()->PollOnce() == 0 && std::chrono::steady_clock::now() > until) break;
    }
  }
  polling->End();  // the progress thread takes over if the reply is not in yet
  done.Wait();
}

Status ClientImpl::Call(wire::Request& req, std::shared_ptr<CallResult>* out, Repeat repeat,
                        std::shared_ptr<void> keepalive, std::chrono::milliseconds min_retry_for) {
  const auto give_up = std::chrono::steady_clock::now() + std::max(options_.retry_for, min_retry_for);
  std::chrono::milliseconds backoff(10);
  for (int attempt = 0;; attempt++) {
    auto result = std::make_shared<CallResult>();
    bool sent = false;
    Status session = Pick()->EnsureSession();
    if (!session.ok()) {
      result->status = session;
    } else {
      Connection::PollingScope polling(Pick(), WaitMode());
      sent = Pick()->Submit(req, [result](const Status& st, const wire::Response& r) {
        result->status = st;
        result->resp = r;
        result->inline_copy.assign(r.inline_data.data(), r.inline_data.size());
        result->resp.inline_data = result->inline_copy;
        result->done.Set();
      }, keepalive, &polling);
      Await(result->done, &polling);
    }
    // Refused because its session ended: the server did not run it, so it goes again
    // (on a new session) like a request that never left.
    if (result->resp.h.flags & wire::kFlagSessionEnded) sent = false;
    bool session_lost = Pick()->needs_hello();
    bool again = !result->status.ok() && MayRetry(repeat, result->status, sent, session_lost) &&
                 (attempt == 0 || std::chrono::steady_clock::now() + backoff < give_up);
    if (!again) {
      if (!result->status.ok() && sent && session_lost && repeat == Repeat::kIfNotSent)
        result->status = result->status.Annotate(
            "the session with rpmp-server at " + Pick()->server() +
            " may be lost; not repeated because the call may have run (the next call opens a new session)");
      if (out != nullptr) *out = result;
      return result->status;
    }
    if (attempt > 0) {  // the first retry goes at once (a fresh session may suffice)
      std::this_thread::sleep_for(backoff);
      backoff = std::min(backoff * 2, std::chrono::milliseconds(500));
    }
  }
}

StatusOr<Buffer> ClientImpl::AllocBuffer(size_t size) { return Pick()->buffers().Acquire(size); }

Status ClientImpl::AttachPayload(wire::Request* req, const void* data, size_t len,
                                 std::shared_ptr<Buffer>* staged) {
  if (len <= Pick()->max_inline()) {
    req->h.flags = wire::kFlagInline;
    req->inline_data = std::string_view(static_cast<const char*>(data), len);
    return Status::Ok();
  }
  RPMP_ASSIGN_OR_RETURN(Buffer b, AllocBuffer(len));
  std::memcpy(b.data(), data, len);
  *staged = std::make_shared<Buffer>(std::move(b));
  const MemoryRegion& mr = BufferPool::RegionOf(**staged);
  req->h.flags = wire::kFlagRma;
  req->rma = {mr.RmaAddr((*staged)->data()), mr.key(), len};
  return Status::Ok();
}

Status ClientImpl::Put(const std::string& ns, const std::string& key, const void* data, size_t len,
                       uint64_t tag) {
  return WriteSync(wire::Op::kPut, ns, key, data, len, tag, ids_.Next());
}

Status ClientImpl::Append(const std::string& ns, const std::string& key, const void* data,
                          size_t len, uint64_t tag) {
  return WriteSync(wire::Op::kAppend, ns, key, data, len, tag, ids_.Next());
}

Status ClientImpl::WriteWithId(WriteKind kind, const std::string& ns, const std::string& key,
                               const void* data, size_t len, uint64_t tag, WriteId id) {
  if (!id.valid()) return Status::InvalidArgument("write id must have a nonzero writer and seq");
  return WriteSync(OpOf(kind), ns, key, data, len, tag, id);
}

Status ClientImpl::WriteSync(wire::Op op, const std::string& ns, const std::string& key,
                             const void* data, size_t len, uint64_t tag, WriteId id) {
  RPMP_RETURN_IF_ERROR(CheckNames(ns, key));
  wire::Request req = KeyRequest(op, ns, key);
  req.tag = tag;
  req.length = len;
  req.crc = Crc32c(data, len);
  std::shared_ptr<Buffer> staged;
  RPMP_RETURN_IF_ERROR(AttachPayload(&req, data, len, &staged));
  req.h.flags |= wire::kFlagWriteId;
  req.write_id = id;
  return Call(req, nullptr, Repeat::kWrite, staged);
}

Status ClientImpl::Get(const std::string& ns, const std::string& key, Buffer* out) {
  RPMP_RETURN_IF_ERROR(CheckNames(ns, key));
  for (int attempt = 0; attempt < 5; attempt++) {
    wire::Request req = KeyRequest(wire::Op::kGet, ns, key);
    auto target = std::make_shared<Buffer>(std::move(*out));  // quarantined if we time out
    if (target->valid() && target->capacity() > Pick()->max_inline()) {
      const MemoryRegion& mr = BufferPool::RegionOf(*target);
      req.h.flags = wire::kFlagRma;
      req.rma = {mr.RmaAddr(target->data()), mr.key(), target->capacity()};
    }
    std::shared_ptr<CallResult> result;
    Status st = Call(req, &result, Repeat::kRead, target);
    if (st.code() == StatusCode::kDeadlineExceeded) return st;
    *out = std::move(*target);
    RPMP_RETURN_IF_ERROR(st);
    const wire::Response& resp = result->resp;
    switch (resp.outcome) {
      case wire::GetOutcome::kInline:
        if (!out->valid() || out->capacity() < resp.inline_data.size()) {
          RPMP_ASSIGN_OR_RETURN(*out, AllocBuffer(resp.inline_data.size()));
        }
        if (!resp.inline_data.empty()) std::memcpy(out->data(), resp.inline_data.data(), resp.inline_data.size());
        out->set_size(resp.inline_data.size());
        return options_.verify_checksums ? VerifyRecords(resp, out->data(), out->size()) : Status::Ok();
      case wire::GetOutcome::kWrittenToRma:
        out->set_size(resp.total_length);
        return options_.verify_checksums ? VerifyRecords(resp, out->data(), out->size()) : Status::Ok();
      case wire::GetOutcome::kNeedsBuffer:
        RPMP_ASSIGN_OR_RETURN(*out, AllocBuffer(resp.total_length));
        break;
    }
  }
  return Status(StatusCode::kAborted, "object '" + key + "' kept growing while being read");
}

StatusOr<std::string> ClientImpl::Get(const std::string& ns, const std::string& key) {
  Buffer b;
  RPMP_RETURN_IF_ERROR(Get(ns, key, &b));
  return std::string(b.data() == nullptr ? "" : std::string(b.data(), b.size()));
}

StatusOr<ObjectMeta> ClientImpl::GetMeta(const std::string& ns, const std::string& key) {
  return ListRecords(ns, key, {}, std::chrono::milliseconds(0));
}

// The portable form, for clients whose server cannot filter: list all, keep the tags'.
StatusOr<ObjectMeta> Client::GetMetaOfTags(const std::string& ns, const std::string& key,
                                           const std::vector<uint64_t>& tags) {
  RPMP_ASSIGN_OR_RETURN(ObjectMeta meta, GetMeta(ns, key));
  if (tags.empty()) return meta;
  std::vector<uint64_t> sorted = tags;
  std::sort(sorted.begin(), sorted.end());
  std::vector<RecordRef> kept;
  for (const RecordRef& r : meta.records)
    if (std::binary_search(sorted.begin(), sorted.end(), r.tag)) kept.push_back(r);
  meta.records = std::move(kept);
  return meta;
}

StatusOr<ObjectMeta> ClientImpl::GetMetaOfTags(const std::string& ns, const std::string& key,
                                               const std::vector<uint64_t>& tags) {
  if (tags.size() > wire::kMaxFilterTags) return Client::GetMetaOfTags(ns, key, tags);
  return ListRecords(ns, key, tags, std::chrono::milliseconds(0));
}

StatusOr<ObjectMeta> ClientImpl::ListRecords(const std::string& ns, const std::string& key,
                                             const std::vector<uint64_t>& tags,
                                             std::chrono::milliseconds min_retry_for) {
  RPMP_RETURN_IF_ERROR(CheckNames(ns, key));
  const bool filtered = !tags.empty();
  ObjectMeta meta;
  auto origin = std::make_shared<const RecordOrigin>(RecordOrigin{ns, key});
  uint32_t start = 0;  // record index (in the whole list) the next page starts from
  while (true) {
    wire::Request req = KeyRequest(wire::Op::kGetMeta, ns, key);
    if (filtered) {
      req.h.flags |= wire::kFlagTagFilter;
      req.tag_filter = tags;
    }
    req.start = start;
    req.max = wire::kMaxPageItems;
    std::shared_ptr<CallResult> result;
    RPMP_RETURN_IF_ERROR(Call(req, &result, Repeat::kRead, nullptr, min_retry_for));
    const wire::Response& resp = result->resp;
    if (filtered && (!(resp.h.flags & wire::kFlagTagFilter) || (resp.more && resp.next_start <= start)))
      return Status::Internal("rpmp-server at " + Pick()->server() + " answered a filtered get_meta "
                              "without the filter's paging (an older server?)");
    meta.total_length = resp.total_length;
    for (size_t i = 0; i < resp.records.size(); i++) {
      const wire::RecordMeta& m = resp.records[i];
      uint32_t index = filtered ? m.index : start + static_cast<uint32_t>(i);
      meta.records.push_back({m.tag, m.length, m.crc, m.pool, m.rma_addr, m.rma_key, 0, origin, index});
    }
    if (!resp.more || (!filtered && resp.records.empty())) return meta;
    start = filtered ? resp.next_start : start + static_cast<uint32_t>(resp.records.size());
  }
}

Status ClientImpl::ReadRecord(const RecordRef& r, Buffer* dst, size_t dst_offset) {
  auto result = std::make_shared<CallResult>();
  Connection::PollingScope polling(Pick(), WaitMode());
  polling.Begin();  // a one-sided read takes no call slot: nothing to wait for first
  ReadRecordAsync(r, dst, dst_offset, [result](Status st) {
    result->status = std::move(st);
    result->done.Set();
  });
  Await(result->done, &polling);
  return result->status;
}

Status ClientImpl::Delete(const std::string& ns, const std::string& key) {
  return DeleteWithId(ns, key, ids_.Next());
}

Status ClientImpl::DeleteWithId(const std::string& ns, const std::string& key, WriteId id) {
  RPMP_RETURN_IF_ERROR(CheckNames(ns, key));
  if (!id.valid()) return Status::InvalidArgument("write id must have a nonzero writer and seq");
  wire::Request req = KeyRequest(wire::Op::kDel, ns, key);
  req.h.flags |= wire::kFlagWriteId;
  req.write_id = id;
  return Call(req, nullptr, Repeat::kWrite);
}

StatusOr<std::vector<KeyInfo>> ClientImpl::List(const std::string& ns, const std::string& start_after,
                                                size_t max) {
  std::vector<KeyInfo> out;
  std::string after = start_after;
  while (max == 0 || out.size() < max) {
    wire::Request req;
    req.h.op = wire::Op::kList;
    req.ns = ns;
    req.start_after = after;
    req.max = max == 0 ? wire::kMaxPageItems : static_cast<uint32_t>(std::min<size_t>(max - out.size(), wire::kMaxPageItems));
    std::shared_ptr<CallResult> result;
    RPMP_RETURN_IF_ERROR(Call(req, &result, Repeat::kRead));
    wire::Response& resp = result->resp;
    for (wire::KeyEntry& k : resp.keys) out.push_back({k.key, k.total_length, k.records});
    if (!resp.more || resp.keys.empty()) break;
    after = out.back().key;
  }
  return out;
}

Status ClientImpl::DeleteNamespace(const std::string& ns) {
  wire::Request req;
  req.h.op = wire::Op::kDeleteNs;
  req.ns = ns;
  // Not repeated once sent: a second delete could hit a namespace created meanwhile.
  return Call(req, nullptr, Repeat::kIfNotSent);
}

StatusOr<ServerStats> ClientImpl::Stat() {
  wire::Request req;
  req.h.op = wire::Op::kStat;
  req.h.flags = wire::kFlagStatCompaction;
  std::shared_ptr<CallResult> result;
  RPMP_RETURN_IF_ERROR(Call(req, &result, Repeat::kRead));
  const wire::Response& r = result->resp;
  ServerStats s{r.node_id, r.namespaces, r.key_count, r.record_total, r.live_bytes, {}, {}};
  for (const wire::PoolEntry& p : r.pools) s.pools.push_back({p.path, p.medium, p.capacity, p.used, p.free});
  const wire::CompactionEntry& c = r.compaction;
  s.compaction = {c.enabled, c.running, c.dead_bytes, c.segments, c.records, c.bytes, c.steps, c.last_run_unix_ms};
  return s;
}

}  // namespace rpmp

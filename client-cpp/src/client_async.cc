// Asynchronous key-value calls of ClientImpl, and the future wrappers of Client.
// Callbacks run on the connection's progress thread.
#include <cstring>
#include <thread>

#include "client-cpp/src/client_impl.h"
#include "common/crc32c.h"

namespace rpmp {
namespace {

// How long a stale read's metadata refetch may retry on a new session: long enough for
// the tcp provider to re-establish a connection it dropped over a revoked key.
constexpr std::chrono::milliseconds kRefetchRetryFor{2000};

}  // namespace

// One asynchronous put or append, kept so it can be sent again on a new session (its
// bytes are the caller's, untouched until `done` runs; ns and key are copies).
struct ClientImpl::AsyncWrite {
  wire::Op op;
  std::string ns, key;
  uint64_t tag = 0;
  const char* data = nullptr;
  size_t len = 0;
  uint32_t crc = 0;
  bool rma = false;
  wire::RmaRef rma_ref;
  WriteId id;
  std::shared_ptr<void> keepalive;
  Callback done;
};

void ClientImpl::WriteAsync(wire::Op op, const std::string& ns, const std::string& key,
                            const Buffer& buf, uint64_t tag, WriteId id, Callback done) {
  if (ns.empty() || ns.size() > wire::kMaxNamespace || key.empty() || key.size() > wire::kMaxKey)
    return done(Status::InvalidArgument("namespace must be 1-255 bytes and key 1-1024 bytes"));
  if (!buf.valid() && buf.size() > 0) return done(Status::InvalidArgument("invalid buffer"));
  if (!id.valid()) return done(Status::InvalidArgument("write id must have a nonzero writer and seq"));
  auto w = std::make_shared<AsyncWrite>();
  w->op = op;
  w->ns = ns;
  w->key = key;
  w->tag = tag;
  w->data = buf.data();
  w->len = buf.size();
  w->crc = Crc32c(buf.data(), buf.size());
  w->id = id;
  w->done = std::move(done);
  if (buf.size() > Pick()->max_inline()) {
    const MemoryRegion& mr = BufferPool::RegionOf(buf);
    w->rma = true;
    w->rma_ref = {mr.RmaAddr(buf.data()), mr.key(), buf.size()};
    // After a timeout the server may still read the slab: it is then kept out of
    // reuse by the pool for the connection's life (the caller's Buffer still works,
    // e.g. to resend the same bytes with the same id).
    w->keepalive = buf.shared_slab();
  }
  // A session known to be lost is re-established first (HELLO blocks: on a helper).
  if (Pick()->needs_hello()) return helpers_.Run([this, w] { SubmitWrite(w, 0); });
  SubmitWrite(w, 0);
}

void ClientImpl::SubmitWrite(const std::shared_ptr<AsyncWrite>& w, int attempt) {
  if (attempt > 0 || Pick()->needs_hello()) {  // on a helper thread
    Status st = Pick()->EnsureSession();
    if (!st.ok()) return w->done(st);
  }
  wire::Request req;
  req.h.op = w->op;
  req.ns = w->ns;
  req.key = w->key;
  req.tag = w->tag;
  req.length = w->len;
  req.crc = w->crc;
  if (w->rma) {
    req.h.flags = wire::kFlagRma;
    req.rma = w->rma_ref;
  } else {
    req.h.flags = wire::kFlagInline;
    req.inline_data = std::string_view(w->data, w->len);
  }
  req.h.flags |= wire::kFlagWriteId;
  req.write_id = w->id;
  Pick()->Submit(req, [this, w, attempt](const Status& st, const wire::Response& r) {
    // Refused because the session ended: not run, so it goes again on a new session
    // (once; the write id would make even a repeat harmless).
    if ((r.h.flags & wire::kFlagSessionEnded) && attempt == 0)
      return helpers_.Run([this, w] { SubmitWrite(w, 1); });
    w->done(st);
  }, w->keepalive);
}

void ClientImpl::PutAsync(const std::string& ns, const std::string& key, const Buffer& buf,
                          uint64_t tag, Callback done) {
  WriteAsync(wire::Op::kPut, ns, key, buf, tag, ids_.Next(), std::move(done));
}

void ClientImpl::AppendAsync(const std::string& ns, const std::string& key, const Buffer& buf,
                             uint64_t tag, Callback done) {
  WriteAsync(wire::Op::kAppend, ns, key, buf, tag, ids_.Next(), std::move(done));
}

void ClientImpl::WriteAsyncWithId(WriteKind kind, const std::string& ns, const std::string& key,
                                  const Buffer& buf, uint64_t tag, WriteId id, Callback done) {
  WriteAsync(OpOf(kind), ns, key, buf, tag, id, std::move(done));
}

void ClientImpl::GetAsync(const std::string& ns, const std::string& key, Buffer* out,
                          Callback done) {
  SubmitGet(ns, key, out, std::move(done), 0);
}

void ClientImpl::SubmitGet(const std::string& ns, const std::string& key, Buffer* out,
                           Callback done, int attempt) {
  if (Pick()->needs_hello()) {  // re-establish the session first (HELLO blocks: on a helper)
    return helpers_.Run([this, ns, key, out, done, attempt] {
      Status st = Pick()->EnsureSession();
      if (!st.ok()) return done(st);
      SubmitGetNow(ns, key, out, done, attempt);
    });
  }
  SubmitGetNow(ns, key, out, std::move(done), attempt);
}

void ClientImpl::SubmitGetNow(const std::string& ns, const std::string& key, Buffer* out,
                              Callback done, int attempt) {
  if (out->valid() && out->slab()->poisoned.load())
    return done(Status::FailedPrecondition("buffer was quarantined after a timed-out transfer; "
                                           "use another"));
  wire::Request req;
  req.h.op = wire::Op::kGet;
  req.ns = ns;
  req.key = key;
  // The target moves into a holder for the call: after a timeout the server may still
  // write into it, so it stays quarantined and *out comes back empty (as for Get).
  auto target = std::make_shared<Buffer>(std::move(*out));
  std::shared_ptr<void> keepalive;
  if (target->valid() && target->capacity() > Pick()->max_inline()) {
    const MemoryRegion& mr = BufferPool::RegionOf(*target);
    req.h.flags = wire::kFlagRma;
    req.rma = {mr.RmaAddr(target->data()), mr.key(), target->capacity()};
    keepalive = target;
  }
  bool verify = options_.verify_checksums;
  Pick()->Submit(req, [this, ns, key, out, target, done, attempt, verify](const Status& st,
                                                                           const wire::Response& r) {
    if (st.code() == StatusCode::kDeadlineExceeded) {
      if (target->valid()) target->slab()->poisoned.store(true);
      return done(st);
    }
    *out = std::move(*target);
    if ((r.h.flags & wire::kFlagSessionEnded) && attempt < 4)  // not run: again, new session
      return helpers_.Run([this, ns, key, out, done, attempt] { SubmitGet(ns, key, out, done, attempt + 1); });
    if (!st.ok()) return done(st);
    switch (r.outcome) {
      case wire::GetOutcome::kInline: {
        if (!out->valid() || out->capacity() < r.inline_data.size()) {
          StatusOr<Buffer> b = AllocBuffer(r.inline_data.size());
          if (!b.ok()) return done(b.status());
          *out = std::move(b).value();
        }
        if (!r.inline_data.empty()) std::memcpy(out->data(), r.inline_data.data(), r.inline_data.size());
        out->set_size(r.inline_data.size());
        return done(verify ? VerifyRecords(r, out->data(), out->size()) : Status::Ok());
      }
      case wire::GetOutcome::kWrittenToRma:
        out->set_size(r.total_length);
        return done(verify ? VerifyRecords(r, out->data(), out->size()) : Status::Ok());
      case wire::GetOutcome::kNeedsBuffer: {
        if (attempt >= 4) return done(Status(StatusCode::kAborted, "object kept growing while being read"));
        StatusOr<Buffer> b = AllocBuffer(r.total_length);
        if (!b.ok()) return done(b.status());
        *out = std::move(b).value();
        // Resubmitting may wait for a free request slot: never on the progress thread.
        helpers_.Run([this, ns, key, out, done, attempt] { SubmitGet(ns, key, out, done, attempt + 1); });
        return;
      }
    }
  }, keepalive);
}

void ClientImpl::ReadRecordAsync(const RecordRef& r, Buffer* dst, size_t dst_offset, Callback done) {
  ReadRecordAttempt(r, dst, dst_offset, std::move(done), 0);
}

void ClientImpl::ReadRecordAttempt(const RecordRef& r, Buffer* dst, size_t dst_offset,
                                   Callback done, int attempt) {
  if (dst == nullptr || !dst->valid() || dst_offset > dst->capacity() ||
      r.length > dst->capacity() - dst_offset)
    return done(Status::InvalidArgument("destination buffer too small for the record"));
  if (dst->slab()->poisoned.load())
    return done(Status::FailedPrecondition("buffer was quarantined after a timed-out transfer; "
                                           "use another"));
  if (r.length == 0) return done(Status::Ok());
  char* p = dst->data() + dst_offset;
  uint32_t crc = r.crc;
  size_t len = r.length;
  std::shared_ptr<Buffer::Slab> slab = dst->shared_slab();
  // The CRC check is what tells a stale location (moved by compaction, or reused
  // after an overwrite) from the record: docs/storage-format.md "Compaction".
  Pick()->ReadRemote(r.rma_addr, r.rma_key, p, len, BufferPool::RegionOf(*dst),
                    [this, r, dst, dst_offset, p, len, crc, done, slab, attempt](Status st) {
                      // Past the deadline the read may still land: the buffer is
                      // poisoned (never reused; later transfers into it refused).
                      if (st.code() == StatusCode::kDeadlineExceeded) slab->poisoned.store(true);
                      if (st.ok() && Crc32c(p, len) == crc) return done(st);
                      // A read that failed outright may also be a stale location: a freed
                      // segment's memory key is revoked (docs/security.md), so the read is
                      // refused rather than answered with other bytes. Only a timeout is
                      // not that (the server or the link is slow or gone).
                      bool stale = st.ok() || st.code() != StatusCode::kDeadlineExceeded;
                      if (!stale) return done(st);
                      if (r.origin == nullptr)
                        return done(Status(StatusCode::kAborted,
                                           "record moved or replaced since GetMeta (compaction or "
                                           "an overwrite): fetch the metadata again" +
                                           (st.ok() ? std::string() : " (" + st.message() + ")")));
                      if (attempt >= 3)
                        return done(Status(StatusCode::kAborted, "record kept moving while being read"));
                      // GetMeta blocks: never on the progress thread.
                      helpers_.Run([this, r, dst, dst_offset, done, attempt] {
                        RereadMoved(r, dst, dst_offset, done, attempt);
                      });
                    },
                    slab);
}

void ClientImpl::RereadMoved(const RecordRef& r, Buffer* dst, size_t dst_offset, Callback done,
                             int attempt) {
  const RecordOrigin& o = *r.origin;
  auto gone = [&] {
    return Status::DataLoss("record " + std::to_string(r.index) + " of key '" + o.key +
                            "' in namespace '" + o.ns + "' no longer exists (overwritten or "
                            "deleted since GetMeta)");
  };
  // A read of a freed segment is refused (its memory key is revoked) and the tcp provider
  // then drops the connection: the listing retries on a new session for a while, whatever
  // options.retry_for says (docs/storage-format.md).
  StatusOr<ObjectMeta> meta = ListRecords(o.ns, o.key, {}, kRefetchRetryFor);
  if (meta.status().code() == StatusCode::kNotFound) return done(gone());
  if (!meta.ok()) return done(meta.status());
  if (r.index >= meta->records.size()) return done(gone());
  RecordRef now = meta->records[r.index];
  if (now.tag != r.tag || now.length != r.length || now.crc != r.crc) return done(gone());
  now.node_id = r.node_id;
  ReadRecordAttempt(now, dst, dst_offset, std::move(done), attempt + 1);
}

namespace {

template <typename Fn>
std::future<Status> AsFuture(Fn start) {
  auto p = std::make_shared<std::promise<Status>>();
  std::future<Status> f = p->get_future();
  start([p](Status st) { p->set_value(st); });
  return f;
}

}  // namespace

std::future<Status> Client::PutFuture(const std::string& ns, const std::string& key,
                                      const Buffer& buf, uint64_t tag) {
  return AsFuture([&](Callback cb) { PutAsync(ns, key, buf, tag, cb); });
}

std::future<Status> Client::AppendFuture(const std::string& ns, const std::string& key,
                                         const Buffer& buf, uint64_t tag) {
  return AsFuture([&](Callback cb) { AppendAsync(ns, key, buf, tag, cb); });
}

std::future<Status> Client::GetFuture(const std::string& ns, const std::string& key, Buffer* out) {
  return AsFuture([&](Callback cb) { GetAsync(ns, key, out, cb); });
}

}  // namespace rpmp

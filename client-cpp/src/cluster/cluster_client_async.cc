// ClusterClient's asynchronous forms: appends, puts and record reads go straight to the
// asynchronous call of the serving connection when its placement / node is known (no
// thread per call); the first call for a namespace, and the retry after a failover, run
// the blocking form on a small executor (RunAsync, ExecutorLoop). See cluster_client.h.
#include <cstring>

#include "link/buffer_pool.h"
#include "client-cpp/src/client_impl.h"
#include "client-cpp/src/cluster/cluster_client.h"

namespace rpmp {

void ClusterClient::RunAsync(std::function<void()> job) {
  {
    std::lock_guard<std::mutex> lock(exec_mu_);
    exec_jobs_.push_back(std::move(job));
  }
  exec_cv_.notify_one();
}

void ClusterClient::ExecutorLoop() {
  while (true) {
    std::function<void()> job;
    {
      std::unique_lock<std::mutex> lock(exec_mu_);
      exec_cv_.wait(lock, [this] { return exec_stop_ || !exec_jobs_.empty(); });
      if (exec_jobs_.empty()) return;
      job = std::move(exec_jobs_.front());
      exec_jobs_.pop_front();
    }
    job();
  }
}

void ClusterClient::WriteAsync(WriteKind kind, const std::string& ns, const std::string& key,
                               const Buffer& buf, uint64_t tag, Callback done) {
  // The caller keeps buf's memory until done (the zero-copy contract of the async forms);
  // nothing here keeps a reference to the Buffer object itself.
  // One write id for the fast path and any blocking retry after a failover, so a retry
  // of a write the old primary already stored is answered, not applied twice.
  const char* data = buf.data();
  size_t len = buf.size();
  WriteId id = ids_.Next();
  auto blocking = [this, kind, ns, key, data, len, tag, id, done] {
    done(WriteOnPrimary(kind, ns, key, data, len, tag, id));
  };
  Client* c = CachedPrimary(ns);
  if (c == nullptr) return RunAsync(blocking);  // placement unknown: resolve off this thread
  // A failover: the blocking form retries through placement refreshes, on the executor.
  auto finish = [this, ns, blocking, done](Status st) {
    if (st.ok() || !IsFailoverCode(st.code())) return done(st);
    Invalidate(ns);
    CountFailoverRetry();
    RunAsync(blocking);
  };
  if (Owns(c, buf) || !buf.valid()) {
    return static_cast<ClientImpl*>(c)->WriteAsyncWithId(kind, ns, key, buf, tag, id, finish);
  }
  // buf is registered with another server's connection: one copy into the primary's
  // memory, owned by the callback until the call completes.
  StatusOr<Buffer> b = c->AllocBuffer(len);
  if (!b.ok()) return RunAsync(blocking);
  CountStagedCopy(len);
  std::memcpy(b->data(), data, len);
  b->set_size(len);
  auto owned = std::make_shared<Buffer>(std::move(b).value());
  auto keep = [owned, finish](Status st) { finish(st); };
  static_cast<ClientImpl*>(c)->WriteAsyncWithId(kind, ns, key, *owned, tag, id, keep);
}

void ClusterClient::PutAsync(const std::string& ns, const std::string& key, const Buffer& buf, uint64_t tag,
                             Callback done) {
  WriteAsync(WriteKind::kPut, ns, key, buf, tag, std::move(done));
}

void ClusterClient::AppendAsync(const std::string& ns, const std::string& key, const Buffer& buf, uint64_t tag,
                                Callback done) {
  WriteAsync(WriteKind::kAppend, ns, key, buf, tag, std::move(done));
}

void ClusterClient::GetAsync(const std::string& ns, const std::string& key, Buffer* out, Callback done) {
  RunAsync([this, ns, key, out, done] { done(Get(ns, key, out)); });
}

void ClusterClient::ReadRecordAsync(const RecordRef& r, Buffer* dst, size_t dst_offset, Callback done) {
  auto blocking = [this, r, dst, dst_offset, done] { done(ReadRecord(r, dst, dst_offset)); };
  Client* c = r.node_id == 0 ? nullptr : CachedServerOfNode(r.node_id);
  if (c == nullptr || dst == nullptr || !dst->valid()) return RunAsync(blocking);
  uint64_t node = r.node_id;
  auto finish = [this, node, done](Status st) {
    if (!st.ok() && IsFailoverCode(st.code())) {
      std::lock_guard<std::mutex> lock(mu_);
      node_servers_.erase(node);  // look the node up again next time
    }
    done(st);
  };
  if (Owns(c, *dst)) return c->ReadRecordAsync(r, dst, dst_offset, finish);
  // dst is registered with another connection: read into c's memory, then copy.
  if (dst_offset > dst->capacity() || r.length > dst->capacity() - dst_offset)
    return done(Status::OutOfRange("destination buffer too small"));
  StatusOr<Buffer> b = c->AllocBuffer(r.length);
  if (!b.ok()) return RunAsync(blocking);
  CountStagedCopy(r.length);
  auto tmp = std::make_shared<Buffer>(std::move(b).value());
  size_t len = r.length;
  c->ReadRecordAsync(r, tmp.get(), 0, [tmp, dst, dst_offset, len, finish](Status st) {
    if (st.ok() && len > 0) std::memcpy(dst->data() + dst_offset, tmp->data(), len);
    finish(st);
  });
}

}  // namespace rpmp

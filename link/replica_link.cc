// Implementation of ReplicaLink over one Connection.
#include "link/replica_link.h"

#include <cstring>
#include <functional>
#include <future>

#include "link/connection.h"

namespace rpmp {
namespace {

// Sends one request and waits for its response status; `on_ok` reads the response
// (its views live only during the callback). A request refused because the session
// ended (kFlagSessionEnded: not run) goes again once, on a new session.
Status CallSync(Connection* conn, wire::Request& req, std::shared_ptr<void> keepalive,
                std::function<void(const wire::Response&)> on_ok = nullptr) {
  for (int attempt = 0;; attempt++) {
    RPMP_RETURN_IF_ERROR(conn->EnsureSession());
    auto done = std::make_shared<std::promise<std::pair<Status, bool>>>();
    auto f = done->get_future();
    conn->Submit(req, [done, on_ok](const Status& st, const wire::Response& resp) {
                   if (st.ok() && on_ok) on_ok(resp);
                   done->set_value({st, (resp.h.flags & wire::kFlagSessionEnded) != 0});
                 },
                 keepalive);
    auto [st, ended] = f.get();
    if (!ended || attempt > 0) return st;
  }
}

}  // namespace

ReplicaLink::ReplicaLink(std::string endpoint, std::unique_ptr<Connection> conn)
    : endpoint_(std::move(endpoint)), conn_(std::move(conn)) {}

ReplicaLink::~ReplicaLink() = default;

StatusOr<std::unique_ptr<ReplicaLink>> ReplicaLink::Open(const std::string& endpoint,
                                                        const ReplicaLinkOptions& options) {
  RPMP_ASSIGN_OR_RETURN(std::unique_ptr<Connection> conn, Connection::Open(endpoint, options));
  return std::unique_ptr<ReplicaLink>(new ReplicaLink(endpoint, std::move(conn)));
}

uint64_t ReplicaLink::node_id() const { return conn_->node_id(); }

Status ReplicaLink::Write(WriteKind kind, const std::string& ns, const std::string& key, uint64_t tag,
                          const char* data, uint64_t len, uint32_t crc, const WriteId& id,
                          const ReplicaFence& fence, bool install_id) {
  wire::Request req;
  req.h.op = kind == WriteKind::kPut ? wire::Op::kPut : wire::Op::kAppend;
  req.ns = ns;
  req.key = key;
  req.tag = tag;
  req.length = len;
  req.crc = crc;
  std::shared_ptr<Buffer> staged;
  if (len <= conn_->max_inline()) {
    req.h.flags = wire::kFlagInline | wire::kFlagReplica;
    req.inline_data = std::string_view(data, len);
  } else {
    RPMP_ASSIGN_OR_RETURN(Buffer b, conn_->buffers().Acquire(len));
    std::memcpy(b.data(), data, len);
    staged = std::make_shared<Buffer>(std::move(b));
    const MemoryRegion& mr = BufferPool::RegionOf(*staged);
    req.h.flags = wire::kFlagRma | wire::kFlagReplica;
    req.rma = {mr.RmaAddr(staged->data()), mr.key(), len};
  }
  if (id.valid()) {
    req.h.flags |= wire::kFlagWriteId;
    req.write_id = id;
    if (install_id) req.h.flags |= wire::kFlagInstallId;
  }
  req.h.flags |= wire::kFlagFence;
  req.fence_epoch = fence.epoch;
  req.fence_primary = fence.primary;
  return CallSync(conn_.get(), req, staged).Annotate("replica " + endpoint_);
}

Status ReplicaLink::Delete(const std::string& ns, const std::string& key, const WriteId& id,
                           const ReplicaFence& fence) {
  wire::Request req;
  req.h.op = wire::Op::kDel;
  req.h.flags = wire::kFlagReplica | wire::kFlagFence;
  req.fence_epoch = fence.epoch;
  req.fence_primary = fence.primary;
  if (id.valid()) {
    req.h.flags |= wire::kFlagWriteId;
    req.write_id = id;
  }
  req.ns = ns;
  req.key = key;
  Status st = CallSync(conn_.get(), req, nullptr);
  return st.code() == StatusCode::kNotFound ? Status::Ok() : st.Annotate("replica " + endpoint_);
}

Status ReplicaLink::DeleteNamespace(const std::string& ns, const ReplicaFence& fence) {
  wire::Request req;
  req.h.op = wire::Op::kDeleteNs;
  req.h.flags = wire::kFlagReplica | wire::kFlagFence;
  req.fence_epoch = fence.epoch;
  req.fence_primary = fence.primary;
  req.ns = ns;
  Status st = CallSync(conn_.get(), req, nullptr);
  return st.code() == StatusCode::kNotFound ? Status::Ok() : st.Annotate("replica " + endpoint_);
}

StatusOr<std::vector<std::string>> ReplicaLink::ListKeys(const std::string& ns) {
  std::vector<std::string> out;
  std::string after;
  while (true) {
    wire::Request req;
    req.h.op = wire::Op::kList;
    req.h.flags = wire::kFlagReplica;  // a repair's read: not refused by read fencing
    req.ns = ns;
    req.start_after = after;
    req.max = wire::kMaxPageItems;
    bool more = false;
    size_t before = out.size();
    Status st = CallSync(conn_.get(), req, nullptr, [&](const wire::Response& r) {
      for (const wire::KeyEntry& k : r.keys) out.push_back(k.key);
      more = r.more;
    });
    if (st.code() == StatusCode::kNotFound) return out;
    if (!st.ok()) return st.Annotate("replica " + endpoint_);
    if (!more || out.size() == before) return out;
    after = out.back();
  }
}

StatusOr<std::vector<ReplicaRecord>> ReplicaLink::Records(const std::string& ns, const std::string& key) {
  std::vector<ReplicaRecord> out;
  while (true) {
    wire::Request req;
    req.h.op = wire::Op::kGetMeta;
    req.h.flags = wire::kFlagReplica;  // a repair's read: not refused by read fencing
    req.ns = ns;
    req.key = key;
    req.start = static_cast<uint32_t>(out.size());
    req.max = wire::kMaxPageItems;
    bool more = false;
    size_t before = out.size();
    Status st = CallSync(conn_.get(), req, nullptr, [&](const wire::Response& r) {
      for (const wire::RecordMeta& m : r.records) out.push_back({m.tag, m.length, m.crc});
      more = r.more;
    });
    if (st.code() == StatusCode::kNotFound) return out;
    if (!st.ok()) return st.Annotate("replica " + endpoint_);
    if (!more || out.size() == before) return out;
  }
}

}  // namespace rpmp

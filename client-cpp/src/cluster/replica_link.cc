// Implementation of ReplicaLink over one Connection.
#include "client-cpp/src/cluster/replica_link.h"

#include <cstring>
#include <future>

#include "client-cpp/src/connection.h"

namespace rpmp {
namespace {

// Sends one request and waits for its response status.
Status CallSync(Connection* conn, wire::Request& req, std::shared_ptr<void> keepalive) {
  RPMP_RETURN_IF_ERROR(conn->EnsureSession());
  auto done = std::make_shared<std::promise<Status>>();
  std::future<Status> f = done->get_future();
  conn->Submit(req, [done](const Status& st, const wire::Response&) { done->set_value(st); },
               std::move(keepalive));
  return f.get();
}

}  // namespace

ReplicaLink::ReplicaLink(std::string endpoint, std::unique_ptr<Connection> conn)
    : endpoint_(std::move(endpoint)), conn_(std::move(conn)) {}

ReplicaLink::~ReplicaLink() = default;

StatusOr<std::unique_ptr<ReplicaLink>> ReplicaLink::Open(const std::string& endpoint,
                                                        const ReplicaLinkOptions& options) {
  ClientOptions co;
  co.provider = options.provider;
  co.timeout = options.timeout;
  co.name = options.name;
  co.buffer_cache_bytes = options.buffer_cache_bytes;
  co.max_inflight = options.max_inflight;
  co.verify_checksums = false;
  RPMP_ASSIGN_OR_RETURN(std::unique_ptr<Connection> conn, Connection::Open(endpoint, co));
  return std::unique_ptr<ReplicaLink>(new ReplicaLink(endpoint, std::move(conn)));
}

uint64_t ReplicaLink::node_id() const { return conn_->node_id(); }

Status ReplicaLink::Write(bool put, const std::string& ns, const std::string& key, uint64_t tag,
                          const char* data, uint64_t len, uint32_t crc) {
  wire::Request req;
  req.h.op = put ? wire::Op::kPut : wire::Op::kAppend;
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
  return CallSync(conn_.get(), req, staged).Annotate("replica " + endpoint_);
}

Status ReplicaLink::Delete(const std::string& ns, const std::string& key) {
  wire::Request req;
  req.h.op = wire::Op::kDel;
  req.h.flags = wire::kFlagReplica;
  req.ns = ns;
  req.key = key;
  Status st = CallSync(conn_.get(), req, nullptr);
  return st.code() == StatusCode::kNotFound ? Status::Ok() : st.Annotate("replica " + endpoint_);
}

Status ReplicaLink::DeleteNamespace(const std::string& ns) {
  wire::Request req;
  req.h.op = wire::Op::kDeleteNs;
  req.h.flags = wire::kFlagReplica;
  req.ns = ns;
  Status st = CallSync(conn_.get(), req, nullptr);
  return st.code() == StatusCode::kNotFound ? Status::Ok() : st.Annotate("replica " + endpoint_);
}

}  // namespace rpmp

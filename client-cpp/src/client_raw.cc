// Raw-memory calls of ClientImpl, GlobalAddress text form, and Client::Connect.
#include <cinttypes>
#include <cstdio>
#include <cstdlib>
#include <cstring>

#include "client-cpp/src/client_impl.h"

namespace rpmp {

std::string GlobalAddress::ToString() const {
  char buf[64];
  std::snprintf(buf, sizeof(buf), "%016" PRIx64 ":%u:%" PRIx64, node_id, pool, offset);
  return buf;
}

StatusOr<GlobalAddress> GlobalAddress::Parse(const std::string& s) {
  GlobalAddress a;
  char tail;
  if (std::sscanf(s.c_str(), "%" SCNx64 ":%u:%" SCNx64 "%c", &a.node_id, &a.pool, &a.offset, &tail) != 3)
    return Status::InvalidArgument("'" + s + "' is not a global address NODE:POOL:OFFSET (hex node and offset)");
  return a;
}

StatusOr<std::unique_ptr<Client>> Client::Connect(const std::string& server,
                                                  const ClientOptions& options) {
  ClientOptions o = options;
  if (o.poll_for.count() == 0) {  // the environment may ask for polling (ClientOptions::poll_for)
    if (const char* env = std::getenv("RPMP_CLIENT_POLL_US"); env != nullptr && *env != '\0') {
      char* end = nullptr;
      long long us = std::strtoll(env, &end, 10);
      if (*end != '\0' || us < 0 || us > 10'000'000)
        return Status::InvalidArgument(std::string("RPMP_CLIENT_POLL_US must be microseconds "
                                                   "between 0 and 10000000, not '") + env + "'");
      o.poll_for = std::chrono::microseconds(us);
    }
  }
  RPMP_ASSIGN_OR_RETURN(std::unique_ptr<Connection> conn, Connection::Open(server, o));
  return std::unique_ptr<Client>(new ClientImpl(std::move(conn), o));
}

Status ClientImpl::CheckNode(const GlobalAddress& addr) const {
  if (addr.node_id != conn_->node_id())
    return Status::InvalidArgument("address " + addr.ToString() + " belongs to another node than " +
                                   conn_->server() + " (" + GlobalAddress{conn_->node_id(), 0, 0}.ToString() + ")");
  return Status::Ok();
}

StatusOr<GlobalAddress> ClientImpl::Alloc(uint64_t size) {
  if (size == 0) return Status::InvalidArgument("cannot allocate 0 bytes");
  wire::Request req;
  req.h.op = wire::Op::kAlloc;
  req.length = size;
  std::shared_ptr<CallResult> r;
  RPMP_RETURN_IF_ERROR(Call(req, &r, Repeat::kIfNotSent));
  return GlobalAddress{conn_->node_id(), r->resp.pool, r->resp.offset};
}

Status ClientImpl::Free(const GlobalAddress& addr) {
  RPMP_RETURN_IF_ERROR(CheckNode(addr));
  wire::Request req;
  req.h.op = wire::Op::kFree;
  req.pool = addr.pool;
  req.offset = addr.offset;
  return Call(req, nullptr, Repeat::kIfNotSent);
}

Status ClientImpl::Write(const GlobalAddress& addr, const void* data, size_t len) {
  RPMP_RETURN_IF_ERROR(CheckNode(addr));
  wire::Request req;
  req.h.op = wire::Op::kWrite;
  req.pool = addr.pool;
  req.offset = addr.offset;
  req.length = len;
  std::shared_ptr<Buffer> staged;
  RPMP_RETURN_IF_ERROR(AttachPayload(&req, data, len, &staged));
  // Not repeated once sent: it could overwrite what another writer stored meanwhile.
  return Call(req, nullptr, Repeat::kIfNotSent, staged);
}

Status ClientImpl::Read(const GlobalAddress& addr, void* dst, size_t len) {
  RPMP_RETURN_IF_ERROR(CheckNode(addr));
  wire::Request req;
  req.h.op = wire::Op::kRead;
  req.pool = addr.pool;
  req.offset = addr.offset;
  req.length = len;
  std::shared_ptr<Buffer> staged;
  if (len > conn_->max_inline()) {
    RPMP_ASSIGN_OR_RETURN(Buffer b, AllocBuffer(len));
    staged = std::make_shared<Buffer>(std::move(b));
    const MemoryRegion& mr = BufferPool::RegionOf(*staged);
    req.h.flags = wire::kFlagRma;
    req.rma = {mr.RmaAddr(staged->data()), mr.key(), len};
  }
  std::shared_ptr<CallResult> r;
  RPMP_RETURN_IF_ERROR(Call(req, &r, Repeat::kRead, staged));
  if (r->resp.outcome == wire::GetOutcome::kInline) {
    if (r->resp.inline_data.size() != len) return Status::Internal("short inline read");
    std::memcpy(dst, r->resp.inline_data.data(), len);
  } else if (r->resp.outcome == wire::GetOutcome::kWrittenToRma) {
    std::memcpy(dst, staged->data(), len);
  } else {
    return Status::Internal("server asked for a buffer the client gave");
  }
  return Status::Ok();
}

}  // namespace rpmp

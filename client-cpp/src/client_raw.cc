// Raw-memory calls of ClientImpl, GlobalAddress text form, and Client::Connect.
#include <algorithm>
#include <atomic>
#include <cinttypes>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <random>

#include "client-cpp/src/client_impl.h"
#include "common/log.h"

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
  if (const char* env = std::getenv("RPMP_CLIENT_CALLER_WAITS"); env != nullptr && *env != '\0') {
    std::string v = env;
    if (v != "0" && v != "1")
      return Status::InvalidArgument("RPMP_CLIENT_CALLER_WAITS must be 0 or 1, not '" + v + "'");
    o.caller_waits = v == "1";
  }
  if (o.connections == 0) {
    if (const char* env = std::getenv("RPMP_CLIENT_CONNECTIONS"); env != nullptr && *env != '\0') {
      char* end = nullptr;
      long n = std::strtol(env, &end, 10);
      if (*end != '\0' || n < 1 || n > static_cast<long>(wire::kMaxShards))
        return Status::InvalidArgument(std::string("RPMP_CLIENT_CONNECTIONS must be a number from 1 to ") +
                                       std::to_string(wire::kMaxShards) + ", not '" + env + "'");
      o.connections = static_cast<uint32_t>(n);
    }
  }
  RPMP_ASSIGN_OR_RETURN(std::unique_ptr<Connection> conn, Connection::Open(server, ClientImpl::LinkOptionsFor(o)));
  ClientImpl::ShardConnections shards = ClientImpl::OpenShards(conn.get(), o);
  return std::unique_ptr<Client>(new ClientImpl(std::move(conn), std::move(shards), o));
}

LinkOptions ClientImpl::LinkOptionsFor(const ClientOptions& o) {
  LinkOptions link;
  link.provider = o.provider;
  link.timeout = o.timeout;
  link.name = o.name;
  link.buffer_cache_bytes = o.buffer_cache_bytes;
  link.max_inflight = o.max_inflight;
  link.secret = o.secret;
  link.tenant_token = o.tenant_token;
  link.ask_shards = o.connections != 1;
  return link;
}

ClientImpl::ClientImpl(std::unique_ptr<Connection> conn, ShardConnections shards, const ClientOptions& options)
    : conn_(std::move(conn)), shards_(std::move(shards.extra)), options_(options) {
  if (shards.primary_carries_calls || shards_.empty()) lanes_.push_back(conn_.get());
  for (const std::unique_ptr<Connection>& c : shards_) lanes_.push_back(c.get());
  if (lanes_.size() > 1) first_lane_ = static_cast<uint32_t>(std::random_device{}() % lanes_.size());
}

ClientImpl::ShardConnections ClientImpl::OpenShards(Connection* primary, const ClientOptions& options) {
  ShardConnections out;
  const std::vector<std::string>& addresses = primary->shard_addresses();
  size_t n = addresses.size();
  // By default one connection per shard, at most 4; a number asked for explicitly may
  // exceed the shards: the extra connections go round the shards again, each with its
  // own endpoint and session, so that calling threads share endpoints less.
  size_t want = options.connections == 0 ? std::min<size_t>(4, n)
                                         : std::min<size_t>(options.connections, wire::kMaxShards);
  if (n == 0 || want <= 1) return out;
  size_t start = want >= n ? 0 : std::random_device{}() % n;
  out.primary_carries_calls = false;
  for (size_t k = 0; k < want; k++) {
    size_t i = (start + k) % n;
    if (i == 0 && k < n) {  // the primary is shard 0's first connection
      out.primary_carries_calls = true;
      continue;
    }
    StatusOr<std::unique_ptr<Connection>> c = Connection::OpenShard(primary, addresses[i], i);
    if (!c.ok()) {
      RPMP_LOG_WARN("rpmp-server at %s: data shard %zu not used: %s", primary->server().c_str(), i,
                    c.status().ToString().c_str());
      continue;
    }
    out.extra.push_back(std::move(c).value());
  }
  return out;
}

Connection* ClientImpl::Pick() const {
  if (lanes_.size() == 1) return lanes_[0];
  static std::atomic<uint32_t> next_thread{0};
  thread_local uint32_t mine = next_thread.fetch_add(1, std::memory_order_relaxed);
  return lanes_[(mine + first_lane_) % lanes_.size()];
}

Connection::SessionCounts ClientImpl::session_counts() const {
  Connection::SessionCounts sum = conn_->session_counts();
  for (const std::unique_ptr<Connection>& c : shards_) {
    Connection::SessionCounts one = c->session_counts();
    sum.opened += one.opened;
    sum.reestablished += one.reestablished;
    sum.refused += one.refused;
  }
  return sum;
}

Status ClientImpl::CheckNode(const GlobalAddress& addr) const {
  if (addr.node_id != Pick()->node_id())
    return Status::InvalidArgument("address " + addr.ToString() + " belongs to another node than " +
                                   Pick()->server() + " (" + GlobalAddress{Pick()->node_id(), 0, 0}.ToString() + ")");
  return Status::Ok();
}

StatusOr<GlobalAddress> ClientImpl::Alloc(uint64_t size) {
  if (size == 0) return Status::InvalidArgument("cannot allocate 0 bytes");
  wire::Request req;
  req.h.op = wire::Op::kAlloc;
  req.length = size;
  std::shared_ptr<CallResult> r;
  RPMP_RETURN_IF_ERROR(Call(req, &r, Repeat::kIfNotSent));
  return GlobalAddress{Pick()->node_id(), r->resp.pool, r->resp.offset};
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
  if (len > Pick()->max_inline()) {
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

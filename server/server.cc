// Server set-up, the progress and commit loops, replies and slot recycling.
// The per-op request handlers are in handlers.cc.
#include "server/server.h"

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <cstring>

#include "common/auth.h"
#include "common/tenant_token.h"
#include "common/config_util.h"
#include "common/log.h"
#include "common/thread_name.h"
#include "server/slot.h"

namespace rpmp {

Server::Server(const ServerConfig& config, Store* store) : config_(config), store_(store) {}

StatusOr<std::unique_ptr<Server>> Server::Start(const ServerConfig& config, Store* store,
                                                WriteCoordinator* coordinator,
                                                ServerMetrics* metrics) {
  std::unique_ptr<Server> s(new Server(config, store));
  s->coordinator_ = coordinator;
  s->metrics_ = metrics;
  RPMP_RETURN_IF_ERROR(s->Setup());
  CompactorSettings cs;
  cs.threshold = config.compaction_threshold;
  cs.rate = config.compaction_rate;
  cs.grace = config.compaction_grace;
  s->compactor_ = std::make_unique<Compactor>(store, cs);
  if (metrics != nullptr) s->RegisterMetrics();
  for (std::unique_ptr<Shard>& shard : s->shards_)
    shard->progress = std::thread([p = s.get(), sh = shard.get()] {
      NameThisThread(sh->index == 0 ? "rpmp-progress" : ("rpmp-progress" + std::to_string(sh->index)).c_str());
      p->ProgressLoop(sh);
    });
  for (uint32_t i = 0; i < config.commit_threads; i++)
    s->committers_.emplace_back([p = s.get()] {
      NameThisThread("rpmp-commit");
      p->CommitLoop();
    });
  s->compactor_->Start();
  return s;
}

Status Server::Setup() {
  RPMP_ASSIGN_OR_RETURN(HostPort hp, ParseHostPort(config_.listen));
  FabricOptions fo;
  fo.provider = config_.provider;
  fo.node = hp.host;
  fo.service = hp.port;
  RPMP_ASSIGN_OR_RETURN(fabric_, Fabric::Open(fo));
  while (boot_ == 0) boot_ = auth::RandomTag48() << 16 | (auth::RandomTag48() & 0xFFFF);
  if (!config_.auth_secret_file.empty()) {
    RPMP_ASSIGN_OR_RETURN(secret_, auth::LoadSecretFile(config_.auth_secret_file));
    tenant_key_ = tenant::DeriveKey(secret_);
  } else {
    RPMP_LOG_WARN("no cluster secret configured (auth_secret_file): any client that reaches %s "
                  "is served unauthenticated%s (docs/security.md)", config_.listen.c_str(),
                  config_.insecure ? " (--insecure)" : "; protected mode: loopback only");
  }
  SessionLimits limits;
  limits.max_per_address = config_.max_sessions_per_address;
  // Enforced at twice what HELLO advertises: a client may send its next request as soon
  // as it has a reply, before this server has seen that reply's send complete.
  limits.max_inflight = 2 * config_.max_inflight_per_client;
  limits.idle_timeout = config_.session_idle_timeout;
  limits.max_sessions = config_.max_sessions;
  sessions_ = std::make_unique<SessionTable>(limits);
  if (!fabric_->reports_source())
    RPMP_LOG_WARN("provider %s does not report senders: sessions are bound by id and tag only",
                  fabric_->traits().name);
  for (const MemoryArea& a : store_->Areas()) {
    if (pool_mrs_.size() <= a.pool) pool_mrs_.resize(a.pool + 1);
    RPMP_ASSIGN_OR_RETURN(pool_mrs_[a.pool], fabric_->Register(a.base, a.size, MrAccess::kLocalOnly));
  }
  segment_keys_ = std::make_unique<SegmentKeys>(fabric_.get());
  RPMP_RETURN_IF_ERROR(store_->SetSegmentRegistrar(segment_keys_.get()));
  uint32_t wanted = config_.data_threads == 0 ? DefaultDataThreads() : config_.data_threads;
  for (uint32_t i = 0; i < wanted; i++) {
    auto shard = std::make_unique<Shard>();
    shard->index = i;
    if (i == 0) {
      shard->fabric = fabric_.get();
    } else {
      StatusOr<std::unique_ptr<Fabric>> sibling = fabric_->OpenSibling(0);
      if (!sibling.ok() && sibling.status().code() == StatusCode::kUnimplemented) {
        RPMP_LOG_WARN("one data shard instead of %u: %s", wanted, sibling.status().message().c_str());
        break;
      }
      RPMP_RETURN_IF_ERROR(sibling.status().Annotate("data shard " + std::to_string(i)));
      shard->own_fabric = std::move(sibling).value();
      shard->fabric = shard->own_fabric.get();
    }
    RPMP_RETURN_IF_ERROR(SetupShard(shard.get()));
    shards_.push_back(std::move(shard));
  }
  size_t n = config_.recv_slots;
  size_t mr_limit = fabric_->info()->domain_attr->mr_cnt;
  std::string shard_list;
  for (size_t i = 1; i < shards_.size(); i++)
    shard_list += (i == 1 ? "; data shards 1-" + std::to_string(shards_.size() - 1) + " on " : ", ") +
                  shards_[i]->fabric->LocalAddressString();
  RPMP_LOG_INFO("serving on %s (%s), %zu data shard%s of %zu receive slots, %zu pools, %zu "
                "segments registered (provider limit: %s registrations)%s",
                fabric_->LocalAddressString().c_str(), fabric_->traits().name, shards_.size(),
                shards_.size() == 1 ? "" : "s", n, pool_mrs_.size(), segment_keys_->open(),
                mr_limit == 0 ? "no" : std::to_string(mr_limit).c_str(), shard_list.c_str());
  return Status::Ok();
}

uint32_t Server::DefaultDataThreads() {
  // The environment may set the default (e.g. to run a test suite on sharded servers).
  if (const char* env = std::getenv("RPMP_DATA_THREADS"); env != nullptr && *env != '\0') {
    char* end = nullptr;
    unsigned long n = std::strtoul(env, &end, 10);
    if (*end == '\0' && n >= 1 && n <= 64) return static_cast<uint32_t>(n);
    RPMP_LOG_WARN("RPMP_DATA_THREADS='%s' is not a number from 1 to 64: ignored", env);
  }
  unsigned cores = std::thread::hardware_concurrency();
  return std::clamp<uint32_t>(cores / 2, 1, 16);
}

Status Server::SetupShard(Shard* shard) {
  uint32_t max_pending = config_.max_pending_hellos;
  if (max_pending == 0) max_pending = std::clamp<uint32_t>(config_.recv_slots / 4, 1, 64);
  shard->hello_guard = std::make_unique<HelloGuard>(max_pending, config_.hello_rate_per_address);
  size_t n = config_.recv_slots;
  shard->slot_memory.resize(n * 2 * wire::kMaxFrame);
  RPMP_ASSIGN_OR_RETURN(shard->slot_mr, shard->fabric->Register(shard->slot_memory.data(),
                                                                shard->slot_memory.size(),
                                                                MrAccess::kLocalOnly));
  for (size_t i = 0; i < n; i++) {
    auto slot = std::make_unique<Slot>();
    slot->shard = shard;
    slot->fabric = shard->fabric;
    slot->recv_buf = shard->slot_memory.data() + 2 * i * wire::kMaxFrame;
    slot->send_buf = slot->recv_buf + wire::kMaxFrame;
    slot->desc = shard->slot_mr->desc();
    slot->recv_op.slot = slot->send_op.slot = slot.get();
    slot->recv_op.op.kind = OpKind::kRecv;
    RPMP_RETURN_IF_ERROR(shard->fabric->PostRecv(&slot->recv_op.op, slot->recv_buf, wire::kMaxFrame,
                                                 slot->desc));
    shard->slots.push_back(std::move(slot));
  }
  return Status::Ok();
}

std::vector<std::string> Server::ShardAddresses() const {
  std::vector<std::string> out;
  for (const std::unique_ptr<Shard>& shard : shards_) out.push_back(shard->fabric->LocalAddressString());
  return out;
}

void Server::RegisterMetrics() {
  MetricsRegistry* r = metrics_->registry();
  auto read = [](const std::atomic<uint64_t>& a) {
    return [&a] { return static_cast<double>(a.load(std::memory_order_relaxed)); };
  };
  r->AddCounterFunc("rpmp_server_frames_received_total", "Request frames received.", "",
                    read(counters_.requests));
  r->AddCounterFunc("rpmp_server_malformed_frames_total",
                    "Received frames that did not decode (refused or dropped).", "",
                    read(counters_.malformed));
  r->AddCounterFunc("rpmp_server_bytes_in_total", "Payload bytes written by clients.", "",
                    read(counters_.bytes_in));
  r->AddCounterFunc("rpmp_server_bytes_out_total", "Payload bytes read by clients.", "",
                    read(counters_.bytes_out));
  r->AddGaugeFunc("rpmp_server_inflight_slots", "Requests in flight (receive slots in use).", "",
                  [this] { return static_cast<double>(busy_slots_.load()); });
  r->AddGaugeFunc("rpmp_server_slots", "Receive slots configured, all shards (the in-flight limit).", "",
                  [this] { return static_cast<double>(shards_.size() * config_.recv_slots); });
  r->AddGaugeFunc("rpmp_server_data_shards", "Data shards (endpoints with a progress thread each).", "",
                  [this] { return static_cast<double>(shards_.size()); });
  for (const std::unique_ptr<Shard>& shard : shards_)
    r->AddCounterFunc("rpmp_server_shard_replies_total",
                      "Requests answered, by the data shard whose endpoint received them.",
                      "shard=\"" + std::to_string(shard->index) + "\"", read(shard->replies));
  r->AddGaugeFunc("rpmp_server_sessions", "Client sessions (peers that said hello).", "",
                  [this] { return static_cast<double>(session_count_.load()); });
  SessionStats& ss = sessions_->stats();  // the table lives as long as the server
  r->AddCounterFunc("rpmp_server_sessions_opened_total", "Sessions opened (HELLOs answered).", "",
                    read(ss.opened));
  r->AddCounterFunc("rpmp_server_session_limit_refusals_total",
                    "HELLOs refused by max_sessions_per_address (every session had requests in flight).",
                    "", read(ss.limit_refused));
  r->AddCounterFunc("rpmp_server_session_table_refusals_total",
                    "HELLOs refused by max_sessions (every session had requests in flight).", "",
                    read(ss.table_refused));
  r->AddGaugeFunc("rpmp_server_sessions_per_client_max",
                  "Most sessions one client name (e.g. spark-executor-3) held at once since start.", "",
                  read(ss.per_client_max));
  for (size_t i = 0; i <= static_cast<size_t>(SessionEnd::kCount); i++) {
    std::string reason = i == static_cast<size_t>(SessionEnd::kCount)
                             ? "unknown" : SessionEndName(static_cast<SessionEnd>(i));
    if (i < static_cast<size_t>(SessionEnd::kCount))
      r->AddCounterFunc("rpmp_server_sessions_ended_total", "Sessions ended, by reason.",
                        "reason=\"" + reason + "\"", read(ss.ended[i]));
    r->AddCounterFunc("rpmp_server_session_refusals_total",
                      "Frames refused because their session ended (by reason) or is unknown.",
                      "reason=\"" + reason + "\"", read(ss.refused[i]));
  }
  r->AddCounterFunc("rpmp_server_hellos_dropped_total",
                    "HELLOs dropped unanswered: bad address, over the per-address rate or the "
                    "pending cap, or naming a known address from another sender.", "",
                    read(hellos_dropped_));
  r->AddCounterFunc("rpmp_server_hellos_withdrawn_total",
                    "HELLO replies withdrawn after hello_timeout (slot and address freed).", "",
                    read(hellos_withdrawn_));
  r->AddCounterFunc("rpmp_server_rma_timeouts_total",
                    "Transfers with a client abandoned after rma_timeout (session dropped).", "",
                    read(rma_timeouts_));
  r->AddGaugeFunc("rpmp_server_abandoned_transfers",
                  "Abandoned transfers the provider has not ended yet (no slot held).", "",
                  [this] { return static_cast<double>(abandoned_count_.load()); });
  metrics_->SampleStore(store_);
  metrics_->SampleCompactor(compactor_.get());
}

Server::~Server() {
  RequestShutdown();
  Wait();
  // The store outlives this server: no new segment may reach the fabric, and the
  // registrations of existing ones close now, while the fabric is still open.
  if (segment_keys_ != nullptr) {
    store_->SetSegmentRegistrar(nullptr);
    segment_keys_->RevokeAll();
  }
  // Abandoned transfers: give back what they held in the store. Their provider
  // contexts may be touched until the endpoint closes, so their small slot copies
  // are left allocated (at exit only).
  for (std::unique_ptr<Shard>& shard : shards_)
    for (auto& [raw, z] : shard->abandoned) {
      if (z->reservation.valid()) store_->Abort(&z->reservation);
      z->view = ObjectView();
      (void)z.release();
    }
  // Siblings close before shard 0's endpoint, which owns their domain.
  for (size_t i = shards_.size(); i-- > 1;) shards_[i]->own_fabric.reset();
}

void Server::RequestShutdown() { shutdown_.store(true); }

void Server::LeaveFabricOpenAtExit() {
  for (std::unique_ptr<Shard>& shard : shards_) (void)shard->own_fabric.release();
  (void)fabric_.release();
}

void Server::Wait() {
  for (std::unique_ptr<Shard>& shard : shards_)
    if (shard->progress.joinable()) shard->progress.join();
  {
    std::lock_guard<std::mutex> lock(commit_mu_);
    commit_stop_ = true;
  }
  commit_cv_.notify_all();
  for (std::thread& t : committers_)
    if (t.joinable()) t.join();
  if (compactor_) compactor_->Stop();
}

void Server::ProgressLoop(Shard* shard) {
  Completion comps[32];
  std::chrono::steady_clock::time_point drain_deadline{};
  bool draining = false;
  while (true) {
    // Busy polling never sleeps: a request is seen as soon as it lands (config busy_poll).
    int n = shard->fabric->Wait(comps, 32, config_.busy_poll ? 0 : draining ? 10 : 100);
    for (int i = 0; i < n; i++) OnCompletion(shard, comps[i]);
    if (shard->index == 0) ExpireSessions();  // one session table
    ExpireRma(shard);
    ExpireHellos(shard);
    if (Draining() && !draining) {
      draining = true;
      drain_deadline = std::chrono::steady_clock::now() + config_.drain_timeout;
      if (shard->index == 0)
        RPMP_LOG_INFO("shutting down: draining %d requests in flight", busy_slots_.load());
    }
    if (draining) {
      if (busy_slots_.load() == 0) break;  // every shard's: a shard's completions need its thread
      if (std::chrono::steady_clock::now() > drain_deadline) {
        if (shard->index != 0) break;
        RPMP_LOG_WARN("drain timeout: %d requests still in flight are abandoned (uncommitted)",
                      busy_slots_.load());
        break;
      }
    }
  }
  if (shard->index != 0) return;
  RPMP_LOG_INFO("data plane stopped: %llu requests served, %llu errors, %llu malformed",
                static_cast<unsigned long long>(counters_.requests.load()),
                static_cast<unsigned long long>(counters_.errors.load()),
                static_cast<unsigned long long>(counters_.malformed.load()));
}

void Server::OnCompletion(Shard* shard, const Completion& c) {
  SlotOp* op = reinterpret_cast<SlotOp*>(c.ctx);
  Slot* s = op->slot;
  switch (op->op.kind) {
    case OpKind::kRecv:
      if (!c.status.ok()) {  // the endpoint is closing or the receive was cancelled
        if (!Draining()) shard->fabric->PostRecv(&s->recv_op.op, s->recv_buf, wire::kMaxFrame, s->desc);
        return;
      }
      busy_slots_.fetch_add(1);
      OnRequest(s, c.length, c.src);
      return;
    case OpKind::kSend:
      if (!c.status.ok()) RPMP_LOG_DEBUG("reply not delivered: %s", c.status.ToString().c_str());
      Recycle(s);
      return;
    case OpKind::kRead:
    case OpKind::kWrite:
      if (!c.status.ok() && s->rma_status.ok()) s->rma_status = c.status;
      if (--s->rma_pending == 0) OnRmaDone(s, s->rma_status);
      return;
  }
}

void Server::OnRequest(Slot* s, size_t len, PeerAddr src) {
  counters_.requests.fetch_add(1, std::memory_order_relaxed);
  if (metrics_ != nullptr) s->started = ServerMetrics::Clock::now();
  Status st = wire::DecodeRequest(s->recv_buf, len, &s->req);
  if (!st.ok()) {
    counters_.malformed.fetch_add(1, std::memory_order_relaxed);
    wire::Header h;
    wire::DecodeHeader(s->recv_buf, len, &h);  // fields are filled even when refused
    uint32_t magic = 0;
    if (len >= 4) std::memcpy(&magic, s->recv_buf, 4);
    Session* known = sessions_->Find(h.session);
    if (magic == wire::kMagic && known != nullptr && !known->dropped && known->tag == h.session_tag &&
        (!s->fabric->reports_source() || src == known->peer)) {  // a known peer: tell it why
      s->req.h = h;
      s->peer = known->peer;
      s->has_peer = true;
      ReplyError(s, st);
      return;
    }
    RPMP_LOG_DEBUG("dropped malformed frame of %zu bytes: %s", len, st.ToString().c_str());
    Recycle(s);
    return;
  }
  if (s->req.h.op == wire::Op::kHello) {
    HandleHello(s, src);
    return;
  }
  if (!AdmitRequest(s, src)) return;
  if (Draining()) {
    ReplyError(s, Status::Unavailable("server is shutting down"));
    return;
  }
  Dispatch(s);
}

void Server::Dispatch(Slot* s) {
  switch (s->req.h.op) {
    case wire::Op::kPut:
    case wire::Op::kAppend: HandleWrite(s); return;
    case wire::Op::kGet: HandleGet(s); return;
    case wire::Op::kGetMeta: HandleGetMeta(s); return;
    case wire::Op::kList: HandleList(s); return;
    case wire::Op::kStat: HandleStat(s); return;
    case wire::Op::kAlloc:
    case wire::Op::kFree:
    case wire::Op::kWrite:
    case wire::Op::kRead: HandleRaw(s); return;
    case wire::Op::kDel:
    case wire::Op::kDeleteNs:
    case wire::Op::kBye:
    case wire::Op::kHello: HandleSimple(s); return;
  }
}

void Server::CommitLoop() {
  while (true) {
    Slot* s;
    {
      std::unique_lock<std::mutex> lock(commit_mu_);
      commit_cv_.wait(lock, [this] { return commit_stop_ || !commit_queue_.empty(); });
      if (commit_queue_.empty()) return;
      s = commit_queue_.front();
      commit_queue_.pop_front();
    }
    FinishWrite(s);
  }
}

void Server::Reply(Slot* s) {
  s->resp.h.op = s->req.h.op;
  s->resp.h.request_id = s->req.h.request_id;
  s->resp.h.session = s->req.h.session;
  s->resp.h.session_tag = s->req.h.session_tag;
  size_t len = wire::EncodeResponse(s->resp, s->send_buf, wire::kMaxFrame);
  if (len == 0) {  // cannot happen for well-formed responses; never send garbage
    s->resp = wire::Response();
    s->resp.h.status = static_cast<uint16_t>(StatusCode::kInternal);
    s->resp.message = "response did not fit in a frame";
    return Reply(s);
  }
  if (s->resp.h.status != 0) counters_.errors.fetch_add(1, std::memory_order_relaxed);
  if (s->shard != nullptr) s->shard->replies.fetch_add(1, std::memory_order_relaxed);
  if (metrics_ != nullptr) {
    metrics_->OnReply(s->req.h.op, s->resp.h.status, s->started);
    // Sessions begin at HELLO and end at BYE or idle expiry (ExpireSessions).
    if (s->req.h.op == wire::Op::kHello || s->req.h.op == wire::Op::kBye) {
      std::lock_guard<std::mutex> lock(sessions_mu_);
      session_count_.store(sessions_->size(), std::memory_order_relaxed);
    }
  }
  if (s->hello_unverified) {
    // A HELLO from an address the server had no entry for: an honest client's HELLO
    // came over a connection from that address, so the reply can go at once. If it
    // cannot, nothing connects to the claimed address: the reply is dropped.
    Status now = s->fabric->SendNow(&s->send_op.op, s->peer, s->send_buf, len, s->desc);
    if (!now.ok()) {
      hellos_withdrawn_.fetch_add(1, std::memory_order_relaxed);
      RPMP_LOG_DEBUG("hello reply not sent (no connection from the claimed address): %s",
                     now.ToString().c_str());
      Recycle(s);
    }
    return;
  }
  Status st = s->fabric->Send(&s->send_op.op, s->peer, s->send_buf, len, s->desc);
  if (!st.ok()) Recycle(s);
}

void Server::ReplyError(Slot* s, const Status& st) {
  s->resp = wire::Response();
  s->resp.h.status = static_cast<uint16_t>(st.code());
  s->resp.message = st.message();
  Reply(s);
}

void Server::Recycle(Slot* s) {
  if (s->reservation.valid()) store_->Abort(&s->reservation);
  if (s->raw_pinned) raw_owners_.Unpin(s->raw_at);
  if (s->counted_session != 0 || !s->peer_hold.empty() || s->hello_pending) ReleaseSessionHold(s);
  s->Clear();
  busy_slots_.fetch_sub(1);
  Status st = s->fabric->PostRecv(&s->recv_op.op, s->recv_buf, wire::kMaxFrame, s->desc);
  if (!st.ok()) RPMP_LOG_ERROR("cannot repost a receive: %s", st.ToString().c_str());
}

}  // namespace rpmp

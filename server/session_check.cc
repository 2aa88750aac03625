// Session handling of the server (see server.h, sessions.h, docs/security.md): HELLO
// with its challenge-response, the binding of every later frame to its session (id,
// tag and sender address), per-session in-flight limits, BYE and idle expiry.
// Runs on the progress thread of the frame's shard; ReleaseSessionHold may run wherever a slot is recycled.
#include <algorithm>
#include <optional>

#include "common/auth.h"
#include "common/tenant_token.h"
#include "common/log.h"
#include "server/server.h"
#include "server/slot.h"

namespace rpmp {

void Server::HandleHello(Slot* s, PeerAddr src) {
  const wire::Request& q = s->req;
  bool auth = (q.h.flags & wire::kFlagAuth) != 0;
  auto now = std::chrono::steady_clock::now();
  // Nothing of a HELLO reaches the address vector before its address is checked, and
  // from here on only its canonical form is used (per-address limits, challenges).
  Fabric* fabric = s->fabric;
  HelloGuard* guard = s->shard->hello_guard.get();
  StatusOr<std::string> address = fabric->CanonicalPeer(q.fabric_address);
  if (address.ok()) {
    bool full;
    {
      std::lock_guard<std::mutex> guard_lock(sessions_mu_);
      full = guard->full();
    }
    if (full) WithdrawOldestHello(s->shard);
  }
  std::unique_lock<std::mutex> lock(sessions_mu_);
  const char* refused = nullptr;
  PeerAddr known = FI_ADDR_NOTAVAIL;
  bool in_av = address.ok() && sessions_->FindPeer(fabric, *address, &known);
  if (!address.ok()) {
    refused = "an unusable address";
  } else if (fabric->reports_source() && in_av && known != src) {
    // The address is in the AV, so a frame really sent from it would name it as its
    // source: this HELLO names someone else's address. Never send to it on its behalf.
    refused = "the address of another peer";
  } else if (!guard->Admit(*address, fabric->reports_source() && in_av, now)) {
    refused = "no room (hello rate per address or pending HELLO replies at their limit)";
  }
  if (refused != nullptr) {
    bool warn = guard->WarnNow(now);
    lock.unlock();
    hellos_dropped_.fetch_add(1, std::memory_order_relaxed);
    std::string why = address.ok() ? "" : ": " + address.status().message();
    if (warn) {
      RPMP_LOG_WARN("hello with %s from '%.*s'%s, dropped (further ones this second at debug level)",
                    refused, static_cast<int>(std::min<size_t>(q.client_name.size(), 64)),
                    q.client_name.data(), why.c_str());
    } else {
      RPMP_LOG_DEBUG("hello with %s dropped%s", refused, why.c_str());
    }
    Recycle(s);  // nobody to answer
    return;
  }
  s->hello_pending = true;  // counted by the guard until Recycle
  s->hello_unverified = !in_av;
  s->hello_deadline = now + config_.hello_timeout;
  StatusOr<PeerAddr> peer = sessions_->AcquirePeer(fabric, *address);
  if (!peer.ok()) {
    lock.unlock();
    hellos_dropped_.fetch_add(1, std::memory_order_relaxed);
    RPMP_LOG_DEBUG("hello address refused by the fabric: %s", peer.status().ToString().c_str());
    Recycle(s);
    return;
  }
  s->peer = *peer;
  s->has_peer = true;
  s->peer_hold = *address;  // until the reply is sent, unless a session takes it
  if ((q.h.flags & wire::kFlagProbe) && (q.h.flags & wire::kFlagBoot)) {
    // A probe (wire.h): which process serves this address. Opens nothing; answered like
    // a step-1 HELLO (the same checks, rate and deadline), to anyone.
    lock.unlock();
    s->resp.h.flags = wire::kFlagBoot | wire::kFlagProbe;
    s->resp.node_id = store_->NodeId();
    s->resp.provider = fabric->traits().name;
    s->resp.boot = boot_;
    // Where the data shards listen now (they take new ports at each start): a client's
    // shard connections move there after a restart (Connection::RepointShard).
    if ((q.h.flags & wire::kFlagShards) && s->shard->index == 0) {
      s->resp.h.flags |= wire::kFlagShards;
      for (const std::unique_ptr<Shard>& shard : shards_)
        s->resp.shard_addresses.push_back(shard->fabric->LocalAddress());
    }
    return Reply(s);
  }
  // The proof's key: the cluster secret, or a tenant token's MAC (recomputed from K).
  // A server without a secret ignores tokens: it serves everyone (docs/security.md).
  std::string key = secret_;
  std::optional<tenant::Token> token;
  if (!secret_.empty()) {
    if (!auth) {
      lock.unlock();
      return ReplyError(s, Status(StatusCode::kPermissionDenied,
                                  "this rpmp-server requires authentication: give the client the "
                                  "cluster secret (RPMP_SECRET_FILE, spark.rpmp.auth.secret)"));
    }
    if (q.server_nonce.empty()) {  // step 1: a challenge, no session yet
      s->resp.challenge = sessions_->NewChallenge(*address, now);
      s->resp.h.flags = wire::kFlagAuth;
      lock.unlock();
      return Reply(s);
    }
    bool fresh = sessions_->TakeChallenge(q.server_nonce, *address, now);
    if (q.h.flags & wire::kFlagToken) {  // a tenant: the proof's key is the token's MAC
      StatusOr<tenant::Token> t = tenant::Parse(q.token);
      if (t.ok() && !t->mac.empty()) t = Status::InvalidArgument("a HELLO must not carry the token's MAC");
      if (!t.ok()) {
        lock.unlock();
        RPMP_LOG_WARN("hello of client '%.*s' refused: %s", static_cast<int>(q.client_name.size()),
                      q.client_name.data(), t.status().message().c_str());
        return ReplyError(s, t.status());
      }
      key = tenant::Mac(tenant_key_, t->prefix, t->app, t->expiry);
      token = std::move(t).value();
    }
    if (!fresh || q.client_nonce.size() != auth::kNonceSize ||
        !auth::Equal(q.proof, auth::ClientProof(key, q.server_nonce, q.client_nonce,
                                                q.fabric_address))) {
      lock.unlock();
      const char* why = !fresh ? "authentication failed: unknown or expired challenge"
                        : token.has_value()
                            ? "authentication failed: the tenant token was not minted with this "
                              "cluster's secret, or was altered"
                            : "authentication failed: wrong cluster secret";
      RPMP_LOG_WARN("authentication failed for client '%.*s'%s%s (%s)",
                    static_cast<int>(q.client_name.size()), q.client_name.data(),
                    token.has_value() ? " with the tenant token of " : "",
                    token.has_value() ? token->app.c_str() : "", why);
      return ReplyError(s, Status(StatusCode::kPermissionDenied, why));
    }
    if (token.has_value()) {
      Status live = tenant::CheckExpiry(*token, tenant::NowUnix());
      if (!live.ok()) {
        lock.unlock();
        RPMP_LOG_WARN("hello of client '%.*s' refused: %s", static_cast<int>(q.client_name.size()),
                      q.client_name.data(), live.message().c_str());
        return ReplyError(s, live);
      }
      std::string quota_prefix;
      uint32_t max = coordinator_ != nullptr && token->prefix != tenant::kAllPrefix
                         ? coordinator_->SessionQuotaFor(token->prefix, &quota_prefix)
                         : 0;
      if (max != 0) {
        size_t open = sessions_->CountTenantSessionsUnder(quota_prefix);
        if (open >= max) {
          lock.unlock();
          Status over = Status::NoSpace(
              "quota exceeded: prefix \"" + quota_prefix + "\" holds " + std::to_string(open) + " of its " +
              std::to_string(max) + " sessions on this server (close some, or raise it: rpmpctl quota set " +
              quota_prefix + " --sessions N)");
          RPMP_LOG_WARN("hello of client '%.*s' refused: %s", static_cast<int>(q.client_name.size()),
                        q.client_name.data(), over.message().c_str());
          return ReplyError(s, over);
        }
      }
    }
  }
  // Legacy clients (no kFlagAuth) of a server without a secret get tag 0.
  uint64_t tag = auth ? auth::RandomTag48() : 0;
  SessionTable::Eviction evicted;
  StatusOr<uint32_t> id = sessions_->Create(fabric, *address, *peer, tag, q.client_name, &evicted);
  if (!id.ok()) {
    lock.unlock();
    RPMP_LOG_WARN("hello of client '%.*s' refused: %s", static_cast<int>(q.client_name.size()),
                  q.client_name.data(), id.status().message().c_str());
    return ReplyError(s, id.status());
  }
  s->peer_hold.clear();  // the session owns the reference now
  if (token.has_value() && token->prefix != tenant::kAllPrefix) {
    Session* session = sessions_->Find(*id);
    session->prefix = token->prefix;
    session->token_expiry = token->expiry;
  } else if (token.has_value()) {
    sessions_->Find(*id)->token_expiry = token->expiry;
  }
  lock.unlock();
  if (evicted.id != 0) {
    raw_owners_.SessionEnded(evicted.id);
    if (evicted.table_full) {
      RPMP_LOG_INFO("session %u crowded out: the server reached max_sessions (%u), and it was "
                    "the least recently used idle session of the tenant holding the most",
                    evicted.id, sessions_->limits().max_sessions);
    } else {
      RPMP_LOG_INFO("session %u evicted: its address reached max_sessions_per_address (%u), "
                    "and it was the least recently used", evicted.id, sessions_->limits().max_per_address);
    }
  }
  s->req.h.session = *id;
  s->req.h.session_tag = tag;  // echoed in the reply header
  if (token.has_value()) {
    RPMP_LOG_INFO("session %u opened on shard %u: client '%.*s' (authenticated: tenant '%s', prefix \"%s\")",
                  *id, s->shard->index, static_cast<int>(q.client_name.size()), q.client_name.data(),
                  token->app.c_str(), token->prefix.c_str());
  } else {
    RPMP_LOG_INFO("session %u opened on shard %u: client '%.*s'%s", *id, s->shard->index,
                  static_cast<int>(q.client_name.size()), q.client_name.data(),
                  secret_.empty() ? "" : " (authenticated)");
  }
  s->resp.session = *id;
  s->resp.node_id = store_->NodeId();
  s->resp.max_inline =
      static_cast<uint32_t>(std::min(fabric->traits().default_inline, wire::kMaxInline));
  s->resp.max_inflight = config_.max_inflight_per_client;
  s->resp.provider = fabric->traits().name;
  if (q.h.flags & wire::kFlagBoot) {
    s->resp.h.flags |= wire::kFlagBoot;
    s->resp.boot = boot_;
  }
  if ((q.h.flags & wire::kFlagShards) && s->shard->index == 0) {
    s->resp.h.flags |= wire::kFlagShards;
    for (const std::unique_ptr<Shard>& shard : shards_)
      s->resp.shard_addresses.push_back(shard->fabric->LocalAddress());
  }
  if (auth) {
    s->resp.h.flags |= wire::kFlagAuth;
    if (!secret_.empty())
      s->resp.server_proof = auth::ServerProof(key, q.server_nonce, q.client_nonce, tag);
  }
  Reply(s);
}

bool Server::AdmitRequest(Slot* s, PeerAddr src) {
  const wire::Header& h = s->req.h;
  std::unique_lock<std::mutex> lock(sessions_mu_);
  Session* session = sessions_->Find(h.session);
  // A session's PeerAddr names its client in the AV of the shard its HELLO reached; a
  // shard with an AV of its own never serves another shard's session (docs/sharding.md).
  bool from_owner = session != nullptr && session->av == s->fabric->AvOwner() &&
                    (!s->fabric->reports_source() || src == session->peer);
  if (session == nullptr || session->dropped || session->tag != h.session_tag || !from_owner) {
    counters_.malformed.fetch_add(1, std::memory_order_relaxed);
    RefuseFrame(s, src, session, &lock);
    return false;
  }
  s->peer = session->peer;
  s->has_peer = true;
  session->last_used = std::chrono::steady_clock::now();
  if (session->inflight >= sessions_->limits().max_inflight) {
    // Over the limit: dropped without a reply. A reply would hold this slot until its
    // send completes, which a stalled client never lets happen; well-behaved clients
    // never get here (they send at most the max_inflight HELLO advertised).
    counters_.errors.fetch_add(1, std::memory_order_relaxed);
    lock.unlock();
    RPMP_LOG_DEBUG("session %u: over %u requests in flight, %s dropped", h.session,
                   sessions_->limits().max_inflight, wire::OpName(h.op));
    s->has_peer = false;
    Recycle(s);
    return false;
  }
  session->inflight++;
  s->counted_session = h.session;
  // Counted first: a tenant's refused requests hold slots within its in-flight limit too.
  if (session->token_expiry != 0) return AdmitTenant(s, session, &lock);
  return true;
}

// A tenant's request (docs/security.md "Tenants"): its token must not have expired (else
// the session ends, told why), and a namespace-addressed op must name a namespace under
// the token's prefix. A raw op takes the prefix along (raw_owners.h). Replica frames
// need the cluster secret. sessions_mu_ held; on refusal it replies and unlocks.
bool Server::AdmitTenant(Slot* s, Session* session, std::unique_lock<std::mutex>* lock) {
  const wire::Request& q = s->req;
  Status refused;
  bool ended = false;
  if (tenant::NowUnix() > session->token_expiry + tenant::kSkewSeconds) {
    refused = Status(StatusCode::kPermissionDenied,
                     "the tenant token of this session expired at unix " +
                         std::to_string(session->token_expiry) +
                         ": the session ends; mint a new token (rpmpctl token mint)");
    // It ends once nothing of it is in flight, this refusal included (its reply still
    // goes to the session's address: ReleaseSessionHold).
    session->dropped = true;
    session->end_reason = SessionEnd::kTokenExpired;
    ended = true;
  } else if (session->prefix.empty()) {
    return true;  // a "*" token
  } else if (q.h.flags & wire::kFlagReplica) {
    refused = Status(StatusCode::kPermissionDenied,
                     "replica frames need the cluster secret, not a tenant token");
  } else {
    switch (q.h.op) {
      case wire::Op::kPut: case wire::Op::kAppend: case wire::Op::kGet: case wire::Op::kGetMeta:
      case wire::Op::kDel: case wire::Op::kList: case wire::Op::kDeleteNs:
        if (tenant::Authorizes(session->prefix, q.ns)) return true;
        refused = Status(StatusCode::kPermissionDenied,
                         "namespace \"" + std::string(q.ns) + "\" is outside this credential's prefix \"" +
                             session->prefix + "\"");
        break;
      case wire::Op::kAlloc: case wire::Op::kFree: case wire::Op::kWrite: case wire::Op::kRead:
        s->tenant = session->prefix;
        return true;
      default: return true;  // STAT, BYE
    }
  }
  counters_.errors.fetch_add(1, std::memory_order_relaxed);
  lock->unlock();
  if (ended) {
    raw_owners_.SessionEnded(q.h.session);
    RPMP_LOG_INFO("session %u ends: its tenant token expired", q.h.session);
  }
  RPMP_LOG_DEBUG("session %u: %s refused: %s", q.h.session, wire::OpName(q.h.op),
                 refused.message().c_str());
  ReplyError(s, refused);
  return false;
}

// A frame naming a session that ended (or that this server does not know) is refused,
// never acted on: the client is told with kFlagSessionEnded and the reason, so it opens
// a new session and may send the frame again (docs/security.md, "How a session ends").
// A forged frame (wrong tag or sender) is refused without the flag, and only a sender
// the server knows gets an answer: nothing is ever sent to an address on a stranger's say.
void Server::RefuseFrame(Slot* s, PeerAddr src, Session* session,
                         std::unique_lock<std::mutex>* lock) {
  const wire::Header& h = s->req.h;
  const std::unordered_map<PeerAddr, uint32_t>& stalled = s->shard->stalled_peers;
  bool known_sender = s->fabric->reports_source() && src != FI_ADDR_NOTAVAIL &&
                      sessions_->KnowsPeer(s->fabric, src) && stalled.count(src) == 0;
  const EndedSession* ended = session == nullptr ? sessions_->FindEnded(h.session) : nullptr;
  SessionStats& stats = sessions_->stats();
  std::string why;
  if (session != nullptr && session->dropped && session->tag == h.session_tag &&
      session->av == s->fabric->AvOwner() &&
      (!s->fabric->reports_source() || src == session->peer)) {
    why = session->end_reason == SessionEnd::kClosed ? "closed by the client (BYE)"
          : session->end_reason == SessionEnd::kTokenExpired
              ? "ended: its tenant token expired (mint a new one)"
              : "dropped: a transfer with the client stalled past rma_timeout";
    stats.refused[static_cast<size_t>(session->end_reason)].fetch_add(1, std::memory_order_relaxed);
    known_sender = stalled.count(session->peer) == 0;  // else a reply would stall too
    src = session->peer;
  } else if (ended != nullptr && ended->tag == h.session_tag) {
    switch (ended->reason) {
      case SessionEnd::kClosed: why = "closed by the client (BYE)"; break;
      case SessionEnd::kExpired:
        why = "expired: idle longer than session_idle_timeout (" +
              std::to_string(sessions_->limits().idle_timeout.count()) + " ms)";
        break;
      case SessionEnd::kEvicted:
        why = "evicted: its client address reached max_sessions_per_address (" +
              std::to_string(sessions_->limits().max_per_address) + ")";
        break;
      case SessionEnd::kDropped: why = "dropped: a transfer with the client stalled past rma_timeout"; break;
      case SessionEnd::kTokenExpired: why = "ended: its tenant token expired (mint a new one)"; break;
      case SessionEnd::kCrowdedOut:
        why = "crowded out: the server reached max_sessions (" +
              std::to_string(sessions_->limits().max_sessions) + ") and this session was idle longest";
        break;
      case SessionEnd::kCount: break;
    }
    stats.refused[static_cast<size_t>(ended->reason)].fetch_add(1, std::memory_order_relaxed);
    // The answer goes to the address the session was opened from (the tag proves the
    // sender held it); its AV entry may be gone, so the slot holds a reference until sent.
    known_sender = false;
    StatusOr<PeerAddr> peer = sessions_->AcquirePeer(s->fabric, ended->address);
    if (peer.ok() && stalled.count(*peer) == 0) {
      s->peer_hold = ended->address;
      src = *peer;
      known_sender = true;
    } else if (peer.ok()) {
      sessions_->ReleasePeer(s->fabric, ended->address);
    }
  } else if (session == nullptr && ended == nullptr) {
    why = "unknown to this server (it restarted, or the session ended long ago)";
    stats.refused[static_cast<size_t>(SessionEnd::kCount)].fetch_add(1, std::memory_order_relaxed);
  }
  lock->unlock();
  if (why.empty()) {
    RPMP_LOG_DEBUG("refused %s naming session %u: tag or sender does not match", wire::OpName(h.op),
                   h.session);
  } else {
    RPMP_LOG_DEBUG("refused %s naming session %u: %s", wire::OpName(h.op), h.session, why.c_str());
  }
  if (!known_sender) return Recycle(s);
  s->peer = src;
  s->has_peer = true;
  if (why.empty())
    return ReplyError(s, Status(StatusCode::kPermissionDenied,
                                "frame does not belong to session " + std::to_string(h.session)));
  // Unavailable: a client that predates the flag still takes it as a lost session.
  s->resp = wire::Response();
  s->resp.h.status = static_cast<uint16_t>(StatusCode::kUnavailable);
  s->resp.h.flags = wire::kFlagSessionEnded;
  s->resp.message = "session " + std::to_string(h.session) + " " + why;
  Reply(s);
}

void Server::ReleaseSessionHold(Slot* s) {
  std::lock_guard<std::mutex> lock(sessions_mu_);
  if (s->counted_session != 0) {
    Session* session = sessions_->Find(s->counted_session);
    if (session != nullptr && session->inflight > 0) session->inflight--;
    if (session != nullptr && session->dropped && session->inflight == 0) {
      sessions_->End(s->counted_session, session->end_reason);
      session_count_.store(sessions_->size(), std::memory_order_relaxed);
    }
  }
  if (!s->peer_hold.empty()) sessions_->ReleasePeer(s->fabric, s->peer_hold);
  if (s->hello_pending) {  // written only here and in HandleHello: progress thread
    s->shard->hello_guard->Done();
    s->hello_pending = false;
    s->hello_unverified = false;
  }
}

void Server::WithdrawOldestHello(Shard* shard) {
  std::vector<Slot*> pending;
  for (const std::unique_ptr<Slot>& s : shard->slots)
    if (s->hello_pending) pending.push_back(s.get());
  std::sort(pending.begin(), pending.end(),
            [](const Slot* a, const Slot* b) { return a->hello_deadline < b->hello_deadline; });
  for (Slot* s : pending) {
    if (!shard->fabric->CancelDeferred(&s->send_op.op)) continue;  // the provider has it
    hellos_withdrawn_.fetch_add(1, std::memory_order_relaxed);
    Recycle(s);
    return;
  }
}

void Server::ExpireHellos(Shard* shard) {
  auto now = std::chrono::steady_clock::now();
  if (now < shard->next_hello_scan) return;
  shard->next_hello_scan = now + std::chrono::milliseconds(100);
  {
    std::lock_guard<std::mutex> lock(sessions_mu_);
    if (shard->hello_guard->pending() == 0) return;
  }
  for (const std::unique_ptr<Slot>& s : shard->slots) {
    if (!s->hello_pending || s->hello_deadline > now) continue;
    // A reply still queued (the provider cannot reach the claimed address) is taken
    // back; one the provider has taken completes on its own (small sends are copied).
    s->hello_deadline = std::chrono::steady_clock::time_point::max();
    if (!shard->fabric->CancelDeferred(&s->send_op.op)) continue;
    hellos_withdrawn_.fetch_add(1, std::memory_order_relaxed);
    RPMP_LOG_DEBUG("hello reply not delivered within %lld ms: withdrawn",
                   static_cast<long long>(config_.hello_timeout.count()));
    Recycle(s.get());  // releases the address entry and the guard's count
  }
}

void Server::EndSession(Slot*, uint32_t id) {
  {
    std::lock_guard<std::mutex> lock(sessions_mu_);
    Session* session = sessions_->Find(id);
    if (session == nullptr) return;
    // Its requests still in flight (the BYE's own slot among them) reply to its address:
    // it ends when the last is recycled (ReleaseSessionHold), refused from now on.
    session->dropped = true;
    session->end_reason = SessionEnd::kClosed;
    if (session->inflight == 0) sessions_->End(id, SessionEnd::kClosed);
  }
  RPMP_LOG_DEBUG("session %u closed (BYE)", id);
  raw_owners_.SessionEnded(id);
}

void Server::ExpireSessions() {
  auto now = std::chrono::steady_clock::now();
  if (now < next_expiry_) return;
  next_expiry_ = now + std::chrono::seconds(1);
  std::vector<uint32_t> gone;
  {
    std::lock_guard<std::mutex> lock(sessions_mu_);
    gone = sessions_->ExpireIdle(now);
    if (!gone.empty()) session_count_.store(sessions_->size(), std::memory_order_relaxed);
  }
  for (uint32_t id : gone) {
    raw_owners_.SessionEnded(id);
    RPMP_LOG_INFO("session %u expired: idle longer than session_idle_timeout", id);
  }
}

}  // namespace rpmp

// SessionTable: the server's sessions and what binds a frame to one (docs/security.md).
// A session has a random 32-bit id, a random 48-bit tag every frame must carry
// (header bytes 26..31), and the fabric address its HELLO named: requests must come
// from that address when the provider reports sources (FI_SOURCE). It also holds the
// pending HELLO challenges, the address-vector references (one AV entry per distinct
// client address in each AV: data shards with a domain of their own have an AV of their
// own, docs/sharding.md; removed when its last session or challenge goes), per-address
// session caps and idle expiry, and remembers the last kEndedMemory sessions that ended
// (id, tag, address, reason) so a frame naming one can be told why (docs/security.md,
// "How a session ends").
//
// Progress thread only (not thread-safe). Internal to server/.
#pragma once

#include <atomic>
#include <chrono>
#include <cstdint>
#include <deque>
#include <functional>
#include <random>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "common/status.h"
#include "transport/fabric.h"

namespace rpmp {

struct SessionLimits {
  uint32_t max_per_address = 64;
  uint32_t max_sessions = 4096;
  uint32_t max_inflight = 64;
  std::chrono::milliseconds idle_timeout{3600 * 1000};
  size_t max_challenges = 4096;
  std::chrono::milliseconds challenge_ttl{10000};
};

// Why a session ended; a frame naming it is refused with kFlagSessionEnded and the reason.
enum class SessionEnd : uint8_t {
  kClosed,   // the client sent BYE
  kExpired,  // idle longer than session_idle_timeout
  kEvicted,  // its address reached max_sessions_per_address and it was the least recently used
  kDropped,  // its client stalled an RMA past rma_timeout
  kTokenExpired,  // its tenant token expired (docs/security.md "Tenants")
  kCrowdedOut,    // the server reached max_sessions; it was the least recently used idle
                  // session of the tenant holding the most (SessionTable::Create)
  kCount,
};
const char* SessionEndName(SessionEnd why);  // "closed", "expired", ...

// Counts for the metrics (docs/operations.md); written under the server's sessions_mu_,
// read at scrape time.
struct SessionStats {
  std::atomic<uint64_t> opened{0};
  std::atomic<uint64_t> ended[static_cast<size_t>(SessionEnd::kCount)] = {};
  // Frames refused because they named an ended session (by its reason), or one this
  // server does not know (restarted, or ended too long ago): index kCount.
  std::atomic<uint64_t> refused[static_cast<size_t>(SessionEnd::kCount) + 1] = {};
  std::atomic<uint64_t> limit_refused{0};  // HELLOs refused by max_sessions_per_address
  std::atomic<uint64_t> table_refused{0};  // HELLOs refused by max_sessions (all busy)
  std::atomic<uint64_t> per_client_max{0};  // most sessions one client name held at once
};

struct Session {
  PeerAddr peer = 0;
  Fabric* av = nullptr;  // the AV owner `peer` belongs to (Fabric::AvOwner)
  uint64_t tag = 0;  // 0 for a legacy (pre-tag) client of a server without a secret
  std::string address;
  std::string client_name;  // as its HELLO named it (e.g. spark-executor-3)
  // Tenants (docs/security.md): the namespace prefix its token grants, checked on every
  // request; "" = unrestricted (proved with the cluster secret, or a server without one).
  std::string prefix;
  int64_t token_expiry = 0;  // unix seconds; 0 = no token
  std::chrono::steady_clock::time_point last_used;
  uint32_t inflight = 0;
  // Ending (BYE, or dropped: its client stalled an RMA past rma_timeout): frames naming
  // it are refused; it ends with `end_reason` (AV reference released) once nothing of it
  // is in flight, since those requests still reply to its address.
  bool dropped = false;
  SessionEnd end_reason = SessionEnd::kDropped;
};

// A session that ended, as remembered for telling its client why.
struct EndedSession {
  uint32_t id = 0;
  uint64_t tag = 0;
  std::string address;
  SessionEnd reason = SessionEnd::kClosed;
};

class SessionTable {
 public:
  static constexpr size_t kEndedMemory = 1024;
  using Clock = std::chrono::steady_clock;
  explicit SessionTable(const SessionLimits& limits) : limits_(limits) {}

  // The endpoint `on` names the address vector (on->AvOwner()): the one the data shard
  // that received the frame sends through.
  // A reference to the AV entry of `address` (inserted on first use).
  StatusOr<PeerAddr> AcquirePeer(Fabric* on, std::string_view address);
  void ReleasePeer(Fabric* on, std::string_view address);
  // True while `peer` is an AV entry some session or challenge holds (replying to
  // anything else would use a removed entry). Linear in the number of addresses.
  bool KnowsPeer(Fabric* on, PeerAddr peer) const;
  // The AV entry of `address` when some session or challenge holds it.
  bool FindPeer(Fabric* on, std::string_view address, PeerAddr* peer) const;

  // A session Create ended to make room: `id` 0 when none; `table_full` when the
  // server's max_sessions (not the address's cap) made it.
  struct Eviction {
    uint32_t id = 0;
    bool table_full = false;
  };
  // A new session for `address`, taking over one AV reference the caller acquired on `on`.
  // `address` is canonical (Fabric::CanonicalPeer). At most one session is ended
  // (kEvicted) to make room, the least recently used with nothing in flight:
  //  - when the address has max_per_address sessions, one of that address's;
  //  - else when the server has max_sessions, one of the tenant (token prefix; secret
  //    holders are one tenant) holding the most sessions, or of anyone when that
  //    tenant's are all busy.
  // NoSpace, naming the limit, when every candidate has requests in flight.
  StatusOr<uint32_t> Create(Fabric* on, std::string_view address, PeerAddr peer, uint64_t tag,
                            std::string_view client_name, Eviction* evicted);
  Session* Find(uint32_t id);
  // Ends a session: releases its AV reference and remembers it with `why`. False when unknown.
  bool End(uint32_t id, SessionEnd why);
  // A remembered ended session, or nullptr (never known, or ended long ago).
  const EndedSession* FindEnded(uint32_t id) const;
  // Ends sessions idle (nothing in flight) longer than the limit; returns their ids.
  std::vector<uint32_t> ExpireIdle(Clock::time_point now);

  // HELLO challenges: a fresh nonce remembered for `address`, and its one-time use.
  std::string NewChallenge(std::string_view address, Clock::time_point now);
  bool TakeChallenge(std::string_view nonce, std::string_view address, Clock::time_point now);

  size_t size() const { return sessions_.size(); }
  // Open sessions of tenant credentials whose prefix is `quota_prefix`'s namespace or
  // under it (session quotas, docs/cluster.md "Quotas"). Linear in the sessions.
  size_t CountTenantSessionsUnder(std::string_view quota_prefix) const;
  const SessionLimits& limits() const { return limits_; }
  SessionStats& stats() { return stats_; }

 private:
  struct PeerRef {
    PeerAddr peer = 0;
    Fabric* av = nullptr;
    uint32_t refs = 0;
  };
  // peers_' key: the AV owner and the address bytes.
  static std::string PeerKey(const Fabric* av, std::string_view address);
  struct Challenge {
    std::string nonce, address;
    Clock::time_point expires;
  };
  // The idle (nothing in flight, not ending) session `among` accepts that was used
  // longest ago; 0 when none.
  uint32_t LeastRecentlyUsedIdle(const std::function<bool(const Session&)>& among) const;
  // The prefix holding the most sessions ("" = secret holders). Linear in the sessions.
  std::string LargestTenant() const;

  SessionLimits limits_;
  std::unordered_map<uint32_t, Session> sessions_;
  std::unordered_map<std::string, PeerRef> peers_;  // by PeerKey
  std::unordered_map<std::string, uint32_t> address_sessions_;  // live sessions by address
  std::deque<Challenge> challenges_;                // oldest first
  std::deque<EndedSession> ended_;                  // oldest first, at most kEndedMemory
  std::unordered_map<std::string, uint32_t> per_client_;  // live sessions by client name
  SessionStats stats_;
  std::mt19937_64 rng_{std::random_device{}()};
};

}  // namespace rpmp

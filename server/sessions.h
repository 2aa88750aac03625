// SessionTable: the server's sessions and what binds a frame to one (docs/security.md).
// A session has a random 32-bit id, a random 48-bit tag every frame must carry
// (header bytes 26..31), and the fabric address its HELLO named: requests must come
// from that address when the provider reports sources (FI_SOURCE). It also holds the
// pending HELLO challenges, the address-vector references (one AV entry per distinct
// client address, removed when its last session or challenge goes), per-address
// session caps and idle expiry.
//
// Progress thread only (not thread-safe). Internal to server/.
#pragma once

#include <chrono>
#include <cstdint>
#include <deque>
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

struct Session {
  PeerAddr peer = 0;
  uint64_t tag = 0;  // 0 for a legacy (pre-tag) client of a server without a secret
  std::string address;
  std::chrono::steady_clock::time_point last_used;
  uint32_t inflight = 0;
  // Dropped (its client stalled an RMA past rma_timeout): frames naming it are
  // refused; it ends (AV reference released) once nothing of it is in flight.
  bool dropped = false;
};

class SessionTable {
 public:
  using Clock = std::chrono::steady_clock;
  SessionTable(Fabric* fabric, const SessionLimits& limits) : fabric_(fabric), limits_(limits) {}

  // A reference to the AV entry of `address` (inserted on first use).
  StatusOr<PeerAddr> AcquirePeer(std::string_view address);
  void ReleasePeer(std::string_view address);
  // True while `peer` is an AV entry some session or challenge holds (replying to
  // anything else would use a removed entry). Linear in the number of addresses.
  bool KnowsPeer(PeerAddr peer) const;
  // The AV entry of `address` when some session or challenge holds it.
  bool FindPeer(std::string_view address, PeerAddr* peer) const;

  // A new session for `address`, taking over one AV reference the caller acquired.
  // ResourceExhausted when the address already has max_per_address sessions, or the
  // server max_sessions. `address` is canonical (Fabric::CanonicalPeer).
  StatusOr<uint32_t> Create(std::string_view address, PeerAddr peer, uint64_t tag);
  Session* Find(uint32_t id);
  // Ends a session (BYE, expiry): releases its AV reference. False when unknown.
  bool End(uint32_t id);
  // Ends sessions idle (nothing in flight) longer than the limit; returns their ids.
  std::vector<uint32_t> ExpireIdle(Clock::time_point now);

  // HELLO challenges: a fresh nonce remembered for `address`, and its one-time use.
  std::string NewChallenge(std::string_view address, Clock::time_point now);
  bool TakeChallenge(std::string_view nonce, std::string_view address, Clock::time_point now);

  size_t size() const { return sessions_.size(); }
  const SessionLimits& limits() const { return limits_; }

 private:
  struct PeerRef {
    PeerAddr peer = 0;
    uint32_t refs = 0;
    uint32_t sessions = 0;
  };
  struct Challenge {
    std::string nonce, address;
    Clock::time_point expires;
  };
  Fabric* fabric_;
  SessionLimits limits_;
  std::unordered_map<uint32_t, Session> sessions_;
  std::unordered_map<std::string, PeerRef> peers_;  // by address bytes
  std::deque<Challenge> challenges_;                // oldest first
  std::mt19937_64 rng_{std::random_device{}()};
};

}  // namespace rpmp

// Sessions, AV references and HELLO challenges of the server (see sessions.h).
#include "server/sessions.h"

#include "common/auth.h"

namespace rpmp {

StatusOr<PeerAddr> SessionTable::AcquirePeer(std::string_view address) {
  auto it = peers_.find(std::string(address));
  if (it != peers_.end()) {
    it->second.refs++;
    return it->second.peer;
  }
  StatusOr<PeerAddr> p = fabric_->InsertPeer(address);
  if (!p.ok()) return p;
  peers_[std::string(address)] = PeerRef{*p, 1, 0};
  return p;
}

void SessionTable::ReleasePeer(std::string_view address) {
  auto it = peers_.find(std::string(address));
  if (it == peers_.end()) return;
  if (--it->second.refs == 0) {
    fabric_->RemovePeer(it->second.peer);
    peers_.erase(it);
  }
}

bool SessionTable::KnowsPeer(PeerAddr peer) const {
  for (const auto& [address, ref] : peers_)
    if (ref.peer == peer) return true;
  return false;
}

bool SessionTable::FindPeer(std::string_view address, PeerAddr* peer) const {
  auto it = peers_.find(std::string(address));
  if (it == peers_.end()) return false;
  *peer = it->second.peer;
  return true;
}

StatusOr<uint32_t> SessionTable::Create(std::string_view address, PeerAddr peer, uint64_t tag) {
  if (sessions_.size() >= limits_.max_sessions)
    return Status::NoSpace("this server has its maximum of " + std::to_string(limits_.max_sessions) +
                           " sessions (max_sessions); retry later");
  PeerRef& ref = peers_[std::string(address)];
  if (ref.sessions >= limits_.max_per_address)
    return Status::NoSpace("too many sessions from this client address (" +
                           std::to_string(limits_.max_per_address) +
                           "); close some (BYE) or wait for idle ones to expire");
  // Random ids: a client that still holds a session from before a restart must not
  // land in another client's session.
  uint32_t id;
  do {
    id = static_cast<uint32_t>(rng_());
  } while (id == 0 || sessions_.count(id) != 0);
  ref.sessions++;
  Session& s = sessions_[id];
  s.peer = peer;
  s.tag = tag;
  s.address = std::string(address);
  s.last_used = Clock::now();
  return id;
}

Session* SessionTable::Find(uint32_t id) {
  auto it = sessions_.find(id);
  return it == sessions_.end() ? nullptr : &it->second;
}

bool SessionTable::End(uint32_t id) {
  auto it = sessions_.find(id);
  if (it == sessions_.end()) return false;
  std::string address = std::move(it->second.address);
  sessions_.erase(it);
  auto p = peers_.find(address);
  if (p != peers_.end() && p->second.sessions > 0) p->second.sessions--;
  ReleasePeer(address);
  return true;
}

std::vector<uint32_t> SessionTable::ExpireIdle(Clock::time_point now) {
  std::vector<uint32_t> ids;
  for (const auto& [id, s] : sessions_)
    if (s.inflight == 0 && now - s.last_used > limits_.idle_timeout) ids.push_back(id);
  for (uint32_t id : ids) End(id);
  return ids;
}

std::string SessionTable::NewChallenge(std::string_view address, Clock::time_point now) {
  while (!challenges_.empty() &&
         (challenges_.size() >= limits_.max_challenges || challenges_.front().expires < now))
    challenges_.pop_front();
  challenges_.push_back({auth::RandomNonce(), std::string(address), now + limits_.challenge_ttl});
  return challenges_.back().nonce;
}

bool SessionTable::TakeChallenge(std::string_view nonce, std::string_view address,
                                 Clock::time_point now) {
  for (auto it = challenges_.begin(); it != challenges_.end(); ++it) {
    if (!auth::Equal(it->nonce, nonce)) continue;
    bool ok = it->address == address && it->expires >= now;
    challenges_.erase(it);  // one use, right or wrong
    return ok;
  }
  return false;
}

}  // namespace rpmp

// Sessions, AV references and HELLO challenges of the server (see sessions.h).
#include "server/sessions.h"

#include "common/auth.h"

namespace rpmp {

std::string SessionTable::PeerKey(const Fabric* av, std::string_view address) {
  std::string key(reinterpret_cast<const char*>(&av), sizeof(av));
  key.append(address);
  return key;
}

StatusOr<PeerAddr> SessionTable::AcquirePeer(Fabric* on, std::string_view address) {
  Fabric* av = on->AvOwner();
  std::string key = PeerKey(av, address);
  auto it = peers_.find(key);
  if (it != peers_.end()) {
    it->second.refs++;
    return it->second.peer;
  }
  StatusOr<PeerAddr> p = av->InsertPeer(address);
  if (!p.ok()) return p;
  peers_[key] = PeerRef{*p, av, 1};
  return p;
}

void SessionTable::ReleasePeer(Fabric* on, std::string_view address) {
  auto it = peers_.find(PeerKey(on->AvOwner(), address));
  if (it == peers_.end()) return;
  if (--it->second.refs == 0) {
    it->second.av->RemovePeer(it->second.peer);
    peers_.erase(it);
  }
}

bool SessionTable::KnowsPeer(Fabric* on, PeerAddr peer) const {
  const Fabric* av = on->AvOwner();
  for (const auto& [key, ref] : peers_)
    if (ref.av == av && ref.peer == peer) return true;
  return false;
}

bool SessionTable::FindPeer(Fabric* on, std::string_view address, PeerAddr* peer) const {
  auto it = peers_.find(PeerKey(on->AvOwner(), address));
  if (it == peers_.end()) return false;
  *peer = it->second.peer;
  return true;
}

const char* SessionEndName(SessionEnd why) {
  switch (why) {
    case SessionEnd::kClosed: return "closed";
    case SessionEnd::kExpired: return "expired";
    case SessionEnd::kEvicted: return "evicted";
    case SessionEnd::kDropped: return "dropped";
    case SessionEnd::kTokenExpired: return "token_expired";
    case SessionEnd::kCrowdedOut: return "crowded_out";
    case SessionEnd::kCount: break;
  }
  return "unknown";
}

StatusOr<uint32_t> SessionTable::Create(Fabric* on, std::string_view address, PeerAddr peer,
                                        uint64_t tag, std::string_view client_name,
                                        Eviction* evicted) {
  *evicted = {};
  auto per_address = address_sessions_.find(std::string(address));
  if (per_address != address_sessions_.end() && per_address->second >= limits_.max_per_address) {
    // One endpoint holds one session at a time; older ones at its address are leftovers
    // (a client that could not say BYE). The least recently used idle one makes room.
    uint32_t lru = LeastRecentlyUsedIdle([&](const Session& s) { return s.address == address; });
    if (lru == 0) {
      stats_.limit_refused.fetch_add(1, std::memory_order_relaxed);
      return Status::NoSpace("too many sessions from this client address: all " +
                             std::to_string(limits_.max_per_address) +
                             " (max_sessions_per_address) have requests in flight");
    }
    End(lru, SessionEnd::kEvicted);
    *evicted = {lru, false};
  } else if (sessions_.size() >= limits_.max_sessions) {
    // The table is full (clients that proved the secret from many addresses and went
    // quiet). Refusing would lock honest clients out until session_idle_timeout; instead
    // the tenant holding the most sessions gives up its least recently used idle one,
    // so a tenant that fills the table evicts its own sessions first.
    std::string tenant = LargestTenant();
    uint32_t lru = LeastRecentlyUsedIdle([&](const Session& s) { return s.prefix == tenant; });
    if (lru == 0) lru = LeastRecentlyUsedIdle([](const Session&) { return true; });
    if (lru == 0) {
      stats_.table_refused.fetch_add(1, std::memory_order_relaxed);
      return Status::NoSpace("this server has its maximum of " + std::to_string(limits_.max_sessions) +
                             " sessions (max_sessions), all with requests in flight; retry later");
    }
    End(lru, SessionEnd::kCrowdedOut);
    *evicted = {lru, true};
  }
  // Random ids: a client that still holds a session from before a restart must not
  // land in another client's session.
  uint32_t id;
  do {
    id = static_cast<uint32_t>(rng_());
  } while (id == 0 || sessions_.count(id) != 0);
  address_sessions_[std::string(address)]++;
  Session& s = sessions_[id];
  s.peer = peer;
  s.av = on->AvOwner();
  s.tag = tag;
  s.address = std::string(address);
  s.client_name = std::string(client_name);
  s.last_used = Clock::now();
  stats_.opened.fetch_add(1, std::memory_order_relaxed);
  uint32_t n = ++per_client_[s.client_name];
  if (n > stats_.per_client_max.load(std::memory_order_relaxed))
    stats_.per_client_max.store(n, std::memory_order_relaxed);
  return id;
}

uint32_t SessionTable::LeastRecentlyUsedIdle(const std::function<bool(const Session&)>& among) const {
  uint32_t lru = 0;
  Clock::time_point oldest = Clock::time_point::max();
  for (const auto& [id, s] : sessions_)
    if (s.inflight == 0 && !s.dropped && s.last_used < oldest && among(s)) {
      lru = id;
      oldest = s.last_used;
    }
  return lru;
}

std::string SessionTable::LargestTenant() const {
  std::unordered_map<std::string_view, size_t> count;
  std::string_view largest;
  size_t most = 0;
  for (const auto& [id, s] : sessions_) {
    size_t n = ++count[s.prefix];
    if (n > most) {
      most = n;
      largest = s.prefix;
    }
  }
  return std::string(largest);
}

Session* SessionTable::Find(uint32_t id) {
  auto it = sessions_.find(id);
  return it == sessions_.end() ? nullptr : &it->second;
}

bool SessionTable::End(uint32_t id, SessionEnd why) {
  auto it = sessions_.find(id);
  if (it == sessions_.end()) return false;
  std::string address = it->second.address;
  Fabric* av = it->second.av;
  if (ended_.size() >= kEndedMemory) ended_.pop_front();
  ended_.push_back({id, it->second.tag, address, why});
  stats_.ended[static_cast<size_t>(why)].fetch_add(1, std::memory_order_relaxed);
  auto c = per_client_.find(it->second.client_name);
  if (c != per_client_.end() && --c->second == 0) per_client_.erase(c);
  sessions_.erase(it);
  auto n = address_sessions_.find(address);
  if (n != address_sessions_.end() && --n->second == 0) address_sessions_.erase(n);
  ReleasePeer(av, address);
  return true;
}

std::vector<uint32_t> SessionTable::ExpireIdle(Clock::time_point now) {
  std::vector<uint32_t> ids;
  for (const auto& [id, s] : sessions_)
    if (s.inflight == 0 && now - s.last_used > limits_.idle_timeout) ids.push_back(id);
  for (uint32_t id : ids) End(id, SessionEnd::kExpired);
  return ids;
}

const EndedSession* SessionTable::FindEnded(uint32_t id) const {
  for (auto it = ended_.rbegin(); it != ended_.rend(); ++it)
    if (it->id == id) return &*it;
  return nullptr;
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

size_t SessionTable::CountTenantSessionsUnder(std::string_view quota_prefix) const {
  size_t n = 0;
  for (const auto& [id, session] : sessions_) {
    if (session.dropped || session.prefix.empty()) continue;
    std::string_view name = session.prefix;  // "spark/app-1/": its namespace is "spark/app-1"
    if (name.back() == '/') name.remove_suffix(1);
    if (name == quota_prefix ||
        (name.size() > quota_prefix.size() && name.substr(0, quota_prefix.size()) == quota_prefix &&
         name[quota_prefix.size()] == '/')) {
      n++;
    }
  }
  return n;
}

}  // namespace rpmp

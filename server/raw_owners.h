// RawOwners: which session owns each raw allocation (ALLOC/FREE/WRITE/READ), and
// which allocations have RMA in flight. The server consults it before touching raw
// memory so one session cannot free, read or write another live session's
// allocation, and nobody can free an allocation while the server is still moving
// bytes into or out of it (docs/security.md).
//
// Ownership lives in server memory only: an allocation whose owner said BYE (or
// that was made before a restart) is an orphan, and the next session that touches
// it adopts it. That keeps `rpmpctl alloc` then `rpmpctl write` (two processes, two
// sessions) working; the docs list it as remaining exposure.
//
// Tenants (docs/security.md): each allocation also records the tenant prefix of the
// session that made it ("" = a secret holder's). A tenant session may adopt only an
// orphan of its own prefix, and never touches memory without a recorded owner (made
// before a restart); a secret holder's session ("" tenant) may adopt any orphan.
//
// Thread-safe (one mutex; raw ops are the slow path). Internal to server/.
#pragma once

#include <cstdint>
#include <map>
#include <mutex>
#include <string>
#include <string_view>
#include <utility>

#include "common/status.h"
#include "server/store/store.h"

namespace rpmp {

class RawOwners {
 public:
  // Records a new allocation of `size` bytes at `a` as owned by `session`.
  void Claim(RawAddress a, uint64_t size, uint32_t session, std::string_view tenant = {});
  // For WRITE/READ of [a, a+len): PermissionDenied when it lies in an allocation of
  // another live session; otherwise (adopting an orphan) pins it until Unpin.
  Status Pin(RawAddress a, uint64_t len, uint32_t session, std::string_view tenant = {});
  void Unpin(RawAddress a);
  // For FREE of the allocation starting at `a`: PermissionDenied when another live
  // session owns it, FailedPrecondition while RMA on it is in flight; otherwise
  // forgets it (the caller frees it in the store).
  Status Release(RawAddress a, uint32_t session, std::string_view tenant = {});
  // The session ended: its allocations become orphans.
  void SessionEnded(uint32_t session);
  // For tests and stats.
  size_t size() const;

 private:
  struct Entry {
    uint64_t size = 0;
    uint32_t owner = 0;  // 0 = orphan
    uint32_t pins = 0;
    std::string tenant;  // prefix of the session that made it; "" = a secret holder's
  };
  using Key = std::pair<uint32_t, uint64_t>;  // pool, offset
  // The allocation containing [a, a+len), or end().
  std::map<Key, Entry>::iterator Find(RawAddress a, uint64_t len);
  Status Owned(const Entry& e, uint32_t session, std::string_view tenant, RawAddress a) const;

  mutable std::mutex mu_;
  std::map<Key, Entry> entries_;
};

}  // namespace rpmp

// SegmentKeys: gives every store segment its own remote-read registration with the
// fabric (its own key), so a key handed out in a GET_META reply of one namespace
// reaches that namespace's segment and nothing else (docs/security.md, "memory keys").
// The store calls Register at each segment's creation (Store::SetSegmentRegistrar) and
// destroys the returned access - closing the registration, i.e. revoking the key -
// before the segment's memory is freed (namespace deleted, segment reclaimed or
// compacted away).
//
// Threads: Register may run on any thread that allocates segments; RegionOf on the
// thread serving a request whose view pins the segment. RevokeAll must run after the
// server's threads stopped and before the fabric closes; accesses destroyed after it
// (the store may outlive the server) do nothing.
// Who calls it: server/server.cc only.
#pragma once

#include <memory>
#include <mutex>
#include <string>
#include <unordered_set>

#include "server/store/store.h"
#include "transport/fabric.h"

namespace rpmp {

class SegmentKeys : public SegmentRegistrar {
 public:
  explicit SegmentKeys(Fabric* fabric);
  ~SegmentKeys() override;

  StatusOr<std::unique_ptr<SegmentAccess>> Register(const std::string& ns, uint32_t pool, char* base,
                                                    uint64_t size) override;
  // Closes every registration still open; the fabric is not used afterwards.
  void RevokeAll();
  // The registration behind a record's access (RecordInfo::access); null when the
  // record has none.
  static const MemoryRegion* RegionOf(const SegmentAccess* access);
  // Registrations open now (metrics and tests).
  size_t open() const;

 private:
  struct Access;
  struct State {
    mutable std::mutex mu;
    Fabric* fabric = nullptr;  // null once revoked
    std::unordered_set<Access*> live;
  };
  std::shared_ptr<State> state_;
};

}  // namespace rpmp

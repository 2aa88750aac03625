// WriteCoordinator: the seam between the data plane (server/server.*) and cluster
// mode (server/cluster/). In cluster mode every client put/append/del passes through
// it instead of being committed by the server directly, so a namespace's primary
// can order it, replicate it and acknowledge it only once enough copies exist.
// Requests carrying wire::kFlagReplica (from a primary) bypass it.
//
// Threads: Submit* are called from the server's progress and commit threads and must
// not block; `done` is called exactly once, from any thread.
#pragma once

#include <functional>
#include <string>

#include "common/status.h"
#include "server/store/store.h"

namespace rpmp {

using DoneFn = std::function<void(const Status&)>;

class WriteCoordinator {
 public:
  virtual ~WriteCoordinator() = default;
  // `reservation` holds the payload in place; the coordinator commits or aborts it
  // (it stays owned by the caller and alive until `done`).
  virtual void SubmitWrite(const WriteSpec& spec, Reservation* reservation, DoneFn done) = 0;
  // `id` (may be invalid) is the client's write id, replicated with the delete.
  virtual void SubmitDelete(const std::string& ns, const std::string& key, const WriteId& id, DoneFn done) = 0;
  // A write whose id the store already holds as committed (Reservation::duplicate):
  // the coordinator makes sure it is on enough copies, then answers the first outcome.
  virtual void SubmitDuplicate(const WriteSpec& spec, DoneFn done) = 0;
  // A replica frame (wire::kFlagReplica) for `ns` from `primary` acting in namespace
  // epoch `epoch` (has_fence false: an unfenced frame). FailedPrecondition when this
  // node knows a newer epoch of ns or another primary for that epoch. Non-blocking.
  virtual Status CheckReplicaFrame(const std::string& ns, bool has_fence, uint64_t epoch, uint64_t primary) = 0;
  // The per-server session quota of tenant credentials for `tenant_prefix`
  // (docs/cluster.md "Quotas"), with the quota's prefix in *quota_prefix; 0: none.
  // Called at HELLO; must not block.
  virtual uint32_t SessionQuotaFor(const std::string& tenant_prefix, std::string* quota_prefix) const {
    (void)tenant_prefix;
    (void)quota_prefix;
    return 0;
  }
  // A client read (get, get_meta, list) of `ns`: FailedPrecondition when this node
  // cannot vouch that its copy holds every acknowledged record: it dropped its copy
  // after being substituted out (docs/cluster.md "Removed copies"), or the newest
  // placement it knows does not count it in sync, or it restarted and has not read the
  // placements yet (docs/cluster.md "Read fencing"). A client reading with an old
  // placement then asks the proxy again instead of taking a stale copy or "not found"
  // for an answer. Non-blocking; may ask for a placement scan.
  virtual Status CheckRead(const std::string& ns) {
    (void)ns;
    return Status::Ok();
  }
};

}  // namespace rpmp

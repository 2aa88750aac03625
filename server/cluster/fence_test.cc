// Tests of replica-frame fencing (Replicator::CheckReplicaFrame, docs/cluster.md): a
// member refuses frames of an older namespace epoch, and frames from a node that is
// not the primary it knows for that epoch. Before fencing, every frame was accepted,
// so a primary cut off from the proxies could keep writing to a member that already
// follows a newer primary.
#include <catch2/catch.hpp>

#include "server/cluster/replicator.h"

namespace rpmp {
namespace {

TEST_CASE("replica frames of an older epoch or from a non-primary are refused") {
  Replicator r(nullptr, nullptr, /*self_id=*/9, ReplicatorOptions{});
  CHECK(r.CheckReplicaFrame("ns", true, 5, 1).ok());   // first frame: learns (5, node 1)
  CHECK(r.CheckReplicaFrame("ns", true, 5, 1).ok());
  Status other = r.CheckReplicaFrame("ns", true, 5, 2);  // another "primary" at epoch 5
  CHECK(other.code() == StatusCode::kFailedPrecondition);
  CHECK(r.CheckReplicaFrame("ns", true, 6, 2).ok());    // new epoch, new primary
  Status stale = r.CheckReplicaFrame("ns", true, 5, 1);  // the old primary comes back
  CHECK(stale.code() == StatusCode::kFailedPrecondition);
  CHECK(stale.message().find("newer") != std::string::npos);
  CHECK(r.CheckReplicaFrame("ns", true, 6, 9).code() == StatusCode::kFailedPrecondition);  // "from" self
  CHECK(r.CheckReplicaFrame("other", true, 1, 1).ok());  // namespaces are independent
  CHECK(r.CheckReplicaFrame("ns", false, 0, 0).ok());    // unfenced frame (older release)
}

}  // namespace
}  // namespace rpmp

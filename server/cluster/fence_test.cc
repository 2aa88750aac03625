// Tests of replica-frame fencing (Replicator::CheckReplicaFrame, docs/cluster.md): a
// member refuses frames of an older namespace epoch, and frames from a node that is
// not the primary it knows for that epoch. Before fencing, every frame was accepted,
// so a primary cut off from the proxies could keep writing to a member that already
// follows a newer primary. And read fencing (Replicator::CheckRead, read_fence.cc): a
// member refuses client reads unless the newest placement it knows counts it in sync.
#include <catch2/catch.hpp>

#include <string>
#include <utility>
#include <vector>

#include "server/cluster/replicator.h"

namespace rpmp {

// What the scanner and placement refreshes would do, without a proxy.
class ReplicatorTestPeer {
 public:
  static void NoteEpoch(Replicator& r, const v1::Namespace& ns) { r.NoteEpoch(ns); }
  static void MarkScanned(Replicator& r) { r.scanned_.store(true); }
  // DropRemovedCopy's steps (removed_copy.cc) around the store's delete.
  static bool BeginDrop(Replicator& r, const std::string& ns, uint64_t epoch) { return r.BeginDrop(ns, epoch); }
  static void EndDrop(Replicator& r, const std::string& ns, uint64_t epoch) { r.EndDrop(ns, epoch, true); }
};

namespace {

// Namespace `name` at `epoch` placed on `members` ({node, in sync}), with `replaced`
// substituted out of it (0: none).
v1::Namespace Placed(const std::string& name, uint64_t epoch, std::vector<std::pair<uint64_t, bool>> members,
                     uint64_t replaced = 0) {
  v1::Namespace ns;
  ns.set_name(name);
  ns.set_epoch(epoch);
  for (auto [node, in_sync] : members) {
    v1::Replica* m = ns.add_placement();
    m->set_node_id(node);
    m->set_state(v1::NODE_STATE_LIVE);
    if (in_sync) ns.add_in_sync(node);
  }
  if (replaced != 0) ns.add_substitutions()->set_replaced_node(replaced);
  return ns;
}

// `st` is the fence's refusal (FailedPrecondition) and says `why`.
void CheckRefused(const Status& st, const std::string& why) {
  INFO(st.ToString());
  CHECK(st.code() == StatusCode::kFailedPrecondition);
  CHECK(st.message().find(why) != std::string::npos);
}

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

TEST_CASE("client reads are served only while the newest known placement counts this node in sync") {
  Replicator r(nullptr, nullptr, /*self_id=*/9, ReplicatorOptions{});
  CheckRefused(r.CheckRead("ns"), "has not read the placements");  // restarted: no placement read yet
  ReplicatorTestPeer::MarkScanned(r);
  CHECK(r.CheckRead("ns").ok());  // a namespace that never placed this node: served ("not found")
  ReplicatorTestPeer::NoteEpoch(r, Placed("ns", 3, {{9, true}, {1, true}}));
  CHECK(r.CheckRead("ns").ok());
  // A replica frame of a newer epoch: in sync or being repaired? Refused until a placement says.
  REQUIRE(r.CheckReplicaFrame("ns", true, 4, 1).ok());
  CheckRefused(r.CheckRead("ns"), "not an in-sync member of it at epoch 4");
  ReplicatorTestPeer::NoteEpoch(r, Placed("ns", 4, {{1, true}, {9, true}}));
  CHECK(r.CheckRead("ns").ok());
  ReplicatorTestPeer::NoteEpoch(r, Placed("ns", 5, {{1, true}, {9, false}}));  // left the in-sync set
  CHECK(r.CheckRead("ns").code() == StatusCode::kFailedPrecondition);
  ReplicatorTestPeer::NoteEpoch(r, Placed("ns", 4, {{1, true}, {9, true}}));  // older news changes nothing
  CHECK(r.CheckRead("ns").code() == StatusCode::kFailedPrecondition);
  ReplicatorTestPeer::NoteEpoch(r, Placed("ns", 6, {{1, true}, {2, true}}, /*replaced=*/9));  // substituted out
  CHECK(r.CheckRead("ns").code() == StatusCode::kFailedPrecondition);
  CHECK(r.CheckRead("other").ok());  // namespaces are independent
  ReplicatorTestPeer::NoteEpoch(r, Placed("ns", 7, {{1, true}, {9, true}}));  // repaired, in sync again
  CHECK(r.CheckRead("ns").ok());
  ReplicatorTestPeer::NoteEpoch(r, Placed("ns", 8, {{1, true}, {9, false}}));
  r.Forget("ns");  // deleted: a new namespace of that name starts afresh
  CHECK(r.CheckRead("ns").ok());
}

TEST_CASE("a node dropping its removed copy refuses replica frames and reads until a newer epoch makes it a member again") {
  Replicator r(nullptr, nullptr, /*self_id=*/9, ReplicatorOptions{});
  ReplicatorTestPeer::MarkScanned(r);
  ReplicatorTestPeer::NoteEpoch(r, Placed("ns", 6, {{1, true}, {2, true}}, /*replaced=*/9));  // substituted out
  REQUIRE(ReplicatorTestPeer::BeginDrop(r, "ns", 6));
  CHECK_FALSE(ReplicatorTestPeer::BeginDrop(r, "ns", 6));  // one drop at a time
  // A repair onto this node that starts while the store deletes the copy must fail (and
  // be retried on what is left), never count on records the drop removes.
  CheckRefused(r.CheckReplicaFrame("ns", true, 7, 1), "dropping its copy");
  CheckRefused(r.CheckRead("ns"), "dropped its copy");
  CHECK(r.CheckRead("other").ok());  // other namespaces are not affected
  CHECK(r.CheckReplicaFrame("other", true, 1, 1).ok());
  ReplicatorTestPeer::EndDrop(r, "ns", 6);
  // Dropped at epoch 6: a frame of that epoch (the primary it knows) passes the fence but
  // does not make the node a member again; reads stay refused.
  CHECK(r.CheckReplicaFrame("ns", true, 6, 1).ok());
  CheckRefused(r.CheckRead("ns"), "dropped its copy");
  // A frame of a newer epoch: a member again (its primary repairs it); reads wait until a
  // placement says it is in sync.
  CHECK(r.CheckReplicaFrame("ns", true, 7, 1).ok());
  CheckRefused(r.CheckRead("ns"), "not an in-sync member of it at epoch 7");
  ReplicatorTestPeer::NoteEpoch(r, Placed("ns", 8, {{1, true}, {9, true}}));
  CHECK(r.CheckRead("ns").ok());
}

}  // namespace
}  // namespace rpmp

// Tests of the primary-selection rule shared by servers and clients.
#include "proto/placement.h"

#include <catch2/catch.hpp>

namespace rpmp {
namespace {

v1::Namespace Make(std::initializer_list<uint64_t> nodes) {
  v1::Namespace ns;
  ns.mutable_options()->set_replicas(static_cast<uint32_t>(nodes.size()));
  for (uint64_t n : nodes) {
    v1::Replica* r = ns.add_placement();
    r->set_node_id(n);
    r->set_state(v1::NODE_STATE_LIVE);
  }
  return ns;
}

void Substitute(v1::Namespace* ns, uint32_t index, uint64_t to, uint64_t epoch) {
  v1::Substitution* s = ns->add_substitutions();
  s->set_index(index);
  s->set_replaced_node(ns->placement(index).node_id());
  s->set_replacement_node(to);
  s->set_epoch(epoch);
  ns->mutable_placement(index)->set_node_id(to);
}

TEST_CASE("the primary is the first original member") {
  v1::Namespace ns = Make({10, 20, 30});
  CHECK(PrimaryIndex(ns) == 0);
  Substitute(&ns, 0, 40, 7);
  CHECK(PrimaryIndex(ns) == 1);  // 40 is new and may be empty
  CHECK(JoinedEpoch(ns, 0) == 7);
  Substitute(&ns, 1, 50, 9);
  CHECK(PrimaryIndex(ns) == 2);
  ns.mutable_placement(2)->set_state(v1::NODE_STATE_DEAD);
  CHECK(PrimaryIndex(ns) == 0);  // oldest surviving replacement
}

TEST_CASE("with an in-sync set, the primary is its first usable member, and others never lead") {
  v1::Namespace ns = Make({10, 20});
  ns.add_in_sync(20);
  ns.add_in_sync(10);
  CHECK(PrimaryIndex(ns) == 1);
  CHECK(InSync(ns, 0));
  // The proxy dropped 20 (DEAD) from in_sync; 10 leads.
  ns.clear_in_sync();
  ns.add_in_sync(10);
  ns.mutable_placement(1)->set_state(v1::NODE_STATE_DEAD);
  CHECK(PrimaryIndex(ns) == 0);
  // 20 returns (LIVE) with stale data: not in sync, so neither primary nor a source.
  ns.mutable_placement(1)->set_state(v1::NODE_STATE_LIVE);
  CHECK(PrimaryIndex(ns) == 0);
  CHECK_FALSE(InSync(ns, 1));
  // The only in-sync member is DEAD: no primary at all (not the stale one).
  ns.mutable_placement(0)->set_state(v1::NODE_STATE_DEAD);
  CHECK(PrimaryIndex(ns) == -1);
}

TEST_CASE("no usable member and required copies") {
  v1::Namespace ns = Make({1});
  ns.mutable_placement(0)->set_state(v1::NODE_STATE_DEAD);
  CHECK(PrimaryIndex(ns) == -1);
  ns.mutable_options()->set_replicas(3);
  CHECK(RequiredCopies(ns) == 3);
  ns.mutable_options()->set_min_replicas(2);
  CHECK(RequiredCopies(ns) == 2);
}

}  // namespace
}  // namespace rpmp

// Implementation of the placement rules in placement.h.
#include "proto/placement.h"

namespace rpmp {

uint64_t JoinedEpoch(const v1::Namespace& ns, int index) {
  uint64_t node = ns.placement(index).node_id();
  uint64_t epoch = 0;
  for (const v1::Substitution& s : ns.substitutions())
    if (static_cast<int>(s.index()) == index && s.replacement_node() == node && s.epoch() > epoch)
      epoch = s.epoch();
  return epoch;
}

bool InSync(const v1::Namespace& ns, int index) {
  if (ns.in_sync_size() == 0) return true;
  uint64_t node = ns.placement(index).node_id();
  for (uint64_t id : ns.in_sync())
    if (id == node) return true;
  return false;
}

bool WasSubstitutedOut(const v1::Namespace& ns, uint64_t node) {
  for (const v1::Substitution& s : ns.substitutions())
    if (s.replaced_node() == node) return true;
  return false;
}

int PrimaryIndex(const v1::Namespace& ns) {
  for (uint64_t id : ns.in_sync()) {
    for (int i = 0; i < ns.placement_size(); i++)
      if (ns.placement(i).node_id() == id) {
        if (ns.placement(i).state() != v1::NODE_STATE_DEAD) return i;
        break;
      }
  }
  if (ns.in_sync_size() > 0) return -1;
  // Namespaces stored before in_sync existed: the oldest usable member.
  int best = -1;
  uint64_t best_epoch = 0;
  for (int i = 0; i < ns.placement_size(); i++) {
    if (ns.placement(i).state() == v1::NODE_STATE_DEAD) continue;
    uint64_t e = JoinedEpoch(ns, i);
    if (best < 0 || e < best_epoch) {
      best = i;
      best_epoch = e;
    }
  }
  return best;
}

uint32_t RequiredCopies(const v1::Namespace& ns) {
  uint32_t r = ns.options().replicas();
  uint32_t m = ns.options().min_replicas();
  return m == 0 || m > r ? r : m;
}

}  // namespace rpmp

// Placement rules shared by rpmp-server and librpmp, so both pick the same primary
// for a namespace from the same v1::Namespace (see docs/cluster.md):
//
// - A member is in sync when it is in ns.in_sync (every member when that list is
//   empty: namespaces stored before it existed).
// - The primary is the first member of in_sync (the order in which they joined)
//   that is in the placement and not DEAD. Thus a substitute or a member returning
//   from DEAD (the proxy drops DEAD members from in_sync) never leads or serves
//   reads until the primary has repaired it and added it; no usable in-sync member
//   means no primary (writes wait) — never a copy that may be behind.
//
// Pure functions, thread-safe.
#pragma once

#include <cstdint>

#include "proto/rpmp.pb.h"

namespace rpmp {

uint64_t JoinedEpoch(const v1::Namespace& ns, int index);
// Index into ns.placement() of the primary, or -1 when no in-sync member is usable.
int PrimaryIndex(const v1::Namespace& ns);
// Whether placement member `index` is in the in-sync set.
bool InSync(const v1::Namespace& ns, int index);
// Whether `node` was substituted out of the placement (a Substitution replaced it).
bool WasSubstitutedOut(const v1::Namespace& ns, uint64_t node);
// Copies a write must reach before it is acknowledged (min_replicas, 0 = replicas).
uint32_t RequiredCopies(const v1::Namespace& ns);

}  // namespace rpmp

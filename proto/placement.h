// Placement rules shared by rpmp-server and librpmp, so both pick the same primary
// for a namespace from the same v1::Namespace (see docs/cluster.md):
//
// - A member's "joined epoch" is 0 for an original member, or the epoch of the
//   latest Substitution that put it at its index.
// - The primary is the usable member (not DEAD) with the lowest joined epoch, ties
//   broken by the lower index. Thus a freshly substituted (still empty) member never
//   leads while an older member survives; the primary orders every write and
//   copies (repairs) the namespace onto members it has not yet synchronised.
//
// Pure functions, thread-safe.
#pragma once

#include <cstdint>

#include "proto/rpmp.pb.h"

namespace rpmp {

uint64_t JoinedEpoch(const v1::Namespace& ns, int index);
// Index into ns.placement() of the primary, or -1 when no member is usable.
int PrimaryIndex(const v1::Namespace& ns);
// Copies a write must reach before it is acknowledged (min_replicas, 0 = replicas).
uint32_t RequiredCopies(const v1::Namespace& ns);

}  // namespace rpmp

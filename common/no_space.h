// What a "no space" answer of the store looks like, for the servers that compose it and
// the clients that act on it (the cluster client moves a group to a new extent; the
// Spark plugin's GroupExtents.isNoSpace mirrors this list and its test pins it).
// On the wire it is RESOURCE_EXHAUSTED whose message contains one of these phrases
// (docs/wire-protocol.md, "Responses"); other RESOURCE_EXHAUSTED answers (session
// limits, a full request table) are not space and must not move data elsewhere.
#pragma once

#include <string>

#include "common/status.h"

namespace rpmp {

inline constexpr char kNoSpacePoolsFull[] = "no pool can hold";       // every pool (LogStore)
inline constexpr char kNoSpaceObjectTooBig[] = "cannot hold an object";  // one allocation
inline constexpr char kNoSpaceNoRange[] = "no free range";            // a medium's free list

// Whether `st` is the store's "no space" (possibly annotated, e.g. by a primary that
// reports a replica's answer).
inline bool IsStoreNoSpace(const Status& st) {
  if (st.code() != StatusCode::kResourceExhausted) return false;
  const std::string& m = st.message();
  for (const char* phrase : {kNoSpacePoolsFull, kNoSpaceObjectTooBig, kNoSpaceNoRange})
    if (m.find(phrase) != std::string::npos) return true;
  return false;
}

}  // namespace rpmp

// WriteId: the idempotence key of one mutation, (writer, seq) as docs/append-path.md
// section 1 defines it. `writer` is a random nonzero u64 minted once per client object,
// `seq` counts that client's API calls from 1; every retry of a call reuses its id.
// A zero writer means "no id" (at-least-once behaviour). Exports WriteKind (put or
// append, rpmp/write_kind.h), the other half of what a write id names. Plain data; any thread.
// Used by the wire codec, the store and librpmp.
#pragma once

#include <cstdint>

#include "rpmp/write_kind.h"  // IWYU pragma: export

namespace rpmp {

struct WriteId {
  uint64_t writer = 0;
  uint64_t seq = 0;
  bool valid() const { return writer != 0 && seq != 0; }
  bool operator==(const WriteId& o) const { return writer == o.writer && seq == o.seq; }
  bool operator!=(const WriteId& o) const { return !(*this == o); }
};

}  // namespace rpmp

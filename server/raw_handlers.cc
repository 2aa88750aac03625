// Handlers for raw memory ops (alloc, free, write, read) of the server (see server.h).
// Run on the progress thread; bulk writes continue in OnRmaDone/FinishWrite.
// Ownership and pins of raw allocations: raw_owners.h.
#include <algorithm>
#include <cstring>

#include "server/server.h"
#include "server/slot.h"

namespace rpmp {

void Server::HandleRaw(Slot* s) {
  const wire::Request& q = s->req;
  wire::Response& r = s->resp;
  size_t max_inline = std::min(fabric_->traits().default_inline, wire::kMaxInline);
  switch (q.h.op) {
    case wire::Op::kAlloc: {
      StatusOr<RawAddress> a = store_->Alloc(q.length);
      if (!a.ok()) return ReplyError(s, a.status());
      StatusOr<char*> p = store_->ResolveRaw(*a, q.length);
      if (!p.ok()) {  // never leak what was just allocated
        (void)store_->Free(*a);
        return ReplyError(s, p.status());
      }
      raw_owners_.Claim(*a, q.length, q.h.session, s->tenant);
      r.pool = a->pool;
      r.offset = a->offset;
      // No key: raw memory is not remotely readable (the server moves its bytes by
      // WRITE/READ); the field stays for wire compatibility (docs/wire-protocol.md).
      r.rma = {0, 0, q.length};
      return Reply(s);
    }
    case wire::Op::kFree: {
      Status st = raw_owners_.Release({q.pool, q.offset}, q.h.session, s->tenant);
      if (st.ok()) st = store_->Free({q.pool, q.offset});
      return st.ok() ? Reply(s) : ReplyError(s, st);
    }
    default: break;
  }
  if (q.pool >= pool_mrs_.size()) return ReplyError(s, Status::NotFound("no pool " + std::to_string(q.pool)));
  StatusOr<char*> p = store_->ResolveRaw({q.pool, q.offset}, q.length);
  if (!p.ok()) return ReplyError(s, p.status());
  s->raw = *p;
  // Refused for another live session's allocation; pinned (no FREE) until the reply.
  Status owned = raw_owners_.Pin({q.pool, q.offset}, q.length, q.h.session, s->tenant);
  if (!owned.ok()) return ReplyError(s, owned);
  s->raw_pinned = true;
  s->raw_at = {q.pool, q.offset};
  void* desc = pool_mrs_[q.pool]->desc();
  s->rma_ops.resize(1);
  s->rma_ops[0].slot = s;
  Status st;
  if (q.h.op == wire::Op::kWrite) {
    counters_.bytes_in.fetch_add(q.length, std::memory_order_relaxed);
    if (q.h.flags & wire::kFlagInline) {
      if (q.length > 0) std::memcpy(s->raw, q.inline_data.data(), q.length);
      store_->PersistRaw(s->raw, q.length);
      return Reply(s);
    }
    s->rma_pending = 1;
    st = s->fabric->Read(&s->rma_ops[0].op, s->peer, s->raw, q.length, desc, q.rma.addr, q.rma.key);
  } else {  // read
    counters_.bytes_out.fetch_add(q.length, std::memory_order_relaxed);
    r.total_length = q.length;
    if (q.length <= max_inline) {
      r.outcome = wire::GetOutcome::kInline;
      r.inline_data = std::string_view(s->raw, q.length);
      return Reply(s);
    }
    if (!(q.h.flags & wire::kFlagRma) || q.rma.length < q.length) {
      r.outcome = wire::GetOutcome::kNeedsBuffer;
      return Reply(s);
    }
    s->rma_pending = 1;
    st = s->fabric->Write(&s->rma_ops[0].op, s->peer, s->raw, q.length, desc, q.rma.addr, q.rma.key);
  }
  if (!st.ok()) {
    s->rma_pending = 0;
    return ReplyError(s, st);
  }
  WatchRma(s);
}

}  // namespace rpmp

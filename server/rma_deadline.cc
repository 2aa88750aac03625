// Deadlines on server-initiated RMA (docs/security.md, "a client that never completes
// an RMA"). The server reads a put's payload from the client's buffer and writes a
// get's records into it; a client that stops driving its endpoint stalls those
// transfers, and each would hold a receive slot forever. libfabric cannot cancel an
// RMA in flight, so a transfer past config_.rma_timeout is abandoned instead: its
// provider contexts, reservation, pinned records or raw pin move to a heap copy of the
// slot (kept until the provider ends the RMA, e.g. when the connection breaks), the
// client's session is dropped, and the slot takes requests again. Until its abandoned
// transfers end, the client's address keeps its AV entry (the provider's connection
// is still there) and its frames are dropped without a reply (a reply would stall).
// The progress thread of the slot's shard only.
#include "common/log.h"
#include "server/server.h"
#include "server/slot.h"

namespace rpmp {

void Server::WatchRma(Slot* s) {
  s->rma_deadline = std::chrono::steady_clock::now() + config_.rma_timeout;
}

void Server::ExpireRma(Shard* shard) {
  auto now = std::chrono::steady_clock::now();
  if (now < shard->next_rma_scan) return;
  // A few scans per timeout, at most every 100 ms: the slots are a fixed, small array.
  shard->next_rma_scan = now + std::min<std::chrono::steady_clock::duration>(config_.rma_timeout / 4,
                                                                        std::chrono::milliseconds(100));
  for (const std::unique_ptr<Slot>& s : shard->slots)
    if (s->rma_deadline <= now && s->rma_pending > 0) AbandonRma(s.get());  // deadline first: set only while an RMA is in flight
}

void Server::AbandonRma(Slot* s) {
  auto z = std::make_unique<Slot>();
  z->abandoned = true;
  z->shard = s->shard;
  z->fabric = s->fabric;
  z->req.h = s->req.h;
  z->rma_ops = std::move(s->rma_ops);  // the heap array (and the provider's contexts) move
  for (SlotOp& op : z->rma_ops) op.slot = z.get();
  z->rma_pending = s->rma_pending;
  z->reservation = std::move(s->reservation);
  z->view = std::move(s->view);
  z->raw_pinned = s->raw_pinned;
  z->raw_at = s->raw_at;
  s->raw_pinned = false;
  s->rma_pending = 0;
  s->rma_ops.clear();
  s->rma_deadline = std::chrono::steady_clock::time_point::max();
  uint32_t session = s->req.h.session;
  rma_timeouts_.fetch_add(1, std::memory_order_relaxed);
  bool first = false;  // one warning per session; the rest at debug level
  {
    std::lock_guard<std::mutex> lock(sessions_mu_);
    Session* ses = sessions_->Find(session);
    // The abandoned transfer keeps the client's AV entry: the provider's connection to
    // it lives on, and a new client must not be handed the same entry meanwhile.
    if (ses != nullptr && ses->av == z->fabric->AvOwner() &&
        sessions_->AcquirePeer(z->fabric, ses->address).ok()) {
      z->peer_hold = ses->address;
      z->peer = ses->peer;
      z->has_peer = true;
      s->shard->stalled_peers[z->peer]++;
    }
    if (ses != nullptr && !ses->dropped) {
      first = true;
      // Refused from now on; ends once its other requests in flight are done (they
      // may still reply to its address, so the AV entry stays until then).
      ses->dropped = true;
      if (metrics_ != nullptr) session_count_.store(sessions_->size(), std::memory_order_relaxed);
    }
  }
  if (first) {
    raw_owners_.SessionEnded(session);
    RPMP_LOG_WARN("session %u: %s transfer with the client not done after %lld ms: dropping the "
                  "session and freeing its slots (rma_timeout)", session, wire::OpName(s->req.h.op),
                  static_cast<long long>(config_.rma_timeout.count()));
  } else {
    RPMP_LOG_DEBUG("session %u: another %s transfer abandoned (rma_timeout)", session,
                   wire::OpName(s->req.h.op));
  }
  s->shard->abandoned.emplace(z.get(), std::move(z));
  abandoned_count_.fetch_add(1, std::memory_order_relaxed);
  Recycle(s);  // releases the session's in-flight count (maybe ending it), reposts the receive
}

// The provider ended an abandoned transfer (completed or failed): let go of what it
// held. Nothing is committed and nobody is answered.
void Server::EndAbandoned(Slot* z) {
  if (z->reservation.valid()) store_->Abort(&z->reservation);
  if (z->raw_pinned) raw_owners_.Unpin(z->raw_at);
  std::unordered_map<PeerAddr, uint32_t>& stalled = z->shard->stalled_peers;
  if (z->has_peer && --stalled[z->peer] == 0) stalled.erase(z->peer);
  if (!z->peer_hold.empty()) {
    std::lock_guard<std::mutex> lock(sessions_mu_);
    sessions_->ReleasePeer(z->fabric, z->peer_hold);
  }
  z->shard->abandoned.erase(z);  // destroys z and its view (unpins the records)
  abandoned_count_.fetch_sub(1, std::memory_order_relaxed);
}

}  // namespace rpmp

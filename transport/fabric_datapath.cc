// Fabric fast path: posting operations, retrying those the provider deferred, and
// reading completions. No allocation except when an operation must be queued.
#include <poll.h>
#include <rdma/fi_endpoint.h>
#include <rdma/fi_errno.h>
#include <rdma/fi_rma.h>

#include <sys/eventfd.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <thread>
#include <vector>

#include "transport/fabric.h"

namespace rpmp {

ssize_t Fabric::Post(const Deferred& d) {
  // An own-domain sibling's provider needs no descriptors, and one of another domain
  // (the parent's registration) must never reach it.
  void* desc = own_domain_ ? nullptr : d.desc;
  switch (d.kind) {
    case OpKind::kRecv: return fi_recv(ep_, d.buf, d.len, desc, FI_ADDR_UNSPEC, d.ctx);
    case OpKind::kSend: return fi_send(ep_, d.buf, d.len, desc, d.peer, d.ctx);
    case OpKind::kRead: return fi_read(ep_, d.buf, d.len, desc, d.peer, d.raddr, d.rkey, d.ctx);
    case OpKind::kWrite:
      return fi_write(ep_, d.buf, d.len, desc, d.peer, d.raddr, d.rkey, d.ctx);
  }
  return -FI_EINVAL;
}

// Order is kept per peer (receives count as one peer): an operation waits behind
// earlier ones to the same peer only, so a peer that stops reading (its connection
// full, the provider answering EAGAIN) delays nobody else (docs/security.md).
Status Fabric::PostOrDefer(const Deferred& d) {
  d.ctx->kind = d.kind;
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (deferred_per_peer_.count(d.peer) != 0) {  // behind what waits for the same peer
      deferred_.push_back(d);
      deferred_per_peer_[d.peer]++;
      return Status::Ok();
    }
  }
  ssize_t ret = Post(d);
  if (ret == 0) {
    WakeIfNotWaiter();
    return Status::Ok();
  }
  if (ret == -FI_EAGAIN) {
    {
      std::lock_guard<std::mutex> lock(mu_);
      deferred_.push_back(d);
      deferred_per_peer_[d.peer]++;
    }
    WakeIfNotWaiter();
    return Status::Ok();
  }
  return Status::Unavailable(FabricError("post", static_cast<int>(ret)));
}

bool Fabric::CancelDeferred(OpContext* ctx) {
  std::lock_guard<std::mutex> lock(mu_);
  for (auto it = deferred_.begin(); it != deferred_.end(); ++it) {
    if (it->ctx != ctx) continue;
    auto n = deferred_per_peer_.find(it->peer);
    if (n != deferred_per_peer_.end() && --n->second == 0) deferred_per_peer_.erase(n);
    deferred_.erase(it);
    return true;
  }
  return false;
}

void Fabric::RetryDeferred() {
  std::lock_guard<std::mutex> lock(mu_);
  if (deferred_.empty()) return;
  std::vector<PeerAddr> blocked;  // peers whose next operation got EAGAIN in this pass
  for (auto it = deferred_.begin(); it != deferred_.end();) {
    if (std::find(blocked.begin(), blocked.end(), it->peer) != blocked.end()) {
      ++it;
      continue;
    }
    ssize_t ret = Post(*it);
    if (ret == -FI_EAGAIN) {
      blocked.push_back(it->peer);
      ++it;
      continue;
    }
    if (ret != 0) {  // cannot be posted at all: report it as a failed completion
      Completion c;
      c.ctx = it->ctx;
      c.status = Status::Unavailable(FabricError("deferred post", static_cast<int>(ret)));
      failed_.push_back(c);
    }
    auto n = deferred_per_peer_.find(it->peer);
    if (n != deferred_per_peer_.end() && --n->second == 0) deferred_per_peer_.erase(n);
    it = deferred_.erase(it);
  }
}

Status Fabric::PostRecv(OpContext* ctx, void* buf, size_t len, void* desc) {
  return PostOrDefer({OpKind::kRecv, ctx, FI_ADDR_UNSPEC, buf, len, desc, 0, 0});
}

Status Fabric::Send(OpContext* ctx, PeerAddr peer, const void* buf, size_t len, void* desc) {
  return PostOrDefer({OpKind::kSend, ctx, peer, const_cast<void*>(buf), len, desc, 0, 0});
}

Status Fabric::SendNow(OpContext* ctx, PeerAddr peer, const void* buf, size_t len, void* desc) {
  Deferred d{OpKind::kSend, ctx, peer, const_cast<void*>(buf), len, desc, 0, 0};
  d.ctx->kind = d.kind;
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (deferred_per_peer_.count(peer) != 0)
      return Status::NoSpace("the peer cannot take a message now (operations queued)");
  }
  ssize_t ret = Post(d);
  if (ret == 0) {
    WakeIfNotWaiter();
    return Status::Ok();
  }
  if (ret == -FI_EAGAIN) return Status::NoSpace("the peer cannot take a message now (FI_EAGAIN)");
  return Status::Unavailable(FabricError("post", static_cast<int>(ret)));
}

Status Fabric::Read(OpContext* ctx, PeerAddr peer, void* buf, size_t len, void* desc,
                    uint64_t raddr, uint64_t rkey) {
  return PostOrDefer({OpKind::kRead, ctx, peer, buf, len, desc, raddr, rkey});
}

Status Fabric::Write(OpContext* ctx, PeerAddr peer, const void* buf, size_t len, void* desc,
                     uint64_t raddr, uint64_t rkey) {
  return PostOrDefer({OpKind::kWrite, ctx, peer, const_cast<void*>(buf), len, desc, raddr, rkey});
}

int Fabric::ReadCq(Completion* out, int max) {
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (!failed_.empty()) {
      out[0] = failed_.front();
      failed_.pop_front();
      return 1;
    }
  }
  fi_cq_msg_entry entries[32];
  fi_addr_t srcs[32];
  if (max > 32) max = 32;
  ssize_t n = source_ ? fi_cq_readfrom(cq_, entries, max, srcs) : fi_cq_read(cq_, entries, max);
  if (n > 0) {
    for (ssize_t i = 0; i < n; i++) {
      out[i].ctx = static_cast<OpContext*>(entries[i].op_context);
      out[i].length = entries[i].len;
      out[i].src = source_ ? srcs[i] : FI_ADDR_NOTAVAIL;
      out[i].status = Status::Ok();
    }
    return static_cast<int>(n);
  }
  if (n == -FI_EAVAIL) {
    fi_cq_err_entry err{};
    if (fi_cq_readerr(cq_, &err, 0) == 1) {
      out[0].ctx = static_cast<OpContext*>(err.op_context);
      out[0].length = 0;
      out[0].src = FI_ADDR_NOTAVAIL;
      out[0].status = Status::Unavailable(
          std::string("fabric operation failed: ") + fi_strerror(err.err) + " (peer gone?)");
      return 1;
    }
  }
  return 0;
}

int Fabric::Poll(Completion* out, int max) {
  int n = ReadCq(out, max);
  bool waiting;
  {
    std::lock_guard<std::mutex> lock(mu_);
    waiting = !deferred_.empty() || !failed_.empty();
  }
  if (waiting) RetryDeferred();
  return n;
}

void Fabric::WakeIfNotWaiter() {
  if (event_fd_ < 0 || std::this_thread::get_id() == waiter_.load(std::memory_order_relaxed)) return;
  posts_.fetch_add(1);
  if (!in_poll_.load()) return;  // the waiter is not asleep: it sees posts_ before it sleeps
  uint64_t one = 1;
  (void)!::write(event_fd_, &one, sizeof(one));
}

int Fabric::Wait(Completion* out, int max, int timeout_ms, bool idle_expected) {
  waiter_.store(std::this_thread::get_id(), std::memory_order_relaxed);
  const uint64_t posts_seen = posts_.load();
  int n = 0;
  bool read_first = !idle_expected || wait_set_ == nullptr || timeout_ms <= 0;
  if (!read_first) {
    std::lock_guard<std::mutex> lock(mu_);
    read_first = !deferred_.empty() || !failed_.empty();  // Poll retries or reports them
  }
  if (read_first) {
    n = Poll(out, max);
    if (n > 0 || timeout_ms <= 0) return n;
  }
  if (wait_fd_ >= 0) {
    // The provider's fi_trywait would leave the signal of an earlier completion set
    // (providers.h, own_wait_set): clear it here. A zero-timeout fi_wait runs the set's
    // try step: it clears the signal, then drives the provider's progress and checks the
    // queue, and times out only when the queue is empty after the clear. A completion
    // that comes later sets the signal again, so poll(2) below cannot miss it. When the
    // queue holds something, read it instead of sleeping.
    if (wait_set_ != nullptr && fi_wait(wait_set_, 0) != -FI_ETIMEDOUT) {
      n = Poll(out, max);
      if (n > 0) return n;
    }
    fid* fids[1] = {&cq_->fid};
    if (wait_set_ != nullptr || fi_trywait(fabric_, fids, 1) == FI_SUCCESS) {
      // The CQ's fd wakes us for incoming traffic; the event fd for operations other
      // threads posted, which need this thread to drive them (manual progress). A post
      // since the Poll above is driven at once instead of sleeping.
      in_poll_.store(true);
      if (posts_.load() == posts_seen) {
        pollfd p[2] = {{wait_fd_, POLLIN, 0}, {event_fd_, POLLIN, 0}};
        if (::poll(p, 2, timeout_ms) > 0 && (p[1].revents & POLLIN)) {
          uint64_t v;
          (void)!::read(event_fd_, &v, sizeof(v));
        }
      }
      in_poll_.store(false);
    }
    return Poll(out, max);
  }
  auto until = std::chrono::steady_clock::now() + std::chrono::milliseconds(timeout_ms);
  while (std::chrono::steady_clock::now() < until) {
    n = Poll(out, max);
    if (n > 0) return n;
  }
  return 0;
}

}  // namespace rpmp

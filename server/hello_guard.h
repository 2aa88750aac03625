// HelloGuard: the server's bounds on unauthenticated work (docs/security.md). A HELLO
// is the one frame anyone may send, and answering it makes the server insert the
// address the frame claims into its address vector and send there. The guard decides
// which HELLOs get that far: at most `rate_per_address` per second per claimed
// (canonical) address the server cannot tell the sender owns, so one victim address
// cannot be flooded with replies (a HELLO whose sender is known to own its address,
// FI_SOURCE naming that address's AV entry, is not rate-limited), and at
// most `max_pending` HELLO replies in flight at once, so HELLOs to dead or unreachable
// addresses hold at most that many receive slots (each for at most hello_timeout,
// Server::ExpireHellos). When the pending replies are at their limit the server first
// withdraws the oldest one the provider has not taken (an honest client's reply goes
// out at once, over the connection its HELLO came by; a reply to an unreachable
// address waits), so a flood does not lock honest clients out. What the guard refuses
// is dropped without a reply.
//
// Not thread-safe: the server calls it under sessions_mu_. Internal to server/.
#pragma once

#include <chrono>
#include <cstdint>
#include <string>
#include <string_view>
#include <unordered_map>

namespace rpmp {

class HelloGuard {
 public:
  using Clock = std::chrono::steady_clock;
  // Addresses remembered at once for the per-address rate (older windows are dropped
  // first; when all are current, HELLOs from new addresses wait for the next second).
  static constexpr size_t kMaxTracked = 8192;

  HelloGuard(uint32_t max_pending, uint32_t rate_per_address)
      : max_pending_(max_pending), rate_(rate_per_address) {}

  // True when a HELLO claiming `address` may be answered now (within its rate unless
  // `verified`, and with room for one more pending reply); it then counts as pending
  // until Done().
  bool Admit(std::string_view address, bool verified, Clock::time_point now);
  bool full() const { return pending_ >= max_pending_; }
  void Done() {
    if (pending_ > 0) pending_--;
  }
  uint32_t pending() const { return pending_; }
  uint32_t max_pending() const { return max_pending_; }
  // True at most once a second: hostile HELLOs are logged at WARN that often, the
  // rest at DEBUG, so a flood cannot fill the log.
  bool WarnNow(Clock::time_point now);

 private:
  struct Window {
    Clock::time_point start;
    uint32_t count = 0;
  };
  uint32_t max_pending_, rate_;
  uint32_t pending_ = 0;
  std::unordered_map<std::string, Window> windows_;
  Clock::time_point last_warn_{};
};

}  // namespace rpmp

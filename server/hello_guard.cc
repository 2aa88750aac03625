// Bounds on unauthenticated HELLOs (see hello_guard.h).
#include "server/hello_guard.h"

namespace rpmp {

bool HelloGuard::Admit(std::string_view address, bool verified, Clock::time_point now) {
  if (pending_ >= max_pending_) return false;
  if (verified) {
    pending_++;
    return true;
  }
  const auto second = std::chrono::seconds(1);
  auto it = windows_.find(std::string(address));
  if (it == windows_.end()) {
    if (windows_.size() >= kMaxTracked) {
      for (auto w = windows_.begin(); w != windows_.end();)
        w = now - w->second.start >= second ? windows_.erase(w) : std::next(w);
      if (windows_.size() >= kMaxTracked) return false;
    }
    it = windows_.emplace(std::string(address), Window{now, 0}).first;
  }
  Window& w = it->second;
  if (now - w.start >= second) w = Window{now, 0};
  if (w.count >= rate_) return false;
  w.count++;
  pending_++;
  return true;
}

bool HelloGuard::WarnNow(Clock::time_point now) {
  if (now - last_warn_ < std::chrono::seconds(1)) return false;
  last_warn_ = now;
  return true;
}

}  // namespace rpmp

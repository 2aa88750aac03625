// Eventually: polling with a deadline, the way tests wait for a condition (never a bare
// sleep). Header-only, for tests that do not link the cluster harness (which has its own
// std::function form in tests/cluster/cluster_harness.h). Tests only.
#pragma once

#include <chrono>
#include <thread>

namespace rpmp::testing {

// Polls `pred` every 20 ms until it holds (true) or `within` passes (false).
template <typename Pred>
bool Eventually(Pred pred, std::chrono::milliseconds within) {
  auto until = std::chrono::steady_clock::now() + within;
  while (!pred()) {
    if (std::chrono::steady_clock::now() >= until) return false;
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  return true;
}

}  // namespace rpmp::testing

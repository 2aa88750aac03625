// Compactor: the background thread of rpmp-server that keeps pool usage bounded under
// overwrites. It calls Store::Compact in small steps, paced to a byte rate (a token
// bucket: after a step that copied N bytes it waits N / rate), and idles with a short
// poll when nothing passes the threshold (each poll also frees graveyard segments
// whose grace has passed). A step copies payloads without the namespace's mutex and
// lets it go after every batch (CompactOptions::batch_bytes), which bounds what a
// foreground request waits for.
//
// Owned by the Server (started in Server::Start, stopped before the store closes).
// status() may be called from any thread (STAT handler, metrics scrapes).
#pragma once

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <mutex>
#include <thread>

#include "server/store/store.h"

namespace rpmp {

struct CompactorSettings {
  double threshold = 0.5;                  // dead share; 0 = compaction off
  uint64_t rate = 64ull << 20;             // bytes per second at most
  std::chrono::milliseconds grace{5000};   // CompactOptions::grace
  std::chrono::milliseconds idle_poll{100};
};

struct CompactorStatus {
  bool enabled = false;
  bool running = false;          // the last step moved records (a pass is under way)
  uint64_t steps = 0;            // steps that moved records
  uint64_t last_run_unix_ms = 0; // end of the last step that moved records; 0 = never
  uint64_t errors = 0;           // steps that failed (logged)
};

class Compactor {
 public:
  // Does not start the thread (Start does); `store` must outlive the Compactor.
  Compactor(Store* store, const CompactorSettings& settings);
  ~Compactor();  // Stop()
  void Start();  // no-op when the threshold is 0
  void Stop();   // waits for the step in progress to end
  CompactorStatus status() const;

 private:
  void Loop();
  // Waits up to `d`; false when stopping.
  bool Pause(std::chrono::steady_clock::duration d);

  Store* store_;
  const CompactorSettings settings_;
  std::thread thread_;
  std::mutex mu_;
  std::condition_variable cv_;
  bool stop_ = false;  // guarded by mu_
  std::atomic<bool> running_{false};
  std::atomic<uint64_t> steps_{0}, last_run_unix_ms_{0}, errors_{0};
};

}  // namespace rpmp

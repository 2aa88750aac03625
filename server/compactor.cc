// The background compaction thread of rpmp-server (see compactor.h).
#include "server/compactor.h"

#include <algorithm>

#include "common/log.h"
#include "common/thread_name.h"

namespace rpmp {
namespace {

constexpr uint64_t kMaxStepBytes = 1ull << 20;   // bytes one Store::Compact call copies
constexpr uint64_t kMinStepBytes = 64ull << 10;

uint64_t NowUnixMs() {
  return static_cast<uint64_t>(std::chrono::duration_cast<std::chrono::milliseconds>(
                                   std::chrono::system_clock::now().time_since_epoch())
                                   .count());
}

}  // namespace

Compactor::Compactor(Store* store, const CompactorSettings& settings)
    : store_(store), settings_(settings) {}

Compactor::~Compactor() { Stop(); }

void Compactor::Start() {
  if (settings_.threshold <= 0 || settings_.rate == 0 || thread_.joinable()) return;
  thread_ = std::thread([this] {
    NameThisThread("rpmp-compact");
    Loop();
  });
}

void Compactor::Stop() {
  {
    std::lock_guard<std::mutex> lock(mu_);
    stop_ = true;
  }
  cv_.notify_all();
  if (thread_.joinable()) thread_.join();
  running_ = false;
}

CompactorStatus Compactor::status() const {
  CompactorStatus s;
  s.enabled = settings_.threshold > 0 && settings_.rate > 0;
  s.running = running_.load();
  s.steps = steps_.load();
  s.last_run_unix_ms = last_run_unix_ms_.load();
  s.errors = errors_.load();
  return s;
}

bool Compactor::Pause(std::chrono::steady_clock::duration d) {
  std::unique_lock<std::mutex> lock(mu_);
  return !cv_.wait_for(lock, d, [this] { return stop_; });
}

void Compactor::Loop() {
  CompactOptions o;
  o.min_dead_fraction = settings_.threshold;
  // About ten steps per second at the configured rate, within [64 KiB, 1 MiB].
  o.max_bytes = std::clamp<uint64_t>(settings_.rate / 10, kMinStepBytes, kMaxStepBytes);
  o.batch_bytes = std::min<uint64_t>(o.batch_bytes, o.max_bytes);
  o.grace = settings_.grace;
  // Compacting a segment frees it one grace later; waiting one grace for its records
  // to die by themselves frees it no later and copies nothing (CompactOptions::settle).
  o.settle = settings_.grace;
  RPMP_LOG_INFO("compaction on: segments at least %.0f%% dead, at most %llu bytes/s, grace %lld ms",
                settings_.threshold * 100, static_cast<unsigned long long>(settings_.rate),
                static_cast<long long>(settings_.grace.count()));
  while (true) {
    auto started = std::chrono::steady_clock::now();
    StatusOr<uint64_t> moved = store_->Compact(o);
    if (!moved.ok()) {
      running_ = false;
      if (errors_++ % 100 == 0)
        RPMP_LOG_WARN("compaction step failed: %s", moved.status().ToString().c_str());
      if (!Pause(std::chrono::seconds(1))) return;
      continue;
    }
    if (*moved == 0) {
      running_ = false;
      if (!Pause(settings_.idle_poll)) return;
      continue;
    }
    running_ = true;
    steps_++;
    last_run_unix_ms_ = NowUnixMs();
    // Token bucket: N bytes cost N / rate seconds, counted from the step's start.
    auto cost = std::chrono::duration<double>(static_cast<double>(*moved) /
                                              static_cast<double>(settings_.rate));
    auto next = started + std::chrono::duration_cast<std::chrono::steady_clock::duration>(cost);
    if (!Pause(std::max(next - std::chrono::steady_clock::now(),
                        std::chrono::steady_clock::duration::zero())))
      return;
  }
}

}  // namespace rpmp

// CallLatch: the end of one synchronous client call, set once by the call's callback
// (the progress thread, or the caller itself while it polls) and awaited by the caller.
//
// It replaces std::promise<void>/std::future for the synchronous calls of ClientImpl:
// libstdc++'s promise::set_value runs through pthread_once, whose slow path makes a
// FUTEX_WAKE syscall on every call even when nobody sleeps. Here a caller that polled
// and saw Ready() costs no syscall at all; only a caller that went to sleep in Wait()
// is woken through the mutex and condition variable. Internal to client-cpp.
#pragma once

#include <atomic>
#include <condition_variable>
#include <mutex>

namespace rpmp {

class CallLatch {
 public:
  // Once, after every result the caller will read is written (release).
  void Set() {
    ready_.store(true, std::memory_order_seq_cst);
    if (sleepers_.load(std::memory_order_seq_cst) > 0) {
      std::lock_guard<std::mutex> lock(mu_);
      cv_.notify_all();
    }
  }
  bool Ready() const { return ready_.load(std::memory_order_acquire); }
  // Blocks until Set(). Set's store and this waiter's count are both seq_cst: either
  // Set sees the sleeper (and notifies under the mutex) or the check under the mutex
  // sees ready.
  void Wait() {
    if (Ready()) return;
    sleepers_.fetch_add(1, std::memory_order_seq_cst);
    {
      std::unique_lock<std::mutex> lock(mu_);
      cv_.wait(lock, [this] { return ready_.load(std::memory_order_seq_cst); });
    }
    sleepers_.fetch_sub(1, std::memory_order_relaxed);
  }

 private:
  std::atomic<bool> ready_{false};
  std::atomic<int> sleepers_{0};
  std::mutex mu_;
  std::condition_variable cv_;
};

}  // namespace rpmp

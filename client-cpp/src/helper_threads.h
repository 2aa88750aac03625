// HelperThreads: runs a blocking continuation on a thread of its own, for work that must
// not run on a connection's progress thread (a resubmission that may wait for a free
// request slot, a metadata refetch after a stale one-sided read). The destructor waits
// for every continuation started, so none outlives the client it uses. Rare paths only:
// one thread per call. Internal to client-cpp (ClientImpl).
#pragma once

#include <condition_variable>
#include <functional>
#include <mutex>
#include <thread>

#include "common/thread_name.h"

namespace rpmp {

class HelperThreads {
 public:
  HelperThreads() = default;
  HelperThreads(const HelperThreads&) = delete;
  HelperThreads& operator=(const HelperThreads&) = delete;
  ~HelperThreads() {
    std::unique_lock<std::mutex> lock(mu_);
    idle_.wait(lock, [this] { return running_ == 0; });
  }

  void Run(std::function<void()> fn) {
    {
      std::lock_guard<std::mutex> lock(mu_);
      running_++;
    }
    std::thread([this, fn = std::move(fn)]() mutable {
      NameThisThread("rpmp-helper");
      fn();
      fn = nullptr;  // its captures (callbacks, buffers) go while their client still exists
      std::lock_guard<std::mutex> lock(mu_);  // under the lock: *this may go once it is 0
      if (--running_ == 0) idle_.notify_all();
    }).detach();
  }

 private:
  std::mutex mu_;
  std::condition_variable idle_;
  int running_ = 0;
};

}  // namespace rpmp

// Unit tests of CallLatch: a latch set before the wait, set by another thread while the
// caller sleeps, and many short-lived latches each set by another thread (the race
// between Set and Wait that a lost wake-up would turn into a hang).
#include "client-cpp/src/call_latch.h"

#include <catch2/catch.hpp>
#include <chrono>
#include <future>
#include <memory>
#include <thread>

namespace rpmp {
namespace {

TEST_CASE("CallLatch set before the wait is ready and does not block", "[call_latch]") {
  CallLatch latch;
  CHECK_FALSE(latch.Ready());
  latch.Set();
  CHECK(latch.Ready());
  latch.Wait();
  CHECK(latch.Ready());
}

TEST_CASE("CallLatch wakes a caller asleep in Wait", "[call_latch]") {
  CallLatch latch;
  int result = 0;
  // The waiter runs on its own thread so that a lost wake-up fails the check below
  // instead of hanging the test.
  auto waiter = std::async(std::launch::async, [&] {
    latch.Wait();
    return result;
  });
  // The waiter has not been let go: nothing was set.
  CHECK(waiter.wait_for(std::chrono::milliseconds(50)) == std::future_status::timeout);
  result = 42;
  latch.Set();
  REQUIRE(waiter.wait_for(std::chrono::seconds(10)) == std::future_status::ready);
  CHECK(waiter.get() == 42);  // the write before Set is seen after Wait
}

TEST_CASE("CallLatch never loses a wake-up when Set races Wait", "[call_latch]") {
  auto run = std::async(std::launch::async, [] {
    for (int i = 0; i < 20000; i++) {
      auto latch = std::make_shared<CallLatch>();
      std::thread setter([latch] { latch->Set(); });
      latch->Wait();
      setter.join();
      if (!latch->Ready()) return i;
    }
    return -1;
  });
  REQUIRE(run.wait_for(std::chrono::seconds(60)) == std::future_status::ready);
  CHECK(run.get() == -1);
}

}  // namespace
}  // namespace rpmp

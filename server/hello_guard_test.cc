// Unit tests of HelloGuard (hello_guard.h): the per-address rate, the pending cap, and
// that a HELLO whose sender owns its address is not rate-limited.
#include "server/hello_guard.h"

#include <catch2/catch.hpp>

namespace rpmp {
namespace {

TEST_CASE("hello guard: rate per claimed address, one second windows") {
  HelloGuard g(1000, 3);
  auto t = HelloGuard::Clock::now();
  for (int i = 0; i < 3; i++) CHECK(g.Admit("a", false, t));
  CHECK(!g.Admit("a", false, t));
  CHECK(g.Admit("b", false, t));  // another address has its own rate
  CHECK(g.Admit("a", false, t + std::chrono::milliseconds(1000)));
  CHECK(g.Admit("a", true, t));  // verified sender: no rate
  CHECK(g.pending() == 6);
}

TEST_CASE("hello guard: at most max_pending replies pending, Done frees one") {
  HelloGuard g(2, 100);
  auto t = HelloGuard::Clock::now();
  CHECK(g.Admit("a", false, t));
  CHECK(g.Admit("b", true, t));
  CHECK(g.full());
  CHECK(!g.Admit("c", false, t));
  CHECK(!g.Admit("c", true, t));
  g.Done();
  CHECK(!g.full());
  CHECK(g.Admit("c", false, t));
}

TEST_CASE("hello guard: warns at most once a second") {
  HelloGuard g(1, 1);
  auto t = HelloGuard::Clock::now();
  CHECK(g.WarnNow(t));
  CHECK(!g.WarnNow(t + std::chrono::milliseconds(500)));
  CHECK(g.WarnNow(t + std::chrono::milliseconds(1500)));
}

}  // namespace
}  // namespace rpmp

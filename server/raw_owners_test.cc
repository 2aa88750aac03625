// Unit test of RawOwners: ownership, orphans, pins (raw_owners.h).
#include "server/raw_owners.h"

#include <catch2/catch.hpp>

namespace rpmp {

TEST_CASE("raw owners: only the owning session touches an allocation, and pins block free") {
  RawOwners o;
  RawAddress a{0, 4096};
  o.Claim(a, 1000, 7);
  CHECK(o.Pin(a, 10, 8).code() == StatusCode::kPermissionDenied);
  CHECK(o.Pin({0, 4096 + 999}, 1, 8).code() == StatusCode::kPermissionDenied);  // interior
  CHECK(o.Pin({0, 4096 + 1000}, 1, 8).ok());  // just past it: not this allocation
  CHECK(o.Release(a, 8).code() == StatusCode::kPermissionDenied);
  REQUIRE(o.Pin({0, 4100}, 10, 7).ok());
  CHECK(o.Release(a, 7).code() == StatusCode::kFailedPrecondition);  // RMA in flight
  o.Unpin({0, 4100});
  CHECK(o.Release(a, 7).ok());
  CHECK(o.size() == 0);
  CHECK(o.Pin(a, 10, 8).ok());  // unknown (e.g. before a restart): not owned
}

TEST_CASE("raw owners: an ended session's allocations are adopted by the next toucher") {
  RawOwners o;
  o.Claim({1, 0}, 64, 7);
  o.Claim({0, 0}, 64, 7);
  o.SessionEnded(7);
  REQUIRE(o.Pin({1, 0}, 64, 9).ok());
  o.Unpin({1, 0});
  CHECK(o.Pin({1, 0}, 64, 10).code() == StatusCode::kPermissionDenied);  // 9 owns it now
  CHECK(o.Release({0, 0}, 10).ok());
}

TEST_CASE("raw owners: a tenant adopts only orphans of its own prefix, never unowned memory") {
  RawOwners o;
  o.Claim({0, 0}, 64, 7, "app-a/");
  o.Claim({0, 1000}, 64, 7, "app-a/");
  o.Claim({0, 2000}, 64, 8, "");  // a secret holder's
  o.SessionEnded(7);
  o.SessionEnded(8);
  CHECK(o.Pin({0, 0}, 8, 9, "app-b/").code() == StatusCode::kPermissionDenied);
  CHECK(o.Release({0, 0}, 9, "app-b/").code() == StatusCode::kPermissionDenied);
  CHECK(o.Pin({0, 2000}, 8, 9, "app-b/").code() == StatusCode::kPermissionDenied);
  CHECK(o.Pin({0, 50000}, 8, 9, "app-b/").code() == StatusCode::kPermissionDenied);  // unowned
  REQUIRE(o.Pin({0, 0}, 8, 10, "app-a/").ok());  // same prefix: adopted
  o.Unpin({0, 0});
  CHECK(o.Pin({0, 0}, 8, 11, "app-a/").code() == StatusCode::kPermissionDenied);  // 10 owns it
  CHECK(o.Release({0, 1000}, 12, "").ok());  // the secret holder adopts any orphan
  CHECK(o.Pin({0, 2000}, 8, 12, "").ok());
}

}  // namespace rpmp

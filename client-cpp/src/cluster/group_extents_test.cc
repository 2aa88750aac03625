// Unit tests of GroupExtents' names and its no-space test (the split path itself runs
// against real processes in the fault campaign's --split mode, tests/chaos/).
#include "rpmp/group_extents.h"

#include <catch2/catch.hpp>

namespace rpmp {
namespace {

TEST_CASE("GroupExtents names extents and parses them back", "[group_extents]") {
  CHECK(GroupExtents::ExtentName("app/s1/g3", 0) == "app/s1/g3");
  CHECK(GroupExtents::ExtentName("app/s1/g3", 2) == "app/s1/g3/x2");
  CHECK(GroupExtents::Parse("app/s1/g3/x2") == std::make_pair(std::string("app/s1/g3"), 2));
  CHECK(GroupExtents::Parse("app/s1/g3/x12") == std::make_pair(std::string("app/s1/g3"), 12));
  // Not extents: leading zero, no digits, not the last component, no parent.
  CHECK(GroupExtents::Parse("app/s1/g3/x02").second == 0);
  CHECK(GroupExtents::Parse("app/s1/g3/x").second == 0);
  CHECK(GroupExtents::Parse("app/x1/g3").first == "app/x1/g3");
  CHECK(GroupExtents::Parse("x1").second == 0);
}

TEST_CASE("GroupExtents splits only on the store's no-space answers", "[group_extents]") {
  CHECK(GroupExtents::IsNoSpace(Status::NoSpace("no pool can hold 4096 more bytes: ...")));
  CHECK(GroupExtents::IsNoSpace(
      Status::NoSpace("namespace 'g': only 1 of 2 required copies written; last error: RESOURCE_EXHAUSTED: "
                      "no pool can hold 4096 more bytes")));
  CHECK(GroupExtents::IsNoSpace(Status::NoSpace("pool /dev/shm/p cannot hold an object of 9 bytes")));
  CHECK_FALSE(GroupExtents::IsNoSpace(Status::NoSpace("too many sessions")));
  CHECK_FALSE(GroupExtents::IsNoSpace(Status::Unavailable("no pool can hold 1 more bytes")));
  CHECK_FALSE(GroupExtents::IsNoSpace(Status::Ok()));
}

}  // namespace
}  // namespace rpmp

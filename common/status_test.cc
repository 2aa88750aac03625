// Tests of Status and StatusOr.
#include "common/status.h"

#include <catch2/catch.hpp>

namespace rpmp {
namespace {

StatusOr<int> Half(int x) {
  if (x % 2 != 0) return Status::InvalidArgument("odd");
  return x / 2;
}

Status Quarter(int x, int* out) {
  RPMP_ASSIGN_OR_RETURN(int h, Half(x));
  RPMP_ASSIGN_OR_RETURN(*out, Half(h));
  return Status::Ok();
}

TEST_CASE("Status codes match gRPC's numbering and print readably") {
  CHECK(static_cast<int>(StatusCode::kNotFound) == 5);
  CHECK(static_cast<int>(StatusCode::kResourceExhausted) == 8);
  CHECK(static_cast<int>(StatusCode::kUnavailable) == 14);
  CHECK(Status::NotFound("key 'a'").ToString() == "not found: key 'a'");
  CHECK(Status::Ok().ToString() == "ok");
  CHECK(Status::NoSpace("pool").Annotate("put").ToString() == "no space: put: pool");
}

TEST_CASE("StatusOr carries a value or the error, and the macros propagate errors") {
  int out = 0;
  CHECK(Quarter(8, &out).ok());
  CHECK(out == 2);
  Status s = Quarter(6, &out);
  CHECK(s.code() == StatusCode::kInvalidArgument);
  CHECK(s.message() == "odd");
}

}  // namespace
}  // namespace rpmp

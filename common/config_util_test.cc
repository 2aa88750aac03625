// Tests of size, duration and address parsing.
#include "common/config_util.h"

#include <catch2/catch.hpp>

namespace rpmp {
namespace {

TEST_CASE("sizes parse with binary units and reject nonsense") {
  CHECK(*ParseSize("4096") == 4096);
  CHECK(*ParseSize("4k") == 4096);
  CHECK(*ParseSize("64M") == 64ull << 20);
  CHECK(*ParseSize("1GiB") == 1ull << 30);
  CHECK(*ParseSize("2gb") == 2ull << 30);
  CHECK_FALSE(ParseSize("").ok());
  CHECK_FALSE(ParseSize("G").ok());
  CHECK_FALSE(ParseSize("12q").ok());
  CHECK_FALSE(ParseSize("99999999999999999999").ok());
  CHECK_FALSE(ParseSize("20000000t").ok());
}

TEST_CASE("durations parse") {
  CHECK(ParseDuration("250ms")->count() == 250);
  CHECK(ParseDuration("3s")->count() == 3000);
  CHECK(ParseDuration("2")->count() == 2000);
  CHECK(ParseDuration("1m")->count() == 60000);
  CHECK_FALSE(ParseDuration("3 days").ok());
}

TEST_CASE("host:port parses, including IPv6, and bad ones are explained") {
  auto a = ParseHostPort("127.0.0.1:7000");
  REQUIRE(a.ok());
  CHECK(a->host == "127.0.0.1");
  CHECK(a->port == "7000");
  auto b = ParseHostPort("[::1]:80");
  REQUIRE(b.ok());
  CHECK(b->host == "::1");
  CHECK_FALSE(ParseHostPort("localhost").ok());
  CHECK_FALSE(ParseHostPort("h:0").ok());
  CHECK_FALSE(ParseHostPort("h:70000").ok());
  CHECK(ParseHostPort("h:x1").status().message().find("non-numeric") != std::string::npos);
}

}  // namespace
}  // namespace rpmp

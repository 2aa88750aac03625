// Tests of CRC-32C against published check values.
#include "common/crc32c.h"

#include <catch2/catch.hpp>
#include <string>

namespace rpmp {
namespace {

TEST_CASE("CRC-32C matches the standard check value and extends incrementally") {
  const std::string s = "123456789";
  CHECK(Crc32c(s.data(), s.size()) == 0xE3069283u);
  CHECK(Crc32c(nullptr, 0) == 0u);
  uint32_t part = Crc32c(s.data(), 4);
  CHECK(Crc32c(s.data() + 4, s.size() - 4, part) == 0xE3069283u);
  std::string zeros(32, '\0');
  CHECK(Crc32c(zeros.data(), zeros.size()) == 0x8A9136AAu);  // RFC 3720 B.4
}

}  // namespace
}  // namespace rpmp

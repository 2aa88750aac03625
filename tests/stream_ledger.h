// The after-crash check of the kill -9 tests (durability_test, sharding_test): reads the
// records of one key back and compares them with what the writers attempted and what was
// acknowledged. Tests only; call it inside a Catch test case.
#pragma once

#include <catch2/catch.hpp>

#include <cstdint>
#include <cstring>
#include <functional>
#include <set>
#include <string>

#include "rpmp/client.h"

namespace rpmp::testing {

// Every record of ns/key was attempted (nothing invented) and appears once (nothing
// doubled), reads back with its checksum verified and exactly value_for(tag) as its bytes,
// and every acknowledged tag is visible (nothing lost). Returns how many are visible.
inline size_t CheckStreamAgainstLedger(Client* r, const std::string& ns, const std::string& key,
                                       const std::set<uint64_t>& attempted, const std::set<uint64_t>& acked,
                                       const std::function<std::string(uint64_t)>& value_for) {
  StatusOr<ObjectMeta> m = r->GetMeta(ns, key);
  REQUIRE(m.ok());
  std::set<uint64_t> visible;
  StatusOr<Buffer> buf = r->AllocBuffer(1 << 20);
  REQUIRE(buf.ok());
  for (const RecordRef& rec : m->records) {
    CHECK(attempted.count(rec.tag) == 1);        // nothing invented
    CHECK(visible.insert(rec.tag).second);       // nothing doubled
    REQUIRE(r->ReadRecord(rec, &*buf, 0).ok());  // checksum verified
    std::string expect = value_for(rec.tag);
    CHECK(rec.length == expect.size());
    CHECK(std::memcmp(buf->data(), expect.data(), expect.size()) == 0);
  }
  size_t lost = 0;
  for (uint64_t t : acked) lost += visible.count(t) == 0;
  INFO(acked.size() << " acknowledged, " << visible.size() << " visible, " << attempted.size() << " attempted");
  CHECK(lost == 0);
  return visible.size();
}

}  // namespace rpmp::testing

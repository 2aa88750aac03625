// Unit tests of the client's registered buffer pool: size classes, reuse, the cache
// budget, move semantics, and that every buffer lies inside its registered region.
#include "link/buffer_pool.h"

#include <catch2/catch.hpp>
#include <set>

#include "tests/test_util.h"

namespace rpmp {
namespace {

std::unique_ptr<Fabric> OpenFabric() {
  FabricOptions o;
  o.provider = testing::Provider();
  o.node = "127.0.0.1";
  auto f = Fabric::Open(o);
  REQUIRE(f.ok());
  return std::move(f).value();
}

TEST_CASE("buffers come in power-of-two classes from 64 KiB, registered") {
  auto fabric = OpenFabric();
  BufferPool pool(fabric.get(), 64 << 20);
  for (size_t want : {size_t{0}, size_t{1}, size_t{65536}, size_t{65537}, size_t{3} << 20}) {
    StatusOr<Buffer> b = pool.Acquire(want);
    REQUIRE(b.ok());
    CHECK(b->capacity() >= want);
    CHECK(b->capacity() >= 65536);
    CHECK((b->capacity() & (b->capacity() - 1)) == 0);
    CHECK(b->size() == 0);
    CHECK(BufferPool::RegionOf(*b).Contains(b->data(), b->capacity()));
  }
}

TEST_CASE("released buffers are reused, within the cache budget") {
  auto fabric = OpenFabric();
  BufferPool pool(fabric.get(), 1 << 20);  // room for four 256 KiB buffers
  char* first;
  {
    Buffer b = std::move(pool.Acquire(200000)).value();
    first = b.data();
  }
  Buffer again = std::move(pool.Acquire(250000)).value();
  CHECK(again.data() == first);  // same class: the cached slab comes back

  std::vector<Buffer> many;
  for (int i = 0; i < 8; i++) many.push_back(std::move(pool.Acquire(256 * 1024)).value());
  std::set<char*> seen;
  for (Buffer& b : many) seen.insert(b.data());
  CHECK(seen.size() == 8);  // live buffers never share memory
  CHECK(pool.cached_bytes() == 0);  // `again` took the one cached slab back
  many.clear();  // only four fit in the budget; the rest are unmapped
  CHECK(pool.cached_bytes() == 1 << 20);
  Buffer one = std::move(pool.Acquire(256 * 1024)).value();
  CHECK(pool.cached_bytes() == 3 * 256 * 1024);  // served from the cache
}

TEST_CASE("a moved-from buffer is empty and the move target owns the memory") {
  auto fabric = OpenFabric();
  BufferPool pool(fabric.get(), 8 << 20);
  Buffer a = std::move(pool.Acquire(1000)).value();
  a.set_size(10);
  char* p = a.data();
  Buffer b = std::move(a);
  CHECK_FALSE(a.valid());
  CHECK(a.capacity() == 0);
  CHECK(b.data() == p);
  CHECK(b.size() == 10);
  b.set_size(b.capacity() + 1);  // clamped
  CHECK(b.size() == b.capacity());
}

}  // namespace
}  // namespace rpmp

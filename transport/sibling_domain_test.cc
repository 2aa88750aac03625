// Tests of sibling endpoints with a domain of their own (Fabric::OpenSibling on the native
// TCP provider, docs/sharding.md "A domain per shard"): a region with remote access
// registered on the parent, before or after the sibling opened, is readable and
// writable by a peer through the sibling under the parent's key; closing the region
// revokes the key there too; the sibling has its own address vector; either may close
// first. And that RxM siblings still share the parent's domain.
#include <catch2/catch.hpp>

#include <chrono>
#include <cstring>
#include <vector>

#include "tests/test_util.h"
#include "transport/fabric.h"
#include "transport/fabric_test_util.h"

namespace rpmp {
namespace {

using testing::NativeTcpProvider;

std::unique_ptr<Fabric> OpenOn(const std::string& provider, const std::string& service) {
  FabricOptions o;
  o.provider = provider;
  o.node = "127.0.0.1";
  o.service = service;
  StatusOr<std::unique_ptr<Fabric>> f = Fabric::Open(o);
  REQUIRE(f.ok());
  return std::move(f).value();
}

Completion Await(Fabric& a, Fabric& b, OpContext* ctx) { return testing::AwaitOne(a, b, ctx); }

// A server parent with one sibling, and a peer that talks to the sibling.
struct Setup {
  std::unique_ptr<Fabric> parent, sibling, peer;
  PeerAddr to_sibling = 0;
  explicit Setup(const std::string& provider) {
    parent = OpenOn(provider, std::to_string(testing::FreePort()));
    StatusOr<std::unique_ptr<Fabric>> s = parent->OpenSibling(0);
    REQUIRE(s.ok());
    sibling = std::move(s).value();
    peer = OpenOn(provider, "");
    StatusOr<PeerAddr> p = peer->InsertPeer(sibling->LocalAddress());
    REQUIRE(p.ok());
    to_sibling = *p;
  }
  // The peer reads `len` bytes of `region` at `at` through the sibling.
  Completion PeerReads(const MemoryRegion& region, const char* at, char* into, size_t len) {
    OpContext ctx;
    Status st = peer->Read(&ctx, to_sibling, into, len, nullptr, region.RmaAddr(at), region.key());
    REQUIRE(st.ok());
    return Await(*peer, *sibling, &ctx);
  }
};

TEST_CASE("native TCP: a sibling has a domain and an address vector of its own") {
  std::string native = NativeTcpProvider();
  INFO("libfabric offers neither net (1.17) nor tcp (>= 1.18) natively");
  REQUIRE_FALSE(native.empty());
  Setup s(native);
  CHECK(s.sibling->own_domain());
  CHECK(s.sibling->AvOwner() == s.sibling.get());
  CHECK(s.parent->AvOwner() == s.parent.get());
  // Its own AV: a peer inserted there works for sends from the sibling.
  StatusOr<PeerAddr> back = s.sibling->InsertPeer(s.peer->LocalAddress());
  REQUIRE(back.ok());
  char in[16] = {0};
  OpContext recv, send;
  REQUIRE(s.peer->PostRecv(&recv, in, sizeof(in), nullptr).ok());
  REQUIRE(s.sibling->Send(&send, *back, "shard", 5, nullptr).ok());
  REQUIRE(Await(*s.peer, *s.sibling, &recv).status.ok());
  CHECK(std::memcmp(in, "shard", 5) == 0);
}

TEST_CASE("native TCP: parent regions registered before and after a sibling opened are valid on it") {
  std::string native = NativeTcpProvider();
  REQUIRE_FALSE(native.empty());
  std::vector<char> before(256 * 1024), after(256 * 1024), local(256 * 1024);
  for (size_t i = 0; i < before.size(); i++) {
    before[i] = static_cast<char>(i * 13);
    after[i] = static_cast<char>(i * 29 + 1);
  }
  // `before` is registered on a parent that has no sibling yet.
  std::unique_ptr<Fabric> parent = OpenOn(native, std::to_string(testing::FreePort()));
  auto rb = parent->Register(before.data(), before.size(), MrAccess::kRemoteRead);
  REQUIRE(rb.ok());
  StatusOr<std::unique_ptr<Fabric>> sib = parent->OpenSibling(0);
  REQUIRE(sib.ok());
  auto ra = parent->Register(after.data(), after.size(), MrAccess::kRemoteReadWrite);
  REQUIRE(ra.ok());
  std::unique_ptr<Fabric> peer = OpenOn(native, "");
  StatusOr<PeerAddr> to = peer->InsertPeer((*sib)->LocalAddress());
  REQUIRE(to.ok());
  for (auto* r : {&rb, &ra}) {
    const MemoryRegion& region = ***r;
    OpContext ctx;
    REQUIRE(peer->Read(&ctx, *to, local.data(), 200 * 1024, nullptr, region.RmaAddr(region.base() + 4096),
                       region.key())
                .ok());
    Completion c = Await(*peer, **sib, &ctx);
    REQUIRE(c.status.ok());
    CHECK(std::memcmp(local.data(), region.base() + 4096, 200 * 1024) == 0);
  }
  // And a write into the read-write one, through the sibling.
  std::memset(local.data(), 0x5a, 64 * 1024);
  OpContext w;
  REQUIRE(peer->Write(&w, *to, local.data(), 64 * 1024, nullptr, (*ra)->RmaAddr(after.data()), (*ra)->key()).ok());
  REQUIRE(Await(*peer, **sib, &w).status.ok());
  // The initiator's completion may come before the target placed the bytes: drive the
  // sibling until they are there (10 s at most).
  auto written = [&] {
    for (size_t i = 0; i < 64 * 1024; i++)
      if (after[i] != 0x5a) return false;
    return true;
  };
  auto until = std::chrono::steady_clock::now() + std::chrono::seconds(10);
  Completion c[8];
  while (!written() && std::chrono::steady_clock::now() < until) (*sib)->Poll(c, 8);
  CHECK(written());
}

TEST_CASE("native TCP: closing a parent region revokes its key on the sibling too") {
  std::string native = NativeTcpProvider();
  REQUIRE_FALSE(native.empty());
  Setup s(native);
  std::vector<char> mem(64 * 1024, 7), into(64 * 1024);
  auto r = s.parent->Register(mem.data(), mem.size(), MrAccess::kRemoteRead);
  REQUIRE(r.ok());
  REQUIRE(s.PeerReads(**r, mem.data(), into.data(), 4096).status.ok());
  uint64_t key = (*r)->key(), addr = (*r)->RmaAddr(mem.data());
  r->reset();  // revoked
  OpContext ctx;
  REQUIRE(s.peer->Read(&ctx, s.to_sibling, into.data(), 4096, nullptr, addr, key).ok());
  Completion c = Await(*s.peer, *s.sibling, &ctx);
  CHECK_FALSE(c.status.ok());
}

TEST_CASE("native TCP: a sibling may close before or after the parent's regions") {
  std::string native = NativeTcpProvider();
  REQUIRE_FALSE(native.empty());
  std::vector<char> mem(64 * 1024, 3), into(4096);
  {
    Setup s(native);
    auto r = s.parent->Register(mem.data(), mem.size(), MrAccess::kRemoteRead);
    REQUIRE(r.ok());
    REQUIRE(s.PeerReads(**r, mem.data(), into.data(), 4096).status.ok());
    s.sibling.reset();  // its copy of the region goes with it; the region stays valid
    StatusOr<std::unique_ptr<Fabric>> again = s.parent->OpenSibling(0);
    REQUIRE(again.ok());
    s.sibling = std::move(again).value();
    StatusOr<PeerAddr> p = s.peer->InsertPeer(s.sibling->LocalAddress());
    REQUIRE(p.ok());
    s.to_sibling = *p;
    REQUIRE(s.PeerReads(**r, mem.data() + 4096, into.data(), 4096).status.ok());
    CHECK(std::memcmp(into.data(), mem.data(), 4096) == 0);
  }  // the region closes before the sibling and the parent here (reverse order of Setup)
}

TEST_CASE("RxM over TCP: a sibling shares the parent's domain and address vector") {
  Setup s("tcp;ofi_rxm");
  CHECK_FALSE(s.sibling->own_domain());
  CHECK(s.sibling->AvOwner() == s.parent.get());
  std::vector<char> mem(64 * 1024, 9), into(4096);
  auto r = s.parent->Register(mem.data(), mem.size(), MrAccess::kRemoteRead);
  REQUIRE(r.ok());
  REQUIRE(s.PeerReads(**r, mem.data(), into.data(), 4096).status.ok());
  CHECK(std::memcmp(into.data(), mem.data(), 4096) == 0);
}

}  // namespace
}  // namespace rpmp

// Unit tests of SessionTable::Create at its limits (sessions.h): which session makes
// room when the table or an address is full, and the refusal when every candidate has
// requests in flight (the path a real server reaches only under load, so it is driven
// here directly). A real fabric on loopback backs the address vector; the peers'
// addresses are its own with other ports, inserted but never sent to.
#include "server/sessions.h"

#include <arpa/inet.h>
#include <netinet/in.h>

#include <catch2/catch.hpp>
#include <cstring>

namespace rpmp {
namespace {

struct Table {
  std::unique_ptr<Fabric> fabric;
  std::unique_ptr<SessionTable> table;

  // A table with the default limits but these two.
  Table(uint32_t max_sessions, uint32_t max_per_address) {
    SessionLimits limits;
    limits.max_sessions = max_sessions;
    limits.max_per_address = max_per_address;
    FabricOptions o;
    o.node = "127.0.0.1";
    fabric = std::move(Fabric::Open(o)).value();
    table = std::make_unique<SessionTable>(limits);
  }

  // The canonical address of a peer on loopback at `port`.
  std::string Address(uint16_t port) const {
    std::string a = fabric->LocalAddress();
    REQUIRE(a.size() >= sizeof(sockaddr_in));
    sockaddr_in in;
    std::memcpy(&in, a.data(), sizeof(in));
    in.sin_port = htons(port);
    std::memcpy(a.data(), &in, sizeof(in));
    StatusOr<std::string> canonical = fabric->CanonicalPeer(a);
    REQUIRE(canonical.ok());
    return *canonical;
  }

  // A session for a peer at `port` holding `prefix` (a tenant token's; "" = the secret).
  StatusOr<uint32_t> Open(uint16_t port, const std::string& prefix, SessionTable::Eviction* ev) {
    std::string address = Address(port);
    StatusOr<PeerAddr> peer = table->AcquirePeer(fabric.get(), address);
    REQUIRE(peer.ok());
    StatusOr<uint32_t> id = table->Create(fabric.get(), address, *peer, 1, "client-" + std::to_string(port), ev);
    if (!id.ok()) {
      table->ReleasePeer(fabric.get(), address);
      return id;
    }
    table->Find(*id)->prefix = prefix;
    return id;
  }
};

TEST_CASE("session table: full with every session busy, a HELLO is refused and counted, nothing ends") {
  Table t(/*max_sessions=*/3, /*max_per_address=*/64);
  SessionTable::Eviction ev;
  std::vector<uint32_t> ids;
  for (uint16_t port = 20001; port <= 20003; port++) {
    StatusOr<uint32_t> id = t.Open(port, "apps/a", &ev);
    REQUIRE(id.ok());
    CHECK(ev.id == 0);
    ids.push_back(*id);
  }
  for (uint32_t id : ids) t.table->Find(id)->inflight = 1;

  StatusOr<uint32_t> refused = t.Open(20004, "apps/b", &ev);
  REQUIRE(!refused.ok());
  CHECK(refused.status().code() == StatusCode::kResourceExhausted);
  CHECK(refused.status().message().find("max_sessions") != std::string::npos);
  CHECK(refused.status().message().find("all with requests in flight") != std::string::npos);
  CHECK(ev.id == 0);
  CHECK(t.table->size() == 3);
  CHECK(t.table->stats().table_refused.load() == 1);
  for (uint32_t id : ids) CHECK(t.table->Find(id) != nullptr);

  // One call answered: its session is now the only idle one and makes room.
  t.table->Find(ids[1])->inflight = 0;
  StatusOr<uint32_t> admitted = t.Open(20004, "apps/b", &ev);
  REQUIRE(admitted.ok());
  CHECK(ev.id == ids[1]);
  CHECK(ev.table_full);
  CHECK(t.table->Find(ids[1]) == nullptr);
  const EndedSession* ended = t.table->FindEnded(ids[1]);
  REQUIRE(ended != nullptr);
  CHECK(ended->reason == SessionEnd::kCrowdedOut);
  CHECK(t.table->stats().table_refused.load() == 1);
}

TEST_CASE("session table: when the largest tenant's sessions are all busy, another's idle one makes room") {
  Table t(/*max_sessions=*/4, /*max_per_address=*/64);
  SessionTable::Eviction ev;
  std::vector<uint32_t> flood;
  for (uint16_t port = 20011; port <= 20013; port++) flood.push_back(*t.Open(port, "apps/flood", &ev));
  StatusOr<uint32_t> quiet = t.Open(20014, "apps/quiet", &ev);
  REQUIRE(quiet.ok());
  for (uint32_t id : flood) t.table->Find(id)->inflight = 2;

  StatusOr<uint32_t> next = t.Open(20015, "", &ev);
  REQUIRE(next.ok());
  CHECK(ev.id == *quiet);  // the only idle session anywhere
  for (uint32_t id : flood) CHECK(t.table->Find(id) != nullptr);

  // With one of the flooder's idle again, it goes before anyone else's.
  t.table->Find(flood[2])->inflight = 0;
  StatusOr<uint32_t> after = t.Open(20016, "apps/other", &ev);
  REQUIRE(after.ok());
  CHECK(ev.id == flood[2]);
  CHECK(t.table->Find(*next) != nullptr);
}

TEST_CASE("session table: an address at its cap with every session busy is refused by name") {
  Table t(/*max_sessions=*/4096, /*max_per_address=*/2);
  SessionTable::Eviction ev;
  uint32_t a = *t.Open(20021, "", &ev);
  uint32_t b = *t.Open(20021, "", &ev);
  t.table->Find(a)->inflight = 1;
  t.table->Find(b)->inflight = 1;
  StatusOr<uint32_t> refused = t.Open(20021, "", &ev);
  REQUIRE(!refused.ok());
  CHECK(refused.status().code() == StatusCode::kResourceExhausted);
  CHECK(refused.status().message().find("max_sessions_per_address") != std::string::npos);
  CHECK(t.table->stats().limit_refused.load() == 1);
  CHECK(t.table->stats().table_refused.load() == 0);
  // Another address is not affected.
  CHECK(t.Open(20022, "", &ev).ok());
  CHECK(ev.id == 0);
}

}  // namespace
}  // namespace rpmp

// Ledger of the fault campaign: what every client thread attempted and what it was
// told, and the checker that compares it with what the cluster holds at the end.
//
// Every record's payload is self-describing and unique: a 24-byte header (magic,
// thread, seq, length) then bytes drawn from a generator seeded by (campaign seed,
// thread, seq). So a stored record names the operation that wrote it, and a record
// whose bytes differ from what that operation sent is torn; one that names no
// attempted operation is a phantom. Appends go to keys shared by all threads; puts go
// to keys owned by one thread (so their order is that thread's order).
//
// Threads: each client thread appends to its own OpLog; the checker runs after the
// threads have joined. Tests only.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

namespace rpmp::chaos {

enum class OpKind : uint8_t { kAppend, kPut };
enum class Outcome : uint8_t { kPending, kAcked, kFailed };

struct Op {
  OpKind kind;
  uint32_t ns;  // index into the campaign's namespaces
  std::string key;
  uint32_t thread;
  uint64_t seq;
  Outcome outcome = Outcome::kPending;
};

// The payload of operation (thread, seq) of campaign `seed`, `len` >= 24 bytes.
std::string Payload(uint64_t seed, uint32_t thread, uint64_t seq, size_t len);
// Length of that payload (a function of the id, so a torn length is detectable).
size_t PayloadLength(uint64_t seed, uint32_t thread, uint64_t seq);

struct Counts {
  uint64_t attempted = 0, acked = 0, failed = 0;
  uint64_t lost = 0, duplicated = 0, phantom = 0, torn = 0, stale_put = 0, diverged = 0;
  bool clean() const { return lost + duplicated + phantom + torn + stale_put + diverged == 0; }
};

// One stored object as read back: its records' payloads in order.
using StoredObject = std::vector<std::string>;
// ns index -> key -> records.
using StoredState = std::map<uint32_t, std::map<std::string, StoredObject>>;

// Compares the ledger (all threads' ops) with the stored state; adds to *counts and
// appends one line per problem to *problems (at most `max_lines`).
void Check(uint64_t seed, const std::vector<std::vector<Op>>& logs, const StoredState& state, Counts* counts,
           std::vector<std::string>* problems, size_t max_lines = 50);

}  // namespace rpmp::chaos

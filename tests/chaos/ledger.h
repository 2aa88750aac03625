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
// Payload lengths: kMixed mostly small, some over the inline limit; kLarge (--split, to
// fill pools in seconds) 24 B to ~128 KB; kTiny (--split once the pools are full enough)
// 24 to ~280 B.
enum class Sizes : uint8_t { kMixed, kLarge, kTiny };

struct Op {
  OpKind kind;
  uint32_t ns;  // index into the campaign's namespaces
  std::string key;
  uint32_t thread;
  uint64_t seq;
  Sizes sizes = Sizes::kMixed;
  Outcome outcome = Outcome::kPending;
  // --split: the extents of the group (0 = the group itself) that refused this append for
  // space (bit k), and the extent that acknowledged it.
  uint64_t refused_mask = 0;
  int extent = 0;
};

// The payload of operation (thread, seq) of campaign `seed`, `len` >= 24 bytes.
std::string Payload(uint64_t seed, uint32_t thread, uint64_t seq, size_t len);
// Length of that payload (a function of the id and the op's Sizes, so a torn length is
// detectable).
size_t PayloadLength(uint64_t seed, uint32_t thread, uint64_t seq, Sizes sizes = Sizes::kMixed);

struct Counts {
  uint64_t attempted = 0, acked = 0, failed = 0;
  uint64_t lost = 0, duplicated = 0, phantom = 0, torn = 0, stale_put = 0, diverged = 0;
  bool clean() const { return lost + duplicated + phantom + torn + stale_put + diverged == 0; }
};

// One stored object as read back: its records' payloads in order.
using StoredObject = std::vector<std::string>;
// ns index -> key -> records.
using StoredState = std::map<uint32_t, std::map<std::string, StoredObject>>;

// The op that wrote a stored record (nullptr when it names none): the checker's index.
class OpIndex {
 public:
  explicit OpIndex(const std::vector<std::vector<Op>>& logs);
  const Op* Find(const std::string& record) const;

 private:
  std::map<std::pair<uint32_t, uint64_t>, const Op*> ops_;  // (thread, seq)
};

// One group as read back, --split: its namespaces in order (the group, then extents x1,
// x2, ...), each as key -> records.
using GroupParts = std::vector<std::map<std::string, StoredObject>>;

// Merges the parts of group `ns` into (*state)[ns], each key's records in namespace order,
// as a reader of the group sees them: a record that repeats byte for byte one of an
// earlier namespace of the group that refused that append for space (the refused
// replicated write's copy, docs/cluster.md "Split instead of fail", invariant 2) is
// dropped; any other repeat stays (the checker counts it duplicated). Returns how many
// were dropped.
uint64_t MergeGroup(const std::vector<std::vector<Op>>& logs, uint32_t ns, const GroupParts& parts,
                    StoredState* state);

// Compares the ledger (all threads' ops) with the stored state; adds to *counts and
// appends one line per problem to *problems (at most `max_lines`).
void Check(uint64_t seed, const std::vector<std::vector<Op>>& logs, const StoredState& state, Counts* counts,
           std::vector<std::string>* problems, size_t max_lines = 50);

}  // namespace rpmp::chaos

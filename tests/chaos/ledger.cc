// Implementation of the campaign's payloads and checker (ledger.h).
#include "tests/chaos/ledger.h"

#include <cstring>
#include <random>

namespace rpmp::chaos {
namespace {

constexpr uint32_t kMagic = 0x534f4143;  // "CAOS"
constexpr size_t kHeader = 24;

uint64_t Mix(uint64_t seed, uint32_t thread, uint64_t seq) {
  uint64_t x = seed * 0x9e3779b97f4a7c15ull ^ (static_cast<uint64_t>(thread) << 40) ^ seq;
  x ^= x >> 31;
  x *= 0xbf58476d1ce4e5b9ull;
  return x ^ (x >> 29);
}

struct Id {
  uint32_t thread;
  uint64_t seq;
  bool operator<(const Id& o) const { return thread != o.thread ? thread < o.thread : seq < o.seq; }
};

bool ParseId(const std::string& rec, Id* id) {
  if (rec.size() < kHeader) return false;
  uint32_t magic;
  std::memcpy(&magic, rec.data(), 4);
  if (magic != kMagic) return false;
  std::memcpy(&id->thread, rec.data() + 4, 4);
  std::memcpy(&id->seq, rec.data() + 8, 8);
  return true;
}

}  // namespace

size_t PayloadLength(uint64_t seed, uint32_t thread, uint64_t seq, Sizes sizes) {
  uint64_t r = Mix(seed, thread, seq);
  if (sizes == Sizes::kLarge) return kHeader + (r >> 8) % 128000;
  if (sizes == Sizes::kTiny) return kHeader + (r >> 8) % 256;
  // Mostly small (inline), some medium and a few over the inline limit (RMA).
  switch (r % 10) {
    case 0: return kHeader + (r >> 8) % 60000;
    case 1: case 2: return kHeader + (r >> 8) % 8000;
    default: return kHeader + (r >> 8) % 400;
  }
}

std::string Payload(uint64_t seed, uint32_t thread, uint64_t seq, size_t len) {
  std::string p(len, '\0');
  std::memcpy(p.data(), &kMagic, 4);
  std::memcpy(p.data() + 4, &thread, 4);
  std::memcpy(p.data() + 8, &seq, 8);
  uint64_t l = len;
  std::memcpy(p.data() + 16, &l, 8);
  std::mt19937_64 rng(Mix(seed, thread, seq));
  for (size_t i = kHeader; i < len; i += 8) {
    uint64_t v = rng();
    std::memcpy(p.data() + i, &v, std::min<size_t>(8, len - i));
  }
  return p;
}

OpIndex::OpIndex(const std::vector<std::vector<Op>>& logs) {
  for (const auto& log : logs)
    for (const Op& op : log) ops_[{op.thread, op.seq}] = &op;
}

const Op* OpIndex::Find(const std::string& record) const {
  Id id;
  if (!ParseId(record, &id)) return nullptr;
  auto it = ops_.find({id.thread, id.seq});
  return it == ops_.end() ? nullptr : it->second;
}

uint64_t MergeGroup(const std::vector<std::vector<Op>>& logs, uint32_t ns, const GroupParts& parts,
                    StoredState* state) {
  OpIndex index(logs);
  std::map<std::string, StoredObject>& out = (*state)[ns];
  // key -> record bytes -> the namespaces (indexes into parts) that hold them
  std::map<std::string, std::map<std::string, uint64_t>> where;
  uint64_t dropped = 0;
  for (size_t k = 0; k < parts.size(); k++) {
    for (const auto& [key, records] : parts[k]) {
      for (const std::string& rec : records) {
        uint64_t& held = where[key][rec];
        const Op* op = index.Find(rec);
        // Held before only in namespaces that refused this op, never in this one.
        bool leftover =
            k < 64 && held != 0 && (held & (1ull << k)) == 0 && op != nullptr && (held & op->refused_mask) == held;
        if (k < 64) held |= 1ull << k;
        if (leftover) {
          dropped++;
          continue;
        }
        out[key].push_back(rec);
      }
    }
  }
  return dropped;
}

void Check(uint64_t seed, const std::vector<std::vector<Op>>& logs, const StoredState& state, Counts* c,
           std::vector<std::string>* problems, size_t max_lines) {
  auto report = [&](const std::string& line) {
    if (problems->size() < max_lines) problems->push_back(line);
  };
  std::map<Id, const Op*> ops;
  // Per put key: the thread's puts in order (index into that order).
  std::map<std::pair<uint32_t, std::string>, std::vector<const Op*>> puts;
  for (const auto& log : logs) {
    for (const Op& op : log) {
      ops[{op.thread, op.seq}] = &op;
      c->attempted++;
      c->acked += op.outcome == Outcome::kAcked;
      c->failed += op.outcome == Outcome::kFailed;
      if (op.kind == OpKind::kPut) puts[{op.ns, op.key}].push_back(&op);
    }
  }
  std::map<Id, int> seen;
  for (const auto& [ns, keys] : state) {
    for (const auto& [key, records] : keys) {
      for (const std::string& rec : records) {
        Id id;
        auto it = ParseId(rec, &id) ? ops.find(id) : ops.end();
        if (it == ops.end() || it->second->ns != ns || it->second->key != key) {
          c->phantom++;
          report("phantom record in ns " + std::to_string(ns) + " key " + key + " (" +
                 std::to_string(rec.size()) + " bytes)");
          continue;
        }
        if (rec != Payload(seed, id.thread, id.seq, PayloadLength(seed, id.thread, id.seq, it->second->sizes))) {
          c->torn++;
          report("torn record " + std::to_string(id.thread) + "/" + std::to_string(id.seq) + " in key " + key);
          continue;
        }
        seen[id]++;
      }
    }
  }
  for (const auto& [id, op] : ops) {
    int n = seen.count(id) ? seen[id] : 0;
    if (op->kind == OpKind::kAppend) {
      if (n == 0 && op->outcome == Outcome::kAcked) {
        c->lost++;
        report("lost acknowledged append " + std::to_string(id.thread) + "/" + std::to_string(id.seq) + " key " +
               op->key + " ns " + std::to_string(op->ns));
      }
      if (n > 1) {
        c->duplicated++;
        report("append " + std::to_string(id.thread) + "/" + std::to_string(id.seq) + " stored " +
               std::to_string(n) + " times (" + (op->outcome == Outcome::kAcked ? "acked" : "not acked") + ")");
      }
    }
  }
  // Puts: the key holds one record, written by the last acknowledged put or a later
  // attempted one of its owner thread.
  for (const auto& [nk, list] : puts) {
    int last_acked = -1;
    for (size_t i = 0; i < list.size(); i++)
      if (list[i]->outcome == Outcome::kAcked) last_acked = static_cast<int>(i);
    auto ns_it = state.find(nk.first);
    const StoredObject* obj = nullptr;
    if (ns_it != state.end()) {
      auto k = ns_it->second.find(nk.second);
      if (k != ns_it->second.end()) obj = &k->second;
    }
    if (obj == nullptr || obj->empty()) {
      if (last_acked >= 0) {
        c->lost++;
        report("put key " + nk.second + " ns " + std::to_string(nk.first) + " is gone (acknowledged put exists)");
      }
      continue;
    }
    if (obj->size() > 1) {
      c->duplicated++;
      report("put key " + nk.second + " holds " + std::to_string(obj->size()) + " records");
    }
    Id id;
    if (!ParseId(obj->back(), &id)) continue;  // counted as phantom above
    int at = -1;
    for (size_t i = 0; i < list.size(); i++)
      if (list[i]->thread == id.thread && list[i]->seq == id.seq) at = static_cast<int>(i);
    if (at >= 0 && at < last_acked) {
      c->stale_put++;
      report("put key " + nk.second + " holds put #" + std::to_string(at) + " but #" + std::to_string(last_acked) +
             " was acknowledged later");
    }
  }
}

}  // namespace rpmp::chaos

// WriteIdTable: what one namespace remembers of the write ids it has seen, so that a
// retried put/append/delete is answered with its first outcome instead of being
// applied twice (docs/append-path.md section 1, docs/storage-format.md "Write ids").
//
// Bounded: per writer the newest `max_seqs` seqs; at most `max_writers` writers, the
// least recently used forgotten first. A seq below a full writer's window is "too
// old": it can no longer be told apart from a new write. Not thread-safe: the owner
// (LogStore's Namespace) guards it with its mutex. Only server/store/ uses it.
#pragma once

#include <cstddef>
#include <cstdint>
#include <map>
#include <string>
#include <unordered_map>

#include "server/store/store.h"

namespace rpmp {

class WriteIdTable {
 public:
  explicit WriteIdTable(size_t max_seqs = kWriteIdWindow, size_t max_writers = kWriteIdWriters)
      : max_seqs_(max_seqs), max_writers_(max_writers) {}

  // The remembered outcome of `id` (state kUnknown when none).
  WriteOutcome Find(const WriteId& id) const;
  // True when `id` is unknown and below its writer's full window.
  bool TooOld(const WriteId& id) const;
  // Records `id` as in flight (reserved, not yet committed).
  void StartInFlight(const WriteId& id, WriteIdKind kind, const std::string& key);
  // Records `id` as committed with its record's position (inserts when absent).
  void Committed(const WriteId& id, const WriteOutcome& outcome);
  // Forgets an in-flight `id` (its write was aborted).
  void Forget(const WriteId& id);
  // Forgets a committed `id` whose record is the one of commit sequence `commit_seq`
  // (a repair discarded that record; WriteSpec::install_id).
  void ForgetCommitted(const WriteId& id, uint64_t commit_seq);

  size_t writers() const { return writers_.size(); }
  size_t entries() const;

 private:
  struct Writer {
    std::map<uint64_t, WriteOutcome> seqs;
    uint64_t last_use = 0;
  };
  Writer& Touch(uint64_t writer);
  void Insert(const WriteId& id, WriteOutcome outcome);
  void EvictWriters();

  const size_t max_seqs_;
  const size_t max_writers_;
  uint64_t clock_ = 0;
  std::unordered_map<uint64_t, Writer> writers_;
};

}  // namespace rpmp

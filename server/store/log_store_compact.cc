// LogStore compaction: picks segments whose dead share passed a threshold, copies
// their live records into fresh space (new commit seqs, the original's place in its
// key's order kept in origin_seq), marks the originals dead, and frees the emptied
// segments after a grace period for one-sided readers. docs/storage-format.md
// ("Compaction") gives the crash-consistency argument.
//
// A victim is walked on the media, record header by record header (it is not the
// active segment and has no pending reservation, so every header up to its tail was
// written by this process or verified by recovery); each live record is found in
// the DRAM index by key and order seq. Each move reserves and heads its copy under
// the namespace's mutex, copies the payload without it, and commits under it; the
// mutex is also let go after every batch (CompactOptions::batch_bytes).
#include <algorithm>
#include <cstring>

#include "common/log.h"
#include "server/store/log_store.h"

namespace rpmp {

namespace fmt = store_format;

LogStore::SegmentPtr LogStore::PickVictim(Namespace* ns, double min_dead_fraction,
                                          std::chrono::steady_clock::duration settle,
                                          std::chrono::steady_clock::time_point now) {
  SegmentPtr best;
  double best_fraction = 0;
  for (auto& [raw, seg] : ns->segments) {
    if (seg == ns->active || seg->pending > 0 || seg->live_records == 0) continue;
    // Closed too recently: its records may still die by themselves. (A segment found
    // at recovery has no closing time and is never too recent.)
    if (seg->closed_at != std::chrono::steady_clock::time_point{} && now - seg->closed_at < settle) continue;
    uint64_t used = seg->tail - seg->first_record;
    if (used == 0 || seg->live_bytes >= used) continue;
    double dead = static_cast<double>(used - seg->live_bytes) / static_cast<double>(used);
    if (dead >= min_dead_fraction && dead > best_fraction) {
      best = seg;
      best_fraction = dead;
    }
  }
  return best;
}

// Step 1 of a move (ns->mu held): space for the copy at the namespace's tail, its
// header (commit 0, origin = the original's order), key and id written and persisted,
// the target segment's pending count raised (like a reservation in flight).
StatusOr<LogStore::PendingMove> LogStore::StartMove(Namespace* ns, const std::string& key,
                                                    const StoredRecord& rec) {
  WriteSpec spec;
  spec.key = key;
  spec.tag = rec.tag;
  spec.length = rec.length;
  spec.crc = rec.crc;
  spec.id = rec.id;
  uint16_t flags = fmt::kRecordMoved | (rec.id.valid() ? fmt::kRecordHasWriteId : 0);
  uint64_t size = fmt::RecordSize(key.size(), rec.length, flags);
  RPMP_ASSIGN_OR_RETURN(Placement place, TakeSpace(ns, size, SpacePurpose::kData));
  PendingMove m;
  m.key = key;
  m.original = rec;
  m.copy = rec;
  m.copy.segment = place.segment;
  m.copy.header_offset = place.record_offset;
  m.copy.payload_offset = WriteRecordHeader(place, rec.kind, spec, rec.order);
  m.copy.flags = flags;
  m.copy.bytes = size;
  place.segment->pending++;
  return m;
}

// Step 2 (no lock): the payload. The original's bytes cannot change or go away
// meanwhile (a dead record's payload is never written; m.original pins its segment).
void LogStore::CopyPayload(const PendingMove& m) {
  if (m.original.length == 0) return;
  PoolState* pool = m.copy.segment->pool;
  char* dst = pool->medium->base() + m.copy.payload_offset;
  const char* src = m.original.segment->pool->medium->base() + m.original.payload_offset;
  std::memcpy(dst, src, m.original.length);
  pool->medium->Persist(dst, m.original.length);
}

// Step 3 (ns->mu held): when the index still points at the original, commit the copy
// (one persisted 8-byte store: from here recovery keeps exactly one of the two, same
// order), make it take the original's place (index and write-id outcome), and mark
// the original dead. When the original died meanwhile (overwritten, deleted) the copy
// stays uncommitted, like an aborted write. Returns the bytes moved (0 when dropped).
uint64_t LogStore::FinishMove(Namespace* ns, PendingMove* m) {
  m->copy.segment->pending--;
  StoredRecord* rec = ns->deleted ? nullptr : FindRecord(ns, m->key, m->original);
  if (rec == nullptr) {
    MaybeReclaim(ns, m->copy.segment);
    return 0;
  }
  StoredRecord& copy = m->copy;
  copy.seq = ++global_seq_;
  StoreCommitWord(copy, copy.seq);
  CountLive(copy);
  if (copy.id.valid()) {
    WriteOutcome o = ns->write_ids.Find(copy.id);
    if (o.state == WriteState::kCommitted && o.commit_seq == copy.order) {
      o.pool = copy.segment->pool->index;
      o.offset = copy.payload_offset;
      ns->write_ids.Committed(copy.id, o);
    }
  }
  StoredRecord old = *rec;
  *rec = copy;
  StoreCommitWord(old, old.seq | fmt::kDeadBit);
  old.segment->moved_out = true;
  old.segment->live_records--;
  old.segment->live_bytes -= old.bytes;
  compacted_records_++;
  compacted_bytes_ += copy.bytes;
  return copy.bytes;
}

// The index entry of `original` (same key, order, segment and header), or null.
LogStore::StoredRecord* LogStore::FindRecord(Namespace* ns, const std::string& key,
                                          const StoredRecord& original) {
  KeyEntry* entry = ns->keys.Find(key);
  if (entry == nullptr) return nullptr;
  std::vector<StoredRecord>& recs = entry->records;  // ascending order seq
  auto r = std::lower_bound(recs.begin(), recs.end(), original.order,
                            [](const StoredRecord& a, uint64_t o) { return a.order < o; });
  if (r == recs.end() || r->order != original.order || r->segment != original.segment ||
      r->header_offset != original.header_offset)
    return nullptr;
  return &*r;
}

// Walks `victim` from *cursor (ns->mu held by *lock) to its next live record; false
// at its end. Fills *key and *rec with the record's key and index entry.
bool LogStore::NextLive(Namespace* ns, const SegmentPtr& victim, uint64_t* cursor,
                        std::string* key, StoredRecord* rec) {
  PoolState* pool = victim->pool;
  while (*cursor < victim->tail && victim->live_records > 0) {
    uint64_t at = victim->offset + *cursor;  // pool offset of the record header
    const fmt::RecordHeader* h = HeaderAt(*pool, at);
    *cursor += fmt::RecordSize(h->key_length, h->payload_length, h->flags);
    uint64_t commit = __atomic_load_n(&h->commit, __ATOMIC_ACQUIRE);
    if (commit == 0 || (commit & fmt::kDeadBit) != 0 || h->kind == fmt::kKindTombstone) continue;
    StoredRecord probe;
    probe.segment = victim;
    probe.header_offset = at;
    probe.order = (h->flags & fmt::kRecordMoved) && h->origin_seq != 0 ? h->origin_seq : commit;
    key->assign(reinterpret_cast<const char*>(h) + fmt::kRecordHeaderSize, h->key_length);
    StoredRecord* found = FindRecord(ns, *key, probe);
    if (found == nullptr) continue;
    *rec = *found;
    return true;
  }
  return false;
}

Status LogStore::CompactNamespace(const NamespacePtr& ns, const CompactOptions& options,
                                  std::chrono::steady_clock::duration settle, uint64_t* moved) {
  while (*moved < options.max_bytes) {
    std::unique_lock<std::mutex> lock(ns->mu);
    if (ns->deleted) return Status::Ok();
    SegmentPtr victim = PickVictim(ns.get(), options.min_dead_fraction, settle,
                                   std::chrono::steady_clock::now());
    if (victim == nullptr) return Status::Ok();
    uint64_t cursor = victim->first_record;
    uint64_t before = *moved;
    uint64_t batch = 0;  // bytes moved since the lock was last let go
    std::string key;
    StoredRecord rec;
    while (*moved < options.max_bytes && NextLive(ns.get(), victim, &cursor, &key, &rec)) {
      StatusOr<PendingMove> m = StartMove(ns.get(), key, rec);
      if (!m.ok()) return m.status();
      lock.unlock();  // the payload is copied without the namespace's lock
      CopyPayload(*m);
      lock.lock();
      uint64_t n = FinishMove(ns.get(), &m.value());
      *moved += n;
      batch += n;
      if (ns->deleted || victim->reclaim) return Status::Ok();
      if (batch >= options.batch_bytes) {  // let foreground requests in
        lock.unlock();
        batch = 0;
        lock.lock();
        if (ns->deleted || victim->reclaim) return Status::Ok();
      }
    }
    if (victim->live_records == 0) {
      compacted_segments_++;
      MaybeReclaim(ns.get(), victim);  // buried for the grace (moved_out)
    }
    if (*moved == before) return Status::Ok();  // nothing movable left here
  }
  return Status::Ok();
}

void LogStore::Bury(const SegmentPtr& seg) {
  auto until = std::chrono::steady_clock::now() + std::chrono::milliseconds(grace_ms_.load());
  std::lock_guard<std::mutex> lock(graveyard_mu_);
  graveyard_.emplace_back(until, seg);
}

void LogStore::SweepGraveyard() {
  std::vector<SegmentPtr> expired;  // freed outside the lock, when the last pin goes
  auto now = std::chrono::steady_clock::now();
  std::lock_guard<std::mutex> lock(graveyard_mu_);
  for (auto it = graveyard_.begin(); it != graveyard_.end();) {
    if (it->first <= now) {
      expired.push_back(std::move(it->second));
      it = graveyard_.erase(it);
    } else {
      ++it;
    }
  }
}

size_t LogStore::ReleaseGraveyard() {
  std::vector<std::pair<std::chrono::steady_clock::time_point, SegmentPtr>> all;
  {
    std::lock_guard<std::mutex> lock(graveyard_mu_);
    all.swap(graveyard_);
  }
  if (!all.empty() && early_releases_++ % 1000 == 0) {
    RPMP_LOG_WARN("no free segment: freeing %zu compacted segments before their grace; one-sided "
                  "readers detect the stale locations by checksum and fetch the metadata again "
                  "(this happens when overwrites outpace compaction_grace; see docs/operations.md)",
                  all.size());
  }
  return all.size();  // each is freed here, or when the last view pinning it goes
}

StatusOr<uint64_t> LogStore::Compact(const CompactOptions& options) {
  grace_ms_ = options.grace.count();
  SweepGraveyard();
  // Short of space, any mostly-dead segment will do, however recently it closed.
  std::chrono::steady_clock::duration settle = options.settle;
  if (short_of_space_.exchange(false)) settle = std::chrono::steady_clock::duration::zero();
  std::vector<NamespacePtr> all;
  {
    std::shared_lock<std::shared_mutex> lock(ns_map_mu_);
    for (auto& [name, ns] : namespaces_) all.push_back(ns);
  }
  uint64_t moved = 0;
  for (const NamespacePtr& ns : all) {
    if (moved >= options.max_bytes) break;
    Status st = CompactNamespace(ns, options, settle, &moved);
    if (st.code() == StatusCode::kResourceExhausted) return moved;  // NoSpace: later
    RPMP_RETURN_IF_ERROR(st);
  }
  if (options.grace.count() == 0) SweepGraveyard();
  return moved;
}

}  // namespace rpmp

// LogStore compaction: picks segments whose dead share passed a threshold, copies
// their live records into fresh space (new commit seqs, the original's place in its
// key's order kept in origin_seq), marks the originals dead, and frees the emptied
// segments after a grace period for one-sided readers. docs/storage-format.md
// ("Compaction") gives the crash-consistency argument.
#include <cstring>

#include "server/store/log_store.h"

namespace rpmp {

namespace fmt = store_format;

LogStore::SegmentPtr LogStore::PickVictim(Namespace* ns, double min_dead_fraction) {
  SegmentPtr best;
  double best_fraction = 0;
  for (auto& [raw, seg] : ns->segments) {
    if (seg == ns->active || seg->pending > 0 || seg->live_records == 0) continue;
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

// Copies *rec (a live record of `key`) to fresh space and makes the copy take its
// place; the original is marked dead last. ns->mu held.
Status LogStore::MoveRecord(Namespace* ns, const std::string& key, RecordRef* rec) {
  WriteSpec spec;
  spec.key = key;
  spec.tag = rec->tag;
  spec.length = rec->length;
  spec.crc = rec->crc;
  spec.id = rec->id;
  uint16_t flags = fmt::kRecordMoved | (rec->id.valid() ? fmt::kRecordHasWriteId : 0);
  uint64_t size = fmt::RecordSize(key.size(), rec->length, flags);
  RPMP_ASSIGN_OR_RETURN(Placement place, TakeSpace(ns, size, SpacePurpose::kData));
  // 1. The copy: header (commit 0, origin = the original's order), key, id, payload.
  uint64_t payload_offset = WriteRecordHeader(place, rec->kind, spec, rec->order);
  PoolState* pool = place.segment->pool;
  char* dst = pool->medium->base() + payload_offset;
  const char* src = rec->segment->pool->medium->base() + rec->payload_offset;
  if (rec->length > 0) {
    std::memcpy(dst, src, rec->length);
    pool->medium->Persist(dst, rec->length);
  }
  RecordRef copy = *rec;
  copy.segment = place.segment;
  copy.header_offset = place.record_offset;
  copy.payload_offset = payload_offset;
  copy.flags = flags;
  copy.bytes = size;
  copy.seq = ++global_seq_;
  // 2. Commit the copy: from here recovery keeps exactly one of the two (same order).
  StoreCommitWord(copy, copy.seq);
  CountLive(copy);
  if (copy.id.valid()) {
    WriteOutcome o = ns->write_ids.Find(copy.id);
    if (o.state == WriteState::kCommitted && o.commit_seq == copy.order) {
      o.pool = pool->index;
      o.offset = payload_offset;
      ns->write_ids.Committed(copy.id, o);
    }
  }
  // 3. The original is dead; its segment is freed by the caller once empty.
  RecordRef old = *rec;
  *rec = copy;
  StoreCommitWord(old, old.seq | fmt::kDeadBit);
  old.segment->live_records--;
  old.segment->live_bytes -= old.bytes;
  compacted_records_++;
  compacted_bytes_ += size;
  return Status::Ok();
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

StatusOr<uint64_t> LogStore::Compact(const CompactOptions& options) {
  SweepGraveyard();
  std::vector<NamespacePtr> all;
  {
    std::lock_guard<std::mutex> lock(ns_map_mu_);
    for (auto& [name, ns] : namespaces_) all.push_back(ns);
  }
  uint64_t moved = 0;
  for (const NamespacePtr& ns : all) {
    std::lock_guard<std::mutex> lock(ns->mu);
    while (!ns->deleted && moved < options.max_bytes) {
      SegmentPtr victim = PickVictim(ns.get(), options.min_dead_fraction);
      if (victim == nullptr) break;
      Status st;
      uint64_t before = moved;
      for (auto& [key, entry] : ns->keys) {
        for (RecordRef& rec : entry.records) {
          if (rec.segment != victim || moved >= options.max_bytes) continue;
          st = MoveRecord(ns.get(), key, &rec);
          if (!st.ok()) break;
          moved += rec.bytes;
        }
        if (!st.ok() || moved >= options.max_bytes) break;
      }
      if (victim->live_records == 0) {
        compacted_segments_++;
        {
          std::lock_guard<std::mutex> g(graveyard_mu_);
          graveyard_.emplace_back(std::chrono::steady_clock::now() + options.grace, victim);
        }
        MaybeReclaim(ns.get(), victim);
      }
      if (st.code() == StatusCode::kResourceExhausted) return moved;  // NoSpace: later
      RPMP_RETURN_IF_ERROR(st);
      if (moved == before) break;  // nothing movable left here
    }
  }
  if (options.grace.count() == 0) SweepGraveyard();
  return moved;
}

}  // namespace rpmp

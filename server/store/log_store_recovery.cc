// LogStore open and recovery: root checks, enumeration of segments, raw allocations
// and the reserve, scanning segments record by record, replay by commit sequence,
// and freeing what replay leaves without live records.
#include "server/store/log_store.h"

#include <algorithm>
#include <chrono>
#include <cstring>

#include "common/log.h"

namespace rpmp {

namespace fmt = store_format;

namespace {
constexpr uint64_t kMinSegmentSize = 64 << 10;
constexpr uint64_t kMinFirstSegmentSize = 4 << 10;
constexpr uint64_t kReserveMagic = 0x56525352504d5052ull;  // "RPMPRSRV"

uint64_t ReserveSizeFor(uint64_t capacity) {
  uint64_t size = std::min<uint64_t>(4 << 20, capacity / 16);
  return std::max<uint64_t>(fmt::AlignUp(size), 64 << 10);
}

fmt::Root* RootOf(const Medium& medium) {
  return reinterpret_cast<fmt::Root*>(medium.root());
}
}  // namespace

// A committed record found by the scan (live, or dead but carrying a write id).
struct LogStore::Scanned {
  SegmentPtr segment;
  std::string ns;
  std::string key;
  uint64_t header_offset = 0;
  uint8_t kind = 0;
  uint64_t tag = 0;
  uint64_t length = 0;
  uint32_t crc = 0;
  uint64_t seq = 0;
  uint16_t flags = 0;
  bool dead = false;
  WriteId id;
  uint64_t order = 0;  // seq, or a moved copy's origin
  uint64_t bytes = 0;
};

LogStore::~LogStore() = default;

StatusOr<std::unique_ptr<LogStore>> LogStore::Open(std::vector<std::unique_ptr<Medium>> media,
                                                   uint64_t segment_size,
                                                   uint64_t first_segment_size) {
  if (media.empty()) return Status::InvalidArgument("a store needs at least one pool");
  if (segment_size < kMinSegmentSize) {
    return Status::InvalidArgument("segment size " + std::to_string(segment_size) +
                                   " is below the minimum of " +
                                   std::to_string(kMinSegmentSize) + " bytes");
  }
  if (first_segment_size < kMinFirstSegmentSize || first_segment_size > segment_size) {
    return Status::InvalidArgument("first segment size " + std::to_string(first_segment_size) +
                                   " must be between " + std::to_string(kMinFirstSegmentSize) +
                                   " bytes and the segment size (" +
                                   std::to_string(segment_size) + ")");
  }
  std::unique_ptr<LogStore> store(new LogStore(segment_size, first_segment_size));
  std::random_device rd;
  store->rng_.seed((static_cast<uint64_t>(rd()) << 32) ^ rd() ^
                   std::chrono::steady_clock::now().time_since_epoch().count());
  for (size_t i = 0; i < media.size(); i++) {
    auto pool = std::make_unique<PoolState>();
    pool->index = static_cast<uint32_t>(i);
    pool->medium = std::move(media[i]);
    pool->reserve_size = ReserveSizeFor(pool->medium->capacity());
    store->pools_.push_back(std::move(pool));
  }
  store->raw_.resize(store->pools_.size());
  RPMP_RETURN_IF_ERROR(store->CheckSegmentSizeFits());
  for (auto& pool : store->pools_) RPMP_RETURN_IF_ERROR(store->InitRoot(pool.get()));

  store->recovering_ = true;
  std::vector<Scanned> scanned;
  std::vector<double> millis;
  for (auto& pool : store->pools_) {
    auto start = std::chrono::steady_clock::now();
    RPMP_RETURN_IF_ERROR(store->RecoverPool(pool.get(), &scanned));
    millis.push_back(std::chrono::duration<double, std::milli>(
                         std::chrono::steady_clock::now() - start).count());
  }
  store->Replay(&scanned);
  scanned.clear();
  store->FinishRecovery();

  store->LogOpenSummary(millis);
  return store;
}

// A full-size segment must fit in some pool; smaller pools (a small fast pool beside a
// capacity pool) still take the smaller segments of growing namespaces.
Status LogStore::CheckSegmentSizeFits() const {
  for (auto& pool : pools_) {
    if (segment_size_ + pool->reserve_size <= pool->medium->capacity()) return Status::Ok();
  }
  const PoolState& pool = *pools_[0];
  const uint64_t capacity = pool.medium->capacity();
  return Status::InvalidArgument(
      "segment size of " + std::to_string(segment_size_ >> 20) + " MiB does not fit in "
      "pool " + pool.medium->path() + " of " + std::to_string(capacity >> 20) +
      " MiB (with its " + std::to_string(pool.reserve_size >> 10) + " KiB delete "
      "reserve)" + (pools_.size() > 1 ? " nor in any other pool" : "") +
      "; configure a smaller segment_size or a larger pool");
}

void LogStore::LogOpenSummary(const std::vector<double>& millis) {
  for (auto& pool : pools_) {
    uint64_t segments = 0, records = 0;
    for (auto& [name, ns] : namespaces_) {
      for (auto& [raw, seg] : ns->segments) {
        if (seg->pool != pool.get()) continue;
        segments++;
        records += seg->live_records;
      }
    }
    RPMP_LOG_INFO("pool %s: medium %s, capacity %llu MiB, %llu segments, %llu records "
                  "recovered, %zu raw allocations, scanned in %.1f ms",
                  pool->medium->path().c_str(), pool->medium->promise().c_str(),
                  static_cast<unsigned long long>(pool->medium->capacity() >> 20),
                  static_cast<unsigned long long>(segments),
                  static_cast<unsigned long long>(records), raw_[pool->index].size(),
                  millis[pool->index]);
  }
}

Status LogStore::InitRoot(PoolState* pool) {
  fmt::Root* root = RootOf(*pool->medium);
  const std::string& path = pool->medium->path();
  if (root->magic == 0) {  // a new pool: pool 0 mints the node id
    if (pool->index == 0) {
      while (node_id_ == 0) node_id_ = rng_();
    }
    root->version = fmt::kFormatVersion;
    root->pool_index = pool->index;
    root->node_id = node_id_;
    pool->medium->Persist(root, sizeof(*root));
    root->magic = fmt::kRootMagic;  // last: a half-initialized root reads as new
    pool->medium->Persist(&root->magic, sizeof(root->magic));
    return Status::Ok();
  }
  if (root->magic != fmt::kRootMagic) {
    return Status::FailedPrecondition("pool " + path + " has an unknown root object; it "
                                      "is not an RPMP store pool");
  }
  if (root->version != fmt::kFormatVersion) {
    return Status::FailedPrecondition("pool " + path + " has format version " +
                                      std::to_string(root->version) +
                                      "; this build reads version " +
                                      std::to_string(fmt::kFormatVersion));
  }
  if (root->pool_index != pool->index) {
    return Status::FailedPrecondition(
        "pool " + path + " was created as pool #" + std::to_string(root->pool_index) +
        " of its store but is configured as pool #" + std::to_string(pool->index) +
        "; list the pools in their original order");
  }
  if (pool->index == 0) {
    node_id_ = root->node_id;
  } else if (root->node_id != node_id_) {
    return Status::FailedPrecondition("pool " + path + " belongs to another node (its node "
                                      "id differs from that of pool #0)");
  }
  return Status::Ok();
}

std::string LogStore::DeletingNamespace() const {
  const fmt::Root* root = RootOf(*pools_[0]->medium);
  uint32_t len = root->deleting_ns_length;
  if (len == 0 || len > sizeof(root->deleting_ns)) return "";
  return std::string(root->deleting_ns, len);
}

void LogStore::SetDeletingNamespace(const std::string& ns) {
  fmt::Root* root = RootOf(*pools_[0]->medium);
  Medium* medium = pools_[0]->medium.get();
  if (!ns.empty()) {
    std::memcpy(root->deleting_ns, ns.data(), ns.size());
    medium->Persist(root->deleting_ns, ns.size());
  }
  root->deleting_ns_length = static_cast<uint32_t>(ns.size());
  medium->Persist(&root->deleting_ns_length, sizeof(root->deleting_ns_length));
}

void LogStore::RecoverReserve(PoolState* pool) {
  for (uint64_t offset : pool->medium->ObjectsOfType(fmt::kReserveType)) {
    const auto* header = reinterpret_cast<const uint64_t*>(pool->medium->base() + offset);
    if (pool->has_reserve || header[0] != kReserveMagic) {
      pool->medium->Free(offset);
      continue;
    }
    pool->has_reserve = true;
    pool->reserve_offset = offset;
    pool->reserve_size = header[1];
    pool->used += header[1];
  }
}

void LogStore::RecoverRaw(PoolState* pool) {
  for (uint64_t offset : pool->medium->ObjectsOfType(fmt::kRawType)) {
    const auto* h = reinterpret_cast<const fmt::RawHeader*>(pool->medium->base() + offset);
    if (h->magic != fmt::kRawMagic) {
      RPMP_LOG_ERROR("pool %s: raw allocation at offset %llu has a damaged header; "
                     "leaving it alone", pool->medium->path().c_str(),
                     static_cast<unsigned long long>(offset));
      continue;
    }
    raw_[pool->index][offset + fmt::kRawHeaderSize] = h->size;
    pool->used += fmt::kRawHeaderSize + h->size;
  }
}

Status LogStore::RecoverPool(PoolState* pool, std::vector<Scanned>* out) {
  RecoverReserve(pool);
  RecoverRaw(pool);
  const std::string deleting = DeletingNamespace();
  for (uint64_t offset : pool->medium->ObjectsOfType(fmt::kSegmentType)) {
    const auto* h = reinterpret_cast<const fmt::SegmentHeader*>(pool->medium->base() + offset);
    if (h->magic != fmt::kSegmentMagic || h->ns_length == 0 ||
        h->ns_length > kMaxNamespaceLength || fmt::SegmentHeaderCrc(*h) != h->header_crc ||
        (h->flags & ~fmt::kKnownSegmentFlags) != 0 ||
        h->size < fmt::FirstRecordOffset(offset, h->flags)) {
      RPMP_LOG_ERROR("pool %s: segment at offset %llu has a damaged header; leaving it alone",
                     pool->medium->path().c_str(), static_cast<unsigned long long>(offset));
      continue;
    }
    std::string ns_name(h->ns, h->ns_length);
    if (h->state == fmt::kSegmentDeleted || ns_name == deleting) {
      pool->medium->Free(offset);  // finishes an interrupted DeleteNamespace
      continue;
    }
    auto seg = std::make_shared<Segment>();
    seg->pool = pool;
    seg->offset = offset;
    seg->size = h->size;
    seg->epoch = h->epoch;
    seg->sequence = h->sequence;
    seg->first_record = fmt::FirstRecordOffset(offset, h->flags);
    pool->used += h->size;
    if (h->sequence > segment_seq_) segment_seq_ = h->sequence;
    NamespacePtr ns = FindOrCreateNamespace(ns_name);
    ns->segments[seg.get()] = seg;
    if (!ns->active || seg->sequence > ns->active->sequence) ns->active = seg;
    ScanSegment(seg, ns_name, out);
  }
  return Status::Ok();
}

void LogStore::ScanSegment(const SegmentPtr& seg, const std::string& ns,
                           std::vector<Scanned>* out) {
  uint64_t pos = seg->first_record;
  while (pos + fmt::kRecordHeaderSize <= seg->size) {
    const auto* h = reinterpret_cast<const fmt::RecordHeader*>(seg->start() + pos);
    if (h->magic != fmt::kRecordMagic || h->version != fmt::kRecordVersion ||
        h->kind < fmt::kKindPut || h->kind > fmt::kKindTombstone ||
        (h->flags & ~fmt::kKnownRecordFlags) != 0 ||
        h->segment_epoch != seg->epoch || fmt::RecordHeaderCrc(*h) != h->header_crc ||
        h->key_length == 0 || h->key_length > kMaxKeyLength ||
        h->payload_length > seg->size) {
      break;
    }
    uint64_t size = fmt::RecordSize(h->key_length, h->payload_length, h->flags);
    if (size > seg->size - pos) break;
    uint64_t commit = __atomic_load_n(&h->commit, __ATOMIC_ACQUIRE);
    uint64_t seq = commit & ~fmt::kDeadBit;
    if (seq > global_seq_) global_seq_ = seq;
    bool has_id = (h->flags & fmt::kRecordHasWriteId) != 0;
    bool dead = (commit & fmt::kDeadBit) != 0;
    if (commit != 0 && (!dead || has_id)) {
      Scanned s;
      s.flags = h->flags;
      s.dead = dead;
      s.bytes = size;
      if (has_id) {
        uint64_t id[2];
        std::memcpy(id, seg->start() + pos + fmt::kRecordHeaderSize + h->key_length, sizeof(id));
        s.id = WriteId{id[0], id[1]};
      }
      s.segment = seg;
      s.ns = ns;
      s.key.assign(seg->start() + pos + fmt::kRecordHeaderSize, h->key_length);
      s.header_offset = seg->offset + pos;
      s.kind = h->kind;
      s.tag = h->tag;
      s.length = h->payload_length;
      s.crc = h->payload_crc;
      s.seq = seq;
      s.order = (h->flags & fmt::kRecordMoved) && h->origin_seq != 0 ? h->origin_seq : seq;
      out->push_back(std::move(s));
    }
    pos += size;
  }
  seg->tail = pos;
}

void LogStore::Replay(std::vector<Scanned>* scanned) {
  // Key order is the order seq (a compacted copy keeps its original's place). Among
  // live records with the same order (an original and its copy, when a crash came
  // before the original was marked dead) the copy, committed later, wins.
  std::sort(scanned->begin(), scanned->end(), [](const Scanned& a, const Scanned& b) {
    return a.order != b.order ? a.order < b.order : a.seq < b.seq;
  });
  for (size_t i = 0; i + 1 < scanned->size(); i++) {
    Scanned& a = (*scanned)[i];
    if (a.dead) continue;
    size_t j = i + 1;
    while (j < scanned->size() && (*scanned)[j].order == a.order && (*scanned)[j].dead) j++;
    if (j == scanned->size() || (*scanned)[j].order != a.order) continue;
    StoredRecord old;
    old.segment = a.segment;
    old.header_offset = a.header_offset;
    StoreCommitWord(old, a.seq | fmt::kDeadBit);  // finishes the interrupted move
    a.dead = true;
  }
  for (Scanned& s : *scanned) {
    Namespace* ns = namespaces_[s.ns].get();
    StoredRecord rec;
    rec.segment = s.segment;
    rec.header_offset = s.header_offset;
    rec.payload_offset = s.header_offset + fmt::PayloadOffsetInRecord(s.key.size(), s.flags);
    rec.length = s.length;
    rec.tag = s.tag;
    rec.crc = s.crc;
    rec.seq = s.seq;
    rec.order = s.order;
    rec.bytes = s.bytes;
    rec.kind = s.kind;
    rec.flags = s.flags;
    rec.id = s.id;
    if (s.id.valid()) {
      WriteOutcome o;
      o.kind = s.kind == fmt::kKindPut      ? WriteIdKind::kPut
               : s.kind == fmt::kKindAppend ? WriteIdKind::kAppend
                                            : WriteIdKind::kDelete;
      o.key = s.key;
      o.commit_seq = s.order;
      o.pool = s.segment->pool->index;
      o.offset = rec.payload_offset;
      ns->write_ids.Committed(s.id, o);
    }
    if (s.dead) continue;  // kept only for its write id
    if (s.kind == fmt::kKindTombstone) {
      if (KeyEntry* dead = ns->keys.Find(s.key)) {
        MarkKeyDead(ns, dead);
        ns->keys.Erase(s.key);
      }
      StoreCommitWord(rec, rec.seq | fmt::kDeadBit);  // finishes the interrupted delete
      continue;
    }
    KeyEntry& entry = ns->keys[s.key];
    if (s.kind == fmt::kKindPut) MarkKeyDead(ns, &entry);
    CountLive(rec);
    entry.records.push_back(std::move(rec));
    entry.total_length += s.length;
    ns->records++;
    ns->live_bytes += s.length;
  }
}

void LogStore::FinishRecovery() {
  recovering_ = false;
  for (auto it = namespaces_.begin(); it != namespaces_.end();) {
    Namespace* ns = it->second.get();
    std::vector<SegmentPtr> segments;
    for (auto& [raw, seg] : ns->segments) segments.push_back(seg);
    for (const SegmentPtr& seg : segments) MaybeReclaim(ns, seg);
    it = ns->segments.empty() ? namespaces_.erase(it) : std::next(it);
  }
  if (!DeletingNamespace().empty()) SetDeletingNamespace("");
}

}  // namespace rpmp

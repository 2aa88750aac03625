// LogStore: the log-structured Store over one Medium per pool. Written once; runs on
// libpmemobj pools (OpenPmemStore) and on DRAM (NewMemStore). Implementation is split
// over log_store.cc (records: reserve/commit/get/delete/list), log_store_space.cc
// (segments, emergency reserve, reclaim, raw memory, stats) and log_store_recovery.cc
// (open and recovery). Callers use it through the Store interface; open_store.cc and
// tests construct it.
//
// Locks, in the order they may be taken: ns_map_mu_ -> Namespace::mu -> alloc_mu_;
// raw_mu_ may be taken under alloc_mu_ and under nothing else.
#pragma once

#include <atomic>
#include <shared_mutex>
#include <chrono>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <random>
#include <string>
#include <unordered_map>
#include <vector>

#include "server/store/format.h"
#include "server/store/medium.h"
#include "server/store/key_index.h"
#include "server/store/reservation_impl.h"
#include "server/store/store.h"
#include "server/store/write_id_table.h"

namespace rpmp {
namespace log_store_internal {

struct PoolState {
  uint32_t index = 0;
  std::unique_ptr<Medium> medium;
  std::atomic<uint64_t> used{0};  // bytes of segments, raw allocations and reserve
  // Emergency reserve (guarded by LogStore::alloc_mu_).
  bool has_reserve = false;
  uint64_t reserve_offset = 0;
  uint64_t reserve_size = 0;
  // Free bytes this pool could not use: capacity - used when a segment allocation
  // last failed here, lowered when a later allocation leaves less free (guarded by
  // LogStore::alloc_mu_). PMDK's own metadata (about 8 MiB of a 128 MiB pool) and
  // fragmentation; Stats() does not report it as free.
  std::atomic<uint64_t> unusable{0};
  // Capacity tier: allocated from only when no fast pool can (set once, before use).
  bool capacity_tier = false;
};

// A segment in DRAM. Counters are guarded by the owning namespace's mutex. When the
// last shared_ptr goes away and `reclaim` is set, the segment object is freed.
struct Segment {
  PoolState* pool = nullptr;
  uint64_t offset = 0;    // of the segment object inside the pool
  uint64_t size = 0;
  uint64_t epoch = 0;
  uint64_t sequence = 0;
  uint64_t first_record = store_format::kSegmentHeaderSize;  // relative to the start
  uint64_t tail = 0;      // next free byte, relative to the segment start
  uint64_t live_records = 0;
  uint64_t live_bytes = 0;  // record bytes (header, key area, payload) of live records
  uint64_t pending = 0;   // reservations neither committed nor aborted
  // Compaction moved records out of it: when it dies it waits in the graveyard for
  // the grace (one-sided readers may hold locations of the moved originals).
  bool moved_out = false;
  // When it stopped taking new records (no longer the active segment, or a dedicated
  // one, full at once); the epoch for segments found at recovery. Compaction leaves a
  // segment alone until CompactOptions::settle has passed since (PickVictim).
  std::chrono::steady_clock::time_point closed_at{};
  std::atomic<bool> reclaim{false};
  // Remote access (SegmentRegistrar), revoked in ~Segment before the memory is freed.
  // Set before the segment is published, or under the owning namespace's mutex.
  std::unique_ptr<SegmentAccess> access;
  ~Segment();
  char* start() const { return pool->medium->base() + offset; }
};
using SegmentPtr = std::shared_ptr<Segment>;

// Where one record of a key lives in a pool, with its commit-word fields. Named apart
// from the client's rpmp::RecordRef (rpmp/client.h).
struct StoredRecord {
  SegmentPtr segment;
  uint64_t header_offset = 0;   // inside the pool
  uint64_t payload_offset = 0;  // inside the pool
  uint64_t length = 0;
  uint64_t tag = 0;
  uint32_t crc = 0;
  uint64_t seq = 0;       // in the commit word
  uint64_t order = 0;     // place in the key's order: seq, or a moved copy's origin
  uint64_t bytes = 0;     // record size on the media
  uint8_t kind = 0;       // store_format::RecordKind
  uint16_t flags = 0;     // record flags
  WriteId id;
};

struct KeyEntry {
  std::vector<StoredRecord> records;
  uint64_t total_length = 0;
};

struct Namespace {
  explicit Namespace(std::string n) : name(std::move(n)) {}
  const std::string name;
  std::mutex mu;
  bool deleted = false;
  SegmentPtr active;
  std::unordered_map<Segment*, SegmentPtr> segments;
  KeyIndex<KeyEntry> keys;
  uint64_t records = 0;
  uint64_t live_bytes = 0;
  WriteIdTable write_ids;
};
using NamespacePtr = std::shared_ptr<Namespace>;

struct LogReservation : Reservation::Impl {
  NamespacePtr ns;
  SegmentPtr segment;
  uint64_t header_offset = 0;
  uint64_t payload_offset = 0;
  WriteKind kind = WriteKind::kPut;
  std::string key;
  uint64_t tag = 0;
  uint64_t length = 0;
  uint32_t crc = 0;
  WriteId id;
  bool install_id = false;  // WriteSpec::install_id
};

// Where a new record goes.
struct Placement {
  SegmentPtr segment;
  uint64_t record_offset = 0;  // inside the pool
};

enum class SpacePurpose { kData, kTombstone };

}  // namespace log_store_internal

class LogStore : public Store {
 public:
  // Opens (and recovers) a store over `media`, pool i = media[i]. A namespace's
  // segments grow from first_segment_size to segment_size (each twice the last).
  static constexpr uint64_t kDefaultFirstSegmentSize = 4ull << 10;
  static StatusOr<std::unique_ptr<LogStore>> Open(
      std::vector<std::unique_ptr<Medium>> media, uint64_t segment_size,
      uint64_t first_segment_size = kDefaultFirstSegmentSize);
  ~LogStore() override;
  // Puts pool `index` in the capacity tier. Call before the store is used (OpenPmemStore
  // does, from PoolSpec::capacity_tier); not thread-safe with allocations.
  void SetCapacityTier(uint32_t index);

  StatusOr<Reservation> Reserve(const WriteSpec& spec) override;
  Status Commit(Reservation* r) override;
  void Abort(Reservation* r) override;
  StatusOr<ObjectView> Get(const std::string& ns, const std::string& key) override;
  using Store::Delete;
  Status Delete(const std::string& ns, const std::string& key, const WriteId& id) override;
  WriteOutcome FindWrite(const std::string& ns, const WriteId& id) override;
  StatusOr<ListPage> List(const std::string& ns, const std::string& start_after,
                          size_t max) override;
  Status DeleteNamespace(const std::string& ns) override;
  StatusOr<RawAddress> Alloc(uint64_t size) override;
  Status Free(RawAddress addr) override;
  StatusOr<char*> ResolveRaw(RawAddress addr, uint64_t len) override;
  void PersistRaw(const char* p, uint64_t len) override;
  StatusOr<uint64_t> Compact(const CompactOptions& options) override;
  StoreStats Stats() override;
  std::vector<NamespaceUsage> NamespaceBytes(const std::vector<std::string>& prefixes) override;
  std::vector<NamespaceUsage> NamespacesOver(uint64_t min_bytes) override;
  std::vector<MemoryArea> Areas() override;
  Status SetSegmentRegistrar(SegmentRegistrar* registrar) override;
  uint64_t NodeId() const override { return node_id_; }

 private:
  // The live bytes of every namespace (not deleted) whose name passes name_ok and that
  // holds at least min_bytes.
  std::vector<NamespaceUsage> Usage(const std::function<bool(const std::string&)>& name_ok, uint64_t min_bytes);
  using Namespace = log_store_internal::Namespace;
  using NamespacePtr = log_store_internal::NamespacePtr;
  using Segment = log_store_internal::Segment;
  using SegmentPtr = log_store_internal::SegmentPtr;
  using PoolState = log_store_internal::PoolState;
  using StoredRecord = log_store_internal::StoredRecord;
  using KeyEntry = log_store_internal::KeyEntry;
  using Placement = log_store_internal::Placement;
  using SpacePurpose = log_store_internal::SpacePurpose;
  struct Scanned;

  LogStore(uint64_t segment_size, uint64_t first_segment_size)
      : segment_size_(segment_size), first_segment_size_(first_segment_size) {}

  // log_store.cc
  NamespacePtr FindNamespace(const std::string& name);
  NamespacePtr FindOrCreateNamespace(const std::string& name);
  store_format::RecordHeader* HeaderAt(const PoolState& pool, uint64_t offset) const;
  uint64_t WriteRecordHeader(const Placement& place, uint8_t kind, const WriteSpec& spec,
                             uint64_t origin_seq = 0);
  // Counts a committed record as live in its segment / as dead (and maybe frees it).
  void CountLive(const StoredRecord& rec);
  // Checks spec.id against the namespace's table: OK to go on, a duplicate (then
  // *duplicate is set), or the error Reserve/Delete answers.
  Status CheckWriteId(Namespace* ns, const WriteId& id, WriteIdKind kind,
                      const std::string& key, bool* duplicate);
  void StoreCommitWord(const StoredRecord& rec, uint64_t word);
  void MarkDead(Namespace* ns, const StoredRecord& rec);
  void MarkKeyDead(Namespace* ns, KeyEntry* entry);
  Status FinishReservation(log_store_internal::LogReservation* impl, bool committed);

  // log_store_space.cc
  StatusOr<Placement> TakeSpace(Namespace* ns, uint64_t record_size, SpacePurpose purpose);
  StatusOr<SegmentPtr> AllocateSegment(const std::string& ns, uint64_t size,
                                       SpacePurpose purpose);
  StatusOr<SegmentPtr> AllocateFromReserve(const std::string& ns);
  StatusOr<SegmentPtr> AllocateSegmentIn(PoolState* pool, const std::string& ns,
                                         uint64_t size);
  bool EnsureReserve(PoolState* pool);
  // Fast pools by free space, then capacity-tier pools by free space.
  std::vector<PoolState*> PoolsByFreeSpace();
  void MaybeReclaim(Namespace* ns, const SegmentPtr& seg);
  void ReclaimNamespace(Namespace* ns);
  std::string NoSpaceMessage(uint64_t want);
  uint64_t StandardSegmentObjectSize(const PoolState& pool) const;
  // Segment sizes (docs/storage-format.md "Segment sizes") are steps counted with the
  // medium's per-object overhead: first_segment_size_ doubled up to segment_size_.
  // SegmentStepFor: the smallest step of at least `at_least` whose object holds
  // `needed` bytes (segment_size_ at most).
  uint64_t SegmentStepFor(uint64_t needed, uint64_t at_least) const;
  // A namespace's next active segment: twice its active one (or the first size), big
  // enough for `needed`; under space pressure as small as still holds `needed`.
  StatusOr<SegmentPtr> AllocateGrowingSegment(Namespace* ns, uint64_t needed,
                                              SpacePurpose purpose);

  // log_store_compact.cc
  // The most-dead segment of ns at or above min_dead_fraction that closed at least
  // `settle` before `now` (none: null).
  SegmentPtr PickVictim(Namespace* ns, double min_dead_fraction,
                        std::chrono::steady_clock::duration settle,
                        std::chrono::steady_clock::time_point now);
  // A record being moved: reserved and headed under the lock, payload copied
  // without it, committed under it (log_store_compact.cc).
  struct PendingMove {
    std::string key;
    StoredRecord original, copy;
  };
  StatusOr<PendingMove> StartMove(Namespace* ns, const std::string& key, const StoredRecord& rec);
  void CopyPayload(const PendingMove& m);
  uint64_t FinishMove(Namespace* ns, PendingMove* m);
  StoredRecord* FindRecord(Namespace* ns, const std::string& key, const StoredRecord& original);
  bool NextLive(Namespace* ns, const SegmentPtr& victim, uint64_t* cursor, std::string* key,
                StoredRecord* rec);
  // Moves up to max_bytes - *moved bytes out of mostly-dead segments of `ns` closed
  // at least `settle` ago; the namespace's lock is let go for every payload copy and
  // after every batch.
  Status CompactNamespace(const NamespacePtr& ns, const CompactOptions& options,
                          std::chrono::steady_clock::duration settle, uint64_t* moved);
  void Bury(const SegmentPtr& seg);  // keeps seg allocated for the grace
  // Space pressure: frees every graveyard segment now (one-sided readers still
  // detect a stale location by the payload CRC). Returns how many there were.
  size_t ReleaseGraveyard();
  void SweepGraveyard();

  // log_store_recovery.cc
  Status CheckSegmentSizeFits() const;
  Status InitRoot(PoolState* pool);
  Status RecoverPool(PoolState* pool, std::vector<Scanned>* out);
  void ScanSegment(const SegmentPtr& seg, const std::string& ns, std::vector<Scanned>* out);
  void Replay(std::vector<Scanned>* scanned);
  void FinishRecovery();
  void LogOpenSummary(const std::vector<double>& millis);
  void RecoverRaw(PoolState* pool);
  void RecoverReserve(PoolState* pool);
  void SetDeletingNamespace(const std::string& ns);
  std::string DeletingNamespace() const;

  const uint64_t segment_size_;        // the largest standard segment
  const uint64_t first_segment_size_;  // a namespace's first segment
  uint64_t node_id_ = 0;
  std::vector<std::unique_ptr<PoolState>> pools_;
  std::atomic<uint64_t> global_seq_{0};
  std::atomic<uint64_t> segment_seq_{0};

  // A reader lock: the request path (every shard) only looks namespaces up; creating
  // and deleting one take it exclusively (docs/sharding.md).
  std::shared_mutex ns_map_mu_;
  std::map<std::string, NamespacePtr> namespaces_;
  std::mutex alloc_mu_;
  std::mt19937_64 rng_;   // segment epochs (guarded by alloc_mu_)
  SegmentRegistrar* registrar_ = nullptr;  // guarded by alloc_mu_
  bool recovering_ = false;  // true while Open replays; suppresses reclaim
  std::mutex graveyard_mu_;  // taken under nothing, or under a Namespace::mu
  std::vector<std::pair<std::chrono::steady_clock::time_point, SegmentPtr>> graveyard_;
  std::atomic<int64_t> grace_ms_{5000};  // of the last Compact call
  std::atomic<uint64_t> early_releases_{0};
  // A segment allocation failed for space since the last Compact step: the next step
  // ignores CompactOptions::settle (space matters more than wasted copies then).
  std::atomic<bool> short_of_space_{false};
  std::atomic<uint64_t> compacted_segments_{0}, compacted_records_{0}, compacted_bytes_{0};
  std::mutex raw_mu_;
  std::vector<std::map<uint64_t, uint64_t>> raw_;  // per pool: usable offset -> size
};

}  // namespace rpmp

// Store: the record store of one rpmp-server, over one or more pools.
//
// What it keeps: namespaces -> keys -> ordered records (see docs/storage-format.md),
// and raw allocations addressed by (pool, offset). Bulk bytes never pass through the
// store's API: a writer Reserve()s space, fills the payload in place (the server
// points an RDMA read straight at Reservation::payload()), then Commit()s. A record is
// visible, and survives kill -9, only once Commit() returned OK.
//
// Threads: every method may be called from any thread concurrently. Views returned
// by Get() pin the memory they point to: it is not reused until the view is gone.
// Who calls it: server/ request handlers, tests, and the rpmp-server start-up code.
#pragma once

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "common/status.h"
#include "common/write_id.h"

namespace rpmp {

constexpr size_t kMaxNamespaceLength = 255;
constexpr size_t kMaxKeyLength = 1024;
constexpr size_t kWriteIdWindow = 4096;    // seqs remembered per writer and namespace
constexpr size_t kWriteIdWriters = 65536;  // writers remembered per namespace
// Ends the message of the store's refusal (kFailedPrecondition) of a write id older than
// its writer's window. Over a replica link only the code and the message travel, so
// repair (server/cluster/repair.cc) recognises the refusal by this one definition.
constexpr char kWriteIdTooOldText[] = "it can no longer be deduplicated";
// Whether `st` is that refusal (it may arrive annotated, through a replica link).
inline bool IsWriteIdTooOld(const Status& st) {
  return st.code() == StatusCode::kFailedPrecondition &&
         st.message().find(kWriteIdTooOldText) != std::string::npos;
}

// WriteKind (put or append): common/write_id.h.

// What a writer asks for. `crc` is CRC-32C of the payload, computed by the client.
// `id` (optional) makes the write idempotent: see Store::Reserve.
struct WriteSpec {
  std::string ns;
  std::string key;
  WriteKind kind = WriteKind::kPut;
  uint64_t tag = 0;
  uint64_t length = 0;
  uint32_t crc = 0;
  WriteId id;
  // A repair's copy (wire::kFlagInstallId): stored even when `id` is known (the id then
  // names this record) and never refused as too old. Only replica frames set it.
  bool install_id = false;
};

class SegmentAccess;

// One committed record as readers see it.
struct RecordInfo {
  uint64_t tag = 0;
  uint64_t length = 0;
  uint32_t crc = 0;
  uint32_t pool = 0;            // index of the pool holding it
  uint64_t offset = 0;          // payload offset inside that pool (for one-sided reads)
  const char* data = nullptr;   // payload in the server's address space
  uint64_t commit_seq = 0;      // store-wide commit order (increases with every commit)
  WriteId write_id;             // of the write that stored it; invalid when it had none
  // The remote access of the segment holding it (SegmentRegistrar); null without a
  // registrar. Valid while the view that listed the record lives.
  const SegmentAccess* access = nullptr;
};

// What the store remembers of one write id in one namespace (Store::FindWrite).
enum class WriteState : uint8_t {
  kUnknown = 0,    // never seen (or forgotten: see docs/storage-format.md "Write ids")
  kInFlight = 1,   // reserved, neither committed nor aborted yet
  kCommitted = 2,  // committed: a retry is answered with the first outcome
};
enum class WriteIdKind : uint8_t { kPut = 1, kAppend = 2, kDelete = 3 };
struct WriteOutcome {
  WriteState state = WriteState::kUnknown;
  WriteIdKind kind = WriteIdKind::kPut;
  std::string key;
  uint64_t commit_seq = 0;  // of the record (tombstone for a delete) it wrote
  uint32_t pool = 0;        // where that record's payload is (puts and appends)
  uint64_t offset = 0;
  // Stored by a repair (WriteSpec::install_id), maybe as the put that rewrote its key
  // although the client appended it: a retry of either kind is its duplicate.
  bool installed = false;
};

// Records of one object, in append order, with pins keeping their memory alive.
struct ObjectView {
  std::vector<RecordInfo> records;
  uint64_t total_length = 0;
  std::vector<std::shared_ptr<const void>> pins;  // opaque; drop the view to unpin
};

// Space reserved for one record. Move-only. Destroying an uncommitted reservation
// aborts it (the space is wasted until reclaimed; nothing becomes visible).
class Reservation {
 public:
  Reservation() = default;
  Reservation(Reservation&& o) noexcept;
  Reservation& operator=(Reservation&& o) noexcept;
  Reservation(const Reservation&) = delete;
  Reservation& operator=(const Reservation&) = delete;
  ~Reservation();

  char* payload() const { return payload_; }
  uint64_t length() const { return length_; }
  uint32_t pool() const { return pool_; }
  uint64_t payload_offset() const { return payload_offset_; }
  bool valid() const { return impl_ != nullptr; }
  // True when the write's id was already committed: nothing was reserved (payload()
  // is null), Commit() answers OK without applying anything again.
  bool duplicate() const { return duplicate_; }

  // For store implementations only.
  struct Impl;
  Reservation(std::shared_ptr<Impl> impl, char* payload, uint64_t length, uint32_t pool,
              uint64_t payload_offset);
  Impl* impl() const { return impl_.get(); }
  void Reset();
  void set_duplicate() { duplicate_ = true; }

 private:
  std::shared_ptr<Impl> impl_;
  char* payload_ = nullptr;
  uint64_t length_ = 0;
  uint32_t pool_ = 0;
  uint64_t payload_offset_ = 0;
  bool duplicate_ = false;
};

// One key as the store lists it (ListKeys). Named apart from the client's rpmp::KeyInfo
// (rpmp/client.h): rpmp-server links both, and one name must have one definition.
struct StoredKey {
  std::string key;
  uint64_t total_length = 0;
  uint32_t records = 0;
};

struct ListPage {
  std::vector<StoredKey> keys;  // sorted by key
  bool more = false;          // true when keys beyond the last one exist
};

// A raw allocation's address: stable across restarts of the same pool.
struct RawAddress {
  uint32_t pool = 0;
  uint64_t offset = 0;  // of the first usable byte, inside the pool
};

struct PoolStats {
  std::string path;
  std::string medium;  // "pmem (flush)", "file (msync)", "dram",
                       // "tmpfs (survives process crash, not reboot)"
  uint64_t capacity = 0;
  uint64_t used = 0;   // bytes held by segments, raw allocations and the delete reserve
  // Bytes new data can still take: capacity - used, less the delete reserve while it
  // is not held (it is taken back first) and less what the allocator could not give
  // when the pool last filled (PMDK metadata, fragmentation). Heartbeats report it, so
  // the proxy's "has room" mark counts no space a write cannot use.
  uint64_t free = 0;
  bool capacity_tier = false;  // a capacity-tier pool (docs/storage-format.md "Tiers")
};

// Live record bytes of one namespace (Store::NamespaceBytes).
struct NamespaceUsage {
  std::string ns;
  uint64_t bytes = 0;
};

struct StoreStats {
  uint64_t node_id = 0;
  std::vector<PoolStats> pools;
  uint64_t namespaces = 0;
  uint64_t keys = 0;
  uint64_t records = 0;
  uint64_t live_bytes = 0;  // payload bytes of visible records
  uint64_t segments = 0;    // log segments held by namespaces (metrics)
  // Compaction (Store::Compact): bytes of dead records still held by segments, and
  // what compaction has done since open.
  uint64_t dead_bytes = 0;
  uint64_t compacted_segments = 0;  // segments emptied by compaction
  uint64_t compacted_records = 0;   // records copied
  uint64_t compacted_bytes = 0;     // record bytes copied
};

// One compaction step (Store::Compact).
struct CompactOptions {
  double min_dead_fraction = 0.5;    // compact segments with at least this share dead
  uint64_t max_bytes = 4ull << 20;   // copy at most about this much per step (throttle)
  // Payloads are copied without the namespace's mutex; it is also let go after about
  // this many moved bytes, so foreground requests interleave (latency bound).
  uint64_t batch_bytes = 64ull << 10;
  // How long an emptied segment stays allocated after the step, for one-sided readers
  // that may still hold locations in it from GetMeta. When the pools are full the
  // store frees such segments early (a reader then detects the stale location by
  // the payload's CRC-32C: docs/storage-format.md "Compaction").
  std::chrono::milliseconds grace{5000};
  // A segment is compacted only once this long has passed since it stopped taking
  // records. Under overwrites a segment's records die by themselves soon after it
  // closes; compacting it first copies records about to die and keeps the emptied
  // segment for the grace, so new records land on pool pages never touched before
  // (docs/benchmarks.md, "The 1 MiB put regression"). Ignored in a step after an
  // allocation failed for space. rpmp-server uses the grace.
  std::chrono::milliseconds settle{0};
};

// Remote access to one log segment, as a SegmentRegistrar set it up (the server
// registers each segment with the fabric under its own key: docs/security.md).
// Opaque to the store, which destroys it - revoking the access - before the
// segment's memory is freed or reused.
class SegmentAccess {
 public:
  virtual ~SegmentAccess() = default;
};

// Who makes a segment remotely accessible (Store::SetSegmentRegistrar). Register is
// called once per segment, at its creation, with the namespace it belongs to; it may
// be called from any thread that allocates segments (writers, compaction).
class SegmentRegistrar {
 public:
  virtual ~SegmentRegistrar() = default;
  virtual StatusOr<std::unique_ptr<SegmentAccess>> Register(const std::string& ns, uint32_t pool,
                                                            char* base, uint64_t size) = 0;
};

// A memory range the transport should register for RMA.
struct MemoryArea {
  uint32_t pool = 0;
  char* base = nullptr;
  size_t size = 0;
};

class Store {
 public:
  virtual ~Store() = default;

  // Reserves space for a record. Errors: InvalidArgument (bad ns/key), NoSpace.
  // With a valid spec.id: when the namespace already holds that id as committed, the
  // returned reservation is duplicate() and nothing is reserved; Unavailable when an
  // earlier attempt with the id is still in flight (retry later); InvalidArgument when
  // the id was used for another key or kind; FailedPrecondition when the id is older
  // than the writer's remembered window (it can no longer be deduplicated).
  virtual StatusOr<Reservation> Reserve(const WriteSpec& spec) = 0;
  // Persists the payload, then the commit mark, then publishes the record. A kPut
  // replaces all earlier records of the key; a kAppend adds after them.
  virtual Status Commit(Reservation* r) = 0;
  // Gives up a reservation; nothing becomes visible.
  virtual void Abort(Reservation* r) = 0;

  // Records of (ns, key). NotFound when absent.
  virtual StatusOr<ObjectView> Get(const std::string& ns, const std::string& key) = 0;
  // Removes a key atomically (all its records or none, also across a crash).
  // NotFound when absent. Works when the pool is full. With a valid `id`, a delete
  // whose id is already committed answers OK and changes nothing; the tombstone
  // carries the id.
  virtual Status Delete(const std::string& ns, const std::string& key, const WriteId& id) = 0;
  Status Delete(const std::string& ns, const std::string& key) { return Delete(ns, key, {}); }
  // What namespace `ns` remembers of write id `id` (kUnknown for an unknown ns).
  // The table is rebuilt at open from the committed records, bounded per writer
  // (kWriteIdWindow seqs) and per namespace (kWriteIdWriters writers, least recently
  // used go first), and goes with the namespace.
  virtual WriteOutcome FindWrite(const std::string& ns, const WriteId& id) = 0;
  // Keys of `ns` strictly after `start_after`, at most `max`. An unknown namespace
  // yields an empty page.
  virtual StatusOr<ListPage> List(const std::string& ns, const std::string& start_after,
                                  size_t max) = 0;
  // Frees everything the namespace holds. NotFound when it holds nothing.
  virtual Status DeleteNamespace(const std::string& ns) = 0;

  // Raw memory: an allocation of `size` bytes; InvalidArgument for 0, NoSpace.
  virtual StatusOr<RawAddress> Alloc(uint64_t size) = 0;
  // NotFound unless `addr` is the start of a live allocation.
  virtual Status Free(RawAddress addr) = 0;
  // Pointer to [addr, addr+len) when that range lies inside one live allocation
  // (addr may point into its middle); OutOfRange / NotFound otherwise.
  virtual StatusOr<char*> ResolveRaw(RawAddress addr, uint64_t len) = 0;
  // Makes [p, p+len) of raw memory durable (after an RMA wrote into it).
  virtual void PersistRaw(const char* p, uint64_t len) = 0;

  // Copies the live records of segments at least `min_dead_fraction` dead (not the
  // active ones) into fresh space with new commit seqs, in the key's order, and frees
  // each emptied segment once `grace` has passed and no view pins it (a segment that
  // dies later by overwrites after some of its records were moved keeps the same
  // grace). Crash-safe at every point (docs/storage-format.md "Compaction"). Raw
  // allocations never move. Also frees graveyard segments whose grace has passed, so
  // a caller calls it periodically even when nothing is to be moved.
  // Returns the record bytes copied; NoSpace ends a step early without an error.
  virtual StatusOr<uint64_t> Compact(const CompactOptions& options) = 0;
  virtual StoreStats Stats() = 0;
  // Live record bytes (headers, key areas, payloads; as StoreStats::live_bytes) of
  // every namespace named p or under "p/" for a p in `prefixes` (quota accounting,
  // docs/cluster.md "Quotas").
  virtual std::vector<NamespaceUsage> NamespaceBytes(const std::vector<std::string>& prefixes) = 0;
  // Live record bytes of every namespace holding at least `min_bytes` (> 0): the
  // heartbeat's large_namespaces, by which the proxy leader sizes substitutes
  // (docs/cluster.md "Substitutes with room").
  virtual std::vector<NamespaceUsage> NamespacesOver(uint64_t min_bytes) = 0;
  virtual std::vector<MemoryArea> Areas() = 0;
  // Makes `registrar` register every segment: each existing one now (an error here is
  // returned), and each new one at its creation (an error there fails the write that
  // needed the segment). A segment's access is destroyed before its memory is freed.
  // nullptr stops registering new segments; accesses already made stay with their
  // segments. Call before serving; `registrar` must outlive the store or be removed.
  virtual Status SetSegmentRegistrar(SegmentRegistrar* registrar) = 0;
  // Stable id of this node, created with its first pool and kept in it.
  virtual uint64_t NodeId() const = 0;
};

}  // namespace rpmp

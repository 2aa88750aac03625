// LogStore space management: taking room for records, allocating segments, the
// per-pool emergency reserve that keeps deletes working in a full pool, freeing
// segments without live records, raw allocations, and Stats/Areas.
#include "server/store/log_store.h"

#include <algorithm>
#include <cstring>

#include "common/log.h"
#include "common/no_space.h"

namespace rpmp {

namespace fmt = store_format;

namespace log_store_internal {
Segment::~Segment() {
  access.reset();  // revoke remote access before the memory can be reused
  if (!reclaim) return;
  pool->medium->Free(offset);
  pool->used -= size;
}
}  // namespace log_store_internal

namespace {
constexpr uint64_t kReserveMagic = 0x56525352504d5052ull;  // "RPMPRSRV"
}  // namespace

uint64_t LogStore::StandardSegmentObjectSize(const PoolState& pool) const {
  return segment_size_ - pool.medium->allocation_overhead();
}

uint64_t LogStore::SegmentStepFor(uint64_t needed, uint64_t at_least) const {
  const uint64_t overhead = pools_[0]->medium->allocation_overhead();
  uint64_t step = std::max(first_segment_size_, std::min(segment_size_, at_least));
  while (step < segment_size_ && step - overhead < needed) {
    step = std::min(segment_size_, 2 * step);
  }
  return step;
}

StatusOr<LogStore::SegmentPtr> LogStore::AllocateGrowingSegment(Namespace* ns, uint64_t needed,
                                                                SpacePurpose purpose) {
  const uint64_t overhead = pools_[0]->medium->allocation_overhead();
  const uint64_t smallest = SegmentStepFor(needed, 0);
  uint64_t step = smallest;
  if (ns->active) step = SegmentStepFor(needed, 2 * (ns->active->size + overhead));
  StatusOr<SegmentPtr> seg = AllocateSegment(ns->name, step - overhead, purpose);
  if (!seg.ok() && ReleaseGraveyard() > 0) {
    seg = AllocateSegment(ns->name, step - overhead, purpose);
  }
  // Under space pressure a smaller segment may still fit where the next size does not.
  while (!seg.ok() && seg.status().code() == StatusCode::kResourceExhausted && step > smallest) {
    step = std::max(smallest, step / 2);
    seg = AllocateSegment(ns->name, step - overhead, purpose);
  }
  return seg;
}

StatusOr<LogStore::Placement> LogStore::TakeSpace(Namespace* ns, uint64_t record_size,
                                                  SpacePurpose purpose) {
  auto take = [record_size](const SegmentPtr& seg) {
    Placement place{seg, seg->offset + seg->tail};
    seg->tail += record_size;
    return place;
  };
  if (ns->active && ns->active->tail + record_size <= ns->active->size) {
    return take(ns->active);
  }
  uint64_t needed = fmt::kSegmentHeaderSize + fmt::kSegmentAlignSlack + record_size;
  uint64_t standard = StandardSegmentObjectSize(*pools_[0]);
  if (needed > standard) {  // a dedicated segment; the active one stays active
    StatusOr<SegmentPtr> big = AllocateSegment(ns->name, needed, purpose);
    if (!big.ok() && ReleaseGraveyard() > 0) big = AllocateSegment(ns->name, needed, purpose);
    RPMP_ASSIGN_OR_RETURN(SegmentPtr seg, std::move(big));
    seg->closed_at = std::chrono::steady_clock::now();  // holds this one record only
    ns->segments[seg.get()] = seg;
    return take(seg);
  }
  StatusOr<SegmentPtr> seg = AllocateGrowingSegment(ns, needed, purpose);
  if (!seg.ok() && purpose == SpacePurpose::kTombstone) seg = AllocateFromReserve(ns->name);
  if (!seg.ok()) return seg.status();
  SegmentPtr old = ns->active;
  ns->active = *seg;
  ns->segments[ns->active.get()] = ns->active;
  if (old) {
    old->closed_at = std::chrono::steady_clock::now();
    MaybeReclaim(ns, old);
  }
  return take(ns->active);
}

std::vector<LogStore::PoolState*> LogStore::PoolsByFreeSpace() {
  std::vector<PoolState*> order;
  for (auto& p : pools_) order.push_back(p.get());
  auto free_of = [](const PoolState* p) {
    uint64_t used = p->used;
    return p->medium->capacity() > used ? p->medium->capacity() - used : 0;
  };
  std::stable_sort(order.begin(), order.end(), [&](const PoolState* a, const PoolState* b) {
    if (a->capacity_tier != b->capacity_tier) return !a->capacity_tier;
    return free_of(a) > free_of(b);
  });
  return order;
}

void LogStore::SetCapacityTier(uint32_t index) {
  if (index >= pools_.size()) return;
  pools_[index]->capacity_tier = true;
  RPMP_LOG_INFO("pool %s: capacity tier (used when no fast pool has room)",
                pools_[index]->medium->path().c_str());
}

std::string LogStore::NoSpaceMessage(uint64_t want) {
  std::string m = std::string(kNoSpacePoolsFull) + " " + std::to_string(want) + " more bytes:";
  for (auto& p : pools_) {
    uint64_t used = p->used;
    uint64_t cap = p->medium->capacity();
    m += " pool " + p->medium->path() + " has about " +
         std::to_string(cap > used ? cap - used : 0) + " of " + std::to_string(cap) +
         " bytes free;";
  }
  m += " delete keys or namespaces, or add a pool";
  return m;
}

StatusOr<LogStore::SegmentPtr> LogStore::AllocateSegmentIn(PoolState* pool,
                                                           const std::string& ns,
                                                           uint64_t size) {
  fmt::SegmentHeader h{};
  h.magic = fmt::kSegmentMagic;
  h.epoch = 0;
  while (h.epoch == 0) h.epoch = rng_();
  h.sequence = ++segment_seq_;
  h.size = size;
  h.state = 0;
  h.ns_length = static_cast<uint16_t>(ns.size());
  h.flags = fmt::kSegmentAlignedRecords;
  std::memcpy(h.ns, ns.data(), ns.size());
  h.header_crc = fmt::SegmentHeaderCrc(h);
  StatusOr<uint64_t> allocated = pool->medium->Allocate(fmt::kSegmentType, size, &h, sizeof(h));
  const uint64_t cap = pool->medium->capacity();
  if (!allocated.ok()) {
    // What is still free could not hold this segment: count it as unusable. If a
    // smaller one fits later (AllocateGrowingSegment halves its step), the success
    // below lowers the estimate to what is then left.
    if (allocated.status().code() == StatusCode::kResourceExhausted) {
      pool->unusable = cap > pool->used ? cap - pool->used : 0;
    }
    return allocated.status();
  }
  const uint64_t offset = *allocated;
  std::unique_ptr<SegmentAccess> access;
  if (registrar_ != nullptr) {
    StatusOr<std::unique_ptr<SegmentAccess>> a =
        registrar_->Register(ns, pool->index, pool->medium->base() + offset, size);
    if (!a.ok()) {
      pool->medium->Free(offset);
      return Status(a.status().code(), "cannot register a new segment of namespace '" + ns +
                                           "' for remote reads: " + a.status().message());
    }
    access = std::move(a).value();
  }
  pool->used += size;
  const uint64_t left = cap > pool->used ? cap - pool->used : 0;
  if (left < pool->unusable) pool->unusable = left;  // the pool held more than estimated
  auto seg = std::make_shared<Segment>();
  seg->access = std::move(access);
  seg->pool = pool;
  seg->offset = offset;
  seg->size = size;
  seg->epoch = h.epoch;
  seg->sequence = h.sequence;
  seg->first_record = fmt::FirstRecordOffset(offset, h.flags);
  seg->tail = seg->first_record;
  return seg;
}

StatusOr<LogStore::SegmentPtr> LogStore::AllocateSegment(const std::string& ns,
                                                         uint64_t size,
                                                         SpacePurpose purpose) {
  std::lock_guard<std::mutex> lock(alloc_mu_);
  for (PoolState* pool : PoolsByFreeSpace()) {
    if (purpose == SpacePurpose::kData && !EnsureReserve(pool)) continue;
    StatusOr<SegmentPtr> seg = AllocateSegmentIn(pool, ns, size);
    if (seg.ok() || seg.status().code() != StatusCode::kResourceExhausted) return seg;
  }
  short_of_space_ = true;
  return Status::NoSpace(NoSpaceMessage(size));
}

StatusOr<LogStore::SegmentPtr> LogStore::AllocateFromReserve(const std::string& ns) {
  std::lock_guard<std::mutex> lock(alloc_mu_);
  for (auto& p : pools_) {
    PoolState* pool = p.get();
    if (!pool->has_reserve) continue;
    pool->medium->Free(pool->reserve_offset);
    pool->used -= pool->reserve_size;
    pool->has_reserve = false;
    RPMP_LOG_WARN("pool %s is full; using its emergency reserve for a delete",
                  pool->medium->path().c_str());
    // Exactly the reserve's size, so the allocator can reuse the very same space.
    StatusOr<SegmentPtr> seg = AllocateSegmentIn(pool, ns, pool->reserve_size);
    if (seg.ok()) return seg;
  }
  return Status::NoSpace("cannot record a delete: every pool is full and no emergency "
                         "reserve is left; " + NoSpaceMessage(fmt::kSegmentHeaderSize));
}

bool LogStore::EnsureReserve(PoolState* pool) {
  if (pool->has_reserve) return true;
  uint64_t header[2] = {kReserveMagic, pool->reserve_size};
  StatusOr<uint64_t> offset =
      pool->medium->Allocate(fmt::kReserveType, pool->reserve_size, header, sizeof(header));
  if (!offset.ok()) return false;
  pool->reserve_offset = *offset;
  pool->has_reserve = true;
  pool->used += pool->reserve_size;
  return true;
}

void LogStore::MaybeReclaim(Namespace* ns, const SegmentPtr& seg) {
  if (recovering_ || ns->deleted) return;
  if (seg->live_records > 0 || seg->pending > 0) return;
  if (seg == ns->active) {
    if (!ns->keys.empty()) return;  // keep appending into it
    ns->active.reset();             // an emptied namespace holds no space
  }
  seg->reclaim = true;  // freed when the last pin or reservation lets go
  ns->segments.erase(seg.get());
  if (seg->moved_out) Bury(seg);  // one-sided readers may hold moved locations
}

void LogStore::ReclaimNamespace(Namespace* ns) {
  for (auto& [raw, seg] : ns->segments) {
    auto* h = reinterpret_cast<fmt::SegmentHeader*>(seg->start());
    h->state = fmt::kSegmentDeleted;
    seg->pool->medium->Persist(&h->state, sizeof(h->state));
    seg->reclaim = true;
  }
  ns->segments.clear();
  ns->active.reset();
  ns->keys.clear();
  ns->records = 0;
  ns->live_bytes = 0;
}

StatusOr<RawAddress> LogStore::Alloc(uint64_t size) {
  if (size == 0) return Status::InvalidArgument("raw allocation of 0 bytes");
  // Checked before any arithmetic: kRawHeaderSize + size must not wrap (a client
  // chooses size), and nothing larger than the largest pool can be had anyway.
  uint64_t largest = 0;
  for (const auto& pool : pools_) largest = std::max(largest, pool->medium->capacity());
  if (largest <= fmt::kRawHeaderSize || size > largest - fmt::kRawHeaderSize)
    return Status::NoSpace("raw allocation of " + std::to_string(size) +
                           " bytes is larger than any pool (" + std::to_string(largest) + " bytes)");
  fmt::RawHeader h{};
  h.magic = fmt::kRawMagic;
  h.size = size;
  std::lock_guard<std::mutex> lock(alloc_mu_);
  for (PoolState* pool : PoolsByFreeSpace()) {
    if (!EnsureReserve(pool)) continue;
    StatusOr<uint64_t> offset =
        pool->medium->Allocate(fmt::kRawType, fmt::kRawHeaderSize + size, &h, sizeof(h));
    if (!offset.ok()) continue;
    pool->used += fmt::kRawHeaderSize + size;
    uint64_t start = *offset + fmt::kRawHeaderSize;
    std::lock_guard<std::mutex> raw_lock(raw_mu_);
    raw_[pool->index][start] = size;
    return RawAddress{pool->index, start};
  }
  return Status::NoSpace(NoSpaceMessage(size));
}

Status LogStore::Free(RawAddress addr) {
  std::lock_guard<std::mutex> lock(raw_mu_);
  auto not_found = Status::NotFound("no raw allocation starts at pool " +
                                    std::to_string(addr.pool) + " offset " +
                                    std::to_string(addr.offset));
  if (addr.pool >= pools_.size()) return not_found;
  auto it = raw_[addr.pool].find(addr.offset);
  if (it == raw_[addr.pool].end()) return not_found;
  PoolState* pool = pools_[addr.pool].get();
  pool->medium->Free(addr.offset - fmt::kRawHeaderSize);
  pool->used -= fmt::kRawHeaderSize + it->second;
  raw_[addr.pool].erase(it);
  return Status::Ok();
}

StatusOr<char*> LogStore::ResolveRaw(RawAddress addr, uint64_t len) {
  std::lock_guard<std::mutex> lock(raw_mu_);
  auto not_found = Status::NotFound("no raw allocation holds pool " +
                                    std::to_string(addr.pool) + " offset " +
                                    std::to_string(addr.offset));
  if (addr.pool >= pools_.size()) return not_found;
  const auto& allocations = raw_[addr.pool];
  auto it = allocations.upper_bound(addr.offset);
  if (it == allocations.begin()) return not_found;
  --it;
  uint64_t end = it->first + it->second;
  if (addr.offset >= end) return not_found;
  if (len > end - addr.offset) {
    return Status::OutOfRange("range of " + std::to_string(len) + " bytes at offset " +
                              std::to_string(addr.offset) + " runs past the end of its "
                              "allocation (" + std::to_string(end - addr.offset) +
                              " bytes left)");
  }
  return pools_[addr.pool]->medium->base() + addr.offset;
}

void LogStore::PersistRaw(const char* p, uint64_t len) {
  for (auto& pool : pools_) {
    const char* base = pool->medium->base();
    if (p >= base && p < base + pool->medium->capacity()) {
      pool->medium->Persist(p, len);
      return;
    }
  }
}

StoreStats LogStore::Stats() {
  StoreStats stats;
  stats.node_id = node_id_;
  for (auto& p : pools_) {
    PoolStats ps;
    ps.path = p->medium->path();
    ps.medium = p->medium->promise();
    ps.capacity = p->medium->capacity();
    ps.used = std::min<uint64_t>(p->used, ps.capacity);
    uint64_t held = ps.used + p->unusable.load();
    {
      std::lock_guard<std::mutex> lock(alloc_mu_);
      if (!p->has_reserve) held += p->reserve_size;
    }
    ps.free = held < ps.capacity ? ps.capacity - held : 0;
    ps.capacity_tier = p->capacity_tier;
    stats.pools.push_back(ps);
  }
  std::vector<NamespacePtr> all;
  {
    std::shared_lock<std::shared_mutex> lock(ns_map_mu_);
    for (auto& [name, ns] : namespaces_) all.push_back(ns);
  }
  for (auto& ns : all) {
    std::lock_guard<std::mutex> lock(ns->mu);
    if (ns->deleted || ns->segments.empty()) continue;
    stats.namespaces++;
    stats.keys += ns->keys.size();
    stats.records += ns->records;
    stats.live_bytes += ns->live_bytes;
    stats.segments += ns->segments.size();
    for (auto& [raw, seg] : ns->segments) {
      uint64_t used = seg->tail - seg->first_record;
      if (used > seg->live_bytes) stats.dead_bytes += used - seg->live_bytes;
    }
  }
  stats.compacted_segments = compacted_segments_;
  stats.compacted_records = compacted_records_;
  stats.compacted_bytes = compacted_bytes_;
  return stats;
}

std::vector<NamespaceUsage> LogStore::NamespaceBytes(const std::vector<std::string>& prefixes) {
  auto covered = [&prefixes](const std::string& name) {
    for (const std::string& p : prefixes) {
      if (name.compare(0, p.size(), p) == 0 && (name.size() == p.size() || name[p.size()] == '/')) return true;
    }
    return false;
  };
  return Usage(covered, 0);
}

std::vector<NamespaceUsage> LogStore::NamespacesOver(uint64_t min_bytes) {
  return Usage([](const std::string&) { return true; }, min_bytes);
}

std::vector<NamespaceUsage> LogStore::Usage(const std::function<bool(const std::string&)>& name_ok,
                                            uint64_t min_bytes) {
  std::vector<std::pair<std::string, NamespacePtr>> matched;  // names first: no namespace lock for the rest
  {
    std::shared_lock<std::shared_mutex> lock(ns_map_mu_);
    for (auto& [name, ns] : namespaces_) {
      if (name_ok(name)) matched.emplace_back(name, ns);
    }
  }
  std::vector<NamespaceUsage> out;
  for (auto& [name, ns] : matched) {
    std::lock_guard<std::mutex> lock(ns->mu);
    if (!ns->deleted && ns->live_bytes >= min_bytes) out.push_back({name, ns->live_bytes});
  }
  return out;
}

Status LogStore::SetSegmentRegistrar(SegmentRegistrar* registrar) {
  {
    std::lock_guard<std::mutex> lock(alloc_mu_);
    registrar_ = registrar;
  }
  if (registrar == nullptr) return Status::Ok();
  std::vector<NamespacePtr> all;
  {
    std::shared_lock<std::shared_mutex> lock(ns_map_mu_);
    for (auto& [name, ns] : namespaces_) all.push_back(ns);
  }
  for (const NamespacePtr& ns : all) {
    std::lock_guard<std::mutex> lock(ns->mu);
    for (auto& [raw, seg] : ns->segments) {
      if (seg->access != nullptr) continue;  // created (and registered) since
      RPMP_ASSIGN_OR_RETURN(seg->access,
                            registrar->Register(ns->name, seg->pool->index, seg->start(), seg->size));
    }
  }
  return Status::Ok();
}

std::vector<MemoryArea> LogStore::Areas() {
  std::vector<MemoryArea> areas;
  for (auto& p : pools_) {
    areas.push_back(MemoryArea{p->index, p->medium->base(), p->medium->capacity()});
  }
  return areas;
}

}  // namespace rpmp

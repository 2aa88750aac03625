// LogStore record path: Reserve, Commit, Abort, Get, Delete, List, DeleteNamespace.
// The commit protocol is described in docs/storage-format.md ("Commit protocol").
#include "server/store/log_store.h"

#include <cstring>

namespace rpmp {

using log_store_internal::LogReservation;
namespace fmt = store_format;

namespace {

Status ValidateNamespace(const std::string& ns) {
  if (ns.empty()) return Status::InvalidArgument("namespace name is empty");
  if (ns.size() > kMaxNamespaceLength) {
    return Status::InvalidArgument("namespace name has " + std::to_string(ns.size()) +
                                   " bytes; the maximum is " +
                                   std::to_string(kMaxNamespaceLength));
  }
  return Status::Ok();
}

Status ValidateNames(const std::string& ns, const std::string& key) {
  RPMP_RETURN_IF_ERROR(ValidateNamespace(ns));
  if (key.empty()) return Status::InvalidArgument("key is empty");
  if (key.size() > kMaxKeyLength) {
    return Status::InvalidArgument("key has " + std::to_string(key.size()) +
                                   " bytes; the maximum is " + std::to_string(kMaxKeyLength));
  }
  return Status::Ok();
}

Status KeyNotFound(const std::string& ns, const std::string& key) {
  return Status::NotFound("key '" + key + "' in namespace '" + ns + "'");
}

}  // namespace

LogStore::NamespacePtr LogStore::FindNamespace(const std::string& name) {
  std::shared_lock<std::shared_mutex> lock(ns_map_mu_);
  auto it = namespaces_.find(name);
  return it == namespaces_.end() ? nullptr : it->second;
}

LogStore::NamespacePtr LogStore::FindOrCreateNamespace(const std::string& name) {
  if (NamespacePtr ns = FindNamespace(name)) return ns;  // the common case: shared
  std::lock_guard<std::shared_mutex> lock(ns_map_mu_);
  NamespacePtr& ns = namespaces_[name];
  if (ns == nullptr) ns = std::make_shared<Namespace>(name);
  return ns;
}

fmt::RecordHeader* LogStore::HeaderAt(const PoolState& pool, uint64_t offset) const {
  return reinterpret_cast<fmt::RecordHeader*>(pool.medium->base() + offset);
}

uint64_t LogStore::WriteRecordHeader(const Placement& place, uint8_t kind,
                                     const WriteSpec& spec, uint64_t origin_seq) {
  uint16_t flags = spec.id.valid() ? fmt::kRecordHasWriteId : 0;
  if (origin_seq != 0) flags |= fmt::kRecordMoved;
  fmt::RecordHeader h{};
  h.magic = fmt::kRecordMagic;
  h.version = fmt::kRecordVersion;
  h.kind = kind;
  h.flags = flags;
  h.segment_epoch = place.segment->epoch;
  h.tag = spec.tag;
  h.payload_length = spec.length;
  h.key_length = static_cast<uint32_t>(spec.key.size());
  h.payload_crc = spec.crc;
  h.header_crc = fmt::RecordHeaderCrc(h);
  h.commit = 0;
  h.origin_seq = origin_seq;
  PoolState* pool = place.segment->pool;
  char* at = pool->medium->base() + place.record_offset;
  // Commit protocol, step 1: the commit word reads 0 durably before any byte that
  // could make the header look valid (the space may hold stale bytes of a freed
  // segment; a torn header must never pair a valid CRC with a stale commit word).
  auto* dst = reinterpret_cast<fmt::RecordHeader*>(at);
  __atomic_store_n(&dst->commit, 0, __ATOMIC_RELAXED);
  pool->medium->Persist(&dst->commit, sizeof(dst->commit));
  // Step 2: header (commit still 0), key and write id.
  std::memcpy(at, &h, sizeof(h));
  std::memcpy(at + sizeof(h), spec.key.data(), spec.key.size());
  uint64_t written = sizeof(h) + spec.key.size();
  if (flags & fmt::kRecordHasWriteId) {
    uint64_t id[2] = {spec.id.writer, spec.id.seq};
    std::memcpy(at + written, id, sizeof(id));
    written += sizeof(id);
  }
  pool->medium->Persist(at, written);
  return place.record_offset + fmt::PayloadOffsetInRecord(spec.key.size(), flags);
}

Status LogStore::CheckWriteId(Namespace* ns, const WriteId& id, WriteIdKind kind,
                              const std::string& key, bool* duplicate) {
  *duplicate = false;
  if (!id.valid()) return Status::Ok();
  WriteOutcome o = ns->write_ids.Find(id);
  std::string name = "write id (" + std::to_string(id.writer) + ", " + std::to_string(id.seq) + ")";
  if (o.state != WriteState::kUnknown && ((o.kind != kind && !o.installed) || o.key != key)) {
    return Status::InvalidArgument(name + " was already used for another write in namespace '" +
                                   ns->name + "'");
  }
  if (o.state == WriteState::kCommitted) {
    *duplicate = true;
    return Status::Ok();
  }
  if (o.state == WriteState::kInFlight) {
    return Status::Unavailable("an earlier attempt of " + name + " is still in flight; retry");
  }
  if (ns->write_ids.TooOld(id)) {
    return Status::FailedPrecondition(name + " is older than the " + std::to_string(kWriteIdWindow) +
                                      " newest of its writer; " + kWriteIdTooOldText);
  }
  return Status::Ok();
}

void LogStore::StoreCommitWord(const StoredRecord& rec, uint64_t word) {
  PoolState* pool = rec.segment->pool;
  fmt::RecordHeader* h = HeaderAt(*pool, rec.header_offset);
  __atomic_store_n(&h->commit, word, __ATOMIC_RELEASE);
  pool->medium->Persist(&h->commit, sizeof(h->commit));
}

void LogStore::CountLive(const StoredRecord& rec) {
  rec.segment->live_records++;
  rec.segment->live_bytes += rec.bytes;
}

void LogStore::MarkDead(Namespace* ns, const StoredRecord& rec) {
  StoreCommitWord(rec, rec.seq | fmt::kDeadBit);
  rec.segment->live_records--;
  rec.segment->live_bytes -= rec.bytes;
  MaybeReclaim(ns, rec.segment);
}

void LogStore::MarkKeyDead(Namespace* ns, KeyEntry* entry) {
  for (const StoredRecord& rec : entry->records) MarkDead(ns, rec);
  ns->records -= entry->records.size();
  ns->live_bytes -= entry->total_length;
  entry->records.clear();
  entry->total_length = 0;
}

StatusOr<Reservation> LogStore::Reserve(const WriteSpec& spec) {
  RPMP_RETURN_IF_ERROR(ValidateNames(spec.ns, spec.key));
  if (spec.kind != WriteKind::kPut && spec.kind != WriteKind::kAppend) {
    return Status::InvalidArgument("write kind must be put or append");
  }
  if (spec.length > fmt::kMaxPayloadLength) {
    return Status::InvalidArgument("record length " + std::to_string(spec.length) +
                                   " exceeds the maximum of " +
                                   std::to_string(fmt::kMaxPayloadLength) + " bytes");
  }
  uint16_t flags = spec.id.valid() ? fmt::kRecordHasWriteId : 0;
  uint64_t record_size = fmt::RecordSize(spec.key.size(), spec.length, flags);
  WriteIdKind id_kind = spec.kind == WriteKind::kPut ? WriteIdKind::kPut : WriteIdKind::kAppend;
  for (;;) {
    NamespacePtr ns = FindOrCreateNamespace(spec.ns);
    std::lock_guard<std::mutex> lock(ns->mu);
    if (ns->deleted) continue;  // deleted meanwhile: use the new one
    bool duplicate = false;
    if (!spec.install_id)
      RPMP_RETURN_IF_ERROR(CheckWriteId(ns.get(), spec.id, id_kind, spec.key, &duplicate));
    if (duplicate) {
      auto impl = std::make_shared<LogReservation>();
      impl->owner = this;
      impl->finished = true;
      Reservation r(std::move(impl), nullptr, 0, 0, 0);
      r.set_duplicate();
      return r;
    }
    RPMP_ASSIGN_OR_RETURN(Placement place,
                          TakeSpace(ns.get(), record_size, SpacePurpose::kData));
    uint8_t kind = spec.kind == WriteKind::kPut ? fmt::kKindPut : fmt::kKindAppend;
    uint64_t payload_offset = WriteRecordHeader(place, kind, spec);
    if (spec.id.valid()) ns->write_ids.StartInFlight(spec.id, id_kind, spec.key);
    place.segment->pending++;
    auto impl = std::make_shared<LogReservation>();
    impl->owner = this;
    impl->ns = ns;
    impl->segment = place.segment;
    impl->header_offset = place.record_offset;
    impl->payload_offset = payload_offset;
    impl->kind = spec.kind;
    impl->key = spec.key;
    impl->tag = spec.tag;
    impl->length = spec.length;
    impl->crc = spec.crc;
    impl->id = spec.id;
    impl->install_id = spec.install_id;
    PoolState* pool = place.segment->pool;
    return Reservation(std::move(impl), pool->medium->base() + payload_offset, spec.length,
                       pool->index, payload_offset);
  }
}

Status LogStore::FinishReservation(LogReservation* impl, bool committed) {
  Namespace* ns = impl->ns.get();
  std::lock_guard<std::mutex> lock(ns->mu);
  impl->finished = true;
  impl->segment->pending--;
  if (!committed || ns->deleted) {
    if (impl->id.valid()) ns->write_ids.Forget(impl->id);
    MaybeReclaim(ns, impl->segment);
    if (!committed) return Status::Ok();
    return Status::FailedPrecondition("namespace '" + ns->name +
                                      "' was deleted while the write was in flight");
  }
  StoredRecord rec;
  rec.segment = impl->segment;
  rec.header_offset = impl->header_offset;
  rec.payload_offset = impl->payload_offset;
  rec.length = impl->length;
  rec.tag = impl->tag;
  rec.crc = impl->crc;
  rec.seq = ++global_seq_;
  rec.order = rec.seq;
  rec.id = impl->id;
  rec.kind = impl->kind == WriteKind::kPut ? fmt::kKindPut : fmt::kKindAppend;
  rec.flags = impl->id.valid() ? fmt::kRecordHasWriteId : 0;
  rec.bytes = fmt::RecordSize(impl->key.size(), impl->length, rec.flags);
  StoreCommitWord(rec, rec.seq);
  CountLive(rec);
  KeyEntry& entry = ns->keys[impl->key];
  if (impl->install_id && impl->kind == WriteKind::kPut) {
    // A repair rewriting a diverged key: the records this put replaces are not in the
    // primary's copy unless the repair installs them again (with their ids, after
    // this). A client's retry of a discarded one must be stored anew, not answered
    // from a record that is gone: forget their ids.
    for (const StoredRecord& old : entry.records)
      if (old.id.valid()) ns->write_ids.ForgetCommitted(old.id, old.seq);
  }
  if (rec.id.valid()) {
    WriteOutcome o;
    o.kind = impl->kind == WriteKind::kPut ? WriteIdKind::kPut : WriteIdKind::kAppend;
    o.key = impl->key;
    o.commit_seq = rec.seq;
    o.pool = rec.segment->pool->index;
    o.offset = rec.payload_offset;
    o.installed = impl->install_id;
    ns->write_ids.Committed(rec.id, o);
  }
  if (impl->kind == WriteKind::kPut) MarkKeyDead(ns, &entry);
  entry.records.push_back(std::move(rec));
  entry.total_length += impl->length;
  ns->records++;
  ns->live_bytes += impl->length;
  return Status::Ok();
}

Status LogStore::Commit(Reservation* r) {
  if (r == nullptr || !r->valid()) {
    return Status::InvalidArgument("commit of an empty reservation");
  }
  if (r->duplicate()) {  // the first attempt's outcome stands
    r->Reset();
    return Status::Ok();
  }
  auto* impl = static_cast<LogReservation*>(r->impl());
  if (impl->owner != this) return Status::InvalidArgument("reservation of another store");
  if (impl->finished) return Status::FailedPrecondition("reservation already finished");
  if (r->length() > 0) impl->segment->pool->medium->Persist(r->payload(), r->length());
  Status s = FinishReservation(impl, /*committed=*/true);
  r->Reset();
  return s;
}

void LogStore::Abort(Reservation* r) {
  if (r == nullptr || !r->valid()) return;
  if (r->duplicate()) return r->Reset();
  auto* impl = static_cast<LogReservation*>(r->impl());
  if (impl->owner == this && !impl->finished) {
    FinishReservation(impl, /*committed=*/false);
  }
  r->Reset();
}

StatusOr<ObjectView> LogStore::Get(const std::string& ns_name, const std::string& key) {
  RPMP_RETURN_IF_ERROR(ValidateNames(ns_name, key));
  NamespacePtr ns = FindNamespace(ns_name);
  if (ns == nullptr) return KeyNotFound(ns_name, key);
  std::lock_guard<std::mutex> lock(ns->mu);
  KeyEntry* entry = ns->keys.Find(key);
  if (ns->deleted || entry == nullptr || entry->records.empty()) {
    return KeyNotFound(ns_name, key);
  }
  ObjectView view;
  view.total_length = entry->total_length;
  view.records.reserve(entry->records.size());
  const Segment* last_pinned = nullptr;
  for (const StoredRecord& rec : entry->records) {
    RecordInfo info;
    info.tag = rec.tag;
    info.length = rec.length;
    info.crc = rec.crc;
    info.pool = rec.segment->pool->index;
    info.offset = rec.payload_offset;
    info.data = rec.segment->pool->medium->base() + rec.payload_offset;
    info.commit_seq = rec.order;
    info.write_id = rec.id;
    info.access = rec.segment->access.get();
    view.records.push_back(info);
    if (rec.segment.get() != last_pinned) {
      view.pins.push_back(rec.segment);
      last_pinned = rec.segment.get();
    }
  }
  return view;
}

Status LogStore::Delete(const std::string& ns_name, const std::string& key,
                       const WriteId& id) {
  RPMP_RETURN_IF_ERROR(ValidateNames(ns_name, key));
  NamespacePtr ns = FindNamespace(ns_name);
  if (ns == nullptr) return KeyNotFound(ns_name, key);
  std::lock_guard<std::mutex> lock(ns->mu);
  if (ns->deleted) return KeyNotFound(ns_name, key);
  bool duplicate = false;
  RPMP_RETURN_IF_ERROR(CheckWriteId(ns.get(), id, WriteIdKind::kDelete, key, &duplicate));
  if (duplicate) return Status::Ok();  // the first attempt deleted it
  KeyEntry* entry = ns->keys.Find(key);
  if (entry == nullptr || entry->records.empty()) return KeyNotFound(ns_name, key);
  WriteSpec tomb_spec;
  tomb_spec.key = key;
  tomb_spec.id = id;
  uint16_t flags = id.valid() ? fmt::kRecordHasWriteId : 0;
  RPMP_ASSIGN_OR_RETURN(Placement place,
                        TakeSpace(ns.get(), fmt::RecordSize(key.size(), 0, flags),
                                  SpacePurpose::kTombstone));
  WriteRecordHeader(place, fmt::kKindTombstone, tomb_spec);
  StoredRecord tomb;
  tomb.segment = place.segment;
  tomb.header_offset = place.record_offset;
  tomb.seq = ++global_seq_;
  tomb.order = tomb.seq;
  tomb.id = id;
  tomb.kind = fmt::kKindTombstone;
  tomb.flags = flags;
  tomb.bytes = fmt::RecordSize(key.size(), 0, flags);
  StoreCommitWord(tomb, tomb.seq);  // the delete is now durable
  CountLive(tomb);
  if (id.valid()) {
    WriteOutcome o;
    o.kind = WriteIdKind::kDelete;
    o.key = key;
    o.commit_seq = tomb.seq;
    o.pool = tomb.segment->pool->index;
    o.offset = tomb.header_offset + fmt::PayloadOffsetInRecord(key.size(), flags);
    ns->write_ids.Committed(id, o);
  }
  MarkKeyDead(ns.get(), entry);
  ns->keys.Erase(key);
  MarkDead(ns.get(), tomb);  // nothing left for it to hide
  return Status::Ok();
}

WriteOutcome LogStore::FindWrite(const std::string& ns_name, const WriteId& id) {
  NamespacePtr ns = FindNamespace(ns_name);
  if (ns == nullptr || !id.valid()) return WriteOutcome();
  std::lock_guard<std::mutex> lock(ns->mu);
  if (ns->deleted) return WriteOutcome();
  return ns->write_ids.Find(id);
}

StatusOr<ListPage> LogStore::List(const std::string& ns_name, const std::string& start_after,
                                  size_t max) {
  RPMP_RETURN_IF_ERROR(ValidateNamespace(ns_name));
  ListPage page;
  NamespacePtr ns = FindNamespace(ns_name);
  if (ns == nullptr) return page;
  std::lock_guard<std::mutex> lock(ns->mu);
  if (ns->deleted) return page;
  auto it = ns->keys.UpperBound(start_after);
  for (; it != ns->keys.End() && page.keys.size() < max; ++it) {
    page.keys.push_back(StoredKey{it->first, it->second.total_length,
                                static_cast<uint32_t>(it->second.records.size())});
  }
  page.more = it != ns->keys.End();
  return page;
}

Status LogStore::DeleteNamespace(const std::string& ns_name) {
  RPMP_RETURN_IF_ERROR(ValidateNamespace(ns_name));
  // Held throughout so no namespace of the same name is born while the deletion
  // intent is recorded (recovery would delete its segments too).
  std::lock_guard<std::shared_mutex> map_lock(ns_map_mu_);
  auto it = namespaces_.find(ns_name);
  if (it == namespaces_.end()) return Status::NotFound("namespace '" + ns_name + "'");
  NamespacePtr ns = it->second;
  namespaces_.erase(it);
  std::lock_guard<std::mutex> lock(ns->mu);
  ns->deleted = true;
  if (ns->segments.empty()) return Status::NotFound("namespace '" + ns_name + "'");
  SetDeletingNamespace(ns_name);
  ReclaimNamespace(ns.get());
  SetDeletingNamespace("");
  return Status::Ok();
}

}  // namespace rpmp

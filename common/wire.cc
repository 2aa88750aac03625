// Encoding and strict decoding of wire protocol v1 frames (see wire.h).
#include "common/wire.h"

#include "common/bytes.h"

namespace rpmp::wire {
namespace {

bool ValidOp(uint8_t op) { return op >= 1 && op <= static_cast<uint8_t>(Op::kBye); }

constexpr size_t kMaxAuthField = 64;  // nonces and proofs are 32 bytes
constexpr size_t kMaxProviderName = 64;  // "verbs;ofi_rxm" and the like
bool TakesWriteId(Op op) { return op == Op::kPut || op == Op::kAppend || op == Op::kDel; }
bool TakesFence(Op op) { return TakesWriteId(op) || op == Op::kDeleteNs; }

void PutHeader(ByteWriter& w, const Header& h) {
  w.U32(kMagic);
  w.U8(kVersion);
  w.U8(static_cast<uint8_t>(h.op));
  w.U16(h.flags);
  w.U32(0);  // frame length, patched at the end
  w.U32(h.session);
  w.U64(h.request_id);
  w.U16(h.status);
  w.U16(static_cast<uint16_t>(h.session_tag & 0xFFFF));
  w.U32(static_cast<uint32_t>((h.session_tag >> 16) & 0xFFFFFFFF));
}

size_t Finish(ByteWriter& w) {
  if (!w.ok()) return 0;
  uint32_t len = static_cast<uint32_t>(w.size());
  char* p = w.data() + 8;
  for (int i = 0; i < 4; i++) p[i] = static_cast<char>(len >> (8 * i));
  return len;
}

void PutRma(ByteWriter& w, const RmaRef& r) { w.U64(r.addr); w.U64(r.key); w.U64(r.length); }
RmaRef GetRma(ByteReader& rd) {
  RmaRef r;
  r.addr = rd.U64();
  r.key = rd.U64();
  r.length = rd.U64();
  return r;
}

// Payload of put/append/write: exactly one of inline bytes or an RMA source.
void PutPayload(ByteWriter& w, const Request& r) {
  if (r.h.flags & kFlagInline) w.Blob(r.inline_data);
  if (r.h.flags & kFlagRma) PutRma(w, r.rma);
}
bool GetPayload(ByteReader& rd, Request* r) {
  bool in = r->h.flags & kFlagInline, rma = r->h.flags & kFlagRma;
  if (in == rma) return false;
  if (in) {
    r->inline_data = rd.Blob(kMaxInline);
    return rd.ok() && r->inline_data.size() == r->length;
  }
  r->rma = GetRma(rd);
  return rd.ok() && r->rma.length == r->length;
}

Status Bad(const char* what) { return Status::InvalidArgument(std::string("malformed frame: ") + what); }

}  // namespace

const char* OpName(Op op) {
  switch (op) {
    case Op::kHello: return "hello";
    case Op::kPut: return "put";
    case Op::kAppend: return "append";
    case Op::kGet: return "get";
    case Op::kGetMeta: return "get_meta";
    case Op::kDel: return "del";
    case Op::kList: return "list";
    case Op::kStat: return "stat";
    case Op::kAlloc: return "alloc";
    case Op::kFree: return "free";
    case Op::kWrite: return "write";
    case Op::kRead: return "read";
    case Op::kDeleteNs: return "delete_ns";
    case Op::kBye: return "bye";
  }
  return "unknown";
}

size_t EncodeRequest(const Request& r, char* buf, size_t cap) {
  ByteWriter w(buf, cap < kMaxFrame ? cap : kMaxFrame);
  PutHeader(w, r.h);
  switch (r.h.op) {
    case Op::kHello:
      w.Str(r.client_name); w.Blob(r.fabric_address);
      if (r.h.flags & kFlagAuth) { w.Blob(r.server_nonce); w.Blob(r.client_nonce); w.Blob(r.proof); }
      if (r.h.flags & kFlagToken) w.Str(r.token);
      break;
    case Op::kPut:
    case Op::kAppend:
      w.Str(r.ns); w.Str(r.key); w.U64(r.tag); w.U64(r.length); w.U32(r.crc);
      PutPayload(w, r);
      break;
    case Op::kGet:
      w.Str(r.ns); w.Str(r.key);
      if (r.h.flags & kFlagRma) PutRma(w, r.rma);
      break;
    case Op::kGetMeta: w.Str(r.ns); w.Str(r.key); w.U32(r.start); w.U32(r.max); break;
    case Op::kDel: w.Str(r.ns); w.Str(r.key); break;
    case Op::kList: w.Str(r.ns); w.Str(r.start_after); w.U32(r.max); break;
    case Op::kDeleteNs: w.Str(r.ns); break;
    case Op::kStat:
    case Op::kBye: break;
    case Op::kAlloc: w.U64(r.length); break;
    case Op::kFree: w.U32(r.pool); w.U64(r.offset); break;
    case Op::kWrite: w.U32(r.pool); w.U64(r.offset); w.U64(r.length); PutPayload(w, r); break;
    case Op::kRead:
      w.U32(r.pool); w.U64(r.offset); w.U64(r.length);
      if (r.h.flags & kFlagRma) PutRma(w, r.rma);
      break;
  }
  if (r.h.flags & kFlagWriteId) {
    if (!TakesWriteId(r.h.op) || !r.write_id.valid()) return 0;
    w.U64(r.write_id.writer); w.U64(r.write_id.seq);
  }
  if (r.h.flags & kFlagFence) {
    if (!TakesFence(r.h.op)) return 0;
    w.U64(r.fence_epoch); w.U64(r.fence_primary);
  }
  if (r.h.flags & kFlagTagFilter) {
    if (r.h.op != Op::kGetMeta || r.tag_filter.empty() || r.tag_filter.size() > kMaxFilterTags) return 0;
    w.U32(static_cast<uint32_t>(r.tag_filter.size()));
    for (uint64_t t : r.tag_filter) w.U64(t);
  }
  return Finish(w);
}

Status DecodeHeader(const char* buf, size_t len, Header* h) {
  if (len < kHeaderSize) return Bad("shorter than the 32-byte header");
  // Every field is read before any is judged, so a caller can still answer a frame
  // whose header names its session even when the frame is refused.
  ByteReader rd(buf, len);
  uint32_t magic = rd.U32();
  h->version = rd.U8();
  uint8_t op = rd.U8();
  h->op = static_cast<Op>(op);
  h->flags = rd.U16();
  h->frame_length = rd.U32();
  h->session = rd.U32();
  h->request_id = rd.U64();
  h->status = rd.U16();
  uint64_t tag_lo = rd.U16();
  h->session_tag = tag_lo | (static_cast<uint64_t>(rd.U32()) << 16);
  if (magic != kMagic) return Bad("bad magic");
  if (len > kMaxFrame) return Bad("longer than the 64 KiB frame limit");
  if (h->version != kVersion)
    return Status::InvalidArgument("unsupported protocol version " + std::to_string(h->version) +
                                   " (this peer speaks 1)");
  if (!ValidOp(op)) return Bad(("unknown op " + std::to_string(op)).c_str());
  if (h->frame_length != len) return Bad("frame length field does not match the bytes received");
  return Status::Ok();
}

Status DecodeRequest(const char* buf, size_t len, Request* r) {
  RPMP_RETURN_IF_ERROR(DecodeHeader(buf, len, &r->h));
  if (r->h.flags & kFlagResponse) return Bad("a response where a request was expected");
  ByteReader rd(buf + kHeaderSize, len - kHeaderSize);
  bool payload_ok = true;
  switch (r->h.op) {
    case Op::kHello:
      r->client_name = rd.Str(kMaxNamespace);
      r->fabric_address = rd.Blob(kMaxFabricAddress);
      if (r->h.flags & kFlagAuth) {
        r->server_nonce = rd.Blob(kMaxAuthField);
        r->client_nonce = rd.Blob(kMaxAuthField);
        r->proof = rd.Blob(kMaxAuthField);
      }
      if (r->h.flags & kFlagToken) {
        if (!(r->h.flags & kFlagAuth)) return Bad("a tenant token without the authentication fields");
        r->token = rd.Str(kMaxToken);
      }
      break;
    case Op::kPut:
    case Op::kAppend:
      r->ns = rd.Str(kMaxNamespace); r->key = rd.Str(kMaxKey);
      r->tag = rd.U64(); r->length = rd.U64(); r->crc = rd.U32();
      payload_ok = rd.ok() && GetPayload(rd, r);
      break;
    case Op::kGet:
      r->ns = rd.Str(kMaxNamespace); r->key = rd.Str(kMaxKey);
      if (r->h.flags & kFlagRma) r->rma = GetRma(rd);
      break;
    case Op::kGetMeta:
      r->ns = rd.Str(kMaxNamespace); r->key = rd.Str(kMaxKey);
      r->start = rd.U32(); r->max = rd.U32();
      break;
    case Op::kDel: r->ns = rd.Str(kMaxNamespace); r->key = rd.Str(kMaxKey); break;
    case Op::kList:
      r->ns = rd.Str(kMaxNamespace); r->start_after = rd.Str(kMaxKey); r->max = rd.U32();
      break;
    case Op::kDeleteNs: r->ns = rd.Str(kMaxNamespace); break;
    case Op::kStat:
    case Op::kBye: break;
    case Op::kAlloc: r->length = rd.U64(); break;
    case Op::kFree: r->pool = rd.U32(); r->offset = rd.U64(); break;
    case Op::kWrite:
      r->pool = rd.U32(); r->offset = rd.U64(); r->length = rd.U64();
      payload_ok = rd.ok() && GetPayload(rd, r);
      break;
    case Op::kRead:
      r->pool = rd.U32(); r->offset = rd.U64(); r->length = rd.U64();
      if (r->h.flags & kFlagRma) r->rma = GetRma(rd);
      break;
  }
  if (!payload_ok) return Bad("payload must be either inline or by RMA, of the stated length");
  if (r->h.flags & kFlagWriteId) {
    if (!TakesWriteId(r->h.op)) return Bad("a write id on an op that takes none");
    r->write_id.writer = rd.U64(); r->write_id.seq = rd.U64();
    if (rd.ok() && !r->write_id.valid()) return Bad("write id with a zero writer or seq");
  } else {
    r->write_id = WriteId();
  }
  if ((r->h.flags & kFlagInstallId) &&
      (!(r->h.flags & kFlagReplica) || !(r->h.flags & kFlagWriteId) || r->h.op == Op::kDel))
    return Bad("an installed write id on a frame other than a replica put or append with an id");
  if (r->h.flags & kFlagFence) {
    if (!TakesFence(r->h.op)) return Bad("a fence on an op that takes none");
    r->fence_epoch = rd.U64(); r->fence_primary = rd.U64();
  } else {
    r->fence_epoch = r->fence_primary = 0;
  }
  r->tag_filter.clear();
  if (r->h.flags & kFlagTagFilter) {
    if (r->h.op != Op::kGetMeta) return Bad("a tag filter on an op other than get_meta");
    uint32_t n = rd.U32();
    if (rd.ok() && (n == 0 || n > kMaxFilterTags))
      return Bad("a tag filter must name 1 to 4096 tags");
    for (uint32_t i = 0; i < n && rd.ok(); i++) r->tag_filter.push_back(rd.U64());
  }
  if (!rd.ok()) return Bad("body truncated or a field over its limit");
  if (rd.remaining() != 0) return Bad("trailing bytes after the body");
  return Status::Ok();
}

size_t EncodeResponse(const Response& r, char* buf, size_t cap) {
  ByteWriter w(buf, cap < kMaxFrame ? cap : kMaxFrame);
  Header h = r.h;
  h.flags |= kFlagResponse;
  PutHeader(w, h);
  w.Str(r.message.size() > kMaxMessage ? r.message.substr(0, kMaxMessage) : r.message);
  if (r.h.status != 0) return Finish(w);
  switch (r.h.op) {
    case Op::kHello:
      w.U32(r.session); w.U64(r.node_id); w.U32(r.max_inline); w.U32(r.max_inflight);
      if (r.h.flags & kFlagAuth) { w.Blob(r.challenge); w.Blob(r.server_proof); }
      if (r.h.flags & kFlagShards) {
        w.U32(static_cast<uint32_t>(r.shard_addresses.size()));
        for (const std::string& a : r.shard_addresses) w.Blob(a);
      }
      w.Str(r.provider);
      if (r.h.flags & kFlagBoot) w.U64(r.boot);
      break;
    case Op::kGet:
    case Op::kRead:
      w.U8(static_cast<uint8_t>(r.outcome)); w.U64(r.total_length); w.U32(r.record_count);
      w.U32(static_cast<uint32_t>(r.records.size()));  // (length, crc) per record, to verify
      for (const RecordMeta& m : r.records) { w.U64(m.length); w.U32(m.crc); }
      if (r.outcome == GetOutcome::kInline) w.Blob(r.inline_data);
      break;
    case Op::kGetMeta:
      w.U64(r.total_length); w.U32(r.record_count); w.U8(r.more ? 1 : 0);
      w.U32(static_cast<uint32_t>(r.records.size()));
      for (const RecordMeta& m : r.records) {
        w.U64(m.tag); w.U64(m.length); w.U32(m.crc); w.U32(m.pool); w.U64(m.rma_addr); w.U64(m.rma_key);
      }
      if (r.h.flags & kFlagTagFilter) {
        for (const RecordMeta& m : r.records) w.U32(m.index);
        w.U32(r.next_start);
      }
      break;
    case Op::kList:
      w.U8(r.more ? 1 : 0); w.U32(static_cast<uint32_t>(r.keys.size()));
      for (const KeyEntry& k : r.keys) { w.Str(k.key); w.U64(k.total_length); w.U32(k.records); }
      break;
    case Op::kStat:
      w.U64(r.node_id); w.U64(r.namespaces); w.U64(r.key_count); w.U64(r.record_total);
      w.U64(r.live_bytes); w.U32(static_cast<uint32_t>(r.pools.size()));
      for (const PoolEntry& p : r.pools) {
        w.Str(p.path); w.Str(p.medium); w.U64(p.capacity); w.U64(p.used); w.U64(p.free);
      }
      if (r.h.flags & kFlagStatCompaction) {
        const CompactionEntry& c = r.compaction;
        w.U64(c.dead_bytes); w.U64(c.segments); w.U64(c.records); w.U64(c.bytes);
        w.U64(c.steps); w.U64(c.last_run_unix_ms);
        w.U8(static_cast<uint8_t>((c.enabled ? 1 : 0) | (c.running ? 2 : 0)));
      }
      break;
    case Op::kAlloc:
      w.U32(r.pool); w.U64(r.offset); PutRma(w, r.rma);
      break;
    default: break;
  }
  return Finish(w);
}

Status DecodeResponse(const char* buf, size_t len, Response* r) {
  Status hs = DecodeHeader(buf, len, &r->h);
  // An error reply may echo an op this peer does not know (it answers a frame that
  // named one); anything else wrong with the header is fatal.
  bool unknown_op_error = !hs.ok() && len >= kHeaderSize && ByteReader(buf, 4).U32() == kMagic &&
                          r->h.status != 0 && !ValidOp(static_cast<uint8_t>(r->h.op)) &&
                          r->h.version == kVersion && r->h.frame_length == len && len <= kMaxFrame;
  if (!hs.ok() && !unknown_op_error) return hs;
  if (!(r->h.flags & kFlagResponse)) return Bad("a request where a response was expected");
  ByteReader rd(buf + kHeaderSize, len - kHeaderSize);
  r->message = std::string(rd.Str(kMaxMessage));
  if (r->h.status == 0) {
    switch (r->h.op) {
      case Op::kHello:
        r->session = rd.U32(); r->node_id = rd.U64(); r->max_inline = rd.U32();
        r->max_inflight = rd.U32();
        if (r->h.flags & kFlagAuth) {
          r->challenge = std::string(rd.Blob(kMaxAuthField));
          r->server_proof = std::string(rd.Blob(kMaxAuthField));
        }
        if (r->h.flags & kFlagShards) {
          uint32_t n = rd.U32();
          if (n == 0 || n > kMaxShards) rd.Fail();
          for (uint32_t i = 0; i < n && rd.ok(); i++)
            r->shard_addresses.emplace_back(rd.Blob(kMaxFabricAddress));
        }
        if (rd.remaining() > 0) r->provider = std::string(rd.Str(kMaxProviderName));
        if (r->h.flags & kFlagBoot) r->boot = rd.U64();
        break;
      case Op::kGet:
      case Op::kRead: {
        uint8_t o = rd.U8();
        if (o > static_cast<uint8_t>(GetOutcome::kNeedsBuffer)) rd.Fail();
        r->outcome = static_cast<GetOutcome>(o);
        r->total_length = rd.U64(); r->record_count = rd.U32();
        uint32_t n = rd.U32();
        if (n > kMaxPageItems) rd.Fail();
        for (uint32_t i = 0; i < n && rd.ok(); i++) {
          RecordMeta m;
          m.length = rd.U64(); m.crc = rd.U32();
          r->records.push_back(m);
        }
        if (r->outcome == GetOutcome::kInline) r->inline_data = rd.Blob(kMaxFrame);
        break;
      }
      case Op::kGetMeta: {
        r->total_length = rd.U64(); r->record_count = rd.U32(); r->more = rd.U8() != 0;
        uint32_t n = rd.U32();
        if (n > kMaxPageItems) rd.Fail();
        for (uint32_t i = 0; i < n && rd.ok(); i++) {
          RecordMeta m;
          m.tag = rd.U64(); m.length = rd.U64(); m.crc = rd.U32(); m.pool = rd.U32();
          m.rma_addr = rd.U64(); m.rma_key = rd.U64();
          r->records.push_back(m);
        }
        if (r->h.flags & kFlagTagFilter) {
          for (RecordMeta& m : r->records) m.index = rd.U32();
          r->next_start = rd.U32();
        } else {
          r->next_start = 0;
        }
        break;
      }
      case Op::kList: {
        r->more = rd.U8() != 0;
        uint32_t n = rd.U32();
        if (n > kMaxPageItems) rd.Fail();
        for (uint32_t i = 0; i < n && rd.ok(); i++) {
          KeyEntry k;
          k.key = std::string(rd.Str(kMaxKey)); k.total_length = rd.U64(); k.records = rd.U32();
          r->keys.push_back(std::move(k));
        }
        break;
      }
      case Op::kStat: {
        r->node_id = rd.U64(); r->namespaces = rd.U64(); r->key_count = rd.U64();
        r->record_total = rd.U64(); r->live_bytes = rd.U64();
        uint32_t n = rd.U32();
        if (n > 64) rd.Fail();
        for (uint32_t i = 0; i < n && rd.ok(); i++) {
          PoolEntry p;
          p.path = std::string(rd.Str(4096)); p.medium = std::string(rd.Str(256));
          p.capacity = rd.U64(); p.used = rd.U64(); p.free = rd.U64();
          r->pools.push_back(std::move(p));
        }
        if (r->h.flags & kFlagStatCompaction) {
          CompactionEntry& c = r->compaction;
          c.dead_bytes = rd.U64(); c.segments = rd.U64(); c.records = rd.U64(); c.bytes = rd.U64();
          c.steps = rd.U64(); c.last_run_unix_ms = rd.U64();
          uint8_t bits = rd.U8();
          c.enabled = bits & 1; c.running = (bits & 2) != 0;
        }
        break;
      }
      case Op::kAlloc:
        r->pool = rd.U32(); r->offset = rd.U64(); r->rma = GetRma(rd);
        break;
      default: break;
    }
  }
  if (!rd.ok()) return Bad("response body truncated or a field over its limit");
  if (rd.remaining() != 0) return Bad("trailing bytes after the response body");
  return Status::Ok();
}

}  // namespace rpmp::wire

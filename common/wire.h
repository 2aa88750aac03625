// The RPMP data-plane wire protocol, version 1 (docs/wire-protocol.md is its spec).
//
// Every message is one frame: a fixed 32-byte little-endian header followed by an
// op-specific body. Requests and responses share the header; a response echoes the
// request id and carries a status. Bulk payloads travel by RMA (the frame names the
// peer's registered buffer) or inline in the body when small.
//
// DecodeRequest/DecodeResponse accept any bytes: anything malformed, truncated,
// oversized or of an unknown op/version yields InvalidArgument, never a crash. The
// decoded structs hold string_views into the frame buffer: they live as long as it.
// All functions are thread-safe (no shared state).
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "common/status.h"
#include "common/write_id.h"

namespace rpmp::wire {

constexpr uint32_t kMagic = 0x504D5052;  // bytes "RPMP"
constexpr uint8_t kVersion = 1;
constexpr size_t kHeaderSize = 32;
constexpr size_t kMaxFrame = 64 * 1024;      // receive buffers are this large
constexpr size_t kMaxInline = 16 * 1024;     // largest payload carried inside a frame
constexpr size_t kMaxNamespace = 255;
constexpr size_t kMaxKey = 1024;
constexpr size_t kMaxFabricAddress = 256;
constexpr size_t kMaxMessage = 1024;         // error text in responses
constexpr uint32_t kMaxPageItems = 1000;     // list / meta page size bound

enum class Op : uint8_t {
  kHello = 1, kPut = 2, kAppend = 3, kGet = 4, kGetMeta = 5, kDel = 6, kList = 7,
  kStat = 8, kAlloc = 9, kFree = 10, kWrite = 11, kRead = 12, kDeleteNs = 13, kBye = 14,
};
const char* OpName(Op op);

enum HeaderFlags : uint16_t {
  kFlagResponse = 1,  // set on every response
  kFlagInline = 2,    // the payload is inside the body
  kFlagRma = 4,       // the frame names an RMA buffer of the sender
  // Cluster mode: a put/append/del/deletens sent by a namespace's primary to another
  // member (replication, repair). The receiver stores it as is and does not replicate
  // it further. A v1 peer that does not know the flag ignores it (a plain write).
  // On a list/get_meta: the primary's repair reading a member's copy, which the member
  // serves whether or not it is in sync (client reads are fenced: docs/cluster.md
  // "Read fencing"). Like every replica frame, it needs the cluster secret.
  kFlagReplica = 8,
  // HELLO only: the challenge-response of docs/security.md. On a request the body ends
  // with blob server_nonce (empty in the first HELLO), blob client_nonce, blob proof
  // (empty in the first HELLO); on a response with blob challenge, blob server_proof.
  kFlagAuth = 64,
  // The body of a put/append/del ends with the write id `u64 writer, u64 seq` (after
  // every other field); both are nonzero. Any other op with it is malformed.
  kFlagWriteId = 16,
  // Cluster mode, with kFlagReplica on put/append/del/deletens: the body ends (after
  // the write id, if any) with the sender's fence `u64 epoch, u64 primary`: the
  // namespace epoch it acts in and its node id. The member refuses frames of an older
  // epoch or from a node that is not that epoch's primary (docs/cluster.md).
  kFlagFence = 32,
  // GET_META only: the request body ends (after start and max) with `u32 n, n x u64 tag`
  // (1..kMaxFilterTags tags): only records with one of these tags are listed, from
  // record index `start` on. The response then ends with `n x u32 index` (each listed
  // record's place in the whole list) and `u32 next_start`, the record index the next
  // page starts from (docs/wire-protocol.md).
  kFlagTagFilter = 256,
  // STAT only: on a request, asks for the compaction block; on a response, the body
  // ends with it (u64 dead_bytes, compacted_segments, compacted_records,
  // compacted_bytes, compaction_steps, compaction_last_run_unix_ms, u8 bits: 1 =
  // compaction enabled, 2 = running). A server that predates it ignores the request
  // flag and answers without the block; a client reads the block only when the
  // response carries the flag.
  kFlagStatCompaction = 128,
  // Responses only: the request was refused, not run, because the session it names
  // ended (closed, expired, evicted, dropped) or is unknown to the server (restarted).
  // Status is Unavailable and the message gives the reason. The client opens a new
  // session (same credentials) and may send the request again (docs/security.md,
  // "How a session ends"). A client that predates the flag sees a plain Unavailable.
  kFlagSessionEnded = 512,
  // HELLO only (docs/sharding.md): on a request, the client can spread its calls over
  // the server's data shards; on a response, the body ends (after the auth fields) with
  // `u32 n, n x blob address`: the fabric addresses of the server's data shards, shard 0
  // (the one asked) first, 1..kMaxShards. A server that predates it ignores the request
  // flag; a client reads the list only when the response carries the flag. Each shard
  // is then greeted with a HELLO of its own (its own proof, session and tag).
  kFlagShards = 1024,
  // HELLO requests only, with kFlagAuth: the body ends (after the proof) with `str
  // token`, the public part of a tenant token ("v1.PREFIX.APP.EXPIRY", at most
  // kMaxToken bytes; docs/security.md "Tenants"). The proof's key is then the token's
  // MAC instead of the cluster secret, and the session may act only on namespaces
  // under PREFIX. A server that predates it refuses the HELLO as malformed.
  kFlagToken = 2048,
  // Cluster mode, replica put/append with kFlagWriteId only (repair's copies): the
  // member stores the record even when it knows the id already, and the id then names
  // this record; it is never refused as too old. A repair that rewrites a diverged key
  // sends its records so, so that the member can deduplicate a client's retry of any
  // of them once it serves as primary (docs/append-path.md). No body bytes of its own.
  kFlagInstallId = 4096,
  // HELLO requests: asks for the server's boot id (random, drawn at each process start,
  // never 0). The response then carries the flag and its body ends (after the provider)
  // with `u64 boot`. A server that predates it ignores the flag and sends no boot id;
  // a client reads it only when the response carries the flag.
  kFlagBoot = 8192,
  // HELLO requests, with kFlagBoot: a probe. It opens nothing (no challenge, no
  // session); the server answers with its node id and boot id after the same address
  // checks and rate limits as any HELLO. A client whose calls wait long asks the server
  // at their address whether it is still the process they were sent to
  // (link/connection.cc, ExpireCalls). Only sent to servers that gave a boot id.
  kFlagProbe = 16384,
};

constexpr size_t kMaxToken = 1024;

constexpr uint32_t kMaxShards = 64;

constexpr uint32_t kMaxFilterTags = 4096;  // 32 KiB of tags: fits a frame with any key

constexpr uint64_t kMaxTag = (1ull << 48) - 1;

// A registered buffer on the frame's sender, for the receiver's RMA.
struct RmaRef {
  uint64_t addr = 0;    // in the provider's form (virtual address or offset)
  uint64_t key = 0;
  uint64_t length = 0;  // bytes available / to transfer
};

struct Header {
  uint8_t version = kVersion;
  Op op = Op::kHello;
  uint16_t flags = 0;
  uint32_t frame_length = 0;
  uint32_t session = 0;
  uint64_t request_id = 0;
  uint16_t status = 0;
  // The session's random 48-bit tag (header bytes 26..31, formerly reserved): given by
  // the HELLO reply, carried by every later request of the session and echoed in
  // replies. 0 = none (HELLO, and peers that predate it; docs/wire-protocol.md).
  uint64_t session_tag = 0;
};

// One request; which fields an op uses is listed in docs/wire-protocol.md.
struct Request {
  Header h;
  std::string_view fabric_address;  // hello
  std::string_view client_name;     // hello
  std::string_view server_nonce, client_nonce, proof;  // hello with kFlagAuth
  std::string_view token;           // hello with kFlagToken: a tenant token's public part
  std::string_view ns, key;         // put append get meta del list deletens
  uint64_t tag = 0;                 // put append
  uint64_t length = 0;              // put append write read alloc(size)
  uint32_t crc = 0;                 // put append
  RmaRef rma;                       // with kFlagRma: source (put append write) or target (get read)
  std::string_view inline_data;     // with kFlagInline (put append write)
  std::string_view start_after;     // list
  uint32_t start = 0;               // meta: first record index
  uint32_t max = 0;                 // list meta: page size
  uint32_t pool = 0;                // free write read
  uint64_t offset = 0;              // free write read
  WriteId write_id;                 // with kFlagWriteId (put append del)
  uint64_t fence_epoch = 0;         // with kFlagFence (replica put append del deletens)
  uint64_t fence_primary = 0;
  std::vector<uint64_t> tag_filter; // with kFlagTagFilter (meta)
};

struct RecordMeta {
  uint64_t tag = 0, length = 0;
  uint32_t crc = 0, pool = 0;
  uint64_t rma_addr = 0, rma_key = 0;
  uint32_t index = 0;  // GET_META with kFlagTagFilter: the record's place in the whole list
};

struct KeyEntry {
  std::string key;
  uint64_t total_length = 0;
  uint32_t records = 0;
};

struct PoolEntry {
  std::string path, medium;
  uint64_t capacity = 0, used = 0, free = 0;
};

struct CompactionEntry {
  uint64_t dead_bytes = 0, segments = 0, records = 0, bytes = 0, steps = 0, last_run_unix_ms = 0;
  bool enabled = false, running = false;
};

enum class GetOutcome : uint8_t { kInline = 0, kWrittenToRma = 1, kNeedsBuffer = 2 };

// One response; fields by op as in docs/wire-protocol.md.
struct Response {
  Header h;
  std::string message;               // error text when status != 0
  // hello
  uint32_t session = 0, max_inline = 0, max_inflight = 0;
  uint64_t node_id = 0;
  std::string challenge, server_proof;  // hello with kFlagAuth
  std::vector<std::string> shard_addresses;  // hello with kFlagShards
  // hello: the provider the server serves ("net", "tcp;ofi_rxm"); a trailing field that
  // older servers do not send (then empty) and older clients do not read.
  std::string provider;
  uint64_t boot = 0;  // hello with kFlagBoot: the server process's boot id
  // get / read
  GetOutcome outcome = GetOutcome::kInline;
  uint64_t total_length = 0;
  uint32_t record_count = 0;
  std::string_view inline_data;
  // meta
  std::vector<RecordMeta> records;
  uint32_t next_start = 0;           // meta with kFlagTagFilter: where the next page starts
  // list
  std::vector<KeyEntry> keys;
  bool more = false;
  // stat
  uint64_t namespaces = 0, key_count = 0, record_total = 0, live_bytes = 0;
  std::vector<PoolEntry> pools;
  CompactionEntry compaction;  // with kFlagStatCompaction
  // alloc
  uint32_t pool = 0;
  uint64_t offset = 0;
  RmaRef rma;
};

// Encodes into buf (cap bytes); returns the frame length, or 0 when it does not fit.
size_t EncodeRequest(const Request& r, char* buf, size_t cap);
size_t EncodeResponse(const Response& r, char* buf, size_t cap);

// Reads only the header (to route a frame); InvalidArgument when malformed.
Status DecodeHeader(const char* buf, size_t len, Header* h);
Status DecodeRequest(const char* buf, size_t len, Request* r);
Status DecodeResponse(const char* buf, size_t len, Response* r);

}  // namespace rpmp::wire

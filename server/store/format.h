// On-media format of an RPMP store pool: the root object, segment header, record
// header and raw-allocation header, byte for byte (docs/storage-format.md describes
// the same layout). Only code under server/store/ may include this; nothing here
// allocates or locks. All integers are little-endian (the host order on x86-64).
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <string>

#include "common/crc32c.h"

namespace rpmp {
namespace store_format {

constexpr char kLayoutName[] = "rpmp-store-v1";
constexpr uint32_t kFormatVersion = 1;

// PMDK object type numbers of the store's allocations.
constexpr uint32_t kSegmentType = 1;
constexpr uint32_t kRawType = 2;
constexpr uint32_t kReserveType = 3;

constexpr uint64_t kAlign = 64;
inline uint64_t AlignUp(uint64_t n) { return (n + kAlign - 1) & ~(kAlign - 1); }

// The pool's root object (pmemobj_root), kRootSize bytes, zero when the pool is new.
constexpr uint64_t kRootMagic = 0x31544f4f52504d52ull;  // "RMPROOT1"
constexpr size_t kRootSize = 512;
struct Root {
  uint64_t magic;           // kRootMagic once initialized
  uint32_t version;         // kFormatVersion
  uint32_t pool_index;      // position of this pool in the store's pool list
  uint64_t node_id;         // random, nonzero, same in every pool of one node
  uint64_t reserved[5];     // zero
  // Namespace-deletion intent (used in pool 0 only): while nonzero length, the named
  // namespace is being deleted and recovery finishes the job.
  uint32_t deleting_ns_length;
  uint32_t reserved2;
  char deleting_ns[256];
};
static_assert(sizeof(Root) <= kRootSize, "root too large");

// Segment header: the first kSegmentHeaderSize bytes of every segment object. Written
// (and persisted) by the allocation constructor, so a segment object never exists
// without a complete header.
constexpr uint64_t kSegmentMagic = 0x31474553504d5052ull;  // "RPMPSEG1"
constexpr uint64_t kSegmentDeleted = 0x444554454c4544ull;  // "DELETED"
constexpr uint64_t kSegmentHeaderSize = 384;
struct SegmentHeader {
  uint64_t magic;           // 0: kSegmentMagic
  uint64_t epoch;           // 8: random per allocation; every record repeats it
  uint64_t sequence;        // 16: store-wide segment number, increasing
  uint64_t size;            // 24: bytes of the segment object, header included
  uint64_t state;           // 32: 0 = live, kSegmentDeleted = namespace deleted
  uint16_t ns_length;       // 40
  uint16_t flags;           // 42: kSegmentAlignedRecords; other bits zero
  uint32_t header_crc;      // 44: CRC-32C of bytes 0..31, 40..43 and the name
  uint64_t reserved1[2];    // 48
  char ns[256];             // 64: namespace name (ns_length bytes used)
  uint64_t reserved2[8];    // 320..383
};
static_assert(sizeof(SegmentHeader) == kSegmentHeaderSize, "segment header size");

// Segment flags. kSegmentAlignedRecords: records start at the first 64-byte aligned
// pool offset at or after the header's end (PMDK places objects at 16 mod 64, so a
// fixed start of 384 would put every record header across two cache lines). Set on
// every segment this build allocates; segments of older builds start at 384.
constexpr uint16_t kSegmentAlignedRecords = 1;
constexpr uint16_t kKnownSegmentFlags = kSegmentAlignedRecords;
// Bytes a segment object needs beyond header and records for that alignment.
constexpr uint64_t kSegmentAlignSlack = kAlign;

// Offset of the first record inside a segment object at pool offset `segment_offset`.
inline uint64_t FirstRecordOffset(uint64_t segment_offset, uint16_t flags) {
  if ((flags & kSegmentAlignedRecords) == 0) return kSegmentHeaderSize;
  return AlignUp(segment_offset + kSegmentHeaderSize) - segment_offset;
}

inline uint32_t SegmentHeaderCrc(const SegmentHeader& h) {
  uint32_t c = Crc32c(&h, 32);
  c = Crc32c(&h.ns_length, 4, c);
  return Crc32c(h.ns, h.ns_length < sizeof(h.ns) ? h.ns_length : sizeof(h.ns), c);
}

// Record header: 64 bytes, then the key padded to 64, then the payload padded to 64.
constexpr uint32_t kRecordMagic = 0x43455252u;  // "RREC"
constexpr uint8_t kRecordVersion = 1;
constexpr uint64_t kRecordHeaderSize = 64;
constexpr uint64_t kDeadBit = 1ull << 63;
constexpr uint64_t kMaxPayloadLength = 1ull << 48;  // keeps size arithmetic exact
enum RecordKind : uint8_t { kKindPut = 1, kKindAppend = 2, kKindTombstone = 3 };

struct RecordHeader {
  uint32_t magic;           // 0: kRecordMagic
  uint8_t version;          // 4: kRecordVersion
  uint8_t kind;             // 5: RecordKind
  uint16_t flags;           // 6: kRecordHasWriteId; other bits zero
  uint64_t segment_epoch;   // 8: epoch of the segment it was written into
  uint64_t tag;             // 16
  uint64_t payload_length;  // 24
  uint32_t key_length;      // 32
  uint32_t payload_crc;     // 36: CRC-32C of the payload, as the writer gave it
  uint32_t header_crc;      // 40: CRC-32C of bytes 0..39
  uint32_t reserved1;       // 44
  uint64_t commit;          // 48: 0 = uncommitted; else seq, top bit = dead
  uint64_t origin_seq;      // 56: with kRecordMoved, the order seq of the original
};
static_assert(sizeof(RecordHeader) == kRecordHeaderSize, "record header size");
static_assert(offsetof(RecordHeader, commit) % 8 == 0, "commit word must be 8-aligned");

// Record flags. With kRecordHasWriteId the key area holds the key, then the 16-byte
// write id (u64 writer, u64 seq) of the mutation that wrote the record.
constexpr uint16_t kRecordHasWriteId = 1;
// kRecordMoved: a copy made by compaction; it takes the original's place in its key's
// order (origin_seq), and replaces the original (same origin = the same record).
constexpr uint16_t kRecordMoved = 2;
constexpr uint16_t kKnownRecordFlags = kRecordHasWriteId | kRecordMoved;
constexpr uint64_t kWriteIdSize = 16;

inline uint32_t RecordHeaderCrc(const RecordHeader& h) { return Crc32c(&h, 40); }
inline uint64_t KeyAreaSize(uint64_t key_length, uint16_t flags) {
  return AlignUp(key_length + ((flags & kRecordHasWriteId) ? kWriteIdSize : 0));
}
inline uint64_t PayloadOffsetInRecord(uint64_t key_length, uint16_t flags = 0) {
  return kRecordHeaderSize + KeyAreaSize(key_length, flags);
}
inline uint64_t RecordSize(uint64_t key_length, uint64_t payload_length, uint16_t flags = 0) {
  return PayloadOffsetInRecord(key_length, flags) + AlignUp(payload_length);
}

// Raw allocation header: the first kRawHeaderSize bytes of a raw object.
constexpr uint64_t kRawMagic = 0x31574152504d5052ull;  // "RPMPRAW1"
constexpr uint64_t kRawHeaderSize = 64;
struct RawHeader {
  uint64_t magic;
  uint64_t size;            // bytes the caller asked for
  uint64_t reserved[6];
};
static_assert(sizeof(RawHeader) == kRawHeaderSize, "raw header size");

}  // namespace store_format
}  // namespace rpmp

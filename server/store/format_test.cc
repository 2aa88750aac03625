// Unit tests of the on-media record and segment encoding (format.h): sizes, alignment,
// field offsets fixed by docs/storage-format.md, and that header checksums catch damage.
#include "server/store/format.h"

#include <catch2/catch.hpp>
#include <cstddef>

namespace rpmp::store_format {
namespace {

TEST_CASE("record layout: 64-byte header, key and payload each padded to 64") {
  CHECK(offsetof(RecordHeader, tag) == 16);
  CHECK(offsetof(RecordHeader, payload_length) == 24);
  CHECK(offsetof(RecordHeader, header_crc) == 40);
  CHECK(offsetof(RecordHeader, commit) == 48);
  CHECK(PayloadOffsetInRecord(0) == 64);
  CHECK(PayloadOffsetInRecord(1) == 128);
  CHECK(PayloadOffsetInRecord(64) == 128);
  CHECK(RecordSize(3, 0) == 128);
  CHECK(RecordSize(3, 1) == 192);
  CHECK(RecordSize(1024, 1 << 20) == 64 + 1024 + (1 << 20));
  CHECK(RecordSize(5, 100) % kAlign == 0);
  CHECK(offsetof(RecordHeader, flags) == 6);
}

TEST_CASE("records start on a 64-byte line in segments with the aligned flag") {
  CHECK(FirstRecordOffset(4096, kSegmentAlignedRecords) == 384);
  CHECK(FirstRecordOffset(4096 + 16, kSegmentAlignedRecords) == 384 + 48);  // PMDK's 16 mod 64
  CHECK((4096 + 16 + FirstRecordOffset(4096 + 16, kSegmentAlignedRecords)) % 64 == 0);
  CHECK(FirstRecordOffset(4096 + 16, 0) == 384);  // segments of older builds
  CHECK(offsetof(SegmentHeader, flags) == 42);
}

TEST_CASE("a record with a write id keeps the id after the key, inside the padded key area") {
  CHECK(PayloadOffsetInRecord(1, kRecordHasWriteId) == 128);   // 1 + 16 fits in 64
  CHECK(PayloadOffsetInRecord(48, kRecordHasWriteId) == 128);  // 48 + 16 = 64
  CHECK(PayloadOffsetInRecord(49, kRecordHasWriteId) == 192);
  CHECK(RecordSize(3, 1, kRecordHasWriteId) == 192);
  CHECK(RecordSize(3, 1, 0) == RecordSize(3, 1));
}

TEST_CASE("the record header checksum covers every field before it and catches any flipped bit") {
  RecordHeader h{};
  h.magic = kRecordMagic;
  h.version = kRecordVersion;
  h.kind = kKindAppend;
  h.segment_epoch = 0x1234;
  h.tag = 99;
  h.payload_length = 4096;
  h.key_length = 3;
  h.payload_crc = 0xABCD;
  h.header_crc = RecordHeaderCrc(h);
  const uint32_t good = h.header_crc;
  unsigned char* bytes = reinterpret_cast<unsigned char*>(&h);
  for (size_t byte = 0; byte < 40; byte++) {
    for (int bit = 0; bit < 8; bit++) {
      bytes[byte] ^= static_cast<unsigned char>(1 << bit);
      CHECK(RecordHeaderCrc(h) != good);
      bytes[byte] ^= static_cast<unsigned char>(1 << bit);
    }
  }
  h.commit = 7 | kDeadBit;  // the commit word changes after the header: not covered
  CHECK(RecordHeaderCrc(h) == good);
}

TEST_CASE("the segment header checksum covers the namespace name") {
  SegmentHeader s{};
  s.magic = kSegmentMagic;
  s.epoch = 42;
  s.size = 64 << 20;
  s.ns_length = 5;
  std::memcpy(s.ns, "spark", 5);
  uint32_t crc = SegmentHeaderCrc(s);
  s.ns[4] = 'x';
  CHECK(SegmentHeaderCrc(s) != crc);
  s.ns[4] = 'k';
  s.ns[10] = 'z';  // beyond ns_length: not part of the name
  CHECK(SegmentHeaderCrc(s) == crc);
}

}  // namespace
}  // namespace rpmp::store_format

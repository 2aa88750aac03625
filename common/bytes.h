// ByteWriter / ByteReader: bounds-checked little-endian encoding used by the wire
// protocol. The reader never reads past its buffer: every accessor reports failure
// through ok() instead, so a decoder checks once at the end. Not thread-safe; cheap
// to create on the stack per frame.
#pragma once

#include <cstdint>
#include <cstring>
#include <string>
#include <string_view>

namespace rpmp {

class ByteWriter {
 public:
  ByteWriter(char* buf, size_t cap) : buf_(buf), cap_(cap) {}

  void U8(uint8_t v) { Put(&v, 1); }
  void U16(uint16_t v) { PutLe(v); }
  void U32(uint32_t v) { PutLe(v); }
  void U64(uint64_t v) { PutLe(v); }
  // Length-prefixed (u16) short string: namespaces, keys, paths.
  void Str(std::string_view s) {
    if (s.size() > 0xFFFF) { overflow_ = true; return; }
    U16(static_cast<uint16_t>(s.size()));
    Put(s.data(), s.size());
  }
  // Length-prefixed (u32) blob.
  void Blob(std::string_view s) {
    U32(static_cast<uint32_t>(s.size()));
    Put(s.data(), s.size());
  }
  void Put(const void* p, size_t n) {
    if (overflow_ || n > cap_ - len_) { overflow_ = true; return; }
    if (n > 0) std::memcpy(buf_ + len_, p, n);
    len_ += n;
  }
  size_t size() const { return len_; }
  bool ok() const { return !overflow_; }
  char* data() { return buf_; }

 private:
  template <typename T>
  void PutLe(T v) {
    unsigned char b[sizeof(T)];
    for (size_t i = 0; i < sizeof(T); i++) b[i] = static_cast<unsigned char>(v >> (8 * i));
    Put(b, sizeof(T));
  }
  char* buf_;
  size_t cap_;
  size_t len_ = 0;
  bool overflow_ = false;
};

class ByteReader {
 public:
  ByteReader(const char* buf, size_t len) : buf_(buf), len_(len) {}

  uint8_t U8() { return GetLe<uint8_t>(); }
  uint16_t U16() { return GetLe<uint16_t>(); }
  uint32_t U32() { return GetLe<uint32_t>(); }
  uint64_t U64() { return GetLe<uint64_t>(); }
  // A u16-prefixed string no longer than `max`; longer ones fail the reader.
  std::string_view Str(size_t max) {
    uint16_t n = U16();
    if (n > max) { bad_ = true; return {}; }
    return Take(n);
  }
  // A u32-prefixed blob no longer than `max`.
  std::string_view Blob(size_t max) {
    uint32_t n = U32();
    if (n > max) { bad_ = true; return {}; }
    return Take(n);
  }
  std::string_view Take(size_t n) {
    if (bad_ || n > len_ - pos_) { bad_ = true; return {}; }
    std::string_view v(buf_ + pos_, n);
    pos_ += n;
    return v;
  }
  bool ok() const { return !bad_; }
  void Fail() { bad_ = true; }
  size_t remaining() const { return bad_ ? 0 : len_ - pos_; }

 private:
  template <typename T>
  T GetLe() {
    if (bad_ || sizeof(T) > len_ - pos_) { bad_ = true; return 0; }
    T v = 0;
    for (size_t i = 0; i < sizeof(T); i++)
      v |= static_cast<T>(static_cast<unsigned char>(buf_[pos_ + i])) << (8 * i);
    pos_ += sizeof(T);
    return v;
  }
  const char* buf_;
  size_t len_;
  size_t pos_ = 0;
  bool bad_ = false;
};

}  // namespace rpmp

// ForwardingMedium: a Medium that passes every call to another one, for test media that
// change one behaviour (FaultMedium fails allocations) or only the ownership
// (BorrowedMedium in store_test_util.h). Tests only. Thread-safe as the inner medium is.
#pragma once

#include <string>
#include <vector>

#include "server/store/medium.h"

namespace rpmp {

class ForwardingMedium : public Medium {
 public:
  explicit ForwardingMedium(Medium* inner) : inner_(inner) {}

  const std::string& path() const override { return inner_->path(); }
  const std::string& promise() const override { return inner_->promise(); }
  char* base() const override { return inner_->base(); }
  uint64_t capacity() const override { return inner_->capacity(); }
  uint64_t allocation_overhead() const override { return inner_->allocation_overhead(); }
  StatusOr<uint64_t> Allocate(uint32_t type, uint64_t size, const void* header,
                              uint64_t header_len) override {
    return inner_->Allocate(type, size, header, header_len);
  }
  void Free(uint64_t offset) override { inner_->Free(offset); }
  std::vector<uint64_t> ObjectsOfType(uint32_t type) override {
    return inner_->ObjectsOfType(type);
  }
  void Persist(const void* p, uint64_t len) override { inner_->Persist(p, len); }
  char* root() const override { return inner_->root(); }

 private:
  Medium* inner_;
};

}  // namespace rpmp

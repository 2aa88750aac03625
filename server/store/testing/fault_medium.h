// FaultMedium: wraps another Medium and fails allocations while a switch is on, to
// test NoSpace handling. Tests only. Thread-safe as the wrapped medium is.
#pragma once

#include <atomic>
#include <memory>

#include "server/store/medium.h"

namespace rpmp {

class FaultMedium : public Medium {
 public:
  explicit FaultMedium(std::unique_ptr<Medium> inner) : inner_(std::move(inner)) {}

  // While on, every Allocate returns NoSpace.
  void set_fail_allocations(bool on) { fail_allocations_ = on; }
  uint64_t failed_allocations() const { return failed_; }

  const std::string& path() const override { return inner_->path(); }
  const std::string& promise() const override { return inner_->promise(); }
  char* base() const override { return inner_->base(); }
  uint64_t capacity() const override { return inner_->capacity(); }
  uint64_t allocation_overhead() const override { return inner_->allocation_overhead(); }
  StatusOr<uint64_t> Allocate(uint32_t type, uint64_t size, const void* header,
                              uint64_t header_len) override {
    if (fail_allocations_) {
      failed_++;
      return Status::NoSpace("injected allocation failure");
    }
    return inner_->Allocate(type, size, header, header_len);
  }
  void Free(uint64_t offset) override { inner_->Free(offset); }
  std::vector<uint64_t> ObjectsOfType(uint32_t type) override {
    return inner_->ObjectsOfType(type);
  }
  void Persist(const void* p, uint64_t len) override { inner_->Persist(p, len); }
  char* root() const override { return inner_->root(); }

 private:
  std::unique_ptr<Medium> inner_;
  std::atomic<bool> fail_allocations_{false};
  std::atomic<uint64_t> failed_{0};
};

}  // namespace rpmp

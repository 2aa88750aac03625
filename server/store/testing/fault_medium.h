// FaultMedium: wraps another Medium and fails allocations while a switch is on, to
// test NoSpace handling. Tests only. Thread-safe as the wrapped medium is.
#pragma once

#include <atomic>
#include <memory>

#include "server/store/testing/forwarding_medium.h"

namespace rpmp {

class FaultMedium : public ForwardingMedium {
 public:
  explicit FaultMedium(std::unique_ptr<Medium> inner)
      : ForwardingMedium(inner.get()), owned_(std::move(inner)) {}

  // While on, every Allocate returns NoSpace.
  void set_fail_allocations(bool on) { fail_allocations_ = on; }
  uint64_t failed_allocations() const { return failed_; }

  StatusOr<uint64_t> Allocate(uint32_t type, uint64_t size, const void* header,
                              uint64_t header_len) override {
    if (fail_allocations_) {
      failed_++;
      return Status::NoSpace("injected allocation failure");
    }
    return ForwardingMedium::Allocate(type, size, header, header_len);
  }

 private:
  std::unique_ptr<Medium> owned_;
  std::atomic<bool> fail_allocations_{false};
  std::atomic<uint64_t> failed_{0};
};

}  // namespace rpmp

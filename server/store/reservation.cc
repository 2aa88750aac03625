// Reservation's move/destroy semantics: an uncommitted reservation that goes away is
// aborted through its owning store.
#include "server/store/reservation_impl.h"

namespace rpmp {

Reservation::Reservation(std::shared_ptr<Impl> impl, char* payload, uint64_t length,
                         uint32_t pool, uint64_t payload_offset)
    : impl_(std::move(impl)),
      payload_(payload),
      length_(length),
      pool_(pool),
      payload_offset_(payload_offset) {}

Reservation::Reservation(Reservation&& o) noexcept { *this = std::move(o); }

Reservation& Reservation::operator=(Reservation&& o) noexcept {
  if (this == &o) return *this;
  if (impl_ != nullptr && !impl_->finished) impl_->owner->Abort(this);
  impl_ = std::move(o.impl_);
  payload_ = o.payload_;
  length_ = o.length_;
  pool_ = o.pool_;
  payload_offset_ = o.payload_offset_;
  duplicate_ = o.duplicate_;
  o.Reset();
  return *this;
}

Reservation::~Reservation() {
  if (impl_ != nullptr && !impl_->finished) impl_->owner->Abort(this);
}

void Reservation::Reset() {
  impl_.reset();
  payload_ = nullptr;
  length_ = 0;
  pool_ = 0;
  payload_offset_ = 0;
  duplicate_ = false;
}

}  // namespace rpmp

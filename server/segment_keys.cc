// Per-segment remote registrations (see segment_keys.h).
#include "server/segment_keys.h"

namespace rpmp {

struct SegmentKeys::Access : SegmentAccess {
  std::shared_ptr<State> state;  // keeps the bookkeeping alive past the SegmentKeys
  std::unique_ptr<MemoryRegion> mr;
  ~Access() override {
    std::lock_guard<std::mutex> lock(state->mu);
    state->live.erase(this);
    mr.reset();  // fi_close: the key stops working (null when RevokeAll closed it)
  }
};

SegmentKeys::SegmentKeys(Fabric* fabric) : state_(std::make_shared<State>()) {
  state_->fabric = fabric;
}

SegmentKeys::~SegmentKeys() { RevokeAll(); }

StatusOr<std::unique_ptr<SegmentAccess>> SegmentKeys::Register(const std::string& ns, uint32_t pool,
                                                               char* base, uint64_t size) {
  (void)ns;
  (void)pool;
  std::lock_guard<std::mutex> lock(state_->mu);
  if (state_->fabric == nullptr) return Status::Unavailable("the data plane is stopping");
  auto access = std::make_unique<Access>();
  access->state = state_;
  RPMP_ASSIGN_OR_RETURN(access->mr, state_->fabric->Register(base, size, MrAccess::kRemoteRead));
  state_->live.insert(access.get());
  return std::unique_ptr<SegmentAccess>(std::move(access));
}

void SegmentKeys::RevokeAll() {
  std::lock_guard<std::mutex> lock(state_->mu);
  for (Access* a : state_->live) a->mr.reset();
  state_->live.clear();
  state_->fabric = nullptr;
}

const MemoryRegion* SegmentKeys::RegionOf(const SegmentAccess* access) {
  auto* a = dynamic_cast<const Access*>(access);
  return a == nullptr ? nullptr : a->mr.get();
}

size_t SegmentKeys::open() const {
  std::lock_guard<std::mutex> lock(state_->mu);
  return state_->live.size();
}

}  // namespace rpmp

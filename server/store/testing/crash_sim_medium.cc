// CrashSimMedium implementation (see crash_sim_medium.h).
#include "server/store/testing/crash_sim_medium.h"

#include <cstdlib>
#include <cstring>

#include "common/no_space.h"
#include "server/store/format.h"

namespace rpmp {

namespace {
constexpr uint64_t kLine = 64;
constexpr uint64_t kRootReserved = 4096;  // the root area sits at offset 0
constexpr uint64_t kPmdkHeader = 16;
}  // namespace

CrashSimMedium::CrashSimMedium(uint64_t capacity, uint64_t seed, bool pmdk_offsets)
    : capacity_(store_format::AlignUp(capacity)), pmdk_offsets_(pmdk_offsets), rng_(seed) {
  Init();
  std::memset(base_, 0, kRootReserved);
  std::memcpy(durable_.data(), base_, capacity_);
  free_.Give(kRootReserved, capacity_ - kRootReserved);
}

CrashSimMedium::CrashSimMedium(const CrashImage& image, uint64_t seed)
    : capacity_(image.capacity), pmdk_offsets_(image.pmdk_offsets), rng_(seed) {
  Init();
  std::memcpy(base_, image.bytes.data(), capacity_);
  std::memcpy(durable_.data(), image.bytes.data(), capacity_);
  objects_ = image.objects;
  // Rebuild chunks and free ranges from the objects.
  uint64_t pos = kRootReserved;
  for (const auto& [offset, obj] : objects_) {
    uint64_t chunk = pmdk_offsets_ ? offset - kPmdkHeader : offset;
    uint64_t len = store_format::AlignUp(obj.second + (pmdk_offsets_ ? kPmdkHeader : 0));
    chunks_[offset] = {chunk, len};
    if (chunk > pos) free_.Give(pos, chunk - pos);
    pos = chunk + len;
  }
  if (pos < capacity_) free_.Give(pos, capacity_ - pos);
}

void CrashSimMedium::Init() {
  base_ = static_cast<char*>(std::aligned_alloc(4096, capacity_));
  durable_.assign(capacity_, 0);
}

CrashSimMedium::~CrashSimMedium() { std::free(base_); }

void CrashSimMedium::Arm(uint64_t n) {
  std::lock_guard<std::mutex> lock(mu_);
  persists_ = 0;
  crash_at_ = n;
  crashed_ = false;
}

bool CrashSimMedium::crashed() const {
  std::lock_guard<std::mutex> lock(mu_);
  return crashed_;
}

uint64_t CrashSimMedium::persists() const {
  std::lock_guard<std::mutex> lock(mu_);
  return persists_;
}

CrashImage CrashSimMedium::TakeImage() {
  std::lock_guard<std::mutex> lock(mu_);
  return std::move(image_);
}

CrashImage CrashSimMedium::ImageNow() {
  std::lock_guard<std::mutex> lock(mu_);
  return Cut();
}

CrashImage CrashSimMedium::Cut() {
  CrashImage img;
  img.capacity = capacity_;
  img.pmdk_offsets = pmdk_offsets_;
  img.objects = objects_;
  img.bytes = durable_;
  for (uint64_t line = 0; line < capacity_; line += kLine) {
    if (std::memcmp(base_ + line, durable_.data() + line, kLine) == 0) continue;
    if (rng_() & 1) std::memcpy(img.bytes.data() + line, base_ + line, kLine);  // evicted
  }
  return img;
}

void CrashSimMedium::MakeDurable(uint64_t offset, uint64_t len) {
  uint64_t start = offset & ~(kLine - 1);
  uint64_t end = std::min(capacity_, store_format::AlignUp(offset + len));
  std::memcpy(durable_.data() + start, base_ + start, end - start);
}

StatusOr<uint64_t> CrashSimMedium::Allocate(uint32_t type, uint64_t size, const void* header,
                                            uint64_t header_len) {
  uint64_t extra = pmdk_offsets_ ? kPmdkHeader : 0;
  if (size > capacity_)  // before the arithmetic below, which would wrap near 2^64
    return Status::NoSpace(std::string("medium ") + kNoSpaceObjectTooBig + " of " + std::to_string(size) + " bytes");
  uint64_t want = store_format::AlignUp(size + extra);
  std::lock_guard<std::mutex> lock(mu_);
  if (std::optional<uint64_t> taken = free_.Take(want)) {
    uint64_t chunk = *taken;
    uint64_t offset = chunk + extra;
    // Stale bytes of earlier use, durable too; then the header, durable before the
    // object is reachable (the allocation is atomic).
    for (uint64_t i = chunk; i < chunk + want; i += 8) {
      uint64_t junk = rng_();
      std::memcpy(base_ + i, &junk, 8);
    }
    std::memcpy(base_ + offset, header, header_len);
    MakeDurable(chunk, want);
    objects_[offset] = {type, size};
    chunks_[offset] = {chunk, want};
    return offset;
  }
  return Status::NoSpace(std::string("crash-sim medium has ") + kNoSpaceNoRange + " of " + std::to_string(want) +
                         " bytes");
}

void CrashSimMedium::Free(uint64_t offset) {
  std::lock_guard<std::mutex> lock(mu_);
  auto c = chunks_.find(offset);
  if (c == chunks_.end()) return;
  uint64_t start = c->second.first, len = c->second.second;
  chunks_.erase(c);
  objects_.erase(offset);
  free_.Give(start, len);
}

std::vector<uint64_t> CrashSimMedium::ObjectsOfType(uint32_t type) {
  std::lock_guard<std::mutex> lock(mu_);
  std::vector<uint64_t> out;
  for (const auto& [offset, obj] : objects_) {
    if (obj.first == type) out.push_back(offset);
  }
  return out;
}

void CrashSimMedium::Persist(const void* p, uint64_t len) {
  std::lock_guard<std::mutex> lock(mu_);
  persists_++;
  if (crash_at_ != 0 && persists_ == crash_at_ && !crashed_) {
    image_ = Cut();  // the crash hits before this persist completes
    crashed_ = true;
  }
  uint64_t offset = static_cast<const char*>(p) - base_;
  if (offset < capacity_) MakeDurable(offset, len);
}

}  // namespace rpmp

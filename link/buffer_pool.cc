// Implementation of BufferPool and of the Buffer handle.
#include "link/buffer_pool.h"

#include <sys/mman.h>

namespace rpmp {
namespace {

constexpr size_t kMinSlab = 64 * 1024;

size_t RoundUpPow2(size_t n) {
  size_t c = kMinSlab;
  while (c < n) c <<= 1;
  return c;
}

}  // namespace

Buffer::Slab::~Slab() {
  mr.reset();
  if (base != nullptr) munmap(base, size);
}

Buffer::Buffer(std::shared_ptr<Slab> slab, char* data, size_t capacity)
    : slab_(std::move(slab)), data_(data), capacity_(capacity) {}

Buffer::Buffer(Buffer&& o) noexcept
    : slab_(std::move(o.slab_)), data_(o.data_), capacity_(o.capacity_), size_(o.size_) {
  o.data_ = nullptr;
  o.capacity_ = o.size_ = 0;
}

Buffer& Buffer::operator=(Buffer&& o) noexcept {
  if (this != &o) {
    if (slab_) slab_->pool->Release(std::move(slab_));
    slab_ = std::move(o.slab_);
    data_ = o.data_;
    capacity_ = o.capacity_;
    size_ = o.size_;
    o.data_ = nullptr;
    o.capacity_ = o.size_ = 0;
  }
  return *this;
}

Buffer::~Buffer() {
  if (slab_) slab_->pool->Release(std::move(slab_));
}

BufferPool::~BufferPool() {
  std::lock_guard<std::mutex> lock(mu_);
  closing_ = true;
  free_.clear();
}

StatusOr<Buffer> BufferPool::Acquire(size_t size) {
  size_t cls = RoundUpPow2(size == 0 ? 1 : size);
  {
    std::lock_guard<std::mutex> lock(mu_);
    auto it = free_.lower_bound(cls);
    if (it != free_.end() && it->first <= 2 * cls) {
      std::shared_ptr<Buffer::Slab> slab = std::move(it->second);
      free_.erase(it);
      cached_bytes_ -= slab->size;
      char* data = slab->base;
      size_t cap = slab->size;
      return Buffer(std::move(slab), data, cap);
    }
  }
  void* p = mmap(nullptr, cls, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (p == MAP_FAILED) return Status::NoSpace("cannot map " + std::to_string(cls) + " bytes of buffer memory");
  auto slab = std::make_shared<Buffer::Slab>();
  slab->pool = this;
  slab->base = static_cast<char*>(p);
  slab->size = cls;
  RPMP_ASSIGN_OR_RETURN(slab->mr, fabric_->Register(p, cls));
  return Buffer(std::move(slab), static_cast<char*>(p), cls);
}

void BufferPool::Release(std::shared_ptr<Buffer::Slab> slab) {
  std::lock_guard<std::mutex> lock(mu_);
  if (closing_ || cached_bytes_ + slab->size > cache_budget_) return;  // slab freed here
  if (slab->poisoned.load() || slab.use_count() > 1) return;  // freed by its last holder
  cached_bytes_ += slab->size;
  free_.emplace(slab->size, std::move(slab));
}

}  // namespace rpmp

// Buffer: registered memory from a client's pool (librpmp's Client, or link/'s
// BufferPool under it). Values in a Buffer move without a copy on the client.
// Move-only; returns to its pool when destroyed; must not outlive its Client.
// Public (installed with librpmp; rpmp/client.h includes it). Implemented in
// link/buffer_pool.cc, so link/ uses it without the client's API.
#pragma once

#include <cstddef>
#include <memory>

namespace rpmp {

class Buffer {
 public:
  Buffer() = default;
  Buffer(Buffer&&) noexcept;
  Buffer& operator=(Buffer&&) noexcept;
  Buffer(const Buffer&) = delete;
  Buffer& operator=(const Buffer&) = delete;
  ~Buffer();

  char* data() const { return data_; }
  size_t capacity() const { return capacity_; }
  // Bytes of valid content (set by Get/Read, or by the caller before Put).
  size_t size() const { return size_; }
  void set_size(size_t n) { size_ = n <= capacity_ ? n : capacity_; }
  bool valid() const { return data_ != nullptr; }

  struct Slab;  // internal
  Buffer(std::shared_ptr<Slab> slab, char* data, size_t capacity);
  Slab* slab() const { return slab_.get(); }
  const std::shared_ptr<Slab>& shared_slab() const { return slab_; }  // internal

 private:
  std::shared_ptr<Slab> slab_;
  char* data_ = nullptr;
  size_t capacity_ = 0;
  size_t size_ = 0;
};

}  // namespace rpmp

// The growable chunk buffers (see chunk_buffer.h): their out-of-line growth.
#include "crdt/chunk_buffer.h"

namespace weft::crdt::detail {

void ChunkBytes::grow(size_t need) {
  const size_t cap = std::max(need, size_t{cap_} + cap_ / 2);
  char* p = nullptr;
  if (p_ == own_) {
    p = static_cast<char*>(std::malloc(cap));
    if (p != nullptr && size_ != 0) std::memcpy(p, p_, size_);
  } else {
    p = static_cast<char*>(std::realloc(p_, cap));
  }
  if (p == nullptr) throw std::bad_alloc();
  p_ = p;
  cap_ = static_cast<uint32_t>(cap);
}

void ChunkBytes::shrink_to_fit() {
  if (p_ == own_ || size_ == cap_) return;
  if (size_ <= own_cap_) {  // back into the chunk's own room
    if (size_ != 0) std::memcpy(own_, p_, size_);
    std::free(p_);
    p_ = own_;
    cap_ = own_cap_;
    return;
  }
  auto* p = static_cast<char*>(std::realloc(p_, size_));
  if (p == nullptr) return;  // keeping the larger block is fine
  p_ = p;
  cap_ = size_;
}

}  // namespace weft::crdt::detail

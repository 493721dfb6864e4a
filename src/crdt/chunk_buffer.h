// Internal: the two growable buffers inside a PlainSeq chunk (plain_state.h), the
// bytes of a Text chunk and the id runs of any chunk. Each starts in room the
// chunk's own heap block provides and moves to the heap only when it
// outgrows it. Not thread-safe (a chunk has one owner).
#ifndef WEFT_SRC_CRDT_CHUNK_BUFFER_H_
#define WEFT_SRC_CRDT_CHUNK_BUFFER_H_

#include <algorithm>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <initializer_list>
#include <new>
#include <string_view>
#include <type_traits>

namespace weft::crdt::detail {

// The UTF-8 bytes of one Text chunk: a byte buffer with only the edits
// PlainSeq makes. (std::string's insert / erase carry position checks and an
// aliasing path that cost as much as the byte move itself at chunk sizes, and
// a keystroke makes one of each.) Its room starts as `own` bytes inside the
// chunk's own block (see PlainSeq::alloc_chunk in plain_state.h: one cold block per chunk, not
// three) and moves to the heap only when a paste overfills it before the
// split. Sources never alias the buffer.
class ChunkBytes {
 public:
  ChunkBytes(char* own, size_t own_cap)
      : p_(own),
        own_(own),
        cap_(static_cast<uint32_t>(own_cap)),
        own_cap_(static_cast<uint32_t>(own_cap)) {}
  ~ChunkBytes() {
    if (p_ != own_) std::free(p_);
  }
  ChunkBytes(const ChunkBytes&) = delete;
  ChunkBytes& operator=(const ChunkBytes&) = delete;

  size_t size() const { return size_; }
  size_t capacity() const { return cap_; }
  const char* data() const { return p_; }
  char* begin() { return p_; }
  char* end() { return p_ + size_; }
  const char* begin() const { return p_; }
  const char* end() const { return p_ + size_; }
  char operator[](size_t i) const { return p_[i]; }
  operator std::string_view() const { return std::string_view(p_, size_); }

  // Makes room for n bytes in all (no effect when there is).
  void reserve(size_t n) {
    if (n > cap_) grow(n);
  }
  void clear() { size_ = 0; }
  // Keeps bytes [0, n). REQUIRES: n <= size().
  void truncate(size_t n) { size_ = static_cast<uint32_t>(n); }
  // Drops the heap room past size() (a chunk that was far over full),
  // back to the chunk's own room when the bytes fit there.
  void shrink_to_fit();
  void assign(std::string_view s) {
    size_ = 0;
    append(s);
  }
  void append(std::string_view s) {
    if (s.empty()) return;
    reserve(size_ + s.size());
    std::memcpy(p_ + size_, s.data(), s.size());
    size_ += static_cast<uint32_t>(s.size());
  }
  // Inserts s[0, m) before byte `at`. REQUIRES: at <= size(), m >= 1.
  void insert(size_t at, const char* s, size_t m) {
    reserve(size_ + m);
    char* p = p_ + at;
    std::memmove(p + m, p, size_ - at);
    if (m == 1)
      *p = *s;
    else
      std::memcpy(p, s, m);
    size_ += static_cast<uint32_t>(m);
  }
  // Inserts byte ch before `pos` (a pointer into [begin(), end()]).
  void insert(const char* pos, char ch) { insert(static_cast<size_t>(pos - p_), &ch, 1); }
  // Removes bytes [at, at + n). REQUIRES: at + n <= size().
  void erase(size_t at, size_t n) {
    std::memmove(p_ + at, p_ + at + n, size_ - at - n);
    size_ -= static_cast<uint32_t>(n);
  }

 private:
  void grow(size_t need);
  char* p_;          // own_, or malloc'd once grown past own_cap_
  char* const own_;  // the chunk's own room (may be null: a List chunk)
  uint32_t size_ = 0, cap_;
  const uint32_t own_cap_;
};

// The id runs of one chunk: a vector of trivially copyable T with only the
// edits PlainSeq makes, whose room starts inside the chunk's own block (as
// ChunkBytes) and moves to the heap past `own_cap` elements. (ChunkBytes is
// not a ChunkVec<char>: its byte insert is on the keystroke path, and a
// shared template cost register spills there; see bench/RESULTS.md.)
template <typename T>
class ChunkVec {
  static_assert(std::is_trivially_copyable_v<T>);

 public:
  ChunkVec(T* own, size_t own_cap)
      : p_(own),
        own_(own),
        cap_(static_cast<uint32_t>(own_cap)),
        own_cap_(static_cast<uint32_t>(own_cap)) {}
  ~ChunkVec() {
    if (p_ != own_) std::free(p_);
  }
  ChunkVec(const ChunkVec&) = delete;
  ChunkVec& operator=(const ChunkVec&) = delete;

  size_t size() const { return size_; }
  bool empty() const { return size_ == 0; }
  size_t capacity() const { return cap_; }
  T* begin() { return p_; }
  T* end() { return p_ + size_; }
  const T* begin() const { return p_; }
  const T* end() const { return p_ + size_; }
  T& operator[](size_t i) { return p_[i]; }
  const T& operator[](size_t i) const { return p_[i]; }
  T& back() { return p_[size_ - 1]; }
  const T& back() const { return p_[size_ - 1]; }

  void reserve(size_t n) {
    if (n > cap_) grow(n);
  }
  void clear() { size_ = 0; }
  // REQUIRES: n <= size().
  void resize(size_t n) { size_ = static_cast<uint32_t>(n); }
  // Moves the elements back into the own room when they fit there again
  // (a chunk split on its run count).
  void shrink_to_own() {
    if (p_ == own_ || size_ > own_cap_) return;
    if (size_ != 0) std::memcpy(own_, p_, size_ * sizeof(T));
    std::free(p_);
    p_ = own_;
    cap_ = own_cap_;
  }
  void push_back(const T& v) {
    if (size_ == cap_) grow(size_ + 1);
    p_[size_++] = v;
  }
  // Inserts [first, last) before `at` (a pointer into [begin(), end()]);
  // the source never lies in this vector.
  T* insert(T* at, const T* first, const T* last) {
    const size_t i = static_cast<size_t>(at - p_), k = static_cast<size_t>(last - first);
    reserve(size_ + k);
    std::memmove(p_ + i + k, p_ + i, (size_ - i) * sizeof(T));
    std::memcpy(p_ + i, first, k * sizeof(T));
    size_ += static_cast<uint32_t>(k);
    return p_ + i;
  }
  T* insert(T* at, const T& v) {
    const size_t i = static_cast<size_t>(at - p_);
    if (size_ == cap_) grow(size_ + 1);
    std::memmove(p_ + i + 1, p_ + i, (size_ - i) * sizeof(T));
    p_[i] = v;
    ++size_;
    return p_ + i;
  }
  T* insert(T* at, std::initializer_list<T> vs) { return insert(at, vs.begin(), vs.end()); }
  // Removes [first, last) (pointers into [begin(), end()]).
  T* erase(T* first, T* last) {
    std::memmove(first, last, static_cast<size_t>(end() - last) * sizeof(T));
    size_ -= static_cast<uint32_t>(last - first);
    return first;
  }
  T* erase(T* at) { return erase(at, at + 1); }
  void assign(const T* first, const T* last) {
    size_ = 0;
    insert(p_, first, last);
  }

 private:
  void grow(size_t need) {
    const size_t cap = std::max<size_t>(need, 2 * size_t{cap_});
    T* p = nullptr;
    if (p_ == own_) {
      p = static_cast<T*>(std::malloc(cap * sizeof(T)));
      if (p != nullptr && size_ != 0) std::memcpy(p, p_, size_ * sizeof(T));
    } else {
      p = static_cast<T*>(std::realloc(p_, cap * sizeof(T)));
    }
    if (p == nullptr) throw std::bad_alloc();
    p_ = p;
    cap_ = static_cast<uint32_t>(cap);
  }
  T* p_;
  T* const own_;
  uint32_t size_ = 0, cap_;
  const uint32_t own_cap_;
};

}  // namespace weft::crdt::detail

#endif  // WEFT_SRC_CRDT_CHUNK_BUFFER_H_

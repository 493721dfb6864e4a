// Internal: SmallVec, a vector of a trivially copyable type that keeps up to
// N elements inline. A change's deps are almost always one ID (its own
// previous op) or two (a merge): decoding 26k one-op changes then makes no
// heap block for them.
#ifndef WEFT_SRC_CRDT_SMALL_VEC_H_
#define WEFT_SRC_CRDT_SMALL_VEC_H_

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <initializer_list>
#include <memory>
#include <type_traits>
#include <vector>

namespace weft::crdt::detail {

template <typename T, size_t N>
class SmallVec {
  static_assert(std::is_trivially_copyable_v<T> && N > 0);

 public:
  using value_type = T;
  using iterator = T*;
  using const_iterator = const T*;

  SmallVec() = default;
  SmallVec(std::initializer_list<T> items) { assign(items.begin(), items.size()); }
  SmallVec(const std::vector<T>& items) { assign(items.data(), items.size()); }  // NOLINT
  SmallVec(const SmallVec& o) { assign(o.data(), o.size_); }
  SmallVec(SmallVec&& o) noexcept { take(o); }
  SmallVec& operator=(const SmallVec& o) {
    if (this != &o) assign(o.data(), o.size_);
    return *this;
  }
  SmallVec& operator=(SmallVec&& o) noexcept {
    if (this != &o) {
      heap_.reset();
      take(o);
    }
    return *this;
  }
  SmallVec& operator=(std::initializer_list<T> items) {
    assign(items.begin(), items.size());
    return *this;
  }
  SmallVec& operator=(const std::vector<T>& items) {
    assign(items.data(), items.size());
    return *this;
  }
  // The elements as a std::vector (for the public API's types).
  operator std::vector<T>() const { return std::vector<T>(begin(), end()); }  // NOLINT

  T* data() { return heap_ ? heap_.get() : inline_; }
  const T* data() const { return heap_ ? heap_.get() : inline_; }
  size_t size() const { return size_; }
  bool empty() const { return size_ == 0; }
  T* begin() { return data(); }
  T* end() { return data() + size_; }
  const T* begin() const { return data(); }
  const T* end() const { return data() + size_; }
  T& operator[](size_t i) { return data()[i]; }
  const T& operator[](size_t i) const { return data()[i]; }
  T& back() { return data()[size_ - 1]; }
  const T& back() const { return data()[size_ - 1]; }

  // Makes room for `n` elements (no-op while they fit).
  void reserve(size_t n) {
    if (n <= cap_) return;
    auto grown = std::make_unique_for_overwrite<T[]>(n);
    std::copy(data(), data() + size_, grown.get());
    heap_ = std::move(grown);
    cap_ = n;
  }
  void push_back(const T& item) {
    if (size_ == cap_) reserve(2 * cap_);
    data()[size_++] = item;
  }
  void clear() { size_ = 0; }

  friend bool operator==(const SmallVec& a, const SmallVec& b) {
    return std::equal(a.begin(), a.end(), b.begin(), b.end());
  }

 private:
  void assign(const T* items, size_t n) {
    size_ = 0;
    reserve(n);
    std::copy(items, items + n, data());  // (items may be null when n == 0)
    size_ = n;
  }
  // Takes `o`'s elements (its heap block, or a copy of its inline ones);
  // leaves `o` empty. REQUIRES: no heap block of our own.
  void take(SmallVec& o) {
    size_ = o.size_;
    cap_ = o.cap_;
    if (o.heap_) {
      heap_ = std::move(o.heap_);
    } else {
      std::copy(o.inline_, o.inline_ + N, inline_);  // a fixed size: no memcpy call
    }
    o.size_ = 0;
    o.cap_ = N;
  }

  std::unique_ptr<T[]> heap_;  // set once the elements outgrow the inline storage
  size_t size_ = 0, cap_ = N;
  T inline_[N];
};

}  // namespace weft::crdt::detail

#endif  // WEFT_SRC_CRDT_SMALL_VEC_H_

// Internal: Op, one entry of the op log, kept small because a long-edited
// document holds tens of thousands of them (and undo records copy them).
// An Op is 56 bytes: positions and ids inline; a text insert's code points as
// UTF-8 in one heap block (OpText); the payload of the rarer list, map, mark
// and counter ops in a side box (OpExtra) that text inserts and deletes
// never allocate.
#ifndef WEFT_SRC_CRDT_OP_H_
#define WEFT_SRC_CRDT_OP_H_

#include <bit>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <new>
#include <string>
#include <string_view>
#include <vector>

#include "weft/crdt/ids.h"
#include "weft/crdt/value.h"

namespace weft::crdt::detail {

enum class OpKind : uint8_t {
  kTextInsert,
  kListInsert,
  kSeqDelete,
  kMark,
  kMarkEnd,
  kMapSet,
  kMapDelete,
  kCounter
};

// Whether every byte of `s` is ASCII (checked 8 bytes at a time).
inline bool is_all_ascii(std::string_view s) {
  uint64_t high = 0;
  size_t k = 0;
  for (; k + 8 <= s.size(); k += 8) {
    uint64_t w;
    std::memcpy(&w, s.data() + k, 8);
    high |= w;
  }
  for (; k < s.size(); ++k) high |= static_cast<unsigned char>(s[k]);
  return (high & 0x8080808080808080ULL) == 0;
}

class OpTextPool;

// The code points of a text insert, stored as UTF-8 in 8 bytes: up to 7
// bytes inline (a keystroke allocates nothing), longer texts in one heap
// block that also holds the code point count. Code points must be Unicode
// scalar values (every producer validates its input).
class OpText {
 public:
  OpText() = default;
  OpText(const OpText& o) { append_bytes(o.data(), o.bytes(), o.size()); }
  OpText(OpText&& o) noexcept : bits_(o.bits_) { o.bits_ = 0; }
  OpText& operator=(const OpText& o);
  OpText& operator=(OpText&& o) noexcept;
  ~OpText() { release(); }

  // Number of code points.
  size_t size() const { return is_inline() ? (bits_ >> 1) & 7 : bits_ ? block()->units : 0; }
  bool empty() const { return size() == 0; }
  std::string_view utf8() const { return std::string_view(data(), bytes()); }

  // Replaces the contents by code points cps[0, n).
  void assign(const uint32_t* cps, size_t n);
  // Replaces the contents by valid UTF-8 `utf8` holding `units` code points.
  void assign_utf8(std::string_view utf8, size_t units);
  // Same, but a text too long to be inline is written into `pool` (no heap
  // block of its own). REQUIRES: `pool` outlives this text and its moves
  // (copies and edits make a heap block of their own).
  void assign_utf8(std::string_view utf8, size_t units, OpTextPool& pool);
  // assign_utf8(utf8, units, pool) for a text that is still empty (the
  // decoder's path: a short text is one store, a long one a pool block).
  // REQUIRES: empty(), units >= 1, `pool` as for assign_utf8.
  [[gnu::always_inline]] void init_utf8(std::string_view utf8, size_t units, OpTextPool& pool) {
    if (utf8.size() > kInlineMax) {
      init_pooled(utf8, units, pool);
      return;
    }
    uint64_t w = 1 | (uint64_t{units} << 1) | (uint64_t{utf8.size()} << 4);
    for (size_t k = 0; k < utf8.size(); ++k)
      w |= uint64_t{static_cast<unsigned char>(utf8[k])} << (8 * (1 + k));
    bits_ = w;
  }
  // init_utf8 for a source with 8 readable bytes at utf8.data(): a short
  // text is one 8-byte load instead of a byte loop.
  // REQUIRES: as for init_utf8.
  [[gnu::always_inline]] void init_utf8_wide(std::string_view utf8, size_t units,
                                             OpTextPool& pool) {
    if (utf8.size() > kInlineMax) {
      init_pooled(utf8, units, pool);
      return;
    }
    uint64_t w;
    std::memcpy(&w, utf8.data(), 8);
    w &= (uint64_t{1} << (8 * utf8.size())) - 1;  // size <= 7: the shift stays below 64
    bits_ = 1 | (uint64_t{units} << 1) | (uint64_t{utf8.size()} << 4) | (w << 8);
  }
  void append(const uint32_t* cps, size_t n);
  // Appends `o`. Inline for the keystroke commit: a short (inline) text goes
  // into a heap block with room as one 8-byte store.
  [[gnu::always_inline]] void append(const OpText& o) {
    // Inline joining inline (or empty): one word, as in append_utf8.
    const uint64_t used = (bits_ >> 4) & 7, add = (o.bits_ >> 4) & 7;  // 0 when empty
    if (add != 0 && o.is_inline() && is_inline_or_empty() && used + add <= kInlineMax) {
      const uint64_t keep = bits_ & ((uint64_t{1} << (8 * (1 + used))) - 1) & ~uint64_t{0xFF};
      const uint64_t more = ((o.bits_ >> 8) & ((uint64_t{1} << (8 * add)) - 1)) << (8 * (1 + used));
      const uint64_t units = ((bits_ >> 1) & 7) + ((o.bits_ >> 1) & 7);
      bits_ = keep | more | 1 | (units << 1) | ((used + add) << 4);
      return;
    }
    Block* b = block();
    if (o.is_inline() && b && b->cap >= b->bytes + 8) {
      const uint64_t payload = o.bits_ >> 8;  // the inline bytes, then zeros
      std::memcpy(reinterpret_cast<char*>(b + 1) + b->bytes, &payload, 8);
      b->bytes += static_cast<uint32_t>((o.bits_ >> 4) & 7);
      b->units += static_cast<uint32_t>((o.bits_ >> 1) & 7);
      return;
    }
    append_bytes(o.data(), o.bytes(), o.size());
  }
  // Appends valid UTF-8 `utf8` holding `units` code points. Inline for the
  // keystroke path: a few bytes joining an inline (or empty) text, or a heap
  // block with room (one 8-byte store, as in append). With `pool`, a text
  // that outgrows its room moves into a writable block of the pool, not a
  // malloc'd one (REQUIRES: `pool` as for assign_utf8's).
  [[gnu::always_inline]] void append_utf8(std::string_view utf8, size_t units,
                                          OpTextPool* pool = nullptr) {
    if (utf8.empty()) return;
    const size_t used = (bits_ >> 4) & 7;  // 0 when empty
    if (is_inline_or_empty() && used + utf8.size() <= kInlineMax) {
      uint64_t w = bits_ & ~uint64_t{0xFF};
      for (size_t k = 0; k < utf8.size(); ++k)
        w |= uint64_t{static_cast<unsigned char>(utf8[k])} << (8 * (1 + used + k));
      const uint64_t total_units = ((bits_ >> 1) & 7) + units;
      bits_ = w | 1 | (total_units << 1) | ((used + utf8.size()) << 4);
      return;
    }
    Block* b = block();
    if (b && utf8.size() <= 8 && b->cap >= b->bytes + 8) {
      uint64_t w = 0;
      for (size_t k = 0; k < utf8.size(); ++k)
        w |= uint64_t{static_cast<unsigned char>(utf8[k])} << (8 * k);
      std::memcpy(reinterpret_cast<char*>(b + 1) + b->bytes, &w, 8);
      b->bytes += static_cast<uint32_t>(utf8.size());
      b->units += static_cast<uint32_t>(units);
      return;
    }
    append_bytes(utf8.data(), utf8.size(), units, pool);
  }
  // append_utf8 for a source with 8 readable bytes at utf8.data() (the
  // typing buffer): a short text joins an inline one as one 8-byte load.
  [[gnu::always_inline]] void append_utf8_wide(std::string_view utf8, size_t units,
                                               OpTextPool* pool) {
    const size_t used = (bits_ >> 4) & 7;  // 0 when empty
    if (!utf8.empty() && is_inline_or_empty() && used + utf8.size() <= kInlineMax) {
      uint64_t w;
      std::memcpy(&w, utf8.data(), 8);
      w &= (uint64_t{1} << (8 * utf8.size())) - 1;  // size <= 7: the shift stays below 64
      const uint64_t total_units = ((bits_ >> 1) & 7) + units;
      bits_ = (bits_ & ~uint64_t{0xFF}) | (w << (8 * (1 + used))) | 1 | (total_units << 1) |
              ((used + utf8.size()) << 4);
      return;
    }
    append_utf8(utf8, units, pool);
  }
  void push_back(char32_t cp);
  // Writes the first `n` code points to out[0, n). REQUIRES: n <= size().
  void decode(size_t n, uint32_t* out) const;
  // The code points from index `k` on. REQUIRES: k <= size().
  OpText substr(size_t k) const;
  // Keeps the first `keep` code points. REQUIRES: keep <= size().
  void truncate(size_t keep);
  // The code points as UTF-32 (tests, debugging).
  std::u32string to_u32() const;

  friend bool operator==(const OpText& a, const OpText& b) { return a.utf8() == b.utf8(); }

 private:
  static_assert(std::endian::native == std::endian::little, "inline texts use the low byte");
  static constexpr size_t kInlineMax = 7;
  friend class OpTextPool;
  // A block: this header, then `cap` bytes of UTF-8. `pooled`: it lies in an
  // OpTextPool and is never freed by the text; cap == 0 there marks a
  // read-only block (a decoded text, which an edit copies out).
  struct Block {
    uint32_t units;
    uint32_t bytes;
    uint32_t cap : 31;
    uint32_t pooled : 1;
  };
  [[gnu::always_inline]] void release() {
    Block* b = block();
    if (b && !b->pooled) std::free(b);
  }
  // bits_ is 0 (empty), a Block* (malloc aligns it: low bit 0), or inline:
  // low byte 1 | units << 1 | bytes << 4, then the bytes in memory order.
  bool is_inline() const { return bits_ & 1; }
  bool is_inline_or_empty() const { return bits_ == 0 || is_inline(); }
  Block* block() const { return is_inline() ? nullptr : reinterpret_cast<Block*>(bits_); }
  size_t bytes() const { return is_inline() ? (bits_ >> 4) & 7 : bits_ ? block()->bytes : 0; }
  const char* data() const {
    if (is_inline()) return reinterpret_cast<const char*>(&bits_) + 1;
    return bits_ ? reinterpret_cast<const char*>(block() + 1) : "";
  }
  void clear();
  void init_pooled(std::string_view utf8, size_t units, OpTextPool& pool);
  // Appends `n` bytes of valid UTF-8 holding `units` code points; `p` may
  // point into this text. A text that outgrows its room takes a block of
  // `pool` when given, else of the heap.
  void append_bytes(const char* p, size_t n, size_t units, OpTextPool* pool = nullptr);
  uintptr_t bits_ = 0;
};

// Storage for the long texts of decoded ops and of texts typed on: one
// allocation per slab (1 KiB doubling to 64 KiB) instead of one per op. A DocCore keeps its pools
// for its whole life.
class OpTextPool {
 public:
  OpTextPool() = default;
  OpTextPool(const OpTextPool&) = delete;
  OpTextPool& operator=(const OpTextPool&) = delete;

 private:
  friend class OpText;
  // A read-only block holding `utf8` (> 7 bytes) in the pool.
  OpText::Block* add(std::string_view utf8, size_t units);
  // A writable block with room for `cap` bytes (0 < cap < 2^31) for a text
  // whose block `b` is full: `b` itself, grown in place, when it is the
  // pool's last block and its slab has room; else a new, empty block.
  OpText::Block* writable(OpText::Block* b, size_t cap);
  // Carves `need` bytes (a multiple of 4) from the last slab, or a new one.
  char* take(size_t need);
  static size_t block_size(size_t cap) { return (sizeof(OpText::Block) + cap + 3) & ~size_t{3}; }
  static constexpr size_t kSlabMin = 1024, kSlabMax = 64 * 1024;
  std::vector<std::unique_ptr<char[]>> slabs_;
  size_t slab_ = 0;  // the last slab's planned size (a larger `need` gets its own size)
  size_t left_ = 0;  // free bytes at the end of the last slab
  char* next_ = nullptr;
};

// The payload of list inserts, map / mark ops and counter ops.
struct OpExtra {
  std::vector<Value> values;  // list insert
  std::string key;            // map key / style key
  Value value;                // map value / style value
  double number = 0;          // counter delta
};

// One op: a run of `atom_len()` units with consecutive counters.
struct Op {
  Op() = default;
  Op(const Op& o) { *this = o; }
  Op(Op&&) noexcept = default;
  // Inline: the keystroke commit drops an op (no payload, inline text) each time.
  [[gnu::always_inline]] ~Op() {}
  Op& operator=(const Op& o);
  Op& operator=(Op&&) noexcept = default;

  ID start_id;  // delete: leftmost deleted element (real peer id)
  OpKind kind = OpKind::kCounter;
  uint8_t info = 0;        // mark info byte
  uint32_t container = 0;  // index into DocCore::containers
  Counter counter = 0;     // first unit
  int32_t pos = 0;         // insert/delete position; mark start
  int32_t len = 0;         // delete: signed length; mark: end; mark_end: anchor position
  OpText text;             // text insert

  // Payload readers (empty / null / 0 when the op has none).
  const std::vector<Value>& values() const { return extra_ ? extra_->values : kNoValues; }
  const std::string& key() const { return extra_ ? extra_->key : kNoKey; }
  const Value& value() const { return extra_ ? extra_->value : kNoValue; }
  double number() const { return extra_ ? extra_->number : 0; }
  // Payload writers (allocate the side box on first use).
  std::vector<Value>& mutable_values() { return extra().values; }
  void set_key(std::string key) { extra().key = std::move(key); }
  void set_value(Value value) { extra().value = std::move(value); }
  void set_number(double number) { extra().number = number; }

  Counter atom_len() const {
    switch (kind) {
      case OpKind::kTextInsert:
        return static_cast<Counter>(text.size());
      case OpKind::kListInsert:
        return static_cast<Counter>(values().size());
      case OpKind::kSeqDelete:
        return len < 0 ? -len : len;
      default:
        return 1;
    }
  }

 private:
  static const std::vector<Value> kNoValues;
  static const std::string kNoKey;
  static const Value kNoValue;
  OpExtra& extra() {
    if (!extra_) extra_.reset(new OpExtra());
    return *extra_;
  }
  // Deletes out of line, so that destroying an op without a payload (every
  // text op: the keystroke commit drops one each time) is an inline test.
  struct ExtraDeleter {
    void operator()(OpExtra* extra) const;
  };
  std::unique_ptr<OpExtra, ExtraDeleter> extra_;
};

// The ops of a change: one op inline (most changes hold one: a decoded
// keystroke, a local commit), more in one heap array. A vector's subset of
// operations; a decoded one-op change then costs no heap block for its ops.
// Pointers into it stay valid until it grows or moves (as for a vector, and
// also when the Change holding it moves).
class OpList {
 public:
  OpList() : data_(inline_op()), end_(data_), cap_end_(data_ + 1) {}
  OpList(const OpList& o) : OpList() { append_copies(o.begin(), o.size()); }
  OpList(OpList&& o) noexcept : OpList() { take(o); }
  OpList& operator=(const OpList& o) {
    if (this != &o) {
      clear();
      append_copies(o.begin(), o.size());
    }
    return *this;
  }
  OpList& operator=(OpList&& o) noexcept {
    if (this != &o) {
      release();
      take(o);
    }
    return *this;
  }
  ~OpList() { release(); }

  Op* data() { return data_; }
  const Op* data() const { return data_; }
  size_t size() const { return static_cast<size_t>(end_ - data_); }
  bool empty() const { return end_ == data_; }
  size_t capacity() const { return static_cast<size_t>(cap_end_ - data_); }
  Op* begin() { return data_; }
  Op* end() { return end_; }
  const Op* begin() const { return data_; }
  const Op* end() const { return end_; }
  Op& operator[](size_t i) { return data_[i]; }
  const Op& operator[](size_t i) const { return data_[i]; }
  Op& front() { return data_[0]; }
  const Op& front() const { return data_[0]; }
  // (end_[-1], as a vector's: the keystroke path asks for it every time.)
  Op& back() { return end_[-1]; }
  const Op& back() const { return end_[-1]; }

  // Appends a default op and returns it.
  Op& emplace_back() {
    if (end_ == cap_end_) grow(size() + 1);
    return *new (end_++) Op();
  }
  // emplace_back when reserve() made the room. REQUIRES: size() < capacity().
  Op& emplace_back_reserved() { return *new (end_++) Op(); }
  // emplace_back for an open transaction's list, which may grow to tens of
  // thousands of ops (S2 as one txn: ~66k, 3.7 MB) and is shrunk when it
  // becomes a change's (shrink_to_fit): from kLongOps ops on it grows 8x at
  // a time, which copies a seventh as many bytes as doubling (the room it
  // leaves is untouched until used, and given back at the commit).
  Op& emplace_back_open() {
    if (end_ == cap_end_) grow(size() < kLongOps ? size() + 1 : 8 * size());
    return *new (end_++) Op();
  }
  void push_back(Op&& op) {
    if (end_ == cap_end_) grow(size() + 1);
    new (end_++) Op(std::move(op));
  }
  void push_back(const Op& op) {
    if (end_ == cap_end_) {
      Op copy(op);  // (op may lie in this list, which grow moves)
      push_back(std::move(copy));
      return;
    }
    new (end_++) Op(op);
  }
  void pop_back() { (--end_)->~Op(); }
  // Default ops appended or ops dropped at the end, to `n` in all.
  void resize(size_t n);
  void reserve(size_t n) {
    if (n > static_cast<size_t>(cap_end_ - data_)) grow(n);
  }
  // Gives back the room past size() of a long list's heap array when it is
  // over a quarter of it (an open transaction's list, see emplace_back_open,
  // before it becomes a change's). In place: realloc to a smaller size does
  // not copy.
  void shrink_to_fit();
  void clear() {
    while (end_ != data_) pop_back();
  }

 private:
  static constexpr size_t kLongOps = 4096;
  Op* inline_op() { return reinterpret_cast<Op*>(inline_); }
  bool is_inline() const { return data_ == reinterpret_cast<const Op*>(inline_); }
  // Moves the ops into a heap array with room for `n` (> capacity) or more.
  void grow(size_t n);
  void append_copies(const Op* ops, size_t n);
  // Takes `o`'s ops (its heap array, or its inline op moved); leaves `o`
  // empty and inline. REQUIRES: this list is inline and empty.
  void take(OpList& o) noexcept {
    if (o.is_inline()) {
      if (!o.empty()) {
        new (end_++) Op(std::move(*o.data_));
        o.data_->~Op();
      }
    } else {
      data_ = o.data_;
      end_ = o.end_;
      cap_end_ = o.cap_end_;
      o.data_ = o.inline_op();
      o.cap_end_ = o.data_ + 1;
    }
    o.end_ = o.data_;
  }
  // Destroys the ops and frees the heap array (the list is left inline, empty).
  void release() {
    clear();
    if (!is_inline()) {
      std::free(data_);
      data_ = end_ = inline_op();
      cap_end_ = data_ + 1;
    }
  }

  Op* data_;     // inline_ or a heap array
  Op* end_;      // past the last op
  Op* cap_end_;  // past the storage
  alignas(Op) unsigned char inline_[sizeof(Op)];
};

// Extends delete run `last` by the delete of `len` units at `pos` starting at
// id `start` (the caller checked container, kind and counter adjacency):
// forward-deleting on at the same position, or backspacing on. Returns false
// when the delete must stay a separate op.
[[gnu::always_inline]] inline bool extend_delete(Op& last, int32_t pos, int32_t len,
                                                 const ID& start) {
  if (len > 0 && last.len > 0 && last.pos == pos && last.start_id.peer == start.peer &&
      last.start_id.counter + last.len == start.counter) {
    last.len += len;
    return true;
  }
  // Backspace: one unit just left of what `last` deleted, whose id is just
  // below it. The run keeps `pos` (its first unit) and counts down (len < 0);
  // start_id stays the leftmost (lowest) id, as Loro writes it.
  if (len == 1 && (last.len == 1 || last.len < 0)) {
    const int32_t width = last.len < 0 ? -last.len : 1;
    if (pos == last.pos - width && start.peer == last.start_id.peer &&
        start.counter + 1 == last.start_id.counter) {
      last.len = -(width + 1);
      last.start_id = start;
      return true;
    }
  }
  return false;
}

// Appends a fresh op to the open transaction (or a change's OpList), built
// in place (no Op moved). `open`: the list is the open transaction's own,
// which may grow long (see OpList::emplace_back_open).
inline Op& new_txn_op(OpList& txn_ops, OpKind kind, uint32_t container, Counter counter,
                      int32_t pos, bool open = false) {
  Op& op = open ? txn_ops.emplace_back_open() : txn_ops.emplace_back();
  op.kind = kind;
  op.container = container;
  op.counter = counter;
  op.pos = pos;
  return op;
}

// Whether a text insert into container `container` at unicode position
// `pos` continues text insert `run` (typing on): same container, starting
// where `run` ends. The one test every path that extends an insert uses
// (the typing buffer, the typing lane, the direct keystroke, the open
// transaction, the commit in place, joining ops in the log and the encoder).
[[gnu::always_inline]] inline bool continues_insert(const Op& run, uint32_t container,
                                                    int64_t pos) {
  return run.kind == OpKind::kTextInsert && run.container == container &&
         int64_t{run.pos} + static_cast<int64_t>(run.text.size()) == pos;
}

// Appends `o` to `last` when it simply continues it (same container, counters
// adjacent): typing on at the end of an insert, forward-deleting on at the
// same position, or backspacing on. Returns false when `o` must stay separate.
inline bool extend_op(Op& last, const Op& o) {
  if (last.container != o.container || last.kind != o.kind ||
      last.counter + last.atom_len() != o.counter) {
    return false;
  }
  if (o.kind == OpKind::kTextInsert && continues_insert(last, o.container, o.pos)) {
    last.text.append(o.text);
    return true;
  }
  return o.kind == OpKind::kSeqDelete && extend_delete(last, o.pos, o.len, o.start_id);
}

// Drops the first `k` units of `op` (0 < k < atom_len()).
Op slice_op(const Op& op, Counter k);

}  // namespace weft::crdt::detail

#endif  // WEFT_SRC_CRDT_OP_H_

// Op and its compact text storage (see op.h).
#include "crdt/op.h"

#include <algorithm>
#include <cstring>
#include <new>

#include "weft/base/utf.h"

namespace weft::crdt::detail {
namespace {

// Writes scalar value `cp` as UTF-8 at `out`; returns the bytes written.
size_t put_utf8(char* out, uint32_t cp) {
  if (cp < 0x80) {
    out[0] = static_cast<char>(cp);
    return 1;
  }
  if (cp < 0x800) {
    out[0] = static_cast<char>(0xC0 | (cp >> 6));
    out[1] = static_cast<char>(0x80 | (cp & 0x3F));
    return 2;
  }
  if (cp < 0x10000) {
    out[0] = static_cast<char>(0xE0 | (cp >> 12));
    out[1] = static_cast<char>(0x80 | ((cp >> 6) & 0x3F));
    out[2] = static_cast<char>(0x80 | (cp & 0x3F));
    return 3;
  }
  out[0] = static_cast<char>(0xF0 | (cp >> 18));
  out[1] = static_cast<char>(0x80 | ((cp >> 12) & 0x3F));
  out[2] = static_cast<char>(0x80 | ((cp >> 6) & 0x3F));
  out[3] = static_cast<char>(0x80 | (cp & 0x3F));
  return 4;
}

}  // namespace

void Op::ExtraDeleter::operator()(OpExtra* extra) const { delete extra; }

const std::vector<Value> Op::kNoValues;
const std::string Op::kNoKey;
const Value Op::kNoValue;

OpText& OpText::operator=(const OpText& o) {
  if (this == &o) return *this;
  clear();
  append_bytes(o.data(), o.bytes(), o.size());
  return *this;
}

OpText& OpText::operator=(OpText&& o) noexcept {
  if (this != &o) {
    release();
    bits_ = o.bits_;
    o.bits_ = 0;
  }
  return *this;
}

void OpText::clear() {
  Block* b = block();
  if (b && b->cap) {
    b->units = b->bytes = 0;  // keep the block for what comes next
  } else {
    bits_ = 0;  // empty, inline, or in a pool
  }
}

void OpText::append_bytes(const char* p, size_t n, size_t units, OpTextPool* pool) {
  if (n == 0) return;
  const size_t used = bytes();
  if (!block() && used + n <= kInlineMax) {
    // Stays inline (p may point into bits_: copy through a temporary).
    char tmp[8];
    std::memcpy(tmp, &bits_, 8);
    std::memmove(tmp + 1 + used, p, n);
    const size_t total_units = size() + units;
    tmp[0] = static_cast<char>(1 | (total_units << 1) | ((used + n) << 4));
    std::memcpy(&bits_, tmp, 8);
    return;
  }
  Block* b = block();
  if (!b || used + n > b->cap) {
    // Blocks are malloc'd: header + bytes rounded so the whole is a multiple of 16.
    size_t want = std::max(used + n, used + used / 2);
    want = ((want + sizeof(Block) + 15) & ~size_t{15}) - sizeof(Block);
    if (want >= (size_t{1} << 31)) throw std::length_error("op text over 2 GiB");
    Block* nb = pool ? pool->writable(b, want) : nullptr;
    if (nb == nullptr) {
      nb = static_cast<Block*>(std::malloc(sizeof(Block) + want));
      if (nb == nullptr) throw std::bad_alloc();
      nb->pooled = 0;
    }
    nb->cap = static_cast<uint32_t>(want) & 0x7FFFFFFF;
    if (nb == b) {  // grown in place
      std::memmove(reinterpret_cast<char*>(b + 1) + used, p, n);
    } else {
      nb->units = static_cast<uint32_t>(size());
      nb->bytes = static_cast<uint32_t>(used);
      char* nd = reinterpret_cast<char*>(nb + 1);
      std::memcpy(nd, data(), used);
      std::memcpy(nd + used, p, n);  // before freeing: p may point into the old block
      release();
      bits_ = reinterpret_cast<uintptr_t>(nb);
    }
  } else {
    std::memmove(reinterpret_cast<char*>(b + 1) + used, p, n);
  }
  b = block();
  b->bytes = static_cast<uint32_t>(used + n);
  b->units += static_cast<uint32_t>(units);
}

void OpText::assign(const uint32_t* cps, size_t n) {
  clear();
  append(cps, n);
}

void OpText::assign_utf8(std::string_view utf8, size_t units) {
  clear();
  append_bytes(utf8.data(), utf8.size(), units);
}

void OpText::assign_utf8(std::string_view utf8, size_t units, OpTextPool& pool) {
  if (utf8.size() <= kInlineMax) {
    assign_utf8(utf8, units);
    return;
  }
  release();
  bits_ = reinterpret_cast<uintptr_t>(pool.add(utf8, units));
}

void OpText::init_pooled(std::string_view utf8, size_t units, OpTextPool& pool) {
  bits_ = reinterpret_cast<uintptr_t>(pool.add(utf8, units));
}

char* OpTextPool::take(size_t need) {
  if (need > left_) {
    // Slabs double from 1 KiB to 64 KiB: a doc with a few long texts stays small.
    slab_ = std::min<size_t>(kSlabMax, slab_ == 0 ? kSlabMin : 2 * slab_);
    const size_t size = std::max(need, slab_);
    slabs_.emplace_back(new char[size]);  // not zeroed: every byte is written before use
    next_ = slabs_.back().get();
    left_ = size;
  }
  char* at = next_;
  next_ += need;
  left_ -= need;
  return at;
}

OpText::Block* OpTextPool::add(std::string_view utf8, size_t units) {
  using Block = OpText::Block;
  // Blocks stay 4-aligned (the header's alignment; the low bit tags inline texts).
  auto* b = reinterpret_cast<Block*>(take(block_size(utf8.size())));
  b->units = static_cast<uint32_t>(units);
  b->bytes = static_cast<uint32_t>(utf8.size());
  b->cap = 0;
  b->pooled = 1;
  std::memcpy(b + 1, utf8.data(), utf8.size());
  return b;
}

OpText::Block* OpTextPool::writable(OpText::Block* b, size_t cap) {
  using Block = OpText::Block;
  // The text typed on is most often the last one to have grown here.
  if (b && b->pooled && b->cap != 0 && reinterpret_cast<char*>(b) + block_size(b->cap) == next_) {
    const size_t more = block_size(cap) - block_size(b->cap);
    if (more <= left_) {
      next_ += more;
      left_ -= more;
      return b;
    }
  }
  auto* nb = reinterpret_cast<Block*>(take(block_size(cap)));
  nb->units = nb->bytes = 0;
  nb->pooled = 1;
  return nb;
}

void OpText::append(const uint32_t* cps, size_t n) {
  if (n == 0) return;
  const size_t used = bytes();
  if (is_inline_or_empty() && used + n <= kInlineMax) {
    // The keystroke case: a few ASCII characters written straight inline.
    uint32_t high = 0;
    for (size_t k = 0; k < n; ++k) high |= cps[k];
    if (high < 0x80) {
      char tmp[8];
      std::memcpy(tmp, &bits_, 8);
      for (size_t k = 0; k < n; ++k) tmp[1 + used + k] = static_cast<char>(cps[k]);
      tmp[0] = static_cast<char>(1 | ((size() + n) << 1) | ((used + n) << 4));
      std::memcpy(&bits_, tmp, 8);
      return;
    }
  }
  char small[64 * 4];
  std::string big;
  char* out = small;
  if (n > 64) {
    big.resize(4 * n);
    out = big.data();
  }
  uint32_t high = 0;
  for (size_t k = 0; k < n; ++k) high |= cps[k];
  size_t w = 0;
  if (high < 0x80) {
    for (size_t k = 0; k < n; ++k) out[k] = static_cast<char>(cps[k]);
    w = n;
  } else {
    for (size_t k = 0; k < n; ++k) w += put_utf8(out + w, cps[k]);
  }
  append_bytes(out, w, n);
}

void OpText::push_back(char32_t cp) {
  const auto c = static_cast<uint32_t>(cp);
  append(&c, 1);
}

void OpText::decode(size_t n, uint32_t* out) const {
  const std::string_view s = utf8();
  size_t at = 0;
  for (size_t k = 0; k < n; ++k) {
    const auto byte = static_cast<unsigned char>(s[at]);
    if (byte < 0x80) {
      out[k] = byte;
      ++at;
    } else {
      out[k] = static_cast<uint32_t>(decode_utf8_unchecked(s, at));
    }
  }
}

OpText OpText::substr(size_t k) const {
  OpText out;
  if (k >= size()) return out;
  const std::string_view s = utf8();
  const size_t at = byte_offset_of_unicode_unchecked(s, k);
  out.assign_utf8(s.substr(at), size() - k);
  return out;
}

void OpText::truncate(size_t keep) {
  if (keep >= size()) return;
  const size_t at = byte_offset_of_unicode_unchecked(utf8(), keep);
  Block* b = block();
  if (b && b->cap) {
    b->bytes = static_cast<uint32_t>(at);
    b->units = static_cast<uint32_t>(keep);
    return;
  }
  const OpText whole = *this;
  bits_ = 0;
  append_bytes(whole.data(), at, keep);
}

std::u32string OpText::to_u32() const {
  std::u32string out(size(), U'\0');
  std::vector<uint32_t> cps(size());
  decode(cps.size(), cps.data());
  for (size_t k = 0; k < cps.size(); ++k) out[k] = static_cast<char32_t>(cps[k]);
  return out;
}

Op& Op::operator=(const Op& o) {
  if (this == &o) return *this;
  start_id = o.start_id;
  kind = o.kind;
  info = o.info;
  container = o.container;
  counter = o.counter;
  pos = o.pos;
  len = o.len;
  text = o.text;
  extra_.reset(o.extra_ ? new OpExtra(*o.extra_) : nullptr);
  return *this;
}

void OpList::resize(size_t n) {
  while (size() > n) pop_back();
  reserve(n);
  while (size() < n) new (end_++) Op();
}

void OpList::grow(size_t n) {
  const size_t cap = std::max<size_t>(n, 2 * capacity());
  // An Op is trivially relocatable (its text and extra are owning pointers or
  // inline bytes, nothing points into the op itself): its bytes move as one
  // block (realloc: in place when the heap has room after it) and the old
  // copies are dropped without running their destructors.
  const size_t n_ops = size();
  Op* grown = nullptr;
  if (is_inline()) {
    grown = static_cast<Op*>(std::malloc(cap * sizeof(Op)));
    if (grown != nullptr && n_ops != 0)
      std::memcpy(static_cast<void*>(grown), static_cast<const void*>(inline_), sizeof(Op));
  } else {
    grown = static_cast<Op*>(std::realloc(static_cast<void*>(data_), cap * sizeof(Op)));
  }
  if (grown == nullptr) throw std::bad_alloc();
  data_ = grown;
  end_ = grown + n_ops;
  cap_end_ = grown + cap;
}

void OpList::shrink_to_fit() {
  const size_t n_ops = size();
  if (capacity() < kLongOps || n_ops == 0 || capacity() - n_ops <= capacity() / 4) return;
  auto* p = static_cast<Op*>(std::realloc(static_cast<void*>(data_), n_ops * sizeof(Op)));
  if (p == nullptr) return;  // keeping the larger block is fine
  data_ = p;
  end_ = cap_end_ = p + n_ops;
}

void OpList::append_copies(const Op* ops, size_t n) {
  reserve(size() + n);
  for (size_t k = 0; k < n; ++k) new (end_++) Op(ops[k]);
}

Op slice_op(const Op& op, Counter k) {
  Op o = op;
  o.counter = op.counter + k;
  switch (op.kind) {
    case OpKind::kTextInsert:
      o.text = op.text.substr(k);
      o.pos = op.pos + k;
      break;
    case OpKind::kListInsert:
      o.mutable_values().assign(op.values().begin() + k, op.values().end());
      o.pos = op.pos + k;
      break;
    case OpKind::kSeqDelete:
      if (op.len > 0) {
        o.len = op.len - k;
        o.start_id.counter = op.start_id.counter + k;
      } else {
        o.len = op.len + k;  // backspace run: unit k deletes pos - k
        o.pos = op.pos - k;
      }
      break;
    default:
      break;
  }
  return o;
}

}  // namespace weft::crdt::detail

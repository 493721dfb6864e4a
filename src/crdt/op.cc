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

const std::vector<Value> Op::kNoValues;
const std::string Op::kNoKey;
const Value Op::kNoValue;

OpText::OpText(const OpText& o) {
  if (o.b_) assign_utf8(o.utf8(), o.size());
}

OpText& OpText::operator=(const OpText& o) {
  if (this == &o) return *this;
  if (o.b_) {
    assign_utf8(o.utf8(), o.size());
  } else {
    std::free(b_);
    b_ = nullptr;
  }
  return *this;
}

OpText& OpText::operator=(OpText&& o) noexcept {
  if (this != &o) {
    std::free(b_);
    b_ = o.b_;
    o.b_ = nullptr;
  }
  return *this;
}

char* OpText::reserve_more(size_t more) {
  const size_t used = b_ ? b_->bytes : 0;
  const size_t cap = b_ ? b_->cap : 0;
  if (used + more > cap) {
    // Blocks are malloc'd: header + bytes rounded so the whole is a multiple of 16.
    size_t want = std::max(used + more, used + used / 2);
    want = ((want + sizeof(Block) + 15) & ~size_t{15}) - sizeof(Block);
    auto* nb = static_cast<Block*>(std::realloc(b_, sizeof(Block) + want));
    if (nb == nullptr) throw std::bad_alloc();
    if (b_ == nullptr) nb->units = nb->bytes = 0;
    nb->cap = static_cast<uint32_t>(want);
    b_ = nb;
  }
  return data() + used;
}

void OpText::assign(const uint32_t* cps, size_t n) {
  if (b_) b_->units = b_->bytes = 0;
  append(cps, n);
}

void OpText::assign_utf8(std::string_view utf8, size_t units) {
  if (b_) b_->units = b_->bytes = 0;
  if (utf8.empty()) return;
  std::memcpy(reserve_more(utf8.size()), utf8.data(), utf8.size());
  b_->bytes += static_cast<uint32_t>(utf8.size());
  b_->units += static_cast<uint32_t>(units);
}

void OpText::append(const uint32_t* cps, size_t n) {
  if (n == 0) return;
  char* out = reserve_more(4 * n);
  size_t w = 0;
  for (size_t k = 0; k < n; ++k) w += put_utf8(out + w, cps[k]);
  b_->bytes += static_cast<uint32_t>(w);
  b_->units += static_cast<uint32_t>(n);
}

void OpText::append(const OpText& o) {
  if (o.empty()) return;
  const std::string_view bytes = o.utf8();
  const uint32_t units = o.b_->units;  // read before a self-append reallocates
  std::memcpy(reserve_more(bytes.size()), o.data(), bytes.size());
  b_->bytes += static_cast<uint32_t>(bytes.size());
  b_->units += units;
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
  b_->bytes = static_cast<uint32_t>(byte_offset_of_unicode_unchecked(utf8(), keep));
  b_->units = static_cast<uint32_t>(keep);
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
  extra_ = o.extra_ ? std::make_unique<OpExtra>(*o.extra_) : nullptr;
  return *this;
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

// Loro binary primitives: envelope, xxHash32, LEB128 / postcard integers and
// the serde_columnar strategies (see loro_binary.h).
#include <bit>
#include <cstring>

#include "crdt/loro_binary.h"

namespace weft::crdt::detail::loro {

Status corrupt(std::string_view what) {
  return data_loss("corrupt Loro binary data: " + std::string(what));
}

// ---- xxHash32 (the published algorithm: four lanes over 16-byte stripes,
// then the tail and the avalanche).
namespace {
constexpr uint32_t kP1 = 0x9E3779B1u, kP2 = 0x85EBCA77u, kP3 = 0xC2B2AE3Du, kP4 = 0x27D4EB2Fu,
                   kP5 = 0x165667B1u;
uint32_t load32(const char* p) {
  uint32_t v;
  std::memcpy(&v, p, 4);
  return v;  // little-endian host (checked in op.h)
}
uint32_t lane(uint32_t acc, uint32_t input) { return std::rotl(acc + input * kP2, 13) * kP1; }
}  // namespace

uint32_t xxhash32(std::string_view data, uint32_t seed) {
  const char* p = data.data();
  const char* end = p + data.size();
  uint32_t h;
  if (data.size() >= 16) {
    uint32_t v1 = seed + kP1 + kP2, v2 = seed + kP2, v3 = seed, v4 = seed - kP1;
    for (; end - p >= 16; p += 16) {
      v1 = lane(v1, load32(p));
      v2 = lane(v2, load32(p + 4));
      v3 = lane(v3, load32(p + 8));
      v4 = lane(v4, load32(p + 12));
    }
    h = std::rotl(v1, 1) + std::rotl(v2, 7) + std::rotl(v3, 12) + std::rotl(v4, 18);
  } else {
    h = seed + kP5;
  }
  h += static_cast<uint32_t>(data.size());
  for (; end - p >= 4; p += 4) h = std::rotl(h + load32(p) * kP3, 17) * kP4;
  for (; p < end; ++p) h = std::rotl(h + static_cast<uint8_t>(*p) * kP5, 11) * kP1;
  h ^= h >> 15;
  h *= kP2;
  h ^= h >> 13;
  h *= kP3;
  h ^= h >> 16;
  return h;
}

// ---- envelope
std::string wrap(uint16_t mode, std::string_view body) {
  std::string out;
  out.reserve(kHeaderSize + body.size());
  out.append(kMagic);
  out.append(16, '\0');
  out.push_back(static_cast<char>(mode >> 8));
  out.push_back(static_cast<char>(mode & 0xFF));
  out.append(body);
  const uint32_t sum = xxhash32(std::string_view(out).substr(20), kSeed);
  for (int k = 0; k < 4; ++k) out[16 + k] = static_cast<char>((sum >> (8 * k)) & 0xFF);
  return out;
}

Result<uint16_t> unwrap(std::string_view data, std::string_view* body) {
  if (!is_loro_binary(data)) return corrupt("missing the 'loro' magic");
  if (data.size() < kHeaderSize) return corrupt("the 22-byte header is truncated");
  uint32_t stored = 0;
  for (int k = 0; k < 4; ++k) stored |= uint32_t{static_cast<uint8_t>(data[16 + k])} << (8 * k);
  if (xxhash32(data.substr(20), kSeed) != stored) return corrupt("checksum mismatch");
  const uint16_t mode = static_cast<uint16_t>((static_cast<uint8_t>(data[20]) << 8) |
                                              static_cast<uint8_t>(data[21]));
  if (mode != kModeFastSnapshot && mode != kModeFastUpdates) {
    return unimplemented("Loro binary encode mode " + std::to_string(mode) +
                         " is not supported (only FastSnapshot = 3 and FastUpdates = 4)");
  }
  *body = data.substr(kHeaderSize);
  return mode;
}

// ---- Reader
void Reader::fail(std::string_view what) {
  if (error_.empty()) error_ = std::string(what);
  pos_ = data_.size();
}

uint64_t Reader::uleb_slow() {
  uint64_t v = 0;
  for (int shift = 0; shift < 64; shift += 7) {
    if (pos_ >= data_.size()) return truncated();
    const uint8_t b = static_cast<uint8_t>(data_[pos_++]);
    if (shift == 63 && b > 1) break;
    v |= uint64_t{b & 0x7Fu} << shift;
    if (b < 0x80) return v;
  }
  fail("LEB128 integer overflows 64 bits");
  return 0;
}

int64_t Reader::sleb() {
  uint64_t v = 0;
  int shift = 0;
  for (;;) {
    if (pos_ >= data_.size()) return truncated();
    const uint8_t b = static_cast<uint8_t>(data_[pos_++]);
    if (shift == 63 && b != 0 && b != 0x7F) {
      fail("signed LEB128 integer overflows 64 bits");
      return 0;
    }
    v |= uint64_t{b & 0x7Fu} << shift;
    shift += 7;
    if (b < 0x80) {
      if (shift < 64 && (b & 0x40)) v |= ~uint64_t{0} << shift;
      return static_cast<int64_t>(v);
    }
    if (shift > 63) {
      fail("signed LEB128 integer overflows 64 bits");
      return 0;
    }
  }
}

int64_t Reader::zigzag128_slow() {
  unsigned __int128 v = 0;
  for (int k = 0; k < 19; ++k) {
    if (pos_ >= data_.size()) return truncated();
    const uint8_t b = static_cast<uint8_t>(data_[pos_++]);
    v |= static_cast<unsigned __int128>(b & 0x7Fu) << (7 * k);
    if (b < 0x80) {
      if (v >> 64) {
        fail("delta outside the 64-bit range");
        return 0;
      }
      const uint64_t u = static_cast<uint64_t>(v);
      return static_cast<int64_t>(u >> 1) ^ -static_cast<int64_t>(u & 1);
    }
  }
  fail("i128 varint is too long");
  return 0;
}

std::string_view Reader::raw(size_t n) {
  if (n > remaining()) {
    fail("unexpected end of data");
    return {};
  }
  std::string_view v = data_.substr(pos_, n);
  pos_ += n;
  return v;
}

uint16_t Reader::u16le() {
  std::string_view b = raw(2);
  if (b.empty()) return 0;
  return static_cast<uint16_t>(static_cast<uint8_t>(b[0]) | (static_cast<uint8_t>(b[1]) << 8));
}
uint16_t Reader::u16be() {
  std::string_view b = raw(2);
  if (b.empty()) return 0;
  return static_cast<uint16_t>((static_cast<uint8_t>(b[0]) << 8) | static_cast<uint8_t>(b[1]));
}
uint32_t Reader::u32le() {
  std::string_view b = raw(4);
  return b.empty() ? 0 : load32(b.data());
}
uint64_t Reader::u64le() {
  std::string_view b = raw(8);
  if (b.empty()) return 0;
  uint64_t v;
  std::memcpy(&v, b.data(), 8);
  return v;
}
double Reader::f64be() {
  std::string_view b = raw(8);
  if (b.empty()) return 0;
  uint64_t v = 0;
  for (char c : b) v = (v << 8) | static_cast<uint8_t>(c);
  return std::bit_cast<double>(v);
}

uint64_t Reader::count(uint64_t max, std::string_view what) {
  const uint64_t v = uleb();
  if (v > max) {
    fail(std::string(what) + " " + std::to_string(v) + " exceeds what the data can hold");
    return 0;
  }
  return v;
}

// ---- column decoders
namespace {

// One AnyRle segment header: the run (> 0) or literal (< 0) length, checked
// against the room `room` left in the column.
int64_t segment(Reader& r, size_t room) {
  const int64_t len = r.zigzag();
  if (!r.ok()) return 0;
  if (len == 0) {
    r.fail("RLE segment of length 0");
    return 0;
  }
  const uint64_t n = len < 0 ? 0 - static_cast<uint64_t>(len) : static_cast<uint64_t>(len);
  if (n > room) {
    r.fail("RLE column holds more values than expected");
    return 0;
  }
  return len;
}

template <typename T, typename ReadOne>
void read_rle(Reader& r, size_t n, bool to_end, std::vector<T>& out, ReadOne read_one) {
  out.clear();
  while (r.ok() && (to_end ? !r.at_end() : out.size() < n)) {
    const int64_t len = segment(r, n - out.size());
    if (len > 0) {
      const T v = read_one();
      out.insert(out.end(), static_cast<size_t>(len), v);
    } else {
      for (int64_t k = 0; k < -len && r.ok(); ++k) out.push_back(read_one());
    }
  }
  if (!to_end && r.ok() && out.size() != n) r.fail("RLE column holds too few values");
}

}  // namespace

void read_bool_rle(Reader& r, size_t n, std::vector<uint8_t>& out) {
  out.clear();
  uint8_t value = 0;
  while (r.ok() && out.size() < n) {
    const uint64_t len = r.count(n - out.size(), "boolean run length");
    out.insert(out.end(), static_cast<size_t>(len), value);
    value ^= 1;
  }
}

void read_any_rle(Reader& r, size_t n, std::vector<uint64_t>& out) {
  read_rle(r, n, false, out, [&] { return r.uleb(); });
}
void read_any_rle_all(Reader& r, size_t max, std::vector<uint64_t>& out) {
  read_rle(r, max, true, out, [&] { return r.uleb(); });
}
void read_any_rle_u8_all(Reader& r, size_t max, std::vector<uint8_t>& out) {
  read_rle(r, max, true, out, [&] { return r.u8(); });
}

void read_delta_rle_all(Reader& r, size_t max, int64_t lo, int64_t hi, std::vector<int64_t>& out) {
  // The deltas' AnyRle runs summed as they are read (no column of deltas).
  out.clear();
  int64_t v = 0;
  auto add = [&](int64_t d) {
    if (__builtin_add_overflow(v, d, &v) || v < lo || v > hi) {
      r.fail("delta-encoded value out of range");
      return false;
    }
    out.push_back(v);
    return true;
  };
  while (r.ok() && !r.at_end()) {
    const int64_t len = segment(r, max - out.size());
    if (len > 0) {
      const int64_t d = r.zigzag128();
      if (!r.ok()) return;
      out.reserve(out.size() + static_cast<size_t>(len));
      for (int64_t k = 0; k < len; ++k)
        if (!add(d)) return;
    } else {
      for (int64_t k = 0; k < -len && r.ok(); ++k) {
        const int64_t d = r.zigzag128();
        if (!r.ok() || !add(d)) return;
      }
    }
  }
}

void read_delta_of_delta(Reader& r, size_t n, std::vector<int64_t>& out) {
  out.clear();
  const uint8_t has_first = r.u8();
  if (has_first > 1) return r.fail("bad delta-of-delta head");
  if (!has_first) {
    const uint8_t used = r.u8();
    if (r.ok() && (n != 0 || used != 0)) r.fail("delta-of-delta column holds too few values");
    return;
  }
  int64_t value = r.zigzag();
  const uint8_t used = r.u8();
  if (!r.ok()) return;
  if (n == 0) return r.fail("delta-of-delta column holds too many values");
  if (used > 8) return r.fail("bad delta-of-delta bit count");
  // Each further value takes at least one bit.
  if (n - 1 > r.remaining() * 8) return r.fail("delta-of-delta column is truncated");
  out.reserve(n);
  out.push_back(value);
  // The bitstream, MSB first, over the rest of the reader.
  Reader probe = r;
  std::string_view bits = probe.rest();
  size_t pos = 0;
  const size_t total = bits.size() * 8;
  auto take = [&](int k) -> uint64_t {
    if (total - pos < static_cast<size_t>(k)) {
      pos = total + 1;
      return 0;
    }
    uint64_t v = 0;
    for (int i = 0; i < k; ++i, ++pos) {
      v = (v << 1) | ((static_cast<uint8_t>(bits[pos >> 3]) >> (7 - (pos & 7))) & 1);
    }
    return v;
  };
  int64_t delta = 0;
  while (out.size() < n) {
    int64_t dod;
    if (take(1) == 0) {
      dod = 0;
    } else if (take(1) == 0) {
      dod = static_cast<int64_t>(take(7)) - 63;
    } else if (take(1) == 0) {
      dod = static_cast<int64_t>(take(9)) - 255;
    } else if (take(1) == 0) {
      dod = static_cast<int64_t>(take(12)) - 2047;
    } else if (take(1) == 0) {
      dod = static_cast<int64_t>(take(21)) - ((1 << 20) - 1);
    } else {
      dod = static_cast<int64_t>(take(64));
    }
    if (pos > total) return r.fail("delta-of-delta bitstream is truncated");
    if (__builtin_add_overflow(delta, dod, &delta) || __builtin_add_overflow(value, delta, &value))
      return r.fail("delta-of-delta value overflows");
    out.push_back(value);
  }
  const size_t nbytes = (pos + 7) / 8;
  const size_t last = pos % 8 == 0 ? (pos == 0 ? 0 : 8) : pos % 8;
  if (used != last) return r.fail("delta-of-delta bit count does not match its bitstream");
  r.raw(nbytes);
}

// ---- writers
void put_uleb(std::string& out, uint64_t v) {
  while (v >= 0x80) {
    out.push_back(static_cast<char>((v & 0x7F) | 0x80));
    v >>= 7;
  }
  out.push_back(static_cast<char>(v));
}

void put_sleb(std::string& out, int64_t v) {
  for (;;) {
    const uint8_t b = v & 0x7F;
    v >>= 7;
    if ((v == 0 && !(b & 0x40)) || (v == -1 && (b & 0x40))) {
      out.push_back(static_cast<char>(b));
      return;
    }
    out.push_back(static_cast<char>(b | 0x80));
  }
}

void put_u32le(std::string& out, uint32_t v) {
  for (int k = 0; k < 4; ++k) out.push_back(static_cast<char>((v >> (8 * k)) & 0xFF));
}
void put_u64le(std::string& out, uint64_t v) {
  for (int k = 0; k < 8; ++k) out.push_back(static_cast<char>((v >> (8 * k)) & 0xFF));
}
void put_f64be(std::string& out, double d) {
  const uint64_t v = std::bit_cast<uint64_t>(d);
  for (int k = 7; k >= 0; --k) out.push_back(static_cast<char>((v >> (8 * k)) & 0xFF));
}
void put_bytes(std::string& out, std::string_view bytes) {
  put_uleb(out, bytes.size());
  out.append(bytes);
}

void write_bool_rle(std::string& out, const std::vector<uint8_t>& values) {
  uint8_t state = 0;
  uint64_t run = 0;
  for (uint8_t v : values) {
    if ((v != 0) == (state != 0)) {
      ++run;
    } else {
      put_uleb(out, run);
      state ^= 1;
      run = 1;
    }
  }
  if (!values.empty()) put_uleb(out, run);
}

namespace {
// AnyRle: a value repeated at least twice becomes a run, others gather into
// literal segments.
template <typename T, typename Put>
void write_rle(std::string& out, const std::vector<T>& values, Put put) {
  size_t lit_start = 0, i = 0;
  auto flush = [&](size_t end) {
    if (end > lit_start) {
      put_zigzag(out, -static_cast<int64_t>(end - lit_start));
      for (size_t k = lit_start; k < end; ++k) put(values[k]);
    }
  };
  while (i < values.size()) {
    size_t j = i + 1;
    while (j < values.size() && values[j] == values[i]) ++j;
    if (j - i >= 2) {
      flush(i);
      put_zigzag(out, static_cast<int64_t>(j - i));
      put(values[i]);
      lit_start = j;
    }
    i = j;
  }
  flush(values.size());
}
}  // namespace

void write_any_rle(std::string& out, const std::vector<uint64_t>& values) {
  write_rle(out, values, [&](uint64_t v) { put_uleb(out, v); });
}
void write_any_rle_u8(std::string& out, const std::vector<uint8_t>& values) {
  write_rle(out, values, [&](uint8_t v) { out.push_back(static_cast<char>(v)); });
}
void write_delta_rle(std::string& out, const std::vector<int64_t>& values) {
  std::vector<int64_t> deltas(values.size());
  int64_t prev = 0;
  for (size_t k = 0; k < values.size(); ++k) {
    deltas[k] = values[k] - prev;
    prev = values[k];
  }
  write_rle(out, deltas, [&](int64_t d) { put_zigzag(out, d); });
}

void write_delta_of_delta(std::string& out, const std::vector<int64_t>& values) {
  if (values.empty()) {
    out.append(2, '\0');
    return;
  }
  out.push_back(1);
  put_zigzag(out, values[0]);
  if (values.size() == 1) {
    out.push_back(0);
    return;
  }
  std::string bits;
  uint8_t cur = 0;
  int used = 0;
  auto put_bits = [&](uint64_t v, int k) {
    for (int s = k - 1; s >= 0; --s) {
      cur = static_cast<uint8_t>((cur << 1) | ((v >> s) & 1));
      if (++used == 8) {
        bits.push_back(static_cast<char>(cur));
        cur = 0;
        used = 0;
      }
    }
  };
  int64_t prev_delta = 0;
  for (size_t k = 1; k < values.size(); ++k) {
    const int64_t delta = values[k] - values[k - 1];
    const int64_t dod = delta - prev_delta;
    prev_delta = delta;
    if (dod == 0) {
      put_bits(0, 1);
    } else if (dod >= -63 && dod <= 64) {
      put_bits(0b10, 2);
      put_bits(static_cast<uint64_t>(dod + 63), 7);
    } else if (dod >= -255 && dod <= 256) {
      put_bits(0b110, 3);
      put_bits(static_cast<uint64_t>(dod + 255), 9);
    } else if (dod >= -2047 && dod <= 2048) {
      put_bits(0b1110, 4);
      put_bits(static_cast<uint64_t>(dod + 2047), 12);
    } else if (dod >= -((1 << 20) - 1) && dod <= (1 << 20)) {
      put_bits(0b11110, 5);
      put_bits(static_cast<uint64_t>(dod + (1 << 20) - 1), 21);
    } else {
      put_bits(0b11111, 5);
      put_bits(static_cast<uint64_t>(dod), 64);
    }
  }
  int last = 8;
  if (used != 0) {
    bits.push_back(static_cast<char>(cur << (8 - used)));
    last = used;
  }
  out.push_back(static_cast<char>(last));
  out.append(bits);
}

}  // namespace weft::crdt::detail::loro

#include "weft/base/varint.h"

#include <cstring>

namespace weft {

void put_uvarint(std::string& out, uint64_t value) {
  while (value >= 0x80) {
    out += static_cast<char>((value & 0x7F) | 0x80);
    value >>= 7;
  }
  out += static_cast<char>(value);
}

void put_svarint(std::string& out, int64_t value) { put_uvarint(out, zigzag_encode(value)); }

void put_bytes(std::string& out, std::string_view bytes) {
  put_uvarint(out, bytes.size());
  out.append(bytes);
}

void put_fixed32(std::string& out, uint32_t value) {
  for (int i = 0; i < 4; ++i) out += static_cast<char>((value >> (8 * i)) & 0xFF);
}

void put_fixed64(std::string& out, uint64_t value) {
  for (int i = 0; i < 8; ++i) out += static_cast<char>((value >> (8 * i)) & 0xFF);
}

Result<uint64_t> ByteReader::read_uvarint() {
  uint64_t result = 0;
  for (int shift = 0; shift < 70; shift += 7) {
    if (pos_ >= data_.size()) return data_loss("truncated varint");
    uint8_t byte = static_cast<uint8_t>(data_[pos_++]);
    if (shift == 63 && byte > 1) return data_loss("varint overflows 64 bits");
    result |= static_cast<uint64_t>(byte & 0x7F) << shift;
    if ((byte & 0x80) == 0) return result;
  }
  return data_loss("varint longer than 10 bytes");
}

Result<int64_t> ByteReader::read_svarint() {
  WEFT_ASSIGN_OR_RETURN(uint64_t raw, read_uvarint());
  return zigzag_decode(raw);
}

Result<uint8_t> ByteReader::read_u8() {
  if (pos_ >= data_.size()) return data_loss("truncated input: expected 1 more byte");
  return static_cast<uint8_t>(data_[pos_++]);
}

Result<uint32_t> ByteReader::read_fixed32() {
  WEFT_ASSIGN_OR_RETURN(std::string_view raw, read_raw(4));
  uint32_t v = 0;
  for (int i = 3; i >= 0; --i) v = (v << 8) | static_cast<uint8_t>(raw[i]);
  return v;
}

Result<uint64_t> ByteReader::read_fixed64() {
  WEFT_ASSIGN_OR_RETURN(std::string_view raw, read_raw(8));
  uint64_t v = 0;
  for (int i = 7; i >= 0; --i) v = (v << 8) | static_cast<uint8_t>(raw[i]);
  return v;
}

Result<std::string_view> ByteReader::read_raw(size_t n) {
  if (n > remaining()) {
    return data_loss("truncated input: expected " + std::to_string(n) + " bytes, " +
                     std::to_string(remaining()) + " left");
  }
  std::string_view out = data_.substr(pos_, n);
  pos_ += n;
  return out;
}

Result<std::string_view> ByteReader::read_bytes() {
  WEFT_ASSIGN_OR_RETURN(uint64_t n, read_uvarint());
  if (n > remaining()) {
    return data_loss("length prefix " + std::to_string(n) + " exceeds the " +
                     std::to_string(remaining()) + " bytes left");
  }
  return read_raw(static_cast<size_t>(n));
}

Result<uint64_t> ByteReader::read_count(uint64_t max, std::string_view what) {
  WEFT_ASSIGN_OR_RETURN(uint64_t n, read_uvarint());
  if (n > max) {
    return data_loss(std::string(what) + " " + std::to_string(n) + " exceeds the limit " +
                     std::to_string(max));
  }
  return n;
}

}  // namespace weft

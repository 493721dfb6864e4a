// LEB128 variable-length integers (unsigned, and signed via zig-zag) and a
// bounds-checked reader for decoding untrusted bytes.
//
// ByteReader never reads past its input: every read returns an error
// (kDataLoss, "truncated ...") instead, so decoders built on it are safe
// against hostile or corrupt data.
//
// Thread safety: ByteReader is a cursor over borrowed bytes; one thread at a
// time. The free functions are stateless.
#ifndef WEFT_BASE_VARINT_H_
#define WEFT_BASE_VARINT_H_

#include <cstdint>
#include <string>
#include <string_view>

#include "weft/base/status.h"

namespace weft {

// Appends `value` as unsigned LEB128 (1 to 10 bytes).
void put_uvarint(std::string& out, uint64_t value);
// Appends `value` zig-zag encoded, so small negative numbers stay short.
void put_svarint(std::string& out, int64_t value);
// Appends a length-prefixed byte string.
void put_bytes(std::string& out, std::string_view bytes);
// Appends fixed-width little-endian integers.
void put_fixed32(std::string& out, uint32_t value);
void put_fixed64(std::string& out, uint64_t value);

inline uint64_t zigzag_encode(int64_t v) {
  return (static_cast<uint64_t>(v) << 1) ^ static_cast<uint64_t>(v >> 63);
}
inline int64_t zigzag_decode(uint64_t v) {
  return static_cast<int64_t>(v >> 1) ^ -static_cast<int64_t>(v & 1);
}

class ByteReader {
 public:
  explicit ByteReader(std::string_view data) : data_(data) {}

  size_t remaining() const { return data_.size() - pos_; }
  size_t position() const { return pos_; }
  bool at_end() const { return pos_ == data_.size(); }

  // Each read advances on success and leaves the cursor unspecified on error.
  // Errors: kDataLoss when the input ends early or a varint is over 10 bytes.
  Result<uint64_t> read_uvarint();
  Result<int64_t> read_svarint();
  Result<uint8_t> read_u8();
  Result<uint32_t> read_fixed32();
  Result<uint64_t> read_fixed64();
  // Reads exactly `n` bytes (a view into the input).
  Result<std::string_view> read_raw(size_t n);
  // Reads a length-prefixed byte string; kDataLoss if the length exceeds the rest.
  Result<std::string_view> read_bytes();
  // Reads an unsigned varint that must be <= `max` (a count or size from
  // untrusted input); kDataLoss naming `what` otherwise.
  Result<uint64_t> read_count(uint64_t max, std::string_view what);

 private:
  std::string_view data_;
  size_t pos_ = 0;
};

}  // namespace weft

#endif  // WEFT_BASE_VARINT_H_

// Internal: the pieces of Loro's binary format (loro-dev/loro docs/encoding.md)
// that weft reads and writes: the 22-byte envelope, LEB128 / postcard
// integers, xxHash32, and the serde_columnar column strategies (BoolRle,
// AnyRle, DeltaRle, DeltaOfDelta). The change-block codec on top of them
// lives in loro_binary.cc, the snapshot's SSTable in loro_binary_snapshot.cc.
//
// Decoding never trusts a count: a Reader fails (sticky, first message kept)
// instead of reading past its input, and every column decoder is given the
// most values it may produce.
//
// Thread safety: stateless functions; a Reader is one thread's cursor.
#ifndef WEFT_SRC_CRDT_LORO_BINARY_H_
#define WEFT_SRC_CRDT_LORO_BINARY_H_

#include <cstdint>
#include <deque>
#include <string>
#include <string_view>
#include <vector>

#include "weft/base/status.h"
#include "weft/crdt/ids.h"

namespace weft::crdt::detail::loro {

inline constexpr std::string_view kMagic = "loro";
inline constexpr size_t kHeaderSize = 22;
inline constexpr uint32_t kSeed = 0x4f524f4c;  // "LORO" read little-endian
inline constexpr uint16_t kModeFastSnapshot = 3;
inline constexpr uint16_t kModeFastUpdates = 4;

inline bool is_loro_binary(std::string_view data) {
  return data.size() >= 4 && data.substr(0, 4) == kMagic;
}

// kDataLoss "corrupt Loro binary data: <what>".
Status corrupt(std::string_view what);

// xxHash32 of `data` with `seed`.
uint32_t xxhash32(std::string_view data, uint32_t seed);

// Wraps `body` in the envelope: magic, 12 zero bytes, the checksum of the
// mode and body, the mode (big-endian).
std::string wrap(uint16_t mode, std::string_view body);
// Checks magic, size and checksum; returns the mode and sets `body`.
// Errors: kDataLoss (corrupt), kUnimplemented (a mode other than 3 or 4).
Result<uint16_t> unwrap(std::string_view data, std::string_view* body);

// A bounds-checked cursor with a sticky error: after the first failure every
// read returns 0 / empty, and ok() is false with that failure's message.
class Reader {
 public:
  explicit Reader(std::string_view data) : data_(data) {}

  bool ok() const { return error_.empty(); }
  const std::string& error() const { return error_; }
  Status status() const { return ok() ? Status() : corrupt(error_); }
  size_t remaining() const { return data_.size() - pos_; }
  bool at_end() const { return pos_ == data_.size(); }
  // Records `what` (the first failure wins) and moves to the end.
  void fail(std::string_view what);

  uint8_t u8() {
    if (pos_ >= data_.size()) return truncated();
    return static_cast<uint8_t>(data_[pos_++]);
  }
  // Unsigned LEB128 (at most 10 bytes, fitting in 64 bits).
  uint64_t uleb() {
    if (pos_ < data_.size() && static_cast<uint8_t>(data_[pos_]) < 0x80)
      return static_cast<uint8_t>(data_[pos_++]);
    return uleb_slow();
  }
  // Signed LEB128 with sign extension (the `leb128` crate's signed form).
  int64_t sleb();
  // Postcard signed integer: zig-zag, then unsigned LEB128.
  int64_t zigzag() {
    uint64_t v = uleb();
    return static_cast<int64_t>(v >> 1) ^ -static_cast<int64_t>(v & 1);
  }
  // Postcard i128 (zig-zag LEB128 of up to 19 bytes); fails outside i64.
  int64_t zigzag128() {
    if (pos_ < data_.size() && static_cast<uint8_t>(data_[pos_]) < 0x80) {  // most deltas
      const uint64_t u = static_cast<uint8_t>(data_[pos_++]);
      return static_cast<int64_t>(u >> 1) ^ -static_cast<int64_t>(u & 1);
    }
    return zigzag128_slow();
  }
  uint16_t u16le();
  uint16_t u16be();
  uint32_t u32le();
  uint64_t u64le();
  double f64be();
  // Exactly `n` bytes (a view into the input).
  std::string_view raw(size_t n);
  // uleb length, then that many bytes.
  std::string_view bytes() { return raw(static_cast<size_t>(count(remaining(), "byte length"))); }
  // An unsigned LEB128 that must be <= `max`; fails naming `what` otherwise.
  uint64_t count(uint64_t max, std::string_view what);
  std::string_view rest() { return raw(remaining()); }

 private:
  uint64_t uleb_slow();
  int64_t zigzag128_slow();
  uint8_t truncated() {
    fail("unexpected end of data");
    return 0;
  }
  std::string_view data_;
  size_t pos_ = 0;
  std::string error_;
};

// The change blocks of a FastSnapshot body: its ChangeStore SSTable's
// entries keyed by a 12-byte ID (decompressed blocks are kept in `storage`).
// The state sections are not read (the changes are replayed). Errors:
// kDataLoss (corrupt), kUnimplemented (a shallow snapshot).
Status snapshot_blocks(std::string_view body, std::deque<std::string>& storage,
                       std::vector<std::string_view>& blocks);
// One LZ4 frame decompressed (at most `max_out` bytes).
Result<std::string> lz4_frame_decode(std::string_view frame, size_t max_out);
// A non-empty SSTable (encoding.md §4) of `entries`, sorted by key, stored
// uncompressed.
std::string write_sstable(const std::vector<std::pair<std::string, std::string>>& entries);

// A FastSnapshot body of change `blocks` (keyed by their first ID) and the
// encoded end version and frontiers. Its state is the replay form (the state
// section "E", a shallow root at the empty frontier): the importer replays
// the changes.
std::string snapshot_body(const std::vector<std::pair<ID, std::string>>& blocks,
                          const std::string& vv, const std::string& frontiers);

// ---- column decoders: each reads exactly `n` values (or, for the *_all
// forms, values until the reader's end, at most `max`) and fails otherwise.
// BoolRle: alternating run lengths, the first of false values.
void read_bool_rle(Reader& r, size_t n, std::vector<uint8_t>& out);
// AnyRle of postcard unsigned integers (u32 / usize columns).
void read_any_rle(Reader& r, size_t n, std::vector<uint64_t>& out);
// AnyRle of raw bytes (u8 columns), to the end.
void read_any_rle_u8_all(Reader& r, size_t max, std::vector<uint8_t>& out);
// AnyRle of postcard unsigned integers, to the end.
void read_any_rle_all(Reader& r, size_t max, std::vector<uint64_t>& out);
// DeltaRle (AnyRle of i128 deltas from 0), to the end; the running value
// must stay within [lo, hi].
void read_delta_rle_all(Reader& r, size_t max, int64_t lo, int64_t hi, std::vector<int64_t>& out);
// DeltaOfDelta: Option<i64> first value, last-byte bit count, bitstream.
void read_delta_of_delta(Reader& r, size_t n, std::vector<int64_t>& out);

// ---- writers
void put_uleb(std::string& out, uint64_t v);
void put_sleb(std::string& out, int64_t v);
inline void put_zigzag(std::string& out, int64_t v) {
  put_uleb(out, (static_cast<uint64_t>(v) << 1) ^ static_cast<uint64_t>(v >> 63));
}
void put_u32le(std::string& out, uint32_t v);
void put_u64le(std::string& out, uint64_t v);
void put_f64be(std::string& out, double v);
// uleb length, then the bytes.
void put_bytes(std::string& out, std::string_view bytes);
void write_bool_rle(std::string& out, const std::vector<uint8_t>& values);
void write_any_rle(std::string& out, const std::vector<uint64_t>& values);
void write_any_rle_u8(std::string& out, const std::vector<uint8_t>& values);
void write_delta_rle(std::string& out, const std::vector<int64_t>& values);
void write_delta_of_delta(std::string& out, const std::vector<int64_t>& values);

}  // namespace weft::crdt::detail::loro

#endif  // WEFT_SRC_CRDT_LORO_BINARY_H_

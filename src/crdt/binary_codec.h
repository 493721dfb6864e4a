// Internal: weft's binary update/snapshot format (docs/formats/binary.md).
//
// binary_common.cc: header, tables and tagged values shared by all versions;
// binary_encode.cc / binary_decode.cc: the columnar version 2;
// binary_v1.cc: the row-wise version 1 (read only: stores may hold it).
#ifndef WEFT_SRC_CRDT_BINARY_CODEC_H_
#define WEFT_SRC_CRDT_BINARY_CODEC_H_

#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "crdt/core.h"
#include "weft/base/varint.h"

namespace weft::crdt::detail {

inline constexpr std::string_view kBinaryMagic = "WFTC";
inline constexpr uint8_t kBinaryFormatVersion = 2;
inline constexpr uint8_t kBinaryFormatV1 = 1;
inline constexpr uint8_t kKindUpdates = 1;
inline constexpr uint8_t kKindSnapshot = 2;

// True when `data` starts with the weft binary magic.
inline bool is_weft_binary(std::string_view data) { return data.substr(0, 4) == kBinaryMagic; }

// A kDataLoss "corrupt weft binary data: <what>" error.
Status corrupt(std::string_view what);

// The columns of a version-2 body, in the order they are stored.
enum BinaryColumn : uint8_t {
  kColChangePeer,     // per change: uvarint peer index
  kColChangeCounter,  // per change: svarint counter - end of the peer's previous change
  kColChangeTime,     // per change: svarint timestamp - previous change's timestamp
  kColChangeDeps,     // per change: uvarint 1 (prev op only) or n<<1, n x (peer, svarint)
  kColChangeOps,      // per change: uvarint op count (>= 1)
  kColChangeMsg,      // per change: uvarint 0 (none) or length + 1, then the UTF-8 bytes
  kColOpKind,         // runs: uvarint container<<3|kind, uvarint run length (>= 1)
  kColOpPos,          // per insert/delete/mark: svarint pos - expected pos of its container
  kColOpLen,          // per op but map ops and counters: length / end (see the format doc)
  kColDelStart,       // per delete: uvarint peer index, svarint start counter - predicted
  kColText,           // UTF-8 of every text insert, concatenated
  kColValues,         // tagged values: list insert elements, map set values, mark values
  kColKeys,           // per map op / mark: uvarint key index (== table size: new key, bytes)
  kColExtra,          // mark: u8 info; counter: fixed64 f64 bits
  kColumnCount
};

// The byte after the columns: whether a state section follows.
inline constexpr uint8_t kNoState = 0;
inline constexpr uint8_t kWithState = 1;

// Predicts the counter of a delete's start id (its leftmost deleted unit)
// from the previous op, so the common edits cost a zero in the kColDelStart
// column: deleting inside the text just inserted, backspacing, and deleting
// forward. Encoder and decoder feed it the same ops in the same order.
class DeleteStartModel {
 public:
  Counter predict(const Op& del) const {
    const int64_t lo = del.len < 0 ? int64_t{del.pos} + del.len + 1 : del.pos;
    const int64_t n = del.len < 0 ? -int64_t{del.len} : del.len;
    if (del.container == container_) {
      if (inserted_ && lo >= pos_ && lo < pos_ + len_) return clamp(id_ + (lo - pos_));
      if (!inserted_ && lo + n == pos_) return clamp(int64_t{id_} - n);
      if (!inserted_ && lo == pos_) return clamp(int64_t{id_} + len_);
    }
    return last_start_;
  }
  // Records `op` (a positional op that was just coded).
  void after(const Op& op) {
    if (op.kind == OpKind::kTextInsert || op.kind == OpKind::kListInsert) {
      after_insert(op.container, op.pos, op.atom_len(), op.counter);
    } else if (op.kind == OpKind::kSeqDelete) {
      after_delete(op);
    } else {
      after_other();
    }
  }
  // after() by kind, for the decoder (which knows the kind and length).
  void after_insert(uint32_t container, int32_t pos, int64_t len, Counter id) {
    container_ = container;
    inserted_ = true;
    pos_ = pos;
    len_ = len;
    id_ = id;
  }
  void after_delete(const Op& del) {
    container_ = del.container;
    inserted_ = false;
    pos_ = del.len < 0 ? int64_t{del.pos} + del.len + 1 : del.pos;
    len_ = del.len < 0 ? -int64_t{del.len} : del.len;
    id_ = del.start_id.counter;
    last_start_ = del.start_id.counter;
  }
  void after_other() { container_ = UINT32_MAX; }

 private:
  static Counter clamp(int64_t v) {
    return static_cast<Counter>(v < 0 ? 0 : v > INT32_MAX ? INT32_MAX : v);
  }
  uint32_t container_ = UINT32_MAX;
  bool inserted_ = false;
  int64_t pos_ = 0, len_ = 0;
  Counter id_ = 0;
  Counter last_start_ = 0;
};

// The peer and container tables an encoder fills as it meets them.
struct BinaryTables {
  std::unordered_map<PeerId, uint32_t> peers;
  std::vector<PeerId> peer_list;
  std::unordered_map<ContainerId, uint32_t> cids;
  std::vector<ContainerId> cid_list;

  uint32_t peer(PeerId p);
  uint32_t cid(const ContainerId& c);
  // Appends the peer table then the container table (the body's prefix).
  void write(std::string& out) const;
};

// The decoded tables of a body.
struct DecodedTables {
  std::vector<PeerId> peers;
  std::vector<ContainerId> cids;
  Status read(ByteReader& r);
};

// Appends a tagged value (container values become indexes into `t`).
void write_value(std::string& out, const Value& v, BinaryTables& t);
// Reads a tagged value; a container reference only at the top and when
// `allow_container`. Lists and maps deeper than kMaxValueDepth are corrupt.
Result<Value> read_value(ByteReader& r, const std::vector<ContainerId>& cids, bool allow_container);

// Checks that an op of `kind` may target container `cid` (kUnimplemented for
// container types weft lacks, kDataLoss otherwise).
Status check_op_target(OpKind kind, const ContainerId& cid);

// Frames `raw` behind the 16-byte header, zstd-compressing it when that pays
// (`fast`: a cheap zstd level instead of the size-driven one).
std::string seal_payload(const std::string& raw, uint8_t kind, bool fast = false);

// A verified, decompressed body and the header fields it came with.
struct OpenedPayload {
  uint8_t version = 0;
  uint8_t kind = 0;
  std::string_view raw;            // the body: inside the input, or in `buffer`
  std::unique_ptr<char[]> buffer;  // the decompressed body (not zeroed first)
};
// Checks the header (magic, version, kind, flags, size), decompresses and
// verifies the checksum. An uncompressed body is not copied: `raw` then
// points into `data`. Errors: kDataLoss, kInvalidArgument (version).
Result<OpenedPayload> open_payload(std::string_view data);

// A snapshot's state section, decoded: per container its value in a plain form.
struct SnapshotState {
  struct Entry {
    uint32_t container = 0;  // doc container index
    ContainerType type = ContainerType::kMap;
    std::string text;                                   // Text: UTF-8
    std::vector<Value> list;                            // List: the values
    std::vector<std::pair<std::string, MapEntry>> map;  // Map: entries by key, ascending
    double counter = 0;                                 // Counter
  };
  std::vector<Entry> entries;
};

// A decoded body: the changes in causal order and, for a snapshot that has
// one, its state section.
struct DecodedBody {
  std::vector<Change> changes;
  std::optional<SnapshotState> state;
};

// Body decoders by version; they intern peers and containers into `core`.
Result<std::vector<Change>> decode_body_v1(DocCore& core, std::string_view raw);
Result<DecodedBody> decode_body_v2(DocCore& core, std::string_view raw);

// Appends the state section for `containers` (doc indexes) of `core`'s state.
// REQUIRES: the state is at the op log's version (attached, no open txn).
void write_state_section(const DocCore& core, const std::vector<uint32_t>& containers,
                         BinaryTables& tables, std::string& out);
// Reads a state section; `local_cid` maps table container indexes to the doc's.
Result<SnapshotState> read_state_section(ByteReader& r, const DecodedTables& t,
                                         const std::vector<uint32_t>& local_cid);

// True when `body` (a snapshot with a state section) can be installed into
// `core` without replay: the doc is empty, attached, unobserved, the changes
// are causally ready in order and every container's state can be set plainly.
bool can_install_snapshot(const DocCore& core, const DecodedBody& body);
// Appends the history to the op log and sets the state from the section.
// REQUIRES: can_install_snapshot(core, body). Cannot fail.
ImportStatus install_snapshot(DocCore& core, DecodedBody& body);

}  // namespace weft::crdt::detail

#endif  // WEFT_SRC_CRDT_BINARY_CODEC_H_

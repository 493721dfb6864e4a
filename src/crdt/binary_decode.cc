// Decoder of the weft binary format, version 2 (docs/formats/binary.md).
// Columns are read with a cursor whose errors are sticky (checked once per
// change), so the per-op loop stays tight; every count is bounded by the
// bytes left before anything is allocated for it.
#include <array>
#include <bit>
#include <cstring>

#include "crdt/binary_codec.h"
#include "weft/base/utf.h"

namespace weft::crdt::detail {
namespace {

// A bounds-checked cursor over one column. A read past the end or an
// overlong varint returns 0 and sets `*bad` (one flag shared by all columns).
struct Column {
  const uint8_t* p = nullptr;
  const uint8_t* end = nullptr;
  bool* bad = nullptr;

  size_t left() const { return static_cast<size_t>(end - p); }
  bool done() const { return p == end; }

  // Inline for one- and two-byte varints (nearly every value of every
  // column: S3's positions take two bytes a fifth of the time); longer ones
  // take the call.
  [[gnu::always_inline]] uint64_t u() {
    if (p < end && *p < 0x80) [[likely]]
      return *p++;
    if (end - p >= 2 && p[1] < 0x80) {
      const uint64_t v = (p[0] & 0x7Fu) | uint64_t{p[1]} << 7;
      p += 2;
      return v;
    }
    return u_long();
  }
  [[gnu::noinline]] uint64_t u_long() {
    uint64_t v = 0;
    for (int shift = 0; shift < 64; shift += 7) {
      if (p == end || (shift == 63 && *p > 1)) break;
      const uint8_t b = *p++;
      v |= uint64_t{b & 0x7Fu} << shift;
      if (b < 0x80) return v;
    }
    *bad = true;
    p = end;
    return 0;
  }
  int64_t s() { return zigzag_decode(u()); }
  uint8_t byte() {
    if (p == end) {
      *bad = true;
      return 0;
    }
    return *p++;
  }
  std::string_view take(uint64_t n) {
    if (n > left()) {
      *bad = true;
      p = end;
      return {};
    }
    std::string_view out(reinterpret_cast<const char*>(p), n);
    p += n;
    return out;
  }
};

// The number of ASCII bytes of `s` from `from` on (up to the next non-ASCII byte).
size_t ascii_prefix(std::string_view s, size_t from) {
  size_t k = from;
  for (; k + 8 <= s.size(); k += 8) {
    uint64_t w;
    std::memcpy(&w, s.data() + k, 8);
    if (const uint64_t high = w & 0x8080808080808080ULL)
      return k + std::countr_zero(high) / 8 - from;
  }
  while (k < s.size() && static_cast<unsigned char>(s[k]) < 0x80) ++k;
  return k - from;
}

class ColumnReader {
 public:
  ColumnReader(DocCore& core, const DecodedTables& t) : core_(core), t_(t) {}

  Status open(ByteReader& r);
  Result<std::vector<Change>> changes(uint64_t n_changes, uint64_t n_ops);
  const std::vector<uint32_t>& local_cids() const { return local_cid_; }

 private:
  Status change(Change& ch, uint64_t& ops_left);
  Status next_run();
  // Decodes one op of the current run; returns its length in units (0: error in `err`).
  [[gnu::always_inline]] int64_t op(Op& op, PeerId author, Status& err);
  // Decodes a positional op's position (relative to where the container's
  // previous op left off) into op.pos; false with `err` set when out of range.
  bool read_pos(Op& op, Status& err);
  int64_t text_insert(Op& op, Status& err);
  [[gnu::noinline]] int64_t rare_op(Op& op, PeerId author, Status& err);
  Result<std::string> key();
  Status check_bad() const;
  uint32_t local_peer(uint64_t table_index);

  DocCore& core_;
  const DecodedTables& t_;
  std::array<Column, kColumnCount> c_;
  bool bad_ = false;  // a column read failed (sticky; see Column)
  ByteReader values_{""};
  std::vector<int64_t> peer_end_;
  std::vector<int32_t> expected_;     // by table container index: predicted next position
  std::vector<uint32_t> local_cid_;   // table container index -> doc container index
  std::vector<uint32_t> local_peer_;  // table peer index -> doc peer index (UINT32_MAX: not yet)
  std::vector<std::string> keys_;
  DeleteStartModel del_model_;
  int64_t time_ = 0;
  uint64_t run_left_ = 0;
  uint32_t run_cid_ = 0;
  OpKind run_kind_ = OpKind::kCounter;
  std::string_view text_;      // validated UTF-8 not yet consumed
  size_t ascii_left_ = 0;      // text_ starts with this many ASCII bytes
  uint8_t checked_[256] = {};  // per table container < 256: bit k = op kind k checked
};

Status ColumnReader::open(ByteReader& r) {
  for (Column& c : c_) {
    WEFT_ASSIGN_OR_RETURN(std::string_view bytes, r.read_bytes());
    c.p = reinterpret_cast<const uint8_t*>(bytes.data());
    c.end = c.p + bytes.size();
    c.bad = &bad_;
  }
  const Column& text = c_[kColText];
  text_ = std::string_view(reinterpret_cast<const char*>(text.p), text.left());
  if (!is_valid_utf8(text_)) return corrupt("invalid UTF-8 in the text column");
  ascii_left_ = ascii_prefix(text_, 0);
  const Column& values = c_[kColValues];
  values_ = ByteReader(std::string_view(reinterpret_cast<const char*>(values.p), values.left()));
  peer_end_.assign(t_.peers.size(), 0);
  local_peer_.assign(t_.peers.size(), UINT32_MAX);
  expected_.assign(t_.cids.size(), 0);
  local_cid_.reserve(t_.cids.size());
  for (const ContainerId& cid : t_.cids) local_cid_.push_back(core_.intern_container(cid));
  return Status();
}

Status ColumnReader::check_bad() const {
  if (bad_) return corrupt("a column ends early or holds an overlong varint");
  return Status();
}

Result<std::string> ColumnReader::key() {
  Column& c = c_[kColKeys];
  const uint64_t k = c.u();
  if (k < keys_.size()) return keys_[k];
  if (k != keys_.size() || bad_) return corrupt("key index out of range");
  std::string_view s = c.take(c.u());
  if (bad_ || !is_valid_utf8(s)) return corrupt("bad key");
  keys_.emplace_back(s);
  return keys_.back();
}

uint32_t ColumnReader::local_peer(uint64_t table_index) {
  // Interned on first use as an author (as before: a failed import interns
  // only the authors it reached).
  uint32_t& local = local_peer_[table_index];
  if (local == UINT32_MAX) local = core_.intern_peer(t_.peers[table_index]);
  return local;
}

Status ColumnReader::next_run() {
  const uint64_t v = c_[kColOpKind].u();
  run_left_ = c_[kColOpKind].u();
  if (run_left_ == 0) return corrupt("empty op kind run");
  if ((v & 7) > static_cast<uint64_t>(OpKind::kCounter)) return corrupt("unknown op kind");
  if ((v >> 3) >= t_.cids.size()) return corrupt("container index out of range");
  run_cid_ = static_cast<uint32_t>(v >> 3);
  run_kind_ = OpKind(v & 7);
  // Runs alternate between a few (container, kind) pairs: check each once.
  const uint8_t bit = uint8_t{1} << (v & 7);
  if (run_cid_ < 256 && (checked_[run_cid_] & bit)) return Status();
  WEFT_RETURN_IF_ERROR(check_op_target(run_kind_, t_.cids[run_cid_]));
  if (run_cid_ < 256) checked_[run_cid_] |= bit;
  return Status();
}

int64_t ColumnReader::text_insert(Op& op, Status& err) {
  const uint64_t n = c_[kColOpLen].u();
  if (n == 0 || n > text_.size()) {
    err = corrupt("bad text insert length");
    return 0;
  }
  // The bytes of n code points: ASCII stretches are known from ascii_left_;
  // each non-ASCII sequence is stepped over, then the next stretch measured
  // (so each byte of the column is scanned once in all).
  size_t at = n;
  if (n <= ascii_left_) {
    ascii_left_ -= n;
  } else {
    const auto* bytes = reinterpret_cast<const uint8_t*>(text_.data());
    at = 0;
    uint64_t left = n;
    size_t ascii = ascii_left_;
    while (true) {
      const size_t take = left < ascii ? left : ascii;
      at += take;
      left -= take;
      ascii -= take;
      if (left == 0) break;
      if (at >= text_.size()) {
        err = corrupt("the text column ends early");
        return 0;
      }
      // A lead byte: the column was validated as UTF-8 as a whole.
      at += utf8_sequence_length(bytes[at]);
      --left;
      ascii = ascii_prefix(text_, at);
    }
    ascii_left_ = ascii;
  }
  // The column lies inside the body: 8 bytes from text_'s start are readable
  // while text_ holds 8.
  if (text_.size() >= 8)
    op.text.init_utf8_wide(text_.substr(0, at), n, core_.op_text_pool());
  else
    op.text.init_utf8(text_.substr(0, at), n, core_.op_text_pool());
  text_.remove_prefix(at);
  expected_[run_cid_] = op.pos + static_cast<int32_t>(n);
  del_model_.after_insert(op.container, op.pos, static_cast<int64_t>(n), op.counter);
  return static_cast<int64_t>(n);
}

inline bool ColumnReader::read_pos(Op& op, Status& err) {
  const int64_t pos = expected_[run_cid_] + c_[kColOpPos].s();
  if (pos < 0 || pos > INT32_MAX) {
    err = corrupt("position out of range");
    return false;
  }
  op.pos = static_cast<int32_t>(pos);
  return true;
}

inline int64_t ColumnReader::op(Op& op, PeerId author, Status& err) {
  op.kind = run_kind_;
  op.container = local_cid_[run_cid_];
  if (op.kind == OpKind::kTextInsert || op.kind == OpKind::kSeqDelete) {
    if (!read_pos(op, err)) return 0;
    if (op.kind == OpKind::kTextInsert) return text_insert(op, err);
    const int64_t n = c_[kColOpLen].s();
    if (n == 0 || n > INT32_MAX || n < -INT32_MAX || (n < 0 && op.pos + n + 1 < 0)) {
      err = corrupt("bad delete length");
      return 0;
    }
    op.len = static_cast<int32_t>(n);
    Column& del = c_[kColDelStart];
    const uint64_t pi = del.u();
    if (pi >= t_.peers.size()) {
      err = corrupt("peer index out of range");
      return 0;
    }
    const int64_t counter = int64_t{del_model_.predict(op)} + del.s();
    if (counter < 0 || counter > INT32_MAX) {
      err = corrupt("delete start counter out of range");
      return 0;
    }
    op.start_id = ID{t_.peers[pi], static_cast<Counter>(counter)};
    expected_[run_cid_] = n < 0 ? op.pos + op.len + 1 : op.pos;
    del_model_.after_delete(op);
    return n < 0 ? -n : n;
  }
  return rare_op(op, author, err);
}

int64_t ColumnReader::rare_op(Op& op, PeerId author, Status& err) {
  Column& len = c_[kColOpLen];
  if (op.kind == OpKind::kListInsert || op.kind == OpKind::kMark) {
    if (!read_pos(op, err)) return 0;
  }
  del_model_.after_other();
  switch (op.kind) {
    case OpKind::kListInsert: {
      const uint64_t n = len.u();
      if (n == 0 || n > values_.remaining()) {
        err = corrupt("bad list insert length");
        return 0;
      }
      std::vector<Value>& values = op.mutable_values();
      values.reserve(n);
      for (uint64_t x = 0; x < n; ++x) {
        Result<Value> v = read_value(values_, t_.cids, true);
        if (!v.ok()) {
          err = v.status();
          return 0;
        }
        if (v->is_container() &&
            (v->as_container().is_root() ||
             !(v->as_container().id() == ID{author, op.counter + Counter(x)}))) {
          err = corrupt("a container value does not match its op id");
          return 0;
        }
        values.push_back(std::move(*v));
      }
      expected_[run_cid_] = op.pos + static_cast<int32_t>(n);
      del_model_.after_insert(op.container, op.pos, static_cast<int64_t>(n), op.counter);
      return static_cast<int64_t>(n);
    }
    case OpKind::kMark: {
      const int64_t end = op.pos + len.s();
      if (end < 0 || end > INT32_MAX) {
        err = corrupt("mark end out of range");
        return 0;
      }
      op.len = static_cast<int32_t>(end);
      Result<std::string> k = key();
      Result<Value> v = k.ok() ? read_value(values_, t_.cids, false) : Result<Value>(k.status());
      if (!v.ok()) {
        err = v.status();
        return 0;
      }
      op.set_key(std::move(*k));
      op.set_value(std::move(*v));
      op.info = c_[kColExtra].byte();
      expected_[run_cid_] = op.pos;
      return 1;
    }
    case OpKind::kMarkEnd: {
      const uint64_t anchor = len.u();
      if (anchor > INT32_MAX) {
        err = corrupt("anchor position out of range");
        return 0;
      }
      op.len = static_cast<int32_t>(anchor);
      return 1;
    }
    case OpKind::kMapSet:
    case OpKind::kMapDelete: {
      Result<std::string> k = key();
      if (!k.ok()) {
        err = k.status();
        return 0;
      }
      op.set_key(std::move(*k));
      if (op.kind == OpKind::kMapSet) {
        Result<Value> v = read_value(values_, t_.cids, true);
        if (!v.ok()) {
          err = v.status();
          return 0;
        }
        if (v->is_container() &&
            (v->as_container().is_root() || !(v->as_container().id() == ID{author, op.counter}))) {
          err = corrupt("a container value does not match its op id");
          return 0;
        }
        op.set_value(std::move(*v));
      }
      return 1;
    }
    case OpKind::kCounter: {
      std::string_view bits = c_[kColExtra].take(8);
      if (bits.size() != 8) {
        err = corrupt("the extra column ends early");
        return 0;
      }
      uint64_t v = 0;
      for (int i = 7; i >= 0; --i) v = (v << 8) | static_cast<uint8_t>(bits[i]);
      double number = 0;
      std::memcpy(&number, &v, 8);
      op.set_number(number);
      return 1;
    }
    default:  // text inserts and deletes are op()'s
      err = corrupt("unreachable op kind");
      return 0;
  }
}

Status ColumnReader::change(Change& ch, uint64_t& ops_left) {
  const uint64_t pi = c_[kColChangePeer].u();
  if (pi >= t_.peers.size()) return corrupt("peer index out of range");
  const PeerId author = t_.peers[pi];
  ch.peer = local_peer(pi);
  const int64_t counter = peer_end_[pi] + c_[kColChangeCounter].s();
  if (counter < 0 || counter > INT32_MAX) return corrupt("change counter out of range");
  ch.counter = static_cast<Counter>(counter);
  time_ += c_[kColChangeTime].s();
  ch.timestamp = time_;
  Column& deps = c_[kColChangeDeps];
  const uint64_t dep_head = deps.u();
  if (dep_head == 1) {
    if (ch.counter == 0) return corrupt("a first change depends on its own previous op");
    ch.deps.push_back(ID{author, ch.counter - 1});
  } else {
    if (dep_head & 1) return corrupt("bad dependency header");
    const uint64_t n = dep_head >> 1;
    if (n > deps.left() / 2) return corrupt("dependency count exceeds the data");
    ch.deps.reserve(n);
    for (uint64_t k = 0; k < n; ++k) {
      const uint64_t dp = deps.u();
      if (dp >= t_.peers.size()) return corrupt("dependency peer out of range");
      const int64_t dc = peer_end_[dp] - 1 - deps.s();
      if (dc < 0 || dc > INT32_MAX) return corrupt("dependency counter out of range");
      if (t_.peers[dp] == author && static_cast<Counter>(dc) >= ch.counter) {
        return corrupt("a change depends on its own future");
      }
      ch.deps.push_back(ID{t_.peers[dp], static_cast<Counter>(dc)});
    }
  }
  const uint64_t nops = c_[kColChangeOps].u();
  if (nops == 0 || nops > ops_left) return corrupt("bad op count");
  ops_left -= nops;
  Column& msg = c_[kColChangeMsg];
  if (const uint64_t m = msg.u()) {
    std::string_view s = msg.take(m - 1);
    if (bad_ || !is_valid_utf8(s)) return corrupt("bad commit message");
    ch.msg = std::string(s);
  }
  WEFT_RETURN_IF_ERROR(check_bad());
  // Each op is constructed where it is decoded, in room reserved up front:
  // a long change's ops (S3: 119k of 56 bytes) are then written once while
  // in cache, not default-constructed in one pass and overwritten in another.
  ch.ops.reserve(nops);
  int64_t next = ch.counter;
  Status err;
  for (uint64_t k = 0; k < nops; ++k) {
    Op& o = ch.ops.emplace_back_reserved();
    if (run_left_ == 0) WEFT_RETURN_IF_ERROR(next_run());
    --run_left_;
    o.counter = static_cast<Counter>(next);
    const int64_t n = op(o, author, err);
    if (n == 0) return err;
    next += n;
    if (next > INT32_MAX) return corrupt("op counter overflow");
  }
  WEFT_RETURN_IF_ERROR(check_bad());
  ch.len = static_cast<Counter>(next - ch.counter);
  peer_end_[pi] = next;
  return Status();
}

Result<std::vector<Change>> ColumnReader::changes(uint64_t n_changes, uint64_t n_ops) {
  // Every change takes a byte of the change-peer column and every op one of
  // the position, length, key or extra column: this bounds the allocations.
  const Column* c = c_.data();
  if (n_changes > c[kColChangePeer].left() || n_ops > c[kColOpPos].left() + c[kColOpLen].left() +
                                                          c[kColKeys].left() +
                                                          c[kColExtra].left()) {
    return corrupt("change or op count exceeds the data");
  }
  std::vector<Change> out(n_changes);
  uint64_t ops_left = n_ops;
  for (Change& ch : out) WEFT_RETURN_IF_ERROR(change(ch, ops_left));
  if (ops_left != 0 || run_left_ != 0) return corrupt("op count mismatch");
  for (size_t i = 0; i < c_.size(); ++i) {
    if (i != kColText && i != kColValues && !c_[i].done()) return corrupt("trailing column bytes");
  }
  if (!text_.empty() || !values_.at_end()) return corrupt("trailing column bytes");
  return out;
}

}  // namespace

Result<DecodedBody> decode_body_v2(DocCore& core, std::string_view raw) {
  ByteReader r(raw);
  DecodedTables t;
  WEFT_RETURN_IF_ERROR(t.read(r));
  WEFT_ASSIGN_OR_RETURN(uint64_t n_changes, r.read_count(r.remaining(), "change count"));
  WEFT_ASSIGN_OR_RETURN(uint64_t n_ops, r.read_count(r.remaining(), "op count"));
  ColumnReader cr(core, t);
  WEFT_RETURN_IF_ERROR(cr.open(r));
  DecodedBody out;
  WEFT_ASSIGN_OR_RETURN(uint8_t state_flag, r.read_u8());
  if (state_flag == kWithState) {
    WEFT_ASSIGN_OR_RETURN(out.state, read_state_section(r, t, cr.local_cids()));
  } else if (state_flag != kNoState) {
    return corrupt("unknown state section flag");
  }
  if (!r.at_end()) return corrupt("trailing bytes after the last section");
  WEFT_ASSIGN_OR_RETURN(out.changes, cr.changes(n_changes, n_ops));
  return out;
}

Result<ImportStatus> DocCore::import_binary(std::string_view data, const ImportOptions& options) {
  WEFT_ASSIGN_OR_RETURN(OpenedPayload payload, open_payload(data));
  DecodedBody body;
  if (payload.version == kBinaryFormatV1) {
    WEFT_ASSIGN_OR_RETURN(body.changes, decode_body_v1(*this, payload.raw));
  } else {
    WEFT_ASSIGN_OR_RETURN(body, decode_body_v2(*this, payload.raw));
    if (body.state && payload.kind != kKindSnapshot) return corrupt("state section in updates");
  }
  const bool plain = !options.message && !options.require_complete;
  if (plain && body.state && can_install_snapshot(*this, body)) return install_snapshot(*this, body);
  return import_changes(std::move(body.changes), options);
}

}  // namespace weft::crdt::detail

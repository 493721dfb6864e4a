// Decoder of the weft binary format, version 2 (docs/formats/binary.md).
// Columns are read with a cursor whose errors are sticky (checked once per
// change), so the per-op loop stays tight; every count is bounded by the
// bytes left before anything is allocated for it.
#include <array>
#include <cstring>

#include "crdt/binary_codec.h"
#include "weft/base/utf.h"

namespace weft::crdt::detail {
namespace {

// A bounds-checked cursor over one column. A read past the end or an
// overlong varint returns 0 and sets `bad`.
struct Column {
  const uint8_t* p = nullptr;
  const uint8_t* end = nullptr;
  bool bad = false;

  size_t left() const { return static_cast<size_t>(end - p); }
  bool done() const { return p == end; }

  uint64_t u() {
    if (p < end && *p < 0x80) return *p++;
    uint64_t v = 0;
    for (int shift = 0; shift < 64; shift += 7) {
      if (p == end || (shift == 63 && *p > 1)) break;
      const uint8_t b = *p++;
      v |= uint64_t{b & 0x7Fu} << shift;
      if (b < 0x80) return v;
    }
    bad = true;
    p = end;
    return 0;
  }
  int64_t s() { return zigzag_decode(u()); }
  uint8_t byte() {
    if (p == end) {
      bad = true;
      return 0;
    }
    return *p++;
  }
  std::string_view take(uint64_t n) {
    if (n > left()) {
      bad = true;
      p = end;
      return {};
    }
    std::string_view out(reinterpret_cast<const char*>(p), n);
    p += n;
    return out;
  }
};

class ColumnReader {
 public:
  ColumnReader(DocCore& core, const DecodedTables& t) : core_(core), t_(t) {}

  Status open(ByteReader& r);
  Result<std::vector<Change>> changes(uint64_t n_changes, uint64_t n_ops);
  const std::vector<uint32_t>& local_cids() const { return local_cid_; }

 private:
  Status change(Change& ch, uint64_t& ops_left);
  Status op(Op& op, PeerId author);
  Result<std::string> key();
  Status check_bad() const;

  DocCore& core_;
  const DecodedTables& t_;
  std::array<Column, kColumnCount> c_;
  ByteReader values_{""};
  std::vector<int64_t> peer_end_;
  std::vector<int32_t> expected_;    // by table container index: predicted next position
  std::vector<uint32_t> local_cid_;  // table container index -> doc container index
  std::vector<std::string> keys_;
  DeleteStartModel del_model_;
  int64_t time_ = 0;
  uint64_t run_left_ = 0;
  uint32_t run_cid_ = 0;
  OpKind run_kind_ = OpKind::kCounter;
  std::string_view text_;    // validated UTF-8 not yet consumed
  bool text_ascii_ = false;  // the whole text column is ASCII
};

Status ColumnReader::open(ByteReader& r) {
  for (Column& c : c_) {
    WEFT_ASSIGN_OR_RETURN(std::string_view bytes, r.read_bytes());
    c.p = reinterpret_cast<const uint8_t*>(bytes.data());
    c.end = c.p + bytes.size();
  }
  const Column& text = c_[kColText];
  text_ = std::string_view(reinterpret_cast<const char*>(text.p), text.left());
  if (!is_valid_utf8(text_)) return corrupt("invalid UTF-8 in the text column");
  text_ascii_ = is_all_ascii(text_);
  const Column& values = c_[kColValues];
  values_ = ByteReader(std::string_view(reinterpret_cast<const char*>(values.p), values.left()));
  peer_end_.assign(t_.peers.size(), 0);
  expected_.assign(t_.cids.size(), 0);
  local_cid_.reserve(t_.cids.size());
  for (const ContainerId& cid : t_.cids) local_cid_.push_back(core_.intern_container(cid));
  return Status();
}

Status ColumnReader::check_bad() const {
  for (const Column& c : c_) {
    if (c.bad) return corrupt("a column ends early or holds an overlong varint");
  }
  return Status();
}

Result<std::string> ColumnReader::key() {
  Column& c = c_[kColKeys];
  const uint64_t k = c.u();
  if (k < keys_.size()) return keys_[k];
  if (k != keys_.size() || c.bad) return corrupt("key index out of range");
  std::string_view s = c.take(c.u());
  if (c.bad || !is_valid_utf8(s)) return corrupt("bad key");
  keys_.emplace_back(s);
  return keys_.back();
}

Status ColumnReader::op(Op& op, PeerId author) {
  if (run_left_ == 0) {
    const uint64_t v = c_[kColOpKind].u();
    run_left_ = c_[kColOpKind].u();
    if (run_left_ == 0) return corrupt("empty op kind run");
    if ((v & 7) > static_cast<uint64_t>(OpKind::kCounter)) return corrupt("unknown op kind");
    if ((v >> 3) >= t_.cids.size()) return corrupt("container index out of range");
    run_cid_ = static_cast<uint32_t>(v >> 3);
    run_kind_ = OpKind(v & 7);
    WEFT_RETURN_IF_ERROR(check_op_target(run_kind_, t_.cids[run_cid_]));
  }
  --run_left_;
  op.kind = run_kind_;
  op.container = local_cid_[run_cid_];
  if (op.kind == OpKind::kTextInsert || op.kind == OpKind::kListInsert ||
      op.kind == OpKind::kSeqDelete || op.kind == OpKind::kMark) {
    const int64_t pos = expected_[run_cid_] + c_[kColOpPos].s();
    if (pos < 0 || pos > INT32_MAX) return corrupt("position out of range");
    op.pos = static_cast<int32_t>(pos);
  }
  Column& len = c_[kColOpLen];
  switch (op.kind) {
    case OpKind::kTextInsert: {
      const uint64_t n = len.u();
      if (n == 0 || n > text_.size()) return corrupt("bad text insert length");
      const auto* bytes = reinterpret_cast<const uint8_t*>(text_.data());
      // All ASCII: n bytes; otherwise walk n sequences.
      size_t at = n;
      if (!text_ascii_ && !is_all_ascii(text_.substr(0, n))) {
        at = 0;
        for (uint64_t i = 0; i < n; ++i) {
          if (at >= text_.size()) return corrupt("the text column ends early");
          // The column was validated as UTF-8 as a whole.
          at += utf8_sequence_length(bytes[at]);
        }
      }
      op.text.assign_utf8(text_.substr(0, at), n, core_.text_pool);
      text_.remove_prefix(at);
      expected_[run_cid_] = op.pos + static_cast<int32_t>(n);
      break;
    }
    case OpKind::kListInsert: {
      const uint64_t n = len.u();
      if (n == 0 || n > values_.remaining()) return corrupt("bad list insert length");
      std::vector<Value>& values = op.mutable_values();
      values.reserve(n);
      for (uint64_t x = 0; x < n; ++x) {
        WEFT_ASSIGN_OR_RETURN(Value v, read_value(values_, t_.cids, 0));
        if (v.is_container() && (v.as_container().is_root() ||
                                 !(v.as_container().id() == ID{author, op.counter + Counter(x)}))) {
          return corrupt("a container value does not match its op id");
        }
        values.push_back(std::move(v));
      }
      expected_[run_cid_] = op.pos + static_cast<int32_t>(n);
      break;
    }
    case OpKind::kSeqDelete: {
      const int64_t n = len.s();
      if (n == 0 || n > INT32_MAX || n < -INT32_MAX || (n < 0 && op.pos + n + 1 < 0)) {
        return corrupt("bad delete length");
      }
      op.len = static_cast<int32_t>(n);
      Column& del = c_[kColDelStart];
      const uint64_t pi = del.u();
      if (pi >= t_.peers.size()) return corrupt("peer index out of range");
      const int64_t counter = int64_t{del_model_.predict(op)} + del.s();
      if (counter < 0 || counter > INT32_MAX) return corrupt("delete start counter out of range");
      op.start_id = ID{t_.peers[pi], static_cast<Counter>(counter)};
      expected_[run_cid_] = n < 0 ? op.pos + op.len + 1 : op.pos;
      break;
    }
    case OpKind::kMark: {
      const int64_t end = op.pos + len.s();
      if (end < 0 || end > INT32_MAX) return corrupt("mark end out of range");
      op.len = static_cast<int32_t>(end);
      WEFT_ASSIGN_OR_RETURN(std::string k, key());
      op.set_key(std::move(k));
      WEFT_ASSIGN_OR_RETURN(Value v, read_value(values_, t_.cids, 1));
      op.set_value(std::move(v));
      op.info = c_[kColExtra].byte();
      expected_[run_cid_] = op.pos;
      break;
    }
    case OpKind::kMarkEnd: {
      const uint64_t anchor = len.u();
      if (anchor > INT32_MAX) return corrupt("anchor position out of range");
      op.len = static_cast<int32_t>(anchor);
      break;
    }
    case OpKind::kMapSet:
    case OpKind::kMapDelete: {
      WEFT_ASSIGN_OR_RETURN(std::string k, key());
      op.set_key(std::move(k));
      if (op.kind == OpKind::kMapSet) {
        WEFT_ASSIGN_OR_RETURN(Value v, read_value(values_, t_.cids, 0));
        if (v.is_container() &&
            (v.as_container().is_root() || !(v.as_container().id() == ID{author, op.counter}))) {
          return corrupt("a container value does not match its op id");
        }
        op.set_value(std::move(v));
      }
      break;
    }
    case OpKind::kCounter: {
      std::string_view bits = c_[kColExtra].take(8);
      if (bits.size() != 8) return corrupt("the extra column ends early");
      uint64_t v = 0;
      for (int i = 7; i >= 0; --i) v = (v << 8) | static_cast<uint8_t>(bits[i]);
      double number = 0;
      std::memcpy(&number, &v, 8);
      op.set_number(number);
      break;
    }
  }
  return Status();
}

Status ColumnReader::change(Change& ch, uint64_t& ops_left) {
  const uint64_t pi = c_[kColChangePeer].u();
  if (pi >= t_.peers.size()) return corrupt("peer index out of range");
  const PeerId author = t_.peers[pi];
  ch.peer = core_.intern_peer(author);
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
    if (msg.bad || !is_valid_utf8(s)) return corrupt("bad commit message");
    ch.msg = std::string(s);
  }
  WEFT_RETURN_IF_ERROR(check_bad());
  ch.ops.resize(nops);
  int64_t next = ch.counter;
  for (Op& o : ch.ops) {
    o.counter = static_cast<Counter>(next);
    WEFT_RETURN_IF_ERROR(op(o, author));
    del_model_.after(o);
    next += o.atom_len();
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

Result<ImportStatus> DocCore::import_binary(std::string_view data) {
  WEFT_ASSIGN_OR_RETURN(OpenedPayload payload, open_payload(data));
  DecodedBody body;
  if (payload.version == kBinaryFormatV1) {
    WEFT_ASSIGN_OR_RETURN(body.changes, decode_body_v1(*this, payload.raw));
  } else {
    WEFT_ASSIGN_OR_RETURN(body, decode_body_v2(*this, payload.raw));
    if (body.state && payload.kind != kKindSnapshot) return corrupt("state section in updates");
  }
  if (body.state && can_install_snapshot(*this, body)) return install_snapshot(*this, body);
  return import_changes(std::move(body.changes));
}

}  // namespace weft::crdt::detail

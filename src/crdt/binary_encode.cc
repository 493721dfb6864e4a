// Encoder of the weft binary format, version 2 (docs/formats/binary.md):
// the changes since a version vector, written column by column so that
// similar numbers sit together (deltas, runs) and zstd finds the rest.
#include <array>
#include <cstring>

#include "crdt/binary_codec.h"
#include "weft/base/utf.h"

namespace weft::crdt::detail {
namespace {

// Where the next positional op of a container is expected to start: right
// after the previous insert, or where the previous delete left the cursor.
int32_t expected_after(const Op& op) {
  switch (op.kind) {
    case OpKind::kTextInsert:
    case OpKind::kListInsert:
      return op.pos + op.atom_len();
    case OpKind::kSeqDelete:
      return op.len < 0 ? op.pos + op.len + 1 : op.pos;
    default:
      return op.pos;
  }
}

bool is_positional(OpKind kind) {
  return kind == OpKind::kTextInsert || kind == OpKind::kListInsert || kind == OpKind::kSeqDelete ||
         kind == OpKind::kMark;
}

class ColumnWriter {
 public:
  explicit ColumnWriter(const DocCore& core) : core_(core) {}

  void change(const Change& ch);
  // Appends the tables, counts and columns to `out`.
  void finish(std::string& out);

  BinaryTables& tables() { return tables_; }
  // Doc indexes of the containers the ops touched, ascending.
  std::vector<uint32_t> containers() const {
    std::vector<uint32_t> out;
    for (uint32_t i = 0; i < seen_.size(); ++i) {
      if (seen_[i]) out.push_back(i);
    }
    return out;
  }
  // True when a text was styled (its anchors cannot be stored as plain text).
  bool has_marks() const { return marks_; }

 private:
  void op(const Op& op);
  void key(const std::string& k);
  void kind_run(uint64_t value);

  const DocCore& core_;
  BinaryTables tables_;
  std::array<std::string, kColumnCount> cols_;
  std::vector<int64_t> peer_end_;  // by table peer index
  std::vector<int32_t> expected_;  // by table container index
  std::unordered_map<std::string, uint32_t> keys_;
  DeleteStartModel del_model_;
  std::vector<bool> seen_;  // by doc container index
  bool marks_ = false;
  int64_t last_time_ = 0;
  uint64_t changes_ = 0, ops_ = 0;
  uint64_t run_value_ = 0, run_len_ = 0;
};

void ColumnWriter::change(const Change& ch) {
  const PeerId author = core_.real_peer(ch.peer);
  const uint32_t pi = tables_.peer(author);
  if (peer_end_.size() <= pi) peer_end_.resize(pi + 1, 0);
  put_uvarint(cols_[kColChangePeer], pi);
  put_svarint(cols_[kColChangeCounter], ch.counter - peer_end_[pi]);
  put_svarint(cols_[kColChangeTime], ch.timestamp - last_time_);
  last_time_ = ch.timestamp;
  std::string& deps = cols_[kColChangeDeps];
  if (ch.deps.size() == 1 && ch.deps[0] == ID{author, ch.counter - 1}) {
    put_uvarint(deps, 1);  // only the author's previous op: the usual case
  } else {
    put_uvarint(deps, ch.deps.size() << 1);
    for (const ID& d : ch.deps) {
      // Relative to the peer's last op so far: a dep on it costs a zero.
      const uint32_t dp = tables_.peer(d.peer);
      if (peer_end_.size() <= dp) peer_end_.resize(dp + 1, 0);
      put_uvarint(deps, dp);
      put_svarint(deps, peer_end_[dp] - 1 - int64_t{d.counter});
    }
  }
  peer_end_[pi] = ch.end();
  put_uvarint(cols_[kColChangeOps], ch.ops.size());
  std::string& msg = cols_[kColChangeMsg];
  if (ch.msg) {
    put_uvarint(msg, ch.msg->size() + 1);
    msg += *ch.msg;
  } else {
    put_uvarint(msg, 0);
  }
  for (const Op& o : ch.ops) op(o);
  ++changes_;
}

void ColumnWriter::kind_run(uint64_t value) {
  if (run_len_ > 0 && value == run_value_) {
    ++run_len_;
    return;
  }
  if (run_len_ > 0) {
    put_uvarint(cols_[kColOpKind], run_value_);
    put_uvarint(cols_[kColOpKind], run_len_);
  }
  run_value_ = value;
  run_len_ = 1;
}

void ColumnWriter::key(const std::string& k) {
  auto [it, inserted] = keys_.emplace(k, static_cast<uint32_t>(keys_.size()));
  put_uvarint(cols_[kColKeys], it->second);
  if (inserted) put_bytes(cols_[kColKeys], k);
}

void ColumnWriter::op(const Op& o) {
  const uint32_t ci = tables_.cid(core_.containers[o.container]);
  kind_run(uint64_t{ci} << 3 | static_cast<uint64_t>(o.kind));
  ++ops_;
  if (seen_.size() <= o.container) seen_.resize(o.container + 1, false);
  seen_[o.container] = true;
  marks_ |= o.kind == OpKind::kMark || o.kind == OpKind::kMarkEnd;
  if (is_positional(o.kind)) {
    if (expected_.size() <= ci) expected_.resize(ci + 1, 0);
    put_svarint(cols_[kColOpPos], int64_t{o.pos} - expected_[ci]);
    expected_[ci] = expected_after(o);
  }
  std::string& len = cols_[kColOpLen];
  switch (o.kind) {
    case OpKind::kTextInsert:
      put_uvarint(len, o.text.size());
      cols_[kColText] += o.text.utf8();
      break;
    case OpKind::kListInsert:
      put_uvarint(len, o.values().size());
      for (const Value& v : o.values()) write_value(cols_[kColValues], v, tables_);
      break;
    case OpKind::kSeqDelete:
      put_svarint(len, o.len);
      put_uvarint(cols_[kColDelStart], tables_.peer(o.start_id.peer));
      put_svarint(cols_[kColDelStart], int64_t{o.start_id.counter} - del_model_.predict(o));
      break;
    case OpKind::kMark:
      put_svarint(len, int64_t{o.len} - o.pos);
      key(o.key());
      write_value(cols_[kColValues], o.value(), tables_);
      cols_[kColExtra].push_back(static_cast<char>(o.info));
      break;
    case OpKind::kMarkEnd:
      put_uvarint(len, static_cast<uint64_t>(o.len));
      break;
    case OpKind::kMapSet:
      key(o.key());
      write_value(cols_[kColValues], o.value(), tables_);
      break;
    case OpKind::kMapDelete:
      key(o.key());
      break;
    case OpKind::kCounter: {
      uint64_t bits;
      const double number = o.number();
      std::memcpy(&bits, &number, 8);
      put_fixed64(cols_[kColExtra], bits);
      break;
    }
  }
  del_model_.after(o);
}

void ColumnWriter::finish(std::string& out) {
  kind_run(~uint64_t{0});  // flushes the last run
  tables_.write(out);
  put_uvarint(out, changes_);
  put_uvarint(out, ops_);
  for (const std::string& c : cols_) put_bytes(out, c);
}

}  // namespace

std::string DocCore::export_binary(const VersionVector& from, bool snapshot, bool fast) const {
  ColumnWriter w(*this);
  for (const Change& ch : changes) {
    const Counter known = from.get(peer_ids[ch.peer]);
    if (ch.end() <= known) continue;
    if (known > ch.counter) {
      w.change(slice_change(ch, known));
    } else {
      w.change(ch);
    }
  }
  // A snapshot carries the state when it is the op log's (attached, nothing
  // uncommitted) and plain (no style anchors).
  const bool with_state =
      snapshot && from.empty() && txn_ops.empty() && !detached && !w.has_marks();
  std::string state;
  if (with_state) write_state_section(*this, w.containers(), w.tables(), state);
  std::string raw;
  w.finish(raw);
  raw.push_back(static_cast<char>(with_state ? kWithState : kNoState));
  raw += state;
  return seal_payload(raw, snapshot ? kKindSnapshot : kKindUpdates, fast);
}

}  // namespace weft::crdt::detail

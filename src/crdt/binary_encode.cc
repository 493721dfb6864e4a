// Encoder of the weft binary format, version 2 (docs/formats/binary.md):
// the changes since a version vector, written column by column so that
// similar numbers sit together (deltas, runs) and zstd finds the rest.
#include <array>
#include <cstring>
#include <optional>

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

// A cheap first test of extend_op(last, o), without changing `last`: false
// means it would fail; true is certain for an insert, likely for a delete.
bool may_extend(const Op& last, const Op& o) {
  if (last.container != o.container || last.kind != o.kind ||
      last.counter + last.atom_len() != o.counter) {
    return false;
  }
  if (o.kind == OpKind::kTextInsert) return continues_insert(last, o.container, o.pos);
  return o.kind == OpKind::kSeqDelete;
}

// extend_op(last, o), reading a one-unit delete as a forward one however it
// was written (len 1 or -1 name the same unit; the keystroke path writes
// either), so that deletes typed one by one join into their runs.
bool join_op(Op& last, const Op& o) {
  if (o.kind != OpKind::kSeqDelete || (o.len != -1 && last.len != -1)) return extend_op(last, o);
  if (last.kind == OpKind::kSeqDelete && last.len == -1) last.len = 1;
  if (o.len != -1) return extend_op(last, o);
  Op one = o;
  one.len = 1;
  return extend_op(last, one);
}

bool is_positional(OpKind kind) {
  return kind == OpKind::kTextInsert || kind == OpKind::kListInsert || kind == OpKind::kSeqDelete ||
         kind == OpKind::kMark;
}

class ColumnWriter {
 public:
  explicit ColumnWriter(const DocCore& core) : core_(core) {}

  // Adds the next change in op-log order. `lasting`: `ch` stays alive until
  // finish() (a change of the op log, not a sliced copy).
  //
  // A change that Loro's merge rule lets the open change hold (same peer,
  // counters contiguous, its one dep the author's previous op, within the
  // doc's merge interval, same message; see DocCore::commit) joins it, and
  // an op that continues the held one (typing on, deleting on) joins that:
  // a history imported one keystroke at a time is written as the runs it
  // is, so decoding and applying it later costs per run, not per keystroke.
  void change(const Change& ch, bool lasting);
  // Writes the open change: call after the last change(), before reading
  // containers() or has_marks().
  void end_changes() {
    if (open_) close_change();
  }
  // Appends the tables, counts and columns to `out`. REQUIRES: end_changes().
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
  // True when `ch` continues the open change under the merge rule.
  bool continues_open(const Change& ch) const;
  void open_change(const Change& ch);
  // Writes the held op and the open change's op count.
  void close_change();
  // Holds `o` (joining it to the held op when it continues it), writing the
  // op held before when it does not.
  void hold_op(const Op& o, bool lasting);
  void write_held_op();
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
  // The open change: its author's dense peer index, where it ends, its
  // timestamp and message, and how many ops of it are written or held.
  bool open_ = false;
  uint32_t open_peer_ = 0;
  Counter open_end_ = 0;
  int64_t open_time_ = 0;
  std::optional<std::string> open_msg_;
  uint64_t open_ops_ = 0;
  // The op not written yet (the next may continue it): an op of a lasting
  // change (held_ptr_), or a copy once joined or when its change does not last.
  const Op* held_ptr_ = nullptr;
  std::optional<Op> held_copy_;
};

bool ColumnWriter::continues_open(const Change& ch) const {
  return open_ && ch.peer == open_peer_ && ch.counter == open_end_ && ch.deps.size() == 1 &&
         ch.deps[0] == ID{core_.real_peer(ch.peer), ch.counter - 1} &&
         core_.merge_rule_allows(open_time_, open_msg_, ch.timestamp, ch.msg);
}

void ColumnWriter::change(const Change& ch, bool lasting) {
  if (continues_open(ch)) {
    open_end_ = ch.end();
    peer_end_[tables_.peer(core_.real_peer(ch.peer))] = ch.end();
  } else {
    if (open_) close_change();
    open_change(ch);
  }
  for (const Op& o : ch.ops) hold_op(o, lasting);
}

void ColumnWriter::open_change(const Change& ch) {
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
  std::string& msg = cols_[kColChangeMsg];
  if (ch.msg) {
    put_uvarint(msg, ch.msg->size() + 1);
    msg += *ch.msg;
  } else {
    put_uvarint(msg, 0);
  }
  open_ = true;
  open_peer_ = ch.peer;
  open_end_ = ch.end();
  open_time_ = ch.timestamp;
  open_msg_ = ch.msg;
  open_ops_ = 0;
}

void ColumnWriter::close_change() {
  write_held_op();
  put_uvarint(cols_[kColChangeOps], open_ops_);
  open_ = false;
  ++changes_;
}

void ColumnWriter::hold_op(const Op& o, bool lasting) {
  if (held_ptr_ && may_extend(*held_ptr_, o)) {
    held_copy_ = *held_ptr_;  // (a delete, or an insert that o continues: worth the copy)
    held_ptr_ = nullptr;
  }
  if (held_copy_ && join_op(*held_copy_, o)) return;
  write_held_op();
  ++open_ops_;
  if (lasting)
    held_ptr_ = &o;
  else
    held_copy_ = o;
}

void ColumnWriter::write_held_op() {
  if (held_copy_) {
    op(*held_copy_);
    held_copy_.reset();
  } else if (held_ptr_) {
    op(*held_ptr_);
  }
  held_ptr_ = nullptr;
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
  const uint32_t ci = tables_.cid(core_.container_table()[o.container]);
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
      w.change(slice_change(ch, known), /*lasting=*/false);
    } else {
      w.change(ch, /*lasting=*/true);
    }
  }
  w.end_changes();
  // A snapshot carries the state when it is the op log's (attached, nothing
  // uncommitted) and plain (no style anchors).
  const bool with_state =
      snapshot && from.empty() && edit_.ops().empty() && !detached && !w.has_marks();
  std::string state;
  if (with_state) write_state_section(*this, w.containers(), w.tables(), state);
  std::string raw;
  w.finish(raw);
  raw.push_back(static_cast<char>(with_state ? kWithState : kNoState));
  raw += state;
  return seal_payload(raw, snapshot ? kKindSnapshot : kKindUpdates, fast);
}

}  // namespace weft::crdt::detail

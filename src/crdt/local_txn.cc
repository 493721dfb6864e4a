// The local transaction: local ops applied to the live state and recorded
// in the open transaction (or written straight into this peer's last change:
// the direct keystroke), and commits (see core.h and README.md).
#include <algorithm>
#include <chrono>
#include <memory>
#include <optional>

#include "crdt/core.h"
#include "crdt/dcheck.h"

namespace weft::crdt::detail {
namespace {

// The context an op's apply error carries.
Status op_error(const DocCore& core, Status st, Counter counter, uint32_t container) {
  return st.with_context("op " + ID{core.local_peer(), counter}.to_string() + " on " +
                         core.container_table()[container].to_string());
}

}  // namespace

Status DocCore::detached_error() {
  return failed_precondition(
      "the doc is detached (checked out to an old version); "
      "call checkout_to_latest() before editing");
}

void DocCore::copy_txn_deps() { edit_.deps() = state_frontiers; }

Status DocCore::local_op(Op&& op) {
  settle();
  open_txn();
  const Counter counter = edit_.start() + edit_.len();
  op.counter = counter;
  Lamport lamport = 0;
  std::optional<Value> prev;
  const bool map_op = op.kind == OpKind::kMapSet || op.kind == OpKind::kMapDelete;
  if (map_op) {
    // Lamport of a local op: one above everything seen, plus its offset.
    for (const ID& d : edit_.deps().ids())
      lamport = std::max(lamport, lamport_of(d.peer, d.counter) + 1);
    lamport += static_cast<Lamport>(edit_.len());
    auto& cs = container_state(*state, op.container);
    if (MapState* map = cs.map_if()) {
      if (const MapEntry* e = map->find(op.key())) prev = e->value;
    }
  }
  // A local op sees the whole state: the fast path.
  const Counter n = op.atom_len();
  WEFT_RETURN_IF_ERROR(apply_op(*state, op, self, lamport, n, nullptr));
  edit_.extend(n);
  // Merge with the previous op when it simply continues it.
  if (!edit_.ops().empty() && extend_op(edit_.ops().back(), op)) return Status();
  if (map_op) {
    // Only map ops have a previous value: the list stays short otherwise
    // (entries past its end read as "absent").
    edit_.map_prev().resize(edit_.ops().size());
    edit_.map_prev().push_back(std::move(prev));
  }
  edit_.ops().push_back(std::move(op));
  return Status();
}

Status DocCore::local_text_insert(uint32_t idx, ContainerState& cs, int32_t pos,
                                  std::string_view utf8, size_t n) {
  WEFT_DCHECK(idx < state->containers.size() && &cs == state->containers[idx].get());
  PlainSeq* const plain = cs.plain();
  if (!plain) {
    Op op;
    op.kind = OpKind::kTextInsert;
    op.container = idx;
    op.pos = pos;
    op.text.append_utf8(utf8, n);
    return local_op(std::move(op));
  }
  if (edit_.direct()) {
    // Typing on within the direct keystroke's transaction: its op is the
    // change's last op (or that op's tail), so continuing it is appending.
    Op& run = changes.back().ops.back();
    if (continues_insert(run, idx, pos)) {
      const Counter counter = edit_.start() + edit_.len();
      Status st = plain->insert_utf8(self, counter, static_cast<uint32_t>(pos), utf8, n);
      if (!st.ok()) return op_error(*this, std::move(st), counter, idx);
      advance_vv(*state, self, counter + static_cast<Counter>(n));
      edit_.extend(static_cast<Counter>(n));
      run.text.append_utf8(utf8, n, &text_pool);
      return Status();
    }
    settle_direct();
  } else if (edit_.ops().empty() && can_write_direct()) {
    Change& last = changes.back();
    const Counter counter = last.end();
    Status st = plain->insert_utf8(self, counter, static_cast<uint32_t>(pos), utf8, n);
    if (!st.ok()) return op_error(*this, std::move(st), counter, idx);
    advance_vv(*state, self, counter + static_cast<Counter>(n));
    // What commit_in_place would do with the transaction op: typing on at
    // the end of the change's last insert extends it, anything else is a
    // new op of the change.
    Op& run = last.ops.back();
    LocalEdit::DirectTxn how;
    if (continues_insert(run, idx, pos)) {
      how.pushed = false;
      how.keep = static_cast<int32_t>(run.text.size());
      run.text.append_utf8(utf8, n, &text_pool);
    } else {
      how.pushed = true;
      new_txn_op(last.ops, OpKind::kTextInsert, idx, counter, pos)
          .text.append_utf8(utf8, n, &text_pool);
    }
    edit_.begin_direct(counter, static_cast<Counter>(n), how);
    return Status();
  }
  open_txn();
  const Counter counter = edit_.start() + edit_.len();
  if (gathering) touch(idx);
  // The open txn's last op ends at `counter`, so adjacency is the position.
  Op* run = nullptr;
  if (!edit_.ops().empty()) {
    Op& last = edit_.ops().back();
    if (continues_insert(last, idx, pos)) {
      run = &last;
    }
  }
  // Typing on within a many-op transaction (one ASCII character where the
  // last insert ended): the plain state's typing lane takes it in place, as
  // for a direct keystroke (PlainSeq::lane_type; insert_utf8 otherwise).
  // fast_commit: the tests clear it to compare with the general path.
  if (!(run && utf8.size() == 1 && test_.fast_commit &&
        plain->lane_type(self, counter, static_cast<size_t>(pos), utf8[0]))) {
    Status st = plain->insert_utf8(self, counter, static_cast<uint32_t>(pos), utf8, n);
    if (!st.ok()) return op_error(*this, std::move(st), counter, idx);
  }
  advance_vv(*state, self, counter + static_cast<Counter>(n));
  edit_.extend(static_cast<Counter>(n));
  if (run) {
    run->text.append_utf8(utf8, n, &text_pool);
    return Status();
  }
  // A new op's text longer than the inline bytes goes into the doc's text
  // pool (one bump, not a malloc per pasted or retyped word); the op never
  // leaves this doc but as a copy, which owns its bytes.
  new_txn_op(edit_.ops(), OpKind::kTextInsert, idx, counter, pos, true)
      .text.init_utf8(utf8, n, text_pool);
  return Status();
}

Status DocCore::local_delete_run(uint32_t idx, ContainerState& cs, int32_t pos, int32_t n,
                                 uint32_t id_peer, int32_t id_counter, bool erase) {
  PlainSeq* const plain = cs.plain();
  WEFT_DCHECK(plain && plain->ids_known() && n >= 1);
  WEFT_DCHECK(!erase || static_cast<size_t>(pos) + static_cast<size_t>(n) <= plain->visible_units());
  const ID start{peer_ids[id_peer], id_counter};
  if (edit_.direct()) {
    settle_direct();
  } else if (edit_.ops().empty() && can_write_direct()) {
    Status st =
        erase ? plain->erase(static_cast<uint32_t>(pos), static_cast<uint32_t>(n)) : Status();
    if (!st.ok()) return op_error(*this, std::move(st), changes.back().end(), idx);
    direct_delete(idx, pos, n, start);
    return Status();
  }
  open_txn();
  const Counter counter = edit_.start() + edit_.len();
  if (gathering) touch(idx);
  Status st =
      erase ? plain->erase(static_cast<uint32_t>(pos), static_cast<uint32_t>(n)) : Status();
  if (!st.ok()) return op_error(*this, std::move(st), counter, idx);
  advance_vv(*state, self, counter + n);
  edit_.extend(n);
  if (!edit_.ops().empty()) {
    Op& last = edit_.ops().back();
    if (last.kind == OpKind::kSeqDelete && last.container == idx &&
        extend_delete(last, pos, n, start)) {
      return Status();
    }
  }
  Op& op = new_txn_op(edit_.ops(), OpKind::kSeqDelete, idx, counter, pos, true);
  op.len = n;
  op.start_id = start;
  return Status();
}

bool DocCore::local_erase_one(uint32_t idx, ContainerState& cs, size_t pos, Status* st) {
  if (!test_.fast_commit || gathering || has_subscribers() || pos > INT32_MAX) return false;
  uint32_t id_peer = 0;
  int32_t id_counter = 0;
  if (!cs.plain()->lane_erase_one(pos, &id_peer, &id_counter)) return false;
  *st = local_delete_run(idx, cs, static_cast<int32_t>(pos), 1, id_peer, id_counter, false);
  return true;
}

void DocCore::direct_delete(uint32_t idx, int32_t pos, int32_t n, const ID& start) {
  WEFT_DCHECK(edit_.form() == LocalEdit::Form::kNone);
  Change& last = changes.back();
  const Counter counter = last.end();
  advance_vv(*state, self, counter + n);
  // As commit_in_place: a delete run continued extends the change's last
  // op (settle_direct undoes that from the saved fields), else a new op.
  Op& run = last.ops.back();
  LocalEdit::DirectTxn how;
  how.pushed = true;
  if (run.kind == OpKind::kSeqDelete && run.container == idx) {
    const int32_t run_len = run.len;
    const ID run_start = run.start_id;
    if (extend_delete(run, pos, n, start)) {
      how.pushed = false;
      how.run_len = run_len;
      how.run_start = run_start;
      how.pos = pos;
      how.len = n;
      how.start = start;
    }
  }
  if (how.pushed) {
    Op& op = new_txn_op(last.ops, OpKind::kSeqDelete, idx, counter, pos);
    op.len = n;
    op.start_id = start;
  }
  edit_.begin_direct(counter, n, how);
}

int64_t DocCore::commit_timestamp(const CommitOptions& options) const {
  if (options.timestamp) return *options.timestamp;
  if (!record_timestamp) return 0;
  return std::chrono::duration_cast<std::chrono::seconds>(
             std::chrono::system_clock::now().time_since_epoch())
      .count();
}

void DocCore::settle_direct() {
  // The transaction as the general path holds it: opened on top of this
  // peer's change (its start and len stay), one op.
  OpList& ops = edit_.direct_to_txn(ID{peer, edit_.start() - 1});
  const LocalEdit::DirectTxn& how = edit_.direct_txn();
  Change& last = changes.back();
  Op& run = last.ops.back();
  if (how.pushed) {
    ops.push_back(std::move(run));
    last.ops.pop_back();
  } else if (run.kind == OpKind::kTextInsert) {
    const auto keep = static_cast<size_t>(how.keep);
    Op& op = new_txn_op(ops, OpKind::kTextInsert, run.container, edit_.start(),
                        run.pos + how.keep);
    op.text = run.text.substr(keep);
    run.text.truncate(keep);
  } else {
    Op& op = new_txn_op(ops, OpKind::kSeqDelete, run.container, edit_.start(), how.pos);
    op.len = how.len;
    op.start_id = how.start;
    run.len = how.run_len;
    run.start_id = how.run_start;
  }
  WEFT_DCHECK(edit_.form() == LocalEdit::Form::kTxn);
}

bool DocCore::commit_in_place(const CommitOptions& options) {
  // Whatever observes a commit (events, the UndoManager's hooks, local
  // update bytes) takes the general path, as does a transaction of several ops.
  if (edit_.ops().size() != 1 || !test_.fast_commit || gathering || !commit_hooks.empty() ||
      !local_update_subscribers.empty() || changes.empty()) {
    return false;
  }
  // The merge rule of the general path: this peer's change is the latest in
  // the log, the transaction starts right on top of it ...
  Change& last = changes.back();
  const auto& deps = edit_.deps().ids();
  if (last.peer != self || last.end() != edit_.start() || deps.size() != 1 ||
      deps[0] != ID{peer, edit_.start() - 1} || !has_room(last)) {
    return false;
  }
  // ... within the merge interval and with the same message.
  if (!merges_into(last, options)) return false;
  Op& op = edit_.ops().front();
  Op& run = last.ops.back();
  // Typing on at the end of the change's last insert (checked inline: the
  // counters are adjacent, as the change's last op ends where the txn starts).
  if (op.kind == OpKind::kTextInsert && continues_insert(run, op.container, op.pos)) {
    run.text.append(op.text);
  } else if (op.kind == OpKind::kSeqDelete && run.kind == OpKind::kSeqDelete &&
             op.container == run.container) {
    // Forward-deleting or backspacing on (extend_op's delete case, inline).
    if (!extend_delete(run, op.pos, op.len, op.start_id)) last.ops.push_back(std::move(op));
  } else if (!extend_op(run, op)) {
    last.ops.push_back(std::move(op));
  }
  edit_.ops().pop_back();
  edit_.map_prev().clear();
  publish_into(last, edit_.take_len());
  return true;
}

Status DocCore::commit(const CommitOptions& options) {
  flush_typing();
  if (edit_.direct()) {
    if (commit_direct(options)) return Status();
    settle_direct();
  }
  if (edit_.ops().empty() || commit_in_place(options)) return Status();
  const Counter start = edit_.start(), len = edit_.len();
  int64_t ts = commit_timestamp(options);
  // Merge into the previous change the way Loro does: the commit continues
  // this peer's last change (the latest in the log) directly on top of it,
  // within the merge interval and with the same message.
  Change* prev = nullptr;
  bool prev_full = false;  // it would have merged, but the last change is full
  if (!by_peer[self].empty() && by_peer[self].back() + 1 == changes.size()) {
    Change& last = changes.back();
    const auto& deps = edit_.deps().ids();
    if (last.end() == start && deps.size() == 1 && deps[0] == ID{peer, start - 1}) {
      ts = std::max(ts, last.timestamp);  // the one dep is in `last`
      if (merge_rule_allows(last.timestamp, last.msg, ts, options.message)) {
        if (has_room(last))
          prev = &last;
        else
          prev_full = true;
      }
    }
  }
  if (!prev) {
    for (const ID& d : edit_.deps().ids()) {
      if (const Change* dc = find_change(d.peer, d.counter)) ts = std::max(ts, dc->timestamp);
    }
  }
  // Built only for hooks (the UndoManager): a keystroke commit without any
  // pays for no record.
  std::unique_ptr<CommitRecord> record;
  if (!commit_hooks.empty()) {
    record = std::make_unique<CommitRecord>();
    record->peer = peer;
    record->start = start;
    record->end = start + len;
    record->origin = options.origin;
    record->ops.assign(edit_.ops().begin(), edit_.ops().end());
    record->map_prev = std::move(edit_.map_prev());
  }
  edit_.map_prev().clear();
  edit_.take_len();
  const VersionVector before =
      local_update_subscribers.empty() ? VersionVector() : to_public(oplog_vv);
  // Merged: the open ops move over one by one (the op list keeps its capacity);
  // otherwise the new change takes the op list's array whole.
  const bool merged = prev != nullptr;
  if (merged) {
    prev->len += len;
    for (Op& o : edit_.ops()) {
      if (!extend_op(prev->ops.back(), o)) prev->ops.push_back(std::move(o));
    }
    edit_.ops().clear();
    // Keep the storage for the next keystroke, not the peak of a huge txn.
    if (edit_.ops().capacity() > 64) edit_.ops() = OpList();
    oplog_vv.set(self, prev->end());
    oplog_frontiers.assign(ID{peer, prev->end() - 1});
  }
  if (!merged) {
    Change ch;
    ch.peer = self;
    ch.counter = start;
    ch.len = len;
    ch.deps = edit_.deps().ids();
    ch.msg = options.message;
    ch.timestamp = ts;
    edit_.ops().shrink_to_fit();  // (a long txn's list may have most of its room free)
    ch.ops = std::move(edit_.ops());
    if (prev_full) ch.ops.reserve(kMergeOpsMax);  // the next commits merge into it
    append_change(std::move(ch));
  }
  // The transaction is in the op log now: no uncommitted edit is left.
  WEFT_DCHECK(edit_.form() == LocalEdit::Form::kNone && edit_.len() == 0);
  if (merged)
    state_frontiers.assign(oplog_frontiers.ids()[0]);
  else
    state_frontiers = oplog_frontiers;
  if (gathering) {
    end_events(EventTrigger::kLocal, options.origin, options.message, edit_.deps());
  }
  if (!commit_hooks.empty()) {
    // A hook added by an event callback during this commit sees an empty record.
    if (!record) record = std::make_unique<CommitRecord>();
    auto hooks = commit_hooks;
    for (auto& [id, hook] : hooks) hook(*record);
  }
  if (!local_update_subscribers.empty()) {
    std::string bytes = export_binary(before, false);
    auto subs = local_update_subscribers;
    for (auto& [id, cb] : subs) cb(bytes);
  }
  return Status();
}

}  // namespace weft::crdt::detail

// DocCore's typing buffer: keystrokes typed on, held back and applied in one
// step (see "the typing buffer" in core.h).
#include "crdt/core.h"
#include "crdt/dcheck.h"

namespace weft::crdt::detail {

bool DocCore::begin_typing(uint32_t idx, size_t pos, char ch) {
  WEFT_DCHECK(edit_.form() == LocalEdit::Form::kNone);
  // The lane's case for a keystroke that opens a transaction, at a commit
  // boundary (the caller checked), without auto-commit, and a default commit
  // merging into this peer's last change (commit_direct's rule with default
  // options: no timestamp recorded, so only the change's message and time
  // decide).
  if (detached || auto_commit || record_timestamp || !can_write_direct()) return false;
  const Change& last = changes.back();
  if (!merge_rule_allows(last.timestamp, last.msg, 0, std::nullopt)) return false;
  // The flush's insert_utf8 must not fail: the position is inside the text
  // (nothing touches the plain state until the flush).
  const PlainSeq* plain = lane_plain(idx);
  if (!plain || pos > plain->visible_units() || pos > INT32_MAX) return false;
  // Typing on at the end of the change's last insert extends that op; a key
  // anywhere else (another cursor, after a delete) starts a new op, as the
  // direct keystroke would (extend_op joins only adjacent inserts).
  const Op& run = last.ops.back();
  edit_.begin_typing(idx, pos, ch, !continues_insert(run, idx, static_cast<int64_t>(pos)));
  return true;
}

bool DocCore::retype(uint32_t idx, size_t pos, char ch) {
  // Every key committed with default options, into the same Text (typing,
  // then a jump to another cursor): after the flush, all that begin_typing
  // checked still holds, as nothing else ran since it did (every other
  // entry point flushes first) and the flush left the change published with
  // the state right at its end. Only the position is new.
  const LocalEdit::TypingBuffer& t = edit_.buffer();
  const bool committed = t.committed == t.n && idx == t.idx;
  const size_t end = t.pos + t.n;  // where the change's last op ends
  flush_typing_now();
  if (!committed || !has_room(changes.back()))  // (begin_typing checks for room)
    return !edit_.open() && begin_typing(idx, pos, ch);
  if (pos > lane_plain(idx)->visible_units() || pos > INT32_MAX) return false;
  edit_.begin_typing(idx, pos, ch, pos != end);  // (pos == end: the buffer was full)
  return true;
}

void DocCore::flush_typing_now() {
  const uint32_t n = edit_.buffer().n, done = edit_.buffer().committed;
  const LocalEdit::TypingBuffer& typing = edit_.end_typing();  // (its bytes stay)
  const std::string_view bytes(typing.bytes, n);
  // What the lane did per keystroke, once: the plain state (in place at the
  // hinted spot when the chunk has room, as lane_type), the version, the
  // text of the change's last insert op (or of a new one, `fresh`).
  Change& last = changes.back();
  const Counter counter = last.end();
  PlainSeq& plain = *lane_plain(typing.idx);
  // (One key, as when a read follows every keystroke: lane_type's constant
  // size makes its byte move and the op text's append a few stores.)
  if (n == 1 ? !plain.lane_type(self, counter, typing.pos, bytes[0])
             : !plain.lane_type_n(self, counter, typing.pos, bytes.data(), n)) {
    // Cannot fail: begin_typing checked the position.
    plain.insert_utf8(self, counter, static_cast<uint32_t>(typing.pos), bytes, n).ignore_error();
  }
  advance_vv(*state, self, counter + static_cast<Counter>(n));
  // The bytes go at the end of the change's last op, or of a new one.
  Op* run = typing.fresh ? &new_txn_op(last.ops, OpKind::kTextInsert, typing.idx, counter,
                                       static_cast<int32_t>(typing.pos))
                         : &last.ops.back();
  const auto keep = static_cast<int32_t>(run->text.size());
  run->text.append_utf8_wide(bytes, n, &text_pool);  // (typing.bytes has 8 bytes and more)
  // The committed bytes: what commit_direct published (the change, the op
  // log's version, both frontiers).
  if (done != 0) publish_into(last, static_cast<Counter>(done));
  // The uncommitted tail: the direct keystroke the lane left open.
  if (done != n) {
    // All of a new op uncommitted: the keystroke appended it; else the tail extends it.
    LocalEdit::DirectTxn how;
    how.pushed = typing.fresh && done == 0;
    how.keep = keep + static_cast<int32_t>(done);
    edit_.begin_direct(counter + static_cast<Counter>(done), static_cast<Counter>(n - done), how);
  }
}

}  // namespace weft::crdt::detail

// Internal: DocCore, the state behind a Doc and its handles: the op log
// (changes in a topological order, indexed per peer), the current state of
// every container, the open local transaction and the subscribers.
//
// Thread safety: none (the Doc's rule applies).
#ifndef WEFT_SRC_CRDT_CORE_H_
#define WEFT_SRC_CRDT_CORE_H_

#include <algorithm>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <unordered_map>
#include <unordered_set>
#include <utility>
#include <vector>

#include "crdt/container_state.h"
#include "crdt/dcheck.h"
#include "crdt/op.h"
#include "crdt/plain_state.h"
#include "crdt/fugue_tracker.h"
#include "crdt/local_edit.h"
#include "crdt/small_vec.h"
#include "weft/crdt/doc.h"

namespace weft::crdt::detail {

struct Change {
  uint32_t peer = 0;  // dense peer index
  Counter counter = 0;
  Counter len = 0;
  Lamport lamport = 0;
  int64_t timestamp = 0;
  std::optional<std::string> msg;
  SmallVec<ID, 2> deps;  // real peer ids (inline: one or two in the common case)
  // Set by append_change: where the closure of deps (+ own earlier counters)
  // lies in DocCore::vv_pool (see DocCore::deps_vv), and its total.
  uint32_t vv_at = 0, vv_len = 0;
  int64_t deps_total = 0;
  OpList ops;  // (one op inline: most changes hold one)
  Counter end() const { return counter + len; }
};

// What a local commit did, for the UndoManager: its ops, and for map ops the
// value the key held before (nullopt = absent).
struct CommitRecord {
  PeerId peer = 0;
  Counter start = 0, end = 0;
  std::string origin;
  std::vector<Op> ops;
  std::vector<std::optional<Value>> map_prev;  // aligned with ops; may end early (= absent)
};

struct Subscriber {
  uint64_t id;
  std::optional<uint32_t> container;  // nullopt = root (all)
  EventCallback callback;
};

// The lowest position that units [d, d + n) of positional op `op` reach in
// the op's version: an insert's left neighbour (-1 at the start), a delete's
// first unit.
inline int64_t partial_low(const Op& op, Counter d, Counter n) {
  if (op.kind != OpKind::kSeqDelete) return int64_t{op.pos} + d - 1;
  if (op.len > 0) return op.pos;
  return int64_t{op.pos} - d - (n - 1);
}

// Applies units [d, d + n) of positional op `op` by `peer` to `seq` (an
// insert's contents: contents[0, n)) at the op's positions less `shift` (a
// partial tracker's skip), in version `vv` (nullptr: all). Errors: the Seq's.
Status apply_positional(Seq& seq, const Op& op, uint32_t peer, Counter d, Counter n, int64_t shift,
                        const uint32_t* contents, DenseVv* vv);

// Switches that tests set to compare the engine's paths with one another and
// to verify its structures as it goes; production keeps the defaults. Tests
// reach them through tests/crdt/core_access.h.
struct TestOptions {
  // False forces every Text / List straight to a Fugue tracker.
  bool plain_enabled = true;
  // False: a concurrent op materializes the whole tracker instead of a
  // partial one.
  bool partial_enabled = true;
  // A partial tracker leaves out the base units more than this many units
  // before the lowest position its ops reach (PartialTracker::skip), so a
  // later op of the import a little lower still fits (tests: 0, the edge).
  size_t partial_skip_margin = 1024;
  // A concurrent op whose partial replay would replay at least this many
  // changes gets the whole tracker instead, kept for good (begin_partial),
  // unless the text or list holds more than keep_tracker_max_units units: a
  // tracker takes tens of bytes per unit, a plain state a few.
  size_t keep_tracker_changes = 256;
  size_t keep_tracker_max_units = size_t{1} << 20;
  // Verify the tracker's prepare state from scratch before every sequence op
  // (Seq::check_prepare; O(elements) per op).
  bool check_tracker = false;
  // False sends every commit down the general path (no direct keystroke,
  // typing lane or commit in place).
  bool fast_commit = true;
};

// For tests and benchmarks: partial trackers begun, how many of them left
// base units out (PartialTracker::skip), and how many gave way to the whole
// tracker (an op older than their base or below their skip, an anchor),
// and how many replays were long enough to keep the whole tracker instead.
struct PartialStats {
  uint64_t begun = 0, skipped = 0, whole = 0, kept = 0;
};

struct DecodedBody;  // binary_codec.h

class DocCore {
 public:
  explicit DocCore(PeerId peer);

  // ---- consistency
  // The whole document's invariants (in the manner of diamond-types'
  // dbg_check), kInternal naming the first one broken. Always: the op log's
  // version matches its changes; one form of uncommitted edit at a time; the
  // state's version is the op log's plus the open transaction's (or direct
  // keystroke's) units; each Text / List holds a plain state xor a tracker, a
  // partial tracker only as a temporary one, and no temporary tracker outside
  // an import or replay. `deep` adds, in O(document): frontiers, every
  // change's lamport and deps version recomputed, each plain state's chunk
  // structure and each tracker's prepare counts (Seq::check_prepare).
  Status check(bool deep) const;
  Status check_container(const State& s, uint32_t idx, bool deep) const;

  // ---- tables
  uint32_t intern_peer(PeerId peer);
  uint32_t intern_container(const ContainerId& id);
  PeerId real_peer(uint32_t idx) const { return peer_ids[idx]; }

  // ---- causal graph
  // The change holding unit `id` (nullptr when absent).
  const Change* find_change(PeerId peer, Counter counter) const;
  Lamport lamport_of(PeerId peer, Counter counter) const;
  // The closure of `ch`'s deps (+ its own earlier counters). REQUIRES: `ch`
  // went through append_change. Valid until the next append_change.
  std::span<const int32_t> deps_vv(const Change& ch) const {
    WEFT_DCHECK(size_t{ch.vv_at} + ch.vv_len <= vv_pool.size());
    return {vv_pool.data() + ch.vv_at, ch.vv_len};
  }
  // The version of op unit `id` (everything it had seen, itself excluded).
  DenseVv op_vv(const Change& ch, Counter counter) const;
  Result<DenseVv> frontiers_to_dense(const Frontiers& f) const;
  Frontiers dense_to_frontiers(const DenseVv& vv) const;
  VersionVector to_public(const DenseVv& vv) const;
  DenseVv to_dense(const VersionVector& vv);

  // ---- op log
  // Appends a causally ready change (deps known, counter == oplog end) and
  // computes its lamport and deps_vv. Takes `ch` by rvalue reference: one move
  // (into the log) per change, not two.
  void append_change(Change&& ch);
  // True when causally ready change `ch` may join the op log's last change
  // under Loro's commit-merge rule (same author, counters contiguous, its
  // only dep the author's previous op, within merge_interval, same message).
  bool joins_last(const Change& ch) const {
    if (changes.empty()) return false;
    const Change& last = changes.back();
    return continues(last, ch, last.timestamp, last.msg);
  }
  // The same rule for `ch` right after `prev`, with the time and message of
  // the change `prev` belongs to once joined (`time`, `msg`): what the
  // encoder writes and Doc::changes() lists as one change (see kMergeOpsMax).
  bool continues(const Change& prev, const Change& ch, int64_t time,
                 const std::optional<std::string>& msg) const;
  // Appends the units and ops of `ch` (joins_last) to the log's last change
  // as they are; returns the index of its first op there.
  size_t join_last(Change&& ch);
  // Joins op `k` of the log's last change to op k - 1 when it continues it
  // (both applied already); returns whether it did.
  bool join_ops_at(size_t k);
  // A copy of `ch` without its units below `from` (deps become its own previous op).
  Change slice_change(const Change& ch, Counter from) const;

  // ---- state
  ContainerState& container_state(State& s, uint32_t idx);
  // Applies units [ch.counter, to) of `ch` to `s`; from op `first_op` on
  // when given (the ops before it are in `s` already).
  Status apply_change(State& s, const Change& ch, Counter to, size_t first_op = 0);
  // Applies the first `n` units of `op` by dense peer `peer`; `lamport` is the
  // lamport of its first unit; `vv` its version (nullptr: the whole state).
  Status apply_op(State& s, const Op& op, uint32_t peer, Lamport lamport, Counter n, DenseVv* vv);
  // apply_op for a container holding its plain state; REQUIRES: vv == nullptr
  // and a positional op (insert or delete).
  Status apply_plain(State& s, ContainerState& cs, const Op& op, uint32_t peer, Counter n);
  // Brings the prepare version of Text / List `container`'s Seq in `s` to
  // `target` (nullptr: everything `s` holds) by retreating and advancing only
  // the ops in between (Eg-walker). REQUIRES: the container holds a Seq.
  Status prepare_seq(State& s, uint32_t container, const DenseVv* target);
  [[gnu::always_inline]] static void advance_vv(State& s, uint32_t peer, Counter end) {
    if (peer < s.vv.ends.size()) {  // the keystroke case: no resize
      int32_t& at = s.vv.ends[peer];
      if (end > at) {
        s.vv_total += end - at;
        at = end;
      }
      return;
    }
    advance_vv_slow(s, peer, end);
  }
  static void advance_vv_slow(State& s, uint32_t peer, Counter end);
  // Whether a rebuilt state's plain Texts / Lists keep ids: kDeferred for one
  // mostly read (a checkout, a diff's ends): a third less replay work, and its
  // first local delete pays one more replay (recover_ids).
  enum class PlainIds { kTracked, kDeferred };
  // Rebuilds a state holding exactly the ops in `vv` (`plain`: see State::plain).
  Result<std::unique_ptr<State>> build_state(const DenseVv& vv, bool plain = true,
                                             PlainIds ids = PlainIds::kTracked);
  // Gives every plain Text / List state of `s` without ids (see
  // PlainSeq::ids_known) its ids again: the same state replayed from the op
  // log (and the open transaction when `s` is the live state) with ids, or
  // materialize when that history has concurrent edits. Same REQUIRES as
  // materialize.
  Status recover_ids(State& s);
  // Whether the op log is one chain (it replays on the fast path throughout).
  bool history_is_linear() const;
  // materialize's and recover_ids' replay: a scratch state holding what `s`
  // holds (`plain`: see State::plain), with ids. REQUIRES: settled.
  Result<std::unique_ptr<State>> replay_state(const State& s, bool plain);
  // Gives every Text / List of `s` that holds a plain state its Fugue tracker,
  // replayed from the op log (and the open transaction when `s` is the live
  // state). REQUIRES: the op log holds the history up to s.vv.
  Status materialize(State& s);
  // Eg-walker's partial replay, instead of materialize, for an op of plain
  // Text / List `idx` whose version `op_vv` is not the state's: a temporary
  // tracker holding placeholders for the state at the latest version `base`
  // that every op to replay has seen (the common ancestor of the state and
  // `op_vv`, lowered until it holds), and the ops since `base` replayed into
  // it. The container's plain state moves into its PartialTracker
  // (SeqState::begin_partial). Falls back to materialize when a replayed op
  // is a style anchor or a local transaction is open. `op_low`: the lowest
  // position the op reaches (partial_low); the units of the state at `base`
  // that no op to replay reaches are left out of the tracker
  // (PartialTracker::skip). A replay of keep_tracker_changes or more (on
  // the live state) gives the container its whole tracker for good instead.
  // REQUIRES: s.containers[idx] holds a plain state.
  Status begin_partial(State& s, uint32_t idx, const DenseVv& op_vv, int64_t op_low);
  // The log indexes of the changes holding units in (from, to], peer by peer
  // (not in log order), into `out`: O(those changes + peers), not O(log).
  void changes_past(const DenseVv& from, const DenseVv& to, std::vector<uint32_t>& out) const;
  // Turns every temporary tracker of `s` (SeqState::is_temporary) back into a plain
  // state with ids (those of a partial tracker's placeholders come from the
  // plain state it replaced; without them, none), unless it holds style
  // anchors (it then stays a tracker). Errors: kOutOfRange when an op
  // reached past the end of its version (into the padding placeholders);
  // kInternal when the tracker disagrees with the plain state it replaced.
  Status fold_trackers(State& s);
  // For a snapshot's state section: sets the value of Text `container` in `s`
  // without replay (ids unknown; the tracker is built from the op log when an
  // edit needs it). REQUIRES: the op log already holds the history up to s.vv.
  // Errors: kInvalidArgument (not a Text, bad UTF-8).
  Status set_plain_text(State& s, uint32_t container, std::string_view utf8);
  // Same for List `container` (values must not be containers created later).
  Status set_plain_list(State& s, uint32_t container, std::vector<Value> values);
  Value container_value(const State& s, uint32_t idx, bool deep) const;
  Value doc_value(const State& s) const;

  // ---- import / local edits / commit
  Result<ImportStatus> import_changes(std::vector<Change> incoming,
                                      const ImportOptions& options = {});
  // Whether every change of `incoming` would apply now (none would wait).
  bool all_ready(const std::vector<Change>& incoming) const;
  Status commit(const CommitOptions& options);
  // The keystroke commit: when the open transaction is one op that continues
  // this peer's last change (which the general path would merge it into)
  // and nothing observes the commit (no event gathering, commit hooks or
  // local-update subscribers), extends that change in place — its length,
  // its last op, the version and frontiers — and returns true. Returns false
  // with nothing changed otherwise (the general path then runs).
  bool commit_in_place(const CommitOptions& options);
  // The timestamp a commit records before merging: the explicit one, else
  // now when recording, else 0.
  int64_t commit_timestamp(const CommitOptions& options) const;
  // Applies a local op to the state and the open transaction.
  Status local_op(Op&& op);
  // The keystroke path: same effects as local_op of a text insert of valid
  // UTF-8 `utf8` (n code points) at unicode position `pos` of Text `idx`,
  // but when the text is plain it builds no Op: it appends to the open
  // transaction's last op when the insert continues it, else constructs the
  // op in place. REQUIRES: cs is container_state(*state, idx).
  Status local_text_insert(uint32_t idx, ContainerState& cs, int32_t pos, std::string_view utf8,
                           size_t n);
  // Same for deleting units [pos, pos + n) of a plain Text / List with known
  // ids, whose ids are (id_peer, id_counter + k) (forward-delete and
  // backspace runs extend in place).
  // REQUIRES: cs.plain() && cs.plain()->ids_known(), n >= 1, pos + n <= units(),
  // and those ids (see PlainSeq::id_at). `erase` false: the plain state
  // already dropped those units (a multi-run delete erases its whole range
  // once, then records each run; only without events or observers).
  Status local_delete_run(uint32_t idx, ContainerState& cs, int32_t pos, int32_t n,
                          uint32_t id_peer, int32_t id_counter, bool erase = true);
  // Deletes the one unit at `pos` of plain container `idx` in place when the
  // plain state's lane can (PlainSeq::lane_erase_one), recorded as
  // local_delete_run does; false with nothing changed otherwise. Only without
  // events or observers (the value before the edit is taken before erasing).
  bool local_erase_one(uint32_t idx, ContainerState& cs, size_t pos, Status* st);
  // Errors: kFailedPrecondition when the doc is detached. Inline: every
  // keystroke asks.
  Status check_editable(uint32_t container) const {
    (void)container;
    return detached ? detached_error() : Status();
  }
  static Status detached_error();
  bool txn_open() const { return edit_.open(); }
  bool direct_open() const { return edit_.direct(); }
  // The uncommitted local edit (read only: it changes through DocCore).
  const LocalEdit& local_edit() const { return edit_; }
  size_t txn_op_count() const { return edit_.ops().size(); }

  // ---- the direct keystroke
  // A keystroke that opens a transaction which the commit would merge into
  // this peer's last change (see can_write_direct) writes its op straight
  // into that change — extending the change's last op or appending one —
  // instead of building a transaction op that the commit folds and drops.
  // While it is open (LocalEdit kDirect) the change holds those units beyond its `len`, and
  // the transaction's ops is empty; the commit publishes them (commit_direct) or, when the
  // general path must run, settle() first moves them back into the transaction's ops as
  // that path would hold them. Everything other than a keystroke continuing
  // the direct insert and a commit settles first: local_op, materialize, a
  // commit that cannot merge in place, and every Doc reader of the op log.

  // Whether a keystroke that opens a transaction now may write directly: the
  // general path would merge that transaction into this peer's last change
  // (the latest in the log, the state frontier right at its end; the commit
  // options are checked by commit_direct) and nothing observes the commit.
  bool can_write_direct() const {
    if (!test_.fast_commit || changes.empty() || gathering || !subscribers.empty() ||
        !commit_hooks.empty() || !local_update_subscribers.empty() || state_frontiers.size() != 1) {
      return false;
    }
    const Change& last = changes.back();
    const ID& head = state_frontiers.ids()[0];
    return last.peer == self && head.peer == peer && head.counter + 1 == last.end() &&
           has_room(last);
  }
  // Publishes the direct keystroke when the commit may merge it in place
  // (the merge interval and message rule of the general path, still no
  // observers); returns false with nothing changed otherwise. Inline: every
  // keystroke's commit.
  bool commit_direct(const CommitOptions& options) {
    // Observers that arrived after the keystroke take the general path (the
    // change and the deps were checked when the keystroke went direct).
    if (gathering || !commit_hooks.empty() || !local_update_subscribers.empty()) return false;
    Change& last = changes.back();
    if (!merges_into(last, options)) return false;
    publish_into(last, edit_.end_direct());
    return true;
  }
  // The time and message half of Loro's commit-merge rule, shared by
  // commits, imports (joins_last) and the encoder: a change stamped `time`
  // with message `msg` may join one stamped `last_time` with `last_msg` when
  // it is within merge_interval of it (an earlier time counts as last_time)
  // and the messages are equal.
  bool merge_rule_allows(int64_t last_time, const std::optional<std::string>& last_msg,
                         int64_t time, const std::optional<std::string>& msg) const {
    return std::max(time, last_time) - last_time <= merge_interval && last_msg == msg;
  }
  // A local commit, or an imported change that continues the log's last
  // change, merges into it only while it holds fewer ops than this. Past it
  // the change's op array would grow by copying it whole, doubling (a typing
  // session's change: ~8,000 ops, 450 KB, copied over again to get there); instead the
  // next commit opens a change that reserves this many ops at once, so a long
  // session's ops are never copied. Change boundaries carry no meaning: the
  // encoder joins such changes again (ColumnWriter::continues_open).
  static constexpr size_t kMergeOpsMax = 1024;
  static bool has_room(const Change& last) { return last.ops.size() < kMergeOpsMax; }
  // The general path's merge rule for a commit continuing this peer's last
  // change `last` on top of it: within the merge interval, same message.
  bool merges_into(const Change& last, const CommitOptions& options) const {
    int64_t ts = 0;
    if (options.timestamp || record_timestamp) ts = commit_timestamp(options);  // no call: 0
    return merge_rule_allows(last.timestamp, last.msg, ts, options.message);
  }
  // Counts `units` of the uncommitted edit (its units, taken from it) into
  // `last` (this peer's change, the latest in the log) and moves the op
  // log's version and both frontiers to its end.
  void publish_into(Change& last, Counter units) {
    last.len += units;
    const Counter end = last.end();
    // This peer's change is in the log, so its entry exists (no resize).
    oplog_vv.ends[self] = end;
    const ID head{peer, end - 1};
    oplog_frontiers.assign(head);
    state_frontiers.assign(head);
  }
  // ---- the typing lane: the commonest keystrokes end to end, inline.
  // Typing on: ASCII `ch` inserted at unicode position `pos` of Text `idx`
  // continues the insert that ends this peer's last change (or the direct
  // keystroke's) exactly where a direct keystroke would extend it, and the
  // plain state takes it in place (PlainSeq::lane_type). Same effects as
  // check_editable + local_text_insert; returns false with nothing changed
  // otherwise (the caller takes that path).
  [[gnu::always_inline]] bool lane_insert(uint32_t idx, size_t pos, char ch) {
    if (static_cast<unsigned char>(ch) >= 0x80 || detached) return false;
    const bool direct = edit_.direct();
    if (!direct && (!edit_.ops().empty() || !can_write_direct())) return false;
    Change& last = changes.back();
    Op& run = last.ops.back();
    if (!continues_insert(run, idx, static_cast<int64_t>(pos))) return false;
    const auto keep = static_cast<int32_t>(run.text.size());
    PlainSeq* plain = lane_plain(idx);
    const Counter counter = direct ? edit_.start() + edit_.len() : last.end();
    if (!plain || !plain->lane_type(self, counter, pos, ch)) return false;
    advance_vv(*state, self, counter + 1);
    run.text.append_utf8(std::string_view(&ch, 1), 1, &text_pool);
    if (direct) {
      edit_.extend(1);
      return true;
    }
    edit_.begin_direct_extend(counter, keep);
    return true;
  }
  // Backspace / forward delete: erasing the one unit at unicode position
  // `pos` of Text `idx` opens a direct keystroke and the plain state finds
  // and drops the unit in place (PlainSeq::lane_erase_one). Same effects as
  // check_editable + id_at + local_delete_run; false with nothing changed
  // otherwise.
  [[gnu::always_inline]] bool lane_erase(uint32_t idx, size_t pos) {
    if (edit_.open() || detached || !can_write_direct()) return false;
    PlainSeq* plain = lane_plain(idx);
    uint32_t id_peer = 0;
    int32_t id_counter = 0;
    if (!plain || !plain->ids_known() || !plain->lane_erase_one(pos, &id_peer, &id_counter))
      return false;
    direct_delete(idx, static_cast<int32_t>(pos), 1, ID{peer_ids[id_peer], id_counter});
    return true;
  }
  // The plain state of live container `idx` (nullptr when it has none).
  PlainSeq* lane_plain(uint32_t idx) const {
    const auto& slots = state->containers;
    if (idx >= slots.size() || !slots[idx]) return nullptr;
    return slots[idx]->plain();
  }
  // ---- the typing buffer (crdt-typing): typed-on keystrokes held back.
  // ASCII keys typed one after another into a Text with a plain state, the
  // first at a commit boundary (no direct keystroke, no open transaction,
  // nothing observing, not auto-committing, and a commit with default options
  // would merge into this peer's last change), are stored here as bytes and
  // each default commit after them as a count; nothing else changes.
  // flush_typing() then applies them in one step: one plain-state insert of
  // all bytes (PlainSeq::lane_type_n at the hinted spot, else insert_utf8),
  // one append to the text of the change's last op when they continue that
  // insert, else a new op (`fresh`: a key at another cursor or after a
  // delete, as the direct keystroke would append), the state's version, and
  // for the committed bytes the change's len, the op
  // log's version and both frontiers (publish_into); an uncommitted tail
  // stays the direct keystroke the lane would have left (same ids, ops and
  // versions as the lane after the same calls). Every other entry point — each
  // public method of Doc, the handles and the UndoManager, and DocCore's
  // commit / local_op / settle / materialize — flushes first, so buffered
  // keystrokes reach the state at the next read or other edit and no reader
  // sees them missing. Bounded: a full buffer flushes. (A const reader may
  // flush: a Doc is not thread-safe, see doc.h.)
  static constexpr uint32_t kTypingMax = LocalEdit::kTypingMax;
  using TypingBuffer = LocalEdit::TypingBuffer;
  // Buffers ASCII `ch` typed at unicode position `pos` of Text `idx` when it
  // continues the buffer (or begins one, see begin_typing); false otherwise,
  // with the buffer flushed and nothing else changed (the lane and the
  // general path then run). Inline: every keystroke asks.
  [[gnu::always_inline]] bool type_on(uint32_t idx, size_t pos, char ch) {
    if (edit_.typing()) return edit_.type_on_end(idx, pos, ch) || retype(idx, pos, ch);
    // An open transaction (a many-op one, or the lane's direct keystroke)
    // keeps its own paths, without a call here.
    if (edit_.open()) return false;
    return begin_typing(idx, pos, ch);
  }
  // type_on's first case alone: ASCII `ch` at the buffer's end, into the same
  // Text (`idx` may be a handle's UINT32_MAX, never the buffer's), with room
  // left; false with nothing changed otherwise. (The buffer is never open
  // under auto-commit: set_auto_commit flushes it and begin_typing refuses.)
  [[gnu::always_inline]] bool type_on_end(uint32_t idx, size_t pos, char ch) {
    return edit_.type_on_end(idx, pos, ch);
  }
  // Starts the buffer with `ch` when the lane's conditions for a keystroke
  // that opens a transaction hold (see the block comment); false with
  // nothing changed otherwise. REQUIRES: no uncommitted edit
  // (LocalEdit kNone).
  bool begin_typing(uint32_t idx, size_t pos, char ch);
  // type_on's case for a key that does not continue the buffer: flushes it,
  // then buffers `ch` as begin_typing would (false when it would not).
  bool retype(uint32_t idx, size_t pos, char ch);
  // Doc::commit with keystrokes buffered: a commit with default options (no
  // message, no timestamp; begin_typing checked the rest) only counts them
  // as committed; any other flushes and returns false (the caller commits).
  [[gnu::always_inline]] bool commit_typing(const CommitOptions& options) {
    if (options.message || options.timestamp) {
      flush_typing_now();
      return false;
    }
    edit_.count_committed();
    return true;
  }
  bool typing_buffered() const { return edit_.typing(); }
  // commit_typing's default-options case. REQUIRES: typing_buffered().
  void count_typing_committed() { edit_.count_committed(); }
  // Applies the buffered keystrokes (no-op when there are none). Inline:
  // every entry point asks.
  void flush_typing() {
    if (edit_.typing()) flush_typing_now();
  }
  void flush_typing_now();
  // The one entry point of every reader and of every edit other than a
  // typed-on key (Doc and handle methods, the UndoManager, revert_to):
  // applies the typing buffer, so that what follows sees the buffered keys
  // as applied, and returns this core. (A direct keystroke stays: it is in
  // the state already; settle() below moves it into the transaction's ops for the paths
  // that need the general form.)
  DocCore& settled() {
    flush_typing();
    return *this;
  }
  // Opens the direct keystroke for a delete of `n` units at `pos` whose ids
  // start at `start`, already erased from the plain state: advances the
  // version and extends this peer's last change's last op or appends one.
  // REQUIRES: no uncommitted edit, can_write_direct().
  void direct_delete(uint32_t idx, int32_t pos, int32_t n, const ID& start);
  // Moves a direct keystroke back into the transaction's ops (no-op otherwise), after
  // flushing the typing buffer. Inline: every reader asks.
  void settle() {
    flush_typing();
    if (edit_.direct()) settle_direct();
  }
  void settle_direct();

  // ---- events
  void touch(uint32_t container);
  void begin_events();
  void end_events(EventTrigger by, const std::string& origin, std::optional<std::string> msg,
                  const Frontiers& from);
  void emit_all_diff(const State& before, EventTrigger by);
  bool has_subscribers() const { return !subscribers.empty(); }

  std::string export_json(const VersionVector& from, bool compress) const;
  Result<std::vector<Change>> decode_json(std::string_view text);
  std::string export_binary(const VersionVector& from, bool snapshot, bool fast = false) const;
  // Imports weft binary updates or a snapshot (binary_*.cc); a snapshot with a
  // state section loads into an empty doc without replaying its history.
  Result<ImportStatus> import_binary(std::string_view data, const ImportOptions& options = {});
  // Loro binary FastUpdates / FastSnapshot (loro_binary*.cc): decoded into
  // changes for import_changes; the op log from `from` on as change blocks
  // keyed by their first ID; and those wrapped as updates or a snapshot.
  Result<std::vector<Change>> decode_loro_binary(std::string_view data);
  std::vector<std::pair<ID, std::string>> encode_loro_blocks(const VersionVector& from) const;
  std::string export_loro_binary(const VersionVector& from, bool snapshot) const;

  // ---- narrow access for the rest of the engine: Doc (doc.cc), the
  // handles (handles.cc), the UndoManager (undo.cc), revert.cc, the codecs
  // and the tests (tests/crdt/core_access.h). The data members are private:
  // what other files read or change goes through these.
  PeerId local_peer() const { return peer; }
  uint32_t self_index() const { return self; }
  // Makes `p` this doc's peer (its later changes' author).
  void set_local_peer(PeerId p) {
    peer = p;
    self = intern_peer(p);
  }
  const std::vector<PeerId>& peer_table() const { return peer_ids; }
  // The dense index of real peer `p` (nullopt when the doc never saw it).
  std::optional<uint32_t> find_peer(PeerId p) const {
    auto it = peer_index.find(p);
    if (it == peer_index.end()) return std::nullopt;
    return it->second;
  }
  const std::vector<ContainerId>& container_table() const { return containers; }
  // The dense index of container `id` (nullopt when not interned).
  std::optional<uint32_t> find_container(const ContainerId& id) const {
    auto it = container_index.find(id);
    if (it == container_index.end()) return std::nullopt;
    return it->second;
  }
  // Marks root `idx` as requested through get_* (to_json shows it).
  void mark_local_root(uint32_t idx) { local_roots[idx] = true; }
  // The op log's changes, in their topological order.
  const std::vector<Change>& log() const { return changes; }
  const DenseVv& oplog_version() const { return oplog_vv; }
  const Frontiers& oplog_heads() const { return oplog_frontiers; }
  const Frontiers& state_heads() const { return state_frontiers; }
  // The live state (what the doc shows).
  State& live() { return *state; }
  const State& live() const { return *state; }
  // Installs `next` as the live state at `heads` (detached: an older
  // version than the op log's) and returns the one it replaces.
  std::unique_ptr<State> replace_live(std::unique_ptr<State> next, Frontiers heads,
                                      bool detach) {
    std::unique_ptr<State> before = std::move(state);
    state = std::move(next);
    state_frontiers = std::move(heads);
    detached = detach;
    return before;
  }
  bool is_detached() const { return detached; }
  void set_detached() { detached = true; }
  bool auto_commits() const { return auto_commit; }
  // Sets auto-commit and returns what it was (callers that edit in several
  // steps turn it off and restore it).
  bool set_auto_commit(bool on) { return std::exchange(auto_commit, on); }
  void set_record_timestamp(bool on) { record_timestamp = on; }
  void set_merge_interval(int64_t seconds) { merge_interval = seconds; }
  // The origin tag events of the import in progress carry ("" after it).
  void set_import_origin(std::string origin) { import_origin = std::move(origin); }
  // The counter of this peer's next op (inside the open edit, if any).
  Counter next_counter() const { return txn_open() ? edit_.start() + edit_.len() : oplog_vv.get(self); }
  bool gathering_events() const { return gathering; }
  // delete_units' scratch runs (handles.cc keeps their capacity here).
  std::vector<Seq::Run>& delete_runs_scratch() { return delete_runs; }
  OpTextPool& op_text_pool() { return text_pool; }
  // Subscribers, local-update subscribers and commit hooks (the UndoManager's),
  // each with an id from one counter; removing an unknown id does nothing.
  uint64_t add_subscriber(std::optional<uint32_t> container, EventCallback callback) {
    const uint64_t id = next_subscriber++;
    subscribers.push_back({id, container, std::move(callback)});
    return id;
  }
  void remove_subscriber(uint64_t id) {
    std::erase_if(subscribers, [&](const Subscriber& s) { return s.id == id; });
  }
  uint64_t add_local_update_subscriber(LocalUpdateCallback callback) {
    const uint64_t id = next_subscriber++;
    local_update_subscribers.emplace_back(id, std::move(callback));
    return id;
  }
  void remove_local_update_subscriber(uint64_t id) {
    std::erase_if(local_update_subscribers, [&](const auto& s) { return s.first == id; });
  }
  uint64_t add_commit_hook(std::function<void(const CommitRecord&)> hook) {
    const uint64_t id = next_subscriber++;
    commit_hooks.emplace_back(id, std::move(hook));
    return id;
  }
  void remove_commit_hook(uint64_t id) {
    std::erase_if(commit_hooks, [&](const auto& h) { return h.first == id; });
  }
  // A new core holding `src`'s history up to `vv` (nullptr: all of it) and
  // its state there, for peer `peer` (Doc::fork, Doc::fork_at; doc.cc).
  static std::shared_ptr<DocCore> copy_history(const DocCore& src, const DenseVv* vv, PeerId peer);

  // Opens the transaction (if none is open) the way local_op does (inline:
  // every keystroke asks).
  void open_txn() {
    if (!edit_.ops().empty()) return;
    edit_.begin_txn(oplog_vv.get(self));
    // After a local commit the state frontier is one ID: no vector copy.
    if (state_frontiers.size() == 1)
      edit_.deps().assign(state_frontiers.ids()[0]);
    else
      copy_txn_deps();
    if (has_subscribers()) begin_events();
  }
  void copy_txn_deps();
  // Marks an import or a replay: trackers that materialize makes inside it
  // are temporary (fold_trackers folds them back).
  struct FoldScope {
    explicit FoldScope(DocCore& core) : core_(core) { ++core_.fold_scope; }
    ~FoldScope() { --core_.fold_scope; }
    FoldScope(const FoldScope&) = delete;
    FoldScope& operator=(const FoldScope&) = delete;
    DocCore& core_;
  };
  // Tests' switches (see TestOptions) and the partial tracker's counters.
  TestOptions& test_options() { return test_; }
  const TestOptions& test_options() const { return test_; }
  const PartialStats& partial_stats() const { return partial_stats_; }

 private:
  // The one codec that is part of the core: a snapshot's state section
  // installs the op log and the live state together, without replay
  // (binary_state.cc).
  friend bool can_install_snapshot(const DocCore& core, const DecodedBody& body);
  friend ImportStatus install_snapshot(DocCore& core, DecodedBody& body);
  // Tests' door (tests/crdt/core_access.h): writes that only tests make.
  friend struct CoreAccess;

  // Long texts of decoded ops (see OpTextPool). Declared first: destroyed
  // after every op that may point into it.
  OpTextPool text_pool;

  PeerId peer;
  uint32_t self = 0;  // dense index of `peer`
  std::vector<PeerId> peer_ids;
  std::unordered_map<PeerId, uint32_t> peer_index;
  std::vector<ContainerId> containers;
  std::unordered_map<ContainerId, uint32_t> container_index;
  std::vector<bool> local_roots;  // roots requested through get_* (shown by to_json)

  std::vector<Change> changes;  // topological order
  // Every logged change's deps_vv, back to back: one shared block instead of
  // a heap vector per change (most are one-op keystrokes).
  std::vector<int32_t> vv_pool;
  DenseVv append_vv;                  // append_change's scratch (keeps its capacity)
  std::vector<Seq::Run> delete_runs;  // delete_units' scratch (keeps its capacity)
  DenseVv apply_vv;                   // apply_change's scratch (taken while in use: reentrant)
  std::vector<std::vector<uint32_t>> by_peer;  // change indexes per dense peer
  DenseVv oplog_vv;
  Frontiers oplog_frontiers;
  std::vector<Change> pending;

  std::unique_ptr<State> state;
  bool detached = false;
  Frontiers state_frontiers;

  // The uncommitted local edit: the typing buffer, the direct keystroke or
  // the open transaction (see local_edit.h).
  LocalEdit edit_;

  std::string import_origin;  // origin tag of the import in progress (for events)
  // Inside an import or a replay (build_state): trackers materialize makes
  // are temporary (they fold back at its end).
  int fold_scope = 0;
  bool auto_commit = false;
  bool record_timestamp = false;
  int64_t merge_interval = 1000;

  std::vector<Subscriber> subscribers;
  std::vector<std::pair<uint64_t, LocalUpdateCallback>> local_update_subscribers;
  uint64_t next_subscriber = 1;
  std::vector<std::pair<uint64_t, std::function<void(const CommitRecord&)>>> commit_hooks;
  // events being gathered: container -> shallow value before
  bool gathering = false;
  std::map<uint32_t, Value> before_values;
  int emitting = 0;

  TestOptions test_;
  PartialStats partial_stats_;
};

// Content diff between two shallow values of one container (nullopt when equal).
std::optional<ContainerDiff> diff_values(const ContainerId& id, const Value& before,
                                         const Value& after);

}  // namespace weft::crdt::detail

#endif  // WEFT_SRC_CRDT_CORE_H_

// Applying ops to container states: the change loop, the op dispatch per
// container type, and the plain state's positional path (see core.h).
#include <algorithm>
#include <utility>

#include "crdt/core.h"
#include "crdt/dcheck.h"
#include "weft/base/utf.h"

namespace weft::crdt::detail {
namespace {

// Calls insert(contents) with the contents of the first `n` units of insert
// `op`: code points for text, for a list the indexes of its values, which are
// appended to the SeqState's values.
template <typename Insert>
Status with_contents(SeqState& seq, const Op& op, Counter n, Insert insert) {
  uint32_t small[64];
  std::vector<uint32_t> big;
  uint32_t* contents = small;
  if (n > 64) {
    big.resize(n);
    contents = big.data();
  }
  if (op.kind == OpKind::kTextInsert) {
    op.text.decode(static_cast<size_t>(n), contents);
  } else {
    std::vector<Value>& values = seq.values();
    for (Counter k = 0; k < n; ++k) {
      contents[k] = static_cast<uint32_t>(values.size());
      values.push_back(op.values()[k]);
    }
  }
  return insert(contents);
}

// The context an apply error carries: which op, on which container (out of
// line: cold).
[[gnu::noinline, gnu::cold]] Status op_error_context(const DocCore& core, Status st, uint32_t peer,
                                                     const Op& op) {
  return st.with_context("op " + ID{core.peer_table()[peer], op.counter}.to_string() + " on " +
                         core.container_table()[op.container].to_string());
}

// An op whose kind does not fit its container's type (the decoders and the
// handles never make one).
[[gnu::noinline, gnu::cold]] Status op_kind_error(const DocCore& core, uint32_t peer,
                                                  const Op& op) {
  return op_error_context(core, internal_error("op kind does not fit the container's type"), peer,
                          op);
}

// Erases the `n` units of delete op `op` from a plain state: a forward run
// deletes [pos, pos + n), a backspace run (pos - n, pos].
inline Status erase_plain(PlainSeq& plain, const Op& op, Counter n) {
  const int64_t from = op.len > 0 ? int64_t{op.pos} : int64_t{op.pos} - n + 1;
  if (from < 0) return out_of_range("delete position below 0");
  return plain.erase(static_cast<uint32_t>(from), static_cast<uint32_t>(n));
}

}  // namespace

ContainerState& DocCore::container_state(State& s, uint32_t idx) {
  if (s.containers.size() <= idx) s.containers.resize(idx + 1);
  auto& slot = s.containers[idx];
  if (!slot) {
    const ContainerType type = containers[idx].type();
    if (ContainerState::is_sequence_type(type)) {
      const bool is_text = type == ContainerType::kText;
      slot = std::make_unique<ContainerState>(
          type, s.plain && test_.plain_enabled ? SeqState::empty_plain(is_text, s.plain_ids)
                                               : SeqState::empty_tracker(&peer_ids, is_text));
    } else {
      slot = std::make_unique<ContainerState>(type);
    }
  }
  return *slot;
}

Status apply_positional(Seq& seq, const Op& op, uint32_t peer, Counter d, Counter n, int64_t shift,
                        const uint32_t* contents, DenseVv* vv) {
  const int64_t pos = int64_t{op.pos} - shift;
  const Counter counter = op.counter + d;
  if (op.kind != OpKind::kSeqDelete)
    return seq.insert(peer, counter, static_cast<uint32_t>(pos + d), contents,
                      static_cast<size_t>(n), vv);
  // A forward delete's units all sit at its position in turn; a backward
  // one's (len < 0) step left from it.
  if (op.len > 0) return seq.erase_forward(peer, counter, static_cast<uint32_t>(pos), n, vv);
  for (Counter k = 0; k < n; ++k) {
    const int64_t at = pos - d - k;
    if (at < 0) return out_of_range("delete position below 0");
    WEFT_RETURN_IF_ERROR(seq.erase_one(peer, counter + k, static_cast<uint32_t>(at), vv));
  }
  return Status();
}

Status DocCore::apply_op(State& s, const Op& op, uint32_t peer, Lamport lamport, Counter n,
                         DenseVv* vv) {
  if (gathering) touch(op.container);
  ContainerState* csp = &container_state(s, op.container);
  if (op.kind == OpKind::kMapSet || op.kind == OpKind::kMapDelete) {
    MapState* map = csp->map_if();
    if (!map) return op_kind_error(*this, peer, op);
    map->apply(op.key(), lamport, peer_ids[peer],
               op.kind == OpKind::kMapSet ? &op.value() : nullptr);
    if (vv) vv->extend(peer, op.counter + 1);
    advance_vv(s, peer, op.counter + n);
    return Status();
  }
  if (op.kind == OpKind::kCounter) {
    CounterState* counter = csp->counter_if();
    if (!counter) return op_kind_error(*this, peer, op);
    counter->add(op.number());
    if (vv) vv->extend(peer, op.counter + 1);
    advance_vv(s, peer, op.counter + n);
    return Status();
  }
  // A sequence op.
  const SeqState* current = csp->seq_if();
  if (!current) return op_kind_error(*this, peer, op);
  if (current->is_plain()) {
    const bool positional = op.kind == OpKind::kTextInsert || op.kind == OpKind::kListInsert ||
                            op.kind == OpKind::kSeqDelete;
    if (vv == nullptr && positional) return apply_plain(s, *csp, op, peer, n);
    // Concurrent with the state: a temporary tracker from the common
    // ancestor on. A style anchor: the whole tracker, for good. A state
    // replayed without ids (a whole history into an empty doc, a checkout)
    // takes the whole tracker too: it replays all the same, and its fold
    // then gives every unit its id (a partial one could not: the
    // placeholders' ids come from the plain state, which has none).
    if (positional && test_.partial_enabled && s.plain_ids)
      WEFT_RETURN_IF_ERROR(begin_partial(s, op.container, *vv, partial_low(op, 0, n)));
    else
      WEFT_RETURN_IF_ERROR(materialize(s));
    csp = &container_state(s, op.container);
  } else if (const PartialTracker* partial = current->partial();
             partial && (op.kind == OpKind::kMark || op.kind == OpKind::kMarkEnd ||
                         (vv && !vv->includes_all(partial->base)) ||
                         (partial->skip > 0 &&
                          partial_low(op, 0, n) < static_cast<int64_t>(partial->skip)))) {
    // What the partial tracker cannot resolve: a style anchor, an op whose
    // version lacks part of the tracker's base, or one that reaches the
    // base units it left out.
    ++partial_stats_.whole;
    WEFT_RETURN_IF_ERROR(materialize(s));
    csp = &container_state(s, op.container);
  }
  SeqState& seq_state = csp->sequence();
  Seq& seq = *seq_state.tracker();
  WEFT_RETURN_IF_ERROR(prepare_seq(s, op.container, vv));
  if (test_.check_tracker) {
    seq.set_verify_hints(true);
    WEFT_RETURN_IF_ERROR(seq.check_prepare(vv));
  }
  // A partial tracker's positions start after the base units it left out.
  const PartialTracker* partial = seq_state.partial();
  const int64_t shift = partial ? static_cast<int64_t>(partial->skip) : 0;
  Status st;
  switch (op.kind) {
    case OpKind::kTextInsert:
    case OpKind::kListInsert:
      st = with_contents(seq_state, op, n, [&](const uint32_t* contents) {
        return apply_positional(seq, op, peer, 0, n, shift, contents, vv);
      });
      break;
    case OpKind::kSeqDelete:
      st = apply_positional(seq, op, peer, 0, n, shift, nullptr, vv);
      break;
    case OpKind::kMark: {
      uint32_t c = kStartAnchor;
      st = seq.insert(peer, op.counter, op.pos, &c, 1, vv);
      break;
    }
    case OpKind::kMarkEnd: {
      uint32_t c = kEndAnchor;
      st = seq.insert(peer, op.counter, op.len, &c, 1, vv);
      break;
    }
    default:  // map and counter ops returned above
      break;
  }
  if (!st.ok()) return op_error_context(*this, std::move(st), peer, op);
  // The op's own units are in the prepare version now: it is the op's version.
  if (vv) seq.set_prepare_vv(*vv);
  advance_vv(s, peer, op.counter + n);
  return Status();
}

Status DocCore::apply_plain(State& s, ContainerState& cs, const Op& op, uint32_t peer, Counter n) {
  WEFT_DCHECK(op.kind == OpKind::kTextInsert || op.kind == OpKind::kListInsert ||
              op.kind == OpKind::kSeqDelete);
  Status st;
  switch (op.kind) {
    case OpKind::kTextInsert: {
      // The op's UTF-8 goes into the chunk as it is (no code point buffer).
      std::string_view utf8 = op.text.utf8();
      if (static_cast<size_t>(n) < op.text.size())
        utf8 = utf8.substr(0, byte_offset_of_unicode_unchecked(utf8, static_cast<size_t>(n)));
      st = cs.plain()->insert_utf8(peer, op.counter, op.pos, utf8, static_cast<size_t>(n));
      break;
    }
    case OpKind::kListInsert:
      st = with_contents(cs.sequence(), op, n, [&](const uint32_t* contents) {
        return cs.plain()->insert(peer, op.counter, op.pos, contents, n);
      });
      break;
    default:  // kSeqDelete
      st = erase_plain(*cs.plain(), op, n);
      break;
  }
  if (!st.ok()) return op_error_context(*this, std::move(st), peer, op);
  advance_vv(s, peer, op.counter + n);
  return Status();
}

Status DocCore::apply_change(State& s, const Change& ch, Counter to, size_t first_op) {
  // Where applying starts: the change's first unit, or op first_op's (whose
  // version is the change's with the author's entry raised to it).
  if (first_op >= ch.ops.size()) return Status();
  const Counter from = first_op == 0 ? ch.counter : ch.ops[first_op].counter;
  // Fast path: the version is everything the state holds, so positions
  // resolve on the current visible elements.
  const bool fast = s.vv_total == ch.deps_total + (from - ch.counter);
  // The version the ops resolve in: DocCore::apply_vv's storage, taken for
  // the call (a nested apply_change, from materialize, takes an empty one).
  struct TakeVv {
    DenseVv& home;
    DenseVv vv;
    ~TakeVv() { home = std::move(vv); }
  } storage{apply_vv, std::move(apply_vv)};
  if (!fast) {
    const std::span<const int32_t> deps = deps_vv(ch);
    storage.vv.ends.assign(deps.begin(), deps.end());
    storage.vv.extend(ch.peer, from);
  }
  DenseVv* vv = fast ? nullptr : &storage.vv;
  // The linear-history loop: text inserts and deletes on the plain Text the
  // last op went to (nearly every op of a merged text history) apply here
  // inline, with no apply_op call and no second dispatch on the kind; any
  // other op takes apply_op (whose plain branch has the same effects).
  PlainSeq* plain = nullptr;  // the plain state of container plain_container
  uint32_t plain_container = UINT32_MAX;
  // The inline ops raise the state's version once, when the run of them ends
  // (nothing reads it in between; a failed apply discards the state).
  Counter inline_end = 0;
  for (const Op* it = ch.ops.begin() + first_op; it != ch.ops.end(); ++it) {
    const Op& op = *it;
    if (op.counter >= to) break;
    const bool whole_insert =
        op.kind == OpKind::kTextInsert && op.counter + op.text.size() <= static_cast<size_t>(to);
    if (fast && op.container == plain_container &&
        (whole_insert || op.kind == OpKind::kSeqDelete)) {
      if (gathering) touch(op.container);
      Counter n = 0;
      Status st;
      if (whole_insert) {
        n = static_cast<Counter>(op.text.size());
        st = plain->insert_utf8(ch.peer, op.counter, op.pos, op.text.utf8(), op.text.size());
      } else {
        n = std::min(op.len < 0 ? -op.len : op.len, to - op.counter);
        st = erase_plain(*plain, op, n);
      }
      if (!st.ok()) [[unlikely]]
        return op_error_context(*this, std::move(st), ch.peer, op);
      inline_end = op.counter + n;
      continue;
    }
    if (inline_end != 0) advance_vv(s, ch.peer, std::exchange(inline_end, 0));
    const Counter n = std::min(op.atom_len(), to - op.counter);
    Lamport lamport = ch.lamport + static_cast<Lamport>(op.counter - ch.counter);
    WEFT_RETURN_IF_ERROR(apply_op(s, op, ch.peer, lamport, n, vv));
    // Containers are heap nodes: the pointer stays valid while `s` lives (and
    // an apply_op that builds trackers resets every plain state: `plain` is
    // taken again after each).
    const ContainerState* cs = s.containers[op.container].get();
    plain = cs && cs->type() == ContainerType::kText ? cs->plain() : nullptr;
    plain_container = plain ? op.container : UINT32_MAX;
  }
  if (inline_end != 0) advance_vv(s, ch.peer, inline_end);
  return Status();
}

}  // namespace weft::crdt::detail

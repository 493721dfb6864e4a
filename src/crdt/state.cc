// Applying ops to container states, and reading values back (see core.h).
#include <algorithm>
#include <utility>

#include "crdt/core.h"
#include "weft/base/utf.h"

namespace weft::crdt::detail {
namespace {

// Calls insert(contents) with the contents of the first `n` units of insert
// `op`: code points for text, for a list the indexes of its values, which are
// appended to cs.list_values.
template <typename Insert>
Status with_contents(ContainerState& cs, const Op& op, Counter n, Insert insert) {
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
    for (Counter k = 0; k < n; ++k) {
      contents[k] = static_cast<uint32_t>(cs.list_values.size());
      cs.list_values.push_back(op.values()[k]);
    }
  }
  return insert(contents);
}

// The context an apply error carries: which op, on which container (out of
// line: cold).
[[gnu::noinline, gnu::cold]] Status op_error_context(const DocCore& core, Status st, uint32_t peer,
                                                     const Op& op) {
  return st.with_context("op " + ID{core.peer_ids[peer], op.counter}.to_string() + " on " +
                         core.containers[op.container].to_string());
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
    slot = std::make_unique<ContainerState>();
    slot->type = containers[idx].type();
    if (slot->type == ContainerType::kText || slot->type == ContainerType::kList) {
      const bool is_text = slot->type == ContainerType::kText;
      if (s.plain && plain_enabled)
        slot->plain = std::make_unique<PlainSeq>(is_text, s.plain_ids);
      else
        slot->seq = std::make_unique<Seq>(&peer_ids, is_text);
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
  if (csp->plain) {
    const bool positional = op.kind == OpKind::kTextInsert || op.kind == OpKind::kListInsert ||
                            op.kind == OpKind::kSeqDelete;
    if (vv == nullptr && positional) return apply_plain(s, *csp, op, peer, n);
    // Concurrent with the state: a temporary tracker from the common
    // ancestor on. A style anchor: the whole tracker, for good. A state
    // replayed without ids (a whole history into an empty doc, a checkout)
    // takes the whole tracker too: it replays all the same, and its fold
    // then gives every unit its id (a partial one could not: the
    // placeholders' ids come from the plain state, which has none).
    if (positional && partial_enabled && s.plain_ids)
      WEFT_RETURN_IF_ERROR(begin_partial(s, op.container, *vv, partial_low(op, 0, n)));
    else
      WEFT_RETURN_IF_ERROR(materialize(s));
    csp = &container_state(s, op.container);
  } else if (csp->partial && (op.kind == OpKind::kMark || op.kind == OpKind::kMarkEnd ||
                              (vv && !vv->includes_all(csp->partial->base)) ||
                              (csp->partial->skip > 0 &&
                               partial_low(op, 0, n) < static_cast<int64_t>(csp->partial->skip)))) {
    // What the partial tracker cannot resolve: a style anchor, an op whose
    // version lacks part of the tracker's base, or one that reaches the
    // base units it left out.
    ++partial_stats.whole;
    WEFT_RETURN_IF_ERROR(materialize(s));
    csp = &container_state(s, op.container);
  }
  ContainerState& cs = *csp;
  const bool on_seq = cs.seq && op.kind != OpKind::kMapSet && op.kind != OpKind::kMapDelete &&
                      op.kind != OpKind::kCounter;
  if (on_seq) {
    WEFT_RETURN_IF_ERROR(prepare_seq(s, op.container, vv));
    if (check_tracker) {
      cs.seq->set_verify_hints(true);
      WEFT_RETURN_IF_ERROR(cs.seq->check_prepare(vv));
    }
  }
  // A partial tracker's positions start after the base units it left out.
  const int64_t shift = cs.partial ? static_cast<int64_t>(cs.partial->skip) : 0;
  Status st;
  switch (op.kind) {
    case OpKind::kTextInsert:
    case OpKind::kListInsert:
      st = with_contents(cs, op, n, [&](const uint32_t* contents) {
        return apply_positional(*cs.seq, op, peer, 0, n, shift, contents, vv);
      });
      break;
    case OpKind::kSeqDelete:
      st = apply_positional(*cs.seq, op, peer, 0, n, shift, nullptr, vv);
      break;
    case OpKind::kMark: {
      uint32_t c = kStartAnchor;
      st = cs.seq->insert(peer, op.counter, op.pos, &c, 1, vv);
      break;
    }
    case OpKind::kMarkEnd: {
      uint32_t c = kEndAnchor;
      st = cs.seq->insert(peer, op.counter, op.len, &c, 1, vv);
      break;
    }
    case OpKind::kMapSet:
    case OpKind::kMapDelete: {
      const PeerId author = peer_ids[peer];
      MapEntry& e = cs.map[op.key()];
      bool wins = !e.written || e.lamport < lamport || (e.lamport == lamport && e.peer < author);
      if (wins) {
        e.written = true;
        e.lamport = lamport;
        e.peer = author;
        if (op.kind == OpKind::kMapSet)
          e.value = op.value();
        else
          e.value.reset();
      }
      if (vv) vv->extend(peer, op.counter + 1);
      break;
    }
    case OpKind::kCounter:
      cs.counter += op.number();
      if (vv) vv->extend(peer, op.counter + 1);
      break;
  }
  if (!st.ok()) return op_error_context(*this, std::move(st), peer, op);
  // The op's own units are in the prepare version now: it is the op's version.
  if (on_seq && vv) cs.seq->set_prepare_vv(*vv);
  advance_vv(s, peer, op.counter + n);
  return Status();
}

Status DocCore::apply_plain(State& s, ContainerState& cs, const Op& op, uint32_t peer, Counter n) {
  Status st;
  switch (op.kind) {
    case OpKind::kTextInsert: {
      // The op's UTF-8 goes into the chunk as it is (no code point buffer).
      std::string_view utf8 = op.text.utf8();
      if (static_cast<size_t>(n) < op.text.size())
        utf8 = utf8.substr(0, byte_offset_of_unicode_unchecked(utf8, static_cast<size_t>(n)));
      st = cs.plain->insert_utf8(peer, op.counter, op.pos, utf8, static_cast<size_t>(n));
      break;
    }
    case OpKind::kListInsert:
      st = with_contents(cs, op, n, [&](const uint32_t* contents) {
        return cs.plain->insert(peer, op.counter, op.pos, contents, n);
      });
      break;
    default:  // kSeqDelete
      st = erase_plain(*cs.plain, op, n);
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
    plain = cs && cs->plain && cs->type == ContainerType::kText ? cs->plain.get() : nullptr;
    plain_container = plain ? op.container : UINT32_MAX;
  }
  if (inline_end != 0) advance_vv(s, ch.peer, inline_end);
  return Status();
}

Result<std::unique_ptr<State>> DocCore::build_state(const DenseVv& vv, bool plain, PlainIds ids) {
  auto s = std::make_unique<State>();
  s->plain = plain;
  s->plain_ids = ids == PlainIds::kTracked;
  FoldScope scope(*this);
  for (const Change& ch : changes) {
    Counter to = std::min(ch.end(), vv.get(ch.peer));
    if (to <= ch.counter) continue;
    WEFT_RETURN_IF_ERROR(apply_change(*s, ch, to));
  }
  WEFT_RETURN_IF_ERROR(fold_trackers(*s));
  return s;
}

Result<std::unique_ptr<State>> DocCore::replay_state(const State& s, bool plain) {
  // The replay goes into a scratch state: no events for it.
  const bool was_gathering = gathering;
  gathering = false;
  auto scratch = build_state(s.vv, plain);
  Status st = scratch.status();
  if (st.ok() && &s == state.get()) {
    // The open transaction's ops are in the state but not yet in the op log;
    // they follow everything else, so they replay on the fast path.
    for (const Op& op : txn_ops) {
      st = apply_op(**scratch, op, self, 0, op.atom_len(), nullptr);
      if (!st.ok()) break;
    }
  }
  gathering = was_gathering;
  if (!st.ok()) return st;
  return scratch;
}

Status DocCore::materialize(State& s) {
  settle();  // the replay reads txn_ops
  // (A partial tracker is replaced by the whole one too.)
  const auto needs = [](const ContainerState* cs) { return cs && (cs->plain || cs->partial); };
  if (std::none_of(s.containers.begin(), s.containers.end(),
                   [&](const auto& c) { return needs(c.get()); })) {
    return Status();
  }
  auto scratch = replay_state(s, /*plain=*/false);
  if (!scratch.ok())
    return scratch.status().with_context("building the sequence tracker from the op log");
  for (uint32_t i = 0; i < s.containers.size(); ++i) {
    ContainerState* cs = s.containers[i].get();
    if (!needs(cs)) continue;
    ContainerState& built = container_state(**scratch, i);
    cs->seq = std::move(built.seq);
    cs->list_values = std::move(built.list_values);
    cs->plain.reset();
    cs->partial.reset();
    // Inside an import or a replay it folds back into a plain state at the end.
    cs->temp_tracker = fold_scope > 0;
  }
  return Status();
}

bool DocCore::history_is_linear() const {
  // Linear: each change's deps hold everything before it in the log.
  int64_t before = 0;
  for (const Change& ch : changes) {
    if (ch.deps_total != before) return false;
    before += ch.len;
  }
  return true;
}

Status DocCore::recover_ids(State& s) {
  settle();  // the replay reads txn_ops
  const auto lacks_ids = [](const ContainerState* cs) {
    return cs && cs->plain && !cs->plain->ids_known();
  };
  if (std::none_of(s.containers.begin(), s.containers.end(),
                   [&](const auto& c) { return lacks_ids(c.get()); })) {
    return Status();
  }
  // A history with concurrent edits: the whole tracker (a plain replay would
  // build it at the first of them, from the start again), folded back into
  // plain states, which then have every id.
  if (!history_is_linear()) {
    FoldScope scope(*this);
    WEFT_RETURN_IF_ERROR(materialize(s));
    return fold_trackers(s);
  }
  // A plain replay keeps ids (build_state's default).
  auto scratch = replay_state(s, /*plain=*/true);
  if (!scratch.ok()) return scratch.status().with_context("rebuilding the ids from the op log");
  for (uint32_t i = 0; i < s.containers.size(); ++i) {
    ContainerState* cs = s.containers[i].get();
    if (!lacks_ids(cs)) continue;
    ContainerState& built = container_state(**scratch, i);
    cs->plain = std::move(built.plain);
    cs->seq = std::move(built.seq);
    cs->list_values = std::move(built.list_values);
  }
  return Status();
}

Status DocCore::set_plain_text(State& s, uint32_t container, std::string_view utf8) {
  if (container >= containers.size() || containers[container].type() != ContainerType::kText)
    return invalid_argument("set_plain_text: container " + std::to_string(container) +
                            " is not a Text");
  WEFT_RETURN_IF_ERROR(validate_utf8(utf8));
  ContainerState& cs = container_state(s, container);
  cs.seq.reset();
  cs.plain = std::make_unique<PlainSeq>(true);
  cs.plain->assign_utf8(utf8);
  return Status();
}

Status DocCore::set_plain_list(State& s, uint32_t container, std::vector<Value> values) {
  if (container >= containers.size() || containers[container].type() != ContainerType::kList)
    return invalid_argument("set_plain_list: container " + std::to_string(container) +
                            " is not a List");
  ContainerState& cs = container_state(s, container);
  cs.seq.reset();
  cs.plain = std::make_unique<PlainSeq>(false);
  std::vector<uint32_t> idx(values.size());
  for (size_t k = 0; k < idx.size(); ++k) idx[k] = static_cast<uint32_t>(k);
  cs.list_values = std::move(values);
  WEFT_RETURN_IF_ERROR(cs.plain->insert(kNone, 0, 0, idx.data(), idx.size()));
  cs.plain->set_ids_unknown();
  return Status();
}

Value DocCore::container_value(const State& s, uint32_t idx, bool deep) const {
  const ContainerState* cs = idx < s.containers.size() ? s.containers[idx].get() : nullptr;
  auto resolve = [&](const Value& v) -> Value {
    if (!deep || !v.is_container()) return v;
    auto it = container_index.find(v.as_container());
    if (it == container_index.end()) {
      switch (v.as_container().type()) {
        case ContainerType::kText:
          return Value(std::string());
        case ContainerType::kList:
        case ContainerType::kMovableList:
          return Value(ValueList{});
        case ContainerType::kCounter:
          return Value(0.0);
        default:
          return Value(ValueMap{});
      }
    }
    return container_value(s, it->second, true);
  };
  switch (containers[idx].type()) {
    case ContainerType::kText:
      return Value(cs ? cs->text() : std::string());
    case ContainerType::kList: {
      ValueList l;
      if (cs) {
        for (uint32_t vi : cs->contents()) l.push_back(resolve(cs->list_values[vi]));
      }
      return Value(std::move(l));
    }
    case ContainerType::kCounter:
      return Value(cs ? cs->counter : 0.0);
    case ContainerType::kMap: {
      ValueMap m;
      if (cs) {
        for (const auto& [k, e] : cs->map) {
          if (e.value) m.emplace(k, resolve(*e.value));
        }
      }
      return Value(std::move(m));
    }
    default:
      return Value();
  }
}

Value DocCore::doc_value(const State& s) const {
  ValueMap out;
  for (uint32_t i = 0; i < containers.size(); ++i) {
    if (!containers[i].is_root()) continue;
    bool present = (i < s.containers.size() && s.containers[i]) || local_roots[i];
    if (present) out.emplace(containers[i].name(), container_value(s, i, true));
  }
  return Value(std::move(out));
}

}  // namespace weft::crdt::detail

// Eg-walker's partial replay: a concurrent op on a plain Text / List goes
// through a temporary tracker holding only the ops since the common ancestor,
// which folds back into a plain state when the import ends (see core.h).
#include <algorithm>
#include <utility>

#include "crdt/core.h"
#include "crdt/dcheck.h"
#include "weft/base/utf.h"

namespace weft::crdt::detail {
namespace {

// Units [lo, hi) of a change that the partial tracker replays.
struct ReplaySpan {
  size_t change;
  Counter lo, hi;
};

bool is_positional(OpKind kind) {
  return kind == OpKind::kTextInsert || kind == OpKind::kListInsert || kind == OpKind::kSeqDelete;
}

// begin_partial's transition, out of line: its PartialTracker stays off
// the frame of the replay loops.
[[gnu::noinline]] void start_partial(SeqState& state, std::unique_ptr<Seq> tracker, DenseVv&& base,
                                     const DenseVv& plain_vv, size_t placeholders,
                                     size_t real_placeholders, size_t skip) {
  PartialTracker info;
  info.base = std::move(base);
  info.plain_vv = plain_vv;
  info.placeholders = placeholders;
  info.real_placeholders = real_placeholders;
  info.skip = skip;
  state.begin_partial(std::move(tracker), std::move(info));
}

}  // namespace

void DocCore::changes_past(const DenseVv& from, const DenseVv& to,
                           std::vector<uint32_t>& out) const {
  out.clear();
  for (uint32_t p = 0; p < by_peer.size(); ++p) {
    const Counter lo = from.get(p), hi = to.get(p);
    if (lo >= hi) continue;
    const std::vector<uint32_t>& list = by_peer[p];
    // A peer's changes are in counter order: those past `lo` are a suffix.
    auto it = std::partition_point(list.begin(), list.end(),
                                   [&](uint32_t ci) { return changes[ci].end() <= lo; });
    for (; it != list.end() && changes[*it].counter < hi; ++it) out.push_back(*it);
  }
}

Status DocCore::begin_partial(State& s, uint32_t idx, const DenseVv& op_vv, int64_t op_low) {
  WEFT_DCHECK(idx < s.containers.size() && s.containers[idx] && s.containers[idx]->plain());
  settle();
  // The open transaction's ops are in the state but not in the log.
  if (&s == state.get() && !edit_.ops().empty()) return materialize(s);
  ContainerState& cs = *s.containers[idx];
  const bool is_text = cs.type() == ContainerType::kText;

  // The base: the latest version held by the state, by `op_vv` and by the
  // version of every op to replay (those of the state that the base lacks).
  // Lowering it can add ops to replay, hence the passes until it holds.
  DenseVv base = s.vv;
  base.meet(op_vv);
  // A peer's changes are causally ordered, so the versions of its later
  // changes hold those of its earlier ones: the first change past the base
  // of each peer is the only one that can lower it.
  for (bool lowered = true; lowered;) {
    lowered = false;
    for (uint32_t q = 0; q < by_peer.size(); ++q) {
      const Counter from = base.get(q);
      if (from >= s.vv.get(q)) continue;
      const std::vector<uint32_t>& list = by_peer[q];
      auto it = std::partition_point(list.begin(), list.end(),
                                     [&](uint32_t ci) { return changes[ci].end() <= from; });
      if (it == list.end()) continue;
      // (The change's own earlier units are in its version up to the base.)
      const std::span<const int32_t> deps = deps_vv(changes[*it]);
      for (uint32_t p = 0; p < base.ends.size(); ++p) {
        const Counter held = p < deps.size() ? deps[p] : 0;
        if (p != q && base.ends[p] > held) {
          base.ends[p] = held;
          lowered = true;
        }
      }
    }
  }
  std::vector<uint32_t> past;  // indexes of the changes with units in (base, s.vv]

  // The ops to replay, an upper bound on the units they delete, the units
  // they insert and the lowest position they reach.
  std::vector<ReplaySpan> spans;
  size_t deleted = 0, inserted = 0;
  int64_t low = op_low;
  changes_past(base, s.vv, past);

  // Editors who keep typing while they merge each other's edits late never
  // share a version again: each concurrent op's base then lowers to the last
  // moment they did, and the replay grows with the history. A replay of that
  // many changes (not one long paste) gives the container its whole tracker,
  // kept: from then on a concurrent op costs only the moves between its
  // version and the last.
  if (&s == state.get() && past.size() >= test_.keep_tracker_changes &&
      cs.plain()->visible_units() <= test_.keep_tracker_max_units) {
    WEFT_RETURN_IF_ERROR(materialize(s));
    SeqState& whole = s.containers[idx]->sequence();
    if (whole.is_temporary()) whole.keep_tracker();
    ++partial_stats_.kept;
    return Status();
  }

  std::sort(past.begin(), past.end());  // replayed in the log's (topological) order
  spans.reserve(past.size());
  for (const uint32_t i : past) {
    const Change& ch = changes[i];
    const Counter lo = std::max(ch.counter, base.get(ch.peer));
    const Counter hi = std::min(ch.end(), s.vv.get(ch.peer));
    spans.push_back({i, lo, hi});
    for (const Op& op : ch.ops) {
      if (op.counter >= hi) break;
      if (op.container != idx || op.counter + op.atom_len() <= lo) continue;
      // A style anchor needs the whole tracker (a plain state holds none).
      if (!is_positional(op.kind)) return materialize(s);
      const Counter a = std::max(op.counter, lo), b = std::min(op.counter + op.atom_len(), hi);
      if (op.kind == OpKind::kSeqDelete)
        deleted += static_cast<size_t>(b - a);
      else
        inserted += static_cast<size_t>(b - a);
      low = std::min(low, partial_low(op, a - op.counter, b - a));
    }
  }

  // The base units before `skip` are left out (see PartialTracker::skip).
  // The state at `base` holds at least the units now less those inserted
  // since, so they exist there.
  const size_t units = cs.plain()->visible_units();
  size_t skip = 0;
  if (low > 0 && static_cast<size_t>(low) > test_.partial_skip_margin) {
    skip = std::min(static_cast<size_t>(low) - test_.partial_skip_margin,
                    units > inserted ? units - inserted : 0);
  }

  // The state at `base` has at most the units of the state now plus those
  // the replayed ops delete; its true count is known once they are replayed.
  // Padding placeholders at the end are never reached by a valid op.
  const size_t placeholders = units - skip + deleted;
  auto seq = std::make_unique<Seq>(&peer_ids, is_text);
  seq->fill_placeholders(placeholders);

  // Replay: each op at its own version (the tracker's prepare version), or
  // on the fast path when that is everything replayed so far (`all`).
  DenseVv all = base;
  int64_t all_total = all.total();
  DenseVv v;
  std::vector<uint32_t> zeros;  // contents: only positions matter (see fold)
  for (const ReplaySpan& span : spans) {
    const Change& ch = changes[span.change];
    const std::span<const int32_t> deps = deps_vv(ch);
    v.ends.assign(deps.begin(), deps.end());
    v.set(ch.peer, span.lo);
    int64_t v_total = v.total();
    for (const Op& op : ch.ops) {
      if (op.counter >= span.hi) break;
      const Counter a = std::max(op.counter, span.lo);
      const Counter b = std::min(op.counter + op.atom_len(), span.hi);
      if (a >= b) continue;
      if (op.container == idx) {
        const DenseVv& from = seq->prepare_is_all() ? all : seq->prepare_vv();
        seq->move_prepare(from, v);
        const bool fast = v_total == all_total;
        if (fast)
          seq->set_prepare_all();
        else
          seq->set_prepare_vv(v);
        DenseVv* vv = fast ? nullptr : &v;
        const Counter d = a - op.counter, n = b - a;
        if (op.kind != OpKind::kSeqDelete && zeros.size() < static_cast<size_t>(n))
          zeros.resize(static_cast<size_t>(n), 0);
        const Status st =
            apply_positional(*seq, op, ch.peer, d, n, static_cast<int64_t>(skip), zeros.data(), vv);
        if (!st.ok()) {
          return internal_error("replaying the op log into a partial tracker: " + st.to_string());
        }
        if (!fast) seq->set_prepare_vv(v);
      }
      v.set(ch.peer, b);
      v_total = v.total();
      const Counter before = all.get(ch.peer);
      if (b > before) {
        all.set(ch.peer, b);
        all_total += b - before;
      }
    }
  }
  if (all_total != s.vv_total)
    return internal_error("a partial tracker's replay did not reach the state's version");
  seq->move_prepare(seq->prepare_is_all() ? all : seq->prepare_vv(), s.vv);
  seq->set_prepare_all();
  // (The plain state's units from `skip` on are the tracker's.)
  const size_t held = units - skip, seen = seq->visible_entities();
  if (seen < held || seen - held > placeholders) {
    return internal_error("a partial tracker's replay shows " + std::to_string(seen) +
                          " units where the plain state holds " + std::to_string(held) +
                          " past the " + std::to_string(skip) + " left out");
  }

  ++partial_stats_.begun;
  if (skip > 0) ++partial_stats_.skipped;
  start_partial(cs.sequence(), std::move(seq), std::move(base), s.vv, placeholders,
                placeholders - (seen - held), skip);
  return Status();
}

namespace {

// A whole tracker's visible elements as a new plain state with their ids; null
// when it holds style anchors (it then stays a tracker).
std::unique_ptr<PlainSeq> fold_whole(const Seq& seq, bool is_text) {
  std::string utf8;
  std::vector<uint32_t> values;
  std::vector<Seq::Run> runs;
  if (is_text)
    utf8.reserve(seq.visible_units());
  else
    values.reserve(seq.visible_units());
  bool anchors = false;
  seq.for_each_visible_element([&](const Elem& e) {
    if (is_text && e.content >= kStartAnchor) {
      anchors = true;
    } else if (is_text && e.content < 0x80) {
      utf8.push_back(static_cast<char>(e.content));
    } else if (is_text) {
      append_utf8(utf8, static_cast<char32_t>(e.content));
    } else {
      values.push_back(e.content);
    }
    if (!runs.empty() && runs.back().peer == e.peer &&
        runs.back().counter + static_cast<int32_t>(runs.back().len) == e.counter) {
      ++runs.back().len;
    } else {
      runs.push_back(Seq::Run{0, 1, e.peer, e.counter});
    }
  });
  if (anchors) return nullptr;
  auto plain = std::make_unique<PlainSeq>(is_text, true);
  if (is_text) {
    plain->assign_utf8(utf8);
  } else if (!values.empty()) {
    (void)plain->insert(kNone, 0, 0, values.data(), values.size());  // (at 0: in range)
  }
  plain->set_ids(runs);
  return plain;
}

// Brings a partial tracker's plain state (the one it replaced) to the
// tracker's current state in place: walking the tracker in document order,
// an element of the replaced state that is deleted now is erased from it,
// a new visible one inserted with its id. A gap (placeholders no op reached,
// see Seq::fill_placeholders) is passed whole, so the walk costs
// O(elements the ops touched). Errors as for fold_trackers.
Status fold_partial(const Seq& seq, PartialTracker& partial, bool is_text) {
  PlainSeq& plain = *partial.plain;
  const DenseVv& plain_vv = partial.plain_vv;
  const size_t real = partial.real_placeholders;
  const auto deleted_before = [&](const Elem& e) {
    return e.del_peer != kNone && plain_vv.includes(e.del_peer, e.del_counter);
  };
  size_t pos = partial.skip;  // units of the plain state passed, edits included
  // The pending edit: units [at, at + erase) to erase, or the new units
  // `inserts` (ids ins_peer, ins_counter + k) to insert at `at`.
  size_t at = 0, erase = 0;
  std::vector<uint32_t> inserts;
  uint32_t ins_peer = 0;
  int32_t ins_counter = 0;
  Status st;
  const auto flush = [&] {
    if (erase > 0 && st.ok())
      st = plain.erase(static_cast<uint32_t>(at), static_cast<uint32_t>(erase));
    if (!inserts.empty() && st.ok()) {
      st = plain.insert(ins_peer, ins_counter, static_cast<uint32_t>(at), inserts.data(),
                        inserts.size());
    }
    erase = 0;
    inserts.clear();
  };
  const auto keep = [&] {  // the unit at pos stays
    flush();
    ++pos;
  };
  const auto drop = [&] {  // the unit at pos is deleted now
    if (!inserts.empty()) flush();
    if (erase == 0) at = pos;
    ++erase;
  };
  const auto add = [&](const Elem& e) {  // a new unit before pos
    if (erase > 0 ||
        (!inserts.empty() &&
         (e.peer != ins_peer || ins_counter + static_cast<int32_t>(inserts.size()) != e.counter))) {
      flush();
    }
    if (inserts.empty()) {
      at = pos;
      ins_peer = e.peer;
      ins_counter = e.counter;
    }
    inserts.push_back(e.content);
    ++pos;
  };
  bool padding_seen = false, past_end = false, anchors = false, mismatch = false;
  size_t placeholders = 0;  // passed so far: the next one's counter
  seq.for_each_chunk([&](std::span<const uint32_t> items, uint32_t visible) {
    if (past_end || anchors || mismatch || !st.ok()) return;
    if (items.empty()) {  // a gap: placeholders no op reached
      const size_t kept = placeholders < real ? std::min<size_t>(visible, real - placeholders) : 0;
      if (kept > 0) {
        flush();
        pos += kept;
      }
      if (kept < visible) padding_seen = true;
      placeholders += visible;
      return;
    }
    for (const uint32_t i : items) {
      const Elem& e = seq.elem(i);
      const bool now = e.del_peer == kNone;
      if (e.peer == kPlaceholderPeer) {
        placeholders = static_cast<size_t>(e.counter) + 1;
        if (static_cast<size_t>(e.counter) >= real) {
          // Padding: no valid op deletes it or inserts after it.
          past_end = past_end || !now;
          padding_seen = true;
        } else if (deleted_before(e)) {
          mismatch = mismatch || now;  // gone before the plain state, back now?
        } else if (now) {
          keep();
        } else {
          drop();
        }
        continue;
      }
      if (padding_seen) {
        past_end = true;
        return;
      }
      if (is_text && e.content >= kStartAnchor) {
        anchors = true;
        return;
      }
      if (plain_vv.includes(e.peer, e.counter) && !deleted_before(e)) {
        if (now)
          keep();
        else
          drop();
      } else if (now) {
        add(e);
      }
    }
  });
  flush();
  WEFT_RETURN_IF_ERROR(st);
  if (past_end) return out_of_range("an op's position is past the end of its version");
  if (anchors) return failed_precondition("style anchors in a partial tracker");
  const size_t padding = partial.placeholders - real;  // visible: never deleted above
  if (mismatch || pos != plain.visible_units() ||
      pos - partial.skip + padding != seq.visible_units()) {
    return internal_error("a partial tracker disagrees with the plain state it replaced (" +
                          std::to_string(pos) + " units walked, " +
                          std::to_string(plain.visible_units()) + " held, " +
                          std::to_string(seq.visible_units()) + " in the tracker)");
  }
  return Status();
}

}  // namespace

Status DocCore::fold_trackers(State& s) {
  for (uint32_t i = 0; i < s.containers.size(); ++i) {
    ContainerState* cs = s.containers[i].get();
    SeqState* seq = cs ? cs->seq_if() : nullptr;
    if (!seq || !seq->is_temporary()) continue;
    const bool is_text = cs->type() == ContainerType::kText;
    if (PartialTracker* partial = seq->partial()) {
      // (Anchors never reach a partial tracker: an anchor op takes the
      // whole one first, see apply_op.)
      Status st = fold_partial(*seq->tracker(), *partial, is_text);
      // (On an error the import fails and its caller discards the state.)
      if (!st.ok()) return st.with_context("folding the tracker of " + containers[i].to_string());
      seq->fold_partial();
    } else if (auto plain = fold_whole(*seq->tracker(), is_text)) {
      seq->fold(std::move(plain));
    } else {
      seq->keep_tracker();  // style anchors: it stays a tracker
    }
  }
  return Status();
}

}  // namespace weft::crdt::detail

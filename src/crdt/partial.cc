// Eg-walker's partial replay: a concurrent op on a plain Text / List goes
// through a temporary tracker holding only the ops since the common ancestor,
// which folds back into a plain state when the import ends (see core.h).
#include <algorithm>
#include <utility>

#include "crdt/core.h"
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

// Moves `seq`'s prepare version from `from` to `to` (retreating or advancing
// the units in between).
void move_prepare(Seq& seq, const DenseVv& from, const DenseVv& to) {
  const size_t peers = std::max(from.ends.size(), to.ends.size());
  for (uint32_t p = 0; p < peers; ++p) {
    const Counter a = from.get(p), b = to.get(p);
    if (a != b) seq.prepare_range(p, std::min(a, b), std::max(a, b), b > a);
  }
}

}  // namespace

Status DocCore::begin_partial(State& s, uint32_t idx, const DenseVv& op_vv) {
  settle();
  // The open transaction's ops are in the state but not in the log.
  if (&s == state.get() && !txn_ops.empty()) return materialize(s);
  ContainerState& cs = *s.containers[idx];
  const bool is_text = cs.type == ContainerType::kText;

  // The base: the latest version held by the state, by `op_vv` and by the
  // version of every op to replay (those of the state that the base lacks).
  // Lowering it can add ops to replay, hence the passes until it holds.
  DenseVv base = s.vv;
  base.meet(op_vv);
  for (bool lowered = true; lowered;) {
    lowered = false;
    for (size_t i = changes.size(); i-- > 0;) {
      const Change& ch = changes[i];
      const Counter lo = std::max(ch.counter, base.get(ch.peer));
      const Counter hi = std::min(ch.end(), s.vv.get(ch.peer));
      if (lo >= hi) continue;
      // (The change's own earlier units are in its version up to lo.)
      const std::span<const int32_t> deps = deps_vv(ch);
      for (uint32_t p = 0; p < base.ends.size(); ++p) {
        const Counter held = p < deps.size() ? deps[p] : 0;
        if (p != ch.peer && base.ends[p] > held) {
          base.ends[p] = held;
          lowered = true;
        }
      }
    }
  }

  // The ops to replay, and an upper bound on the units they delete.
  std::vector<ReplaySpan> spans;
  size_t deleted = 0;
  for (size_t i = 0; i < changes.size(); ++i) {
    const Change& ch = changes[i];
    const Counter lo = std::max(ch.counter, base.get(ch.peer));
    const Counter hi = std::min(ch.end(), s.vv.get(ch.peer));
    if (lo >= hi) continue;
    spans.push_back({i, lo, hi});
    for (const Op& op : ch.ops) {
      if (op.counter >= hi) break;
      if (op.container != idx || op.counter + op.atom_len() <= lo) continue;
      // A style anchor needs the whole tracker (a plain state holds none).
      if (!is_positional(op.kind)) return materialize(s);
      if (op.kind == OpKind::kSeqDelete) deleted += static_cast<size_t>(op.atom_len());
    }
  }

  // The state at `base` has at most the units of the state now plus those
  // the replayed ops delete; its true count is known once they are replayed.
  // Padding placeholders at the end are never reached by a valid op.
  const size_t placeholders = cs.plain->visible_units() + deleted;
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
        move_prepare(*seq, from, v);
        const bool fast = v_total == all_total;
        if (fast)
          seq->set_prepare_all();
        else
          seq->set_prepare_vv(v);
        DenseVv* vv = fast ? nullptr : &v;
        const Counter d = a - op.counter, n = b - a;
        Status st;
        if (op.kind == OpKind::kSeqDelete) {
          if (op.len > 0) {
            st = seq->erase_forward(ch.peer, a, static_cast<uint32_t>(op.pos), n, vv);
          } else {
            for (Counter k = 0; k < n && st.ok(); ++k) {
              const int64_t pos = int64_t{op.pos} - d - k;
              st = pos < 0 ? out_of_range("delete position below 0")
                           : seq->erase_one(ch.peer, a + k, static_cast<uint32_t>(pos), vv);
            }
          }
        } else {
          if (zeros.size() < static_cast<size_t>(n)) zeros.resize(static_cast<size_t>(n), 0);
          st = seq->insert(ch.peer, a, static_cast<uint32_t>(op.pos + d), zeros.data(),
                           static_cast<size_t>(n), vv);
        }
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
  move_prepare(*seq, seq->prepare_is_all() ? all : seq->prepare_vv(), s.vv);
  seq->set_prepare_all();
  const size_t units = cs.plain->visible_units(), seen = seq->visible_entities();
  if (seen < units || seen - units > placeholders) {
    return internal_error("a partial tracker's replay shows " + std::to_string(seen) +
                          " units where the plain state holds " + std::to_string(units));
  }

  ++partial_stats.begun;
  auto partial = std::make_unique<PartialTracker>();
  partial->base = std::move(base);
  partial->plain_vv = s.vv;
  partial->placeholders = placeholders;
  partial->real_placeholders = placeholders - (seen - units);
  partial->plain = std::move(cs.plain);
  cs.partial = std::move(partial);
  cs.seq = std::move(seq);
  cs.temp_tracker = true;
  return Status();
}

Status DocCore::fold_trackers(State& s) {
  for (auto& slot : s.containers) {
    ContainerState* cs = slot.get();
    if (!cs || !cs->temp_tracker) continue;
    cs->temp_tracker = false;
    const Seq& seq = *cs->seq;
    const PartialTracker* partial = cs->partial.get();
    const bool is_text = cs->type == ContainerType::kText;
    // The replaced plain state's units in order, with their ids.
    std::vector<uint32_t> old_contents;
    std::vector<Seq::Run> old_runs;
    bool old_ids = true;
    if (partial) {
      old_contents = partial->plain->visible_contents();
      old_ids = partial->plain->ids_known();
      if (old_ids) partial->plain->unit_runs(0, old_contents.size(), old_runs);
    }
    const DenseVv empty_vv;
    const DenseVv& plain_vv = partial ? partial->plain_vv : empty_vv;
    const size_t real_placeholders = partial ? partial->real_placeholders : 0;
    size_t old_at = 0, run = 0, in_run = 0;  // next old unit, its run and offset
    // The folded state: its UTF-8 (Text) or value indexes (List), id runs.
    std::string utf8;
    std::vector<uint32_t> values;
    if (is_text)
      utf8.reserve(seq.visible_units());
    else
      values.reserve(seq.visible_units());
    std::vector<Seq::Run> runs;
    bool ids = true;  // false once a unit takes an unknown id
    const auto emit = [&](uint32_t content, uint32_t peer, int32_t counter) {
      if (is_text && content < 0x80)
        utf8.push_back(static_cast<char>(content));
      else if (is_text)
        append_utf8(utf8, static_cast<char32_t>(content));
      else
        values.push_back(content);
      if (!runs.empty() && runs.back().peer == peer &&
          runs.back().counter + static_cast<int32_t>(runs.back().len) == counter) {
        ++runs.back().len;
      } else {
        runs.push_back(Seq::Run{0, 1, peer, counter});
      }
    };
    // The replaced state's next unit: its content, and its id into
    // (*peer, *counter). False when there is none.
    const auto take_old = [&](uint32_t* content, uint32_t* peer, int32_t* counter) {
      if (old_at >= old_contents.size()) return false;
      *content = old_contents[old_at++];
      if (old_ids) {
        while (in_run >= old_runs[run].len) ++run, in_run = 0;
        *peer = old_runs[run].peer;
        *counter = old_runs[run].counter + static_cast<int32_t>(in_run++);
      }
      return true;
    };
    const auto deleted_before = [&](const Elem& e) {
      return e.del_peer != kNone && plain_vv.includes(e.del_peer, e.del_counter);
    };
    bool anchors = false, past_end = false, mismatch = false, padding_seen = false;
    if (!partial) {
      // A whole tracker: its visible elements, with their own ids.
      seq.for_each_visible_element([&](const Elem& e) {
        if (is_text && e.content >= kStartAnchor)
          anchors = true;
        else
          emit(e.content, e.peer, e.counter);
      });
    }
    if (partial)
      seq.for_each_element([&](const Elem& e) {
        if (anchors || past_end || mismatch) return;
        const bool visible = e.del_peer == kNone;
        uint32_t content = e.content, peer = e.peer;
        int32_t counter = e.counter;
        if (e.peer == kPlaceholderPeer) {
          if (static_cast<size_t>(e.counter) >= real_placeholders) {
            // Padding: no valid op deletes it or inserts after it.
            past_end = !visible;
            padding_seen = true;
            return;
          }
          // A unit of the base's state: in the replaced state unless an op
          // it holds deleted it, and never visible again once deleted.
          if (deleted_before(e)) {
            mismatch = visible;
            return;
          }
          if (!take_old(&content, &peer, &counter)) {
            mismatch = true;
            return;
          }
          ids = ids && old_ids;
          if (visible) emit(content, peer, counter);
          return;
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
          // In the replaced state: its next unit, with the same id.
          uint32_t old_peer = peer;
          int32_t old_counter = counter;
          if (!take_old(&content, &old_peer, &old_counter) || old_peer != peer ||
              old_counter != counter) {
            mismatch = true;
            return;
          }
        }
        if (visible) emit(content, peer, counter);
      });
    if (past_end) {
      return out_of_range("an op's position is past the end of its version of " +
                          containers[&slot - s.containers.data()].to_string());
    }
    if (mismatch || old_at != old_contents.size()) {
      return internal_error("a partial tracker disagrees with the plain state it replaced (" +
                            std::to_string(old_at) + " of its " +
                            std::to_string(old_contents.size()) + " units matched)");
    }
    if (anchors) {
      // Style anchors need the tracker for good: a partial one becomes whole
      // (materialize replays it; its trackers are not temporary here).
      if (partial) {
        const int scope = std::exchange(fold_scope, 0);
        Status st = materialize(s);
        fold_scope = scope;
        WEFT_RETURN_IF_ERROR(st);
      }
      continue;
    }
    auto plain = std::make_unique<PlainSeq>(is_text, true);
    if (is_text) {
      plain->assign_utf8(utf8);
    } else {
      WEFT_RETURN_IF_ERROR(plain->insert(kNone, 0, 0, values.data(), values.size()));
      plain->set_ids_unknown();
    }
    if (ids) plain->set_ids(runs);
    cs->plain = std::move(plain);
    cs->seq.reset();
    cs->partial.reset();
  }
  return Status();
}

}  // namespace weft::crdt::detail

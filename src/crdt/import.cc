// Import of decoded changes (from Loro JSON or weft binary): causal
// ordering, pending changes, joining the op log's last change, and applying
// each change's ops to the live state (see core.h and README.md).
#include <algorithm>
#include <memory>
#include <optional>
#include <unordered_map>

#include "crdt/core.h"

namespace weft::crdt::detail {
namespace {

void add_span(std::vector<IdSpan>& spans, PeerId p, Counter start, Counter end) {
  for (auto& s : spans) {
    if (s.peer == p && s.end == start) {
      s.end = end;
      return;
    }
    if (s.peer == p && end == s.start) {
      s.start = start;
      return;
    }
  }
  spans.push_back({p, start, end});
}

}  // namespace

bool DocCore::all_ready(const std::vector<Change>& incoming) const {
  // The ends the incoming changes add to the op log's version, by peer.
  std::unordered_map<PeerId, Counter> added;
  auto end_of = [&](PeerId p) -> Counter {
    Counter end = 0;
    if (auto pit = peer_index.find(p); pit != peer_index.end()) end = oplog_vv.get(pit->second);
    if (auto a = added.find(p); a != added.end()) end = std::max(end, a->second);
    return end;
  };
  std::vector<uint8_t> done(incoming.size(), 0);
  size_t left = incoming.size();
  for (bool progress = true; progress && left > 0;) {
    progress = false;
    for (size_t i = 0; i < incoming.size(); ++i) {
      if (done[i]) continue;
      const Change& c = incoming[i];
      const PeerId author = peer_ids[c.peer];
      const Counter known = end_of(author);
      if (c.counter > known) continue;
      bool ready = c.counter < known;  // (overlapping: its later part needs only its own ops)
      if (!ready) {
        ready = true;
        for (const ID& d : c.deps) {
          if (d.counter >= end_of(d.peer)) {
            ready = false;
            break;
          }
        }
      }
      if (!ready) continue;
      added[author] = std::max(known, c.end());
      done[i] = 1;
      --left;
      progress = true;
    }
  }
  return left == 0;
}

Result<ImportStatus> DocCore::import_changes(std::vector<Change> incoming,
                                             const ImportOptions& options) {
  if (options.check_text_insert) {
    for (const Change& c : incoming) {
      for (const Op& op : c.ops) {
        if (op.kind == OpKind::kTextInsert) WEFT_RETURN_IF_ERROR(options.check_text_insert(op.text.utf8()));
      }
    }
  }
  if (options.message) {
    for (Change& c : incoming) c.msg = *options.message;
  }
  // A refusal for missing dependencies costs nothing: decided before any
  // change applies (a rollback would rebuild the state).
  if (options.require_complete && !all_ready(incoming)) {
    return failed_precondition(
        "the import depends on changes this doc does not have (its changes would wait)");
  }
  // Snapshot what an error must restore (import is atomic).
  const size_t old_changes = changes.size();
  const DenseVv old_vv = oplog_vv;
  const Frontiers old_frontiers = oplog_frontiers;
  std::vector<Change> old_pending = pending;
  const Frontiers from = state_frontiers;
  // The log's last change may grow by joins (see joins_last): what a rollback
  // restores of it.
  const Counter old_last_len = changes.empty() ? 0 : changes.back().len;
  const size_t old_last_ops = changes.empty() ? 0 : changes.back().ops.size();
  std::optional<Op> old_last_op;  // its last op, once a join extends it

  // cands[first_incoming..] are this import's changes (before them: the
  // pending ones of earlier imports, which get another chance).
  const size_t first_incoming = pending.size();
  std::vector<Change> cands = pending.empty() ? std::move(incoming) : std::move(pending);
  pending.clear();
  if (!incoming.empty()) {
    cands.reserve(cands.size() + incoming.size());
    for (auto& c : incoming) cands.push_back(std::move(c));
  }
  // Visit in lamport order (sorting indexes: moving whole changes is costly).
  std::vector<uint32_t> order(cands.size());
  for (uint32_t k = 0; k < order.size(); ++k) order[k] = k;
  const auto by_lamport = [&](uint32_t a, uint32_t b) {
    return cands[a].lamport < cands[b].lamport;
  };
  // Decoded binary changes carry no lamport (all 0): already in order.
  if (!std::is_sorted(order.begin(), order.end(), by_lamport))
    std::stable_sort(order.begin(), order.end(), by_lamport);
  ImportStatus status;
  Status err;
  bool apply_state = !detached;
  FoldScope fold_scope_guard(*this);
  if (apply_state && has_subscribers()) begin_events();
  // Into an empty doc, the import replays a whole history: the containers it
  // creates skip the id bookkeeping (see DocCore::PlainIds).
  if (apply_state && state->vv_total == 0 && edit_.ops().empty()) state->plain_ids = false;
  std::vector<uint8_t> done(cands.size(), 0);  // (bytes: no bit masking per test)
  // One reallocation at most while appending (geometric, so that many small
  // imports stay amortised O(1) per change).
  if (const size_t need = changes.size() + cands.size(); need > changes.capacity())
    changes.reserve(std::max(need, 2 * changes.capacity()));
  bool progress = true;
  while (progress && err.ok()) {
    progress = false;
    for (size_t k = 0; k < order.size() && err.ok(); ++k) {
      const size_t i = order[k];
      if (done[i]) continue;
      Change& c = cands[i];
      Counter known = oplog_vv.get(c.peer);
      if (c.end() <= known) {
        done[i] = true;
        continue;
      }
      if (c.counter > known) continue;  // waits for the same peer's earlier ops
      bool ready = true;
      const PeerId author = peer_ids[c.peer];
      for (const ID& d : c.deps) {
        // The usual dep, the author's own previous op: no peer lookup.
        if (d.peer == author) {
          if (oplog_vv.includes(c.peer, d.counter)) continue;
          ready = false;
          break;
        }
        auto pit = peer_index.find(d.peer);
        if (pit == peer_index.end() || !oplog_vv.includes(pit->second, d.counter)) {
          ready = false;
          break;
        }
      }
      if (!ready && c.counter == known) continue;
      // Only a change that overlaps the log is copied (sliced); the rest move
      // straight into the log.
      std::optional<Change> sliced;
      if (c.counter < known) sliced = slice_change(c, known);
      Change& ch = sliced ? *sliced : c;
      done[i] = true;
      progress = true;
      PeerId p = peer_ids[ch.peer];
      Counter start = ch.counter, end = ch.end();
      if (joins_last(ch) && has_room(changes.back())) {
        // Continuing the log's last change (a keystroke per update, as live
        // sync sends them): stored as part of it, so the log holds typing
        // runs, not a change per keystroke. Its ops go into the log first
        // (an apply that builds the tracker replays the log).
        const bool into_old = changes.size() == old_changes;
        const size_t first = join_last(std::move(ch));
        if (apply_state) err = apply_change(*state, changes.back(), end, first);
        if (err.ok()) {
          // (A copy of the old last op for a rollback: at most one per import.)
          std::optional<Op> saved;
          if (into_old && first == old_last_ops && !old_last_op)
            saved = changes.back().ops[first - 1];
          if (join_ops_at(first) && saved) old_last_op = std::move(saved);
        }
      } else {
        append_change(std::move(ch));
        if (apply_state) err = apply_change(*state, changes.back(), end);
      }
      add_span(status.success, p, start, end);
    }
  }
  if (err.ok() && options.require_complete) {
    for (size_t i = first_incoming; i < cands.size(); ++i) {
      if (!done[i]) {
        err = failed_precondition(
            "the import depends on changes this doc does not have (its changes would wait)");
        break;
      }
    }
  }
  state->plain_ids = true;
  // The temporary trackers of concurrent ops fold back into plain states.
  if (err.ok() && apply_state) err = fold_trackers(*state);
  if (err.ok() && detached) {
    // Validate positions against a scratch replay (the visible state stays put).
    auto scratch = build_state(oplog_vv, true, PlainIds::kDeferred);
    if (!scratch.ok()) err = scratch.status();
  }
  if (!err.ok()) {
    // Roll back the op log and rebuild the state.
    for (size_t i = changes.size(); i > old_changes; --i) by_peer[changes[i - 1].peer].pop_back();
    changes.resize(old_changes);
    if (!changes.empty()) {
      changes.back().len = old_last_len;
      changes.back().ops.resize(old_last_ops);
      if (old_last_op) changes.back().ops.back() = std::move(*old_last_op);
    }
    oplog_vv = old_vv;
    oplog_frontiers = old_frontiers;
    pending = std::move(old_pending);
    gathering = false;
    before_values.clear();
    if (!detached) {
      auto rebuilt = build_state(oplog_vv);
      if (rebuilt.ok()) state = std::move(*rebuilt);
      state_frontiers = oplog_frontiers;
    }
    return err;
  }
  for (const uint32_t i : order) {
    if (done[i]) continue;
    add_span(status.pending, peer_ids[cands[i].peer], cands[i].counter, cands[i].end());
    pending.push_back(std::move(cands[i]));
  }
  if (!detached) state_frontiers = oplog_frontiers;
  if (apply_state && gathering)
    end_events(EventTrigger::kImport, import_origin, std::nullopt, from);
  return status;
}

}  // namespace weft::crdt::detail

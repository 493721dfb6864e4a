// DocCore::check: the whole document's invariants, verified from outside the
// paths that keep them (in the manner of diamond-types' dbg_check). Tests,
// property tests and fuzz targets call it after every step.
#include <algorithm>
#include <string>

#include "crdt/core.h"

namespace weft::crdt::detail {
namespace {

bool same_vv(const DenseVv& a, const DenseVv& b) {
  const size_t n = std::max(a.ends.size(), b.ends.size());
  for (uint32_t p = 0; p < n; ++p) {
    if (a.get(p) != b.get(p)) return false;
  }
  return true;
}

std::string vv_string(const DenseVv& vv) {
  std::string out = "[";
  for (size_t p = 0; p < vv.ends.size(); ++p) {
    if (p != 0) out += ",";
    out += std::to_string(vv.ends[p]);
  }
  return out + "]";
}

Status broken(const std::string& what) { return internal_error("doc check: " + what); }

}  // namespace

Status DocCore::check_container(const State& s, uint32_t idx, bool deep) const {
  const ContainerState& cs = *s.containers[idx];
  const std::string where = "container " + containers[idx].to_string() + ": ";
  if (cs.type() != containers[idx].type()) return broken(where + "state of another type");
  if (!cs.fits_type()) return broken(where + "a state that does not fit its type");
  const SeqState* seq = cs.seq_if();
  if (!seq) return Status();
  // The mode's own invariants (plain xor tracker holds by construction; a
  // partial tracker holds its plain state).
  if (std::string why = seq->check(deep); !why.empty()) return broken(where + why);
  if (fold_scope == 0 && seq->is_temporary())
    return broken(where + "a temporary tracker outside an import or replay");
  if (cs.type() == ContainerType::kList && !seq->is_partial() && seq->units() > seq->values().size())
    return broken(where + "more list units than values");
  return Status();
}

Status DocCore::check(bool deep) const {
  // ---- op log: per-peer indexes and the version.
  if (by_peer.size() > peer_ids.size()) return broken("per-peer index longer than the peer table");
  for (uint32_t p = 0; p < peer_ids.size(); ++p) {
    Counter end = 0;
    if (p < by_peer.size() && !by_peer[p].empty()) {
      const size_t last = by_peer[p].back();
      if (last >= changes.size() || changes[last].peer != p)
        return broken("per-peer index of peer " + std::to_string(peer_ids[p]) + " points elsewhere");
      end = changes[last].end();
    }
    if (oplog_vv.get(p) != end) {
      return broken("op log version " + vv_string(oplog_vv) + " ends peer " +
                    std::to_string(peer_ids[p]) + " at " + std::to_string(oplog_vv.get(p)) +
                    ", its changes at " + std::to_string(end));
    }
  }
  // ---- uncommitted local edit: one form at a time.
  if (const char* rule = edit_.check()) return broken(rule);
  if (edit_.typing() && detached) return broken("typing buffer beside a checkout");
  if (txn_open() && edit_.start() != oplog_vv.get(self))
    return broken("the open transaction does not start at the op log's end");
  if (edit_.direct()) {
    if (changes.empty() || changes.back().peer != self)
      return broken("a direct keystroke without this peer's change last in the log");
  }
  // ---- state version = op log + open transaction (+ direct keystroke).
  const State& s = *state;
  if (s.vv_total != s.vv.total()) return broken("the state's version total is stale");
  if (detached) {
    if (txn_open()) return broken("an open transaction on a checkout");
    if (!oplog_vv.includes_all(s.vv)) return broken("a checkout past the op log");
  } else {
    DenseVv want = oplog_vv;
    if (txn_open()) want.set(self, edit_.start() + edit_.len());
    if (!same_vv(s.vv, want)) {
      return broken("state version " + vv_string(s.vv) + " is not the op log's " +
                    vv_string(oplog_vv) + " plus the open transaction's " +
                    std::to_string(txn_open() ? edit_.len() : 0) + " units");
    }
  }
  // ---- containers.
  if (s.containers.size() > containers.size()) return broken("state of an unknown container");
  for (uint32_t idx = 0; idx < s.containers.size(); ++idx) {
    if (s.containers[idx]) WEFT_RETURN_IF_ERROR(check_container(s, idx, deep));
  }
  if (!deep) return Status();
  // ---- deep: frontiers and each change's causal fields, from scratch.
  if (!(oplog_frontiers == dense_to_frontiers(oplog_vv)))
    return broken("op log frontiers do not name its version");
  if (!detached && !txn_open() && !(state_frontiers == oplog_frontiers))
    return broken("state frontiers differ from the op log's with nothing uncommitted");
  for (const Change& ch : changes) {
    if (ch.len <= 0) return broken("an empty change");
    if (static_cast<size_t>(ch.vv_at) + ch.vv_len > vv_pool.size())
      return broken("a change's deps version lies outside the pool");
    DenseVv want;
    Lamport lamport = 0;
    for (const ID& d : ch.deps) {
      const Change* dc = find_change(d.peer, d.counter);
      if (dc == nullptr) return broken("a change's dep is not in the log");
      lamport = std::max(lamport, dc->lamport + static_cast<Lamport>(d.counter - dc->counter) + 1);
      want.merge(deps_vv(*dc));
      want.extend(dc->peer, d.counter + 1);
    }
    want.extend(ch.peer, ch.counter);
    if (ch.lamport != lamport || ch.deps_total != want.total())
      return broken("change " + ID{peer_ids[ch.peer], ch.counter}.to_string() +
                    ": lamport or deps total differs from its deps'");
    DenseVv got;
    got.ends.assign(deps_vv(ch).begin(), deps_vv(ch).end());
    if (!same_vv(got, want))
      return broken("change " + ID{peer_ids[ch.peer], ch.counter}.to_string() +
                    ": deps version " + vv_string(got) + ", its deps give " + vv_string(want));
  }
  return Status();
}

}  // namespace weft::crdt::detail

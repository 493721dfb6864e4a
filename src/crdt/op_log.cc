// DocCore: tables, causal graph and op log (see core.h).
#include "crdt/core.h"

#include <algorithm>
#include <random>

namespace weft::crdt::detail {

DocCore::DocCore(PeerId p) : peer(p), state(std::make_unique<State>()) { self = intern_peer(p); }

void DocCore::advance_vv_slow(State& s, uint32_t peer, Counter end) {
  const int32_t before = s.vv.get(peer);
  if (end > before) {
    s.vv.set(peer, end);
    s.vv_total += end - before;
  }
}

uint32_t DocCore::intern_peer(PeerId p) {
  // Look up first: emplace would allocate a node even for a known peer.
  if (auto found = peer_index.find(p); found != peer_index.end()) return found->second;
  auto [it, inserted] = peer_index.emplace(p, static_cast<uint32_t>(peer_ids.size()));
  if (inserted) {
    peer_ids.push_back(p);
    by_peer.emplace_back();
  }
  return it->second;
}

uint32_t DocCore::intern_container(const ContainerId& id) {
  if (auto found = container_index.find(id); found != container_index.end()) return found->second;
  auto [it, inserted] = container_index.emplace(id, static_cast<uint32_t>(containers.size()));
  if (inserted) {
    containers.push_back(id);
    local_roots.push_back(false);
  }
  return it->second;
}

const Change* DocCore::find_change(PeerId p, Counter counter) const {
  auto pit = peer_index.find(p);
  if (pit == peer_index.end()) return nullptr;
  const auto& list = by_peer[pit->second];
  if (list.empty()) return nullptr;
  // Most lookups (deps of an appended change, local lamports) hit the peer's last change.
  if (const Change& last = changes[list.back()]; counter >= last.counter)
    return counter < last.end() ? &last : nullptr;
  auto it = std::upper_bound(list.begin(), list.end(), counter,
                             [&](Counter c, uint32_t ci) { return c < changes[ci].counter; });
  if (it == list.begin()) return nullptr;
  const Change& ch = changes[*(it - 1)];
  return counter < ch.end() ? &ch : nullptr;
}

Lamport DocCore::lamport_of(PeerId p, Counter counter) const {
  const Change* ch = find_change(p, counter);
  return ch ? ch->lamport + static_cast<Lamport>(counter - ch->counter) : 0;
}

DenseVv DocCore::op_vv(const Change& ch, Counter counter) const {
  DenseVv vv;
  const std::span<const int32_t> deps = deps_vv(ch);
  vv.ends.assign(deps.begin(), deps.end());
  vv.extend(ch.peer, counter);
  return vv;
}

Result<DenseVv> DocCore::frontiers_to_dense(const Frontiers& f) const {
  DenseVv vv;
  for (const ID& id : f.ids()) {
    const Change* ch = find_change(id.peer, id.counter);
    if (!ch) return not_found("op " + id.to_string() + " is not in the history");
    DenseVv v = op_vv(*ch, id.counter + 1);
    vv.merge(v);
  }
  return vv;
}

Frontiers DocCore::dense_to_frontiers(const DenseVv& vv) const {
  std::vector<std::pair<const Change*, Counter>> cands;
  for (uint32_t p = 0; p < vv.ends.size(); ++p) {
    if (vv.ends[p] <= 0) continue;
    const Change* ch = find_change(peer_ids[p], vv.ends[p] - 1);
    if (ch) cands.emplace_back(ch, vv.ends[p] - 1);
  }
  std::vector<ID> out;
  for (size_t i = 0; i < cands.size(); ++i) {
    bool dominated = false;
    for (size_t j = 0; j < cands.size() && !dominated; ++j) {
      if (i == j) continue;
      DenseVv v = op_vv(*cands[j].first, cands[j].second);
      dominated = v.includes(cands[i].first->peer, cands[i].second);
    }
    if (!dominated) out.push_back(ID{peer_ids[cands[i].first->peer], cands[i].second});
  }
  return Frontiers(std::move(out));
}

VersionVector DocCore::to_public(const DenseVv& vv) const {
  VersionVector out;
  for (uint32_t p = 0; p < vv.ends.size(); ++p) out.set(peer_ids[p], vv.ends[p]);
  return out;
}

DenseVv DocCore::to_dense(const VersionVector& vv) {
  DenseVv out;
  for (const auto& [p, c] : vv.entries()) out.set(intern_peer(p), c);
  return out;
}

void DocCore::append_change(Change&& ch) {
  const PeerId author = peer_ids[ch.peer];
  const std::vector<uint32_t>& own_list = by_peer[ch.peer];
  const Change* own = own_list.empty() ? nullptr : &changes[own_list.back()];
  if (ch.deps.size() == 1 && own && ch.deps[0].peer == author &&
      ch.deps[0].counter >= own->counter && ch.deps[0].counter < own->end() &&
      ch.deps[0].counter < ch.counter) {
    // The usual change (a decoded keystroke): its one dep lies in its
    // author's last change `own`. Its deps_vv is own's with the author's
    // entry raised to ch.counter (own's entry, own->counter, is below it):
    // one copy, no merges or sums.
    const Counter d = ch.deps[0].counter;
    ch.lamport = own->lamport + static_cast<Lamport>(d - own->counter) + 1;
    const uint32_t from = own->vv_at, n = own->vv_len;
    const uint32_t len = std::max<uint32_t>(n, ch.peer + 1);
    const int64_t own_entry = ch.peer < n ? vv_pool[from + ch.peer] : 0;
    ch.deps_total = own->deps_total - own_entry + ch.counter;
    ch.vv_at = static_cast<uint32_t>(vv_pool.size());
    ch.vv_len = len;
    vv_pool.resize(vv_pool.size() + len);  // zeros past n (may move the pool: index it)
    std::copy_n(vv_pool.begin() + from, n, vv_pool.begin() + ch.vv_at);
    vv_pool[ch.vv_at + ch.peer] = ch.counter;
  } else {
    Lamport lamport = 0;
    DenseVv& vv = append_vv;  // keeps its capacity: no allocation per change
    vv.ends.clear();
    for (const ID& d : ch.deps) {
      // The author's own previous op lies in the author's last change: no
      // peer lookup (find_change hashes the peer id).
      const Change* dc = nullptr;
      if (d.peer == author && own && d.counter >= own->counter && d.counter < own->end()) dc = own;
      if (!dc) dc = find_change(d.peer, d.counter);
      if (!dc) continue;  // REQUIRES: deps present (checked by the caller)
      lamport = std::max(lamport, dc->lamport + static_cast<Lamport>(d.counter - dc->counter) + 1);
      vv.merge(deps_vv(*dc));  // op_vv(*dc, d.counter + 1) without the copy
      vv.extend(dc->peer, d.counter + 1);
    }
    vv.extend(ch.peer, ch.counter);
    ch.lamport = lamport;
    ch.vv_at = static_cast<uint32_t>(vv_pool.size());
    ch.vv_len = static_cast<uint32_t>(vv.ends.size());
    vv_pool.insert(vv_pool.end(), vv.ends.begin(), vv.ends.end());
    ch.deps_total = vv.total();
  }
  // Frontiers: drop what the change has seen, add its last op. Usually it
  // has seen them all (its deps are the frontier): then its last op
  // replaces them in place.
  const ID last{author, ch.end() - 1};
  const std::vector<ID>& old_f = oplog_frontiers.ids();
  bool all_seen = ch.deps.size() == old_f.size();
  for (size_t k = 0; k < old_f.size() && all_seen; ++k)
    all_seen = std::find(ch.deps.begin(), ch.deps.end(), old_f[k]) != ch.deps.end();
  if (all_seen) {
    oplog_frontiers.assign(last);
  } else {
    const std::span<const int32_t> seen = deps_vv(ch);
    oplog_frontiers.replace_seen(last, [&](const ID& id) {
      const uint32_t p = peer_index.at(id.peer);
      return p < seen.size() && id.counter < seen[p];
    });
  }
  oplog_vv.extend(ch.peer, ch.end());
  by_peer[ch.peer].push_back(static_cast<uint32_t>(changes.size()));
  changes.push_back(std::move(ch));
}

bool DocCore::continues(const Change& prev, const Change& ch, int64_t time,
                        const std::optional<std::string>& msg) const {
  return prev.peer == ch.peer && prev.end() == ch.counter && ch.deps.size() == 1 &&
         ch.deps[0] == ID{peer_ids[ch.peer], ch.counter - 1} &&
         merge_rule_allows(time, msg, ch.timestamp, ch.msg);
}

size_t DocCore::join_last(Change&& ch) {
  Change& last = changes.back();
  const size_t first = last.ops.size();
  last.len += ch.len;
  for (Op& op : ch.ops) last.ops.push_back(std::move(op));
  // The one dep is the author's previous op: the only frontier it can replace.
  const PeerId author = peer_ids[ch.peer];
  const ID head{author, last.end() - 1};
  const std::vector<ID>& old_f = oplog_frontiers.ids();
  if (old_f.size() == 1 && old_f[0] == ch.deps[0]) {
    oplog_frontiers.assign(head);
  } else {
    oplog_frontiers.replace_seen(
        head, [&](const ID& id) { return id.peer == author && id.counter < ch.counter; });
  }
  oplog_vv.extend(ch.peer, last.end());
  return first;
}

bool DocCore::join_ops_at(size_t k) {
  OpList& ops = changes.back().ops;
  if (k == 0 || k >= ops.size() || !extend_op(ops[k - 1], ops[k])) return false;
  for (size_t i = k; i + 1 < ops.size(); ++i) ops[i] = std::move(ops[i + 1]);
  ops.pop_back();
  return true;
}

Change DocCore::slice_change(const Change& ch, Counter from) const {
  if (from <= ch.counter) return ch;
  Change out;
  out.peer = ch.peer;
  out.counter = from;
  out.len = ch.end() - from;
  out.timestamp = ch.timestamp;
  out.msg = ch.msg;
  out.deps = {ID{peer_ids[ch.peer], from - 1}};
  out.lamport = ch.lamport + static_cast<Lamport>(from - ch.counter);
  for (const Op& op : ch.ops) {
    Counter end = op.counter + op.atom_len();
    if (end <= from) continue;
    out.ops.push_back(op.counter >= from ? op : slice_op(op, from - op.counter));
  }
  return out;
}

}  // namespace weft::crdt::detail

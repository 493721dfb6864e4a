// Eg-walker retreat / advance: moving a Seq's prepare version (see seq.h and
// DocCore::prepare_seq in core.h).
#include <algorithm>

#include "crdt/core.h"

namespace weft::crdt::detail {
namespace {

// Moves the units [lo, hi) of `op` (an op of the Seq's container) into
// (advance) or out of the Seq's prepare version.
Status prepare_op(Seq& seq, const Op& op, uint32_t peer, Counter lo, Counter hi, bool advance) {
  switch (op.kind) {
    case OpKind::kTextInsert:
    case OpKind::kListInsert:
      return seq.prepare_insert(peer, lo, hi - lo, advance);
    case OpKind::kMark:
    case OpKind::kMarkEnd:  // one style anchor element each
      return seq.prepare_insert(peer, op.counter, 1, advance);
    case OpKind::kSeqDelete:
      return seq.prepare_delete(peer, lo, hi - lo, advance);
    default:
      return Status();
  }
}

}  // namespace

Status DocCore::prepare_ops(Seq& seq, uint32_t container, uint32_t peer, Counter lo, Counter hi,
                            bool advance) const {
  const std::vector<uint32_t>& list = by_peer[peer];
  // The first change ending after `lo`.
  auto it = std::partition_point(list.begin(), list.end(),
                                 [&](uint32_t ci) { return changes[ci].end() <= lo; });
  for (; it != list.end() && changes[*it].counter < hi; ++it) {
    const Change& ch = changes[*it];
    auto op = std::partition_point(ch.ops.begin(), ch.ops.end(),
                                   [&](const Op& o) { return o.counter + o.atom_len() <= lo; });
    for (; op != ch.ops.end() && op->counter < hi; ++op) {
      if (op->container != container) continue;
      const Counter l = std::max(lo, op->counter);
      const Counter h = std::min(hi, op->counter + op->atom_len());
      WEFT_RETURN_IF_ERROR(prepare_op(seq, *op, peer, l, h, advance));
    }
  }
  // The open transaction's ops follow the op log (only the live state holds them).
  if (peer == self && hi > txn_start) {
    for (const Op& op : txn_ops) {
      const Counter l = std::max(lo, op.counter);
      const Counter h = std::min(hi, op.counter + op.atom_len());
      if (op.container != container || l >= h) continue;
      WEFT_RETURN_IF_ERROR(prepare_op(seq, op, peer, l, h, advance));
    }
  }
  return Status();
}

Status DocCore::prepare_seq(State& s, uint32_t container, const DenseVv* target) {
  Seq& seq = *s.containers[container]->seq;
  if (target == nullptr && seq.prepare_is_all()) return Status();
  // The next op of the same change (or of a change at the same version): the
  // tracker is already there, which one compare of the vectors shows.
  if (target != nullptr && !seq.prepare_is_all() && seq.prepare_vv().ends == target->ends)
    return Status();
  const DenseVv& from = seq.prepare_is_all() ? s.vv : seq.prepare_vv();
  const DenseVv& to = target ? *target : s.vv;
  const size_t peers = std::max(from.ends.size(), to.ends.size());
  for (uint32_t p = 0; p < peers; ++p) {
    const Counter a = from.get(p), b = to.get(p);
    if (a == b) continue;
    Status st = prepare_ops(seq, container, p, std::min(a, b), std::max(a, b), b > a);
    if (!st.ok()) return st.with_context("moving the sequence tracker's version");
  }
  if (target)
    seq.set_prepare_vv(*target);
  else
    seq.set_prepare_all();
  return Status();
}

Status Seq::check_prepare(const DenseVv* vv) const {
  std::vector<uint32_t> dels(arena_.size(), 0);
  for (uint32_t p = 0; p < del_runs_.size(); ++p) {
    for (const IdRun& r : del_runs_[p]) {
      for (uint32_t k = 0; k < r.len; ++k) {
        if (vv == nullptr || vv->includes(p, r.counter + int32_t(k))) ++dels[r.arena + k];
      }
    }
  }
  size_t prefix = 0;
  for (uint32_t ci = 0; ci < chunks_.size(); ++ci) {
    const Chunk& c = *chunks_[ci];
    if (chunk_pos_[c.id] != ci) return internal_error("tracker: stale chunk position");
    if (ci == pcache_.ci && prefix != pcache_.pvis)
      return internal_error("tracker: stale prepare prefix cache");
    uint32_t pvis = 0;
    if (c.flags.size() != c.items.size()) return internal_error("tracker: chunk flags out of step");
    for (size_t off = 0; off < c.items.size(); ++off) {
      const uint32_t i = c.items[off];
      const Elem& e = arena_[i];
      const uint8_t want = flags_of(e), have = c.flags[off];
      if ((want & kVisBit) != (have & kVisBit) ||
          (c.pexact(off) && (want & kPvisBit) != (have & kPvisBit))) {
        return internal_error("tracker: stale visibility flags of a chunk item");
      }
      const bool ins = vv == nullptr || vv->includes(e.peer, e.counter);
      if (e.chunk != c.id || e.pins != ins || e.pdel != dels[i]) {
        return internal_error("tracker: element " + std::to_string(e.peer) + "@" +
                              std::to_string(e.counter) + " has a wrong prepare state");
      }
      if (pvisible(e)) ++pvis;
    }
    if (pvis != c.pvis) return internal_error("tracker: wrong prepare count of a chunk");
    prefix += pvis;
  }
  return Status();
}

}  // namespace weft::crdt::detail

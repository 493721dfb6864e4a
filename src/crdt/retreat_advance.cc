// Eg-walker retreat / advance: moving a Seq's prepare version (see
// fugue_tracker.h and DocCore::prepare_seq in core.h), and its from-scratch
// check (Seq::check_prepare).
#include <algorithm>

#include "crdt/core.h"
#include "crdt/dcheck.h"

namespace weft::crdt::detail {

void Seq::move_prepare(const DenseVv& from, const DenseVv& to) {
  // The id runs hold exactly the units of this container's ops (the open
  // transaction's too), so each range moves without visiting the op log.
  const size_t peers = std::max(from.ends.size(), to.ends.size());
  for (uint32_t p = 0; p < peers; ++p) {
    const int32_t a = from.get(p), b = to.get(p);
    if (a != b) prepare_range(p, std::min(a, b), std::max(a, b), b > a);
  }
}

Status DocCore::prepare_seq(State& s, uint32_t container, const DenseVv* target) {
  WEFT_DCHECK(container < s.containers.size() && s.containers[container] &&
              s.containers[container]->tracker());
  Seq& seq = *s.containers[container]->tracker();
  if (target == nullptr && seq.prepare_is_all()) return Status();
  // The next op of the same change (or of a change at the same version): the
  // tracker is already there, which one compare of the vectors shows.
  if (target != nullptr && !seq.prepare_is_all() && seq.prepare_vv().ends == target->ends)
    return Status();
  const DenseVv& from = seq.prepare_is_all() ? s.vv : seq.prepare_vv();
  const DenseVv& to = target ? *target : s.vv;
  seq.move_prepare(from, to);
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
  Chunk sums;  // current-state counts of all chunks, and of those before cache_.ci
  for (uint32_t ci = 0; ci < chunks_.size(); ++ci) {
    const Chunk& c = *chunks_[ci];
    if (chunk_pos_[c.id] != ci) return internal_error("tracker: stale chunk position");
    if (ci == pcache_.ci && prefix != pcache_.pvis)
      return internal_error("tracker: stale prepare prefix cache");
    if (ci == cache_.ci && (sums.vis != cache_.vis || sums.chars != cache_.chars ||
                            sums.u16 != cache_.u16 || sums.u8 != cache_.u8))
      return internal_error("tracker: stale prefix cache");
    if (c.gap != kNone) {  // placeholders without elements: visible in every version
      if (!c.items.empty() || c.vis == 0 || c.chars != c.vis || c.u16 != c.vis || c.u8 != c.vis ||
          c.pvis != c.vis || c.gap >= gaps_.size())
        return internal_error("tracker: wrong counts of a gap");
      sums.vis += c.vis;
      sums.chars += c.chars;
      sums.u16 += c.u16;
      sums.u8 += c.u8;
      prefix += c.pvis;
      continue;
    }
    Chunk fresh;
    fresh.items = c.items;
    recount(fresh);
    if (fresh.vis != c.vis || fresh.chars != c.chars || fresh.u16 != c.u16 || fresh.u8 != c.u8)
      return internal_error("tracker: wrong counts of a chunk");
    sums.vis += c.vis;
    sums.chars += c.chars;
    sums.u16 += c.u16;
    sums.u8 += c.u8;
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
      const bool ins =
          vv == nullptr || e.peer == kPlaceholderPeer || vv->includes(e.peer, e.counter);
      if (e.chunk != c.id || e.pins != ins || e.pdel != dels[i]) {
        return internal_error("tracker: element " + std::to_string(e.peer) + "@" +
                              std::to_string(e.counter) + " has a wrong prepare state");
      }
      if (pvisible(e)) ++pvis;
    }
    if (pvis != c.pvis) return internal_error("tracker: wrong prepare count of a chunk");
    prefix += pvis;
  }
  if (sums.vis != total_vis_ || sums.chars != total_chars_ || sums.u16 != total_u16_ ||
      sums.u8 != total_u8_)
    return internal_error("tracker: wrong totals");
  return Status();
}

}  // namespace weft::crdt::detail

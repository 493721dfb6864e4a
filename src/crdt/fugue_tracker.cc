// The Fugue tracker, the sequence CRDT with tombstones (see fugue_tracker.h):
// integration of inserts, deletes by id, and the prepare-version counts.
#include "crdt/fugue_tracker.h"

#include <algorithm>
#include <cstring>

#include "crdt/dcheck.h"
#include "weft/base/utf.h"

namespace weft::crdt::detail {
namespace {

constexpr size_t kChunkMax = 256;

// Opens `len` slots at `off` of `v` (their values are left for the caller):
// cheaper than vector::insert's general fill for the one-item inserts of
// typing, which are most of a merge's tracker inserts.
template <typename T>
void open_gap(std::vector<T>& v, size_t off, size_t len) {
  const size_t old = v.size();
  if (len == 1)
    v.push_back(T());
  else
    v.resize(old + len);
  std::memmove(v.data() + off + len, v.data() + off, (old - off) * sizeof(T));
}

}  // namespace

void Seq::add_run(std::vector<std::vector<IdRun>>& runs, uint32_t peer, int32_t counter,
                  uint32_t arena, uint32_t len) {
  if (runs.size() <= peer) runs.resize(peer + 1);
  std::vector<IdRun>& list = runs[peer];
  if (!list.empty()) {
    IdRun& last = list.back();
    if (last.counter + int32_t(last.len) == counter && last.arena + last.len == arena) {
      last.len += len;
      return;
    }
    if (last.counter >= counter) {  // out of order (never in causal replay): keep it sorted
      auto it = std::upper_bound(list.begin(), list.end(), counter,
                                 [](int32_t c, const IdRun& r) { return c < r.counter; });
      list.insert(it, IdRun{counter, len, arena});
      return;
    }
  }
  list.push_back(IdRun{counter, len, arena});
}

void Seq::prepare_range(uint32_t peer, int32_t lo, int32_t hi, bool advance) {
  if (hint_.bit == kPvisBit) hint_.bit = 0;  // prepare counts before it may change
  // Walks the id runs overlapping [lo, hi) (sorted, disjoint; units of other
  // containers have none): one step per unit, whatever ops they came from.
  auto walk = [&](const std::vector<std::vector<IdRun>>& runs, auto toggle) {
    if (peer >= runs.size()) return;
    const std::vector<IdRun>& list = runs[peer];
    auto it = partition_point_from_back(
        list.begin(), list.end(), [&](const IdRun& r) { return r.counter + int32_t(r.len) <= lo; });
    for (; it != list.end() && it->counter < hi; ++it) {
      const int32_t from = std::max(lo, it->counter);
      const int32_t to = std::min(hi, it->counter + int32_t(it->len));
      for (int32_t c = from; c < to; ++c) toggle(it->arena + uint32_t(c - it->counter));
    }
  };
  walk(ins_runs_, [&](uint32_t idx) {
    Elem& e = arena_[idx];
    if (e.pins == advance) return;
    const bool was = pvisible(e);
    e.pins = advance;
    if (pvisible(e) != was) pcount(idx, was ? -1 : +1);
  });
  walk(del_runs_, [&](uint32_t idx) {
    Elem& e = arena_[idx];
    const bool was = pvisible(e);
    if (advance) {
      ++e.pdel;
    } else if (e.pdel > 0) {
      --e.pdel;
    }
    if (pvisible(e) != was) pcount(idx, was ? -1 : +1);
  });
}

void Seq::apply_delta(uint32_t ci, const Delta& d) {
  Chunk& c = *chunks_[ci];
  c.vis = static_cast<uint32_t>(c.vis + d.vis);
  c.chars = static_cast<uint32_t>(c.chars + d.chars);
  c.u16 = static_cast<uint32_t>(c.u16 + d.u16);
  c.u8 = static_cast<uint32_t>(c.u8 + d.u8);
  c.pvis = static_cast<uint32_t>(c.pvis + d.pvis);
  total_vis_ = static_cast<size_t>(int64_t(total_vis_) + d.vis);
  total_chars_ = static_cast<size_t>(int64_t(total_chars_) + d.chars);
  total_u16_ = static_cast<size_t>(int64_t(total_u16_) + d.u16);
  total_u8_ = static_cast<size_t>(int64_t(total_u8_) + d.u8);
  if (ci < cache_.ci) {
    cache_.vis = static_cast<size_t>(int64_t(cache_.vis) + d.vis);
    cache_.chars = static_cast<size_t>(int64_t(cache_.chars) + d.chars);
    cache_.u16 = static_cast<size_t>(int64_t(cache_.u16) + d.u16);
    cache_.u8 = static_cast<size_t>(int64_t(cache_.u8) + d.u8);
  }
  if (ci < pcache_.ci) pcache_.pvis = static_cast<size_t>(int64_t(pcache_.pvis) + d.pvis);
}

void Seq::seek(int kind, size_t n) const {
  Prefix& p = cache_;
  if (p.ci > chunks_.size()) p = Prefix();
  while (p.ci > 0 && prefix_count(p, kind) >= n) {
    const Chunk& c = *chunks_[--p.ci];
    p.vis -= c.vis;
    p.chars -= c.chars;
    p.u16 -= c.u16;
    p.u8 -= c.u8;
  }
  while (p.ci < chunks_.size() && prefix_count(p, kind) + chunk_count(*chunks_[p.ci], kind) < n) {
    const Chunk& c = *chunks_[p.ci++];
    p.vis += c.vis;
    p.chars += c.chars;
    p.u16 += c.u16;
    p.u8 += c.u8;
  }
}

Result<Seq::Cur> Seq::scan_chunk(uint32_t ci, uint32_t k, uint32_t count, uint8_t bit) {
  Chunk& ch = *chunks_[ci];
  if (k == 0 || k > count) return internal_error("sequence chunk counts are inconsistent");
  // Eight flag bytes at a time over the exact ones (the multiply adds up the
  // eight selected bits in the top byte), from whichever end of the chunk is
  // nearer the k-th of its `count` items (typing at the end of a chunk then
  // costs a few steps). Stale prepare bits met on the way are recomputed
  // from the elements, which extends the exact prefix or suffix.
  constexpr uint64_t kOnes = 0x0101010101010101ULL;
  const int shift = bit == kVisBit ? 0 : 1;
  uint8_t* f = ch.flags.data();
  const uint32_t* items = ch.items.data();
  const Elem* arena = arena_.data();
  const uint32_t n = static_cast<uint32_t>(ch.flags.size());
  const bool all_exact = bit == kVisBit || ch.plo + ch.psuf >= n;
  auto count8 = [&](uint32_t at) {
    uint64_t w;
    std::memcpy(&w, f + at, 8);
    return static_cast<uint32_t>((((w >> shift) & kOnes) * kOnes) >> 56);
  };
  auto refresh = [&](uint32_t off) {
    const Elem& e = arena[items[off]];
    f[off] = static_cast<uint8_t>((f[off] & kVisBit) | (e.pins && e.pdel == 0 ? kPvisBit : 0));
  };
  if (2 * k <= count) {
    const uint32_t exact = all_exact ? n : ch.plo;
    uint32_t off = 0;
    for (; off + 8 <= exact; off += 8) {
      const uint32_t c = count8(off);
      if (c >= k) break;
      k -= c;
    }
    for (; off < exact; ++off) {
      if ((f[off] & bit) && --k == 0) return Cur{ci, off};
    }
    for (; off < n; ++off) {
      refresh(off);
      if ((f[off] & bit) && --k == 0) {
        ch.plo = off + 1;
        return Cur{ci, off};
      }
    }
  } else {
    const uint32_t exact = all_exact ? 0 : n - ch.psuf;
    uint32_t from_end = count - k + 1;
    uint32_t off = n;
    for (; off >= exact + 8; off -= 8) {
      const uint32_t c = count8(off - 8);
      if (c >= from_end) break;
      from_end -= c;
    }
    while (off > exact) {
      if ((f[--off] & bit) && --from_end == 0) return Cur{ci, off};
    }
    while (off-- > 0) {
      refresh(off);
      if ((f[off] & bit) && --from_end == 0) {
        ch.psuf = n - off;
        return Cur{ci, off};
      }
    }
  }
  return internal_error("sequence chunk counts are inconsistent");
}

bool Seq::from_hint(uint32_t pos, Cur* out) const {
  const uint8_t bit = hint_.bit;
  Cur c = hint_.cur;
  uint32_t before = hint_.before;
  // Each step passes at most one visible entity: a target further away than
  // the walk's length cannot be reached (a cursor jump), so skip the walk.
  if ((pos > before ? pos - before : before - pos) >= static_cast<uint32_t>(kHintSteps))
    return false;
  // kVisBit flags are exact; a prepare flag only where its chunk says so.
  auto visible_at = [&](const Chunk& ch, uint32_t off) {
    if (bit == kVisBit || ch.pexact(off)) return (ch.flags[off] & bit) != 0;
    return pvisible(arena_[ch.items[off]]);
  };
  if (pos > before) {  // forward: the item at the cursor is the next candidate
    for (int s = 0; s < kHintSteps && c.ci < chunks_.size(); ++s) {
      const Chunk& ch = *chunks_[c.ci];
      if (ch.gap != kNone) return false;  // (its placeholders have no flags)
      if (c.off >= ch.items.size()) {
        ++c.ci;
        c.off = 0;
        continue;
      }
      if (visible_at(ch, c.off) && ++before == pos) {
        *out = c;
        return true;
      }
      ++c.off;
    }
    return false;
  }
  for (int s = 0; s < kHintSteps; ++s) {  // backward: the items before the cursor
    if (c.off == 0) {
      if (c.ci == 0 || chunks_[c.ci - 1]->gap != kNone) return false;
      --c.ci;
      c.off = static_cast<uint32_t>(chunks_[c.ci]->items.size());
      continue;
    }
    --c.off;
    if (visible_at(*chunks_[c.ci], c.off)) {
      if (before == pos) {
        *out = c;
        return true;
      }
      --before;
    }
  }
  return false;
}

Result<Seq::Cur> Seq::find_visible(uint32_t pos, const DenseVv* vv) {
  Cur c;
  if (hint_.bit == (vv ? kPvisBit : kVisBit) && pos > 0 && from_hint(pos, &c)) {
    if (!verify_hints_) [[likely]]
      return c;
    auto counted = find_counted(pos, vv);
    if (!counted.ok() || counted->ci != c.ci || counted->off != c.off)
      return internal_error("tracker: the position hint disagrees with the chunk counts");
    return c;
  }
  return find_counted(pos, vv);
}

Result<Seq::Cur> Seq::find_counted(uint32_t pos, const DenseVv* vv) {
  if (vv == nullptr) {
    if (pos > total_vis_)
      return out_of_range("position " + std::to_string(pos) + " is past the end (" +
                          std::to_string(total_vis_) + ")");
    seek(3, pos);
    if (cache_.ci >= chunks_.size()) return out_of_range("position past the end");
    if (chunks_[cache_.ci]->gap != kNone) {
      open_around(cache_.ci, pos - static_cast<uint32_t>(cache_.vis) - 1);
      seek(3, pos);
    }
    return scan_chunk(cache_.ci, pos - static_cast<uint32_t>(cache_.vis), chunks_[cache_.ci]->vis,
                      kVisBit);
  }
  // The prepare version is the op's version: find the chunk by its counts.
  PPrefix& p = pcache_;
  if (p.ci > chunks_.size()) p = PPrefix();
  const auto pseek = [&] {
    while (p.ci > 0 && p.pvis >= pos) p.pvis -= chunks_[--p.ci]->pvis;
    while (p.ci < chunks_.size() && p.pvis + chunks_[p.ci]->pvis < pos)
      p.pvis += chunks_[p.ci++]->pvis;
  };
  pseek();
  if (p.ci >= chunks_.size()) {
    return out_of_range("position " + std::to_string(pos) + " is past the end of the op's version");
  }
  if (chunks_[p.ci]->gap != kNone) {
    open_around(p.ci, pos - static_cast<uint32_t>(p.pvis) - 1);
    pseek();
  }
  return scan_chunk(p.ci, pos - static_cast<uint32_t>(p.pvis), chunks_[p.ci]->pvis, kPvisBit);
}

void Seq::recount(Chunk& k) const {
  k.vis = k.chars = k.u16 = k.u8 = k.pvis = 0;
  for (uint32_t i : k.items) {
    const Elem& e = arena_[i];
    if (pvisible(e)) ++k.pvis;
    if (e.del_peer != kNone) continue;
    ++k.vis;
    if (is_text_) {
      if (e.content >= kStartAnchor) continue;
      ++k.chars;
      k.u16 += e.content > 0xFFFF ? 2 : 1;
      k.u8 += utf8_width(e.content);
    } else {
      ++k.chars;
      ++k.u16;
      ++k.u8;
    }
  }
}

Seq::Cur Seq::insert_run(Cur c, uint32_t first, uint32_t len) {
  hint_.bit = 0;  // offsets move (the caller sets a new hint)
  if (chunks_.empty()) {
    chunks_.push_back(std::make_unique<Chunk>());
    chunks_.back()->id = static_cast<uint32_t>(chunk_pos_.size());
    chunk_pos_.push_back(0);
  }
  if (at_end(c)) {
    c.ci = chunks_.size() - 1;
    c.off = chunks_[c.ci]->items.size();
  }
  {
    Chunk& ch = *chunks_[c.ci];
    // The new items' bits are exact: a prefix or suffix they join stays so.
    if (c.off <= ch.plo) ch.plo += len;
    if (c.off + ch.psuf >= ch.items.size()) ch.psuf += len;
    open_gap(ch.items, c.off, len);
    open_gap(ch.flags, c.off, len);
    Delta d;
    for (uint32_t k = 0; k < len; ++k) {
      const uint32_t idx = first + k;
      Elem& e = arena_[idx];
      ch.items[c.off + k] = idx;
      const uint8_t fl = flags_of(e);
      ch.flags[c.off + k] = fl;
      e.chunk = ch.id;
      if (fl & kPvisBit) ++d.pvis;
      weigh(e, +1, d);
    }
    apply_delta(c.ci, d);
    if (ch.items.size() <= kChunkMax) return c;
  }
  // Split the chunk into m pieces of about kChunkMax / 2 (counts are
  // additive, so totals and the prefix sums before the chunk stay unchanged).
  // The chunk keeps the first piece (its elements keep their chunk id); the
  // others are new chunks after it. Chunks are held by pointer so that the
  // insert moves pointers, not chunk objects, on a long sequence.
  Chunk& head = *chunks_[c.ci];
  std::vector<uint32_t>& items = head.items;
  const size_t total = items.size();
  const size_t m = std::max<size_t>(2, total / (kChunkMax / 2));
  const size_t head_size = total / m + (total % m > 0 ? 1 : 0);
  std::vector<std::unique_ptr<Chunk>> pieces;
  pieces.reserve(m - 1);
  Cur out = c;
  size_t at = head_size;
  for (size_t p = 1; p < m; ++p) {
    const size_t size = total / m + (p < total % m ? 1 : 0);
    auto k = std::make_unique<Chunk>();
    k->id = static_cast<uint32_t>(chunk_pos_.size());
    chunk_pos_.push_back(0);
    k->items.assign(items.begin() + at, items.begin() + at + size);
    k->flags.assign(head.flags.begin() + at, head.flags.begin() + at + size);
    k->pstale();  // (rare: recomputed by the next lookups)
    for (uint32_t i : k->items) arena_[i].chunk = k->id;
    recount(*k);
    head.vis -= k->vis;
    head.chars -= k->chars;
    head.u16 -= k->u16;
    head.u8 -= k->u8;
    head.pvis -= k->pvis;
    if (c.off >= at && c.off < at + size) out = Cur{c.ci + uint32_t(p), c.off - uint32_t(at)};
    at += size;
    pieces.push_back(std::move(k));
  }
  items.resize(head_size);  // its counts are the old ones less the new chunks'
  head.flags.resize(head_size);
  head.pstale();
  chunks_.insert(chunks_.begin() + c.ci + 1, std::make_move_iterator(pieces.begin()),
                 std::make_move_iterator(pieces.end()));
  for (size_t k = c.ci + 1; k < chunks_.size(); ++k) chunk_pos_[chunks_[k]->id] = uint32_t(k);
  // Chunks appeared before the cached ones.
  if (c.ci < cache_.ci) cache_.ci += uint32_t(m - 1);
  if (c.ci < pcache_.ci) pcache_.ci += uint32_t(m - 1);
  return out;
}

Seq::Cur Seq::integrate(uint32_t idx, uint32_t left, Cur start, const DenseVv* vv) {
  normalize(start);
  open_at(start);
  // The conflict zone: elements right of the scan start that V has not seen.
  std::vector<Cur>& zone = zone_;
  zone.clear();
  Cur c = start;
  while (!at_end(c) && !known(arena_[at(c)], vv)) {
    zone.push_back(c);
    advance(c);
    open_at(c);  // (a gap's placeholders are known: the zone ends there)
  }
  uint32_t right = at_end(c) ? kNone : at(c);
  Elem& me = arena_[idx];
  me.origin_left = left;
  me.origin_right = right;
  if (zone.empty()) return insert_at(start, idx);

  const uint64_t my_peer = real_peer(me.peer);
  constexpr int64_t kInf = INT64_MAX;
  const int64_t z = static_cast<int64_t>(zone.size());
  // Per-element scratch (zone index, "passed") stamped with this call's
  // epoch: O(1) lookups, so a zone of z elements costs O(z), not O(z^2).
  if (++epoch_ == 0) {
    std::fill(zone_stamp_.begin(), zone_stamp_.end(), 0);
    std::fill(passed_stamp_.begin(), passed_stamp_.end(), 0);
    epoch_ = 1;
  }
  // (A partial tracker's placeholders in gaps have no elements: its
  // scratch does not grow with the document.)
  if (zone_stamp_.size() < arena_.size()) {
    zone_stamp_.resize(arena_.size(), 0);
    zone_at_.resize(arena_.size(), 0);
    passed_stamp_.resize(arena_.size(), 0);
  }
  for (int64_t i = 0; i < z; ++i) {
    zone_stamp_[at(zone[i])] = epoch_;
    zone_at_[at(zone[i])] = static_cast<uint32_t>(i);
  }
  // Position of a right parent: its origin right if that is a sibling.
  auto parent_right = [&](uint32_t r) -> int64_t {
    if (r == kNone || arena_[r].origin_left != left) return kInf;
    if (r == right) return z;
    return zone_stamp_[r] == epoch_ ? int64_t{zone_at_[r]} : z + 1;
  };
  const int64_t my_pr = parent_right(right);
  int64_t insert_after = -1;  // zone index we go after (-1 = zone start)
  bool scanning = false;
  auto was_passed = [&](uint32_t x) { return passed_stamp_[x] == epoch_; };
  for (int64_t i = 0; i < z; ++i) {
    uint32_t oi = at(zone[i]);
    const Elem& o = arena_[oi];
    if (o.origin_left != left && (o.origin_left == kNone || !was_passed(o.origin_left))) break;
    passed_stamp_[oi] = epoch_;
    if (o.origin_left == left) {
      if (o.origin_right == right) {
        if (real_peer(o.peer) > my_peer) break;
        scanning = false;
      } else {
        int64_t pr = parent_right(o.origin_right);
        if (pr < my_pr) {
          scanning = true;
        } else if (pr == my_pr && real_peer(o.peer) > my_peer) {
          break;
        } else {
          scanning = false;
        }
      }
    }
    if (!scanning) insert_after = i;
  }
  Cur at_cur = insert_after + 1 < z ? zone[insert_after + 1] : c;
  return insert_at(at_cur, idx);
}

Status Seq::insert(uint32_t peer, int32_t counter, uint32_t pos, const uint32_t* contents, size_t n,
                   DenseVv* vv) {
  if (n == 0) return Status();
  if (vv) vv->set(peer, std::max(vv->get(peer), counter));
  uint32_t left = kNone;
  Cur start;
  if (pos > 0) {
    auto found = find_visible(pos, vv);
    if (!found.ok()) return found.status();
    left = at(*found);
    start = *found;
    advance(start);
  }
  const uint32_t first = static_cast<uint32_t>(arena_.size());
  for (size_t k = 0; k < n; ++k) {
    // Unit k > 0 has unit k-1 as left origin, which nothing else has as
    // origin: its integration would stop at once and place it right after
    // unit k-1, with unit 0's right origin. So only unit 0 is integrated and
    // the rest go in as one run after it.
    arena_.push_back(Elem{peer, counter + int32_t(k), k == 0 ? left : first + uint32_t(k) - 1,
                          kNone, kNone, 0, contents[k]});
    if (id_index_built_)
      id_index_.emplace((uint64_t(peer) << 32) | uint32_t(counter + int32_t(k)), first + k);
  }
  add_run(ins_runs_, peer, counter, first, static_cast<uint32_t>(n));
  Cur placed = integrate(first, left, start, vv);
  // Unit 0 is the (pos + 1)-th entity of the version (the zone it may pass is
  // not in it).
  uint32_t before = pos;
  if (n > 1) {
    for (size_t k = 1; k < n; ++k) arena_[first + k].origin_right = arena_[first].origin_right;
    advance(placed);
    open_at(placed);
    placed = insert_run(placed, first + 1, static_cast<uint32_t>(n - 1));
    before = pos + 1;
  }
  set_hint(vv, placed, before);
  if (vv) vv->set(peer, std::max(vv->get(peer), counter + int32_t(n)));
  return Status();
}

void Seq::fill_placeholders(size_t n) {
  WEFT_DCHECK(arena_size() == 0);
  if (n == 0) return;
  auto c = std::make_unique<Chunk>();
  c->id = static_cast<uint32_t>(chunk_pos_.size());
  chunk_pos_.push_back(static_cast<uint32_t>(chunks_.size()));
  c->vis = c->chars = c->u16 = c->u8 = c->pvis = static_cast<uint32_t>(n);
  c->gap = static_cast<uint32_t>(gaps_.size());
  gaps_.push_back(Gap{0, kNone, kNone});
  chunks_.push_back(std::move(c));
  total_vis_ = total_chars_ = total_u16_ = total_u8_ = n;
}

void Seq::open_around(uint32_t ci, uint32_t off) {
  const uint32_t lo = off > kGapOpen / 2 ? off - kGapOpen / 2 : 0;
  open_placeholders(ci, lo, lo + kGapOpen);
}

void Seq::open_placeholders(uint32_t ci, uint32_t lo, uint32_t hi) {
  hint_.bit = 0;  // chunk indexes move
  Chunk& g = *chunks_[ci];
  const Gap gap = gaps_[g.gap];
  const uint32_t len = g.vis;  // (every placeholder is visible in both versions)
  hi = std::min(hi, len);
  const uint32_t n = hi - lo;
  const auto base = static_cast<uint32_t>(arena_.size());
  // What is left of the gap before and after the opened placeholders.
  const auto piece = [&](uint32_t first, uint32_t size, uint32_t prev, uint32_t next) {
    auto k = std::make_unique<Chunk>();
    k->id = static_cast<uint32_t>(chunk_pos_.size());
    chunk_pos_.push_back(0);
    k->vis = k->chars = k->u16 = k->u8 = k->pvis = size;
    k->gap = static_cast<uint32_t>(gaps_.size());
    gaps_.push_back(Gap{first, prev, next});
    return k;
  };
  std::unique_ptr<Chunk> before, after;
  if (lo > 0) before = piece(gap.first, lo, gap.prev, base);
  if (hi < len) after = piece(gap.first + hi, len - hi, base + n - 1, gap.next);
  // The gap's chunk holds the opened ones: the elements fill_placeholders
  // describes, linked to their neighbours that have elements.
  g.gap = kNone;
  g.items.resize(n);
  g.flags.assign(n, kVisBit | kPvisBit);
  g.vis = g.chars = g.u16 = g.u8 = g.pvis = n;
  g.plo = n;
  g.psuf = 0;
  for (uint32_t k = 0; k < n; ++k) {
    const uint32_t left = k > 0 ? base + k - 1 : lo > 0 ? kInGap : gap.prev;
    arena_.push_back(Elem{kPlaceholderPeer, static_cast<int32_t>(gap.first + lo + k), left, kNone,
                          kNone, 0, 0, g.id});
    g.items[k] = base + k;
  }
  if (hi == len && gap.next != kNone) arena_[gap.next].origin_left = base + n - 1;
  // (Counts are additive: the prefix sums before any chunk stay.)
  const uint32_t added = (before ? 1 : 0) + (after ? 1 : 0);
  if (after) chunks_.insert(chunks_.begin() + ci + 1, std::move(after));
  if (before) chunks_.insert(chunks_.begin() + ci, std::move(before));
  for (size_t k = ci; k < chunks_.size(); ++k) chunk_pos_[chunks_[k]->id] = uint32_t(k);
  if (ci < cache_.ci) cache_.ci += added;
  if (ci < pcache_.ci) pcache_.ci += added;
}

Status Seq::erase_one(uint32_t peer, int32_t counter, uint32_t pos, DenseVv* vv) {
  if (vv) vv->set(peer, std::max(vv->get(peer), counter));
  auto found = find_visible(pos + 1, vv);
  if (!found.ok()) return found.status();
  const uint32_t idx = at(*found);
  Delta d;
  mark_deleted(idx, peer, counter, d);
  chunks_[found->ci]->flags[found->off] = flags_of(arena_[idx]);
  apply_delta(found->ci, d);
  add_run(del_runs_, peer, counter, idx);
  set_hint(vv, *found, pos);  // what was before the deleted entity stays
  if (vv) vv->set(peer, std::max(vv->get(peer), counter + 1));
  return Status();
}

void Seq::mark_deleted(uint32_t idx, uint32_t peer, int32_t counter, Delta& d) {
  hint_.bit = 0;  // counts change (the caller sets a new hint)
  Elem& e = arena_[idx];
  if (e.del_peer == kNone) {
    weigh(e, -1, d);
    e.del_peer = peer;
    e.del_counter = counter;
  }
  // The delete is part of the prepare version too (later units of its run,
  // and the next op when it is causal, see it).
  if (pvisible(e)) --d.pvis;
  ++e.pdel;
}

Status Seq::erase_forward(uint32_t peer, int32_t counter, uint32_t pos, int32_t n, DenseVv* vv) {
  if (n <= 0) return Status();
  if (vv) vv->set(peer, std::max(vv->get(peer), counter));
  auto found = find_visible(pos + 1, vv);
  if (!found.ok()) return found.status();
  // Unit k deletes the k-th element visible in its version from the found
  // one on (each unit's version holds the units before it). The run is
  // walked chunk by chunk: counts change once per chunk, chunks with nothing
  // visible are skipped whole, and the id -> target map gets whole runs.
  Cur c = *found;
  int32_t k = 0;
  IdRun run{counter, 0, 0};
  Status st;
  while (true) {
    const std::vector<uint32_t>& items = chunks_[c.ci]->items;
    std::vector<uint8_t>& flags = chunks_[c.ci]->flags;
    Delta d;
    for (; c.off < items.size() && k < n; ++c.off) {
      const uint32_t idx = items[c.off];
      if (!pvisible(arena_[idx])) continue;
      mark_deleted(idx, peer, counter + k, d);
      flags[c.off] = flags_of(arena_[idx]);
      if (run.len > 0 && run.arena + run.len == idx) {
        ++run.len;
      } else {
        if (run.len > 0) add_run(del_runs_, peer, run.counter, run.arena, run.len);
        run = IdRun{counter + k, 1, idx};
      }
      ++k;
    }
    apply_delta(c.ci, d);
    if (k == n) break;
    do {
      ++c.ci;
    } while (c.ci < chunks_.size() && chunks_[c.ci]->pvis == 0);
    c.off = 0;
    if (c.ci >= chunks_.size()) {
      st = out_of_range("delete run runs past the end of the op's version");
      break;
    }
    open_at(c);
  }
  if (run.len > 0) add_run(del_runs_, peer, run.counter, run.arena, run.len);
  if (st.ok()) set_hint(vv, c, pos);  // the deleted run lies between pos and c
  if (vv) vv->set(peer, std::max(vv->get(peer), counter + k));
  return st;
}

}  // namespace weft::crdt::detail

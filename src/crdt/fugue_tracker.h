// Internal: the sequence CRDT behind Text and List containers.
//
// Every element ever inserted (characters, list values, style anchors) stays
// in document order, deleted ones as tombstones. Elements live in an arena
// (stable indexes, no per-element heap objects); the order is a list of
// chunks of arena indexes with per-chunk counts, so that position lookups in
// the current state cost O(chunks + chunk size) and inserts O(chunk size).
//
// Integration follows loro-json.md §3.2 (Fugue/YATA with right parents, peer
// tie-break). An op is integrated against its own version V: when V contains
// everything applied so far (the fast path, vv == nullptr) positions resolve
// directly on the visible elements; otherwise the Seq is first brought to V
// Eg-walker style: every element also carries its state in the "prepare
// version" (inserted there? deleted how many times?), each chunk counts the
// elements visible there, and the caller (DocCore::prepare_seq) retreats or
// advances only the ops between the previous op's version and V. Positions of
// a concurrent op then resolve through chunk counts as on the fast path, and
// only the conflict zone is scanned.
#ifndef WEFT_SRC_CRDT_FUGUE_TRACKER_H_
#define WEFT_SRC_CRDT_FUGUE_TRACKER_H_

#include <algorithm>
#include <cstdint>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <unordered_map>
#include <vector>

#include "weft/base/status.h"

namespace weft::crdt::detail {

inline constexpr uint32_t kNone = UINT32_MAX;
// Elem::peer of a placeholder (see Seq::fill_placeholders): no real peer.
inline constexpr uint32_t kPlaceholderPeer = UINT32_MAX - 1;
inline constexpr char32_t kStartAnchor = 0x110000;  // content of a mark start anchor
inline constexpr char32_t kEndAnchor = 0x110001;    // content of a mark end anchor

// Bytes of code point `cp` in UTF-8.
inline size_t utf8_width(char32_t cp) {
  return cp < 0x80 ? 1 : cp < 0x800 ? 2 : cp < 0x10000 ? 3 : 4;
}

// A dense version vector indexed by the doc's peer index.
struct DenseVv {
  std::vector<int32_t> ends;
  int32_t get(uint32_t peer) const { return peer < ends.size() ? ends[peer] : 0; }
  void set(uint32_t peer, int32_t end) {
    if (peer >= ends.size()) ends.resize(peer + 1, 0);
    ends[peer] = end;
  }
  void extend(uint32_t peer, int32_t end) {
    if (get(peer) < end) set(peer, end);
  }
  void merge(const DenseVv& o) { merge(std::span<const int32_t>(o.ends)); }
  // Same for a vector held elsewhere (a change's deps_vv in the op log's pool).
  void merge(std::span<const int32_t> o) {
    if (o.size() > ends.size()) ends.resize(o.size(), 0);
    for (size_t i = 0; i < o.size(); ++i) ends[i] = std::max(ends[i], o[i]);
  }
  bool includes(uint32_t peer, int32_t counter) const { return counter < get(peer); }
  // Whether this version holds every unit of `o`.
  bool includes_all(const DenseVv& o) const {
    for (size_t i = 0; i < o.ends.size(); ++i) {
      if (o.ends[i] > get(static_cast<uint32_t>(i))) return false;
    }
    return true;
  }
  // Keeps only the units `o` holds too (the versions' common ancestor).
  void meet(const DenseVv& o) {
    for (size_t i = 0; i < ends.size(); ++i)
      ends[i] = std::min(ends[i], o.get(static_cast<uint32_t>(i)));
  }
  int64_t total() const {
    int64_t t = 0;
    for (int32_t e : ends) t += e;
    return t;
  }
};

// std::partition_point searched from the end (galloping: probes at 1, 2, 4,
// ... from `last`, then a binary search between the last two probes). The
// tracker's retreat / advance mostly moves over the latest ops, whose
// changes and id runs lie at the end of their lists.
template <typename It, typename Pred>
It partition_point_from_back(It first, It last, Pred pred) {
  auto hi = last - first;  // the point is in [0, hi]
  decltype(hi) step = 1;
  while (hi > 0) {
    const auto probe = hi > step ? hi - step : 0;
    if (pred(first[probe])) return std::partition_point(first + probe + 1, first + hi, pred);
    hi = probe;
    step *= 2;
  }
  return first;
}

struct Elem {
  uint32_t peer;  // dense peer index
  int32_t counter;
  uint32_t origin_left;       // arena index or kNone
  uint32_t origin_right;      // arena index or kNone
  uint32_t del_peer = kNone;  // first deleter
  int32_t del_counter = 0;
  uint32_t content;    // text: code point (or anchor); list: index into values
  uint32_t chunk = 0;  // stable id of the chunk holding it
  uint32_t pdel = 0;   // deletes of it in the prepare version
  bool pins = true;    // inserted in the prepare version
};

class Seq {
 public:
  // `peer_ids` maps dense peer index -> real peer id (for the u64 tie-break).
  explicit Seq(const std::vector<uint64_t>* peer_ids, bool is_text)
      : peer_ids_(peer_ids), is_text_(is_text) {}

  // Inserts `n` units with ids (peer, counter..counter+n-1) at entity position
  // `pos` of version `vv` (nullptr = everything applied so far). The content of
  // unit k is contents[k]. `vv` (when given) is updated for the own units.
  // Errors: kOutOfRange when pos is past the end of the version.
  Status insert(uint32_t peer, int32_t counter, uint32_t pos, const uint32_t* contents, size_t n,
                DenseVv* vv);
  // Deletes one unit: the pos-th visible entity of version `vv`, recording the
  // deleter id. Errors: kOutOfRange.
  Status erase_one(uint32_t peer, int32_t counter, uint32_t pos, DenseVv* vv);
  // Deletes `n` units of a forward delete run (each unit at `pos` of its own
  // version): the first is located once, the rest continue from it.
  Status erase_forward(uint32_t peer, int32_t counter, uint32_t pos, int32_t n, DenseVv* vv);

  // Eg-walker's placeholders: fills an empty Seq with `n` visible units that
  // stand for a version's state whose ops are not replayed (a partial
  // tracker, see DocCore::begin_partial). They have peer kPlaceholderPeer and
  // counters 0..n-1 in order, no id run (so retreat and advance never touch
  // them: every version the tracker resolves in holds them), and content 0.
  // Only their order matters: an op is integrated against elements its
  // version has not seen, and every version holds the placeholders.
  // They start as one gap (a chunk that counts them but holds no elements);
  // an op that reaches into a gap splits it and gives the placeholders there
  // their elements (see open_placeholders), each with the left origin it
  // would have had: the tracker's elements and order are those of one
  // element per placeholder, at a cost that follows the ops, not `n`.
  // REQUIRES: arena_size() == 0.
  void fill_placeholders(size_t n);
  // Calls fn(std::span<const uint32_t> items, uint32_t visible) for every
  // chunk in document order: its elements' arena indexes (see elem()), and
  // how many of them are visible. A gap (see fill_placeholders) comes as no
  // items and its count of placeholders, the next ones in counter order.
  // The other reads below expect no gaps (a tracker that is not partial).
  template <typename Fn>
  void for_each_chunk(Fn&& fn) const {
    for (const auto& chunk : chunks_) fn(std::span<const uint32_t>(chunk->items), chunk->vis);
  }
  // Calls fn(const Elem&) for every visible element in document order
  // (per-chunk counts and flags skip the rest without reading them).
  template <typename Fn>
  void for_each_visible_element(Fn&& fn) const {
    for (const auto& chunk : chunks_) {
      const Chunk& c = *chunk;
      if (c.vis == 0) continue;
      for (size_t k = 0; k < c.items.size(); ++k) {
        if (c.flags[k] & kVisBit) fn(arena_[c.items[k]]);
      }
    }
  }

  // Visible entities (anchors included) in the current state.
  size_t visible_entities() const { return total_vis_; }
  // Visible non-anchor units (characters or list elements).
  size_t visible_units() const { return total_chars_; }
  size_t utf16_len() const { return total_u16_; }
  size_t utf8_len() const { return total_u8_; }

  // Visible contents in order (text: code points without anchors; list: value indexes).
  std::vector<uint32_t> visible_contents() const;
  std::string to_utf8() const;

  // A unit boundary: entity index just after the n-th unit, and the unit
  // counts (unicode / utf16 / utf8) up to there.
  struct Boundary {
    uint32_t entity = 0;
    size_t units = 0, u16 = 0, u8 = 0;
  };
  // kind: 0 unicode units, 1 utf16, 2 utf8.
  Result<Boundary> locate(size_t n, int kind) const;
  // Entity-position runs [pos, pos+len) of the visible units [from, to)
  // (unicode units), anchors excluded; in ascending order.
  // Runs are split where element ids stop being consecutive (peer, counter+1).
  struct Run {
    uint32_t entity, len, peer;
    int32_t counter;
  };
  std::vector<Run> unit_runs(size_t from, size_t to) const;

  // ---- The prepare version (the version positions of the next op resolve
  // in; see the file comment). A new Seq, and every op applied with vv ==
  // nullptr, keep it equal to everything applied ("all").
  bool prepare_is_all() const { return prepare_all_; }
  // REQUIRES: !prepare_is_all().
  const DenseVv& prepare_vv() const { return prepare_vv_; }
  // Records the prepare version the caller has brought the elements to.
  void set_prepare_vv(const DenseVv& vv) {
    prepare_vv_ = vv;
    prepare_all_ = false;
  }
  void set_prepare_all() { prepare_all_ = true; }
  // Advances (adds) or retreats (removes) the units (peer, lo..hi) of this
  // sequence's ops in the prepare version: inserted elements appear or
  // disappear, delete targets gain or lose one delete. Units of other
  // containers' ops are no-ops.
  void prepare_range(uint32_t peer, int32_t lo, int32_t hi, bool advance);
  // prepare_range for every peer's units between versions `from` and `to`
  // (the elements move from one to the other; the recorded prepare version
  // is the caller's to set).
  void move_prepare(const DenseVv& from, const DenseVv& to);
  // Test hook (TestOptions::check_tracker): recomputes every element's prepare
  // state and every count from scratch for version `vv` (nullptr: all) and
  // reports the first difference from the incrementally kept ones as kInternal.
  Status check_prepare(const DenseVv* vv) const;
  // Test hook (TestOptions::check_tracker): every position found from the
  // position hint is also found the general way, and a difference is kInternal.
  void set_verify_hints(bool on) { verify_hints_ = on; }
  // Elements in the arena: every insert's units, tombstones included (and
  // the placeholders given elements so far).
  size_t arena_size() const { return arena_.size(); }

  // For undo: the element with id (peer, counter), if present.
  std::optional<uint32_t> find(uint32_t peer, int32_t counter);
  const Elem& elem(uint32_t idx) const { return arena_[idx]; }
  // Visible entities before arena element `idx` in the current state.
  uint32_t entity_before(uint32_t idx) const;
  bool is_deleted(uint32_t idx) const { return arena_[idx].del_peer != kNone; }
  // Undo bookkeeping (local only): `clone` re-creates the deleted `original`.
  void mark_clone(uint32_t clone, uint32_t original) { clone_of_[clone] = original; }
  // Where re-creating tombstone `tomb` puts it back in place: the number of
  // visible entities whose original element lies before it.
  uint32_t reinsert_pos(uint32_t tomb) const;

 private:
  // Calls fn(content) for each visible element in document order, skipping
  // style anchors when `skip_anchors` (a Text's characters only).
  template <typename Fn>
  void for_each_visible_content(bool skip_anchors, Fn&& fn) const {
    for (const auto& chunk : chunks_) {
      const Chunk& c = *chunk;
      if (c.vis == 0) continue;
      for (uint32_t i : c.items) {
        const Elem& e = arena_[i];
        if (e.del_peer != kNone || (skip_anchors && e.content >= kStartAnchor)) continue;
        fn(e.content);
      }
    }
  }
  struct Chunk {
    std::vector<uint32_t> items;  // arena indexes
    // Per item (same order as items): kVisBit when visible in the current
    // state, kPvisBit when visible in the prepare version. Position lookups
    // count these bytes 8 at a time instead of reading each Elem. kVisBit is
    // always exact; kPvisBit only on the first `plo` and the last `psuf`
    // items: retreat / advance change elements by id, not by offset, so they
    // make the whole chunk stale, and a lookup refreshes the items it walks.
    std::vector<uint8_t> flags;
    uint32_t vis = 0, chars = 0, u16 = 0, u8 = 0;
    uint32_t pvis = 0;  // entities visible in the prepare version
    uint32_t id = 0;    // stable id (chunk_pos_ maps it to the index in chunks_)
    uint32_t plo = 0, psuf = 0;
    bool pexact(size_t off) const { return off < plo || off + psuf >= items.size(); }
    void pstale() { plo = psuf = 0; }
    // kNone, or the chunk is a gap (no items; every count is its length)
    // and this is its index in gaps_.
    uint32_t gap = kNone;
  };
  // A gap: placeholders [first, first + chunk count) without elements, and
  // the arena indexes of the placeholders just before and after it (kNone:
  // none; the others have their elements, see fill_placeholders).
  struct Gap {
    uint32_t first = 0, prev = kNone, next = kNone;
  };
  // Left origin of a placeholder whose predecessor is still in a gap: no
  // element yet, so no op's left origin either (see open_placeholders).
  static constexpr uint32_t kInGap = kNone - 1;
  static constexpr uint8_t kVisBit = 1, kPvisBit = 2;
  uint8_t flags_of(const Elem& e) const {
    return static_cast<uint8_t>((e.del_peer == kNone ? kVisBit : 0) | (pvisible(e) ? kPvisBit : 0));
  }
  // Consecutive units (counter..counter+len) of one peer's ops whose targets
  // (inserted element, or deleted element) are arena indexes arena..arena+len.
  struct IdRun {
    int32_t counter;
    uint32_t len;
    uint32_t arena;
  };
  // Records units (peer, counter..+len) -> arena..arena+len in `runs`.
  static void add_run(std::vector<std::vector<IdRun>>& runs, uint32_t peer, int32_t counter,
                      uint32_t arena, uint32_t len = 1);
  bool pvisible(const Elem& e) const { return e.pins && e.pdel == 0; }
  // Count changes of one chunk, gathered over a run of its elements and
  // applied once (per-unit updates of every counter and cache cost more than
  // the element work itself on long runs).
  struct Delta {
    int64_t vis = 0, chars = 0, u16 = 0, u8 = 0, pvis = 0;
  };
  // Adds `sign` times the current-state weights of element `e` (nothing if it
  // is deleted) to `d`.
  void weigh(const Elem& e, int sign, Delta& d) const {
    if (e.del_peer != kNone) return;
    d.vis += sign;
    if (!is_text_) {
      d.chars += sign;
      d.u16 += sign;
      d.u8 += sign;
    } else if (e.content < kStartAnchor) {
      d.chars += sign;
      d.u16 += sign * (e.content > 0xFFFF ? 2 : 1);
      d.u8 += sign * static_cast<int64_t>(utf8_width(e.content));
    }
  }
  // Applies `d` to chunk `ci`, the totals and both prefix caches.
  void apply_delta(uint32_t ci, const Delta& d);
  // Adds `sign` to the prepare count of chunk `ci` (and to the cached prefix).
  void padd(uint32_t ci, int sign) {
    chunks_[ci]->pvis += sign;
    chunks_[ci]->pstale();
    if (ci < pcache_.ci) pcache_.pvis += sign;
  }
  // Same for the chunk holding arena element `idx`.
  void pcount(uint32_t idx, int sign) { padd(chunk_pos_[arena_[idx].chunk], sign); }
  // Cached sum of the prepare counts of chunks [0, ci): concurrent ops land
  // near each other, so walking from the last chunk used is ~O(1).
  struct PPrefix {
    uint32_t ci = 0;
    size_t pvis = 0;
  };
  struct Cur {
    uint32_t ci = 0, off = 0;
  };

  // Known / visible in the version of the op being applied (the prepare
  // version: the caller brought it there, or it is "all" when vv == nullptr).
  bool known(const Elem& e, const DenseVv* /*vv*/) const { return e.pins; }
  bool visible(uint32_t idx, const DenseVv* /*vv*/) const { return pvisible(arena_[idx]); }
  // Cursor cache: sums of the counts of chunks [0, ci). Edits are local, so
  // walking from the last chunk used makes position lookups ~O(1).
  struct Prefix {
    uint32_t ci = 0;
    size_t vis = 0, chars = 0, u16 = 0, u8 = 0;
  };
  static size_t chunk_count(const Chunk& c, int kind) {
    return kind == 0 ? c.chars : kind == 1 ? c.u16 : kind == 2 ? c.u8 : c.vis;
  }
  static size_t prefix_count(const Prefix& p, int kind) {
    return kind == 0 ? p.chars : kind == 1 ? p.u16 : kind == 2 ? p.u8 : p.vis;
  }
  // Moves the cache to the first chunk whose running count (kind 3 = visible
  // entities) reaches n (n >= 1).
  void seek(int kind, size_t n) const;
  bool at_end(Cur c) const { return c.ci >= chunks_.size(); }
  // Moves a cursor past the end of its chunk to the next item, or to the
  // start of a gap (which the caller opens before reading the item there).
  void normalize(Cur& c) const {
    while (c.ci < chunks_.size() && c.off >= chunks_[c.ci]->items.size()) {
      if (chunks_[c.ci]->gap != kNone) return;
      ++c.ci;
      c.off = 0;
    }
  }
  // Gives placeholders [lo, hi) of gap chunk `ci` (offsets in the gap) their
  // elements, in one chunk between what is left of the gap on either side.
  // Chunk indexes from `ci` on move; the prefix caches stay valid.
  void open_placeholders(uint32_t ci, uint32_t lo, uint32_t hi);
  // Opens the placeholders of gap chunk `ci` around offset `off`.
  void open_around(uint32_t ci, uint32_t off);
  // When cursor `c` (normalized) is at a gap, opens the gap's first
  // placeholders so that it points at an element.
  void open_at(Cur c) {
    if (c.off == 0 && c.ci < chunks_.size() && chunks_[c.ci]->gap != kNone)
      open_placeholders(c.ci, 0, kGapOpen);
  }
  // Placeholders opened at once: a few ops' worth around the one reached.
  static constexpr uint32_t kGapOpen = 128;
  void advance(Cur& c) const {
    ++c.off;
    normalize(c);
  }
  // Records the delete of element `idx` by (peer, counter) into `d` (its
  // chunk's counts) and the element; the caller records the id run.
  void mark_deleted(uint32_t idx, uint32_t peer, int32_t counter, Delta& d);
  uint32_t at(Cur c) const { return chunks_[c.ci]->items[c.off]; }
  // The k-th (1-based) item of chunk `ci` whose flags have `bit` set, of
  // `count` such items in the chunk.
  Result<Cur> scan_chunk(uint32_t ci, uint32_t k, uint32_t count, uint8_t bit);
  // Finds the pos-th (1-based) visible entity of `vv`; returns its cursor.
  // From the hint when it is near, else through the chunk counts.
  Result<Cur> find_visible(uint32_t pos, const DenseVv* vv);
  // find_visible through the chunk counts.
  Result<Cur> find_counted(uint32_t pos, const DenseVv* vv);
  // The position hint: the last op's cursor `cur`, with `before` entities
  // before it visible in the version of flag `bit` (0: no hint). Typing moves
  // one or two entities from it, so a short walk replaces the chunk lookup.
  // Ops set it; any other change of that version or of the chunks clears it.
  struct Hint {
    uint8_t bit = 0;
    Cur cur;
    uint32_t before = 0;
  };
  // Walks at most kHintSteps items from the hint to the pos-th visible entity
  // of its version; false when there is no hint or it is too far.
  bool from_hint(uint32_t pos, Cur* out) const;
  static constexpr int kHintSteps = 16;
  void set_hint(const DenseVv* vv, Cur c, uint32_t before) {
    normalize(c);
    hint_ = Hint{vv ? kPvisBit : kVisBit, c, before};
  }
  // Inserts arena index `idx` before cursor `c` (end allowed); returns its cursor.
  Cur insert_at(Cur c, uint32_t idx) { return insert_run(c, idx, 1); }
  // Inserts arena indexes first..first+len-1 in order before cursor `c`
  // (splitting the chunk when it grows past its maximum); returns the cursor
  // of `first`.
  Cur insert_run(Cur c, uint32_t first, uint32_t len);
  // Recomputes all counts of chunk `k` from its elements.
  void recount(Chunk& k) const;
  // Integrates one unit whose left origin is `left` (scan starts at `start`).
  Cur integrate(uint32_t idx, uint32_t left, Cur start, const DenseVv* vv);
  uint64_t real_peer(uint32_t p) const { return (*peer_ids_)[p]; }

  const std::vector<uint64_t>* peer_ids_;
  bool is_text_;
  std::vector<Elem> arena_;
  std::vector<std::unique_ptr<Chunk>> chunks_;  // by pointer: a split moves pointers
  std::vector<uint32_t> chunk_pos_;             // chunk id -> index in chunks_
  std::vector<std::vector<IdRun>> ins_runs_;    // per dense peer, by counter
  std::vector<std::vector<IdRun>> del_runs_;    // per dense peer, by counter
  // integrate() scratch: the zone's cursors; per arena element, the epoch
  // that put it in the zone (and its zone index) or marked it passed.
  std::vector<Cur> zone_;
  std::vector<uint32_t> zone_stamp_, zone_at_, passed_stamp_;
  std::vector<Gap> gaps_;  // by Chunk::gap (those of opened gaps stay, unused)
  uint32_t epoch_ = 0;
  DenseVv prepare_vv_;
  bool prepare_all_ = true;
  std::unordered_map<uint64_t, uint32_t> id_index_;  // built lazily by find()
  bool id_index_built_ = false;
  std::unordered_map<uint32_t, uint32_t> clone_of_;
  mutable Prefix cache_;
  mutable PPrefix pcache_;
  Hint hint_;
  bool verify_hints_ = false;
  size_t total_vis_ = 0, total_chars_ = 0, total_u16_ = 0, total_u8_ = 0;
};

}  // namespace weft::crdt::detail

#endif  // WEFT_SRC_CRDT_FUGUE_TRACKER_H_

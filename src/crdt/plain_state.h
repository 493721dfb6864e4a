// Internal: the plain state of a Text or List container (the Eg-walker
// "state" half): its visible units in document order with their ids, and no
// tombstones. Ops that are causally after the whole state (local edits,
// imports whose deps are the state's frontiers) apply here by position; an
// import's concurrent ops go through a temporary Fugue Seq (the "tracker")
// holding only the ops since their common ancestor, which folds back into a
// plain state when the import ends (DocCore::begin_partial / fold_trackers
// in core.h); style anchors keep the whole tracker (DocCore::materialize).
//
// Units live in chunks with per-chunk unicode / UTF-16 / UTF-8 counts and a
// cached prefix, so positional edits and unit conversions near the last edit
// cost O(chunk size). A Text chunk holds its units as UTF-8 (an op's text is
// copied in as bytes; an all-ASCII chunk, u8 == n, needs no per-unit
// classification since unit index == byte index); a List chunk holds one value
// index per unit. Chunks are heap nodes so that splitting or dropping one
// moves pointers, not chunks.
#ifndef WEFT_SRC_CRDT_PLAIN_STATE_H_
#define WEFT_SRC_CRDT_PLAIN_STATE_H_

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <string>
#include <string_view>
#include <vector>

#include "crdt/chunk_buffer.h"
#include "crdt/fugue_tracker.h"
#include "weft/base/status.h"

namespace weft::crdt::detail {

class PlainSeq {
 public:
  // A Text chunk splits above kTextChunkMax bytes into pieces of half of it,
  // a List chunk above kListChunkMax units (4 bytes each): an insert moves at
  // most a few hundred bytes, and a cursor walk skips a chunk per step.
  static constexpr size_t kTextChunkMax = 512;
  static constexpr size_t kListChunkMax = 256;
  // Emptied chunks kept for reuse (about 1 KiB each).
  static constexpr size_t kMaxSpare = 16;

  // `track_ids` false: no ids are kept (see ids_known()).
  explicit PlainSeq(bool is_text, bool track_ids = true)
      : is_text_(is_text), ids_known_(track_ids) {}
  ~PlainSeq() { clear(); }
  PlainSeq(const PlainSeq&) = delete;
  PlainSeq& operator=(const PlainSeq&) = delete;

  // Inserts `n` units with ids (peer, counter..counter+n-1) before unit `pos`;
  // unit k holds contents[k] (text: code point, a Unicode scalar value; list:
  // value index). Errors: kOutOfRange when pos is past the end.
  Status insert(uint32_t peer, int32_t counter, uint32_t pos, const uint32_t* contents, size_t n);
  // Same for a Text, with the units given as UTF-8 (an op's stored text: no
  // conversion to code points). REQUIRES: is_text, `utf8` is valid UTF-8
  // holding exactly `n` scalar values.
  Status insert_utf8(uint32_t peer, int32_t counter, uint32_t pos, std::string_view utf8, size_t n);
  // Removes units [pos, pos + n). Errors: kOutOfRange (nothing changes).
  Status erase(uint32_t pos, uint32_t n);

  size_t visible_units() const { return total_n_; }
  size_t utf16_len() const { return total_u16_; }
  size_t utf8_len() const { return total_u8_; }

  // Visible contents in order.
  std::vector<uint32_t> visible_contents() const;
  std::string to_utf8() const;
  // Same contract as Seq::locate (entity == units: no anchors here).
  Result<Seq::Boundary> locate(size_t n, int kind) const;
  // Same contract as Seq::unit_runs. REQUIRES: ids_known().
  std::vector<Seq::Run> unit_runs(size_t from, size_t to) const {
    std::vector<Seq::Run> runs;
    unit_runs(from, to, runs);
    return runs;
  }
  // The same into `runs` (cleared first), keeping its capacity: a caller
  // that deletes ranges often reuses one list instead of allocating one per
  // delete.
  void unit_runs(size_t from, size_t to, std::vector<Seq::Run>& runs) const;
  // The id (dense peer, counter) of visible unit `pos`, without building a
  // run list (the keystroke path). Returns how many units from `pos` on carry
  // consecutive ids within its chunk (>= 1).
  // REQUIRES: pos < visible_units(), ids_known().
  size_t id_at(size_t pos, uint32_t* peer, int32_t* counter) const;

  // Replaces a text's contents by valid UTF-8 `utf8` with unknown ids (a
  // snapshot's state section): one pass, chunks filled directly.
  // REQUIRES: is_text, validate_utf8(utf8).ok().
  void assign_utf8(std::string_view utf8);

  // False when the state was set without ids (from a snapshot's state
  // section) or built without them (a state replayed from the op log:
  // a checkout, an import into an empty doc): each chunk then keeps one
  // placeholder run (peer kNone) and edits skip the id bookkeeping, which is
  // about a third of a replay's work. Edits that need ids (a local delete)
  // must rebuild the state with them first (DocCore::recover_ids).
  bool ids_known() const { return ids_known_; }
  // Drops the ids (from then on, as above).
  void set_ids_unknown();
  // Gives the units their ids: runs[k] covers the next runs[k].len units
  // with ids (peer, counter + i) (Seq::Run's entity is not read); a chunk
  // left with too many runs splits. REQUIRES: the lens sum to visible_units().
  void set_ids(const std::vector<Seq::Run>& runs);

  // For tests: "" when each chunk's counts match its contents and its id runs
  // (one placeholder without ids) its units, and the totals add up; else what
  // is wrong.
  std::string check_structure() const;

  // ---- typing lane (crdt-lane): the keystroke's plain-state edit when it
  // continues the last edit, in a few stores. Each returns false with
  // nothing changed when its case does not hold; the caller then takes
  // insert_utf8 / id_at + erase, which leave the same state.

  // insert_utf8 of ASCII byte `ch` with id (peer, counter) at unit `pos`, when
  // `pos` is where the last insert ended in the cached chunk, that insert's
  // run continues with this id, and the all-ASCII chunk has room (no split).
  bool lane_type(uint32_t peer, int32_t counter, size_t pos, char ch) {
    return lane_type_n(peer, counter, pos, &ch, 1);
  }
  // The same for ASCII bytes s[0, m) (m >= 1) with ids (peer, counter + k):
  // the typing buffer's flush (DocCore::flush_typing), when the chunk has
  // room for all of them.
  bool lane_type_n(uint32_t peer, int32_t counter, size_t pos, const char* s, size_t m) {
    if (!hint_chunk_ || cache_.ci >= chunks_.size()) return false;
    Chunk& c = *chunks_[cache_.ci];
    const size_t off = pos - cache_.n;
    if (&c != hint_chunk_ || pos <= cache_.n || off != hint_end_ || off > c.n || c.u8 != c.n ||
        c.u8 + m > chunk_max() || !is_text_) {
      return false;
    }
    IdRun& run = c.runs[hint_.run];
    if (run.peer != peer || run.counter + static_cast<int32_t>(run.len) != counter) return false;
    c.text.insert(off, s, m);
    const auto k = static_cast<uint32_t>(m);
    run.len += k;
    hint_end_ = off + m;
    c.n += k, c.u16 += k, c.u8 += k;
    total_n_ += m, total_u16_ += m, total_u8_ += m;
    if (cache_.ci < alt_.ci) alt_.n += m, alt_.u16 += m, alt_.u8 += m;
    return true;
  }
  // id_at(pos) + erase(pos, 1), when unit `pos` is in the cached, hinted,
  // all-ASCII chunk, in the hinted run or a neighbour, at either end of a run
  // of two or more units, and the chunk stays too big to absorb its
  // successor. (*peer, *counter) receive the erased unit's id.
  bool lane_erase_one(size_t pos, uint32_t* peer, int32_t* counter) {
    if (!hint_chunk_ || cache_.ci >= chunks_.size()) return false;
    Chunk& c = *chunks_[cache_.ci];
    const size_t off = pos - cache_.n;
    if (&c != hint_chunk_ || pos < cache_.n || off >= c.n || c.u8 != c.n || !is_text_ ||
        hint_.run >= c.runs.size()) {
      return false;
    }
    size_t r = hint_.run, start = hint_.start;
    if (off < start) {  // backspacing into the run before
      if (r == 0) return false;
      start -= c.runs[--r].len;
    } else if (off >= start + c.runs[r].len) {  // deleting forward into the next
      if (r + 1 >= c.runs.size()) return false;
      start += c.runs[r++].len;
    }
    IdRun& run = c.runs[r];
    if (off < start || run.len < 2 || (off != start && off + 1 != start + run.len)) return false;
    // (The chunk's own size first: a chunk over half full never merges, and
    // its successor's block then stays untouched.)
    if (c.u8 - 1 <= chunk_max() / 2 && cache_.ci + 1 < chunks_.size() &&
        c.u8 - 1 + chunks_[cache_.ci + 1]->u8 <= chunk_max() / 2) {
      return false;
    }
    *peer = run.peer;
    *counter = run.counter + static_cast<int32_t>(off - start);
    if (off == start) ++run.counter;
    --run.len;
    c.text.erase(off, 1);
    hint_ = RunPos{r, start};
    hint_end_ = SIZE_MAX;
    --c.n, --c.u16, --c.u8;
    --total_n_, --total_u16_, --total_u8_;
    if (cache_.ci < alt_.ci) --alt_.n, --alt_.u16, --alt_.u8;
    return true;
  }
  // ---- end of typing lane

 private:
  // The ids of consecutive units: (peer, counter + k) for k < len. A chunk
  // keeps its ids as runs (typing makes long ones), not one id per unit.
  struct IdRun {
    uint32_t peer;
    int32_t counter;
    uint32_t len;
  };
  // Id runs a new chunk holds in its own block: kMaxRuns plus the two an
  // insert inside a run adds before the split, so a chunk's runs never move
  // to the heap between splits (that move's malloc, copy and free would sit
  // on the replay path).
  static constexpr size_t kOwnRuns = 66;
  // One heap block per chunk (see alloc_chunk): this header, room for its
  // first id runs, then (a Text chunk) for its bytes, so an edit touches one
  // block, not a header, a byte buffer and a run buffer.
  struct Chunk {
    Chunk(IdRun* own_runs, size_t own_runs_cap, char* own_text, size_t own_text_cap)
        : text(own_text, own_text_cap), runs(own_runs, own_runs_cap) {}
    // Units, UTF-16 units, UTF-8 bytes (a List counts one of each per unit,
    // so u8 == n means "one byte per unit" for both kinds).
    uint32_t n = 0, u16 = 0, u8 = 0;
    ChunkBytes text;               // Text: the units' UTF-8 (u8 bytes)
    ChunkVec<IdRun> runs;          // lens sum to n
    std::vector<uint32_t> values;  // List: value index per unit
  };
  static constexpr uint32_t kNoChunk = UINT32_MAX;  // Prefix::ci of no position
  // Sums of the counts of chunks [0, ci).
  struct Prefix {
    uint32_t ci = 0;
    size_t n = 0, u16 = 0, u8 = 0;
  };
  static size_t chunk_count(const Chunk& c, int kind) {
    return kind == 0 ? c.n : kind == 1 ? c.u16 : c.u8;
  }
  static size_t prefix_count(const Prefix& p, int kind) {
    return kind == 0 ? p.n : kind == 1 ? p.u16 : p.u8;
  }
  // A chunk whose size measure (u8: bytes of a Text, units of a List) passes
  // this splits into pieces of half of it.
  size_t chunk_max() const { return is_text_ ? kTextChunkMax : kListChunkMax; }
  // A chunk with more id runs than this splits in two at its middle run (a
  // soft bound: searching a run scans from the nearest end or the last edit,
  // about two runs on average in the S1-S3 traces). 32 split chunks of
  // fragmented ids (S1-S3: ~18 runs per chunk) about as often as their bytes did.
  static constexpr size_t kMaxRuns = 64;
  static bool is_continuation_byte(char b) {
    return (static_cast<unsigned char>(b) & 0xC0) == 0x80;
  }
  // Scalar values in valid UTF-8 s[0, m), and how many of them take two UTF-16
  // units (4-byte sequences). Eight bytes a step: in each byte, bit 7 of
  // b & ~(b << 1) marks "10xxxxxx" (a continuation byte) and bit 7 of
  // b & b << 1 & b << 2 & b << 3 marks "1111xxxx" (a 4-byte lead); the
  // shifts' carries between bytes land below bit 7. The marks add up per
  // byte lane (at most 255 steps, so no lane overflows) and are summed
  // across lanes per block.
  static size_t count_units(const char* s, size_t m, size_t* astral) {
    constexpr uint64_t kHigh = 0x8080808080808080ULL;
    constexpr uint64_t kEvenBytes = 0x00FF00FF00FF00FFULL;
    const auto lane_sum = [](uint64_t lanes) {
      const uint64_t pairs = (lanes & kEvenBytes) + ((lanes >> 8) & kEvenBytes);
      return static_cast<size_t>((pairs * 0x0001000100010001ULL) >> 48);
    };
    size_t cont = 0, four = 0, i = 0;
    while (i + 8 <= m) {
      const size_t block_end = std::min(m, i + 8 * 255);
      uint64_t cont_lanes = 0, four_lanes = 0;
      for (; i + 8 <= block_end; i += 8) {
        uint64_t w;
        std::memcpy(&w, s + i, 8);
        cont_lanes += (w & ~(w << 1) & kHigh) >> 7;
        four_lanes += (w & (w << 1) & (w << 2) & (w << 3) & kHigh) >> 7;
      }
      cont += lane_sum(cont_lanes);
      four += lane_sum(four_lanes);
    }
    for (; i < m; ++i) {
      const auto b = static_cast<unsigned char>(s[i]);
      cont += (b & 0xC0) == 0x80;
      four += b >= 0xF0;
    }
    *astral = four;
    return m - cont;
  }
  // A new empty chunk with room for a full chunk's units and runs, so that
  // edits until its next split do not reallocate: a spare one when there is
  // one (splits and merges come and go in bursts), else a heap one.
  Chunk* new_chunk();
  // A chunk in one block with room for `runs` id runs and `bytes` bytes of
  // text (new_chunk: kOwnRuns and, for a Text, chunk_max() + 32, so that an
  // insert of up to 32 bytes fits before the split; a snapshot's chunks
  // exactly their size).
  static Chunk* alloc_chunk(size_t runs, size_t bytes);
  static void free_chunk(Chunk* c);
  // Frees a chunk that left chunks_, or keeps it (emptied, with its
  // capacity) as a spare for new_chunk.
  void drop_chunk(Chunk* c);
  // Byte (Text) or value (List) offset of unit `off` of `c`. REQUIRES: off <= c.n.
  size_t offset_of(const Chunk& c, size_t off) const;
  // Moves the cache to the first chunk whose running count reaches n (n >= 1),
  // from the cache or the other cursor's position, whichever is nearer (see
  // alt_).
  void seek(int kind, size_t n) const;
  // Makes `c` the hinted chunk (the one edited last), keeping the other
  // cursor's hint off it (see alt_hint_chunk_).
  void hint_at(const Chunk* c) const {
    hint_chunk_ = c;
    if (alt_hint_chunk_ == c) alt_hint_chunk_ = nullptr;
  }
  // The chunk list changes (split, merge, drop, clear): both hints and the
  // other cursor are forgotten.
  void forget_hints() const {
    hint_chunk_ = nullptr;
    alt_hint_chunk_ = nullptr;
    alt_ = Prefix{kNoChunk, 0, 0, 0};
  }
  // Chunk `ci`'s counts grew (or shrank: the deltas wrap) by these: the other
  // cursor's prefix sums cover it when it lies before that cursor.
  void alt_counts(uint32_t ci, size_t n, size_t u16, size_t u8) {
    if (ci < alt_.ci) alt_.n += n, alt_.u16 += u16, alt_.u8 += u8;
  }
  // seek(0, n), with the common case inline: unit n is in the cached chunk.
  void seek_unit(size_t n) const {
    if (cache_.ci < chunks_.size() && cache_.n < n && n <= cache_.n + chunks_[cache_.ci]->n) return;
    seek(0, n);
  }
  // The chunk that unit position `pos` (<= total_n_) falls in, with the cache
  // on it; `off` receives pos's offset in it. Creates the first chunk.
  Chunk& chunk_for_insert(uint32_t pos, size_t* off);
  // Inserts units (bytes[0, m) of a Text or values[0, n) of a List) at unit
  // `off` of chunk `ci` and splits it when it grows past chunk_max().
  void insert_at(uint32_t ci, size_t off, uint32_t peer, int32_t counter, const char* bytes,
                 size_t m, const uint32_t* values, size_t n, size_t u16);
  // insert_at's case for an insert of more than half a chunk that overflows
  // chunk `ci`: the units after `off` move to a chunk of their own, `ci`
  // fills up to half a chunk from the source, and the rest of the source
  // becomes new chunks of half a chunk each, each copied once from the source
  // (not into `ci` and out again by split). Same arguments as insert_at.
  void insert_bulk(uint32_t ci, size_t off, uint32_t peer, int32_t counter, const char* bytes,
                   size_t m, const uint32_t* values, size_t n, size_t u16);
  // Splits the oversize chunk `ci` into equal pieces of chunk_max() / 2 to
  // chunk_max() (cut at character boundaries), the first staying at `ci`.
  void split(uint32_t ci);
  // A new chunk holding units [off, c.n) of `c` (contents and counts, not
  // ids), which keeps units [0, off). The caller moves the ids.
  Chunk* move_tail(Chunk& c, size_t off);
  // Splits chunk `ci` in two at its middle id run, so that run searches
  // inside a chunk stay short however fragmented its ids are.
  void split_runs(uint32_t ci);
  // Appends chunk ci + 1 to chunk ci and drops it.
  void merge_next(uint32_t ci);
  // After an erase in chunk `ci`: merges it with its successor when both are
  // small, or splits it when the erase left it too many id runs.
  void rebalance_after_erase(uint32_t ci);
  // erase(pos, 1) of unit `off` of `c`, the cached chunk, when `c` is an
  // all-ASCII Text chunk of two or more units (most deletes of a text
  // history: one key, and the chunk stays).
  void erase_one_ascii(Chunk& c, size_t off);
  void clear();
  // A run boundary of one chunk: runs[run] begins at unit `start` (run ==
  // runs.size(): the chunk's end). {0, 0} is always one.
  struct RunPos {
    size_t run = 0, start = 0;
  };
  // Id run edits inside one chunk (offsets in units of that chunk).
  // `chunk_units`: the units `runs` cover; `hint`: a boundary of `runs` to
  // search from. insert_ids returns the boundary of the run holding the new
  // units (which end it); erase_ids one near the erased range.
  static RunPos insert_ids(ChunkVec<IdRun>& runs, size_t chunk_units, size_t off, RunPos hint,
                           uint32_t peer, int32_t counter, uint32_t n);
  static RunPos erase_ids(ChunkVec<IdRun>& runs, size_t chunk_units, size_t off, size_t n,
                          RunPos hint);
  // The run holding unit `off` (runs.size() when off == chunk_units), found
  // from the nearest of the chunk's ends and `hint`; `start` receives its
  // first unit.
  static size_t find_run(const ChunkVec<IdRun>& runs, size_t chunk_units, size_t off, RunPos hint,
                         size_t* start);
  // Appends run `r`, extending the last run when `r` continues it.
  static void append_run(ChunkVec<IdRun>& runs, const IdRun& r);

  // A chunk's placeholder run when ids are not kept: one run of all its
  // `n` units (its unit count after the edit at hand).
  static void placeholder_run(Chunk& c, uint32_t n) {
    if (c.runs.size() != 1) {
      c.runs.clear();
      c.runs.push_back(IdRun{kNone, 0, n});
    }
    c.runs[0].len = n;
  }

  bool is_text_;
  bool ids_known_;
  std::vector<Chunk*> chunks_;  // owned
  std::vector<Chunk*> spare_;   // owned, empty, at most kMaxSpare (see drop_chunk)
  mutable Prefix cache_;
  // The other cursor: where the cache was before its last long move (two
  // typists, or an edit and a read elsewhere), so that a seek back there
  // starts from it (seek swaps the two), with the hint that went with it.
  // Edits keep its sums right (alt_counts); ci == kNoChunk when there is none.
  // alt_hint_chunk_ is never hint_chunk_ (hint_at), so edits of the hinted
  // chunk's runs need not check it; any other run edit goes through hint_at.
  mutable Prefix alt_{kNoChunk, 0, 0, 0};
  mutable const Chunk* alt_hint_chunk_ = nullptr;
  mutable RunPos alt_hint_;
  mutable size_t alt_hint_end_ = SIZE_MAX;
  // A run boundary of the chunk edited last, so typing on extends its run
  // without a search and nearby edits search from there; cleared when that
  // chunk's runs change otherwise (split, merge, clear).
  // id_at moves it too (mutable), so the erase that follows finds its run at once.
  mutable const Chunk* hint_chunk_ = nullptr;
  mutable RunPos hint_;
  mutable size_t hint_end_ = SIZE_MAX;  // unit where run hint_.run ends, if it is the last insert's
  size_t total_n_ = 0, total_u16_ = 0, total_u8_ = 0;
};

inline size_t PlainSeq::find_run(const ChunkVec<IdRun>& runs, size_t chunk_units, size_t off,
                                 RunPos hint, size_t* start) {
  // Scan from the boundary nearest to `off`: the chunk's start, its end, or
  // the hint (where the last edit was).
  size_t r = 0, at = 0;
  const size_t to_hint = off >= hint.start ? off - hint.start : hint.start - off;
  if (to_hint < off && to_hint < chunk_units - off) {
    r = hint.run;
    at = hint.start;
  } else if (off * 2 > chunk_units) {
    r = runs.size();
    at = chunk_units;
  }
  if (at <= off) {
    while (r < runs.size() && off >= at + runs[r].len) at += runs[r++].len;
  } else {
    while (at > off) at -= runs[--r].len;
  }
  *start = at;
  return r;
}

}  // namespace weft::crdt::detail

#endif  // WEFT_SRC_CRDT_PLAIN_STATE_H_

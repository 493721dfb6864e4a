// Internal: the plain state of a Text or List container (the Eg-walker
// "state" half): its visible units in document order with their ids, and no
// tombstones. Ops that are causally after the whole state (local edits,
// imports whose deps are the state's frontiers) apply here by position; the
// Fugue Seq (the "tracker") is only built when an op is concurrent with the
// state or needs tombstones (see DocCore::materialize in core.h).
//
// Units live in chunks with per-chunk unicode / UTF-16 / UTF-8 counts and a
// cached prefix, so positional edits and unit conversions near the last edit
// cost O(chunk size).
#ifndef WEFT_SRC_CRDT_PLAIN_H_
#define WEFT_SRC_CRDT_PLAIN_H_

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "crdt/seq.h"
#include "weft/base/status.h"

namespace weft::crdt::detail {

class PlainSeq {
 public:
  explicit PlainSeq(bool is_text) : is_text_(is_text) {}

  // Inserts `n` units with ids (peer, counter..counter+n-1) before unit `pos`;
  // unit k holds contents[k] (text: code point; list: value index).
  // Errors: kOutOfRange when pos is past the end.
  Status insert(uint32_t peer, int32_t counter, uint32_t pos, const uint32_t* contents, size_t n);
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
  std::vector<Seq::Run> unit_runs(size_t from, size_t to) const;
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
  // section): edits that need ids must build the tracker first.
  bool ids_known() const { return ids_known_; }
  void set_ids_unknown() { ids_known_ = false; }

 private:
  // The ids of consecutive units: (peer, counter + k) for k < len. A chunk
  // keeps its ids as runs (typing makes long ones), not one id per unit.
  struct IdRun {
    uint32_t peer;
    int32_t counter;
    uint32_t len;
  };
  struct Chunk {
    std::vector<uint32_t> contents;  // code point (text) or value index (list) per unit
    std::vector<IdRun> runs;         // lens sum to contents.size()
    uint32_t u16 = 0, u8 = 0;
  };
  // Sums of the counts of chunks [0, ci).
  struct Prefix {
    uint32_t ci = 0;
    size_t n = 0, u16 = 0, u8 = 0;
  };
  size_t u16_of(uint32_t c) const { return is_text_ && c > 0xFFFF ? 2 : 1; }
  size_t u8_of(uint32_t c) const {
    if (!is_text_ || c < 0x80) return 1;
    return c < 0x800 ? 2 : c < 0x10000 ? 3 : 4;
  }
  static size_t chunk_count(const Chunk& c, int kind) {
    return kind == 0 ? c.contents.size() : kind == 1 ? c.u16 : c.u8;
  }
  static size_t prefix_count(const Prefix& p, int kind) {
    return kind == 0 ? p.n : kind == 1 ? p.u16 : p.u8;
  }
  // Moves the cache to the first chunk whose running count reaches n (n >= 1).
  void seek(int kind, size_t n) const;
  // Id run edits inside one chunk (offsets in units of that chunk).
  // `chunk_units`: the units `runs` cover.
  static void insert_ids(std::vector<IdRun>& runs, size_t chunk_units, size_t off, uint32_t peer,
                         int32_t counter, uint32_t n);
  static void erase_ids(std::vector<IdRun>& runs, size_t off, size_t n);
  // The runs of units [from, to) of `runs`.
  static std::vector<IdRun> slice_ids(const std::vector<IdRun>& runs, size_t from, size_t to);

  bool is_text_;
  bool ids_known_ = true;
  std::vector<Chunk> chunks_;
  mutable Prefix cache_;
  size_t total_n_ = 0, total_u16_ = 0, total_u8_ = 0;
};

}  // namespace weft::crdt::detail

#endif  // WEFT_SRC_CRDT_PLAIN_H_

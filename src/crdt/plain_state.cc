// The plain state of a Text or List container (see plain_state.h): its
// positional edits (chunk splits and merges are in plain_state_split.cc,
// reads in plain_state_read.cc).
#include "crdt/plain_state.h"

#include <algorithm>
#include <new>

#include "crdt/dcheck.h"
#include "weft/base/utf.h"

namespace weft::crdt::detail {
namespace {

Status past_the_end(size_t pos, size_t total) {
  return out_of_range("position " + std::to_string(pos) + " is past the end (" +
                      std::to_string(total) + ")");
}

}  // namespace

PlainSeq::Chunk* PlainSeq::alloc_chunk(size_t runs, size_t bytes) {
  static_assert(sizeof(Chunk) % alignof(IdRun) == 0);
  char* block = static_cast<char*>(::operator new(sizeof(Chunk) + runs * sizeof(IdRun) + bytes));
  auto* own_runs = reinterpret_cast<IdRun*>(block + sizeof(Chunk));
  char* own_text = bytes ? block + sizeof(Chunk) + runs * sizeof(IdRun) : nullptr;
  return new (block) Chunk(own_runs, runs, own_text, bytes);
}

void PlainSeq::free_chunk(Chunk* c) {
  c->~Chunk();
  ::operator delete(static_cast<void*>(c));
}

PlainSeq::Chunk* PlainSeq::new_chunk() {
  Chunk* c = nullptr;
  if (spare_.empty()) {
    c = alloc_chunk(kOwnRuns, is_text_ ? chunk_max() + 32 : 0);
  } else {
    c = spare_.back();
    spare_.pop_back();
  }
  // (No-ops but for a spare that came from a snapshot's exact-size chunks.)
  if (is_text_)
    c->text.reserve(chunk_max() + 32);
  else
    c->values.reserve(chunk_max() + 8);
  c->runs.reserve(kOwnRuns);
  return c;
}

void PlainSeq::drop_chunk(Chunk* c) {
  // A chunk that grew far past a full one (a large paste before its split)
  // is not kept: spares hold about one chunk's room.
  const size_t room = is_text_ ? c->text.capacity() : c->values.capacity();
  if (spare_.size() >= kMaxSpare || room > 2 * chunk_max() || c->runs.capacity() > 2 * kMaxRuns) {
    free_chunk(c);
    return;
  }
  c->text.clear();
  c->values.clear();
  c->runs.clear();
  c->n = c->u16 = c->u8 = 0;
  spare_.push_back(c);
}

size_t PlainSeq::offset_of(const Chunk& c, size_t off) const {
  if (c.u8 == c.n) return off;  // a List, or all-ASCII text
  if (off * 2 <= c.n) return byte_offset_of_unicode_unchecked(c.text, off);
  // Nearer the end: step back over the last n - off characters.
  size_t i = c.u8;
  for (size_t k = c.n - off; k > 0; --k) {
    do {
      --i;
    } while (is_continuation_byte(c.text[i]));
  }
  return i;
}

void PlainSeq::clear() {
  forget_hints();
  for (Chunk* c : chunks_) free_chunk(c);
  chunks_.clear();
  for (Chunk* c : spare_) free_chunk(c);
  spare_.clear();
  cache_ = Prefix();
  total_n_ = total_u16_ = total_u8_ = 0;
}

void PlainSeq::seek(int kind, size_t n) const {
  Prefix& p = cache_;
  if (p.ci > chunks_.size()) p = Prefix();
  // Two cursors: start from the other one when it is nearer (it becomes the
  // cache, the cache the other one), else walk from here and, after a long
  // move, leave the other cursor here.
  const auto distance = [&](const Prefix& q) {
    const size_t at = prefix_count(q, kind);
    return at > n ? at - n : n - at;
  };
  const Prefix from = p;
  const bool swap = alt_.ci <= chunks_.size() && distance(alt_) < distance(p);
  if (swap) {
    std::swap(p, alt_);
    std::swap(hint_chunk_, alt_hint_chunk_);
    std::swap(hint_, alt_hint_);
    std::swap(hint_end_, alt_hint_end_);
  }
  while (p.ci > 0 && prefix_count(p, kind) >= n) {
    const Chunk& c = *chunks_[--p.ci];
    p.n -= c.n;
    p.u16 -= c.u16;
    p.u8 -= c.u8;
  }
  while (p.ci < chunks_.size() && prefix_count(p, kind) + chunk_count(*chunks_[p.ci], kind) < n) {
    const Chunk& c = *chunks_[p.ci++];
    p.n += c.n;
    p.u16 += c.u16;
    p.u8 += c.u8;
  }
  if (!swap && (p.ci > from.ci + 1 || p.ci + 1 < from.ci)) {
    alt_ = from;
    alt_hint_chunk_ = hint_chunk_;
    alt_hint_ = hint_;
    alt_hint_end_ = hint_end_;
    hint_chunk_ = nullptr;
  }
}

inline PlainSeq::Chunk& PlainSeq::chunk_for_insert(uint32_t pos, size_t* off) {
  if (chunks_.empty()) chunks_.push_back(new_chunk());
  if (pos == 0) {
    cache_ = Prefix();
    *off = 0;
  } else {
    seek_unit(pos);
    *off = pos - cache_.n;
  }
  return *chunks_[cache_.ci];
}

Status PlainSeq::insert(uint32_t peer, int32_t counter, uint32_t pos, const uint32_t* contents,
                        size_t n) {
  if (pos > total_n_) return past_the_end(pos, total_n_);
  if (n == 0) return Status();
  size_t off = 0;
  if (!is_text_) {
    chunk_for_insert(pos, &off);
    insert_at(cache_.ci, off, peer, counter, nullptr, 0, contents, n, n);
    return Status();
  }
  uint32_t high = 0;
  for (size_t k = 0; k < n; ++k) high |= contents[k];
  chunk_for_insert(pos, &off);
  if (high < 0x80 && n <= 64) {  // typing: a few ASCII characters
    char bytes[64];
    for (size_t k = 0; k < n; ++k) bytes[k] = static_cast<char>(contents[k]);
    insert_at(cache_.ci, off, peer, counter, bytes, n, nullptr, n, n);
    return Status();
  }
  std::string utf8;
  utf8.reserve(high < 0x80 ? n : 4 * n);
  size_t u16 = n;
  for (size_t k = 0; k < n; ++k) {
    append_utf8(utf8, static_cast<char32_t>(contents[k]));
    u16 += contents[k] > 0xFFFF;
  }
  insert_at(cache_.ci, off, peer, counter, utf8.data(), utf8.size(), nullptr, n, u16);
  return Status();
}

Status PlainSeq::insert_utf8(uint32_t peer, int32_t counter, uint32_t pos, std::string_view utf8,
                             size_t n) {
  if (pos > total_n_) return past_the_end(pos, total_n_);
  if (n == 0) return Status();
  size_t u16 = n;
  if (utf8.size() != n) {  // not ASCII: 4-byte sequences take two UTF-16 units
    size_t astral = 0;
    count_units(utf8.data(), utf8.size(), &astral);
    u16 += astral;
  }
  size_t off = 0;
  chunk_for_insert(pos, &off);
  insert_at(cache_.ci, off, peer, counter, utf8.data(), utf8.size(), nullptr, n, u16);
  return Status();
}

[[gnu::always_inline]] inline void PlainSeq::insert_at(uint32_t ci, size_t off, uint32_t peer,
                                                       int32_t counter, const char* bytes, size_t m,
                                                       const uint32_t* values, size_t n,
                                                       size_t u16) {
  Chunk& c = *chunks_[ci];
  const size_t u8 = is_text_ ? m : n;
  if (u8 > chunk_max() / 2 && c.u8 + u8 > chunk_max()) {
    insert_bulk(ci, off, peer, counter, bytes, m, values, n, u16);
    return;
  }
  if (is_text_)
    c.text.insert(offset_of(c, off), bytes, m);
  else
    c.values.insert(c.values.begin() + static_cast<ptrdiff_t>(off), values, values + n);
  if (ids_known_) [[likely]] {
    // Typing on after the last edit: its run is known, extend it in place.
    IdRun* last = &c == hint_chunk_ && off == hint_end_ ? &c.runs[hint_.run] : nullptr;
    if (last && last->peer == peer && last->counter + static_cast<int32_t>(last->len) == counter) {
      last->len += static_cast<uint32_t>(n);
    } else {
      hint_ = insert_ids(c.runs, c.n, off, &c == hint_chunk_ ? hint_ : RunPos{}, peer, counter,
                         static_cast<uint32_t>(n));
    }
    hint_at(&c);
    hint_end_ = off + n;  // the new units end run hint_.run
  } else {
    placeholder_run(c, c.n + static_cast<uint32_t>(n));
  }
  c.n += static_cast<uint32_t>(n);
  c.u16 += static_cast<uint32_t>(u16);
  c.u8 += static_cast<uint32_t>(u8);
  alt_counts(ci, n, u16, u8);
  total_n_ += n;
  total_u16_ += u16;
  total_u8_ += u8;
  // The cached prefix covers chunks before ci, which a split leaves alone.
  if (c.u8 > chunk_max()) {
    split(ci);
  } else if (c.runs.size() > kMaxRuns) {
    split_runs(ci);
  }
}

Status PlainSeq::erase(uint32_t pos, uint32_t n) {
  if (size_t{pos} + n > total_n_) {
    return out_of_range("delete range [" + std::to_string(pos) + ", " +
                        std::to_string(size_t{pos} + n) + ") is past the end (" +
                        std::to_string(total_n_) + ")");
  }
  if (n == 0) return Status();
  seek_unit(size_t{pos} + 1);
  if (n == 1 && is_text_) {
    Chunk& c = *chunks_[cache_.ci];
    if (c.u8 == c.n && c.n > 1) {
      erase_one_ascii(c, pos - cache_.n);
      return Status();
    }
  }
  // The hint moves to the chunks edited here (never to a dropped one, whose
  // address may come back). (After the seek, which may swap it with the
  // other cursor's.)
  const Chunk* hinted = hint_chunk_;
  hint_chunk_ = nullptr;
  // Only chunks at or after cache_.ci change, so the cached prefix stays valid.
  const uint32_t ci = cache_.ci;
  size_t off = pos - cache_.n;
  size_t left = n;
  uint32_t drop_from = 0, drop_to = 0;  // whole chunks to drop: [drop_from, drop_to)
  for (uint32_t j = ci; left > 0; ++j) {
    Chunk& c = *chunks_[j];
    const size_t take = std::min<size_t>(left, c.n - off);
    left -= take;
    if (take == c.n) {
      if (drop_to != j) drop_from = j;
      drop_to = j + 1;
      total_n_ -= c.n;
      total_u16_ -= c.u16;
      total_u8_ -= c.u8;
      continue;
    }
    size_t u16 = take, u8 = take;
    if (!is_text_) {
      c.values.erase(c.values.begin() + static_cast<ptrdiff_t>(off),
                     c.values.begin() + static_cast<ptrdiff_t>(off + take));
    } else {
      size_t from = off;
      if (c.u8 != c.n) {  // not all ASCII: find the bytes of units [off, off + take)
        from = offset_of(c, off);
        u8 = offset_of(c, off + take) - from;
        for (size_t k = from; k < from + u8; ++k)
          u16 += static_cast<unsigned char>(c.text[k]) >= 0xF0;
      }
      c.text.erase(from, u8);
    }
    if (ids_known_) [[likely]] {
      hint_ = erase_ids(c.runs, c.n, off, take, &c == hinted ? hint_ : RunPos{});
      hint_at(&c);
      hint_end_ = SIZE_MAX;  // no run known to end at a given unit
    } else {
      placeholder_run(c, c.n - static_cast<uint32_t>(take));
    }
    c.n -= static_cast<uint32_t>(take);
    c.u16 -= static_cast<uint32_t>(u16);
    c.u8 -= static_cast<uint32_t>(u8);
    alt_counts(j, 0 - take, 0 - u16, 0 - u8);
    total_n_ -= take;
    total_u16_ -= u16;
    total_u8_ -= u8;
    off = 0;
  }
  if (drop_to > drop_from) {
    const Chunk* kept = hint_chunk_;
    forget_hints();
    hint_chunk_ = kept;  // (never a dropped chunk: see above)
    for (uint32_t j = drop_from; j < drop_to; ++j) drop_chunk(chunks_[j]);
    chunks_.erase(chunks_.begin() + drop_from, chunks_.begin() + drop_to);
  }
  if (ci < chunks_.size()) rebalance_after_erase(ci);
  return Status();
}

inline void PlainSeq::rebalance_after_erase(uint32_t ci) {
  // Keep chunks from fragmenting: the edited chunk absorbs its successor
  // when both together fill at most half a chunk. (Its own size first: the
  // successor's block is only read when the merge is possible.)
  const Chunk& c = *chunks_[ci];
  if (c.u8 <= chunk_max() / 2 && ci + 1 < chunks_.size() &&
      c.u8 + chunks_[ci + 1]->u8 <= chunk_max() / 2 &&
      c.runs.size() + chunks_[ci + 1]->runs.size() <= kMaxRuns) {
    merge_next(ci);
  } else if (c.runs.size() > kMaxRuns) {
    split_runs(ci);  // an erase inside a run cut it in two
  }
}

void PlainSeq::erase_one_ascii(Chunk& c, size_t off) {
  const uint32_t ci = cache_.ci;
  c.text.erase(off, 1);
  if (!ids_known_) [[unlikely]] {
    --c.n, --c.u16, --c.u8;
    placeholder_run(c, c.n);
    alt_counts(ci, 0 - size_t{1}, 0 - size_t{1}, 0 - size_t{1});
    --total_n_, --total_u16_, --total_u8_;
    rebalance_after_erase(ci);
    return;
  }
  // erase_ids for one unit, whose cases are few: its run goes (and the runs
  // around it may join), loses its first or last unit, or splits in two.
  // (A shortened run never joins a neighbour: that would take the erased id.)
  size_t start = 0;
  const size_t r = find_run(c.runs, c.n, off, &c == hint_chunk_ ? hint_ : RunPos{}, &start);
  IdRun& run = c.runs[r];
  RunPos at{r, start};
  if (run.len == 1) {
    c.runs.erase(&run);
    if (r > 0 && r < c.runs.size()) {
      IdRun& a = c.runs[r - 1];
      const IdRun& b = c.runs[r];
      if (a.peer == b.peer && a.counter + static_cast<int32_t>(a.len) == b.counter) {
        at = RunPos{r - 1, start - a.len};
        a.len += b.len;
        c.runs.erase(&c.runs[r]);
      }
    }
  } else if (off == start) {
    ++run.counter;
    --run.len;
  } else if (off + 1 == start + run.len) {
    --run.len;
  } else {
    const auto left = static_cast<uint32_t>(off - start);
    const IdRun right{run.peer, run.counter + static_cast<int32_t>(left) + 1, run.len - left - 1};
    run.len = left;
    c.runs.insert(c.runs.begin() + r + 1, right);
  }
  hint_at(&c);
  hint_ = at;
  hint_end_ = SIZE_MAX;
  --c.n, --c.u16, --c.u8;
  alt_counts(ci, 0 - size_t{1}, 0 - size_t{1}, 0 - size_t{1});
  --total_n_, --total_u16_, --total_u8_;
  rebalance_after_erase(ci);
}

void PlainSeq::set_ids_unknown() {
  ids_known_ = false;
  forget_hints();
  for (Chunk* c : chunks_) placeholder_run(*c, c->n);
}

void PlainSeq::set_ids(const std::vector<Seq::Run>& runs) {
#ifndef NDEBUG
  size_t sum = 0;
  for (const Seq::Run& r : runs) sum += r.len;
  WEFT_DCHECK(sum == visible_units());
#endif
  forget_hints();
  ids_known_ = true;
  size_t r = 0, used = 0;  // runs[r] has `used` units given out
  for (Chunk* c : chunks_) {
    c->runs.clear();
    for (size_t left = c->n; left > 0;) {
      const Seq::Run& run = runs[r];
      const size_t take = std::min<size_t>(left, run.len - used);
      c->runs.push_back(
          IdRun{run.peer, run.counter + static_cast<int32_t>(used), static_cast<uint32_t>(take)});
      used += take;
      left -= take;
      if (used == run.len) ++r, used = 0;
    }
  }
  for (uint32_t ci = 0; ci < chunks_.size(); ++ci) {
    while (chunks_[ci]->runs.size() > kMaxRuns) split_runs(ci);
  }
}

void PlainSeq::assign_utf8(std::string_view utf8) {
  clear();
  ids_known_ = false;
  const size_t piece = chunk_max() / 2;
  chunks_.reserve(utf8.size() / piece + 1);
  for (size_t i = 0; i < utf8.size();) {
    size_t end = std::min(utf8.size(), i + piece);
    while (end < utf8.size() && is_continuation_byte(utf8[end])) ++end;
    Chunk* c = alloc_chunk(1, end - i);  // exact: edits make room when they come
    c->text.assign(utf8.substr(i, end - i));
    size_t astral = 0;
    const size_t n = count_units(c->text.data(), c->text.size(), &astral);
    c->runs.push_back(IdRun{kNone, 0, static_cast<uint32_t>(n)});  // ids unknown
    c->n = static_cast<uint32_t>(n);
    c->u16 = static_cast<uint32_t>(n + astral);
    c->u8 = static_cast<uint32_t>(end - i);
    total_n_ += c->n;
    total_u16_ += c->u16;
    total_u8_ += c->u8;
    chunks_.push_back(c);
    i = end;
  }
}

size_t PlainSeq::id_at(size_t pos, uint32_t* peer, int32_t* counter) const {
  seek_unit(pos + 1);
  const Chunk& c = *chunks_[cache_.ci];
  const size_t off = pos - cache_.n;
  size_t start = 0;
  const size_t r = find_run(c.runs, c.n, off, &c == hint_chunk_ ? hint_ : RunPos{}, &start);
  // Remember the run: an erase at `pos` usually follows.
  if (&c != hint_chunk_ || r != hint_.run) hint_end_ = SIZE_MAX;
  hint_at(&c);
  hint_ = RunPos{r, start};
  const IdRun& run = c.runs[r];
  *peer = run.peer;
  *counter = run.counter + static_cast<int32_t>(off - start);
  return run.len - (off - start);
}

void PlainSeq::append_run(ChunkVec<IdRun>& runs, const IdRun& r) {
  if (!runs.empty()) {
    IdRun& last = runs.back();
    if (last.peer == r.peer && last.counter + static_cast<int32_t>(last.len) == r.counter) {
      last.len += r.len;
      return;
    }
  }
  runs.push_back(r);
}

inline PlainSeq::RunPos PlainSeq::insert_ids(ChunkVec<IdRun>& runs, size_t chunk_units, size_t off,
                                             RunPos hint, uint32_t peer, int32_t counter,
                                             uint32_t n) {
  size_t start = 0;
  const size_t r = find_run(runs, chunk_units, off, hint, &start);
  if (off == start) {
    // Typing on: the new units continue the run just before them.
    if (r > 0) {
      IdRun& prev = runs[r - 1];
      if (prev.peer == peer && prev.counter + static_cast<int32_t>(prev.len) == counter) {
        prev.len += n;
        return RunPos{r - 1, off + n - prev.len};
      }
    }
    runs.insert(runs.begin() + r, IdRun{peer, counter, n});
    return RunPos{r, off};
  }
  // Inside run r: split it around the new units.
  IdRun& cur = runs[r];
  const auto left = static_cast<uint32_t>(off - start);
  const IdRun right{cur.peer, cur.counter + static_cast<int32_t>(left), cur.len - left};
  cur.len = left;
  const IdRun mid{peer, counter, n};
  runs.insert(runs.begin() + r + 1, {mid, right});
  return RunPos{r + 1, off};
}

inline PlainSeq::RunPos PlainSeq::erase_ids(ChunkVec<IdRun>& runs, size_t chunk_units, size_t off,
                                            size_t n, RunPos hint) {
  size_t start = 0;
  size_t r = find_run(runs, chunk_units, off, hint, &start);
  // runs[r] still begins at `start` afterwards unless it is merged away below.
  const RunPos found{r, start};
  const size_t end = off + n;
  if (off > start) {
    IdRun& cur = runs[r];
    const size_t cur_end = start + cur.len;
    const auto left = static_cast<uint32_t>(off - start);
    if (end < cur_end) {  // strictly inside: the run splits in two
      const IdRun right{cur.peer, cur.counter + static_cast<int32_t>(end - start),
                        static_cast<uint32_t>(cur_end - end)};
      cur.len = left;
      runs.insert(runs.begin() + r + 1, right);
      return found;
    }
    cur.len = left;  // its tail goes
    start = cur_end;
    ++r;
  }
  // Units [start, end) begin at run r: drop whole runs, then trim the next.
  const size_t first = r;
  size_t left = end - start;
  while (r < runs.size() && runs[r].len <= left) left -= runs[r++].len;
  if (left > 0) {
    runs[r].counter += static_cast<int32_t>(left);
    runs[r].len -= static_cast<uint32_t>(left);
  }
  if (r > first) runs.erase(runs.begin() + first, runs.begin() + r);  // (most erases drop none)
  // Deleting what was typed into a run makes its two halves adjacent again.
  if (first > 0 && first < runs.size()) {
    IdRun& a = runs[first - 1];
    const IdRun& b = runs[first];
    if (a.peer == b.peer && a.counter + static_cast<int32_t>(a.len) == b.counter) {
      const RunPos merged{first - 1, off - a.len};  // a ends where the erased units were
      a.len += b.len;
      runs.erase(runs.begin() + first);
      return merged;
    }
  }
  return found;
}

}  // namespace weft::crdt::detail

// The plain state's chunk splits and merges (see plain_state.h;
// plain_state.cc keeps the positional edits): a big insert placed in new
// chunks, an oversize chunk cut in pieces, a chunk of too many id runs cut
// at its middle run, and a small chunk absorbing its successor.
#include <algorithm>

#include "crdt/plain_state.h"

namespace weft::crdt::detail {

PlainSeq::Chunk* PlainSeq::move_tail(Chunk& c, size_t off) {
  const size_t at = offset_of(c, off);  // byte (Text) or value (List) offset
  Chunk* t = new_chunk();
  t->n = static_cast<uint32_t>(c.n - off);
  t->u8 = static_cast<uint32_t>(c.u8 - at);
  t->u16 = t->n;
  if (is_text_) {
    t->text.assign(std::string_view(c.text).substr(at));
    if (t->u8 != t->n) {
      size_t astral = 0;
      count_units(t->text.data(), t->text.size(), &astral);
      t->u16 += static_cast<uint32_t>(astral);
    }
    c.text.truncate(at);
  } else {
    t->values.assign(c.values.begin() + static_cast<ptrdiff_t>(at), c.values.end());
    c.values.resize(at);
  }
  c.n -= t->n;
  c.u16 -= t->u16;
  c.u8 -= t->u8;
  return t;
}

void PlainSeq::insert_bulk(uint32_t ci, size_t off, uint32_t peer, int32_t counter,
                           const char* bytes, size_t m, const uint32_t* values, size_t n,
                           size_t u16) {
  forget_hints();
  Chunk& c = *chunks_[ci];
  const size_t old_count = chunks_.size();
  // The units after `off` move to a chunk of their own (appended to chunks_
  // here, rotated into place at the end like the source's chunks).
  Chunk* tail = nullptr;
  if (off < c.n) {
    size_t start = 0;
    const size_t r = find_run(c.runs, c.n, off, RunPos{}, &start);
    tail = move_tail(c, off);
    size_t keep = r;
    if (off > start) {  // run r splits at `off`
      const IdRun& cur = c.runs[r];
      tail->runs.push_back(IdRun{cur.peer, cur.counter + static_cast<int32_t>(off - start),
                                 static_cast<uint32_t>(cur.len - (off - start))});
      c.runs[r].len = static_cast<uint32_t>(off - start);
      keep = r + 1;
      tail->runs.insert(tail->runs.end(), c.runs.begin() + static_cast<ptrdiff_t>(r + 1),
                        c.runs.end());
    } else {
      tail->runs.assign(c.runs.begin() + static_cast<ptrdiff_t>(r), c.runs.end());
    }
    c.runs.resize(keep);
  }
  // The source in pieces: `ci` up to half a chunk first, then new chunks of
  // equal size (half a chunk to a chunk, as split makes them).
  const size_t piece = chunk_max() / 2;
  const size_t size = is_text_ ? m : n;
  const bool one_per_unit = size == n;  // a List, or ASCII text
  size_t a = 0;                         // source bytes (Text) or values (List) placed
  size_t units_done = 0;
  size_t each = 0;  // the new chunks' size, once `ci` is filled
  for (Chunk* t = &c; a < size; t = nullptr) {
    if (t == nullptr && each == 0) {
      const size_t count = std::max<size_t>(1, (size - a) / piece);
      each = (size - a + count - 1) / count;
    }
    const size_t room = t == nullptr ? each : c.u8 < piece ? piece - c.u8 : 0;
    if (room == 0) continue;
    size_t b = std::min(size, a + room);
    if (!one_per_unit) {
      while (b < size && is_continuation_byte(bytes[b])) ++b;
    }
    size_t astral = 0;
    const size_t units = one_per_unit ? b - a : count_units(bytes + a, b - a, &astral);
    if (t == nullptr) {
      t = new_chunk();
      chunks_.push_back(t);
    }
    if (is_text_)
      t->text.append(std::string_view(bytes + a, b - a));
    else
      t->values.insert(t->values.end(), values + a, values + b);
    append_run(t->runs, IdRun{peer, counter + static_cast<int32_t>(units_done),
                              static_cast<uint32_t>(units)});
    t->n += static_cast<uint32_t>(units);
    t->u16 += static_cast<uint32_t>(units + astral);
    t->u8 += static_cast<uint32_t>(b - a);
    units_done += units;
    a = b;
  }
  if (tail != nullptr) chunks_.push_back(tail);
  std::rotate(chunks_.begin() + ci + 1, chunks_.begin() + static_cast<ptrdiff_t>(old_count),
              chunks_.end());
  total_n_ += n;
  total_u16_ += u16;
  total_u8_ += size;
  if (!ids_known_) {  // the runs placed above are placeholders: one per chunk
    for (size_t j = ci; j < ci + 1 + (chunks_.size() - old_count); ++j)
      placeholder_run(*chunks_[j], chunks_[j]->n);
    return;
  }
  if (c.runs.size() > kMaxRuns) split_runs(ci);
}

void PlainSeq::split_runs(uint32_t ci) {
  forget_hints();
  Chunk& c = *chunks_[ci];
  const size_t mid = c.runs.size() / 2;
  size_t units = 0;
  for (size_t r = 0; r < mid; ++r) units += c.runs[r].len;
  Chunk* t = move_tail(c, units);
  t->runs.assign(c.runs.begin() + static_cast<ptrdiff_t>(mid), c.runs.end());
  c.runs.resize(mid);
  c.runs.shrink_to_own();
  chunks_.insert(chunks_.begin() + ci + 1, t);
}

void PlainSeq::split(uint32_t ci) {
  forget_hints();
  Chunk& c = *chunks_[ci];
  const size_t size = c.u8;  // bytes of a Text, units of a List (> chunk_max())
  // Equal pieces of at least half a chunk: a chunk one byte over full makes
  // two halves, not two halves and a one-byte chunk that the next erase
  // nearby merges away again.
  const size_t count = std::max<size_t>(2, size / (chunk_max() / 2));
  const size_t piece = (size + count - 1) / count;
  const bool one_per_unit = c.u8 == c.n;  // a List, or ASCII text
  auto next_cut = [&](size_t a) {
    size_t b = std::min(size, a + piece);
    if (!one_per_unit) {
      while (b < size && is_continuation_byte(c.text[b])) ++b;
    }
    return b;
  };
  auto units_of = [&](size_t a, size_t b, size_t* astral) {
    *astral = 0;
    return one_per_unit ? b - a : count_units(c.text.data() + a, b - a, astral);
  };
  // The first piece stays in c; find the run where the second begins.
  const size_t first = next_cut(0);  // < size: c is over 2 * piece
  size_t astral0 = 0;
  const size_t units0 = units_of(0, first, &astral0);
  size_t r = 0, ro = units0;
  while (ro >= c.runs[r].len) ro -= c.runs[r++].len;
  const size_t keep_runs = r + (ro > 0 ? 1 : 0);
  const uint32_t keep_len = static_cast<uint32_t>(ro);
  std::vector<Chunk*> pieces;
  for (size_t a = first; a < size;) {
    const size_t b = next_cut(a);
    Chunk* t = new_chunk();
    size_t astral = 0;
    const size_t units = units_of(a, b, &astral);
    if (is_text_) {
      t->text.assign(std::string_view(c.text).substr(a, b - a));
    } else {
      t->values.assign(c.values.begin() + static_cast<ptrdiff_t>(a),
                       c.values.begin() + static_cast<ptrdiff_t>(b));
    }
    t->n = static_cast<uint32_t>(units);
    t->u16 = static_cast<uint32_t>(units + astral);
    t->u8 = static_cast<uint32_t>(b - a);
    for (size_t need = units; need > 0;) {  // hand out the next `units` ids
      const IdRun& run = c.runs[r];
      const size_t take = std::min<size_t>(need, run.len - ro);
      t->runs.push_back(
          IdRun{run.peer, run.counter + static_cast<int32_t>(ro), static_cast<uint32_t>(take)});
      need -= take;
      ro += take;
      if (ro == run.len) {
        ++r;
        ro = 0;
      }
    }
    pieces.push_back(t);
    a = b;
  }
  c.runs.resize(keep_runs);
  c.runs.shrink_to_own();
  if (keep_len > 0) c.runs.back().len = keep_len;
  if (is_text_) {
    c.text.truncate(first);
    c.text.shrink_to_fit();  // back into its own room when the paste overfilled it
  } else {
    c.values.resize(first);
    if (c.values.capacity() > 2 * chunk_max()) c.values.shrink_to_fit();
  }
  c.n = static_cast<uint32_t>(units0);
  c.u16 = static_cast<uint32_t>(units0 + astral0);
  c.u8 = static_cast<uint32_t>(first);
  chunks_.insert(chunks_.begin() + ci + 1, pieces.begin(), pieces.end());
}

void PlainSeq::merge_next(uint32_t ci) {
  forget_hints();
  Chunk& a = *chunks_[ci];
  Chunk* b = chunks_[ci + 1];
  if (is_text_)
    a.text.append(b->text);
  else
    a.values.insert(a.values.end(), b->values.begin(), b->values.end());
  if (ids_known_) {
    for (const IdRun& r : b->runs) append_run(a.runs, r);
  } else {
    placeholder_run(a, a.n + b->n);
  }
  a.n += b->n;
  a.u16 += b->u16;
  a.u8 += b->u8;
  chunks_.erase(chunks_.begin() + ci + 1);
  drop_chunk(b);
}

}  // namespace weft::crdt::detail

// The plain state of a Text or List container (see plain.h).
#include "crdt/plain.h"

#include <algorithm>

#include "crdt/op.h"
#include "weft/base/utf.h"

namespace weft::crdt::detail {
namespace {

// Chunks split above kChunkMax units into pieces of kChunkMax / 2: inserts
// move at most a few KiB, and a cursor walk skips a chunk per step.
constexpr size_t kChunkMax = 256;

}  // namespace

void PlainSeq::seek(int kind, size_t n) const {
  Prefix& p = cache_;
  if (p.ci > chunks_.size()) p = Prefix();
  while (p.ci > 0 && prefix_count(p, kind) >= n) {
    const Chunk& c = chunks_[--p.ci];
    p.n -= c.contents.size();
    p.u16 -= c.u16;
    p.u8 -= c.u8;
  }
  while (p.ci < chunks_.size() && prefix_count(p, kind) + chunk_count(chunks_[p.ci], kind) < n) {
    const Chunk& c = chunks_[p.ci++];
    p.n += c.contents.size();
    p.u16 += c.u16;
    p.u8 += c.u8;
  }
}

Status PlainSeq::insert(uint32_t peer, int32_t counter, uint32_t pos, const uint32_t* contents,
                        size_t n) {
  if (pos > total_n_) {
    return out_of_range("position " + std::to_string(pos) + " is past the end (" +
                        std::to_string(total_n_) + ")");
  }
  if (n == 0) return Status();
  if (chunks_.empty()) chunks_.emplace_back();
  size_t off = 0;
  if (pos == 0) {
    cache_ = Prefix();
  } else {
    seek(0, pos);
    off = pos - cache_.n;
  }
  const uint32_t ci = cache_.ci;
  Chunk& c = chunks_[ci];
  c.contents.insert(c.contents.begin() + off, contents, contents + n);
  insert_ids(c.runs, c.contents.size() - n, off, peer, counter, static_cast<uint32_t>(n));
  uint32_t high = 0;
  for (size_t k = 0; k < n; ++k) high |= contents[k];
  size_t u16 = n, u8 = n;  // ASCII (or list indexes below 0x80): one of each per unit
  if (high >= 0x80) {
    u16 = u8 = 0;
    for (size_t k = 0; k < n; ++k) {
      u16 += u16_of(contents[k]);
      u8 += u8_of(contents[k]);
    }
  }
  c.u16 += u16;
  c.u8 += u8;
  total_n_ += n;
  total_u16_ += u16;
  total_u8_ += u8;
  if (c.contents.size() <= kChunkMax) return Status();
  // Split: chunk ci keeps the first half, the rest becomes new chunks after
  // it (the cached prefix of [0, ci) stays valid).
  std::vector<Chunk> tail;
  const size_t piece = kChunkMax / 2;
  const size_t size = c.contents.size();
  for (size_t from = piece; from < size; from += piece) {
    const size_t to = std::min(size, from + piece);
    Chunk t;
    t.contents.assign(c.contents.begin() + from, c.contents.begin() + to);
    t.runs = slice_ids(c.runs, from, to);
    for (uint32_t content : t.contents) {
      t.u16 += u16_of(content);
      t.u8 += u8_of(content);
    }
    tail.push_back(std::move(t));
  }
  c.contents.resize(piece);
  c.contents.shrink_to_fit();
  c.runs = slice_ids(c.runs, 0, piece);
  for (const Chunk& t : tail) {
    c.u16 -= t.u16;
    c.u8 -= t.u8;
  }
  chunks_.insert(chunks_.begin() + ci + 1, std::make_move_iterator(tail.begin()),
                 std::make_move_iterator(tail.end()));
  return Status();
}

Status PlainSeq::erase(uint32_t pos, uint32_t n) {
  if (size_t{pos} + n > total_n_) {
    return out_of_range("delete range [" + std::to_string(pos) + ", " +
                        std::to_string(size_t{pos} + n) + ") is past the end (" +
                        std::to_string(total_n_) + ")");
  }
  if (n == 0) return Status();
  seek(0, size_t{pos} + 1);
  // Only chunks at or after cache_.ci change, so the cached prefix stays valid.
  uint32_t ci = cache_.ci;
  size_t off = pos - cache_.n;
  size_t left = n;
  while (left > 0) {
    Chunk& c = chunks_[ci];
    const size_t take = std::min(left, c.contents.size() - off);
    size_t u16 = 0, u8 = 0;
    for (size_t k = off; k < off + take; ++k) {
      u16 += u16_of(c.contents[k]);
      u8 += u8_of(c.contents[k]);
    }
    c.contents.erase(c.contents.begin() + off, c.contents.begin() + off + take);
    erase_ids(c.runs, off, take);
    c.u16 -= u16;
    c.u8 -= u8;
    total_n_ -= take;
    total_u16_ -= u16;
    total_u8_ -= u8;
    left -= take;
    if (c.contents.empty()) {
      chunks_.erase(chunks_.begin() + ci);  // the next chunk moves into slot ci
    } else if (left > 0) {
      ++ci;
    }
    off = 0;
  }
  return Status();
}

void PlainSeq::assign_utf8(std::string_view utf8) {
  chunks_.clear();
  cache_ = Prefix();
  total_n_ = total_u16_ = total_u8_ = 0;
  ids_known_ = false;
  const size_t piece = kChunkMax / 2;
  chunks_.reserve(utf8.size() / piece + 1);
  for (size_t i = 0; i < utf8.size();) {
    Chunk& c = chunks_.emplace_back();
    const size_t chunk_start = i;
    const size_t ascii_end = std::min(utf8.size(), i + piece);
    if (is_all_ascii(utf8.substr(i, ascii_end - i))) {
      // The common case: a piece of ASCII widens in one vectorisable loop.
      c.contents.resize(ascii_end - i);
      for (size_t k = 0; k < c.contents.size(); ++k)
        c.contents[k] = static_cast<unsigned char>(utf8[i + k]);
      i = ascii_end;
    } else {
      c.contents.reserve(piece);
    }
    while (i < utf8.size() && c.contents.size() < piece) {
      const auto byte = static_cast<unsigned char>(utf8[i]);
      uint32_t cp = byte;
      if (byte < 0x80) {
        ++i;
      } else {
        cp = static_cast<uint32_t>(decode_utf8_unchecked(utf8, i));
        if (cp > 0xFFFF) ++c.u16;  // the second UTF-16 unit; the first is counted below
      }
      c.contents.push_back(cp);
    }
    const auto n = static_cast<uint32_t>(c.contents.size());
    c.runs.push_back(IdRun{kNone, 0, n});  // ids unknown
    c.u16 += n;
    c.u8 = static_cast<uint32_t>(i - chunk_start);
    total_n_ += n;
    total_u16_ += c.u16;
    total_u8_ += c.u8;
  }
}

std::vector<uint32_t> PlainSeq::visible_contents() const {
  std::vector<uint32_t> out;
  out.reserve(total_n_);
  for (const Chunk& c : chunks_) out.insert(out.end(), c.contents.begin(), c.contents.end());
  return out;
}

std::string PlainSeq::to_utf8() const {
  std::string out;
  out.reserve(total_u8_);
  for (const Chunk& c : chunks_) {
    if (c.u8 == c.contents.size()) {  // all ASCII: one byte per unit
      const size_t at = out.size();
      out.resize(at + c.contents.size());
      for (size_t k = 0; k < c.contents.size(); ++k) out[at + k] = static_cast<char>(c.contents[k]);
      continue;
    }
    for (uint32_t content : c.contents) append_utf8(out, static_cast<char32_t>(content));
  }
  return out;
}

Result<Seq::Boundary> PlainSeq::locate(size_t n, int kind) const {
  Seq::Boundary b;
  if (n == 0) return b;
  const size_t total = kind == 0 ? total_n_ : kind == 1 ? total_u16_ : total_u8_;
  if (n > total) {
    return out_of_range("position " + std::to_string(n) + " is past the end (length " +
                        std::to_string(total) + ")");
  }
  seek(kind, n);
  if (cache_.ci >= chunks_.size()) return internal_error("plain sequence counts are inconsistent");
  b.units = cache_.n;
  b.u16 = cache_.u16;
  b.u8 = cache_.u8;
  const Chunk& c = chunks_[cache_.ci];
  if (c.u8 == c.contents.size()) {
    // One byte per unit (ASCII text, or a list): every count moves together.
    const size_t off = n - prefix_count(cache_, kind);
    b.units += off;
    b.u16 += off;
    b.u8 += off;
    b.entity = static_cast<uint32_t>(b.units);
    return b;
  }
  for (uint32_t content : c.contents) {
    ++b.units;
    b.u16 += u16_of(content);
    b.u8 += u8_of(content);
    const size_t cur = kind == 0 ? b.units : kind == 1 ? b.u16 : b.u8;
    if (cur == n) {
      b.entity = static_cast<uint32_t>(b.units);
      return b;
    }
    if (cur > n) {
      return invalid_argument("position " + std::to_string(n) + " falls inside a character");
    }
  }
  return internal_error("plain sequence counts are inconsistent");
}

size_t PlainSeq::id_at(size_t pos, uint32_t* peer, int32_t* counter) const {
  seek(0, pos + 1);
  size_t off = pos - cache_.n;
  for (const IdRun& r : chunks_[cache_.ci].runs) {
    if (off < r.len) {
      *peer = r.peer;
      *counter = r.counter + static_cast<int32_t>(off);
      return r.len - off;
    }
    off -= r.len;
  }
  return 0;  // unreachable when pos < visible_units()
}

std::vector<Seq::Run> PlainSeq::unit_runs(size_t from, size_t to) const {
  std::vector<Seq::Run> runs;
  to = std::min(to, total_n_);
  if (from >= to) return runs;
  seek(0, from + 1);
  size_t unit = cache_.n;  // first unit of the run being looked at
  for (size_t ci = cache_.ci; ci < chunks_.size() && unit < to; ++ci) {
    for (const IdRun& r : chunks_[ci].runs) {
      const size_t end = unit + r.len;
      if (end > from && unit < to) {
        const size_t lo = std::max(unit, from), hi = std::min(end, to);
        const int32_t counter = r.counter + static_cast<int32_t>(lo - unit);
        Seq::Run* last = runs.empty() ? nullptr : &runs.back();
        if (last && last->peer == r.peer && last->counter + int32_t(last->len) == counter) {
          last->len += static_cast<uint32_t>(hi - lo);
        } else {
          runs.push_back(
              Seq::Run{static_cast<uint32_t>(lo), static_cast<uint32_t>(hi - lo), r.peer, counter});
        }
      }
      unit = end;
      if (unit >= to) break;
    }
  }
  return runs;
}

void PlainSeq::insert_ids(std::vector<IdRun>& runs, size_t chunk_units, size_t off, uint32_t peer,
                          int32_t counter, uint32_t n) {
  // Find run r holding unit `off` (r == runs.size() at the end), scanning
  // from the nearer end of the chunk.
  size_t r = 0, start = 0;
  if (off * 2 <= chunk_units) {
    while (r < runs.size() && off >= start + runs[r].len) start += runs[r++].len;
  } else {
    r = runs.size();
    start = chunk_units;
    while (start > off) start -= runs[--r].len;
  }
  if (off == start) {
    // Typing on: the new units continue the run just before them.
    if (r > 0) {
      IdRun& prev = runs[r - 1];
      if (prev.peer == peer && prev.counter + static_cast<int32_t>(prev.len) == counter) {
        prev.len += n;
        return;
      }
    }
    runs.insert(runs.begin() + r, IdRun{peer, counter, n});
    return;
  }
  // Inside run r: split it around the new units.
  IdRun& cur = runs[r];
  const auto left = static_cast<uint32_t>(off - start);
  const IdRun right{cur.peer, cur.counter + static_cast<int32_t>(left), cur.len - left};
  cur.len = left;
  const IdRun mid{peer, counter, n};
  runs.insert(runs.begin() + r + 1, {mid, right});
}

void PlainSeq::erase_ids(std::vector<IdRun>& runs, size_t off, size_t n) {
  size_t r = 0, start = 0;
  while (off >= start + runs[r].len) start += runs[r++].len;
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
      return;
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
  runs.erase(runs.begin() + first, runs.begin() + r);
  // Deleting what was typed into a run makes its two halves adjacent again.
  if (first > 0 && first < runs.size()) {
    IdRun& a = runs[first - 1];
    const IdRun& b = runs[first];
    if (a.peer == b.peer && a.counter + static_cast<int32_t>(a.len) == b.counter) {
      a.len += b.len;
      runs.erase(runs.begin() + first);
    }
  }
}

std::vector<PlainSeq::IdRun> PlainSeq::slice_ids(const std::vector<IdRun>& runs, size_t from,
                                                 size_t to) {
  std::vector<IdRun> out;
  size_t unit = 0;
  for (const IdRun& r : runs) {
    const size_t end = unit + r.len;
    if (end > from && unit < to) {
      const size_t lo = std::max(unit, from), hi = std::min(end, to);
      out.push_back(IdRun{r.peer, r.counter + static_cast<int32_t>(lo - unit),
                          static_cast<uint32_t>(hi - lo)});
    }
    unit = end;
    if (unit >= to) break;
  }
  return out;
}

}  // namespace weft::crdt::detail

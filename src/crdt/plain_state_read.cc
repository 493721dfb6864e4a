// The plain state's read side (see plain_state.h): its contents, id
// runs and position conversions (plain_state.cc keeps the edits).
#include <algorithm>

#include "crdt/plain_state.h"
#include "weft/base/utf.h"

namespace weft::crdt::detail {

std::vector<uint32_t> PlainSeq::visible_contents() const {
  std::vector<uint32_t> out;
  out.reserve(total_n_);
  for (const Chunk* c : chunks_) {
    if (!is_text_) {
      out.insert(out.end(), c->values.begin(), c->values.end());
      continue;
    }
    for (size_t i = 0; i < c->text.size();)
      out.push_back(static_cast<uint32_t>(decode_utf8_unchecked(c->text, i)));
  }
  return out;
}

std::string PlainSeq::to_utf8() const {
  std::string out;
  if (!is_text_) {
    for (uint32_t v : visible_contents()) append_utf8(out, static_cast<char32_t>(v));
    return out;
  }
  out.reserve(total_u8_);
  for (const Chunk* c : chunks_) out += c->text;
  return out;
}

void PlainSeq::unit_runs(size_t from, size_t to, std::vector<Seq::Run>& runs) const {
  runs.clear();
  to = std::min(to, total_n_);
  if (from >= to) return;
  runs.reserve(8);  // one allocation for the usual few runs, not 1, 2, 4, 8
  seek_unit(from + 1);
  // The first chunk's runs are searched from the nearest known boundary.
  const Chunk& first = *chunks_[cache_.ci];
  size_t start = 0;
  size_t r = find_run(first.runs, first.n, from - cache_.n,
                      &first == hint_chunk_ ? hint_ : RunPos{}, &start);
  size_t unit = cache_.n + start;  // first unit of the run being looked at
  for (size_t ci = cache_.ci; ci < chunks_.size() && unit < to; ++ci, r = 0) {
    const ChunkVec<IdRun>& cr = chunks_[ci]->runs;
    for (; r < cr.size(); ++r) {
      const IdRun& run = cr[r];
      const size_t end = unit + run.len;
      const size_t lo = std::max(unit, from), hi = std::min(end, to);
      const int32_t counter = run.counter + static_cast<int32_t>(lo - unit);
      Seq::Run* last = runs.empty() ? nullptr : &runs.back();
      if (last && last->peer == run.peer && last->counter + int32_t(last->len) == counter) {
        last->len += static_cast<uint32_t>(hi - lo);
      } else {
        runs.push_back(
            Seq::Run{static_cast<uint32_t>(lo), static_cast<uint32_t>(hi - lo), run.peer, counter});
      }
      unit = end;
      if (unit >= to) break;
    }
  }
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
  const Chunk& c = *chunks_[cache_.ci];
  if (c.u8 == c.n) {
    // One byte per unit (ASCII text, or a list): every count moves together.
    const size_t off = n - prefix_count(cache_, kind);
    b.units += off;
    b.u16 += off;
    b.u8 += off;
    b.entity = static_cast<uint32_t>(b.units);
    return b;
  }
  for (size_t i = 0; i < c.text.size();) {
    const size_t len = utf8_sequence_length(static_cast<unsigned char>(c.text[i]));
    i += len;
    ++b.units;
    b.u16 += len == 4 ? 2 : 1;
    b.u8 += len;
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

std::string PlainSeq::check_structure() const {
  size_t n = 0, u16 = 0, u8 = 0;
  for (size_t ci = 0; ci < chunks_.size(); ++ci) {
    const Chunk& c = *chunks_[ci];
    const std::string where = "chunk " + std::to_string(ci) + ": ";
    if (c.n == 0 && chunks_.size() > 1) return where + "empty";
    size_t astral = 0, units = c.n;
    if (is_text_) {
      if (c.text.size() != c.u8) return where + "u8 is not its byte count";
      units = count_units(c.text.data(), c.text.size(), &astral);
    } else if (c.values.size() != c.n || c.u8 != c.n) {
      return where + "value count is not n";
    }
    if (units != c.n) return where + "n is not its unit count";
    if (c.u16 != c.n + astral) return where + "u16 is not its UTF-16 count";
    size_t covered = 0;
    for (const IdRun& r : c.runs) {
      if (r.len == 0) return where + "an empty id run";
      covered += r.len;
    }
    if (covered != c.n)
      return where + "id runs cover " + std::to_string(covered) + " units of " +
             std::to_string(c.n);
    if (!ids_known_ && c.runs.size() > 1) return where + "more than one placeholder run";
    n += c.n, u16 += c.u16, u8 += c.u8;
  }
  if (n != total_n_ || u16 != total_u16_ || u8 != total_u8_) return "totals do not add up";
  return {};
}

}  // namespace weft::crdt::detail

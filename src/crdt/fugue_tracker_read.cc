// Seq's read-side queries (see fugue_tracker.h): unit boundaries, id runs of a range,
// element lookups for undo, and the visible contents. Kept apart from the
// integration and delete paths in fugue_tracker.cc.
#include <algorithm>

#include "crdt/fugue_tracker.h"
#include "weft/base/utf.h"

namespace weft::crdt::detail {

Result<Seq::Boundary> Seq::locate(size_t n, int kind) const {
  Boundary b;
  if (n == 0) return b;
  size_t total = kind == 0 ? total_chars_ : kind == 1 ? total_u16_ : total_u8_;
  if (n > total) {
    return out_of_range("position " + std::to_string(n) + " is past the end (length " +
                        std::to_string(total) + ")");
  }
  seek(kind, n);
  const size_t ci = cache_.ci;
  b.entity = static_cast<uint32_t>(cache_.vis);
  b.units = cache_.chars;
  b.u16 = cache_.u16;
  b.u8 = cache_.u8;
  if (ci >= chunks_.size()) return internal_error("sequence counts are inconsistent");
  for (uint32_t i : chunks_[ci]->items) {
    const Elem& e = arena_[i];
    if (e.del_peer != kNone) continue;
    ++b.entity;
    if (is_text_ && e.content >= kStartAnchor) continue;
    ++b.units;
    if (is_text_) {
      b.u16 += e.content > 0xFFFF ? 2 : 1;
      b.u8 += utf8_width(e.content);
    }
    size_t cur = kind == 0 ? b.units : kind == 1 ? b.u16 : b.u8;
    if (cur == n) return b;
    if (cur > n) {
      return invalid_argument("position " + std::to_string(n) + " falls inside a character");
    }
  }
  return internal_error("sequence counts are inconsistent");
}

std::vector<Seq::Run> Seq::unit_runs(size_t from, size_t to) const {
  std::vector<Run> runs;
  if (from >= to) return runs;
  seek(0, from + 1);
  uint32_t entity = static_cast<uint32_t>(cache_.vis);
  size_t units = cache_.chars;
  for (size_t ci = cache_.ci; ci < chunks_.size(); ++ci) {
    const Chunk& c = *chunks_[ci];
    if (units + c.chars <= from) {
      entity += c.vis;
      units += c.chars;
      continue;
    }
    for (uint32_t i : c.items) {
      const Elem& e = arena_[i];
      if (e.del_peer != kNone) continue;
      bool anchor = is_text_ && e.content >= kStartAnchor;
      if (!anchor) {
        if (units >= from && units < to) {
          Run* last = runs.empty() ? nullptr : &runs.back();
          if (last && last->entity + last->len == entity && last->peer == e.peer &&
              last->counter + int32_t(last->len) == e.counter) {
            ++last->len;
          } else {
            runs.push_back(Run{entity, 1, e.peer, e.counter});
          }
        }
        ++units;
        if (units >= to) return runs;
      }
      ++entity;
    }
  }
  return runs;
}

std::optional<uint32_t> Seq::find(uint32_t peer, int32_t counter) {
  if (!id_index_built_) {
    id_index_.reserve(arena_.size());
    for (uint32_t i = 0; i < arena_.size(); ++i) {
      id_index_.emplace((uint64_t(arena_[i].peer) << 32) | uint32_t(arena_[i].counter), i);
    }
    id_index_built_ = true;
  }
  auto it = id_index_.find((uint64_t(peer) << 32) | uint32_t(counter));
  if (it == id_index_.end()) return std::nullopt;
  return it->second;
}

uint32_t Seq::entity_before(uint32_t idx) const {
  uint32_t n = 0;
  for (const auto& chunk : chunks_) {
    const Chunk& c = *chunk;
    bool here = false;
    for (uint32_t i : c.items) {
      if (i == idx) {
        here = true;
        break;
      }
    }
    if (!here) {
      n += c.vis;
      continue;
    }
    for (uint32_t i : c.items) {
      if (i == idx) return n;
      if (arena_[i].del_peer == kNone) ++n;
    }
  }
  return n;
}

uint32_t Seq::reinsert_pos(uint32_t tomb) const {
  if (clone_of_.empty()) return entity_before(tomb);
  std::vector<uint32_t> order(arena_.size(), 0);
  uint32_t k = 0;
  for (const auto& chunk : chunks_) {
    const Chunk& c = *chunk;
    for (uint32_t i : c.items) order[i] = k++;
  }
  auto root = [&](uint32_t x) {
    for (int guard = 0; guard < 1000; ++guard) {
      auto it = clone_of_.find(x);
      if (it == clone_of_.end()) break;
      x = it->second;
    }
    return x;
  };
  const uint32_t target = order[root(tomb)];
  uint32_t n = 0;
  for (const auto& chunk : chunks_) {
    const Chunk& c = *chunk;
    for (uint32_t i : c.items) {
      if (arena_[i].del_peer == kNone && order[root(i)] < target) ++n;
    }
  }
  return n;
}

std::vector<uint32_t> Seq::visible_contents() const {
  std::vector<uint32_t> out;
  out.reserve(total_chars_);
  for_each_visible_content(is_text_, [&](uint32_t content) { out.push_back(content); });
  return out;
}

std::string Seq::to_utf8() const {
  std::string out;
  out.reserve(total_u8_);
  for_each_visible_content(
      true, [&](uint32_t content) { append_utf8(out, static_cast<char32_t>(content)); });
  return out;
}

}  // namespace weft::crdt::detail

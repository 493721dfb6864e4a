// Myers' O(ND) diff, linear-space variant: each subproblem is split at a
// point on an optimal path found by searching forward from its start and
// backward from its end until the two searches overlap ("middle snake").
// Subproblems live on an explicit stack so deep recursion cannot overflow.
#include "weft/base/diff.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <unordered_map>

#include "weft/base/utf.h"

namespace weft {
namespace {

using Items = std::span<const uint64_t>;

// Collects runs in order, merging neighbours with the same op.
class RunBuilder {
 public:
  void add(DiffOp op, size_t old_begin, size_t new_begin, size_t count) {
    if (count == 0) return;
    if (!runs_.empty() && runs_.back().op == op) {
      runs_.back().count += count;
      return;
    }
    runs_.push_back({op, old_begin, new_begin, count});
  }
  std::vector<DiffRun>& runs() { return runs_; }

 private:
  std::vector<DiffRun> runs_;
};

// Rewrites every changed region (the runs between two equal runs) as one
// delete followed by one insert, the documented canonical form.
std::vector<DiffRun> canonicalize(const std::vector<DiffRun>& runs) {
  std::vector<DiffRun> out;
  out.reserve(runs.size());
  size_t i = 0;
  while (i < runs.size()) {
    if (runs[i].op == DiffOp::kEqual) {
      out.push_back(runs[i++]);
      continue;
    }
    size_t old_begin = runs[i].old_begin, new_begin = runs[i].new_begin;
    size_t deleted = 0, inserted = 0;
    for (; i < runs.size() && runs[i].op != DiffOp::kEqual; ++i) {
      (runs[i].op == DiffOp::kDelete ? deleted : inserted) += runs[i].count;
    }
    if (deleted) out.push_back({DiffOp::kDelete, old_begin, new_begin, deleted});
    if (inserted) out.push_back({DiffOp::kInsert, old_begin + deleted, new_begin, inserted});
  }
  return out;
}

struct Box {
  size_t a0, a1, b0, b1;  // old items [a0, a1), new items [b0, b1)
};

class Myers {
 public:
  Myers(Items a, Items b, size_t max_cost)
      : a_(a),
        b_(b),
        max_cost_(max_cost),
        vf_(a.size() + b.size() + 3),
        vb_(a.size() + b.size() + 3) {}

  std::vector<DiffRun> run() {
    struct Task {
      Box box;
      bool emit_equal;  // true: emit box as an equal run (a trimmed suffix)
    };
    std::vector<Task> stack;
    stack.push_back({{0, a_.size(), 0, b_.size()}, false});
    while (!stack.empty()) {
      Task task = stack.back();
      stack.pop_back();
      Box box = task.box;
      if (task.emit_equal) {
        out_.add(DiffOp::kEqual, box.a0, box.b0, box.a1 - box.a0);
        continue;
      }
      size_t prefix = 0;
      while (box.a0 + prefix < box.a1 && box.b0 + prefix < box.b1 &&
             a_[box.a0 + prefix] == b_[box.b0 + prefix]) {
        ++prefix;
      }
      out_.add(DiffOp::kEqual, box.a0, box.b0, prefix);
      box.a0 += prefix;
      box.b0 += prefix;
      size_t suffix = 0;
      while (box.a1 - suffix > box.a0 && box.b1 - suffix > box.b0 &&
             a_[box.a1 - suffix - 1] == b_[box.b1 - suffix - 1]) {
        ++suffix;
      }
      if (suffix) stack.push_back({{box.a1 - suffix, box.a1, box.b1 - suffix, box.b1}, true});
      box.a1 -= suffix;
      box.b1 -= suffix;
      if (box.a0 == box.a1 || box.b0 == box.b1) {
        out_.add(DiffOp::kDelete, box.a0, box.b0, box.a1 - box.a0);
        out_.add(DiffOp::kInsert, box.a1, box.b0, box.b1 - box.b0);
        continue;
      }
      size_t x = 0, y = 0;
      if (!split(box, x, y)) {
        // No progress possible under the cost cap: replace the box whole.
        out_.add(DiffOp::kDelete, box.a0, box.b0, box.a1 - box.a0);
        out_.add(DiffOp::kInsert, box.a1, box.b0, box.b1 - box.b0);
        continue;
      }
      stack.push_back({{box.a0 + x, box.a1, box.b0 + y, box.b1}, false});
      stack.push_back({{box.a0, box.a0 + x, box.b0, box.b0 + y}, false});
    }
    return canonicalize(out_.runs());
  }

 private:
  // Finds a split point (x, y), relative to the box, with 0 < x + y < N + M,
  // on a shortest edit path when one is found within the cost cap, else the
  // furthest point reached. Returns false when no such point exists.
  // REQUIRES: the box is non-empty on both sides, its first items differ and
  // its last items differ.
  bool split(const Box& box, size_t& out_x, size_t& out_y) {
    const Items a = a_.subspan(box.a0, box.a1 - box.a0);
    const Items b = b_.subspan(box.b0, box.b1 - box.b0);
    const long n = static_cast<long>(a.size()), m = static_cast<long>(b.size());
    const long delta = n - m;
    const bool odd = (delta & 1) != 0;
    const long off = m + 1;  // diagonal k is stored at index k + off
    long* vf = vf_.data() + off;
    long* vb = vb_.data() + off;
    const long kInf = std::numeric_limits<long>::max() / 2;
    long fmin = 0, fmax = 0, bmin = delta, bmax = delta;
    vf[0] = 0;
    vb[delta] = n;
    for (long d = 1;; ++d) {
      if (fmin > -m)
        vf[--fmin - 1] = -1;
      else
        ++fmin;
      if (fmax < n)
        vf[++fmax + 1] = -1;
      else
        --fmax;
      for (long k = fmax; k >= fmin; k -= 2) {
        long x = vf[k - 1] >= vf[k + 1] ? vf[k - 1] + 1 : vf[k + 1];
        if (x > n) x = n;
        if (x - k > m) x = m + k;
        long y = x - k;
        while (x < n && y < m && a[x] == b[y]) ++x, ++y;
        vf[k] = x;
        if (odd && bmin <= k && k <= bmax && vb[k] <= x) return accept(x, y, n, m, out_x, out_y);
      }
      if (bmin > -m)
        vb[--bmin - 1] = kInf;
      else
        ++bmin;
      if (bmax < n)
        vb[++bmax + 1] = kInf;
      else
        --bmax;
      for (long k = bmax; k >= bmin; k -= 2) {
        long x = vb[k - 1] < vb[k + 1] ? vb[k - 1] : vb[k + 1] - 1;
        if (x < 0) x = 0;
        if (x - k < 0) x = k;
        long y = x - k;
        while (x > 0 && y > 0 && a[x - 1] == b[y - 1]) --x, --y;
        vb[k] = x;
        if (!odd && fmin <= k && k <= fmax && x <= vf[k]) return accept(x, y, n, m, out_x, out_y);
      }
      if (static_cast<size_t>(d) >= max_cost_)
        return furthest(fmin, fmax, bmin, bmax, n, m, out_x, out_y);
    }
  }

  static bool accept(long x, long y, long n, long m, size_t& out_x, size_t& out_y) {
    if (x < 0 || y < 0 || x > n || y > m || x + y == 0 || x + y == n + m) return false;
    out_x = static_cast<size_t>(x);
    out_y = static_cast<size_t>(y);
    return true;
  }

  // The cost cap was hit: split where the forward or the backward search got
  // furthest (any split point yields a valid, if longer, script).
  bool furthest(long fmin, long fmax, long bmin, long bmax, long n, long m, size_t& out_x,
                size_t& out_y) {
    const long* vf = vf_.data() + m + 1;
    const long* vb = vb_.data() + m + 1;
    long best_f = -1, fx = 0;
    for (long k = fmin; k <= fmax; k += 2) {
      long x = std::min(vf[k], n);
      if (x - k > m || x - k < 0) continue;
      if (2 * x - k > best_f) best_f = 2 * x - k, fx = x;
    }
    long best_b = std::numeric_limits<long>::max(), bx = 0;
    for (long k = bmin; k <= bmax; k += 2) {
      long x = std::max(vb[k], 0L);
      if (x - k > m || x - k < 0) continue;
      if (2 * x - k < best_b) best_b = 2 * x - k, bx = x;
    }
    // Compare progress from each end: forward covered best_f, backward n+m-best_b.
    if (best_f >= 0 && best_f >= (n + m) - best_b) {
      return accept(fx, fx - (2 * fx - best_f), n, m, out_x, out_y);
    }
    if (best_b != std::numeric_limits<long>::max()) {
      return accept(bx, bx - (2 * bx - best_b), n, m, out_x, out_y);
    }
    return false;
  }

  Items a_, b_;
  size_t max_cost_;
  std::vector<long> vf_, vb_;
  RunBuilder out_;
};

size_t default_max_cost(size_t total) {
  size_t root = static_cast<size_t>(std::sqrt(static_cast<double>(total)));
  return std::max<size_t>(256, root);
}

// Decodes `text` into items (Unicode scalar values, or bytes when it is not
// valid UTF-8) and records where each item starts, plus a final entry for
// the end.
void decode_items(std::string_view text, bool utf8, std::vector<uint64_t>& items,
                  std::vector<size_t>& starts) {
  items.clear();
  starts.clear();
  size_t i = 0;
  while (i < text.size()) {
    starts.push_back(i);
    if (utf8) {
      items.push_back(decode_utf8_unchecked(text, i));
    } else {
      items.push_back(static_cast<unsigned char>(text[i++]));
    }
  }
  starts.push_back(text.size());
}

// Appends the character-level replacements that turn old_part (at byte
// old_base of the old text) into new_part (at new_base).
void refine_region(std::string_view old_part, std::string_view new_part, size_t old_base,
                   size_t new_base, const DiffOptions& options, std::vector<TextReplacement>& out) {
  const bool utf8 = is_valid_utf8(old_part) && is_valid_utf8(new_part);
  std::vector<uint64_t> old_items, new_items;
  std::vector<size_t> old_starts, new_starts;
  decode_items(old_part, utf8, old_items, old_starts);
  decode_items(new_part, utf8, new_items, new_starts);
  std::vector<DiffRun> runs = diff_items(old_items, new_items, options);
  for (size_t i = 0; i < runs.size(); ++i) {
    if (runs[i].op == DiffOp::kEqual) continue;
    size_t old_item = runs[i].old_begin, new_item = runs[i].new_begin;
    size_t old_count = 0, new_count = 0;
    for (; i < runs.size() && runs[i].op != DiffOp::kEqual; ++i) {
      (runs[i].op == DiffOp::kDelete ? old_count : new_count) += runs[i].count;
    }
    --i;
    size_t ob = old_starts[old_item], oe = old_starts[old_item + old_count];
    size_t nb = new_starts[new_item], ne = new_starts[new_item + new_count];
    out.push_back({old_base + ob, oe - ob, new_base + nb, ne - nb});
  }
}

bool is_line_start(std::string_view text, size_t pos) { return pos == 0 || text[pos - 1] == '\n'; }

}  // namespace

std::vector<DiffRun> diff_items(Items old_items, Items new_items, const DiffOptions& options) {
  size_t cost =
      options.max_cost ? options.max_cost : default_max_cost(old_items.size() + new_items.size());
  return Myers(old_items, new_items, cost).run();
}

std::vector<std::string_view> split_lines_keep_ends(std::string_view text) {
  std::vector<std::string_view> lines;
  size_t start = 0;
  while (start < text.size()) {
    size_t nl = text.find('\n', start);
    size_t end = nl == std::string_view::npos ? text.size() : nl + 1;
    lines.push_back(text.substr(start, end - start));
    start = end;
  }
  return lines;
}

void intern_lines(std::span<const std::string_view> old_lines,
                  std::span<const std::string_view> new_lines, std::vector<uint64_t>& old_ids,
                  std::vector<uint64_t>& new_ids) {
  std::unordered_map<std::string_view, uint64_t> ids;
  ids.reserve(old_lines.size() + new_lines.size());
  auto intern = [&](std::string_view line) {
    return ids.try_emplace(line, ids.size()).first->second;
  };
  old_ids.clear();
  new_ids.clear();
  for (auto line : old_lines) old_ids.push_back(intern(line));
  for (auto line : new_lines) new_ids.push_back(intern(line));
}

std::vector<DiffRun> diff_lines(std::string_view old_text, std::string_view new_text,
                                const DiffOptions& options) {
  auto old_lines = split_lines_keep_ends(old_text);
  auto new_lines = split_lines_keep_ends(new_text);
  std::vector<uint64_t> old_ids, new_ids;
  intern_lines(old_lines, new_lines, old_ids, new_ids);
  return diff_items(old_ids, new_ids, options);
}

CommonLines common_line_affixes(std::string_view old_text, std::string_view new_text) {
  size_t limit = std::min(old_text.size(), new_text.size());
  size_t prefix = 0;
  while (prefix < limit && old_text[prefix] == new_text[prefix]) ++prefix;
  while (prefix > 0 && !is_line_start(old_text, prefix)) --prefix;
  size_t suffix = 0;
  while (suffix < limit - prefix &&
         old_text[old_text.size() - 1 - suffix] == new_text[new_text.size() - 1 - suffix]) {
    ++suffix;
  }
  while (suffix > 0 && !(is_line_start(old_text, old_text.size() - suffix) &&
                         is_line_start(new_text, new_text.size() - suffix))) {
    --suffix;
  }
  return {prefix, suffix};
}

std::vector<TextReplacement> diff_text(std::string_view old_text, std::string_view new_text,
                                       const TextDiffOptions& options) {
  std::vector<TextReplacement> out;
  if (old_text == new_text) return out;
  // Trim whole common lines at both ends with byte compares: the usual
  // "few lines changed in a big file" case never splits the big parts.
  auto [prefix, suffix] = common_line_affixes(old_text, new_text);
  std::string_view old_mid = old_text.substr(prefix, old_text.size() - prefix - suffix);
  std::string_view new_mid = new_text.substr(prefix, new_text.size() - prefix - suffix);

  auto old_lines = split_lines_keep_ends(old_mid);
  auto new_lines = split_lines_keep_ends(new_mid);
  std::vector<uint64_t> old_ids, new_ids;
  intern_lines(old_lines, new_lines, old_ids, new_ids);
  std::vector<DiffRun> runs = diff_items(old_ids, new_ids, options.line_options);

  // Byte offset (within old_mid / new_mid) of each line start, plus the end.
  auto offsets = [](const std::vector<std::string_view>& lines) {
    std::vector<size_t> starts{0};
    for (auto line : lines) starts.push_back(starts.back() + line.size());
    return starts;
  };
  std::vector<size_t> old_starts = offsets(old_lines), new_starts = offsets(new_lines);
  for (size_t i = 0; i < runs.size(); ++i) {
    if (runs[i].op == DiffOp::kEqual) continue;
    size_t old_line = runs[i].old_begin, new_line = runs[i].new_begin;
    size_t old_count = 0, new_count = 0;
    for (; i < runs.size() && runs[i].op != DiffOp::kEqual; ++i) {
      (runs[i].op == DiffOp::kDelete ? old_count : new_count) += runs[i].count;
    }
    --i;
    size_t ob = old_starts[old_line], oe = old_starts[old_line + old_count];
    size_t nb = new_starts[new_line], ne = new_starts[new_line + new_count];
    if (old_count > 0 && new_count > 0 && (oe - ob) + (ne - nb) <= options.max_refine_bytes) {
      refine_region(old_mid.substr(ob, oe - ob), new_mid.substr(nb, ne - nb), prefix + ob,
                    prefix + nb, options.line_options, out);
    } else {
      out.push_back({prefix + ob, oe - ob, prefix + nb, ne - nb});
    }
  }
  return out;
}

std::string apply_text_replacements(std::string_view old_text, std::string_view new_text,
                                    std::span<const TextReplacement> replacements) {
  std::string out;
  out.reserve(new_text.size());
  size_t pos = 0;
  for (const auto& r : replacements) {
    out.append(old_text.substr(pos, r.old_offset - pos));
    out.append(new_text.substr(r.new_offset, r.new_length));
    pos = r.old_offset + r.old_length;
  }
  out.append(old_text.substr(pos));
  return out;
}

}  // namespace weft

// Line edits, splices, reads and searches on a block's text: pure functions
// shared by every kind of block.
#include <algorithm>
#include <cstring>

#include "kernel/blocks_impl.h"
#include "weft/base/utf.h"
#include "weft/text/search.h"

namespace weft::kernel {

namespace {

size_t start_of(std::string_view text, const std::vector<size_t>& starts, size_t line) {
  return line < starts.size() ? starts[line] : text.size();
}

std::string op_label(size_t index, const LineEdit& op) {
  std::string s = "op " + std::to_string(index) + " (" + std::string(line_edit_op_name(op.op));
  if (op.op == LineEdit::Op::kInsert) {
    s += " at line " + std::to_string(op.line);
  } else {
    s += " lines " + std::to_string(op.start_line) + ".." + std::to_string(op.end_line);
  }
  return s + ")";
}

// Shows `text` in an error message, cut to a readable size.
std::string excerpt(std::string_view text) {
  constexpr size_t kMax = 2000;
  if (text.size() <= kMax) return std::string(text);
  size_t cut = kMax;
  while (cut > 0 && (static_cast<unsigned char>(text[cut]) & 0xC0) == 0x80) --cut;
  return std::string(text.substr(0, cut)) + "\n... (" + std::to_string(text.size() - cut) +
         " more bytes)";
}

}  // namespace

Status check_block_text(std::string_view text, std::string_view what, size_t limit) {
  if (text.size() > limit) {
    return resource_exhausted(std::string(what) + " is " + std::to_string(text.size()) +
                              " bytes; the limit is " + std::to_string(limit) +
                              ": send it in smaller parts");
  }
  if (!is_valid_utf8(text)) return invalid_argument(std::string(what) + " is not valid UTF-8");
  if (std::memchr(text.data(), '\0', text.size()) != nullptr) {
    return invalid_argument(std::string(what) + " holds a NUL byte; blocks hold text only");
  }
  return Status();
}

std::vector<size_t> line_starts(std::string_view text) {
  std::vector<size_t> starts;
  extend_line_starts(text, 0, starts);
  return starts;
}

void extend_line_starts(std::string_view text, size_t appended_at, std::vector<size_t>& starts) {
  if (appended_at >= text.size()) return;
  if (appended_at == 0 || text[appended_at - 1] == '\n') starts.push_back(appended_at);
  const char* base = text.data();
  size_t pos = appended_at;
  while (pos < text.size()) {
    const void* nl = std::memchr(base + pos, '\n', text.size() - pos);
    if (nl == nullptr) break;
    size_t at = static_cast<const char*>(nl) - base + 1;
    if (at < text.size()) starts.push_back(at);
    pos = at;
  }
}

bool all_ascii(std::string_view text) {
  const unsigned char* p = reinterpret_cast<const unsigned char*>(text.data());
  size_t n = text.size();
  size_t i = 0;
  for (; i + 8 <= n; i += 8) {
    uint64_t word;
    std::memcpy(&word, p + i, 8);
    if (word & 0x8080808080808080ull) return false;
  }
  for (; i < n; ++i) {
    if (p[i] & 0x80) return false;
  }
  return true;
}

void splice_line_starts(std::string_view new_text, const std::vector<TextSplice>& splices,
                        std::vector<size_t>& starts) {
  // Old offsets map to new ones by the splices in ascending order (they come
  // highest first). A line start inside an erased range (or right after it)
  // is recomputed from the text around the insert.
  std::vector<size_t> out;
  out.reserve(starts.size() + 16);
  size_t next_old = 0;   // index into starts
  int64_t delta = 0;     // new offset - old offset before the current splice
  auto push = [&](size_t at) {
    if (at < new_text.size() && (out.empty() || out.back() < at)) out.push_back(at);
  };
  for (auto it = splices.rbegin(); it != splices.rend(); ++it) {
    // Starts strictly before the splice's offset are unchanged (shifted).
    while (next_old < starts.size() && starts[next_old] < it->offset) {
      push(static_cast<size_t>(static_cast<int64_t>(starts[next_old]) + delta));
      ++next_old;
    }
    // Starts inside (offset, offset + erase] are gone or come from the insert.
    size_t new_at = static_cast<size_t>(static_cast<int64_t>(it->offset) + delta);
    while (next_old < starts.size() && starts[next_old] <= it->offset + it->erase) ++next_old;
    // The splice point itself starts a line when the text before it ends one.
    if (new_at == 0 || new_text[new_at - 1] == '\n') push(new_at);
    for (size_t i = 0; i < it->insert.size(); ++i) {
      if (it->insert[i] == '\n') push(new_at + i + 1);
    }
    delta += static_cast<int64_t>(it->insert.size()) - static_cast<int64_t>(it->erase);
    // The first old start past the erased range may now follow a line break
    // from the insert or not: it stays a start only where the new text says.
    size_t after = new_at + it->insert.size();
    if (after > 0 && after < new_text.size() && new_text[after - 1] == '\n') push(after);
  }
  while (next_old < starts.size()) {
    push(static_cast<size_t>(static_cast<int64_t>(starts[next_old]) + delta));
    ++next_old;
  }
  starts = std::move(out);
}

size_t count_lines(std::string_view text) {
  if (text.empty()) return 0;
  size_t n = static_cast<size_t>(std::count(text.begin(), text.end(), '\n'));
  return text.back() == '\n' ? n : n + 1;
}

std::string summarize(std::string_view text, size_t lines) {
  std::string out;
  size_t chars = 0;
  size_t i = 0;
  while (i < text.size() && chars < kSummaryChars) {
    size_t len = utf8_sequence_length(static_cast<unsigned char>(text[i]));
    if (len == 0 || i + len > text.size()) len = 1;
    if (text[i] == '\n') {
      out += " ⏎ ";
    } else if (text[i] != '\r') {
      out.append(text.substr(i, len));
    }
    i += len;
    ++chars;
  }
  if (i < text.size()) out += "…";
  if (lines > 1 || i < text.size()) {
    out += " (" + std::to_string(lines) + (lines == 1 ? " line)" : " lines)");
  }
  return out;
}

Result<std::vector<TextSplice>> plan_line_edits(std::string_view text,
                                                const std::vector<size_t>& starts,
                                                const std::vector<LineEdit>& ops,
                                                std::string_view block_id) {
  const size_t n = starts.size();
  const std::string where = "'" + std::string(block_id) + "' has " + std::to_string(n) +
                            (n == 1 ? " line" : " lines") + " (0.." +
                            (n ? std::to_string(n - 1) : std::string("none")) + ")";
  if (ops.empty()) return invalid_argument("edit needs at least one op");
  if (ops.size() > kMaxEditOps) {
    return invalid_argument("an edit takes at most " + std::to_string(kMaxEditOps) +
                            " ops; split the batch");
  }
  size_t total = 0;
  struct Range {
    size_t s, e, index;
    bool point;
  };
  std::vector<Range> ranges;
  ranges.reserve(ops.size());
  for (size_t i = 0; i < ops.size(); ++i) {
    const LineEdit& op = ops[i];
    total += op.content.size() + (op.expected_text ? op.expected_text->size() : 0);
    WEFT_RETURN_IF_ERROR(check_block_text(op.content, op_label(i, op) + ": the content",
                                          kMaxContentBytes));
    if (op.op == LineEdit::Op::kInsert) {
      if (op.line > n) {
        return invalid_argument(op_label(i, op) + ": line " + std::to_string(op.line) +
                                " is past the end; " + where + ", and an insert at line " +
                                std::to_string(n) + " appends");
      }
      if (op.expected_text) {
        return invalid_argument(op_label(i, op) + ": expected_text goes with replace only");
      }
      ranges.push_back({op.line, op.line, i, true});
      continue;
    }
    if (op.start_line > op.end_line) {
      return invalid_argument(op_label(i, op) + ": start_line is after end_line (end_line is "
                              "exclusive: lines 3..5 are lines 3 and 4)");
    }
    if (op.end_line > n) {
      return invalid_argument(op_label(i, op) + ": end_line " + std::to_string(op.end_line) +
                              " is past the end; " + where + " and end_line is exclusive");
    }
    if (op.op == LineEdit::Op::kDelete && (!op.content.empty() || op.expected_text)) {
      return invalid_argument(op_label(i, op) + ": delete takes no content or expected_text");
    }
    if (op.expected_text) {
      size_t a = start_of(text, starts, op.start_line);
      size_t b = start_of(text, starts, op.end_line);
      std::string_view actual = text.substr(a, b - a);
      const std::string& want = *op.expected_text;
      bool same = actual == want || (!actual.empty() && actual.back() == '\n' &&
                                     actual.substr(0, actual.size() - 1) == want);
      if (!same) {
        return failed_precondition(
            op_label(i, op) + ": expected_text does not match, so nothing was changed. The "
            "current text of lines " + std::to_string(op.start_line) + ".." +
            std::to_string(op.end_line) + " is:\n" + excerpt(actual) +
            (actual.empty() ? "(empty)\n" : "") +
            "\nRead the block again and retry with the current text.");
      }
    }
    if (op.start_line == op.end_line && op.op == LineEdit::Op::kDelete) continue;
    ranges.push_back({op.start_line, op.end_line, i, op.start_line == op.end_line});
  }
  if (total > kMaxContentBytes) {
    return resource_exhausted("the edit's content is " + std::to_string(total) +
                              " bytes in all; the limit is " + std::to_string(kMaxContentBytes));
  }
  // Overlaps: ranges sharing a line, or a point strictly inside a range.
  for (size_t x = 0; x < ranges.size(); ++x) {
    for (size_t y = x + 1; y < ranges.size(); ++y) {
      const Range& a = ranges[x];
      const Range& b = ranges[y];
      bool clash = false;
      if (!a.point && !b.point) {
        clash = a.s < b.e && b.s < a.e;
      } else if (a.point != b.point) {
        const Range& p = a.point ? a : b;
        const Range& r = a.point ? b : a;
        clash = r.s < p.s && p.s < r.e;
      }
      if (clash) {
        return invalid_argument(
            op_label(a.index, ops[a.index]) + " and " + op_label(b.index, ops[b.index]) +
            " overlap; ops in one edit address the lines as they were before it and must not "
            "overlap: merge them into one replace");
      }
    }
  }
  // Output order: by position, inserts before the range starting there, then
  // batch order.
  std::stable_sort(ranges.begin(), ranges.end(), [](const Range& a, const Range& b) {
    if (a.s != b.s) return a.s < b.s;
    if (a.point != b.point) return a.point;
    return a.index < b.index;
  });
  const bool final_break = !text.empty() && text.back() == '\n';
  bool tail_empty = text.empty();
  bool tail_break = final_break;
  std::vector<TextSplice> out;
  out.reserve(ranges.size());
  for (const Range& r : ranges) {
    const LineEdit& op = ops[r.index];
    TextSplice sp;
    sp.offset = start_of(text, starts, r.s);
    sp.erase = start_of(text, starts, r.e) - sp.offset;
    sp.insert = op.content;
    bool at_end = r.e == n;
    if (!sp.insert.empty()) {
      if (r.point && r.s == n) {
        // Content after the last line: a line break first when that line has none.
        if (!tail_empty && !tail_break) sp.insert.insert(0, 1, '\n');
        if (final_break && sp.insert.back() != '\n') sp.insert += '\n';
        tail_empty = false;
        tail_break = sp.insert.back() == '\n';
      } else if (sp.insert.back() != '\n' && !(at_end && !final_break)) {
        sp.insert += '\n';
      }
    }
    out.push_back(std::move(sp));
  }
  std::reverse(out.begin(), out.end());
  return out;
}

Result<TextSplice> plan_splice(std::string_view text, uint64_t offset, uint64_t delete_count,
                               std::string_view insert, std::string_view block_id) {
  WEFT_RETURN_IF_ERROR(check_block_text(insert, "the inserted text", kMaxContentBytes));
  const std::string size = "'" + std::string(block_id) + "' holds " +
                           std::to_string(text.size()) + " bytes";
  if (offset > text.size()) {
    return out_of_range("offset " + std::to_string(offset) + " is past the end: " + size);
  }
  if (delete_count > text.size() - offset) {
    return out_of_range("offset " + std::to_string(offset) + " + delete_count " +
                        std::to_string(delete_count) + " is past the end: " + size);
  }
  auto boundary = [&](size_t at) { return at >= text.size() ||
                                          (static_cast<unsigned char>(text[at]) & 0xC0) != 0x80; };
  auto check = [&](size_t at, std::string_view what) -> Status {
    if (boundary(at)) return Status();
    size_t before = at;
    while (before > 0 && !boundary(before)) --before;
    size_t after = at;
    while (!boundary(after)) ++after;
    return invalid_argument(std::string(what) + " " + std::to_string(at) +
                            " falls inside a UTF-8 character of '" + std::string(block_id) +
                            "' (bytes " + std::to_string(before) + ".." + std::to_string(after) +
                            "); use " + std::to_string(before) + " or " + std::to_string(after));
  };
  WEFT_RETURN_IF_ERROR(check(offset, "offset"));
  WEFT_RETURN_IF_ERROR(check(offset + delete_count, "the end of the deletion, byte"));
  return TextSplice{offset, delete_count, std::string(insert)};
}

std::string apply_splices(std::string_view text, const std::vector<TextSplice>& splices) {
  // One pass, lowest offset first (the splices come highest first).
  size_t size = text.size();
  for (const TextSplice& s : splices) size = size - s.erase + s.insert.size();
  std::string out;
  out.reserve(size);
  size_t at = 0;
  for (auto it = splices.rbegin(); it != splices.rend(); ++it) {
    out.append(text.substr(at, it->offset - at));
    out.append(it->insert);
    at = it->offset + it->erase;
  }
  out.append(text.substr(at));
  return out;
}

Status render_lines(std::string_view text, const std::vector<size_t>& starts,
                    const ReadOptions& options, BlockContent& out) {
  const size_t n = starts.size();
  out.line_count = n;
  LineRange r{0, n};
  if (options.range) {
    r = *options.range;
    if (r.start > r.end) {
      return invalid_argument("range start " + std::to_string(r.start) + " is after its end " +
                              std::to_string(r.end) + " (the end is exclusive)");
    }
    if (r.start > n) {
      return out_of_range("range start " + std::to_string(r.start) + " is past the end: '" +
                          out.block_id + "' has " + std::to_string(n) + " lines");
    }
    r.end = std::min(r.end, n);
  }
  out.shown = r;
  size_t a = start_of(text, starts, r.start);
  size_t b = start_of(text, starts, r.end);
  if (!options.line_numbers) {
    out.content.assign(text.substr(a, b - a));
    return Status();
  }
  size_t width = std::to_string(r.end ? r.end - 1 : 0).size();
  out.content.clear();
  out.content.reserve(b - a + (r.end - r.start) * (width + 1));
  for (size_t line = r.start; line < r.end; ++line) {
    std::string num = std::to_string(line);
    out.content.append(width - num.size(), ' ');
    out.content += num;
    out.content += '\t';
    size_t s = starts[line];
    size_t e = start_of(text, starts, line + 1);
    out.content.append(text.substr(s, e - s));
  }
  return Status();
}

Result<BlockSearch> search_text(std::string_view text, const std::vector<size_t>& starts,
                                std::string_view query, const SearchOptions& options) {
  if (query.empty()) return invalid_argument("the search query is empty");
  if (query.size() > 4096) return invalid_argument("the search query is over 4096 bytes");
  if (!is_valid_utf8(query)) return invalid_argument("the search query is not valid UTF-8");
  if (options.max_matches == 0 || options.max_matches > kMaxSearchMatches) {
    return invalid_argument("max_matches must be 1 to " + std::to_string(kMaxSearchMatches));
  }
  if (options.context_lines > kMaxSearchContextLines) {
    return invalid_argument("context_lines must be at most " +
                            std::to_string(kMaxSearchContextLines));
  }
  BlockSearch out;
  text::RegexOptions ro;
  ro.max_matches = options.max_matches + 1;
  auto found = text::find_all_regex(text, query, ro);
  if (!found.ok()) {
    out.literal = true;
    out.note = "not a valid regex (" + std::string(found.status().message()) +
               "); searched for the literal text";
    ro.literal = true;
    found = text::find_all_regex(text, query, ro);
    if (!found.ok()) return found.status();
  }
  if (found->size() > options.max_matches) {
    out.truncated = true;
    found->resize(options.max_matches);
  }
  const size_t n = starts.size();
  for (const text::Match& m : *found) {
    size_t line = static_cast<size_t>(std::upper_bound(starts.begin(), starts.end(), m.offset) -
                                      starts.begin());
    line = line == 0 ? 0 : line - 1;
    if (n == 0) break;
    BlockMatch bm;
    bm.line = line;
    size_t ls = starts[line];
    size_t le = start_of(text, starts, line + 1);
    size_t content_end = le;
    while (content_end > ls && (text[content_end - 1] == '\n' || text[content_end - 1] == '\r')) {
      --content_end;
    }
    bm.match_start = m.offset - ls;
    bm.match_end = std::min(m.offset + m.length, content_end) - ls;
    if (bm.match_end < bm.match_start) bm.match_end = bm.match_start;
    bm.first_line = line >= options.context_lines ? line - options.context_lines : 0;
    size_t last = std::min(n, line + options.context_lines + 1);
    size_t a = starts[bm.first_line];
    size_t b = start_of(text, starts, last);
    bm.content.assign(text.substr(a, b - a));
    out.matches.push_back(std::move(bm));
  }
  return out;
}

}  // namespace weft::kernel

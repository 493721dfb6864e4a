// Making and formatting unified diffs.
#include <algorithm>
#include <string>

#include "weft/base/diff.h"
#include "weft/text/unified_diff.h"

namespace weft::text {
namespace {

constexpr std::string_view kNoNewline = "\\ No newline at end of file";

// "l,s" with GNU diff's conventions: ",1" is left out; an empty range names
// the line before it.
std::string range_text(size_t start, size_t count) {
  std::string out = std::to_string(start);
  if (count != 1) out += "," + std::to_string(count);
  return out;
}

HunkLine make_line(char kind, std::string_view line) {
  HunkLine out;
  out.kind = kind;
  if (!line.empty() && line.back() == '\n') {
    line.remove_suffix(1);
  } else {
    out.no_newline = true;
  }
  out.text = std::string(line);
  return out;
}

// A changed region: old lines [old_begin, old_begin + old_count) become new
// lines [new_begin, new_begin + new_count).
struct Change {
  size_t old_begin, old_count, new_begin, new_count;
};

// The changes of `runs`, whose indices are shifted by `offset` lines (the
// common prefix left out of the diff).
std::vector<Change> collect_changes(const std::vector<DiffRun>& runs, size_t offset) {
  std::vector<Change> changes;
  for (DiffRun run : runs) {
    if (run.op == DiffOp::kEqual) continue;
    run.old_begin += offset;
    run.new_begin += offset;
    if (!changes.empty() && changes.back().old_begin + changes.back().old_count == run.old_begin &&
        changes.back().new_begin + changes.back().new_count == run.new_begin) {
      (run.op == DiffOp::kDelete ? changes.back().old_count : changes.back().new_count) +=
          run.count;
      continue;
    }
    changes.push_back({run.old_begin, run.op == DiffOp::kDelete ? run.count : 0, run.new_begin,
                       run.op == DiffOp::kInsert ? run.count : 0});
  }
  return changes;
}

// A path as a "---"/"+++" line shows it: C-style quoted (as git does) when
// it holds bytes that would break the line or be trimmed when parsed.
std::string header_path(const std::string& path) {
  bool plain = !path.empty() && path.front() != '"' && path.front() != ' ' && path.back() != ' ';
  for (char c : path) {
    if (c == '\n' || c == '\r' || c == '\t' || c == '\\' || c == '"') plain = false;
  }
  if (plain) return path;
  std::string out = "\"";
  for (char c : path) {
    switch (c) {
      case '\n':
        out += "\\n";
        break;
      case '\r':
        out += "\\r";
        break;
      case '\t':
        out += "\\t";
        break;
      case '"':
        out += "\\\"";
        break;
      case '\\':
        out += "\\\\";
        break;
      default:
        out += c;
    }
  }
  return out + "\"";
}

// The parts of two texts that hold every difference plus up to `context`
// whole lines on each side; both start at line `first_line` (0-based).
struct ChangedWindow {
  std::string_view old_part, new_part;
  size_t first_line = 0;
};

ChangedWindow changed_window(std::string_view old_text, std::string_view new_text, size_t context) {
  auto [prefix, suffix] = common_line_affixes(old_text, new_text);
  // Widen by `context` lines; the widened parts are common to both texts.
  size_t begin = prefix;
  for (size_t k = 0; k < context && begin > 0; ++k) {
    size_t nl = begin >= 2 ? old_text.rfind('\n', begin - 2) : std::string_view::npos;
    begin = nl == std::string_view::npos ? 0 : nl + 1;
  }
  size_t old_end = old_text.size() - suffix;
  for (size_t k = 0; k < context && old_end < old_text.size(); ++k) {
    size_t nl = old_text.find('\n', old_end);
    old_end = nl == std::string_view::npos ? old_text.size() : nl + 1;
  }
  size_t widened = old_end - (old_text.size() - suffix);
  size_t new_end = new_text.size() - suffix + widened;
  ChangedWindow w;
  w.old_part = old_text.substr(begin, old_end - begin);
  w.new_part = new_text.substr(begin, new_end - begin);
  w.first_line = static_cast<size_t>(std::count(old_text.begin(), old_text.begin() + begin, '\n'));
  return w;
}

}  // namespace

std::string Hunk::header() const {
  return "@@ -" + range_text(old_start, old_count) + " +" + range_text(new_start, new_count) +
         " @@";
}

std::string FilePatch::target_path() const {
  auto has_prefix = [](const std::string& p, char c) {
    return p.size() > 2 && p[0] == c && p[1] == '/';
  };
  std::string path = is_deletion() ? old_path : new_path;
  bool git_style = (has_prefix(old_path, 'a') || old_path == "/dev/null") &&
                   (has_prefix(new_path, 'b') || new_path == "/dev/null");
  if (git_style && path != "/dev/null" && path.size() > 2) path = path.substr(2);
  return path;
}

FilePatch make_file_patch(std::string_view old_text, std::string_view new_text,
                          const MakeDiffOptions& options) {
  FilePatch patch;
  if (options.file_headers) {
    patch.old_path = options.old_label;
    patch.new_path = options.new_label;
  }
  if (old_text == new_text) return patch;
  // Only the changed middle plus `context` lines around it is split into
  // lines; the common start and end are skipped with byte compares.
  ChangedWindow window = changed_window(old_text, new_text, options.context);
  auto old_lines = split_lines_keep_ends(window.old_part);
  auto new_lines = split_lines_keep_ends(window.new_part);
  // Common leading and trailing lines are compared by bytes and left out of
  // the diff proper, so a big file with a small edit costs about one pass.
  size_t prefix = 0;
  while (prefix < old_lines.size() && prefix < new_lines.size() &&
         old_lines[prefix] == new_lines[prefix]) {
    ++prefix;
  }
  size_t suffix = 0;
  while (suffix < old_lines.size() - prefix && suffix < new_lines.size() - prefix &&
         old_lines[old_lines.size() - 1 - suffix] == new_lines[new_lines.size() - 1 - suffix]) {
    ++suffix;
  }
  std::span<const std::string_view> old_mid(old_lines.data() + prefix,
                                            old_lines.size() - prefix - suffix);
  std::span<const std::string_view> new_mid(new_lines.data() + prefix,
                                            new_lines.size() - prefix - suffix);
  std::vector<uint64_t> old_ids, new_ids;
  intern_lines(old_mid, new_mid, old_ids, new_ids);
  std::vector<Change> changes = collect_changes(diff_items(old_ids, new_ids), prefix);
  const size_t ctx = options.context;

  size_t i = 0;
  while (i < changes.size()) {
    // Extend the hunk while the next change's context would touch this one's.
    size_t j = i;
    while (j + 1 < changes.size() &&
           changes[j + 1].old_begin - (changes[j].old_begin + changes[j].old_count) <= 2 * ctx) {
      ++j;
    }
    size_t lead = std::min(ctx, changes[i].old_begin);
    size_t old_from = changes[i].old_begin - lead, new_from = changes[i].new_begin - lead;
    size_t old_end = changes[j].old_begin + changes[j].old_count;
    size_t trail = std::min(ctx, old_lines.size() - old_end);
    Hunk hunk;
    size_t o = old_from, n = new_from;
    for (size_t c = i; c <= j; ++c) {
      for (; o < changes[c].old_begin; ++o, ++n) hunk.lines.push_back(make_line(' ', old_lines[o]));
      for (size_t k = 0; k < changes[c].old_count; ++k, ++o) {
        hunk.lines.push_back(make_line('-', old_lines[o]));
      }
      for (size_t k = 0; k < changes[c].new_count; ++k, ++n) {
        hunk.lines.push_back(make_line('+', new_lines[n]));
      }
    }
    for (size_t k = 0; k < trail; ++k, ++o, ++n) hunk.lines.push_back(make_line(' ', old_lines[o]));
    hunk.old_count = o - old_from;
    hunk.new_count = n - new_from;
    hunk.old_start = window.first_line + (hunk.old_count ? old_from + 1 : old_from);
    hunk.new_start = window.first_line + (hunk.new_count ? new_from + 1 : new_from);
    patch.hunks.push_back(std::move(hunk));
    i = j + 1;
  }
  return patch;
}

std::string format_file_patch(const FilePatch& patch) {
  std::string out;
  for (const auto& line : patch.preamble) out += line + "\n";
  if (!patch.old_path.empty() || !patch.new_path.empty()) {
    out += "--- " + header_path(patch.old_path) + "\n";
    out += "+++ " + header_path(patch.new_path) + "\n";
  }
  for (const Hunk& hunk : patch.hunks) {
    out += hunk.header();
    if (!hunk.section.empty()) out += " " + hunk.section;
    out += "\n";
    for (const HunkLine& line : hunk.lines) {
      out += line.kind;
      out += line.text;
      out += "\n";
      if (line.no_newline) {
        out += kNoNewline;
        out += "\n";
      }
    }
  }
  return out;
}

std::string make_unified_diff(std::string_view old_text, std::string_view new_text,
                              const MakeDiffOptions& options) {
  FilePatch patch = make_file_patch(old_text, new_text, options);
  if (patch.hunks.empty()) return "";
  return format_file_patch(patch);
}

}  // namespace weft::text

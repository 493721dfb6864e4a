// Applying unified-diff hunks: locate each hunk by its context (offset and
// fuzz search), then rebuild the text from untouched byte ranges and the
// hunks' new lines.
#include "weft/text/patch.h"

#include <algorithm>
#include <optional>

#include "text/line_ends.h"
#include "weft/text/line_index.h"

namespace weft::text {
namespace {

std::string_view trim_trailing_space(std::string_view s) {
  while (!s.empty() && (s.back() == ' ' || s.back() == '\t' || s.back() == '\r')) {
    s.remove_suffix(1);
  }
  return s;
}

// The hunk's old side with `lead` / `trail` context lines dropped by fuzz.
struct Window {
  size_t first = 0;  // index into hunk.lines of the first line used
  size_t last = 0;   // one past the last line used
  std::vector<const HunkLine*> old_lines;
};

Window make_window(const Hunk& hunk, size_t fuzz) {
  size_t lead = 0, trail = 0;
  while (lead < hunk.lines.size() && hunk.lines[lead].kind == ' ') ++lead;
  while (trail < hunk.lines.size() - lead &&
         hunk.lines[hunk.lines.size() - 1 - trail].kind == ' ') {
    ++trail;
  }
  Window w;
  w.first = std::min(fuzz, lead);
  w.last = hunk.lines.size() - std::min(fuzz, trail);
  for (size_t i = w.first; i < w.last; ++i) {
    if (hunk.lines[i].kind != '+') w.old_lines.push_back(&hunk.lines[i]);
  }
  return w;
}

struct Placement {
  size_t line = 0;  // first file line (0-based) the window's old side covers
  size_t fuzz = 0;
  bool whitespace = false;
  Window window;
};

class Applier {
 public:
  Applier(std::string_view text, const FilePatch& patch, const ApplyOptions& options)
      : text_(text),
        index_(text),
        patch_(patch),
        options_(options),
        crlf_aware_(is_crlf_aware(patch)) {}

  PatchPlan plan() {
    PatchPlan plan;
    plan.ok = true;
    long drift = 0;
    size_t min_line = 0;
    for (size_t i = 0; i < patch_.hunks.size(); ++i) {
      const Hunk& hunk = patch_.hunks[i];
      HunkReport report;
      report.index = i;
      report.header = hunk.header();
      std::optional<Placement> where;
      if (patch_.is_creation() && !text_.empty()) {
        report.message = "the patch creates this file, but it already has content";
      } else {
        where = locate(hunk, drift, min_line, report.message);
      }
      if (where) {
        report.applies = true;
        report.line = where->line + 1;
        report.fuzz = where->fuzz;
        report.whitespace = where->whitespace;
        long expected = expected_line(hunk, 0) + static_cast<long>(where->window.first);
        report.offset = static_cast<long>(where->line) - expected;
        drift = report.offset;
        min_line = where->line + where->window.old_lines.size();
        placements_.push_back(std::move(*where));
      } else {
        plan.ok = false;
      }
      plan.hunks.push_back(std::move(report));
    }
    if (plan.ok) plan.new_text = build();
    return plan;
  }

 private:
  // 0-based file line where the hunk's old side should start, by its header.
  long expected_line(const Hunk& hunk, long drift) const {
    long start = static_cast<long>(hunk.old_start);
    return (hunk.old_count == 0 ? start : start - 1) + drift;
  }

  bool lines_match(const Window& w, size_t at, bool whitespace) const {
    for (size_t k = 0; k < w.old_lines.size(); ++k) {
      std::string_view file_line = index_.line(at + k);
      // An unterminated last line keeps a trailing "\r" as content, not as a CRLF.
      const HunkLine& line = *w.old_lines[k];
      std::string_view want = line.no_newline ? std::string_view(line.text) : strip_cr(line.text);
      if (whitespace) {
        if (trim_trailing_space(file_line) != trim_trailing_space(want)) return false;
      } else if (file_line != want) {
        return false;
      }
    }
    // A last old line marked "no newline" must be the file's unterminated last line.
    if (!whitespace && !w.old_lines.empty() && w.old_lines.back()->no_newline) {
      size_t last = at + w.old_lines.size() - 1;
      if (last + 1 != index_.line_count() || index_.ending(last) != "") return false;
    }
    return true;
  }

  // Searches outward from the expected line: +0, +1, -1, +2, -2, ...
  std::optional<size_t> search(const Window& w, long expected, size_t min_line,
                               bool whitespace) const {
    const long n = static_cast<long>(index_.line_count());
    const long len = static_cast<long>(w.old_lines.size());
    const long lo = static_cast<long>(min_line), hi = n - len;
    if (hi < lo) return std::nullopt;
    const long center = std::clamp(expected, lo, hi);
    long reach = std::max(center - lo, hi - center);
    if (options_.max_offset) reach = std::min<long>(reach, static_cast<long>(options_.max_offset));
    auto try_at = [&](long at) {
      return at >= lo && at <= hi && lines_match(w, static_cast<size_t>(at), whitespace);
    };
    if (try_at(center)) return static_cast<size_t>(center);
    for (long d = 1; d <= reach; ++d) {
      if (try_at(center + d)) return static_cast<size_t>(center + d);
      if (try_at(center - d)) return static_cast<size_t>(center - d);
    }
    return std::nullopt;
  }

  std::optional<Placement> locate(const Hunk& hunk, long drift, size_t min_line,
                                  std::string& why) const {
    const Window full = make_window(hunk, 0);
    if (full.old_lines.empty()) return locate_insertion(hunk, drift, min_line, why);
    for (bool whitespace : {false, true}) {
      if (whitespace && !options_.allow_whitespace_fuzz) break;
      for (size_t fuzz = 0; fuzz <= options_.max_fuzz; ++fuzz) {
        Window w = make_window(hunk, fuzz);
        if (fuzz > 0 && (w.first == 0 && w.last == hunk.lines.size())) break;  // nothing to drop
        if (w.old_lines.empty()) break;
        long expected = expected_line(hunk, drift) + static_cast<long>(w.first);
        if (auto at = search(w, expected, min_line, whitespace)) {
          return Placement{*at, fuzz, whitespace, std::move(w)};
        }
      }
    }
    why = explain_miss(full, expected_line(hunk, drift), min_line);
    return std::nullopt;
  }

  std::optional<Placement> locate_insertion(const Hunk& hunk, long drift, size_t min_line,
                                            std::string& why) const {
    long at = expected_line(hunk, drift);
    long n = static_cast<long>(index_.line_count());
    if (at < static_cast<long>(min_line)) at = static_cast<long>(min_line);
    if (at > n) {
      why = "the hunk inserts after line " + std::to_string(at) + " but the file has only " +
            std::to_string(n) + " lines";
      return std::nullopt;
    }
    return Placement{static_cast<size_t>(at), 0, false, make_window(hunk, 0)};
  }

  std::string explain_miss(const Window& w, long expected, size_t min_line) const {
    std::string why = "context not found";
    const long n = static_cast<long>(index_.line_count());
    if (static_cast<long>(w.old_lines.size()) > n - static_cast<long>(min_line)) {
      return why + ": the hunk needs " + std::to_string(w.old_lines.size()) +
             " old lines but only " + std::to_string(n - static_cast<long>(min_line)) +
             " remain after the previous hunk";
    }
    long at = std::clamp<long>(expected, static_cast<long>(min_line),
                               n - static_cast<long>(w.old_lines.size()));
    for (size_t k = 0; k < w.old_lines.size(); ++k) {
      std::string_view have = index_.line(static_cast<size_t>(at) + k);
      std::string_view want = strip_cr(w.old_lines[k]->text);
      if (have != want) {
        return why + " anywhere in the file; at line " + std::to_string(at + k + 1) +
               " the file has '" + std::string(have.substr(0, 80)) + "' where the patch expects '" +
               std::string(want.substr(0, 80)) + "'";
      }
    }
    return why + " (the last line's newline status differs)";
  }

  // Appends `eol` when the output's last line is unterminated and more
  // lines follow, so two lines never run together.
  void terminate_line(std::string& out, std::string_view eol) const {
    if (!out.empty() && out.back() != '\n') out += eol;
  }

  // True when some line of the patch carries a "\r" before its "\n": such a
  // patch states every line ending itself.
  static bool is_crlf_aware(const FilePatch& patch) {
    for (const Hunk& hunk : patch.hunks) {
      for (const HunkLine& line : hunk.lines) {
        if (!line.no_newline && !line.text.empty() && line.text.back() == '\r') return true;
      }
    }
    return false;
  }

  // The ending added lines of an LF-only patch take before the hunk has
  // consumed a terminated file line: that of the first terminated line it
  // consumes, else of the line before it, else the file's dominant one.
  std::string_view initial_ending(const Placement& p, std::string_view fallback) const {
    for (size_t k = 0; k < p.window.old_lines.size(); ++k) {
      std::string_view e = index_.ending(p.line + k);
      if (!e.empty()) return e;
    }
    if (p.line > 0 && !index_.ending(p.line - 1).empty()) return index_.ending(p.line - 1);
    return fallback;
  }

  std::string build() const {
    const std::string_view eol = ending_bytes(index_.dominant_ending());
    std::string out;
    out.reserve(text_.size() + 256);
    size_t cursor = 0;  // next file line to copy
    for (size_t h = 0; h < placements_.size(); ++h) {
      const Placement& p = placements_[h];
      const Hunk& hunk = patch_.hunks[h];
      size_t gap_begin = index_.line_start(cursor), gap_end = index_.line_start(p.line);
      if (gap_end > gap_begin) {
        terminate_line(out, eol);
        out.append(text_.substr(gap_begin, gap_end - gap_begin));
      }
      size_t file_line = p.line;
      std::string_view local_eol = initial_ending(p, eol);
      const bool region_at_eof = p.line + p.window.old_lines.size() == index_.line_count();
      size_t last_new = p.window.last;  // index of the window's last new-side line
      for (size_t k = p.window.first; k < p.window.last; ++k) {
        if (hunk.lines[k].kind != '-') last_new = k;
      }
      for (size_t i = p.window.first; i < p.window.last; ++i) {
        const HunkLine& line = hunk.lines[i];
        if (line.kind != '+' && !index_.ending(file_line).empty()) {
          local_eol = index_.ending(file_line);  // added lines follow their neighbours
        }
        if (line.kind == '-') {
          ++file_line;
          continue;
        }
        terminate_line(out, eol);
        if (line.kind == ' ') {
          out.append(index_.line_with_ending(file_line++));
          continue;
        }
        std::string_view content = line.text;
        if (line.no_newline && region_at_eof && i == last_new) {
          out.append(content);  // the text's unterminated last line, verbatim
          continue;
        }
        if (crlf_aware_) {
          // The patch was made from CRLF-bearing text: its "\r" says which lines have CRLF.
          bool crlf = !content.empty() && content.back() == '\r';
          if (crlf) content.remove_suffix(1);
          out.append(content);
          out.append(crlf ? std::string_view("\r\n") : std::string_view("\n"));
        } else {
          out.append(content);
          out.append(local_eol);
        }
      }
      cursor = p.line + p.window.old_lines.size();
    }
    size_t rest = index_.line_start(cursor);
    if (rest < text_.size()) {
      terminate_line(out, eol);
      out.append(text_.substr(rest));
    }
    return out;
  }

  std::string_view text_;
  LineIndex index_;
  const FilePatch& patch_;
  const ApplyOptions& options_;
  const bool crlf_aware_;
  std::vector<Placement> placements_;
};

}  // namespace

std::string PatchPlan::summary() const {
  if (ok) {
    return std::to_string(hunks.size()) + (hunks.size() == 1 ? " hunk applies" : " hunks apply");
  }
  for (const HunkReport& h : hunks) {
    if (!h.applies) {
      return "hunk " + std::to_string(h.index + 1) + " (" + h.header +
             ") does not apply: " + h.message;
    }
  }
  return "the patch does not apply";
}

PatchPlan plan_patch(std::string_view text, const FilePatch& patch, const ApplyOptions& options) {
  return Applier(text, patch, options).plan();
}

Result<std::string> apply_patch(std::string_view text, const FilePatch& patch,
                                const ApplyOptions& options) {
  PatchPlan plan = plan_patch(text, patch, options);
  if (!plan.ok) return failed_precondition(plan.summary());
  return std::move(plan.new_text);
}

}  // namespace weft::text

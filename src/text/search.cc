#include "weft/text/search.h"

#include <re2/re2.h>

#include <algorithm>
#include <set>

#include "weft/base/utf.h"

namespace weft::text {
namespace {

// Turns match offsets into line/column positions in one left-to-right pass.
class LineCounter {
 public:
  explicit LineCounter(std::string_view text) : text_(text) {}
  void locate(Match& m) {
    // Offsets arrive in increasing order: count newlines since the last one.
    for (size_t i = pos_; i < m.offset; ++i) {
      if (text_[i] == '\n') {
        ++line_;
        line_start_ = i + 1;
      }
    }
    pos_ = m.offset;
    m.line = line_ + 1;
    m.column = m.offset - line_start_ + 1;
  }

 private:
  std::string_view text_;
  size_t pos_ = 0, line_ = 0, line_start_ = 0;
};

std::string replace_occurrences(std::string_view text, std::string_view from, std::string_view to,
                                size_t& count) {
  std::string out;
  count = 0;
  size_t pos = 0;
  while (true) {
    size_t hit = text.find(from, pos);
    if (hit == std::string_view::npos) break;
    out.append(text.substr(pos, hit - pos));
    out.append(to);
    pos = hit + from.size();
    ++count;
  }
  out.append(text.substr(pos));
  return out;
}

// "\n" not already preceded by "\r" becomes "\r\n".
std::string lf_to_crlf(std::string_view s) {
  std::string out;
  out.reserve(s.size() + 8);
  for (size_t i = 0; i < s.size(); ++i) {
    if (s[i] == '\n' && (i == 0 || s[i - 1] != '\r')) out += '\r';
    out += s[i];
  }
  return out;
}

std::string edit_label(size_t i) { return "edit " + std::to_string(i + 1) + ": "; }

}  // namespace

std::vector<Match> find_all(std::string_view text, std::string_view needle, size_t max_matches) {
  std::vector<Match> out;
  if (needle.empty()) return out;
  LineCounter lines(text);
  size_t pos = 0;
  while (max_matches == 0 || out.size() < max_matches) {
    size_t hit = text.find(needle, pos);
    if (hit == std::string_view::npos) break;
    Match m{hit, needle.size(), 0, 0};
    lines.locate(m);
    out.push_back(m);
    pos = hit + needle.size();
  }
  return out;
}

size_t count_occurrences(std::string_view text, std::string_view needle) {
  if (needle.empty()) return 0;
  size_t count = 0;
  for (size_t pos = text.find(needle); pos != std::string_view::npos;
       pos = text.find(needle, pos + needle.size())) {
    ++count;
  }
  return count;
}

Result<std::vector<Match>> find_all_regex(std::string_view text, std::string_view pattern,
                                          const RegexOptions& options) {
  RE2::Options re_options;
  re_options.set_log_errors(false);
  re_options.set_case_sensitive(!options.case_insensitive);
  re_options.set_literal(options.literal);
  // Perl syntax; "(?m)" makes ^ and $ match at line breaks (a literal
  // pattern is quoted by RE2 itself, so the flag group cannot change it).
  std::string full = options.literal ? std::string(pattern) : "(?m)" + std::string(pattern);
  RE2 re(full, re_options);
  if (!re.ok()) {
    return invalid_argument("invalid regular expression '" + std::string(pattern) +
                            "': " + re.error());
  }
  std::vector<Match> out;
  LineCounter lines(text);
  size_t pos = 0;
  while (pos <= text.size() && (options.max_matches == 0 || out.size() < options.max_matches)) {
    re2::StringPiece found;
    if (!re.Match(re2::StringPiece(text.data(), text.size()), pos, text.size(), RE2::UNANCHORED,
                  &found, 1))
      break;
    Match m{static_cast<size_t>(found.data() - text.data()), found.size(), 0, 0};
    lines.locate(m);
    out.push_back(m);
    size_t next = m.offset + m.length;
    if (m.length == 0) {
      // Step over one whole character so an empty match cannot repeat forever.
      if (next >= text.size()) break;
      next += std::max<size_t>(1, utf8_sequence_length(static_cast<unsigned char>(text[next])));
      next = std::min(next, text.size());
    }
    pos = next;
  }
  return out;
}

std::string describe_lines(const std::vector<Match>& matches, size_t max_listed) {
  std::set<size_t> unique;
  for (const Match& m : matches) unique.insert(m.line);
  std::vector<size_t> lines(unique.begin(), unique.end());
  std::string out = lines.size() == 1 ? "line " : "lines ";
  size_t shown = std::min(lines.size(), max_listed);
  for (size_t i = 0; i < shown; ++i) {
    if (i > 0) out += (i + 1 == shown && shown == lines.size()) ? " and " : ", ";
    out += std::to_string(lines[i]);
  }
  if (shown < lines.size()) out += ", ... (" + std::to_string(lines.size() - shown) + " more)";
  return out;
}

Result<EditOutcome> apply_string_edits(std::string_view text,
                                       const std::vector<StringEdit>& edits) {
  EditOutcome outcome;
  std::string current(text);
  for (size_t i = 0; i < edits.size(); ++i) {
    const StringEdit& edit = edits[i];
    if (edit.old_string.empty()) {
      return invalid_argument(edit_label(i) +
                              "old_string is empty; to write a whole file use a "
                              "write tool");
    }
    if (edit.old_string == edit.new_string) {
      return invalid_argument(edit_label(i) + "old_string and new_string are identical");
    }
    std::string old_s = edit.old_string, new_s = edit.new_string;
    bool adapted = false;
    size_t count = count_occurrences(current, old_s);
    if (count == 0 && old_s.find('\n') != std::string::npos &&
        current.find("\r\n") != std::string::npos) {
      std::string crlf_old = lf_to_crlf(old_s);
      if (crlf_old != old_s && (count = count_occurrences(current, crlf_old)) > 0) {
        old_s = std::move(crlf_old);
        new_s = lf_to_crlf(new_s);
        adapted = true;
      }
    }
    if (count == 0) {
      return not_found(edit_label(i) +
                       "old_string was not found in the file (it must match exactly, "
                       "including whitespace and indentation)" +
                       (i > 0 ? "; earlier edits in this call were applied first" : ""));
    }
    if (count > 1 && !edit.replace_all) {
      auto matches = find_all(current, old_s);
      return failed_precondition(edit_label(i) + "old_string matches " + std::to_string(count) +
                                 " times, at " + describe_lines(matches) +
                                 "; include more surrounding lines to make it unique, or set "
                                 "replace_all to replace every occurrence");
    }
    size_t replaced = 0;
    current = replace_occurrences(current, old_s, new_s, replaced);
    outcome.replacements.push_back(replaced);
    outcome.crlf_adapted.push_back(adapted);
  }
  outcome.new_text = std::move(current);
  return outcome;
}

}  // namespace weft::text

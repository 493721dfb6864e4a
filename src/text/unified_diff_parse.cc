// Parsing unified diffs. Outside hunks the parser is lenient (commit
// messages, "diff --git" lines); inside a hunk every line is checked against
// the header's counts, and each error names the patch line (1-based).
#include <charconv>
#include <string>

#include "text/line_ends.h"
#include "weft/text/unified_diff.h"

namespace weft::text {
namespace {

constexpr size_t kMaxLineNumber = size_t{1} << 40;

bool starts_with(std::string_view s, std::string_view prefix) {
  return s.substr(0, prefix.size()) == prefix;
}

// Shows a line in an error message: quoted, at most 60 bytes.
std::string quote(std::string_view line) {
  std::string out = "'";
  out += line.substr(0, 60);
  if (line.size() > 60) out += "...";
  return out + "'";
}

class Parser {
 public:
  Parser(std::string_view patch, const ParseOptions& options) : options_(options) {
    size_t start = 0;
    while (start < patch.size()) {
      size_t nl = patch.find('\n', start);
      size_t end = nl == std::string_view::npos ? patch.size() : nl;
      lines_.push_back(patch.substr(start, end - start));
      start = end + 1;
    }
  }

  Result<std::vector<FilePatch>> parse() {
    std::vector<std::string> preamble;
    while (at_ < lines_.size()) {
      std::string_view line = strip_cr(lines_[at_]);
      if (starts_with(line, "--- ")) {
        WEFT_RETURN_IF_ERROR(parse_file_header(preamble));
      } else if (starts_with(line, "+++ ")) {
        return error(at_, "'+++' file header without a '---' line before it");
      } else if (starts_with(line, "@@")) {
        if (files_.empty()) {
          files_.emplace_back();
          files_.back().preamble = std::move(preamble);
          preamble.clear();
        }
        WEFT_RETURN_IF_ERROR(parse_hunk(files_.back()));
      } else {
        preamble.emplace_back(line);
        ++at_;
      }
    }
    if (files_.empty()) {
      return invalid_argument(
          "no hunks found in the patch: a unified diff needs '--- old' / '+++ new' headers "
          "followed by '@@ -start,count +start,count @@' hunks");
    }
    for (const FilePatch& file : files_) {
      if (file.hunks.empty()) {
        return invalid_argument("file header '--- " + file.old_path + "' / '+++ " + file.new_path +
                                "' has no hunks");
      }
    }
    return std::move(files_);
  }

 private:
  Status error(size_t index, std::string_view what) const {
    return invalid_argument("patch line " + std::to_string(index + 1) + ": " + std::string(what));
  }

  Status parse_file_header(std::vector<std::string>& preamble) {
    if (at_ + 1 >= lines_.size() || !starts_with(strip_cr(lines_[at_ + 1]), "+++ ")) {
      return error(at_, "'---' file header is not followed by a '+++' line");
    }
    FilePatch file;
    WEFT_ASSIGN_OR_RETURN(file.old_path, parse_path(at_));
    WEFT_ASSIGN_OR_RETURN(file.new_path, parse_path(at_ + 1));
    file.preamble = std::move(preamble);
    preamble.clear();
    at_ += 2;
    if (at_ >= lines_.size() || !starts_with(strip_cr(lines_[at_]), "@@")) {
      return error(at_ < lines_.size() ? at_ : at_ - 1,
                   "expected a '@@ -start,count +start,count @@' hunk header after the file "
                   "headers");
    }
    files_.push_back(std::move(file));
    return Status();
  }

  // The path of a "--- " / "+++ " line: up to a tab (a timestamp follows),
  // C-style quoted paths unquoted.
  Result<std::string> parse_path(size_t index) const {
    std::string_view rest = strip_cr(lines_[index]).substr(4);
    size_t tab = rest.find('\t');
    if (tab != std::string_view::npos) rest = rest.substr(0, tab);
    if (rest.size() >= 2 && rest.front() == '"' && rest.back() == '"') {
      return unquote(rest.substr(1, rest.size() - 2), index);
    }
    while (!rest.empty() && rest.back() == ' ') rest.remove_suffix(1);
    if (rest.empty()) return error(index, "file header names no path");
    return std::string(rest);
  }

  Result<std::string> unquote(std::string_view s, size_t index) const {
    std::string out;
    for (size_t i = 0; i < s.size(); ++i) {
      if (s[i] != '\\') {
        out += s[i];
        continue;
      }
      if (++i >= s.size()) return error(index, "quoted path ends with a lone backslash");
      char c = s[i];
      if (c >= '0' && c <= '7') {
        int value = 0, digits = 0;
        for (; digits < 3 && i < s.size() && s[i] >= '0' && s[i] <= '7'; ++digits, ++i) {
          value = value * 8 + (s[i] - '0');
        }
        --i;
        out += static_cast<char>(value & 0xFF);
      } else {
        switch (c) {
          case 'n':
            out += '\n';
            break;
          case 't':
            out += '\t';
            break;
          case 'r':
            out += '\r';
            break;
          case '"':
            out += '"';
            break;
          case '\\':
            out += '\\';
            break;
          default:
            return error(index, std::string("unknown escape '\\") + c + "' in quoted path");
        }
      }
    }
    if (out.empty()) return error(index, "file header names no path");
    return out;
  }

  // Reads "N" or "N,M" from `s` at `pos`.
  static bool read_range(std::string_view s, size_t& pos, size_t& start, size_t& count) {
    auto read_number = [&](size_t& value) {
      const char* begin = s.data() + pos;
      auto [ptr, ec] = std::from_chars(begin, s.data() + s.size(), value);
      if (ec != std::errc() || ptr == begin || value > kMaxLineNumber) return false;
      pos += static_cast<size_t>(ptr - begin);
      return true;
    };
    if (!read_number(start)) return false;
    count = 1;
    if (pos < s.size() && s[pos] == ',') {
      ++pos;
      if (!read_number(count)) return false;
    }
    return true;
  }

  Status parse_header(size_t index, Hunk& hunk) const {
    std::string_view s = strip_cr(lines_[index]);
    const std::string what =
        "malformed hunk header " + quote(s) + ": expected '@@ -start[,count] +start[,count] @@'";
    if (!starts_with(s, "@@ -")) return error(index, what);
    size_t pos = 4;
    if (!read_range(s, pos, hunk.old_start, hunk.old_count)) return error(index, what);
    if (s.substr(pos, 2) != " +") return error(index, what);
    pos += 2;
    if (!read_range(s, pos, hunk.new_start, hunk.new_count)) return error(index, what);
    if (s.substr(pos, 3) != " @@") return error(index, what);
    pos += 3;
    if (pos < s.size()) {
      if (s[pos] != ' ') return error(index, what);
      std::string_view section = s.substr(pos + 1);
      while (!section.empty() && section.back() == '\r') section.remove_suffix(1);
      hunk.section = std::string(section);
    }
    if ((hunk.old_start == 0 && hunk.old_count != 0) ||
        (hunk.new_start == 0 && hunk.new_count != 0)) {
      return error(index, "hunk header " + quote(s) + " starts at line 0 with a non-zero count");
    }
    return Status();
  }

  Status parse_hunk(FilePatch& file) {
    const size_t header_index = at_;
    Hunk hunk;
    WEFT_RETURN_IF_ERROR(parse_header(at_, hunk));
    if (!file.hunks.empty()) {
      const Hunk& prev = file.hunks.back();
      if (hunk.old_start < prev.old_start + prev.old_count) {
        return error(at_, "hunk " + hunk.header() + " starts before the previous hunk " +
                              prev.header() + " ends (misordered or overlapping hunks)");
      }
    }
    ++at_;
    size_t old_left = hunk.old_count, new_left = hunk.new_count;
    bool old_ended = false, new_ended = false;  // a "\ No newline" closed that side
    while (old_left > 0 || new_left > 0 || next_is_marker()) {
      if (at_ >= lines_.size()) {
        return error(header_index, "the patch ends inside hunk " + hunk.header() + ": " +
                                       std::to_string(old_left) + " old and " +
                                       std::to_string(new_left) + " new lines are missing");
      }
      std::string_view line = lines_[at_];
      char kind = line.empty() ? ' ' : line[0];
      if (line.empty() && !options_.empty_line_is_context) kind = '?';
      if (line == "\r" && options_.empty_line_is_context) kind = ' ', line = " \r";
      if (kind == '\\') {
        WEFT_RETURN_IF_ERROR(mark_no_newline(hunk, old_ended, new_ended));
        ++at_;
        continue;
      }
      if (kind != ' ' && kind != '-' && kind != '+') {
        return error(at_, "unexpected line " + quote(line) + " in hunk " + hunk.header() +
                              " (each line must start with ' ', '-', '+' or '\\'; " +
                              std::to_string(old_left) + " old and " + std::to_string(new_left) +
                              " new lines were still expected)");
      }
      bool uses_old = kind != '+', uses_new = kind != '-';
      if ((uses_old && old_left == 0) || (uses_new && new_left == 0)) {
        return error(at_, "hunk " + hunk.header() + " has more " +
                              (uses_old && old_left == 0 ? "old" : "new") +
                              " lines than its header says");
      }
      if ((uses_old && old_ended) || (uses_new && new_ended)) {
        return error(at_, "line after '\\ No newline at end of file' on the same side");
      }
      if (uses_old) --old_left;
      if (uses_new) --new_left;
      hunk.lines.push_back({kind, std::string(line.empty() ? "" : line.substr(1)), false});
      ++at_;
    }
    file.hunks.push_back(std::move(hunk));
    return Status();
  }

  bool next_is_marker() const {
    return at_ < lines_.size() && !lines_[at_].empty() && lines_[at_][0] == '\\';
  }

  Status mark_no_newline(Hunk& hunk, bool& old_ended, bool& new_ended) const {
    if (hunk.lines.empty() || hunk.lines.back().no_newline) {
      return error(at_, "'\\ No newline at end of file' does not follow a hunk line");
    }
    HunkLine& last = hunk.lines.back();
    last.no_newline = true;
    if (last.kind != '+') old_ended = true;
    if (last.kind != '-') new_ended = true;
    return Status();
  }

  const ParseOptions& options_;
  std::vector<std::string_view> lines_;
  size_t at_ = 0;
  std::vector<FilePatch> files_;
};

}  // namespace

Result<std::vector<FilePatch>> parse_unified_diff(std::string_view patch,
                                                  const ParseOptions& options) {
  return Parser(patch, options).parse();
}

}  // namespace weft::text

#include "common.h"

#include <algorithm>
#include <cstring>
#include <random>

#include "weft/base/utf.h"

namespace weft::fs::internal {
namespace {

// The line containing byte `pos`: [start, end) without its "\n" (or "\r\n").
void line_around(std::string_view data, size_t pos, size_t* start, size_t* end, size_t* next) {
  size_t nl = pos == 0 ? std::string_view::npos : data.rfind('\n', pos - 1);
  *start = nl == std::string_view::npos ? 0 : nl + 1;
  size_t e = data.find('\n', pos);
  *next = e == std::string_view::npos ? data.size() : e + 1;
  if (e == std::string_view::npos) e = data.size();
  if (e > *start && data[e - 1] == '\r') --e;
  *end = e;
}

bool is_literal(std::string_view pattern) {
  for (char c : pattern) {
    if (std::strchr("\\^$.|?*+()[]{}", c) != nullptr) return false;
  }
  return !pattern.empty();
}

int64_t code_points(std::string_view s) {
  int64_t n = 0;
  for (char c : s) n += (static_cast<unsigned char>(c) & 0xC0) != 0x80;
  return n;
}

}  // namespace

Status check_page_args(int64_t offset, std::optional<int64_t> limit) {
  if (offset < 0) return invalid_argument("offset " + std::to_string(offset) + " is negative");
  if (limit && *limit <= 0) {
    return invalid_argument("limit " + std::to_string(*limit) + " must be positive");
  }
  return Status();
}

bool Utf8Stream::feed(std::string_view s) {
  if (!carry_.empty()) {
    size_t want = utf8_sequence_length(static_cast<unsigned char>(carry_[0]));
    size_t take = std::min(want - carry_.size(), s.size());
    carry_.append(s.substr(0, take));
    s.remove_prefix(take);
    if (carry_.size() < want) return true;
    if (!is_valid_utf8(carry_)) return false;
    carry_.clear();
  }
  // Hold back a character cut by the end of this piece.
  size_t tail = 0;
  for (size_t k = 1; k <= std::min<size_t>(3, s.size()); ++k) {
    unsigned char c = static_cast<unsigned char>(s[s.size() - k]);
    if ((c & 0xC0) == 0x80) continue;
    if (c >= 0x80 && utf8_sequence_length(c) > k) tail = k;
    break;
  }
  if (!is_valid_utf8(s.substr(0, s.size() - tail))) return false;
  carry_.assign(s.substr(s.size() - tail));
  return true;
}

size_t utf8_prefix_length(std::string_view s, size_t max) {
  if (s.size() <= max) return s.size();
  size_t n = max;
  while (n > 0 && (static_cast<unsigned char>(s[n]) & 0xC0) == 0x80) --n;
  return n;
}

namespace {

// One pass over a file's chunks for page_lines_stream.
class LinePager {
 public:
  LinePager(ReadResult* r, const FsLimits& limits)
      : r_(*r),
        max_line_(static_cast<size_t>(std::max<int64_t>(limits.max_line_bytes, 16))),
        max_bytes_(static_cast<size_t>(std::max<int64_t>(limits.max_read_bytes, 1))) {}

  void feed(std::string_view chunk) {
    size_t pos = 0;
    while (pos < chunk.size()) {
      if (!in_page()) {  // before or after the page: count lines only
        const char* nl =
            static_cast<const char*>(std::memchr(chunk.data() + pos, '\n', chunk.size() - pos));
        if (!nl) {
          line_len_ += chunk.size() - pos;
          return;
        }
        pos = static_cast<size_t>(nl - chunk.data()) + 1;
        end_line(false);
        continue;
      }
      size_t nl = chunk.find('\n', pos);
      size_t end = nl == std::string_view::npos ? chunk.size() : nl;
      std::string_view seg = chunk.substr(pos, end - pos);
      if (line_.size() < max_line_ + 4) {
        line_.append(seg.substr(0, max_line_ + 4 - line_.size()));
      }
      line_len_ += seg.size();
      if (!seg.empty()) last_ = seg.back();
      if (nl == std::string_view::npos) return;
      pos = nl + 1;
      end_line(true);
    }
  }

  void finish() {
    if (line_len_ > 0) end_line(false);
  }

 private:
  bool in_page() const {
    return !full_ && r_.total_lines >= r_.offset && r_.total_lines < r_.offset + r_.limit;
  }

  // Ends the current line (`newline`: it ended with "\n").
  void end_line(bool newline) {
    if (in_page()) {
      bool crlf = newline && last_ == '\r';
      size_t len = line_len_ - (crlf ? 1 : 0);  // without the terminator
      size_t keep = len > max_line_ ? utf8_prefix_length(line_, max_line_) : len;
      size_t size = keep + (newline ? (crlf ? 2 : 1) : 0);
      if (r_.lines > 0 && r_.content.size() + size > max_bytes_) {
        full_ = true;  // left for the next page
      } else {
        r_.content.append(line_, 0, keep);
        if (crlf) r_.content += '\r';
        if (newline) r_.content += '\n';
        if (keep < len) r_.cut_lines.push_back({r_.total_lines, static_cast<int64_t>(len)});
        ++r_.lines;
      }
    }
    line_.clear();
    line_len_ = 0;
    last_ = 0;
    ++r_.total_lines;
  }

  ReadResult& r_;
  const size_t max_line_;
  const size_t max_bytes_;
  std::string line_;     // the head of the current line, when it is in the page
  size_t line_len_ = 0;  // bytes of the current line so far (without "\n")
  char last_ = 0;        // its last byte
  bool full_ = false;    // max_bytes_ reached
};

}  // namespace

Result<ReadResult> page_lines_stream(const ChunkSource& next, std::string path, int64_t offset,
                                     std::optional<int64_t> limit, const FsLimits& limits) {
  WEFT_RETURN_IF_ERROR(check_page_args(offset, limit));
  ReadResult r;
  r.path = std::move(path);
  r.offset = offset;
  r.limit = limit ? *limit : limits.default_read_lines;
  LinePager pager(&r, limits);
  Utf8Stream utf8;
  for (;;) {
    WEFT_ASSIGN_OR_RETURN(std::string_view chunk, next());
    if (chunk.empty()) break;
    if (!utf8.feed(chunk)) {
      return invalid_argument("'" + r.path +
                              "' is not UTF-8 text; use read_bytes for binary files");
    }
    pager.feed(chunk);
  }
  if (!utf8.finish()) {
    return invalid_argument("'" + r.path + "' is not UTF-8 text; use read_bytes for binary files");
  }
  pager.finish();
  r.truncated = offset + r.lines < r.total_lines;
  return r;
}

Result<ReadResult> page_lines(std::string_view data, std::string path, int64_t offset,
                              std::optional<int64_t> limit, const FsLimits& limits) {
  bool given = false;
  auto once = [&]() -> Result<std::string_view> {
    if (given) return std::string_view();
    given = true;
    return data;
  };
  return page_lines_stream(once, std::move(path), offset, limit, limits);
}

Result<ReadBytesResult> page_bytes(std::string_view data, std::string path, int64_t offset,
                                   std::optional<int64_t> limit) {
  WEFT_RETURN_IF_ERROR(check_page_args(offset, limit));
  ReadBytesResult r;
  r.path = std::move(path);
  r.size_bytes = static_cast<int64_t>(data.size());
  r.offset = offset;
  size_t from = std::min(static_cast<size_t>(offset), data.size());
  size_t count =
      limit ? std::min(static_cast<size_t>(*limit), data.size() - from) : data.size() - from;
  r.content.assign(data.substr(from, count));
  r.limit = limit ? *limit : static_cast<int64_t>(count);
  r.truncated = from + count < data.size();
  return r;
}

Status check_write_content(std::string_view content, bool text, const FsLimits& limits) {
  if (text) {
    WEFT_RETURN_IF_ERROR(validate_utf8(content).with_context(
        "write() takes UTF-8 text (use write_bytes for binary content)"));
  }
  int64_t size = text ? code_points(content) : static_cast<int64_t>(content.size());
  if (size > limits.max_write_chars) {
    return resource_exhausted("content of " + std::to_string(size) +
                              (text ? " characters" : " bytes") + " exceeds the limit of " +
                              std::to_string(limits.max_write_chars) +
                              " per write; split it into several appends");
  }
  return Status();
}

bool looks_binary(std::string_view data) {
  if (data.empty()) return false;  // memchr must not see the null data() of an empty view
  return std::memchr(data.data(), 0, std::min<size_t>(data.size(), 8192)) != nullptr;
}

Result<std::unique_ptr<GrepQuery>> GrepQuery::compile(std::string_view pattern,
                                                      const std::optional<std::string>& glob,
                                                      std::optional<int64_t> max_matches,
                                                      const FsLimits& limits) {
  if (max_matches && *max_matches <= 0) {
    return invalid_argument("max_matches " + std::to_string(*max_matches) + " must be positive");
  }
  if (pattern.empty()) return invalid_argument("grep pattern is empty");
  auto q = std::make_unique<GrepQuery>();
  RE2::Options opts;
  opts.set_log_errors(false);
  opts.set_max_mem(64 << 20);
  q->re_ = std::make_unique<RE2>("(?m)" + std::string(pattern), opts);
  if (!q->re_->ok()) {
    return invalid_argument("grep pattern '" + std::string(pattern) +
                            "' is not a valid RE2 regex: " + q->re_->error());
  }
  if (is_literal(pattern)) {
    q->pure_literal_ = true;
    q->prefilter_.emplace(std::string(pattern));
  } else if (std::string lit = required_literal(pattern); !lit.empty()) {
    q->prefilter_.emplace(std::move(lit));
  }
  if (glob && !glob->empty()) {
    WEFT_ASSIGN_OR_RETURN(GlobPattern g, GlobPattern::compile(*glob));
    q->glob_ = std::move(g);
  }
  int64_t max =
      max_matches ? std::min(*max_matches, limits.max_grep_matches) : limits.max_grep_matches;
  q->max_ = static_cast<size_t>(std::max<int64_t>(max, 1));
  q->max_line_bytes_ = static_cast<size_t>(std::max<int64_t>(limits.max_line_bytes, 16));
  return q;
}

bool GrepQuery::selects(std::string_view rel, std::string_view name) const {
  if (!glob_) return true;
  return glob_->is_single_segment() ? glob_->matches(name) : glob_->matches(rel);
}

void GrepQuery::add_match(std::string_view line, size_t m_start, size_t m_end, int64_t line_number,
                          int64_t line_prefix, int64_t line_length, const std::string& path,
                          std::vector<GrepMatch>* out) const {
  GrepMatch m;
  m.path = path;
  m.line_number = line_number;
  m.line_length_bytes = line_length;
  size_t begin = 0;
  size_t end = line.size();
  if (line.size() > max_line_bytes_) {  // a window around the match
    begin = m_start > max_line_bytes_ / 4 ? m_start - max_line_bytes_ / 4 : 0;
    while (begin > 0 && (static_cast<unsigned char>(line[begin]) & 0xC0) == 0x80) --begin;
    end = begin + utf8_prefix_length(line.substr(begin), max_line_bytes_);
  }
  std::string_view shown = line.substr(begin, end - begin);
  m.line_content.assign(shown);
  m.line_content_offset_byte = line_prefix + static_cast<int64_t>(begin);
  m_start -= begin;
  m_end = std::min(m_end, end) - begin;
  m.match_start_byte = static_cast<int64_t>(m_start);
  m.match_end_byte = static_cast<int64_t>(m_end);
  m.match_start = code_points(shown.substr(0, m_start));
  m.match_end = m.match_start + code_points(shown.substr(m_start, m_end - m_start));
  out->push_back(std::move(m));
}

bool GrepQuery::match_line(std::string_view text, bool context_before, bool at_end, size_t* m_start,
                           size_t* m_end) const {
  // RE2 judges ^ and $ by the bytes around [from, to) in `text`: a context
  // byte before keeps ^ from holding at a window's start, one left after
  // keeps $ from holding at its end.
  size_t from = context_before ? 1 : 0;
  size_t to = at_end || text.size() <= from ? text.size() : text.size() - 1;
  if (to < from) return false;
  re2::StringPiece sub;
  if (!re_->Match(re2::StringPiece(text.data(), text.size()), from, to, RE2::UNANCHORED, &sub, 1)) {
    return false;
  }
  *m_start = static_cast<size_t>(sub.data() - text.data());
  *m_end = *m_start + sub.size();
  return true;
}

void GrepQuery::search(std::string_view data, const std::string& path, std::vector<GrepMatch>* out,
                       int64_t first_line, int64_t line_prefix) const {
  if (out->size() >= max_ || (first_line == 1 && line_prefix == 0 && looks_binary(data))) return;
  size_t pos = 0;
  int64_t line_number = first_line;
  size_t counted_to = 0;  // line_number is the number of the line starting at counted_to
  while (pos <= data.size() && out->size() < max_) {
    size_t hit;
    if (prefilter_) {
      hit = prefilter_->find(data, pos);
      if (hit == std::string_view::npos) return;
    } else {
      re2::StringPiece sub;
      re2::StringPiece text(data.data() + pos, data.size() - pos);
      if (!re_->Match(text, 0, text.size(), RE2::UNANCHORED, &sub, 1)) return;
      hit = static_cast<size_t>(sub.data() - data.data());
    }
    size_t start, end, next;
    line_around(data, hit, &start, &end, &next);
    std::string_view line = data.substr(start, end - start);
    size_t m_start = hit - start;
    size_t m_end = m_start;
    bool found = true;
    if (pure_literal_) {
      m_end = m_start + prefilter_->size();
      found = m_end <= line.size();
    } else {
      // Confirm on the line alone: the candidate may come from the prefilter,
      // or be a match spanning lines ([^x], \s) that no single line holds.
      found = match_line(line, false, true, &m_start, &m_end);
    }
    if (found) {
      line_number += std::count(data.begin() + static_cast<ptrdiff_t>(counted_to),
                                data.begin() + static_cast<ptrdiff_t>(start), '\n');
      counted_to = start;
      int64_t prefix = start == 0 ? line_prefix : 0;
      add_match(line, m_start, m_end, line_number, prefix,
                prefix + static_cast<int64_t>(line.size()), path, out);
    }
    if (next >= data.size()) return;
    pos = next;
  }
}

Status GrepQuery::search_stream(const ChunkSource& next, const std::string& path,
                                std::vector<GrepMatch>* out) const {
  // `buf` holds the unsearched part of the file from the start of the current
  // line, or, once a long line has been searched in part, from one context
  // byte before its unsearched rest (`line_prefix` bytes into the line).
  std::string buf;
  int64_t line_number = 1;
  int64_t line_prefix = 0;
  bool skipping = false;  // the current long line has its match: skip to its end
  bool first = true;
  while (out->size() < max_ || skipping) {
    WEFT_ASSIGN_OR_RETURN(std::string_view chunk, next());
    const bool eof = chunk.empty();
    if (first && looks_binary(chunk)) return Status();
    first = false;
    if (skipping) {
      size_t nl = chunk.find('\n');
      size_t rest = nl == std::string_view::npos ? chunk.size() : nl;
      if (rest > 0 && chunk[rest - 1] == '\r' && nl != std::string_view::npos) --rest;
      out->back().line_length_bytes += static_cast<int64_t>(rest);
      if (nl == std::string_view::npos && !eof) continue;
      skipping = false;
      if (eof || out->size() >= max_) return Status();
      chunk.remove_prefix(nl + 1);
      ++line_number;
      line_prefix = 0;
      buf.clear();
    }
    buf.append(chunk);
    size_t ctx = line_prefix > 0 ? 1 : 0;
    size_t last_nl = eof ? buf.size() : buf.rfind('\n');
    if (last_nl != std::string::npos && last_nl >= ctx) {
      size_t region_end = eof ? buf.size() : last_nl + 1;
      std::string_view region(buf.data(), region_end);
      if (ctx) {  // the rest of a long line first, with its context byte
        size_t nl = region.find('\n', ctx);
        size_t end = nl == std::string_view::npos ? region.size() : nl;
        std::string_view tail = region.substr(0, end);
        if (!tail.empty() && tail.back() == '\r' && nl != std::string_view::npos) {
          tail.remove_suffix(1);
        }
        size_t ms, me;
        if (match_line(tail, true, true, &ms, &me)) {
          std::string_view line = tail.substr(1);
          add_match(line, ms - 1, me - 1, line_number, line_prefix,
                    line_prefix + static_cast<int64_t>(line.size()), path, out);
        }
        region.remove_prefix(std::min(region.size(), end + 1));
        if (nl != std::string_view::npos) ++line_number;
        line_prefix = 0;
      }
      if (!region.empty() && out->size() < max_) {
        search(region, path, out, line_number, 0);
        line_number += std::count(region.begin(), region.end(), '\n');
      }
      buf.erase(0, region_end);
      if (eof) return Status();
      continue;
    }
    if (eof) return Status();
    if (buf.size() < kMaxSearchedLine) continue;
    // A line longer than kMaxSearchedLine: search what is here as a window.
    size_t ms, me;
    if (match_line(buf, ctx == 1, false, &ms, &me)) {
      std::string_view line = std::string_view(buf).substr(ctx);
      add_match(line, ms - ctx, me - ctx, line_number, line_prefix,
                line_prefix + static_cast<int64_t>(line.size()), path, out);
      skipping = true;
      buf.clear();
      continue;
    }
    // Keep an overlap (and one context byte before it) for the next window.
    size_t keep = kWindowOverlap + 1;
    line_prefix += static_cast<int64_t>(buf.size() - keep - ctx) + 1;
    buf.erase(0, buf.size() - keep);
  }
  return Status();
}

namespace {

// How common a byte is in source text and prose (higher = more common).
int byte_rank(unsigned char c) {
  static constexpr std::string_view kCommon = " etaoinsrhldcumfpgwybvkxjqz";
  if (c >= 'a' && c <= 'z') return 200 - static_cast<int>(kCommon.find(static_cast<char>(c)));
  if (c >= 'A' && c <= 'Z') return 140 - static_cast<int>(kCommon.find(static_cast<char>(c + 32)));
  if (c == ' ') return 255;
  if (c >= '0' && c <= '9') return 120;
  if (c == '_' || c == '(' || c == ')' || c == ';' || c == ',' || c == '*' || c == '.') return 150;
  if (c == '\t' || c == '\n') return 220;
  return c >= 0x80 ? 60 : 90;
}

}  // namespace

LiteralFinder::LiteralFinder(std::string needle) : needle_(std::move(needle)) {
  for (size_t i = 1; i < needle_.size(); ++i) {
    if (byte_rank(static_cast<unsigned char>(needle_[i])) <
        byte_rank(static_cast<unsigned char>(needle_[rare_]))) {
      rare_ = i;
    }
  }
}

size_t LiteralFinder::find(std::string_view hay, size_t from) const {
  const size_t n = needle_.size();
  if (n == 0) return from <= hay.size() ? from : std::string_view::npos;
  const char rare = needle_[rare_];
  while (from + n <= hay.size()) {
    const void* p = std::memchr(hay.data() + from + rare_, rare, hay.size() - from - n + 1);
    if (!p) return std::string_view::npos;
    size_t start = static_cast<size_t>(static_cast<const char*>(p) - hay.data()) - rare_;
    if (std::memcmp(hay.data() + start, needle_.data(), n) == 0) return start;
    from = start + 1;
  }
  return std::string_view::npos;
}

std::string required_literal(std::string_view p) {
  if (p.find('|') != std::string_view::npos || p.find("(?") != std::string_view::npos) return "";
  std::string best, cur;
  int depth = 0;
  auto end_run = [&] {
    if (cur.size() > best.size()) best = cur;
    cur.clear();
  };
  for (size_t i = 0; i < p.size(); ++i) {
    char c = p[i];
    if (c == '\\') {
      end_run();
      ++i;
    } else if (c == '[') {
      end_run();
      size_t j = i + 1;
      if (j < p.size() && p[j] == '^') ++j;
      if (j < p.size() && p[j] == ']') ++j;
      while (j < p.size() && p[j] != ']') j += p[j] == '\\' ? 2 : 1;
      i = j;
    } else if (c == '(' || c == ')') {
      depth += c == '(' ? 1 : -1;
      end_run();
    } else if (c == '*' || c == '?' || c == '{') {
      if (!cur.empty()) cur.pop_back();  // the quantified byte may be absent
      end_run();
      if (c == '{') {
        while (i < p.size() && p[i] != '}') ++i;
      }
    } else if (c == '+' || c == '.' || c == '^' || c == '$') {
      end_run();
    } else if (depth == 0) {
      cur.push_back(c);
    }
  }
  end_run();
  return best.size() >= 3 ? best : "";
}

std::string random_uuid() {
  static thread_local std::mt19937_64 rng{std::random_device{}()};
  uint64_t hi = rng(), lo = rng();
  hi = (hi & 0xFFFFFFFFFFFF0FFFull) | 0x0000000000004000ull;
  lo = (lo & 0x3FFFFFFFFFFFFFFFull) | 0x8000000000000000ull;
  char buf[40];
  std::snprintf(buf, sizeof buf, "%08x-%04x-%04x-%04x-%012llx", static_cast<unsigned>(hi >> 32),
                static_cast<unsigned>((hi >> 16) & 0xFFFF), static_cast<unsigned>(hi & 0xFFFF),
                static_cast<unsigned>(lo >> 48),
                static_cast<unsigned long long>(lo & 0xFFFFFFFFFFFFull));
  return buf;
}

}  // namespace weft::fs::internal

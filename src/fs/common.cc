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

Result<ReadResult> page_lines(std::string_view data, std::string path, int64_t offset,
                              std::optional<int64_t> limit, const FsLimits& limits) {
  WEFT_RETURN_IF_ERROR(check_page_args(offset, limit));
  if (!is_valid_utf8(data)) {
    return invalid_argument("'" + path + "' is not UTF-8 text; use read_bytes for binary files");
  }
  ReadResult r;
  r.path = std::move(path);
  r.offset = offset;
  r.limit = limit ? *limit : limits.default_read_lines;
  int64_t line = 0;
  size_t pos = 0;
  size_t begin = std::string_view::npos;
  size_t end = data.size();
  while (pos < data.size()) {
    if (line == offset) begin = pos;
    size_t nl = data.find('\n', pos);
    pos = nl == std::string_view::npos ? data.size() : nl + 1;
    ++line;
    if (line == offset + r.limit) end = pos;
  }
  r.total_lines = line;
  if (begin != std::string_view::npos) r.content.assign(data.substr(begin, end - begin));
  r.truncated = offset + r.limit < r.total_lines;
  return r;
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
  return q;
}

bool GrepQuery::selects(std::string_view rel, std::string_view name) const {
  if (!glob_) return true;
  return glob_->is_single_segment() ? glob_->matches(name) : glob_->matches(rel);
}

void GrepQuery::search(std::string_view data, const std::string& path,
                       std::vector<GrepMatch>* out) const {
  if (out->size() >= max_ || looks_binary(data)) return;
  size_t pos = 0;
  int64_t line_number = 1;
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
      re2::StringPiece sub;
      found = re_->Match(re2::StringPiece(line.data(), line.size()), 0, line.size(),
                         RE2::UNANCHORED, &sub, 1);
      if (found) {
        m_start = static_cast<size_t>(sub.data() - line.data());
        m_end = m_start + sub.size();
      }
    }
    if (found) {
      line_number += std::count(data.begin() + static_cast<ptrdiff_t>(counted_to),
                                data.begin() + static_cast<ptrdiff_t>(start), '\n');
      counted_to = start;
      GrepMatch m;
      m.path = path;
      m.line_number = line_number;
      m.line_content.assign(line);
      m.match_start_byte = static_cast<int64_t>(m_start);
      m.match_end_byte = static_cast<int64_t>(m_end);
      m.match_start = code_points(line.substr(0, m_start));
      m.match_end = m.match_start + code_points(line.substr(m_start, m_end - m_start));
      out->push_back(std::move(m));
    }
    if (next >= data.size()) return;
    pos = next;
  }
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

// Glob matching: braces are expanded at compile time into alternatives, each
// a list of segments; a path is matched segment by segment as a small NFA
// over pattern positions (so "**" costs O(pattern x path), never exponential).
#include "weft/base/glob.h"

#include <string>
#include <vector>

#include "weft/base/utf.h"

namespace weft {
namespace {

constexpr size_t kMaxAlternatives = 256;
constexpr std::string_view kDoubleStar = "**";

// Decodes the code point at text[*i] (invalid bytes decode as themselves) and advances.
uint32_t next_code_point(std::string_view text, size_t* i) {
  auto lead = static_cast<unsigned char>(text[*i]);
  size_t len = utf8_sequence_length(lead);
  if (len == 1 || *i + len > text.size()) {
    ++*i;
    return lead;
  }
  uint32_t cp = lead & (0xFF >> (len + 1));
  for (size_t k = 1; k < len; ++k)
    cp = (cp << 6) | (static_cast<unsigned char>(text[*i + k]) & 0x3F);
  *i += len;
  return cp;
}

// Position after the ']' closing the class that opens at pattern[open], or npos.
size_t class_end(std::string_view pattern, size_t open) {
  size_t i = open + 1;
  if (i < pattern.size() && (pattern[i] == '!' || pattern[i] == '^')) ++i;
  if (i < pattern.size() && pattern[i] == ']') ++i;  // a leading ']' is literal
  for (; i < pattern.size(); ++i) {
    if (pattern[i] == '\\') {
      ++i;
    } else if (pattern[i] == ']') {
      return i + 1;
    }
  }
  return std::string_view::npos;
}

// Does the class pattern[open, end) contain code point `cp`?
bool class_matches(std::string_view pattern, size_t open, size_t end, uint32_t cp) {
  size_t i = open + 1;
  bool negate = false;
  if (pattern[i] == '!' || pattern[i] == '^') {
    negate = true;
    ++i;
  }
  bool found = false;
  bool first = true;
  while (i < end - 1) {
    if (pattern[i] == ']' && !first) break;
    first = false;
    if (pattern[i] == '\\' && i + 1 < end - 1) ++i;
    uint32_t lo = next_code_point(pattern, &i);
    uint32_t hi = lo;
    if (i + 1 < end - 1 && pattern[i] == '-') {
      ++i;
      if (pattern[i] == '\\' && i + 1 < end - 1) ++i;
      hi = next_code_point(pattern, &i);
    }
    if (lo <= cp && cp <= hi) found = true;
  }
  return found != negate;
}

std::vector<std::string> split_segments(std::string_view path) {
  std::vector<std::string> out;
  size_t start = 0;
  while (start <= path.size()) {
    size_t slash = path.find('/', start);
    if (slash == std::string_view::npos) slash = path.size();
    if (slash > start) out.emplace_back(path.substr(start, slash - start));
    start = slash + 1;
  }
  return out;
}

// Expands the first top-level {a,b} group, recursively. kInvalidArgument when
// unbalanced or too many alternatives.
Status expand_braces(const std::string& pattern, std::vector<std::string>* out) {
  size_t open = std::string::npos;
  int depth = 0;
  std::vector<size_t> commas;
  size_t close = std::string::npos;
  for (size_t i = 0; i < pattern.size() && close == std::string::npos; ++i) {
    char c = pattern[i];
    if (c == '\\') {
      ++i;
    } else if (c == '[') {
      size_t end = class_end(pattern, i);
      if (end != std::string::npos) i = end - 1;
    } else if (c == '{') {
      if (depth++ == 0) open = i;
    } else if (c == '}' && depth > 0) {
      if (--depth == 0) close = i;
    } else if (c == ',' && depth == 1) {
      commas.push_back(i);
    }
  }
  if (depth > 0) return invalid_argument("glob pattern '" + pattern + "' has an unclosed '{'");
  if (open == std::string::npos) {
    if (out->size() >= kMaxAlternatives) {
      return invalid_argument("glob pattern expands to more than 256 alternatives");
    }
    out->push_back(pattern);
    return Status();
  }
  std::string prefix = pattern.substr(0, open);
  std::string suffix = pattern.substr(close + 1);
  size_t start = open + 1;
  commas.push_back(close);
  for (size_t comma : commas) {
    std::string alt = prefix + pattern.substr(start, comma - start) + suffix;
    WEFT_RETURN_IF_ERROR(expand_braces(alt, out));
    start = comma + 1;
  }
  return Status();
}

// Adds to `states` every position reachable by letting a "**" match nothing.
void close_over_double_star(const std::vector<std::string>& segs, std::vector<char>* states) {
  for (size_t p = 0; p < segs.size(); ++p) {
    if ((*states)[p] && segs[p] == kDoubleStar) (*states)[p + 1] = 1;
  }
}

// Runs the segment NFA over `path_segs`; returns the final state set.
std::vector<char> run(const std::vector<std::string>& segs, const std::vector<std::string>& path) {
  std::vector<char> states(segs.size() + 1, 0);
  states[0] = 1;
  close_over_double_star(segs, &states);
  for (const std::string& name : path) {
    std::vector<char> next(segs.size() + 1, 0);
    bool any = false;
    for (size_t p = 0; p < segs.size(); ++p) {
      if (!states[p]) continue;
      if (segs[p] == kDoubleStar) {
        next[p] = 1;
        any = true;
      } else if (glob_match_segment(segs[p], name)) {
        next[p + 1] = 1;
        any = true;
      }
    }
    if (!any) return next;
    close_over_double_star(segs, &next);
    states = std::move(next);
  }
  return states;
}

}  // namespace

bool glob_match_segment(std::string_view pattern, std::string_view name) {
  size_t p = 0;
  size_t n = 0;
  size_t star_p = std::string_view::npos;
  size_t star_n = 0;
  while (n < name.size()) {
    if (p < pattern.size()) {
      char c = pattern[p];
      if (c == '*') {
        star_p = ++p;
        star_n = n;
        continue;
      }
      if (c == '?') {
        next_code_point(name, &n);
        ++p;
        continue;
      }
      if (c == '[') {
        size_t end = class_end(pattern, p);
        if (end != std::string_view::npos) {
          size_t after = n;
          uint32_t cp = next_code_point(name, &after);
          if (class_matches(pattern, p, end, cp)) {
            p = end;
            n = after;
            continue;
          }
        } else if (name[n] == '[') {
          ++p;
          ++n;
          continue;
        }
      } else if (c == '\\' && p + 1 < pattern.size()) {
        if (pattern[p + 1] == name[n]) {
          p += 2;
          ++n;
          continue;
        }
      } else if (c == name[n]) {
        ++p;
        ++n;
        continue;
      }
    }
    if (star_p == std::string_view::npos) return false;
    next_code_point(name, &star_n);  // let the last '*' swallow one more character
    n = star_n;
    p = star_p;
  }
  while (p < pattern.size() && pattern[p] == '*') ++p;
  return p == pattern.size();
}

Result<GlobPattern> GlobPattern::compile(std::string_view pattern) {
  if (pattern.empty()) return invalid_argument("glob pattern is empty");
  for (size_t i = 0; i < pattern.size(); ++i) {
    if (pattern[i] == '\\') {
      if (i + 1 == pattern.size()) {
        return invalid_argument("glob pattern '" + std::string(pattern) + "' ends with '\\'");
      }
      ++i;
    } else if (pattern[i] == '[' && class_end(pattern, i) == std::string_view::npos) {
      return invalid_argument("glob pattern '" + std::string(pattern) + "' has an unclosed '['");
    } else if (pattern[i] == '[') {
      i = class_end(pattern, i) - 1;
    }
  }
  std::vector<std::string> expanded;
  WEFT_RETURN_IF_ERROR(expand_braces(std::string(pattern), &expanded));
  GlobPattern out;
  out.pattern_ = std::string(pattern);
  for (const std::string& alt : expanded) {
    Alternative a;
    for (std::string& seg : split_segments(alt)) {
      if (seg == kDoubleStar && !a.segments.empty() && a.segments.back() == kDoubleStar) continue;
      a.segments.push_back(std::move(seg));
    }
    if (a.segments.size() != 1 || a.segments[0] == kDoubleStar) out.single_segment_ = false;
    out.alternatives_.push_back(std::move(a));
  }
  return out;
}

bool GlobPattern::matches(std::string_view path) const {
  std::vector<std::string> segs = split_segments(path);
  for (const Alternative& alt : alternatives_) {
    if (run(alt.segments, segs)[alt.segments.size()]) return true;
  }
  return false;
}

bool GlobPattern::could_match_below(std::string_view dir) const {
  std::vector<std::string> segs = split_segments(dir);
  for (const Alternative& alt : alternatives_) {
    std::vector<char> states = run(alt.segments, segs);
    for (size_t p = 0; p < alt.segments.size(); ++p) {
      if (states[p]) return true;
    }
  }
  return false;
}

}  // namespace weft

// IgnoreRules: gitignore lines compiled into patterns of four kinds, so that
// the common ones (a name, "*.ext") cost a hash lookup or a suffix compare;
// anchored patterns are matched segment by segment, "**" as a small NFA.
#include "weft/source/ignore.h"

#include <optional>
#include <string>
#include <utility>

#include "weft/base/glob.h"
#include "weft/base/input_file.h"
#include "weft/source/rules.h"

namespace weft::source {
namespace {

constexpr std::string_view kGitDir = ".git";
constexpr std::string_view kGitIgnoreFileName = ".gitignore";
constexpr std::string_view kDoubleStar = "**";
// An anchored pattern's positions are bits of a uint64_t.
constexpr size_t kMaxSegments = 63;
constexpr int64_t kMaxIgnoreFileBytes = int64_t{1} << 20;
constexpr size_t kMaxProblems = 100;

bool is_wildcard(char c) { return c == '*' || c == '?' || c == '['; }

// The text `segment` matches literally (escapes removed), or nullopt when it
// has an unescaped wildcard.
std::optional<std::string> literal_text(std::string_view segment) {
  std::string out;
  out.reserve(segment.size());
  for (size_t i = 0; i < segment.size(); ++i) {
    if (segment[i] == '\\' && i + 1 < segment.size()) {
      out += segment[++i];
    } else if (is_wildcard(segment[i])) {
      return std::nullopt;
    } else {
      out += segment[i];
    }
  }
  return out;
}

// Empty when `glob` is a pattern glob_match_segment reads as git does; else
// what is wrong with it.
std::string glob_problem(std::string_view glob) {
  for (size_t i = 0; i < glob.size(); ++i) {
    if (glob[i] == '\\') {
      if (i + 1 == glob.size()) return "ends with a lone '\\'";
      ++i;
    } else if (glob[i] == '[') {
      size_t j = i + 1;
      if (j < glob.size() && (glob[j] == '!' || glob[j] == '^')) ++j;
      if (j < glob.size() && glob[j] == ']') ++j;  // a leading ']' is literal
      while (j < glob.size() && glob[j] != ']') j += glob[j] == '\\' ? 2 : 1;
      if (j >= glob.size()) return "has an unclosed '['";
      i = j;
    }
  }
  return "";
}

// Git's trailing-space rule: spaces at the end go unless the first of them is
// escaped with a backslash.
std::string_view trim_trailing_spaces(std::string_view line) {
  size_t keep = line.size();
  for (size_t i = 0; i < line.size(); ++i) {
    if (line[i] == '\\' && i + 1 < line.size()) {
      ++i;
      keep = line.size();
    } else if (line[i] == ' ') {
      if (keep == line.size()) keep = i;
    } else {
      keep = line.size();
    }
  }
  return line.substr(0, keep);
}

// Calls fn on each non-empty '/'-separated segment of `path`, while it returns true.
template <typename Fn>
bool for_each_segment(std::string_view path, Fn fn) {
  size_t start = 0;
  while (start <= path.size()) {
    size_t slash = path.find('/', start);
    if (slash == std::string_view::npos) slash = path.size();
    if (slash > start && !fn(path.substr(start, slash - start))) return false;
    start = slash + 1;
  }
  return true;
}

// A pattern's segments, consecutive "**" collapsed into one.
std::vector<std::string> pattern_segments(std::string_view pattern) {
  std::vector<std::string> out;
  for_each_segment(pattern, [&](std::string_view seg) {
    if (!(seg == kDoubleStar && !out.empty() && out.back() == kDoubleStar)) out.emplace_back(seg);
    return true;
  });
  return out;
}

// Git's "**" rules over whole segments: a leading or middle "**" matches zero
// or more segments, a trailing one one or more. Bit p of a state set means
// "segments[0, p) are matched".
bool match_segments(const std::vector<std::string>& segments, std::string_view path) {
  const size_t m = segments.size();
  auto close = [&](uint64_t states) {  // a non-trailing "**" may match nothing
    for (size_t p = 0; p + 1 < m; ++p) {
      if ((states >> p & 1) && segments[p] == kDoubleStar) states |= uint64_t{1} << (p + 1);
    }
    return states;
  };
  uint64_t states = close(1);
  bool alive = for_each_segment(path, [&](std::string_view name) {
    uint64_t next = 0;
    for (size_t p = 0; p < m; ++p) {
      if (!(states >> p & 1)) continue;
      if (segments[p] == kDoubleStar) {
        next |= uint64_t{1} << p;
        if (p + 1 == m) next |= uint64_t{1} << m;
      } else if (glob_match_segment(segments[p], name)) {
        next |= uint64_t{1} << (p + 1);
      }
    }
    states = close(next);
    return next != 0;
  });
  return alive && (states >> m & 1) != 0;
}

size_t count_segments(std::string_view path) {
  size_t n = 0;
  for_each_segment(path, [&](std::string_view) {
    ++n;
    return true;
  });
  return n;
}

}  // namespace

IgnoreRules::IgnoreRules() = default;

void IgnoreRules::add(std::string_view text, std::string_view source_name) {
  constexpr std::string_view kBom = "\xEF\xBB\xBF";
  if (text.substr(0, kBom.size()) == kBom) text.remove_prefix(kBom.size());
  size_t skipped = 0;
  auto problem = [&](int line, std::string_view what, std::string_view message) {
    if (problems_.size() >= kMaxProblems) {
      ++skipped;
      return;
    }
    problems_.push_back(std::string(source_name) + ":" + std::to_string(line) + ": pattern \"" +
                        std::string(what) + "\" " + std::string(message) + "; skipped");
  };
  int line_number = 0;
  size_t start = 0;
  while (start < text.size()) {
    size_t end = text.find('\n', start);
    if (end == std::string_view::npos) end = text.size();
    std::string_view line = text.substr(start, end - start);
    start = end + 1;
    ++line_number;
    if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
    if (line.empty() || line.front() == '#') continue;
    const std::string_view original = line;
    line = trim_trailing_spaces(line);
    if (line.empty()) continue;

    Pattern p;
    if (line.front() == '!') {
      p.negated = true;
      line.remove_prefix(1);
    }
    if (!line.empty() && line.back() == '/') {
      p.dir_only = true;
      while (!line.empty() && line.back() == '/') line.remove_suffix(1);
    }
    p.anchored = line.find('/') != std::string_view::npos;
    while (!line.empty() && line.front() == '/') line.remove_prefix(1);
    if (line.empty()) {
      problem(line_number, original, "names no path");
      continue;
    }
    if (std::string why = glob_problem(line); !why.empty()) {
      problem(line_number, original, why);
      continue;
    }
    p.glob = std::string(line);
    p.segments = pattern_segments(line);
    if (p.segments.size() > kMaxSegments) {
      problem(line_number, original, "has more than 63 segments");
      continue;
    }
    // "**/name" matches name at any depth, like an unanchored "name".
    if (p.anchored && p.segments.size() == 2 && p.segments[0] == kDoubleStar &&
        p.segments[1] != kDoubleStar) {
      p.anchored = false;
      p.segments.erase(p.segments.begin());
    }
    if (p.anchored) {
      p.kind = Kind::kPath;
      for (const std::string& seg : p.segments) p.has_double_star |= seg == kDoubleStar;
    } else if (std::optional<std::string> name = literal_text(p.segments[0])) {
      p.kind = Kind::kName;
      p.literal = std::move(*name);
    } else if (std::optional<std::string> rest =
                   p.segments[0][0] == '*' ? literal_text(std::string_view(p.segments[0]).substr(1))
                                           : std::nullopt) {
      p.kind = Kind::kSuffix;
      p.literal = std::move(*rest);
    } else {
      p.kind = Kind::kSegment;
    }
    patterns_.push_back(std::move(p));
  }
  if (skipped > 0) {
    problems_.push_back(std::string(source_name) + ": " + std::to_string(skipped) +
                        " more bad patterns skipped");
  }
  rebuild_index();
}

void IgnoreRules::rebuild_index() {
  by_name_.clear();
  scanned_.clear();
  for (int i = static_cast<int>(patterns_.size()) - 1; i >= 0; --i) {
    const Pattern& p = patterns_[static_cast<size_t>(i)];
    if (p.kind == Kind::kName) {
      by_name_[p.literal].push_back(i);
    } else {
      scanned_.push_back(i);
    }
  }
}

IgnoreRules IgnoreRules::load(const std::string& root) {
  IgnoreRules rules;
  for (std::string_view name : {kGitIgnoreFileName, kIgnoreFileName}) {
    Result<std::string> text =
        read_regular_file(root + "/" + std::string(name), "ignore file", kMaxIgnoreFileBytes);
    if (text.ok()) {
      rules.add(*text, name);
    } else if (text.status().code() != StatusCode::kNotFound) {
      rules.problems_.push_back(std::string(name) + ": not read (" +
                                std::string(text.status().message()) + ")");
    }
  }
  return rules;
}

bool IgnoreRules::pattern_matches(const Pattern& p, std::string_view candidate,
                                  std::string_view name, size_t depth) {
  switch (p.kind) {
    case Kind::kName:
      return name == p.literal;
    case Kind::kSuffix:
      return name.size() >= p.literal.size() &&
             name.substr(name.size() - p.literal.size()) == p.literal;
    case Kind::kSegment:
      return glob_match_segment(p.segments[0], name);
    case Kind::kPath:
      if (!p.has_double_star && depth != p.segments.size()) return false;
      return match_segments(p.segments, candidate);
  }
  return false;
}

int IgnoreRules::last_match(std::string_view candidate, std::string_view name, size_t depth,
                            bool is_dir) const {
  int best = -1;
  if (!by_name_.empty()) {
    auto it = by_name_.find(name);
    if (it != by_name_.end()) {
      for (int i : it->second) {
        if (is_dir || !patterns_[static_cast<size_t>(i)].dir_only) {
          best = i;
          break;
        }
      }
    }
  }
  for (int i : scanned_) {
    if (i <= best) break;
    const Pattern& p = patterns_[static_cast<size_t>(i)];
    if (p.dir_only && !is_dir) continue;
    if (pattern_matches(p, candidate, name, depth)) return i;
  }
  return best;
}

bool IgnoreRules::matches_one(std::string_view path, bool is_dir) const {
  while (!path.empty() && path.back() == '/') path.remove_suffix(1);
  size_t slash = path.rfind('/');
  std::string_view name = slash == std::string_view::npos ? path : path.substr(slash + 1);
  if (name.empty()) return false;
  int i = last_match(path, name, count_segments(path), is_dir);
  return i >= 0 && !patterns_[static_cast<size_t>(i)].negated;
}

bool IgnoreRules::ignored(std::string_view path, bool is_dir) const {
  if (path.empty() || path == ".") return false;  // the root itself
  if (path.substr(0, path.find('/')) == kGitDir) return true;
  if (patterns_.empty()) return false;
  // A path under an ignored directory stays ignored, whatever later '!' say.
  for (size_t slash = path.find('/'); slash != std::string_view::npos;
       slash = path.find('/', slash + 1)) {
    if (slash > 0 && matches_one(path.substr(0, slash), true)) return true;
  }
  return matches_one(path, is_dir);
}

}  // namespace weft::source

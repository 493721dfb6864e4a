// GlobPattern: a compiled shell-style path pattern, matched against
// '/'-separated relative paths.
//
// Syntax: `*` any run of characters except '/'; `?` one character (one UTF-8
// code point) except '/'; `[abc]`, `[a-z]`, `[!x]` / `[^x]` a character class;
// `{a,b,c}` alternatives (may nest, may contain '/'); `**` as a whole segment
// any number (including zero) of segments; `\x` a literal x. Dot-files are
// matched by `*` like any other name. Trailing '/' in a pattern is ignored.
// Examples: "**/*.h" matches "a.h" and "x/y/a.h"; "src/*.{cc,h}".
//
// Thread safety: a compiled pattern is immutable; match from any thread.
#ifndef WEFT_BASE_GLOB_H_
#define WEFT_BASE_GLOB_H_

#include <string>
#include <string_view>
#include <vector>

#include "weft/base/status.h"

namespace weft {

class GlobPattern {
 public:
  // Compiles `pattern`. kInvalidArgument for an empty pattern, an unclosed
  // '[' or '{', a trailing '\\', or more than 256 brace alternatives.
  static Result<GlobPattern> compile(std::string_view pattern);

  // True when the whole `path` ("a/b/c", no leading '/') matches.
  bool matches(std::string_view path) const;

  // True when some path below directory `dir` ("" = the base) could match:
  // lets a directory walk prune whole subtrees.
  bool could_match_below(std::string_view dir) const;

  // True when the pattern has no '/' and no '**' (it names a file in one
  // directory, so callers may match it against base names).
  bool is_single_segment() const { return single_segment_; }

  const std::string& pattern() const { return pattern_; }

 private:
  struct Alternative {
    std::vector<std::string> segments;  // "**" kept as a segment of its own
  };
  std::string pattern_;
  std::vector<Alternative> alternatives_;
  bool single_segment_ = true;
};

// Matches one path segment against one pattern segment (no '/', no '**').
bool glob_match_segment(std::string_view pattern, std::string_view name);

}  // namespace weft

#endif  // WEFT_BASE_GLOB_H_

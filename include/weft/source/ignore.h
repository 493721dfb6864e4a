// IgnoreRules: which paths of a workspace weft leaves alone (no block, no
// watch): `.git/` always, then the patterns of the root's `.gitignore` and
// `.weftignore`, in git's gitignore syntax (blank lines and `#` comments,
// `!` negation, a leading or middle `/` anchors to the root, a trailing `/`
// matches directories only, `*`, `?`, `[...]`, `**`; the last matching
// pattern wins, and a path under an ignored directory stays ignored).
// Nested .gitignore files in subdirectories are not read.
//
// Thread safety: immutable after construction; share freely.
#ifndef WEFT_SOURCE_IGNORE_H_
#define WEFT_SOURCE_IGNORE_H_

#include <cstdint>
#include <functional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "weft/base/status.h"

namespace weft::source {

class IgnoreRules {
 public:
  // Ignores only `.git/`.
  IgnoreRules();

  // Adds the patterns of one ignore file's text (later files win over earlier
  // ones). Never fails: a line that is not a valid pattern is skipped and
  // described in problems() as "NAME:LINE: ...".
  void add(std::string_view text, std::string_view source_name);

  // Reads <root>/.gitignore then <root>/.weftignore (missing files are fine;
  // unreadable ones are noted in problems()).
  static IgnoreRules load(const std::string& root);

  // True when the root-relative `path` ("a/b", no leading '/') is ignored.
  // `is_dir` tells whether it names a directory (for patterns ending in '/').
  // Every ancestor directory is checked too: "build/x/y" is ignored by "build/".
  bool ignored(std::string_view path, bool is_dir) const;

  const std::vector<std::string>& problems() const { return problems_; }

 private:
  // How a pattern is matched, chosen once when it is added.
  enum class Kind : uint8_t {
    kName,     // unanchored, no wildcard: equals the last segment (`literal`)
    kSuffix,   // unanchored "*" + text: the last segment ends with `literal`
    kSegment,  // unanchored with wildcards: glob_match_segment on the last segment
    kPath,     // anchored: `segments` against the whole path ("**" as in git)
  };
  struct Pattern {
    std::string glob;    // without '!', the anchoring '/' and the trailing '/'
    bool negated = false;
    bool dir_only = false;
    bool anchored = false;  // matched against the whole path, not any suffix of segments
    Kind kind = Kind::kSegment;
    std::string literal;                // kName: the name; kSuffix: the text after '*'
    std::vector<std::string> segments;  // kPath; consecutive "**" collapsed
    bool has_double_star = false;       // kPath: some segment is "**"
  };
  struct NameHash {
    using is_transparent = void;
    size_t operator()(std::string_view s) const { return std::hash<std::string_view>()(s); }
  };
  bool matches_one(std::string_view path, bool is_dir) const;
  // Index of the last pattern matching `candidate`, a path of `depth` segments
  // whose last one is `name`, or -1 when none does.
  int last_match(std::string_view candidate, std::string_view name, size_t depth,
                 bool is_dir) const;
  static bool pattern_matches(const Pattern& p, std::string_view candidate,
                              std::string_view name, size_t depth);
  void rebuild_index();
  std::vector<Pattern> patterns_;
  // kName patterns by name, highest index first; the others, highest first.
  std::unordered_map<std::string, std::vector<int>, NameHash, std::equal_to<>> by_name_;
  std::vector<int> scanned_;
  std::vector<std::string> problems_;
};

}  // namespace weft::source

#endif  // WEFT_SOURCE_IGNORE_H_

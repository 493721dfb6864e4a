// Path normalisation and validation shared by every filesystem backend: turns
// a caller's path into a canonical root-relative form or a clear error, using
// string rules only (backends add kernel confinement on top).
//
// Thread safety: pure functions.
#ifndef WEFT_FS_PATH_H_
#define WEFT_FS_PATH_H_

#include <string>
#include <string_view>
#include <vector>

#include "weft/base/status.h"
#include "weft/fs/types.h"

namespace weft::fs {

// A validated root-relative path: segments without "", "." or "..".
struct NormalPath {
  std::vector<std::string> segments;  // empty = the root
  bool is_root() const { return segments.empty(); }
  // "a/b/c", or "." for the root.
  std::string str() const;
  // The last segment (REQUIRES: !is_root()).
  const std::string& name() const { return segments.back(); }
  // The parent directory (the root's parent is the root).
  NormalPath parent() const;
  NormalPath child(std::string_view name) const;
  // True if `this` equals `other` or lies under it.
  bool within(const NormalPath& other) const;
};

// Normalises `path` against `root` (an absolute host path, or "/"):
// - "" and "." are the root; "//" and "/./" collapse; ".." pops a segment;
// - an absolute path is accepted only inside `root` and made relative;
// - kPermissionDenied when ".." would climb above the root or an absolute
//   path lies outside it;
// - kInvalidArgument for a NUL byte, invalid UTF-8, more than
//   limits.max_path_depth segments or a segment over limits.max_segment_length
//   bytes. Messages quote the offending path.
Result<NormalPath> normalize_path(std::string_view path, std::string_view root,
                                  const FsLimits& limits);

// A name or path made safe to print in a line of text output (listings,
// grep lines, CLI output): the result holds no control character, so a name
// cannot end a line or forge the next one. Escaped: '\\' as "\\\\"; "\n",
// "\r", "\t"; other C0 controls, DEL and every byte of invalid UTF-8 as
// "\xNN"; C1 controls, line/paragraph separators and bidirectional
// overrides (U+0080-U+009F, U+2028-U+2029, U+202A-U+202E, U+2066-U+2069)
// as "\u{XXXX}". Everything else, and ASCII-only ordinary names, pass
// through unchanged. JSON output keeps the exact name instead (JSON escapes
// it); a tool needs the exact name, not this form.
std::string display_name(std::string_view name);

}  // namespace weft::fs

#endif  // WEFT_FS_PATH_H_

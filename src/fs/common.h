// Pieces every backend shares: line/byte paging, write-content checks, the
// grep engine (RE2 with a literal fast path) and snapshot ids. Private to fs/.
#ifndef WEFT_SRC_FS_COMMON_H_
#define WEFT_SRC_FS_COMMON_H_

#include <re2/re2.h>

#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "weft/base/glob.h"
#include "weft/base/status.h"
#include "weft/fs/types.h"

namespace weft::fs::internal {

// Pages `data` by lines (see ReadResult); kInvalidArgument for bad
// offset/limit or content that is not UTF-8.
Result<ReadResult> page_lines(std::string_view data, std::string path, int64_t offset,
                              std::optional<int64_t> limit, const FsLimits& limits);

// Pages `data` by bytes (see ReadBytesResult).
Result<ReadBytesResult> page_bytes(std::string_view data, std::string path, int64_t offset,
                                   std::optional<int64_t> limit);

// Checks a write's content against the limits (and UTF-8 when `text`).
Status check_write_content(std::string_view content, bool text, const FsLimits& limits);

// Checks offset/limit arguments of read()/read_bytes().
Status check_page_args(int64_t offset, std::optional<int64_t> limit);

// True when the first 8 KiB hold a NUL byte (how grep recognises binary files).
bool looks_binary(std::string_view data);

// Finds a fixed string fast: memchr on the needle's rarest byte, then compare.
class LiteralFinder {
 public:
  explicit LiteralFinder(std::string needle);
  // Position of the first occurrence at or after `from`, or npos.
  size_t find(std::string_view hay, size_t from) const;
  size_t size() const { return needle_.size(); }

 private:
  std::string needle_;
  size_t rare_ = 0;
};

// The longest literal every match of RE2 `pattern` must contain (at least
// 3 bytes), or "" when none can be proven (alternation, flags, groups...).
std::string required_literal(std::string_view pattern);

// A compiled grep request.
class GrepQuery {
 public:
  // kInvalidArgument for a bad regex, a bad glob or max_matches <= 0.
  static Result<std::unique_ptr<GrepQuery>> compile(std::string_view pattern,
                                                    const std::optional<std::string>& glob,
                                                    std::optional<int64_t> max_matches,
                                                    const FsLimits& limits);

  // Should the file at `rel` (relative to the grep base) be searched?
  bool selects(std::string_view rel, std::string_view name) const;

  // Appends the matches in `data` (a file at root-relative `path`) to `out`,
  // stopping when out->size() reaches max(). Skips binary data.
  void search(std::string_view data, const std::string& path, std::vector<GrepMatch>* out) const;

  size_t max() const { return max_; }

 private:
  std::unique_ptr<RE2> re_;
  bool pure_literal_ = false;               // the pattern is a plain string
  std::optional<LiteralFinder> prefilter_;  // a literal every match contains
  std::optional<GlobPattern> glob_;
  size_t max_ = 0;
};

// A random RFC 4122 version-4 UUID.
std::string random_uuid();

}  // namespace weft::fs::internal

#endif  // WEFT_SRC_FS_COMMON_H_

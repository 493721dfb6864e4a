// Pieces every backend shares: line/byte paging, write-content checks, the
// grep engine (RE2 with a literal fast path) and snapshot ids. Private to fs/.
#ifndef WEFT_SRC_FS_COMMON_H_
#define WEFT_SRC_FS_COMMON_H_

#include <re2/re2.h>

#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "weft/base/glob.h"
#include "weft/base/status.h"
#include "weft/fs/types.h"

namespace weft::fs::internal {

// The next chunk of a file's bytes, in order; an empty view at the end. The
// view stays valid until the next call.
using ChunkSource = std::function<Result<std::string_view>()>;

// Pages a file read chunk by chunk (see ReadResult): lines before the page are
// skipped and lines after it only counted, so memory stays in proportion to
// the page (at most limits.max_read_bytes plus one line of
// limits.max_line_bytes), whatever the file's size. kInvalidArgument for bad
// offset/limit or content that is not UTF-8 (the whole file is checked).
Result<ReadResult> page_lines_stream(const ChunkSource& next, std::string path, int64_t offset,
                                     std::optional<int64_t> limit, const FsLimits& limits);

// page_lines_stream over bytes already in memory.
Result<ReadResult> page_lines(std::string_view data, std::string path, int64_t offset,
                              std::optional<int64_t> limit, const FsLimits& limits);

// Checks UTF-8 fed in pieces split anywhere (even inside a character).
class Utf8Stream {
 public:
  // False once the bytes fed so far cannot be UTF-8.
  bool feed(std::string_view bytes);
  // False when the input ended inside a character.
  bool finish() const { return carry_.empty(); }

 private:
  std::string carry_;  // an incomplete character from the end of the last piece
};

// The length of `s`'s longest prefix of at most `max` bytes that does not end
// inside a UTF-8 character.
size_t utf8_prefix_length(std::string_view s, size_t max);

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
  // stopping when out->size() reaches max(). Skips binary data. Lines are
  // numbered from `first_line`; `line_prefix` is how many bytes of the first
  // line came before `data` (its head was in an earlier piece).
  void search(std::string_view data, const std::string& path, std::vector<GrepMatch>* out,
              int64_t first_line = 1, int64_t line_prefix = 0) const;

  // Searches a file read chunk by chunk, keeping at most about
  // 2 * kMaxSearchedLine bytes: a line longer than kMaxSearchedLine is
  // searched in windows of that size overlapping by kWindowOverlap bytes (a
  // match longer than the overlap that spans two windows is missed; ^ and $
  // hold only at the line's real start and end). Binary files (a NUL in the
  // first 8 KiB) are skipped.
  Status search_stream(const ChunkSource& next, const std::string& path,
                       std::vector<GrepMatch>* out) const;

  size_t max() const { return max_; }

  static constexpr size_t kMaxSearchedLine = 1 << 20;
  static constexpr size_t kWindowOverlap = 4096;

 private:
  std::unique_ptr<RE2> re_;
  bool pure_literal_ = false;               // the pattern is a plain string
  std::optional<LiteralFinder> prefilter_;  // a literal every match contains
  // Appends the match at byte `m_start`..`m_end` of `line` (which starts
  // `line_prefix` bytes into the file's line of `line_length` bytes).
  void add_match(std::string_view line, size_t m_start, size_t m_end, int64_t line_number,
                 int64_t line_prefix, int64_t line_length, const std::string& path,
                 std::vector<GrepMatch>* out) const;
  // The first match on one line (`context_before`: the line started earlier,
  // so ^ does not hold at its start; `at_end`: the line ends here, so $ holds).
  bool match_line(std::string_view line, bool context_before, bool at_end, size_t* m_start,
                  size_t* m_end) const;

  std::optional<GlobPattern> glob_;
  size_t max_ = 0;
  size_t max_line_bytes_ = 4096;
};

// A random RFC 4122 version-4 UUID.
std::string random_uuid();

}  // namespace weft::fs::internal

#endif  // WEFT_SRC_FS_COMMON_H_

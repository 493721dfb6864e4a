// LineIndex: where each line of a text starts, for line <-> byte offset
// conversion. A line ends at "\n" (a "\r\n" ending is reported as such); the
// last line may lack a terminator. A final terminator does not start a new
// line: "a\nb\n" and "a\nb" both have 2 lines, "" has 0.
//
// Lines are numbered from 0 in this API; tools that show lines to people add 1.
// The index keeps a view of the text: the text must outlive it and not change.
//
// Thread safety: immutable after construction; safe to share for reading.
#ifndef WEFT_TEXT_LINE_INDEX_H_
#define WEFT_TEXT_LINE_INDEX_H_

#include <cstddef>
#include <string_view>
#include <vector>

#include "weft/base/status.h"

namespace weft::text {

// The line-ending convention a text mostly uses.
enum class LineEnding : unsigned char {
  kLf,    // "\n" (also the answer for text without any line break)
  kCrLf,  // "\r\n"
};

class LineIndex {
 public:
  // Indexes `text` in one pass. The view must stay valid while the index is used.
  explicit LineIndex(std::string_view text);

  std::string_view text() const { return text_; }
  // Number of lines (see the file comment for the counting rule).
  size_t line_count() const { return starts_.size(); }
  // True when the text is empty or ends with "\n".
  bool ends_with_newline() const { return text_.empty() || text_.back() == '\n'; }

  // Byte offset where line `line` starts. REQUIRES: line <= line_count()
  // (line_count() gives the text's size, the start of a would-be next line).
  size_t line_start(size_t line) const;
  // Byte offset just past line `line`'s content, before its terminator.
  // REQUIRES: line < line_count().
  size_t content_end(size_t line) const;
  // Byte offset just past line `line` including its terminator.
  // REQUIRES: line < line_count().
  size_t line_end(size_t line) const { return line_start(line + 1); }

  // Line `line` without its terminator. REQUIRES: line < line_count().
  std::string_view line(size_t line) const;
  // Line `line` with its terminator ("\n", "\r\n" or nothing on a last line).
  std::string_view line_with_ending(size_t line) const;
  // Just the terminator of line `line`: "\n", "\r\n" or "".
  std::string_view ending(size_t line) const;

  // The line holding byte `offset` (an offset equal to the text size maps to
  // the last line, or to line 0 for empty text). Error kOutOfRange when
  // offset > text size.
  Result<size_t> line_of_offset(size_t offset) const;
  // Byte offset of line `line` (0-based) plus byte `column` within it. Error
  // kOutOfRange when the line does not exist or the column passes the line's
  // content.
  Result<size_t> offset_of(size_t line, size_t column) const;

  // The convention most line breaks use; ties and text without breaks give kLf.
  LineEnding dominant_ending() const;

 private:
  std::string_view text_;
  std::vector<size_t> starts_;  // byte offset where each line starts
};

// "\n" or "\r\n".
inline std::string_view ending_bytes(LineEnding ending) {
  return ending == LineEnding::kCrLf ? "\r\n" : "\n";
}

}  // namespace weft::text

#endif  // WEFT_TEXT_LINE_INDEX_H_

#include "weft/text/line_index.h"

#include <algorithm>
#include <cstring>
#include <string>

namespace weft::text {

LineIndex::LineIndex(std::string_view text) : text_(text) {
  if (text.empty()) return;
  starts_.push_back(0);
  const char* base = text.data();
  const char* end = base + text.size();
  for (const char* p = base; p < end;) {
    const void* nl = std::memchr(p, '\n', static_cast<size_t>(end - p));
    if (nl == nullptr) break;
    p = static_cast<const char*>(nl) + 1;
    if (p < end) starts_.push_back(static_cast<size_t>(p - base));
  }
}

size_t LineIndex::line_start(size_t line) const {
  return line < starts_.size() ? starts_[line] : text_.size();
}

size_t LineIndex::content_end(size_t line) const {
  size_t end = line_end(line);
  if (end > line_start(line) && text_[end - 1] == '\n') {
    --end;
    if (end > line_start(line) && text_[end - 1] == '\r') --end;
  }
  return end;
}

std::string_view LineIndex::line(size_t line) const {
  size_t start = line_start(line);
  return text_.substr(start, content_end(line) - start);
}

std::string_view LineIndex::line_with_ending(size_t line) const {
  size_t start = line_start(line);
  return text_.substr(start, line_end(line) - start);
}

std::string_view LineIndex::ending(size_t line) const {
  size_t content = content_end(line);
  return text_.substr(content, line_end(line) - content);
}

Result<size_t> LineIndex::line_of_offset(size_t offset) const {
  if (offset > text_.size()) {
    return out_of_range("offset " + std::to_string(offset) + " is past the end of the text (" +
                        std::to_string(text_.size()) + " bytes)");
  }
  if (starts_.empty()) return size_t{0};
  auto it = std::upper_bound(starts_.begin(), starts_.end(), offset);
  return static_cast<size_t>(it - starts_.begin()) - 1;
}

Result<size_t> LineIndex::offset_of(size_t line, size_t column) const {
  if (line >= line_count()) {
    if (line == 0 && column == 0) return size_t{0};  // the empty text's only position
    return out_of_range("line " + std::to_string(line + 1) + " does not exist (the text has " +
                        std::to_string(line_count()) + " lines)");
  }
  size_t length = content_end(line) - line_start(line);
  if (column > length) {
    return out_of_range("column " + std::to_string(column) + " is past the end of line " +
                        std::to_string(line + 1) + " (" + std::to_string(length) + " bytes)");
  }
  return line_start(line) + column;
}

LineEnding LineIndex::dominant_ending() const {
  size_t crlf = 0, lf = 0;
  for (size_t i = 0; i < line_count(); ++i) {
    std::string_view e = ending(i);
    if (e == "\r\n")
      ++crlf;
    else if (e == "\n")
      ++lf;
  }
  return crlf > lf ? LineEnding::kCrLf : LineEnding::kLf;
}

}  // namespace weft::text

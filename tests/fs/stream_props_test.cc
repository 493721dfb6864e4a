// Properties of the streaming reader and grep: the answer does not depend on
// how the file is cut into chunks (splits inside lines, inside "\r\n" and
// inside UTF-8 characters), and with no line or page cap in the way a page
// is exactly the file's lines.
#include <gtest/gtest.h>
#include <rapidcheck/gtest.h>

#include "fs/common.h"

namespace weft::fs::internal {
namespace {

// Text from pieces that make the edges likely: CR, LF, 2- and 3-byte characters.
std::string gen_text() {
  static const char* kPieces[] = {"a",  "b",        "ab",           "\n",        "\r\n",
                                  "\r", "\xC3\xA9", "\xE2\x82\xAC", "aaaaaaaaaa"};
  auto picks = *rc::gen::container<std::vector<int>>(rc::gen::inRange(0, 9));
  std::string out;
  for (int p : picks) out += kPieces[p];
  return out;
}

// A source handing out `data` in chunks of the given sizes (cycled).
ChunkSource chunked(const std::string& data, std::vector<size_t> sizes, size_t* pos) {
  return
      [&data, sizes = std::move(sizes), pos, i = size_t{0}]() mutable -> Result<std::string_view> {
        if (*pos >= data.size()) return std::string_view();
        size_t n = std::min(sizes[i++ % sizes.size()], data.size() - *pos);
        std::string_view out(data.data() + *pos, n);
        *pos += n;
        return out;
      };
}

bool same(const ReadResult& a, const ReadResult& b) {
  if (a.cut_lines.size() != b.cut_lines.size()) return false;
  for (size_t i = 0; i < a.cut_lines.size(); ++i) {
    if (a.cut_lines[i].line != b.cut_lines[i].line ||
        a.cut_lines[i].length_bytes != b.cut_lines[i].length_bytes) {
      return false;
    }
  }
  return a.content == b.content && a.total_lines == b.total_lines && a.lines == b.lines &&
         a.truncated == b.truncated;
}

RC_GTEST_PROP(StreamProps, PagingDoesNotDependOnChunks, ()) {
  std::string data = gen_text();
  FsLimits limits;
  limits.max_line_bytes = *rc::gen::inRange<int64_t>(16, 40);
  limits.max_read_bytes = *rc::gen::inRange<int64_t>(1, 200);
  int64_t offset = *rc::gen::inRange<int64_t>(0, 12);
  int64_t limit = *rc::gen::inRange<int64_t>(1, 12);
  auto sizes =
      *rc::gen::nonEmpty(rc::gen::container<std::vector<size_t>>(rc::gen::inRange<size_t>(1, 9)));
  auto whole = page_lines(data, "f", offset, limit, limits);
  size_t pos = 0;
  auto streamed = page_lines_stream(chunked(data, sizes, &pos), "f", offset, limit, limits);
  RC_ASSERT(whole.ok() == streamed.ok());
  if (whole.ok()) RC_ASSERT(same(*whole, *streamed));
}

RC_GTEST_PROP(StreamProps, UncappedPageIsTheFilesLines, ()) {
  std::string data = gen_text();
  FsLimits limits;  // 4 KiB lines, 256 KiB pages: nothing here reaches them
  int64_t offset = *rc::gen::inRange<int64_t>(0, 12);
  int64_t limit = *rc::gen::inRange<int64_t>(1, 12);
  auto page = page_lines(data, "f", offset, limit, limits);
  RC_ASSERT(page.ok());
  std::vector<std::string> lines;
  for (size_t pos = 0; pos < data.size();) {
    size_t nl = data.find('\n', pos);
    size_t end = nl == std::string::npos ? data.size() : nl + 1;
    lines.push_back(data.substr(pos, end - pos));
    pos = end;
  }
  std::string expected;
  for (int64_t i = offset; i < offset + limit && i < static_cast<int64_t>(lines.size()); ++i) {
    expected += lines[static_cast<size_t>(i)];
  }
  RC_ASSERT(page->content == expected);
  RC_ASSERT(page->total_lines == static_cast<int64_t>(lines.size()));
  RC_ASSERT(page->cut_lines.empty());
  RC_ASSERT(page->truncated == (offset + limit < static_cast<int64_t>(lines.size())));
}

RC_GTEST_PROP(StreamProps, StreamedGrepMatchesWholeGrep, ()) {
  std::string data = gen_text();
  static const char* kPatterns[] = {"ab", "a+b", "^b", "a$", "\xC3\xA9", "b\\r?$", "aaaa"};
  const char* pattern = kPatterns[*rc::gen::inRange(0, 7)];
  FsLimits limits;
  limits.max_line_bytes = *rc::gen::inRange<int64_t>(16, 40);
  auto query = GrepQuery::compile(pattern, std::nullopt, 10'000, limits);
  RC_ASSERT(query.ok());
  auto sizes =
      *rc::gen::nonEmpty(rc::gen::container<std::vector<size_t>>(rc::gen::inRange<size_t>(1, 9)));
  std::vector<GrepMatch> whole, streamed;
  (*query)->search(data, "f", &whole);
  size_t pos = 0;
  RC_ASSERT((*query)->search_stream(chunked(data, sizes, &pos), "f", &streamed).ok());
  RC_ASSERT(whole.size() == streamed.size());
  for (size_t i = 0; i < whole.size(); ++i) {
    RC_ASSERT(whole[i].line_number == streamed[i].line_number);
    RC_ASSERT(whole[i].line_content == streamed[i].line_content);
    RC_ASSERT(whole[i].line_length_bytes == streamed[i].line_length_bytes);
    RC_ASSERT(whole[i].match_start_byte == streamed[i].match_start_byte);
    RC_ASSERT(whole[i].match_end_byte == streamed[i].match_end_byte);
    RC_ASSERT(static_cast<int64_t>(whole[i].line_content.size()) <= limits.max_line_bytes);
  }
}

}  // namespace
}  // namespace weft::fs::internal

#include "weft/text/line_index.h"

#include <gtest/gtest.h>
#include <rapidcheck/gtest.h>

namespace weft::text {
namespace {

TEST(LineIndexTest, CountsLinesWithAndWithoutFinalNewline) {
  EXPECT_EQ(LineIndex("").line_count(), 0u);
  EXPECT_EQ(LineIndex("a").line_count(), 1u);
  EXPECT_EQ(LineIndex("a\n").line_count(), 1u);
  EXPECT_EQ(LineIndex("a\nb").line_count(), 2u);
  EXPECT_EQ(LineIndex("a\nb\n").line_count(), 2u);
  EXPECT_EQ(LineIndex("\n\n").line_count(), 2u);
  EXPECT_TRUE(LineIndex("a\n").ends_with_newline());
  EXPECT_FALSE(LineIndex("a").ends_with_newline());
}

TEST(LineIndexTest, SplitsContentAndEndings) {
  LineIndex index("one\r\ntwo\nthree");
  ASSERT_EQ(index.line_count(), 3u);
  EXPECT_EQ(index.line(0), "one");
  EXPECT_EQ(index.ending(0), "\r\n");
  EXPECT_EQ(index.line_with_ending(0), "one\r\n");
  EXPECT_EQ(index.line(1), "two");
  EXPECT_EQ(index.ending(1), "\n");
  EXPECT_EQ(index.line(2), "three");
  EXPECT_EQ(index.ending(2), "");
  EXPECT_EQ(index.line_start(2), 9u);
  EXPECT_EQ(index.line_start(3), 14u);
}

TEST(LineIndexTest, ConvertsOffsetsAndLines) {
  LineIndex index("ab\ncd\n");
  EXPECT_EQ(*index.line_of_offset(0), 0u);
  EXPECT_EQ(*index.line_of_offset(2), 0u);  // the "\n" belongs to its line
  EXPECT_EQ(*index.line_of_offset(3), 1u);
  EXPECT_EQ(*index.line_of_offset(6), 1u);  // end of text: last line
  EXPECT_EQ(index.line_of_offset(7).status().code(), StatusCode::kOutOfRange);
  EXPECT_EQ(*index.offset_of(1, 2), 5u);
  EXPECT_EQ(index.offset_of(1, 3).status().code(), StatusCode::kOutOfRange);
  EXPECT_EQ(index.offset_of(2, 0).status().code(), StatusCode::kOutOfRange);
  EXPECT_EQ(*LineIndex("").offset_of(0, 0), 0u);
  EXPECT_EQ(*LineIndex("").line_of_offset(0), 0u);
}

TEST(LineIndexTest, DetectsDominantEnding) {
  EXPECT_EQ(LineIndex("a\r\nb\r\nc\n").dominant_ending(), LineEnding::kCrLf);
  EXPECT_EQ(LineIndex("a\nb\r\n").dominant_ending(), LineEnding::kLf);
  EXPECT_EQ(LineIndex("no breaks").dominant_ending(), LineEnding::kLf);
}

RC_GTEST_PROP(LineIndexProperty, LinesReassembleText, ()) {
  auto text = *rc::gen::container<std::string>(rc::gen::elementOf(std::string("ab\r\n")));
  LineIndex index(text);
  std::string joined;
  for (size_t i = 0; i < index.line_count(); ++i) {
    joined += index.line_with_ending(i);
    RC_ASSERT(index.line(i).find('\n') == std::string_view::npos);
    RC_ASSERT(*index.line_of_offset(index.line_start(i)) == i);
  }
  RC_ASSERT(joined == text);
}

}  // namespace
}  // namespace weft::text

#include "weft/text/search.h"

#include <gtest/gtest.h>
#include <rapidcheck/gtest.h>

namespace weft::text {
namespace {

TEST(SearchTest, FindsAllWithLineNumbers) {
  std::string text = "foo\nbar foo\n\nfoofoo\n";
  auto matches = find_all(text, "foo");
  ASSERT_EQ(matches.size(), 4u);
  EXPECT_EQ(matches[0], (Match{0, 3, 1, 1}));
  EXPECT_EQ(matches[1], (Match{8, 3, 2, 5}));
  EXPECT_EQ(matches[2], (Match{13, 3, 4, 1}));
  EXPECT_EQ(matches[3], (Match{16, 3, 4, 4}));
  EXPECT_EQ(describe_lines(matches), "lines 1, 2 and 4");
  EXPECT_EQ(find_all(text, "foo", 2).size(), 2u);
  EXPECT_TRUE(find_all(text, "").empty());
  EXPECT_EQ(count_occurrences("aaaa", "aa"), 2u);  // non-overlapping
}

TEST(SearchTest, RegexWithLineAnchorsAndErrors) {
  std::string text = "int a;\n  int b;\nfloat c;\n";
  auto matches = find_all_regex(text, "^\\s*int (\\w+)");
  ASSERT_TRUE(matches.ok()) << matches.status();
  ASSERT_EQ(matches->size(), 2u);
  EXPECT_EQ((*matches)[1].line, 2u);
  RegexOptions ci;
  ci.case_insensitive = true;
  EXPECT_EQ(find_all_regex(text, "FLOAT", ci)->size(), 1u);
  RegexOptions literal;
  literal.literal = true;
  EXPECT_EQ(find_all_regex("a.b axb", "a.b", literal)->size(), 1u);
  auto bad = find_all_regex(text, "(unclosed");
  ASSERT_FALSE(bad.ok());
  EXPECT_EQ(bad.status().code(), StatusCode::kInvalidArgument);
  auto perl = find_all_regex("ab ab\n12", "(?:ab)+? \\pL|\\d+?$");  // Perl syntax works
  ASSERT_TRUE(perl.ok()) << perl.status();
  EXPECT_EQ(perl->size(), 2u);
  auto empty = find_all_regex("\xC3\xA9z", "x*");  // empty matches advance by a character
  ASSERT_TRUE(empty.ok());
  EXPECT_EQ(empty->size(), 3u);
}

TEST(SearchTest, UniqueEditAndAmbiguity) {
  std::string text = "a\nfoo\nb\nfoo\nc\nfoo\n";
  auto ambiguous = apply_string_edits(text, {{"foo", "bar", false}});
  ASSERT_FALSE(ambiguous.ok());
  EXPECT_EQ(ambiguous.status().code(), StatusCode::kFailedPrecondition);
  EXPECT_NE(ambiguous.status().message().find("matches 3 times, at lines 2, 4 and 6"),
            std::string_view::npos)
      << ambiguous.status();
  auto all = apply_string_edits(text, {{"foo", "bar", true}});
  ASSERT_TRUE(all.ok());
  EXPECT_EQ(all->new_text, "a\nbar\nb\nbar\nc\nbar\n");
  EXPECT_EQ(all->replacements[0], 3u);
  auto unique = apply_string_edits(text, {{"b\nfoo", "B\nFOO", false}});
  ASSERT_TRUE(unique.ok());
  EXPECT_EQ(unique->new_text, "a\nfoo\nB\nFOO\nc\nfoo\n");
}

TEST(SearchTest, EditsAreSequentialAndAtomic) {
  auto chained =
      apply_string_edits("one two", {{"one", "three", false}, {"three two", "x", false}});
  ASSERT_TRUE(chained.ok());
  EXPECT_EQ(chained->new_text, "x");
  auto failing = apply_string_edits("one two", {{"one", "1", false}, {"missing", "y", false}});
  ASSERT_FALSE(failing.ok());
  EXPECT_EQ(failing.status().code(), StatusCode::kNotFound);
  EXPECT_NE(failing.status().message().find("edit 2:"), std::string_view::npos);
  EXPECT_EQ(apply_string_edits("x", {{"", "y", false}}).status().code(),
            StatusCode::kInvalidArgument);
  EXPECT_EQ(apply_string_edits("x", {{"x", "x", false}}).status().code(),
            StatusCode::kInvalidArgument);
}

TEST(SearchTest, LfEditKeepsCrlfFile) {
  auto result = apply_string_edits("a\r\nb\r\nc\r\n", {{"a\nb", "A\nB\nB2", false}});
  ASSERT_TRUE(result.ok()) << result.status();
  EXPECT_EQ(result->new_text, "A\r\nB\r\nB2\r\nc\r\n");
  EXPECT_TRUE(result->crlf_adapted[0]);
}

RC_GTEST_PROP(SearchProperty, FindAllAgreesWithCount, ()) {
  auto text = *rc::gen::container<std::string>(rc::gen::elementOf(std::string("ab\n")));
  auto needle = *rc::gen::resize(
      3, rc::gen::nonEmpty(rc::gen::container<std::string>(rc::gen::elementOf(std::string("ab")))));
  auto matches = find_all(text, needle);
  RC_ASSERT(matches.size() == count_occurrences(text, needle));
  for (const auto& m : matches) {
    RC_ASSERT(text.compare(m.offset, needle.size(), needle) == 0);
    size_t line = 1 + static_cast<size_t>(std::count(text.begin(), text.begin() + m.offset, '\n'));
    RC_ASSERT(m.line == line);
  }
}

}  // namespace
}  // namespace weft::text

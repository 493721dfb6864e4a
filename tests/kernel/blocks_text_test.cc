// The private text helpers behind conversation blocks' mirrors
// (kernel/blocks_impl.h): line starts kept up to date across splices must
// equal a fresh scan, and the ASCII check that picks the doc's position unit.
#include <gtest/gtest.h>
#include <rapidcheck/gtest.h>

#include "kernel/blocks_impl.h"

namespace weft::kernel {
namespace blocks_text_test_local {

std::vector<size_t> after(std::string text, const std::vector<TextSplice>& splices) {
  std::vector<size_t> starts = line_starts(text);
  std::string out = apply_splices(text, splices);
  splice_line_starts(out, splices, starts);
  return starts;
}

TEST(SpliceLineStarts, Cases) {
  // Replace a middle line; delete the final break; insert at the start; join lines.
  std::string t = "a\nbb\nc\n";
  EXPECT_EQ(after(t, {{2, 3, "X\nY\n"}}), line_starts("a\nX\nY\nc\n"));
  EXPECT_EQ(after(t, {{6, 1, ""}}), line_starts("a\nbb\nc"));
  EXPECT_EQ(after(t, {{0, 0, "z\n"}}), line_starts("z\na\nbb\nc\n"));
  EXPECT_EQ(after(t, {{1, 1, ""}}), line_starts("abb\nc\n"));
  EXPECT_EQ(after(t, {{5, 2, ""}, {0, 2, ""}}), line_starts("bb\n"));
  EXPECT_EQ(after("", {{0, 0, "x\ny"}}), line_starts("x\ny"));
  EXPECT_EQ(after("x\n", {{0, 2, ""}}), line_starts(""));
  // An insert and a replace at one offset (insert first), as line edits make them.
  EXPECT_EQ(after(t, {{2, 3, "R\n"}, {2, 0, "I\n"}}), line_starts("a\nI\nR\nc\n"));
}

RC_GTEST_PROP(SpliceLineStarts, EqualsAFreshScan, ()) {
  auto text = *rc::gen::container<std::string>(rc::gen::element('a', '\n', 'b'));
  // Non-overlapping splices, generated ascending, applied highest first.
  std::vector<TextSplice> ascending;
  size_t at = 0;
  while (at <= text.size() && ascending.size() < 6 && *rc::gen::arbitrary<bool>()) {
    size_t offset = *rc::gen::inRange<size_t>(at, text.size() + 1);
    size_t erase = *rc::gen::inRange<size_t>(0, text.size() - offset + 1);
    auto insert = *rc::gen::container<std::string>(rc::gen::element('x', '\n'));
    ascending.push_back({offset, erase, insert});
    at = offset + erase + (erase == 0 ? 1 : 0);
  }
  std::vector<TextSplice> splices(ascending.rbegin(), ascending.rend());
  std::string out = apply_splices(text, splices);
  RC_ASSERT(after(text, splices) == line_starts(out));
}

TEST(AllAscii, FindsAnyHighByte) {
  EXPECT_TRUE(all_ascii(""));
  EXPECT_TRUE(all_ascii("plain text, longer than eight bytes\n"));
  for (size_t i = 0; i < 20; ++i) {
    std::string s(20, 'a');
    s[i] = '\xC3';
    EXPECT_FALSE(all_ascii(s)) << i;
  }
}

}  // namespace blocks_text_test_local
}  // namespace weft::kernel

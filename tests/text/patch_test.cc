#include "weft/text/patch.h"

#include <gtest/gtest.h>
#include <rapidcheck/gtest.h>

#include "weft/text/unified_diff.h"

namespace weft::text {
namespace {

FilePatch parse_one(std::string_view text) {
  auto files = parse_unified_diff(text);
  EXPECT_TRUE(files.ok()) << files.status();
  if (!files.ok() || files->empty()) return {};
  return (*files)[0];
}

std::string numbered(int from, int to, std::string_view eol = "\n") {
  std::string out;
  for (int i = from; i <= to; ++i) out += "line " + std::to_string(i) + std::string(eol);
  return out;
}

TEST(PatchTest, AppliesAtTheStatedLine) {
  std::string text = numbered(1, 10);
  FilePatch patch = parse_one("@@ -4,3 +4,3 @@\n line 4\n-line 5\n+LINE FIVE\n line 6\n");
  PatchPlan plan = plan_patch(text, patch);
  ASSERT_TRUE(plan.ok) << plan.summary();
  EXPECT_EQ(plan.hunks[0].line, 4u);
  EXPECT_EQ(plan.hunks[0].offset, 0);
  EXPECT_EQ(plan.new_text, numbered(1, 4) + "LINE FIVE\n" + numbered(6, 10));
}

TEST(PatchTest, FindsDriftedHunksByContext) {
  std::string text = "new header\nanother\n" + numbered(1, 30);
  std::string diff =
      "@@ -4,3 +4,3 @@\n line 4\n-line 5\n+five\n line 6\n"
      "@@ -20,3 +20,4 @@\n line 20\n line 21\n+inserted\n line 22\n";
  PatchPlan plan = plan_patch(text, parse_one(diff));
  ASSERT_TRUE(plan.ok) << plan.summary();
  EXPECT_EQ(plan.hunks[0].offset, 2);
  EXPECT_EQ(plan.hunks[0].line, 6u);
  EXPECT_EQ(plan.hunks[1].offset, 2);
  EXPECT_EQ(plan.hunks[1].line, 22u);
  EXPECT_NE(plan.new_text.find("line 21\ninserted\nline 22\n"), std::string::npos);
  EXPECT_NE(plan.new_text.find("line 4\nfive\nline 6\n"), std::string::npos);
}

TEST(PatchTest, FuzzIgnoresStaleOuterContext) {
  std::string text = numbered(1, 10);
  text.replace(text.find("line 3"), 6, "LINE 3");  // the hunk's first context line changed
  FilePatch patch =
      parse_one("@@ -3,5 +3,5 @@\n line 3\n line 4\n-line 5\n+five\n line 6\n line 7\n");
  PatchPlan plan = plan_patch(text, patch);
  ASSERT_TRUE(plan.ok) << plan.summary();
  EXPECT_EQ(plan.hunks[0].fuzz, 1u);
  EXPECT_NE(plan.new_text.find("LINE 3\nline 4\nfive\nline 6\n"), std::string::npos);
  ApplyOptions strict;
  strict.max_fuzz = 0;
  EXPECT_FALSE(plan_patch(text, patch, strict).ok);
}

TEST(PatchTest, AllOrNothingWithPerHunkReport) {
  std::string text = numbered(1, 20);
  std::string diff =
      "@@ -2,3 +2,3 @@\n line 2\n-line 3\n+three\n line 4\n"
      "@@ -10,3 +10,3 @@\n line 10\n-line 99\n+x\n line 12\n";
  PatchPlan plan = plan_patch(text, parse_one(diff));
  EXPECT_FALSE(plan.ok);
  ASSERT_EQ(plan.hunks.size(), 2u);
  EXPECT_TRUE(plan.hunks[0].applies);
  EXPECT_FALSE(plan.hunks[1].applies);
  EXPECT_NE(plan.hunks[1].message.find("line 11"), std::string::npos) << plan.hunks[1].message;
  EXPECT_TRUE(plan.new_text.empty());
  auto applied = apply_patch(text, parse_one(diff));
  ASSERT_FALSE(applied.ok());
  EXPECT_EQ(applied.status().code(), StatusCode::kFailedPrecondition);
  EXPECT_NE(applied.status().message().find("hunk 2 (@@ -10,3 +10,3 @@)"), std::string_view::npos)
      << applied.status();
}

TEST(PatchTest, LfPatchKeepsCrlfFile) {
  std::string text = numbered(1, 6, "\r\n");
  FilePatch patch = parse_one("@@ -2,3 +2,4 @@\n line 2\n-line 3\n+three\n+and more\n line 4\n");
  auto result = apply_patch(text, patch);
  ASSERT_TRUE(result.ok()) << result.status();
  EXPECT_EQ(*result, numbered(1, 2, "\r\n") + "three\r\nand more\r\n" + numbered(4, 6, "\r\n"));
}

TEST(PatchTest, KeepsOtherBytesExactly) {
  std::string text = "a\r\nmixed\nb \t\r\n\x01\xFF binary-ish\nz";
  FilePatch patch = parse_one("@@ -2 +2 @@\n-mixed\n+MIXED\n");
  auto result = apply_patch(text, patch);
  ASSERT_TRUE(result.ok()) << result.status();
  EXPECT_EQ(*result, "a\r\nMIXED\nb \t\r\n\x01\xFF binary-ish\nz");  // a CRLF/LF tie: LF
}

TEST(PatchTest, NoNewlineAtEndBothWays) {
  auto add = apply_patch("a\nb", parse_one(make_unified_diff("a\nb", "a\nb\nc\n")));
  ASSERT_TRUE(add.ok()) << add.status();
  EXPECT_EQ(*add, "a\nb\nc\n");
  auto remove = apply_patch("a\nb\n", parse_one(make_unified_diff("a\nb\n", "a\nb")));
  ASSERT_TRUE(remove.ok()) << remove.status();
  EXPECT_EQ(*remove, "a\nb");
}

TEST(PatchTest, ZeroContextInsertAfterUnterminatedLastLine) {
  auto result = apply_patch("a", parse_one("@@ -1,0 +2 @@\n+b\n"));
  ASSERT_TRUE(result.ok()) << result.status();
  EXPECT_EQ(*result, "a\nb\n");
}

TEST(PatchTest, CreationAndDeletion) {
  FilePatch create = parse_one("--- /dev/null\n+++ b/n.txt\n@@ -0,0 +1,2 @@\n+x\n+y\n");
  EXPECT_EQ(*apply_patch("", create), "x\ny\n");
  PatchPlan exists = plan_patch("already\n", create);
  EXPECT_FALSE(exists.ok);
  EXPECT_NE(exists.summary().find("already has content"), std::string::npos);
  FilePatch remove = parse_one("--- a/n.txt\n+++ /dev/null\n@@ -1,2 +0,0 @@\n-x\n-y\n");
  EXPECT_EQ(*apply_patch("x\ny\n", remove), "");
}

TEST(PatchTest, WhitespaceFuzzIsALastResort) {
  FilePatch patch = parse_one("@@ -1,2 +1,2 @@\n a\n-b\n+c\n");
  PatchPlan plan = plan_patch("a  \nb\t\n", patch);
  ASSERT_TRUE(plan.ok) << plan.summary();
  EXPECT_TRUE(plan.hunks[0].whitespace);
  EXPECT_EQ(plan.new_text, "a  \nc\n");
  ApplyOptions strict;
  strict.allow_whitespace_fuzz = false;
  EXPECT_FALSE(plan_patch("a  \nb\t\n", patch, strict).ok);
}

TEST(PatchTest, StalePatchFailsClearly) {
  FilePatch patch = parse_one("@@ -1,3 +1,3 @@\n a\n-b\n+c\n d\n");
  auto result = apply_patch("totally\ndifferent\ncontent\n", patch);
  ASSERT_FALSE(result.ok());
  EXPECT_NE(result.status().message().find("context not found"), std::string_view::npos);
  auto short_file = apply_patch("a\n", patch);
  ASSERT_FALSE(short_file.ok());
  EXPECT_NE(short_file.status().message().find("needs 3 old lines"), std::string_view::npos)
      << short_file.status();
}

// Texts from pieces that stress line handling: CRLF, lone CR, blank lines,
// missing final newline, non-ASCII.
rc::Gen<std::string> gen_text() {
  const std::vector<std::string> pieces = {"a", "b",   "c",        "\n",    "\n", "\r\n", "\r",
                                           " ", "x\n", "\xC3\xA9", "\\ No", "-",  "+",    "@@"};
  return rc::gen::map(rc::gen::container<std::vector<std::string>>(rc::gen::elementOf(pieces)),
                      [](const std::vector<std::string>& parts) {
                        std::string out;
                        for (const auto& p : parts) out += p;
                        return out;
                      });
}

// Without context an LF-only hunk cannot tell which ending an inserted line
// should get in a mixed file (it takes the neighbouring line's), so exact
// round trips need context >= 1, or texts without CR.
RC_GTEST_PROP(PatchProperty, MakeThenApplyGivesNewText, ()) {
  std::string old_text = *gen_text();
  std::string new_text = *gen_text();
  MakeDiffOptions options;
  options.context = *rc::gen::inRange<size_t>(0, 4);
  if (options.context == 0) {
    std::erase(old_text, '\r');
    std::erase(new_text, '\r');
  }
  std::string diff = make_unified_diff(old_text, new_text, options);
  if (old_text == new_text) {
    RC_ASSERT(diff.empty());
    return;
  }
  auto files = parse_unified_diff(diff);
  RC_ASSERT(files.ok());
  RC_ASSERT(files->size() == 1u);
  RC_ASSERT(format_file_patch((*files)[0]) == diff);
  PatchPlan plan = plan_patch(old_text, (*files)[0]);
  RC_ASSERT(plan.ok);
  RC_ASSERT(plan.new_text == new_text);
  for (const HunkReport& h : plan.hunks) {
    RC_ASSERT(h.offset == 0);  // the header's line numbers are exact
    RC_ASSERT(h.fuzz == 0u);
    RC_ASSERT(!h.whitespace);
  }
}

RC_GTEST_PROP(PatchProperty, DriftedPatchStillApplies, ()) {
  std::string old_text = *gen_text() + "\nunique anchor line\n" + *gen_text();
  std::string new_text = old_text;
  new_text.replace(new_text.find("unique anchor line"), 18, "changed anchor line");
  std::string diff = make_unified_diff(old_text, new_text);
  auto files = parse_unified_diff(diff);
  RC_ASSERT(files.ok());
  std::string prefix = "prepended 1\nprepended 2\nprepended 3\n";
  auto result = apply_patch(prefix + old_text, (*files)[0]);
  RC_ASSERT(result.ok());
  RC_ASSERT(*result == prefix + new_text);
}

RC_GTEST_PROP(PatchProperty, ApplyNeverCrashesOnUnrelatedText, ()) {
  std::string a = *gen_text(), b = *gen_text(), other = *gen_text();
  std::string diff = make_unified_diff(a, b);
  if (diff.empty()) return;
  auto files = parse_unified_diff(diff);
  RC_ASSERT(files.ok());
  PatchPlan plan = plan_patch(other, (*files)[0]);
  RC_ASSERT(plan.hunks.size() == (*files)[0].hunks.size());
  if (!plan.ok) RC_ASSERT(plan.new_text.empty());
}

}  // namespace
}  // namespace weft::text

#include "weft/text/unified_diff.h"

#include <gtest/gtest.h>
#include <rapidcheck/gtest.h>

#include <chrono>

namespace weft::text {
namespace {

TEST(MakeDiffTest, EqualTextsGiveEmptyDiff) {
  EXPECT_EQ(make_unified_diff("a\nb\n", "a\nb\n"), "");
}

TEST(MakeDiffTest, SimpleChangeWithContext) {
  std::string old_text = "1\n2\n3\n4\n5\n6\n7\n8\n9\n";
  std::string new_text = "1\n2\n3\n4\nfive\n6\n7\n8\n9\n";
  MakeDiffOptions options;
  options.old_label = "a/f.txt";
  options.new_label = "b/f.txt";
  EXPECT_EQ(make_unified_diff(old_text, new_text, options),
            "--- a/f.txt\n+++ b/f.txt\n@@ -2,7 +2,7 @@\n 2\n 3\n 4\n-5\n+five\n 6\n 7\n 8\n");
}

TEST(MakeDiffTest, ContextZeroAndSingleLineCounts) {
  MakeDiffOptions options;
  options.context = 0;
  options.file_headers = false;
  EXPECT_EQ(make_unified_diff("a\nb\nc\n", "a\nB\nc\n", options), "@@ -2 +2 @@\n-b\n+B\n");
  EXPECT_EQ(make_unified_diff("a\nc\n", "a\nb\nc\n", options), "@@ -1,0 +2 @@\n+b\n");
  EXPECT_EQ(make_unified_diff("", "x\n", options), "@@ -0,0 +1 @@\n+x\n");
}

TEST(MakeDiffTest, NoNewlineAtEndIsMarked) {
  MakeDiffOptions options;
  options.file_headers = false;
  EXPECT_EQ(make_unified_diff("a\nb", "a\nb\n", options),
            "@@ -1,2 +1,2 @@\n a\n-b\n\\ No newline at end of file\n+b\n");
  EXPECT_EQ(make_unified_diff("a\n", "a\nc", options),
            "@@ -1 +1,2 @@\n a\n+c\n\\ No newline at end of file\n");
}

TEST(MakeDiffTest, NearbyChangesShareAHunk) {
  std::string old_text, new_text;
  for (int i = 0; i < 30; ++i) {
    old_text += std::to_string(i) + "\n";
    new_text += (i == 5 || i == 10 || i == 25 ? "x" : std::to_string(i)) + "\n";
  }
  auto patch = make_file_patch(old_text, new_text);
  ASSERT_EQ(patch.hunks.size(), 2u);  // 5 and 10 are 4 lines apart (<= 2*3)
  EXPECT_EQ(patch.hunks[0].header(), "@@ -3,12 +3,12 @@");
}

TEST(MakeDiffTest, MegabyteFileSmallEditIsFast) {
  std::string old_text;
  for (int i = 0; i < 20000; ++i) old_text += "line " + std::to_string(i) + " with some text\n";
  old_text += old_text;  // repeated lines: the diff must still anchor correctly
  std::string new_text = old_text;
  new_text.replace(new_text.find("line 10000 ", old_text.size() / 2), 4, "LINE");
  auto start = std::chrono::steady_clock::now();
  FilePatch patch = make_file_patch(old_text, new_text);
  double ms =
      std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
  ASSERT_EQ(patch.hunks.size(), 1u);
  EXPECT_EQ(patch.hunks[0].old_start, 20000u + 10000u - 2u);
  EXPECT_LT(ms, 1000.0);  // about a millisecond in release; generous for sanitizers
}

TEST(ParseDiffTest, ParsesGitStyleMultiFilePatch) {
  std::string text =
      "From: someone\n"
      "diff --git a/x.txt b/x.txt\n"
      "index 123..456 100644\n"
      "--- a/x.txt\t2024-01-01 00:00:00\n"
      "+++ b/x.txt\n"
      "@@ -1,2 +1,2 @@ section name\n"
      " keep\n"
      "-old\n"
      "+new\n"
      "diff --git a/new.txt b/new.txt\n"
      "--- /dev/null\n"
      "+++ b/new.txt\n"
      "@@ -0,0 +1 @@\n"
      "+hello\n"
      "\\ No newline at end of file\n";
  auto files = parse_unified_diff(text);
  ASSERT_TRUE(files.ok()) << files.status();
  ASSERT_EQ(files->size(), 2u);
  const FilePatch& x = (*files)[0];
  EXPECT_EQ(x.old_path, "a/x.txt");
  EXPECT_EQ(x.target_path(), "x.txt");
  EXPECT_EQ(x.preamble.size(), 3u);
  ASSERT_EQ(x.hunks.size(), 1u);
  EXPECT_EQ(x.hunks[0].section, "section name");
  EXPECT_EQ(x.hunks[0].lines.size(), 3u);
  const FilePatch& created = (*files)[1];
  EXPECT_TRUE(created.is_creation());
  EXPECT_EQ(created.target_path(), "new.txt");
  ASSERT_EQ(created.hunks[0].lines.size(), 1u);
  EXPECT_TRUE(created.hunks[0].lines[0].no_newline);
}

TEST(ParseDiffTest, HeaderlessHunksAndQuotedPaths) {
  auto bare = parse_unified_diff("@@ -1 +1 @@\n-a\n+b\n");
  ASSERT_TRUE(bare.ok()) << bare.status();
  EXPECT_EQ((*bare)[0].target_path(), "");
  auto quoted =
      parse_unified_diff("--- \"a/sp ace\\t.txt\"\n+++ \"b/sp ace\\t.txt\"\n@@ -1 +1 @@\n-a\n+b\n");
  ASSERT_TRUE(quoted.ok()) << quoted.status();
  EXPECT_EQ((*quoted)[0].target_path(), "sp ace\t.txt");
}

TEST(ParseDiffTest, EmptyLineCountsAsContextAndCrlfPatchParses) {
  auto files = parse_unified_diff("@@ -1,3 +1,3 @@\n a\n\n-b\n+c\n");
  ASSERT_TRUE(files.ok()) << files.status();
  EXPECT_EQ((*files)[0].hunks[0].lines[1], (HunkLine{' ', "", false}));
  auto crlf = parse_unified_diff("--- a/f\r\n+++ b/f\r\n@@ -1 +1 @@\r\n-a\r\n+b\r\n");
  ASSERT_TRUE(crlf.ok()) << crlf.status();
  EXPECT_EQ((*crlf)[0].new_path, "b/f");
  EXPECT_EQ((*crlf)[0].hunks[0].lines[1].text, "b\r");
}

void expect_error(std::string_view patch, std::string_view fragment) {
  auto result = parse_unified_diff(patch);
  ASSERT_FALSE(result.ok()) << "accepted: " << patch;
  EXPECT_EQ(result.status().code(), StatusCode::kInvalidArgument);
  EXPECT_NE(result.status().message().find(fragment), std::string_view::npos)
      << result.status().message();
}

TEST(ParseDiffTest, RejectsBadInputNamingTheLine) {
  expect_error("", "no hunks found");
  expect_error("just some text\n", "no hunks found");
  expect_error("@@ -1,x +1 @@\n", "patch line 1: malformed hunk header");
  expect_error("@@ -1 +1\n-a\n+b\n", "patch line 1: malformed hunk header");
  expect_error("@@ -1,2 +1 @@\n-a\n+b\n", "patch line 1: the patch ends inside hunk");
  expect_error("@@ -1 +1 @@\n-a\n-b\n+b\n", "patch line 3: hunk @@ -1 +1 @@ has more old lines");
  expect_error("@@ -1,2 +1,2 @@\n a\n*b\n", "patch line 3: unexpected line '*b'");
  expect_error("--- a/x\nnot plus\n", "patch line 1: '---' file header is not followed");
  expect_error("+++ b/x\n@@ -1 +1 @@\n", "patch line 1: '+++' file header without");
  expect_error("--- a/x\n+++ b/x\nfoo\n", "patch line 3: expected a '@@");
  expect_error("@@ -1 +1 @@\n\\ No newline at end of file\n-a\n+b\n",
               "patch line 2: '\\ No newline at end of file' does not follow");
  expect_error("@@ -1,2 +1,2 @@\n-a\n\\ No newline at end of file\n-b\n+a\n+b\n",
               "patch line 4: line after '\\ No newline");
  expect_error("@@ -5 +5 @@\n-a\n+b\n@@ -1 +1 @@\n-c\n+d\n",
               "patch line 4: hunk @@ -1 +1 @@ starts before");
  expect_error("@@ -0,2 +1 @@\n", "starts at line 0 with a non-zero count");
  expect_error("@@ -99999999999999999999 +1 @@\n", "malformed hunk header");
  expect_error("--- a/x\n+++ b/x\n@@ -1 +1 @@\n-a\n+b\n--- a/y\n+++ b/y\n\n", "expected a '@@");
}

TEST(ParseDiffTest, FormatRoundTrips) {
  std::string text =
      "--- a/x\n+++ b/x\n@@ -1,3 +1,3 @@ fn\n a\n-b\n+c\n d\n\\ No newline at end of file\n";
  auto files = parse_unified_diff(text);
  ASSERT_TRUE(files.ok()) << files.status();
  EXPECT_EQ(format_file_patch((*files)[0]), text);
}

TEST(ParseDiffTest, FormatQuotesAwkwardPaths) {
  FilePatch patch = make_file_patch("a\n", "b\n");
  patch.old_path = "dir/new\nline \"q\"";
  patch.new_path = "back\\slash ";
  auto files = parse_unified_diff(format_file_patch(patch));
  ASSERT_TRUE(files.ok()) << files.status();
  EXPECT_EQ((*files)[0].old_path, patch.old_path);
  EXPECT_EQ((*files)[0].new_path, patch.new_path);
}

TEST(ParseDiffTest, SectionTrailingCarriageReturnsAreDropped) {
  auto files = parse_unified_diff("@@ -1 +1 @@ fn\r\r\n-a\n+b\n");
  ASSERT_TRUE(files.ok()) << files.status();
  EXPECT_EQ((*files)[0].hunks[0].section, "fn");
}

RC_GTEST_PROP(ParseDiffProperty, ParserNeverCrashesOnGarbage, ()) {
  const std::vector<std::string> pieces = {"@@ -1,2 +1,3 @@\n",
                                           "--- a\n",
                                           "+++ b\n",
                                           " x\n",
                                           "-y\n",
                                           "+z\n",
                                           "\\ No newline at end of file\n",
                                           "\n",
                                           "@@",
                                           "\r\n",
                                           "garbage",
                                           "@@ -0,0 +0,0 @@\n"};
  auto parts = *rc::gen::container<std::vector<std::string>>(rc::gen::elementOf(pieces));
  std::string patch;
  for (auto& p : parts) patch += p;
  auto result = parse_unified_diff(patch);
  if (result.ok()) {
    RC_ASSERT(!result->empty());
    for (const auto& file : *result) {
      RC_ASSERT(!file.hunks.empty());
      for (const auto& hunk : file.hunks) {
        size_t old_lines = 0, new_lines = 0;
        for (const auto& line : hunk.lines) {
          old_lines += line.kind != '+';
          new_lines += line.kind != '-';
        }
        RC_ASSERT(old_lines == hunk.old_count);
        RC_ASSERT(new_lines == hunk.new_count);
      }
    }
  } else {
    RC_ASSERT(result.status().code() == StatusCode::kInvalidArgument);
    RC_ASSERT(!result.status().message().empty());
  }
}

}  // namespace
}  // namespace weft::text

#include "weft/base/diff.h"

#include <gtest/gtest.h>
#include <rapidcheck/gtest.h>

#include <chrono>
#include <string>

#include "weft/base/utf.h"

namespace weft {
namespace {

std::vector<uint64_t> items(std::string_view s) { return {s.begin(), s.end()}; }

// Checks that `runs` is a well-formed script from a to b; returns its cost.
size_t check_script(const std::vector<uint64_t>& a, const std::vector<uint64_t>& b,
                    const std::vector<DiffRun>& runs) {
  size_t i = 0, j = 0, cost = 0;
  for (size_t r = 0; r < runs.size(); ++r) {
    const DiffRun& run = runs[r];
    EXPECT_GT(run.count, 0u);
    EXPECT_EQ(run.old_begin, i);
    EXPECT_EQ(run.new_begin, j);
    if (r > 0) {
      EXPECT_NE(runs[r - 1].op, run.op);
      if (runs[r - 1].op == DiffOp::kInsert) {
        EXPECT_NE(run.op, DiffOp::kDelete);
      }
    }
    switch (run.op) {
      case DiffOp::kEqual:
        for (size_t k = 0; k < run.count; ++k) EXPECT_EQ(a.at(i + k), b.at(j + k));
        i += run.count;
        j += run.count;
        break;
      case DiffOp::kDelete:
        i += run.count;
        cost += run.count;
        break;
      case DiffOp::kInsert:
        j += run.count;
        cost += run.count;
        break;
    }
  }
  EXPECT_EQ(i, a.size());
  EXPECT_EQ(j, b.size());
  return cost;
}

// Edit distance (insertions + deletions) by dynamic programming, for checking minimality.
size_t lcs_distance(const std::vector<uint64_t>& a, const std::vector<uint64_t>& b) {
  std::vector<std::vector<size_t>> lcs(a.size() + 1, std::vector<size_t>(b.size() + 1, 0));
  for (size_t i = 1; i <= a.size(); ++i) {
    for (size_t j = 1; j <= b.size(); ++j) {
      lcs[i][j] =
          a[i - 1] == b[j - 1] ? lcs[i - 1][j - 1] + 1 : std::max(lcs[i - 1][j], lcs[i][j - 1]);
    }
  }
  return a.size() + b.size() - 2 * lcs[a.size()][b.size()];
}

TEST(DiffTest, EmptyAndEqualInputs) {
  EXPECT_TRUE(diff_items({}, {}).empty());
  auto a = items("abc");
  EXPECT_EQ(diff_items(a, a), (std::vector<DiffRun>{{DiffOp::kEqual, 0, 0, 3}}));
  EXPECT_EQ(diff_items(a, {}), (std::vector<DiffRun>{{DiffOp::kDelete, 0, 0, 3}}));
  EXPECT_EQ(diff_items({}, a), (std::vector<DiffRun>{{DiffOp::kInsert, 0, 0, 3}}));
}

TEST(DiffTest, MyersPaperExampleIsMinimal) {
  auto a = items("ABCABBA"), b = items("CBABAC");
  EXPECT_EQ(check_script(a, b, diff_items(a, b)), 5u);
}

TEST(DiffTest, ReplacementIsDeleteThenInsert) {
  auto a = items("xaby"), b = items("xcdy");
  EXPECT_EQ(diff_items(a, b), (std::vector<DiffRun>{{DiffOp::kEqual, 0, 0, 1},
                                                    {DiffOp::kDelete, 1, 1, 2},
                                                    {DiffOp::kInsert, 3, 1, 2},
                                                    {DiffOp::kEqual, 3, 3, 1}}));
}

TEST(DiffTest, CostCapStillGivesValidScript) {
  std::vector<uint64_t> a, b;
  for (uint64_t i = 0; i < 3000; ++i) {
    a.push_back(i % 7 == 0 ? 1000000 + i : i);
    b.push_back(i % 5 == 0 ? 2000000 + i : i);
  }
  DiffOptions tight;
  tight.max_cost = 4;
  size_t capped = check_script(a, b, diff_items(a, b, tight));
  size_t exact = check_script(a, b, diff_items(a, b));
  EXPECT_LE(exact, capped);
  EXPECT_LT(capped, a.size() + b.size());  // better than replacing everything
}

TEST(DiffTest, SplitLinesKeepsTerminators) {
  EXPECT_EQ(split_lines_keep_ends("a\r\nb\nc"),
            (std::vector<std::string_view>{"a\r\n", "b\n", "c"}));
  EXPECT_TRUE(split_lines_keep_ends("").empty());
  EXPECT_EQ(split_lines_keep_ends("\n\n"), (std::vector<std::string_view>{"\n", "\n"}));
}

TEST(DiffTest, LineDiffTreatsMissingFinalNewlineAsChange) {
  auto runs = diff_lines("a\nb", "a\nb\n");
  ASSERT_EQ(runs.size(), 3u);
  EXPECT_EQ(runs[1], (DiffRun{DiffOp::kDelete, 1, 1, 1}));
  EXPECT_EQ(runs[2], (DiffRun{DiffOp::kInsert, 2, 1, 1}));
}

TEST(DiffTest, TextDiffRefinesInsideLines) {
  std::string a = "first line\nthe quick brown fox\nlast\n";
  std::string b = "first line\nthe quick red fox\nlast\n";
  auto reps = diff_text(a, b);
  EXPECT_EQ(apply_text_replacements(a, b, reps), b);
  size_t changed = 0;
  for (const auto& r : reps) changed += r.old_length + r.new_length;
  EXPECT_LE(changed, 8u);  // "brown" -> "red" at character level, not the whole line
}

TEST(DiffTest, TextDiffKeepsUtf8Boundaries) {
  std::string a = "h\xC3\xA9llo w\xF0\x9F\x98\x80rld\n";  // "héllo w😀rld"
  std::string b = "h\xC3\xA8llo w\xF0\x9F\x98\x81rld\n";  // "hèllo w😁rld"
  auto reps = diff_text(a, b);
  EXPECT_EQ(apply_text_replacements(a, b, reps), b);
  for (const auto& r : reps) {
    EXPECT_TRUE(is_valid_utf8(std::string_view(a).substr(r.old_offset, r.old_length)));
    EXPECT_TRUE(is_valid_utf8(std::string_view(b).substr(r.new_offset, r.new_length)));
  }
}

TEST(DiffTest, MegabyteFileWithFewChangesIsFast) {
  std::string a;
  for (int i = 0; i < 20000; ++i) {
    a += "line " + std::to_string(i) + " of a fairly ordinary source file with text\n";
  }
  ASSERT_GT(a.size(), 1000000u);
  std::string b = a;
  b.replace(b.find("line 100 "), 8, "LINE 100");
  b.insert(b.find("line 15000 "), "an inserted line\n");
  b.erase(b.find("line 19990 "), 20);
  auto start = std::chrono::steady_clock::now();
  auto reps = diff_text(a, b);
  auto ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start);
  EXPECT_EQ(apply_text_replacements(a, b, reps), b);
  EXPECT_LE(reps.size(), 4u);
  EXPECT_LT(ms.count(), 2000.0);  // generous for sanitizer builds; ~ms in release
}

TEST(DiffTest, CompletelyDifferentLargeInputsStayBounded) {
  std::string a, b;
  for (int i = 0; i < 20000; ++i) {
    a += "a" + std::to_string(i * 7919 % 20011) + "\n";
    b += "b" + std::to_string(i * 104729 % 20011) + "\n";
  }
  auto start = std::chrono::steady_clock::now();
  auto reps = diff_text(a, b);
  auto ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start);
  EXPECT_EQ(apply_text_replacements(a, b, reps), b);
  EXPECT_LT(ms.count(), 5000.0);
}

RC_GTEST_PROP(DiffProperty, ScriptIsValidAndMinimal, ()) {
  auto gen = rc::gen::container<std::vector<uint64_t>>(rc::gen::inRange<uint64_t>(0, 4));
  auto a = *rc::gen::resize(40, gen);
  auto b = *rc::gen::resize(40, gen);
  size_t cost = check_script(a, b, diff_items(a, b));
  RC_ASSERT(cost == lcs_distance(a, b));
}

RC_GTEST_PROP(DiffProperty, TinyCostCapStaysValid, ()) {
  auto gen = rc::gen::container<std::vector<uint64_t>>(rc::gen::inRange<uint64_t>(0, 6));
  auto a = *gen;
  auto b = *gen;
  DiffOptions options;
  options.max_cost = *rc::gen::inRange<size_t>(1, 4);
  check_script(a, b, diff_items(a, b, options));
  RC_ASSERT(!::testing::Test::HasFailure());
}

RC_GTEST_PROP(DiffProperty, TextDiffRoundTrips, ()) {
  const std::vector<std::string> pieces = {
      "a", "b", "\n", "\r\n", "\xC3\xA9", "\xF0\x9F\x98\x80", " ", "line\n"};
  auto gen = rc::gen::container<std::vector<std::string>>(rc::gen::elementOf(pieces));
  std::string a, b;
  for (auto& p : *gen) a += p;
  for (auto& p : *gen) b += p;
  auto reps = diff_text(a, b);
  RC_ASSERT(apply_text_replacements(a, b, reps) == b);
  size_t prev_end = 0;
  for (const auto& r : reps) {
    RC_ASSERT(r.old_offset >= prev_end);
    RC_ASSERT(r.old_length + r.new_length > 0);
    RC_ASSERT(is_valid_utf8(std::string_view(a).substr(r.old_offset, r.old_length)));
    prev_end = r.old_offset + r.old_length;
  }
}

}  // namespace
}  // namespace weft

namespace weft {
namespace {

TEST(CommonLineAffixesTest, StopsAtLineBoundariesAndNeverOverlaps) {
  CommonLines same_start = common_line_affixes("a\nb\nc\n", "a\nX\nc\n");
  EXPECT_EQ(same_start.prefix_bytes, 2u);  // "a\n"
  EXPECT_EQ(same_start.suffix_bytes, 2u);  // "c\n"
  // A shared partial line is not part of the prefix.
  EXPECT_EQ(common_line_affixes("abc\n", "abd\n").prefix_bytes, 0u);
  // Repeated lines: prefix and suffix together never exceed the shorter text.
  CommonLines repeated = common_line_affixes("x\nx\n", "x\nx\nx\n");
  EXPECT_LE(repeated.prefix_bytes + repeated.suffix_bytes, 4u);
  EXPECT_EQ(repeated.prefix_bytes, 4u);
  CommonLines identical = common_line_affixes("q\n", "q\n");
  EXPECT_EQ(identical.prefix_bytes + identical.suffix_bytes, 2u);
}

}  // namespace
}  // namespace weft

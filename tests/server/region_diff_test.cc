// region_diff must give exactly text::make_unified_diff's output.
#include "server/tools/region_diff.h"

#include <gtest/gtest.h>
#include <rapidcheck/gtest.h>

namespace weft::server::tools {
namespace {

std::string lines_text(const std::vector<uint8_t>& picks, bool final_newline) {
  std::string out;
  for (size_t i = 0; i < picks.size(); ++i) {
    out += "l" + std::to_string(picks[i] % 5);
    if (i + 1 < picks.size() || final_newline) out += "\n";
  }
  return out;
}

TEST(RegionDiffTest, MatchesTheFullDiffOnExamples) {
  text::MakeDiffOptions o;
  o.old_label = "a/f";
  o.new_label = "b/f";
  std::string big;
  for (int i = 0; i < 1000; ++i) big += "line " + std::to_string(i) + "\n";
  std::string edited = big;
  edited.replace(edited.find("line 500\n"), 9, "changed\nadded\n");
  EXPECT_EQ(region_diff(big, edited, o), text::make_unified_diff(big, edited, o));
  EXPECT_EQ(region_diff("a\nb", "a\nc", o), text::make_unified_diff("a\nb", "a\nc", o));
  EXPECT_EQ(region_diff("", "x\n", o), text::make_unified_diff("", "x\n", o));
  EXPECT_EQ(region_diff("x\n", "", o), text::make_unified_diff("x\n", "", o));
  EXPECT_EQ(region_diff("same\n", "same\n", o), "");
}

RC_GTEST_PROP(RegionDiffProperty, EqualsFullDiff,
              (std::vector<uint8_t> a, std::vector<uint8_t> b, bool na, bool nb)) {
  std::string old_text = lines_text(a, na);
  std::string new_text = lines_text(b, nb);
  text::MakeDiffOptions o;
  RC_ASSERT(region_diff(old_text, new_text, o) == text::make_unified_diff(old_text, new_text, o));
}

}  // namespace
}  // namespace weft::server::tools

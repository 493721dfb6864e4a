#include "weft/base/json_depth.h"

#include <gtest/gtest.h>
#include <rapidcheck/gtest.h>

#include <string>

namespace weft {
namespace {

std::string nested_arrays(size_t depth) {
  return std::string(depth, '[') + std::string(depth, ']');
}

std::string nested_objects(size_t depth) {
  std::string text;
  for (size_t i = 0; i < depth; ++i) text += "{\"k\":";
  text += "1";
  text += std::string(depth, '}');
  return text;
}

TEST(JsonDepthTest, DepthAtTheLimitPassesAndOneMoreIsRefused) {
  EXPECT_TRUE(check_json_depth(nested_arrays(kMaxJsonDepth)).ok());
  EXPECT_TRUE(check_json_depth(nested_objects(kMaxJsonDepth)).ok());
  Status s = check_json_depth(nested_arrays(kMaxJsonDepth + 1));
  EXPECT_EQ(s.code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(s.message(), "JSON nested deeper than 64 levels (at byte 64)");
  EXPECT_FALSE(check_json_depth(nested_objects(kMaxJsonDepth + 1)).ok());
  EXPECT_TRUE(check_json_depth(nested_arrays(3), 3).ok());
  EXPECT_FALSE(check_json_depth(nested_arrays(4), 3).ok());
}

TEST(JsonDepthTest, ScalarsAndSiblingsDoNotAddDepth) {
  EXPECT_TRUE(check_json_depth("", 0).ok());
  EXPECT_TRUE(check_json_depth("\"text\"", 0).ok());
  EXPECT_FALSE(check_json_depth("[]", 0).ok());
  // Wide is not deep: many siblings at level 2.
  std::string wide = "[";
  for (int i = 0; i < 10000; ++i) wide += "[1],{\"a\":2},";
  wide += "[]]";
  EXPECT_TRUE(check_json_depth(wide, 2).ok());
  EXPECT_FALSE(check_json_depth(wide, 1).ok());
}

TEST(JsonDepthTest, BracketsInsideStringsDoNotCount) {
  std::string in_string = "[\"" + std::string(1000, '[') + std::string(1000, '{') + "\"]";
  EXPECT_TRUE(check_json_depth(in_string, 1).ok());
  // An escaped quote does not end the string; an escaped backslash before the
  // closing quote does not escape it.
  EXPECT_TRUE(check_json_depth(R"(["a\"[[[[", "b\\", "\\\"{{{{"])", 1).ok());
  EXPECT_FALSE(check_json_depth(R"(["b\\", [[]]])", 2).ok());
  EXPECT_TRUE(check_json_depth(R"({"k\"[": "\u005b[", "x": [1]})", 2).ok());
  // Brackets after a string that closed do count again.
  EXPECT_FALSE(check_json_depth(R"(["]", [[]]])", 2).ok());
}

TEST(JsonDepthTest, HostileNestingIsRefusedWithoutCrashing) {
  EXPECT_FALSE(check_json_depth(nested_arrays(150'000)).ok());
  EXPECT_FALSE(check_json_depth(nested_objects(100'000)).ok());
  // Unbalanced closers never let the depth underflow into a pass.
  std::string closers = std::string(1000, ']') + nested_arrays(kMaxJsonDepth + 1);
  EXPECT_FALSE(check_json_depth(closers).ok());
  // Unterminated strings and trailing garbage are the parser's to reject.
  EXPECT_TRUE(check_json_depth("[\"unterminated [[[[").ok());
  EXPECT_TRUE(check_json_depth("[1]]]]}}}").ok());
}

// Text with a known depth: nested arrays and objects, siblings, and strings
// full of brackets, quotes and backslashes.
std::string gen_json(size_t depth, size_t& used) {
  std::string piece = *rc::gen::container<std::string>(
      rc::gen::element('[', ']', '{', '}', '"', '\\', 'a', ' ', ','));
  std::string str = "\"";
  for (char c : piece) {
    if (c == '"' || c == '\\') str += '\\';
    str += c;
  }
  str += "\"";
  if (depth == 0) return str;
  bool object = *rc::gen::arbitrary<bool>();
  size_t children = *rc::gen::inRange<size_t>(1, 4);
  std::string out(1, object ? '{' : '[');
  size_t deepest = 0;
  for (size_t i = 0; i < children; ++i) {
    if (i > 0) out += ',';
    if (object) out += str + ":";
    size_t child_depth = i == 0 ? depth - 1 : *rc::gen::inRange<size_t>(0, depth);
    size_t child_used = 0;
    out += gen_json(child_depth, child_used);
    deepest = std::max(deepest, child_used);
  }
  out += object ? '}' : ']';
  used = deepest + 1;
  return out;
}

RC_GTEST_PROP(JsonDepthTest, AgreesWithTheDepthOfGeneratedJson, ()) {
  size_t depth = *rc::gen::inRange<size_t>(0, 12);
  size_t used = 0;
  std::string text = gen_json(depth, used);
  RC_ASSERT(used == depth);
  RC_ASSERT(check_json_depth(text, depth).ok());
  if (depth > 0) RC_ASSERT(!check_json_depth(text, depth - 1).ok());
}

}  // namespace
}  // namespace weft

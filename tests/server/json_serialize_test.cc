// serialize's fast string path gives exactly nlohmann's dump(-1, ' ', false,
// replace): the same bytes for every string (controls, quotes, backslashes,
// multi-byte UTF-8, invalid UTF-8) and every nesting.
#include <gtest/gtest.h>
#include <rapidcheck/gtest.h>

#include "weft/server/jsonrpc.h"

namespace weft::server {
namespace {

std::string reference(const Json& j) {
  return j.dump(-1, ' ', false, Json::error_handler_t::replace);
}

TEST(JsonSerializeTest, EscapesLikeNlohmann) {
  std::string every_control;
  for (int c = 0; c < 0x20; ++c) every_control.push_back(static_cast<char>(c));
  std::vector<std::string> strings = {"",
                                      "plain",
                                      "\"quoted\" \\ back\\slash",
                                      every_control,
                                      "\x7f del",
                                      "h\xc3\xa9llo \xe2\x82\xac \xf0\x9f\x98\x80",
                                      "\xff bad",
                                      "cut \xe2\x82",
                                      std::string("nul\0inside", 10)};
  for (const auto& s : strings) {
    EXPECT_EQ(serialize(Json(s)), reference(Json(s))) << s;
    Json obj = {{s, s}, {"n", 1}, {"f", 1.5}, {"neg", -3}, {"b", true}, {"z", nullptr}};
    EXPECT_EQ(serialize(obj), reference(obj));
  }
  Json nested = {{"content", Json::array({{{"type", "text"}, {"text", "a\tb\n"}}})},
                 {"structuredContent",
                  {{"list", Json::array({1, "x", Json::array(), Json::object()})},
                   {"big", 18446744073709551615ull}}}};
  EXPECT_EQ(serialize(nested), reference(nested));
}

RC_GTEST_PROP(JsonSerializeProperty, SameBytesAsNlohmannForArbitraryStrings,
              (std::string a, std::string b, std::vector<std::string> list)) {
  Json j = {{"a", a}, {b, Json(list)}, {"n", static_cast<int64_t>(a.size()) - 7}};
  RC_ASSERT(serialize(j) == reference(j));
}

}  // namespace
}  // namespace weft::server

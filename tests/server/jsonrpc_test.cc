// JSON-RPC framing: ids, errors, batches, oversize and garbage input.
#include "weft/server/jsonrpc.h"

#include <gtest/gtest.h>
#include <rapidcheck/gtest.h>

namespace weft::server {
namespace {

int error_code(const Incoming& item) {
  return item.error_response ? (*item.error_response)["error"]["code"].get<int>() : 0;
}

TEST(JsonRpcTest, ParsesRequestNotificationAndResponse) {
  auto req = parse_input(R"({"jsonrpc":"2.0","id":7,"method":"ping"})");
  ASSERT_EQ(req.items.size(), 1u);
  ASSERT_TRUE(req.items[0].message);
  EXPECT_EQ(req.items[0].message->kind, MessageKind::kRequest);
  EXPECT_EQ(req.items[0].message->id, 7);
  EXPECT_EQ(req.items[0].message->method, "ping");

  auto note = parse_input(R"({"jsonrpc":"2.0","method":"notifications/initialized"})");
  EXPECT_EQ(note.items[0].message->kind, MessageKind::kNotification);

  auto resp = parse_input(R"({"jsonrpc":"2.0","id":"weft-1","result":{"roots":[]}})");
  EXPECT_EQ(resp.items[0].message->kind, MessageKind::kResponse);
  EXPECT_EQ(resp.items[0].message->id, "weft-1");
}

TEST(JsonRpcTest, IdsMustBeStringsOrIntegers) {
  EXPECT_EQ(error_code(parse_input(R"({"jsonrpc":"2.0","id":null,"method":"ping"})").items[0]),
            rpc::kInvalidRequest);
  EXPECT_EQ(error_code(parse_input(R"({"jsonrpc":"2.0","id":1.5,"method":"ping"})").items[0]),
            rpc::kInvalidRequest);
  EXPECT_EQ(error_code(parse_input(R"({"jsonrpc":"2.0","id":{},"method":"ping"})").items[0]),
            rpc::kInvalidRequest);
  EXPECT_EQ(error_code(parse_input(R"({"jsonrpc":"2.0","id":"x","method":"ping"})").items[0]), 0);
  EXPECT_EQ(error_code(parse_input(R"({"jsonrpc":"2.0","id":-3,"method":"ping"})").items[0]), 0);
}

TEST(JsonRpcTest, MalformedMessagesGetInvalidRequestWithTheirId) {
  auto no_version = parse_input(R"({"id":4,"method":"ping"})");
  EXPECT_EQ(error_code(no_version.items[0]), rpc::kInvalidRequest);
  EXPECT_EQ((*no_version.items[0].error_response)["id"], 4);
  EXPECT_EQ(error_code(parse_input(R"({"jsonrpc":"2.0","id":4,"method":3})").items[0]),
            rpc::kInvalidRequest);
  EXPECT_EQ(error_code(parse_input(R"({"jsonrpc":"2.0","id":4,"method":"x","params":3})").items[0]),
            rpc::kInvalidRequest);
  EXPECT_EQ(error_code(parse_input(R"([1,2])").items[0]), rpc::kInvalidRequest);
  EXPECT_EQ(error_code(parse_input(R"("hello")").items[0]), rpc::kInvalidRequest);
}

TEST(JsonRpcTest, GarbageIsAParseError) {
  for (const char* text : {"{", "not json", "{\"jsonrpc\":\"2.0\",", "\xff\xfe", "[{]"}) {
    auto parsed = parse_input(text);
    ASSERT_EQ(parsed.items.size(), 1u) << text;
    EXPECT_EQ(error_code(parsed.items[0]), rpc::kParseError) << text;
    EXPECT_TRUE((*parsed.items[0].error_response)["id"].is_null());
  }
}

TEST(JsonRpcTest, OversizeMessagesAreRefusedUnparsed) {
  std::string big = R"({"jsonrpc":"2.0","id":1,"method":"ping","params":{"x":")" +
                    std::string(2000, 'a') + "\"}}";
  auto parsed = parse_input(big, 1000);
  EXPECT_EQ(error_code(parsed.items[0]), rpc::kInvalidRequest);
  EXPECT_NE((*parsed.items[0].error_response)["error"]["message"].get<std::string>().find("1000"),
            std::string::npos);
}

// A request whose params nest `depth` arrays deep.
std::string nested_request(size_t depth) {
  return R"({"jsonrpc":"2.0","id":1,"method":"ping","params":{"x":)" + std::string(depth, '[') +
         std::string(depth, ']') + "}}";
}

TEST(JsonRpcTest, DeeplyNestedMessagesAreRefusedUnparsed) {
  // The envelope and params take two levels: 62 arrays inside reach 64.
  auto at_limit = parse_input(nested_request(62));
  ASSERT_EQ(at_limit.items.size(), 1u);
  EXPECT_TRUE(at_limit.items[0].message);
  auto over = parse_input(nested_request(63));
  ASSERT_EQ(over.items.size(), 1u);
  EXPECT_EQ(error_code(over.items[0]), rpc::kInvalidRequest);
  EXPECT_EQ((*over.items[0].error_response)["error"]["message"],
            "Invalid Request: JSON nested deeper than 64 levels (at byte 116)");
  EXPECT_TRUE((*over.items[0].error_response)["id"].is_null());
  EXPECT_EQ(error_code(parse_input(nested_request(150'000)).items[0]), rpc::kInvalidRequest);
  EXPECT_TRUE(parse_input(nested_request(5), kDefaultMaxMessageBytes, 7).items[0].message);
  EXPECT_EQ(error_code(parse_input(nested_request(6), kDefaultMaxMessageBytes, 7).items[0]),
            rpc::kInvalidRequest);
}

TEST(JsonRpcTest, MessagesOfMillionsOfTinyValuesAreRefusedUnparsed) {
  // Well under the size limit, but parsed it would take hundreds of MB.
  auto wide = [](size_t n) {
    std::string text = R"({"jsonrpc":"2.0","id":1,"method":"ping","params":{"a":[)";
    for (size_t i = 0; i < n; ++i) text += i ? ",[]" : "[]";
    return text + "]}}";
  };
  EXPECT_TRUE(parse_input(wide(1000)).items[0].message);
  auto over = parse_input(wide(5'000'000));
  ASSERT_EQ(over.items.size(), 1u);
  EXPECT_EQ(error_code(over.items[0]), rpc::kInvalidRequest);
  EXPECT_NE((*over.items[0].error_response)["error"]["message"].get<std::string>().find(
                "JSON of more than 200000 values"),
            std::string::npos);
  // Members count twice (key and value); values inside strings not at all.
  EXPECT_TRUE(parse_input(wide(10), kDefaultMaxMessageBytes, kMaxJsonDepth, 40).items[0].message);
  EXPECT_EQ(error_code(parse_input(wide(40), kDefaultMaxMessageBytes, kMaxJsonDepth, 40).items[0]),
            rpc::kInvalidRequest);
  std::string in_string = R"({"jsonrpc":"2.0","id":1,"method":"ping","params":{"a":")" +
                          std::string(1'000'000, ',') + R"("}})";
  EXPECT_TRUE(parse_input(in_string).items[0].message);
}

TEST(JsonRpcTest, BatchesAreSplitAndEmptyBatchIsInvalid) {
  auto batch = parse_input(R"([{"jsonrpc":"2.0","id":1,"method":"a"},{"bad":1}])");
  EXPECT_TRUE(batch.is_batch);
  ASSERT_EQ(batch.items.size(), 2u);
  EXPECT_TRUE(batch.items[0].message);
  EXPECT_EQ(error_code(batch.items[1]), rpc::kInvalidRequest);
  auto empty = parse_input("[]");
  EXPECT_FALSE(empty.is_batch);
  EXPECT_EQ(error_code(empty.items[0]), rpc::kInvalidRequest);
}

TEST(JsonRpcTest, SerializeIsOneLineEvenWithNewlinesAndBadUtf8) {
  Json m = make_result(1, {{"text", "a\nb"}, {"bad", std::string("\xff")}});
  std::string line = serialize(m);
  EXPECT_EQ(line.find('\n'), std::string::npos);
  EXPECT_FALSE(Json::parse(line, nullptr, false).is_discarded());
}

TEST(JsonRpcTest, IdKeysDistinguishStringsFromNumbers) {
  EXPECT_NE(id_key(1), id_key("1"));
  EXPECT_EQ(id_key("a"), id_key("a"));
}

RC_GTEST_PROP(JsonRpcProperty, ArbitraryTextNeverThrowsAndAlwaysClassifies, (std::string text)) {
  auto parsed = parse_input(text, 64);
  RC_ASSERT(!parsed.items.empty());
  for (const auto& item : parsed.items)
    RC_ASSERT(item.message.has_value() != item.error_response.has_value());
}

}  // namespace
}  // namespace weft::server

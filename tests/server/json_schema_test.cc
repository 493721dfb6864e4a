// The JSON Schema subset validator and its messages.
#include "weft/server/json_schema.h"

#include <gtest/gtest.h>

namespace weft::server {
namespace {

const Json kSchema = Json::parse(R"({
  "type": "object",
  "properties": {
    "path": {"type": "string", "minLength": 1},
    "limit": {"type": "integer", "minimum": 1, "maximum": 100},
    "mode": {"type": "string", "enum": ["create", "overwrite"]},
    "edits": {"type": "array", "minItems": 1, "items": {
      "type": "object", "required": ["old_string"], "additionalProperties": false,
      "properties": {"old_string": {"type": "string"}, "replace_all": {"type": "boolean"}}}}
  },
  "required": ["path"],
  "additionalProperties": false
})");

std::string message_of(const Json& value) {
  Status s = validate_json(kSchema, value);
  return std::string(s.message());
}

TEST(JsonSchemaTest, AcceptsValidArguments) {
  EXPECT_TRUE(validate_json(kSchema, Json::parse(R"({"path":"a","limit":3})")).ok());
  EXPECT_TRUE(validate_json(kSchema, Json::parse(R"({"path":"a","limit":3.0})")).ok());
  EXPECT_TRUE(
      validate_json(kSchema, Json::parse(R"({"path":"a","edits":[{"old_string":"x"}]})")).ok());
}

TEST(JsonSchemaTest, MessagesNameTheLocationAndTheFix) {
  EXPECT_NE(message_of(Json::object()).find("arguments: missing required property \"path\""),
            std::string::npos);
  EXPECT_NE(message_of({{"path", 3}}).find("arguments.path: expected a string, got integer 3"),
            std::string::npos);
  EXPECT_NE(message_of({{"path", ""}}).find("arguments.path: must not be empty"),
            std::string::npos);
  EXPECT_NE(message_of({{"path", "a"}, {"limit", 0}}).find("must be >= 1"), std::string::npos);
  EXPECT_NE(message_of({{"path", "a"}, {"limit", 101}}).find("must be <= 100"), std::string::npos);
  EXPECT_NE(message_of({{"path", "a"}, {"limit", 1.5}}).find("expected an integer"),
            std::string::npos);
  EXPECT_NE(message_of({{"path", "a"}, {"mode", "x"}}).find("must be one of [\"create\""),
            std::string::npos);
  EXPECT_NE(message_of({{"path", "a"}, {"bogus", 1}}).find("unknown property \"bogus\" (allowed:"),
            std::string::npos);
  EXPECT_NE(message_of(Json::parse(R"({"path":"a","edits":[]})")).find("at least 1 item"),
            std::string::npos);
  EXPECT_NE(message_of(Json::parse(R"({"path":"a","edits":[{"old_string":1}]})"))
                .find("arguments.edits[0].old_string: expected a string"),
            std::string::npos);
  EXPECT_NE(message_of(Json::parse(R"({"path":"a","edits":[{"x":1}]})"))
                .find("arguments.edits[0]: missing required property \"old_string\""),
            std::string::npos);
}

TEST(JsonSchemaTest, ReportsSeveralViolationsUpToTheCap) {
  auto errors =
      schema_violations(kSchema, Json::parse(R"({"a":1,"b":2,"c":3,"d":4})"), "arguments", 3);
  EXPECT_EQ(errors.size(), 3u);
}

TEST(JsonSchemaTest, TypeListsAndUnknownKeywords) {
  Json schema = {{"type", {"string", "null"}}, {"x-unknown", 1}};
  EXPECT_TRUE(validate_json(schema, nullptr).ok());
  EXPECT_TRUE(validate_json(schema, "a").ok());
  EXPECT_FALSE(validate_json(schema, 1).ok());
}

}  // namespace
}  // namespace weft::server

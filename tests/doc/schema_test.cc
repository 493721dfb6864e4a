#include "weft/doc/schema.h"

#include <gtest/gtest.h>
#include <rapidcheck/gtest.h>

#include "weft/doc/schema_json.h"

namespace weft::doc {
namespace {

using nlohmann::json;

FieldDef field(std::string name, FieldType type, bool read_only = false) {
  FieldDef f;
  f.name = std::move(name);
  f.field_type = type;
  f.read_only = read_only;
  return f;
}

BlockSchema diagnostics_schema() {
  return BlockSchema::composite({
      CompositeSection{"diagnostics",
                       std::make_shared<const BlockSchema>(
                           BlockSchema::map({field("errors", FieldType::kList, true),
                                             field("count", FieldType::kCounter, true)})),
                       "from the LSP", true},
      CompositeSection{
          "config",
          std::make_shared<const BlockSchema>(BlockSchema::map(
              {field("filter", FieldType::kText), field("seen", FieldType::kBoolean)})),
          std::nullopt, false},
      CompositeSection{"notes", std::make_shared<const BlockSchema>(BlockSchema::text()),
                       std::nullopt, false},
  });
}

TEST(SchemaTest, FieldReadOnlyHelpers) {
  BlockSchema m =
      BlockSchema::map({field("a", FieldType::kText, true), field("b", FieldType::kText),
                        field("c", FieldType::kNumber, true)});
  EXPECT_EQ(m.is_field_read_only("a"), std::optional<bool>(true));
  EXPECT_EQ(m.is_field_read_only("b"), std::optional<bool>(false));
  EXPECT_EQ(m.is_field_read_only("zzz"), std::nullopt);
  EXPECT_EQ(m.read_only_fields(), (std::vector<std::string>{"a", "c"}));
  EXPECT_EQ(BlockSchema::text().is_field_read_only("a"), std::nullopt);
  EXPECT_EQ(BlockSchema::log(3).read_only_fields(), std::vector<std::string>{});
  EXPECT_EQ(BlockSchema::list().is_field_read_only("x"), std::nullopt);
}

TEST(SchemaTest, SectionHelpers) {
  BlockSchema c = diagnostics_schema();
  EXPECT_EQ(c.is_section_read_only("diagnostics"), std::optional<bool>(true));
  EXPECT_EQ(c.is_section_read_only("config"), std::optional<bool>(false));
  EXPECT_EQ(c.is_section_read_only("nope"), std::nullopt);
  EXPECT_EQ(c.is_field_read_only("diagnostics"), std::optional<bool>(true));
  ASSERT_NE(c.get_section_schema("notes"), nullptr);
  EXPECT_EQ(c.get_section_schema("notes")->kind(), SchemaKind::kText);
  EXPECT_EQ(c.get_section_schema("nope"), nullptr);
  EXPECT_EQ(BlockSchema::text().get_section_schema("notes"), nullptr);
  EXPECT_EQ(BlockSchema::text().is_section_read_only("notes"), std::nullopt);
}

TEST(SchemaJsonTest, HandWrittenSchemasParse) {
  auto s = schema_from_json(R"({"type": "map", "fields": [
      {"name": "severity", "type": "text", "description": "filter", "required": true,
       "default": "warning", "read_only": true},
      {"name": "n", "field_type": "number", "default": 1.5},
      {"name": "on", "type": "boolean", "default": false},
      {"name": "tags", "type": "list", "default": ["a"]},
      {"name": "at", "type": "timestamp", "default": "2026-01-23T10:00:00Z"},
      {"name": "hits", "type": "counter", "default": 3}]})");
  ASSERT_TRUE(s.ok()) << s.status();
  const FieldDef* sev = s->find_field("severity");
  ASSERT_NE(sev, nullptr);
  EXPECT_TRUE(sev->required);
  EXPECT_TRUE(sev->read_only);
  EXPECT_EQ(*sev->default_value, json("warning"));
  EXPECT_EQ(s->find_field("n")->field_type, FieldType::kNumber);
  EXPECT_EQ(s->find_field("hits")->field_type, FieldType::kCounter);

  EXPECT_EQ(schema_from_json(R"("text")")->kind(), SchemaKind::kText);
  EXPECT_EQ(schema_from_json(R"({"type":"log","display_limit":5})")->as_log()->display_limit, 5u);
  auto l = schema_from_json(R"({"type":"list","item_schema":{"type":"text"},"max_items":3})");
  ASSERT_TRUE(l.ok()) << l.status();
  EXPECT_EQ(l->as_list()->max_items, std::optional<size_t>(3));
  EXPECT_EQ(l->as_list()->item_schema->kind(), SchemaKind::kText);
}

TEST(SchemaJsonTest, RoundTripsCanonicalForm) {
  BlockSchema c = diagnostics_schema();
  std::string text = schema_to_json(c);
  auto back = schema_from_json(text);
  ASSERT_TRUE(back.ok()) << back.status();
  EXPECT_EQ(*back, c);
  EXPECT_EQ(schema_to_json(*back), text);
}

// Each validation case: the JSON and a fragment the message must contain
// (naming the field or section at fault).
struct BadCase {
  const char* name;
  const char* json_text;
  const char* must_mention;
};

class SchemaValidationTest : public ::testing::TestWithParam<BadCase> {};

TEST_P(SchemaValidationTest, RejectedWithMessageNamingTheField) {
  const BadCase& c = GetParam();
  auto s = schema_from_json(c.json_text);
  ASSERT_FALSE(s.ok()) << c.name;
  EXPECT_EQ(s.status().code(), StatusCode::kInvalidArgument);
  EXPECT_NE(s.status().message().find(c.must_mention), std::string_view::npos)
      << c.name << ": " << s.status();
}

INSTANTIATE_TEST_SUITE_P(
    Cases, SchemaValidationTest,
    ::testing::Values(
        BadCase{"not_json", "{", "not valid JSON"},
        BadCase{"not_object", "42", "must be an object"},
        BadCase{"missing_type", R"({"fields": []})", "needs \"type\""},
        BadCase{"unknown_schema_type", R"({"type": "tree"})", "unknown schema type 'tree'"},
        BadCase{"unknown_field_type", R"({"type":"map","fields":[{"name":"x","type":"colour"}]})",
                "fields[0] ('x'): unknown field type 'colour'"},
        BadCase{"missing_field_type", R"({"type":"map","fields":[{"name":"x"}]})",
                "fields[0] ('x'): needs \"type\""},
        BadCase{
            "duplicate_field",
            R"({"type":"map","fields":[{"name":"x","type":"text"},{"name":"x","type":"number"}]})",
            "fields[1] ('x'): duplicate field name 'x'"},
        BadCase{"empty_field_name", R"({"type":"map","fields":[{"name":"","type":"text"}]})",
                "field name is empty"},
        BadCase{"text_default_wrong",
                R"({"type":"map","fields":[{"name":"t","type":"text","default":3}]})",
                "('t'): default 3 is not a string"},
        BadCase{"number_default_wrong",
                R"({"type":"map","fields":[{"name":"count","type":"number","default":"x"}]})",
                "('count'): default \"x\" is not a number"},
        BadCase{"bool_default_wrong",
                R"({"type":"map","fields":[{"name":"b","type":"boolean","default":1}]})",
                "('b'): default 1 is not true or false"},
        BadCase{"list_default_wrong",
                R"({"type":"map","fields":[{"name":"l","type":"list","default":{}}]})",
                "('l'): default {} is not a list"},
        BadCase{
            "timestamp_default_wrong",
            R"({"type":"map","fields":[{"name":"at","type":"timestamp","default":"yesterday"}]})",
            "('at'): default \"yesterday\" is not a timestamp"},
        BadCase{"counter_default_wrong",
                R"({"type":"map","fields":[{"name":"c","type":"counter","default":1.5}]})",
                "('c'): default 1.5 is not an integer"},
        BadCase{"bad_required",
                R"({"type":"map","fields":[{"name":"r","type":"text","required":"yes"}]})",
                "('r').required: must be true or false"},
        BadCase{"unknown_key",
                R"({"type":"map","fields":[{"name":"k","type":"text","readonly":true}]})",
                "('k'): unknown key 'readonly'"},
        BadCase{"fields_not_list", R"({"type":"map","fields":{}})", "fields: must be a list"},
        BadCase{"log_zero_limit", R"({"type":"log","display_limit":0})", "display_limit: must be"},
        BadCase{"log_negative_limit", R"({"type":"log","display_limit":-2})", "display_limit"},
        BadCase{"list_zero_max", R"({"type":"list","max_items":0})", "max_items: must be"},
        BadCase{"list_log_items", R"({"type":"list","item_schema":{"type":"log"}})",
                "item_schema: list items must be text or map"},
        BadCase{"composite_no_sections", R"({"type":"composite","sections":[]})",
                "needs a section"},
        BadCase{
            "composite_dup_section",
            R"({"type":"composite","sections":[{"name":"a","schema":"text"},{"name":"a","schema":"text"}]})",
            "sections[1] ('a'): duplicate section name 'a'"},
        BadCase{"composite_missing_schema", R"({"type":"composite","sections":[{"name":"a"}]})",
                "sections[0] ('a'): needs \"schema\""},
        BadCase{
            "composite_nested",
            R"({"type":"composite","sections":[{"name":"a","schema":{"type":"composite","sections":[{"name":"b","schema":"text"}]}}]})",
            "('a').schema: a composite section cannot itself be composite"},
        BadCase{
            "composite_nested_field_error",
            R"({"type":"composite","sections":[{"name":"cfg","schema":{"type":"map","fields":[{"name":"n","type":"number","default":"q"}]}}]})",
            "sections[0] ('cfg').schema.fields[0] ('n'): default \"q\" is not a number"},
        BadCase{"section_empty_name",
                R"({"type":"composite","sections":[{"name":"","schema":"text"}]})",
                "section name is empty"}),
    [](const auto& info) { return std::string(info.param.name); });

TEST(SchemaJsonTest, ReportsEveryProblemAtOnce) {
  auto s = schema_from_json(R"({"type":"map","fields":[
      {"name":"a","type":"number","default":"x"},
      {"name":"b","type":"weird"},
      {"name":"a","type":"text"}]})");
  ASSERT_FALSE(s.ok());
  std::string m(s.status().message());
  EXPECT_NE(m.find("('b')"), std::string::npos) << m;
  // The type error stops the parse before semantic checks; fix it and the
  // duplicate and the default show up together.
  auto s2 = schema_from_json(R"({"type":"map","fields":[
      {"name":"a","type":"number","default":"x"},
      {"name":"a","type":"text"}]})");
  ASSERT_FALSE(s2.ok());
  std::string m2(s2.status().message());
  EXPECT_NE(m2.find("fields[0] ('a'): default"), std::string::npos) << m2;
  EXPECT_NE(m2.find("fields[1] ('a'): duplicate"), std::string::npos) << m2;
}

TEST(SchemaJsonTest, DeepTextIsRefusedBeforeParsingAndSchemasNestEightDeep) {
  std::string deep;
  for (int i = 0; i < 100'000; ++i) deep += R"({"type":"list","item_schema":)";
  deep += R"("text")" + std::string(100'000, '}');
  auto s = schema_from_json(deep);
  EXPECT_EQ(s.status().code(), StatusCode::kInvalidArgument);
  EXPECT_NE(s.status().message().find("block schema: JSON nested deeper than 64 levels"),
            std::string_view::npos)
      << s.status();
  // Within the text limit, the schema's own nesting limit speaks.
  std::string nine;
  for (int i = 0; i < 10; ++i) nine += R"({"type":"list","item_schema":)";
  nine += R"("text")" + std::string(10, '}');
  auto n = schema_from_json(nine);
  EXPECT_NE(n.status().message().find("schemas nest at most 8 deep"), std::string_view::npos)
      << n.status();
  // A default may be any JSON within the limit (three levels go to the schema).
  auto list_default = [](size_t levels) {
    return R"({"type":"map","fields":[{"name":"l","type":"list","default":)" +
           std::string(levels, '[') + std::string(levels, ']') + "}]}";
  };
  EXPECT_TRUE(schema_from_json(list_default(61)).ok());
  EXPECT_FALSE(schema_from_json(list_default(62)).ok());
}

TEST(SchemaJsonTest, ValidTimestampsAccepted) {
  for (const char* ts : {"2026-01-23", "2026-01-23T10:00Z", "2026-01-23T10:00:00.123+02:00"}) {
    EXPECT_TRUE(check_field_value(FieldType::kTimestamp, json(ts)).ok()) << ts;
  }
  EXPECT_TRUE(check_field_value(FieldType::kTimestamp, json(1700000000000)).ok());
}

TEST(SchemaJsonTest, ValidateSchemaBuiltInCode) {
  BlockSchema bad = BlockSchema::composite({CompositeSection{"s", nullptr, std::nullopt, false}});
  auto problems = validate_schema(bad);
  ASSERT_EQ(problems.size(), 1u);
  EXPECT_NE(problems[0].find("('s'): section has no schema"), std::string::npos);
  EXPECT_TRUE(check_schema(diagnostics_schema()).ok());
}

// Random valid map schemas survive a JSON round trip unchanged.
RC_GTEST_PROP(SchemaJsonProp, MapSchemaRoundTrips, ()) {
  const auto n = *rc::gen::inRange(0, 6);
  std::vector<FieldDef> fields;
  for (int i = 0; i < n; ++i) {
    FieldDef f;
    f.name = "f" + std::to_string(i);
    f.field_type = static_cast<FieldType>(*rc::gen::inRange(0, 6));
    f.read_only = *rc::gen::arbitrary<bool>();
    f.required = *rc::gen::arbitrary<bool>();
    f.description = *rc::gen::element<std::string>("", "a field", "ünïcødé");
    if (*rc::gen::arbitrary<bool>()) {
      switch (f.field_type) {
        case FieldType::kText:
          f.default_value = json("x");
          break;
        case FieldType::kNumber:
          f.default_value = json(*rc::gen::arbitrary<int>());
          break;
        case FieldType::kBoolean:
          f.default_value = json(true);
          break;
        case FieldType::kList:
          f.default_value = json::array({1, "two"});
          break;
        case FieldType::kTimestamp:
          f.default_value = json("2026-11-26T00:00:00Z");
          break;
        case FieldType::kCounter:
          f.default_value = json(*rc::gen::arbitrary<int>());
          break;
      }
    }
    fields.push_back(f);
  }
  BlockSchema s = BlockSchema::map(fields);
  auto back = schema_from_json(schema_to_json(s));
  RC_ASSERT(back.ok());
  RC_ASSERT(*back == s);
}

}  // namespace
}  // namespace weft::doc

#include "weft/doc/schema.h"

#include <re2/re2.h>

#include <string>

namespace weft::doc {

bool operator==(const CompositeSection& a, const CompositeSection& b) {
  bool same_schema = (a.schema == b.schema) || (a.schema && b.schema && *a.schema == *b.schema);
  return a.name == b.name && same_schema && a.description == b.description &&
         a.read_only == b.read_only;
}

bool operator==(const BlockSchema::List& a, const BlockSchema::List& b) {
  bool same_items = (a.item_schema == b.item_schema) ||
                    (a.item_schema && b.item_schema && *a.item_schema == *b.item_schema);
  return same_items && a.max_items == b.max_items;
}

BlockSchema BlockSchema::list(std::optional<BlockSchema> item_schema,
                              std::optional<size_t> max_items) {
  List l;
  if (item_schema) l.item_schema = std::make_shared<const BlockSchema>(std::move(*item_schema));
  l.max_items = max_items;
  return BlockSchema(std::move(l));
}

const FieldDef* BlockSchema::find_field(std::string_view field_name) const {
  const Map* m = as_map();
  if (!m) return nullptr;
  for (const FieldDef& f : m->fields) {
    if (f.name == field_name) return &f;
  }
  return nullptr;
}

std::optional<bool> BlockSchema::is_field_read_only(std::string_view field_name) const {
  if (const FieldDef* f = find_field(field_name)) return f->read_only;
  // A composite's "fields" are its sections: seed 002 gates them section-wide.
  return is_section_read_only(field_name);
}

std::vector<std::string> BlockSchema::read_only_fields() const {
  std::vector<std::string> out;
  if (const Map* m = as_map()) {
    for (const FieldDef& f : m->fields) {
      if (f.read_only) out.push_back(f.name);
    }
  }
  return out;
}

std::optional<bool> BlockSchema::is_section_read_only(std::string_view section_name) const {
  const Composite* c = as_composite();
  if (!c) return std::nullopt;
  for (const CompositeSection& s : c->sections) {
    if (s.name == section_name) return s.read_only;
  }
  return std::nullopt;
}

const BlockSchema* BlockSchema::get_section_schema(std::string_view section_name) const {
  const Composite* c = as_composite();
  if (!c) return nullptr;
  for (const CompositeSection& s : c->sections) {
    if (s.name == section_name) return s.schema.get();
  }
  return nullptr;
}

std::string_view schema_kind_name(SchemaKind kind) {
  switch (kind) {
    case SchemaKind::kText:
      return "text";
    case SchemaKind::kMap:
      return "map";
    case SchemaKind::kList:
      return "list";
    case SchemaKind::kLog:
      return "log";
    case SchemaKind::kComposite:
      return "composite";
  }
  return "unknown";
}

std::string_view field_type_name(FieldType type) {
  switch (type) {
    case FieldType::kText:
      return "text";
    case FieldType::kNumber:
      return "number";
    case FieldType::kBoolean:
      return "boolean";
    case FieldType::kList:
      return "list";
    case FieldType::kTimestamp:
      return "timestamp";
    case FieldType::kCounter:
      return "counter";
  }
  return "unknown";
}

Result<FieldType> parse_field_type(std::string_view name) {
  for (FieldType t : {FieldType::kText, FieldType::kNumber, FieldType::kBoolean, FieldType::kList,
                      FieldType::kTimestamp, FieldType::kCounter}) {
    if (name == field_type_name(t)) return t;
  }
  if (name == "string") return FieldType::kText;
  if (name == "bool") return FieldType::kBoolean;
  return invalid_argument("unknown field type '" + std::string(name) +
                          "'; expected one of text, number, boolean, list, timestamp, counter");
}

namespace {

bool is_timestamp_string(const std::string& s) {
  // RFC 3339 / ISO 8601 date or date-time (seconds, fraction and zone optional).
  static const RE2 kTimestamp(
      R"(\d{4}-\d{2}-\d{2}([T ]\d{2}:\d{2}(:\d{2}(\.\d{1,9})?)?(Z|[+-]\d{2}:?\d{2})?)?)");
  return RE2::FullMatch(s, kTimestamp);
}

std::string short_dump(const nlohmann::json& v) {
  std::string s = v.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
  if (s.size() > 60) s = s.substr(0, 57) + "...";
  return s;
}

}  // namespace

Status check_field_value(FieldType type, const nlohmann::json& value) {
  bool ok = false;
  switch (type) {
    case FieldType::kText:
      ok = value.is_string();
      break;
    case FieldType::kNumber:
      ok = value.is_number();
      break;
    case FieldType::kBoolean:
      ok = value.is_boolean();
      break;
    case FieldType::kList:
      ok = value.is_array();
      break;
    case FieldType::kTimestamp:
      ok = value.is_number_integer() ||
           (value.is_string() && is_timestamp_string(value.get<std::string>()));
      break;
    case FieldType::kCounter:
      ok = value.is_number_integer();
      break;
  }
  if (ok) return Status();
  std::string expected;
  switch (type) {
    case FieldType::kText:
      expected = "a string";
      break;
    case FieldType::kNumber:
      expected = "a number";
      break;
    case FieldType::kBoolean:
      expected = "true or false";
      break;
    case FieldType::kList:
      expected = "a list";
      break;
    case FieldType::kTimestamp:
      expected = "a timestamp (RFC 3339 string such as \"2026-01-23T10:00:00Z\" or integer ms)";
      break;
    case FieldType::kCounter:
      expected = "an integer";
      break;
  }
  return invalid_argument(short_dump(value) + " is not " + expected);
}

}  // namespace weft::doc
